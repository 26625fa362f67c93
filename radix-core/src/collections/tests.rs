//! Unit tests of the map API's unsafe paths, sized for Miri: mutable and
//! owning iteration (values moved out of nodes that stay allocated), the
//! entry API's slot and insert-hint reuse, bulk removal, set operations,
//! the cursor's re-seek, and sets. Each runs every layout with drop-counted
//! values, uncompressed and fully compressed.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use crate::collections::entry::Entry;
use crate::config::Removable;
use crate::iter::Cursor;
use crate::mem::LocalMemory;
use crate::raw::test_keys::test_config;
use crate::raw::test_keys::{SplitMix64, key, wide};
use crate::value::{Auto, CloneLayout, Inline, Leaf, MutableLayout};
use crate::{Config, RawTree, SizeClasses, TreeSet, ValueOf};
use test_depth::pick;

/// A value that counts its live instances.
#[derive(Debug)]
struct Counted {
    tag: u64,
    live: Rc<Cell<i64>>,
}

impl Counted {
    fn new(tag: u64, live: &Rc<Cell<i64>>) -> Self {
        live.set(live.get() + 1);
        Self {
            tag,
            live: Rc::clone(live),
        }
    }
}

impl Clone for Counted {
    fn clone(&self) -> Self {
        Self::new(self.tag, &self.live)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.live.set(self.live.get() - 1);
        assert!(self.live.get() >= 0, "a value was dropped twice");
    }
}

// `Counted` is two words: `Auto` puts it in a leaf; an `Rc` alone fits
// the slot word and is embedded.
test_config!(LeafU32, u32, Leaf<Counted>, SizeClasses::DEFAULT, None);
test_config!(AutoU64Full, u64, Auto<Counted>, SizeClasses::DEFAULT, Full);
test_config!(
    InlineU16,
    u16,
    Inline<Counted>,
    SizeClasses::new(&[3, 8, 32, 256]),
    None
);
test_config!(EmbeddedU32, u32, Auto<Rc<()>>, SizeClasses::DEFAULT, None);
test_config!(
    InlineU128Full,
    u128,
    Inline<Counted>,
    SizeClasses::DEFAULT,
    Full
);
test_config!(SetU64, u64, Auto<()>, SizeClasses::DEFAULT, None);

/// `n` distinct keys below 2^16 (every key type holds them): dense runs,
/// which fill last-level nodes, and far keys, which split inner ones.
fn keys(n: u64) -> Vec<u64> {
    let mut seen = BTreeSet::new();
    (0..n)
        .map(|i| {
            if i % 5 == 4 {
                (i * 7919) % 65_536
            } else {
                i * 3
            }
        })
        .filter(|&k| seen.insert(k))
        .collect()
}

/// Exercises every map-API path on one configuration of `Counted` values.
fn map_api<C>()
where
    C: Config<Memory = LocalMemory> + Removable,
    C::Layout: MutableLayout<Value = Counted> + CloneLayout,
    C::Key: TryFrom<u64> + TryInto<u64>,
{
    let n = pick(600, 600, 40);
    let live = Rc::new(Cell::new(0));
    let key = |k: u64| match C::Key::try_from(k) {
        Ok(k) => k,
        Err(_) => unreachable!("test keys fit"),
    };
    let input = |v: Counted| <C::Layout as MutableLayout>::input(v);
    {
        let mut t = RawTree::<C>::new();
        let mut model = BTreeMap::new();
        // The entry API: vacant inserts along the failed lookup's path,
        // occupied updates through the held slot.
        for (i, &k) in keys(n).iter().enumerate() {
            let v = t.entry(key(k)).or_insert_with(|| Counted::new(k, &live));
            v.tag += 1;
            model.insert(k, k + 1);
            if i % 3 == 0 {
                match t.entry(key(k)) {
                    Entry::Occupied(mut o) => {
                        let old = o.insert(Counted::new(7, &live));
                        assert_eq!(old.tag, k + 1);
                        assert_eq!(o.get().tag, 7);
                    }
                    Entry::Vacant(_) => panic!("key {k} is present"),
                }
                model.insert(k, 7);
            }
        }
        t.verify().unwrap();
        assert_eq!(live.get(), model.len() as i64);
        // Mutable iteration from both ends.
        let mut it = t.iter_mut();
        while let (Some((_, a)), back) = (it.next(), it.next_back()) {
            a.tag += 10;
            if let Some((_, b)) = back {
                b.tag += 10;
            }
        }
        for v in model.values_mut() {
            *v += 10;
        }
        for (_, v) in t.range_mut(..) {
            v.tag *= 2;
        }
        for v in model.values_mut() {
            *v *= 2;
        }
        let got: Vec<(u64, u64)> = t.iter().map(|(_, v)| (v.tag, v.tag)).collect();
        let want: Vec<(u64, u64)> = model.values().map(|&v| (v, v)).collect();
        assert_eq!(got, want);
        // A clone, consumed halfway from both ends and dropped.
        let copy = t.clone();
        assert_eq!(live.get(), 2 * model.len() as i64);
        let mut owned = copy.into_iter();
        let first = owned.next().unwrap();
        let last = owned.next_back().unwrap();
        assert_eq!(first.1.tag, *model.values().next().unwrap());
        assert_eq!(last.1.tag, *model.values().next_back().unwrap());
        drop((first, last, owned));
        assert_eq!(live.get(), model.len() as i64);
        // Bulk removal.
        let (k0, v0) = t.pop_first().unwrap();
        assert_eq!(Some(v0.tag), model.remove(&u64_of(k0)));
        drop(v0);
        t.retain(|k, v| {
            v.tag += 1;
            u64_of(k) % 2 == 0
        });
        model.retain(|k, v| {
            *v += 1;
            k % 2 == 0
        });
        t.verify().unwrap();
        assert_eq!(live.get(), model.len() as i64);
        let split = key(model.keys().nth(model.len() / 2).copied().unwrap_or(0));
        let mut upper = t.split_off(split);
        t.verify().unwrap();
        upper.verify().unwrap();
        assert_eq!(t.len() + upper.len(), model.len());
        t.append(&mut upper);
        assert!(upper.is_empty() && upper.memory_usage() == 0);
        let got: Vec<(u64, u64)> = t.iter().map(|(k, v)| (u64_of(k), v.tag)).collect();
        let want: Vec<(u64, u64)> = model.iter().map(|(&k, &v)| (k, v)).collect();
        assert_eq!(got, want);
        // Set operations against a second tree.
        let mut other = RawTree::<C>::new();
        for &k in keys(n).iter().step_by(3) {
            other.insert(key(k), input(Counted::new(1000, &live)));
        }
        let mut both = t.clone();
        both.intersect_with(&other, |_, ours, theirs| ours.tag += theirs.tag);
        both.verify().unwrap();
        let common: Vec<u64> = model
            .keys()
            .copied()
            .filter(|&k| other.contains_key(key(k)))
            .collect();
        assert_eq!(both.len(), common.len());
        assert!(both.values().all(|v| v.tag >= 1000));
        let mut less = t.clone();
        less.difference_with(&other);
        assert_eq!(less.len(), model.len() - common.len());
        assert!(less.is_disjoint(&other) && both.is_subset(&t));
        let mut union = t.clone();
        union.union_with(other, |_, ours, theirs| ours.tag += theirs.tag);
        union.verify().unwrap();
        // The cursor, forwards, backwards and re-seeking.
        let ks: Vec<u64> = model.keys().copied().collect();
        let mut c: Cursor<'_, C> = t.cursor_at(key(0));
        for &k in &ks {
            assert_eq!(c.seek_get(key(k)).map(|v| v.tag), model.get(&k).copied());
            assert!(c.seek_get(key(k + 1)).is_none() || model.contains_key(&(k + 1)));
        }
        c.seek(key(ks[ks.len() / 2]));
        assert_eq!(c.prev().map(|(k, _)| u64_of(k)), Some(ks[ks.len() / 2 - 1]));
        assert_eq!(c.next().map(|(k, _)| u64_of(k)), Some(ks[ks.len() / 2 - 1]));
        drop((both, less, union));
        // Owned values out, then nothing left.
        let values: Vec<ValueOf<C>> = t.into_values().collect();
        assert_eq!(values.len(), model.len());
    }
    assert_eq!(live.get(), 0, "every value dropped exactly once");
}

fn u64_of<K: TryInto<u64>>(k: K) -> u64 {
    match k.try_into() {
        Ok(k) => k,
        Err(_) => unreachable!("test keys fit"),
    }
}

#[test]
fn leaf_values() {
    map_api::<LeafU32>();
}

#[test]
fn auto_values_fully_compressed() {
    map_api::<AutoU64Full>();
}

#[test]
fn inline_values_small_classes() {
    map_api::<InlineU16>();
}

#[test]
fn inline_u128_fully_compressed() {
    map_api::<InlineU128Full>();
}

#[test]
fn embedded_values_move_out_once() {
    let item = Rc::new(());
    let mut t = RawTree::<EmbeddedU32>::new();
    for k in 0..300u32 {
        t.insert(k * 7, Rc::clone(&item));
    }
    let copy = t.clone();
    assert_eq!(Rc::strong_count(&item), 601);
    let mut it = copy.into_iter();
    assert!(it.next().is_some() && it.next_back().is_some());
    drop(it);
    *t.entry(5).or_insert_with(|| Rc::clone(&item)) = Rc::clone(&item);
    t.retain(|k, _| k % 2 == 0);
    assert_eq!(Rc::strong_count(&item), 1 + t.len());
    drop(t);
    assert_eq!(Rc::strong_count(&item), 1);
}

#[test]
fn sets_match_btreeset() {
    let n = pick(2000, 2000, 60);
    let a: TreeSet<SetU64> = keys(n).into_iter().collect();
    let b: TreeSet<SetU64> = keys(n).into_iter().map(|k| k + 3).collect();
    let (ma, mb): (BTreeSet<u64>, BTreeSet<u64>) = (a.iter().collect(), b.iter().collect());
    assert!(a.union(&b).eq(ma.union(&mb).copied()));
    assert!(a.intersection(&b).eq(ma.intersection(&mb).copied()));
    assert!(a.difference(&b).eq(ma.difference(&mb).copied()));
    assert!(
        a.symmetric_difference(&b)
            .eq(ma.symmetric_difference(&mb).copied())
    );
    let mut c = a.clone();
    c.intersect_with(&b);
    c.verify().unwrap();
    assert!(c.iter().eq(ma.intersection(&mb).copied()));
    assert_eq!(a.memory_usage() > 0, !a.is_empty());
}

/// A random key set of width `C::Key`: dense runs (full last-level
/// nodes), scattered keys (inner nodes of every size) and, a third of the
/// time, keys just below the largest (the highest chunks).
fn moving_keys<K: crate::Key>(rng: &mut SplitMix64, n: usize) -> BTreeSet<u128> {
    let max = wide(K::MAX);
    let mut out = BTreeSet::new();
    while out.len() < n {
        let base = u128::from(rng.next()) & max;
        match rng.below(3) {
            0 => out.extend(
                (0..rng.below(pick(300, 300, 40)) as u128).map(|i| base.wrapping_add(i) & max),
            ),
            1 => {
                out.insert(base);
            }
            _ => {
                out.insert(max - (base & 0xFFFF));
            }
        }
    }
    out
}

/// `split_off`, `append` and `union_with` against `BTreeMap`, over key
/// sets spread across every level and trees of different heights, with
/// `verify()` after each step and every value dropped exactly once: the
/// uncompressed trees move whole subtrees (`raw/graft/`), the
/// compressed ones entries.
fn moves<C>()
where
    C: Config<Memory = LocalMemory> + Removable,
    C::Layout: MutableLayout<Value = Counted> + CloneLayout,
{
    let live = Rc::new(Cell::new(0));
    let mut rng = SplitMix64(0x5EED_5B11);
    let rounds = pick(40, 12, 2);
    let size = pick(2000, 2000, 16);
    let build = |keys: &BTreeSet<u128>, tag: u64| {
        let mut t = RawTree::<C>::new();
        let mut model = BTreeMap::new();
        for (i, &k) in keys.iter().enumerate() {
            let tag = tag + i as u64;
            t.insert(
                key(k),
                <C::Layout as MutableLayout>::input(Counted::new(tag, &live)),
            );
            model.insert(k, tag);
        }
        (t, model)
    };
    let same = |t: &RawTree<C>, model: &BTreeMap<u128, u64>, at: &str| {
        t.verify().unwrap_or_else(|e| panic!("{at}: {e}"));
        assert!(
            t.iter()
                .map(|(k, v)| (wide(k), v.tag))
                .eq(model.iter().map(|(&k, &v)| (k, v))),
            "{at}: entries differ"
        );
    };
    for round in 0..rounds {
        let n = 1 + rng.below(size as u64) as usize;
        let (mut t, mut model) = build(&moving_keys::<C::Key>(&mut rng, n), 0);
        // Split at a key present, at one drawn at random, and at the ends.
        let ks: Vec<u128> = model.keys().copied().collect();
        let max = wide(<C::Key as crate::Key>::MAX);
        let splits = [
            ks[rng.below(ks.len() as u64) as usize],
            u128::from(rng.next()) & max,
            ks[0],
            ks[ks.len() - 1],
            ks[ks.len() - 1].saturating_add(1) & max,
            0,
        ];
        for (i, &at_key) in splits.iter().enumerate() {
            let at = format!("round {round}, split_off({at_key:#x})");
            let mut upper = t.split_off(key(at_key));
            let mut mupper = model.split_off(&at_key);
            same(&t, &model, &format!("{at}: lower"));
            same(&upper, &mupper, &format!("{at}: upper"));
            assert_eq!(live.get(), (model.len() + mupper.len()) as i64, "{at}");
            if i % 2 == 0 {
                t.append(&mut upper);
                model.append(&mut mupper);
            } else {
                upper.append(&mut t);
                mupper.append(&mut model);
                (t, model) = (upper, mupper);
                upper = RawTree::new();
            }
            same(&t, &model, &format!("{at}: joined again"));
            assert!(upper.is_empty() && upper.memory_usage() == 0, "{at}");
        }
        // An overlapping append: the replaced values are dropped.
        let n = 1 + rng.below(size as u64) as usize;
        let mut other_keys = moving_keys::<C::Key>(&mut rng, n);
        other_keys.extend(ks.iter().step_by(3));
        let (mut other, mut mother) = build(&other_keys, 1 << 20);
        t.append(&mut other);
        model.append(&mut mother);
        same(&t, &model, &format!("round {round}: overlapping append"));
        assert!(other.is_empty() && other.memory_usage() == 0);
        assert_eq!(live.get(), model.len() as i64);
        // A union: the merge function sees the common keys in order.
        let n = 1 + rng.below(size as u64) as usize;
        let mut other_keys = moving_keys::<C::Key>(&mut rng, n);
        other_keys.extend(model.keys().step_by(2));
        let (other, mother) = build(&other_keys, 1 << 30);
        let mut met = Vec::new();
        t.union_with(other, |k, ours, theirs| {
            met.push(wide(k));
            ours.tag += theirs.tag;
        });
        let mut common = Vec::new();
        for (k, v) in mother {
            match model.get_mut(&k) {
                Some(ours) => {
                    common.push(k);
                    *ours += v;
                }
                None => {
                    model.insert(k, v);
                }
            }
        }
        assert_eq!(met, common, "round {round}: merge calls");
        same(&t, &model, &format!("round {round}: union"));
        assert_eq!(live.get(), model.len() as i64);
        // A union whose merge function panics: the tree keeps what was
        // moved or merged before, and nothing of the other tree leaks.
        let (other, _) = build(&model.keys().step_by(5).copied().collect(), 1 << 40);
        let before = t.len();
        let stop = rng.below(1 + other.len() as u64 / 5);
        let mut calls = 0;
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            t.union_with(other, |_, ours, theirs| {
                if calls == stop {
                    panic!("merge {calls}");
                }
                calls += 1;
                ours.tag = theirs.tag;
            })
        }));
        assert!(
            unwound.is_err(),
            "round {round}: the merge function panicked"
        );
        t.verify().unwrap();
        assert_eq!(
            t.len(),
            before,
            "round {round}: no key of the other tree is new"
        );
        assert_eq!(live.get(), t.len() as i64, "round {round}: after the panic");
        // An intersection whose merge function panics keeps the entries
        // merged before; every other value of this tree is dropped.
        let (other, _) = build(&model.keys().step_by(3).copied().collect(), 1 << 50);
        let common: Vec<(u128, u64)> = t.iter().map(|(k, v)| (wide(k), v.tag)).step_by(3).collect();
        let stop = rng.below(1 + common.len() as u64);
        let mut calls = 0;
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            t.intersect_with(&other, |_, ours, theirs| {
                if calls == stop {
                    panic!("merge {calls}");
                }
                calls += 1;
                ours.tag += theirs.tag;
            })
        }));
        t.verify().unwrap();
        other.verify().unwrap();
        let kept = common.len().min(stop as usize);
        assert_eq!(unwound.is_err(), kept < common.len(), "round {round}");
        // The i-th common key is the other tree's i-th, tagged `2^50 + i`.
        let want = common[..kept]
            .iter()
            .enumerate()
            .map(|(i, &(k, tag))| (k, tag + (1 << 50) + i as u64));
        assert!(
            t.iter().map(|(k, v)| (wide(k), v.tag)).eq(want),
            "round {round}"
        );
        assert_eq!(live.get(), (t.len() + other.len()) as i64, "round {round}");
    }
    assert_eq!(live.get(), 0, "every value dropped exactly once");
}

#[test]
fn moves_leaf_values() {
    moves::<LeafU32>();
}

#[test]
fn moves_inline_values_small_classes() {
    moves::<InlineU16>();
}

#[test]
fn moves_fully_compressed() {
    moves::<AutoU64Full>();
}

test_config!(AutoU64, u64, Auto<Counted>, SizeClasses::DEFAULT, None);

#[test]
fn moves_u64_leaf_values() {
    moves::<AutoU64>();
}

/// `difference_with` and `intersect_with` against `BTreeMap`, over key
/// sets spread across every level and trees of different heights, with
/// `verify()` on both trees. Uncompressed trees walk both trees together
/// (`RawTree::difference_paired`, `RawTree::intersect_paired`); the others
/// go entry by entry.
fn differences<C>(make: fn(u64) -> ValueOf<C>)
where
    C: Config<Memory = LocalMemory> + Removable,
    C::Layout: MutableLayout,
    ValueOf<C>: Clone + PartialEq + std::fmt::Debug,
{
    let mut rng = SplitMix64(0xD1FF);
    let size = pick(2000, 2000, 30);
    let build = |keys: &BTreeSet<u128>| {
        let mut t = RawTree::<C>::new();
        for &k in keys {
            t.insert(key(k), <C::Layout as MutableLayout>::input(make(k as u64)));
        }
        t
    };
    let same = |t: &RawTree<C>, keys: &BTreeSet<u128>, at: &str| {
        t.verify().unwrap_or_else(|e| panic!("{at}: {e}"));
        let want = keys.iter().map(|&k| (k, make(k as u64)));
        assert!(
            t.iter().map(|(k, v)| (wide(k), v.clone())).eq(want),
            "{at}: entries differ"
        );
    };
    for round in 0..pick(40, 12, 3) {
        let (a_len, b_len) = (1 + rng.below(size) as usize, 1 + rng.below(size) as usize);
        let a_keys = moving_keys::<C::Key>(&mut rng, a_len);
        let mut b_keys = moving_keys::<C::Key>(&mut rng, b_len);
        match round % 4 {
            // Only low keys: a lower tree than `a`, most of the time.
            0 => b_keys = a_keys.iter().copied().filter(|&k| k < 1 << 12).collect(),
            // Everything of `a`: the result is empty.
            1 => b_keys.extend(&a_keys),
            _ => b_keys.extend(a_keys.iter().step_by(1 + round % 3)),
        }
        for (x_keys, y_keys) in [(&a_keys, &b_keys), (&b_keys, &a_keys)] {
            let at = format!("round {round}");
            let (mut x, y) = (build(x_keys), build(y_keys));
            x.difference_with(&y);
            same(&x, &x_keys.difference(y_keys).copied().collect(), &at);
            same(&y, y_keys, &format!("{at}: the other tree"));
            assert_eq!(
                x.is_empty(),
                x.memory_usage() == 0,
                "{at}: an emptied tree keeps nothing"
            );
            let mut x = build(x_keys);
            let mut met = Vec::new();
            x.intersect_with(&y, |k, ours, theirs| {
                met.push(wide(k));
                assert!(*ours == make(wide(k) as u64) && ours == theirs);
            });
            let common: BTreeSet<u128> = x_keys.intersection(y_keys).copied().collect();
            assert!(met.iter().eq(&common), "{at}: the merge calls, in order");
            same(&x, &common, &format!("{at}: intersection"));
            same(&y, y_keys, &format!("{at}: intersection, the other tree"));
            assert_eq!(x.is_empty(), x.memory_usage() == 0, "{at}");
        }
    }
}

test_config!(EmbeddedU64, u64, Auto<u64>, SizeClasses::DEFAULT, None);
test_config!(EmbeddedU64Full, u64, Auto<u64>, SizeClasses::DEFAULT, Full);
test_config!(
    LeafU16,
    u16,
    Leaf<u64>,
    SizeClasses::new(&[3, 8, 32, 256]),
    None
);
test_config!(InlineU32, u32, Inline<[u64; 3]>, SizeClasses::DEFAULT, None);

#[test]
fn differences_embedded() {
    differences::<EmbeddedU64>(|k| k ^ 0x55);
}

#[test]
fn differences_leaf_small_classes() {
    differences::<LeafU16>(|k| k + 1);
}

#[test]
fn differences_inline() {
    differences::<InlineU32>(|k| [k, !k, k >> 3]);
}

#[test]
fn differences_fully_compressed() {
    differences::<EmbeddedU64Full>(|k| k);
}

test_config!(RcU64, u64, Auto<Rc<u64>>, SizeClasses::DEFAULT, None);

#[test]
fn differences_of_values_with_drop() {
    differences::<RcU64>(Rc::new);
}
