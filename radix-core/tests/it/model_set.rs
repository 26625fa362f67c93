//! Model tests of sets: random operation sequences on `RadixSet<K>` and a
//! fully compressed `radix_set!` type against `std::collections::BTreeSet`,
//! through every set method a `BTreeSet` user calls: `insert`, `replace`,
//! `remove`, `take`, `get`, `contains`, `extend` by value and by
//! reference, the operators `|`, `&`, `-` and `^`, the lazy set
//! operations and their in-place forms, `pop_first`/`pop_last`, `retain`,
//! `split_off`, `append` and `range`.

use std::collections::BTreeSet;

use crate::common::*;
use quickcheck::{Arbitrary, Gen, QuickCheck};
use radix_core::set::SetConfig;
use radix_core::{RadixSet, TreeSet};

radix_core::radix_set! {
    /// Sparse keys, fully compressed.
    struct Sparse { key: u64, compression: full }
}

/// One step of a sequence: keys as `u128`, truncated to the set's width.
#[derive(Clone, Debug)]
enum Op {
    Insert(u128),
    Replace(u128),
    Remove(u128),
    Take(u128),
    Get(u128),
    /// `extend` by value (false) or by reference (true).
    Extend(Vec<u128>, bool),
    /// An operator or lazy operation against a second set of these keys:
    /// `|`, `&`, `-`, `^` by `kind`, checked against std's, then the
    /// in-place form applied to the set.
    With(Vec<u128>, u8),
    PopFirst,
    PopLast,
    /// `retain` of the keys whose hash has this bit.
    Retain(u32),
    /// `split_off` at a key, then `append` the upper half back.
    SplitAppend(u128),
    Range(u128, u128),
}

#[derive(Clone, Debug)]
struct Ops(Vec<Op>);

impl Arbitrary for Ops {
    fn arbitrary(g: &mut Gen) -> Self {
        let ops = draw_ops(g, |keys| {
            let list = |keys: &mut KeyGen| {
                let n = keys.rng.below(40) as usize;
                (0..n).map(|_| keys.key()).collect()
            };
            match keys.rng.below(100) {
                0..=29 => Op::Insert(keys.key()),
                30..=34 => Op::Replace(keys.key()),
                35..=44 => Op::Remove(keys.key()),
                45..=49 => Op::Take(keys.key()),
                50..=54 => Op::Get(keys.key()),
                55..=62 => Op::Extend(list(keys), keys.rng.below(2) == 1),
                63..=78 => Op::With(list(keys), keys.rng.below(4) as u8),
                79..=82 => Op::PopFirst,
                83..=86 => Op::PopLast,
                87..=89 => Op::Retain(keys.rng.below(8) as u32),
                90..=94 => Op::SplitAppend(keys.key()),
                _ => Op::Range(keys.key(), keys.key()),
            }
        });
        Ops(ops)
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        Box::new(without_blocks(&self.0).into_iter().map(Ops))
    }
}

/// Runs `ops` on a set and on the model, panicking on any difference.
fn run<C: SetConfig<Memory = radix_core::mem::LocalMemory> + radix_core::config::Removable>(
    ops: &[Op],
) {
    let max = max_of::<C::Key>();
    let k = |w: u128| key::<C::Key>(w & max);
    let mut set: TreeSet<C> = TreeSet::new();
    let mut model: BTreeSet<u128> = BTreeSet::new();
    let same = |set: &TreeSet<C>, model: &BTreeSet<u128>, at: &str| {
        set.verify().unwrap_or_else(|e| panic!("{at}: {e}"));
        assert!(set.iter().map(wide).eq(model.iter().copied()), "{at}: keys");
        assert_eq!(set.len(), model.len(), "{at}: len");
    };
    for (i, op) in ops.iter().enumerate() {
        let at = format!("op {i} {op:?}");
        match op {
            Op::Insert(w) => assert_eq!(set.insert(k(*w)), model.insert(w & max), "{at}"),
            Op::Replace(w) => {
                let got = set.replace(k(*w)).map(wide);
                assert_eq!(got, model.replace(w & max), "{at}");
            }
            Op::Remove(w) => assert_eq!(set.remove(k(*w)), model.remove(&(w & max)), "{at}"),
            Op::Take(w) => assert_eq!(set.take(k(*w)).map(wide), model.take(&(w & max)), "{at}"),
            Op::Get(w) => {
                assert_eq!(
                    set.get(k(*w)).map(wide),
                    model.get(&(w & max)).copied(),
                    "{at}"
                );
                assert_eq!(set.contains(k(*w)), model.contains(&(w & max)), "{at}");
            }
            Op::Extend(ws, by_ref) => {
                let ks: Vec<C::Key> = ws.iter().map(|&w| k(w)).collect();
                if *by_ref {
                    set.extend(ks.iter());
                } else {
                    set.extend(ks);
                }
                model.extend(ws.iter().map(|w| w & max));
            }
            Op::With(ws, kind) => {
                let other: TreeSet<C> = ws.iter().map(|&w| k(w)).collect();
                let mother: BTreeSet<u128> = ws.iter().map(|w| w & max).collect();
                let (made, lazy, want) = match kind {
                    0 => (
                        &set | &other,
                        set.union(&other).map(wide).collect::<Vec<_>>(),
                        &model | &mother,
                    ),
                    1 => (
                        &set & &other,
                        set.intersection(&other).map(wide).collect(),
                        &model & &mother,
                    ),
                    2 => (
                        &set - &other,
                        set.difference(&other).map(wide).collect(),
                        &model - &mother,
                    ),
                    _ => (
                        &set ^ &other,
                        set.symmetric_difference(&other).map(wide).collect(),
                        &model ^ &mother,
                    ),
                };
                same(&made, &want, &format!("{at}: operator"));
                assert!(lazy.iter().eq(want.iter()), "{at}: lazy");
                assert_eq!(
                    set.is_subset(&other),
                    model.is_subset(&mother),
                    "{at}: subset"
                );
                assert_eq!(
                    set.is_disjoint(&other),
                    model.is_disjoint(&mother),
                    "{at}: disjoint"
                );
                // The in-place forms of the first three.
                match kind {
                    0 => set.union_with(other),
                    1 => set.intersect_with(&other),
                    2 => set.difference_with(&other),
                    _ => set = made,
                }
                model = want;
            }
            Op::PopFirst => assert_eq!(set.pop_first().map(wide), model.pop_first(), "{at}"),
            Op::PopLast => assert_eq!(set.pop_last().map(wide), model.pop_last(), "{at}"),
            Op::Retain(bit) => {
                let keep = |w: u128| mix64(w as u64) >> bit & 1 == 0;
                set.retain(|kk| keep(wide(kk)));
                model.retain(|&w| keep(w));
            }
            Op::SplitAppend(w) => {
                let mut upper = set.split_off(k(*w));
                let mupper = model.split_off(&(w & max));
                same(&upper, &mupper, &format!("{at}: upper"));
                same(&set, &model, &format!("{at}: lower"));
                set.append(&mut upper);
                model.extend(mupper);
            }
            Op::Range(a, b) => {
                let (lo, hi) = ((a & max).min(b & max), (a & max).max(b & max));
                let got = set.range(k(lo)..=k(hi)).map(wide);
                assert!(got.eq(model.range(lo..=hi).copied()), "{at}");
            }
        }
        if i % 25 == 0 {
            same(&set, &model, &at);
        }
    }
    same(&set, &model, "end");
}

fn check<C: SetConfig<Memory = radix_core::mem::LocalMemory> + radix_core::config::Removable>() {
    let cases = test_depth::cases(400, 60, 4);
    QuickCheck::new()
        .tests(cases)
        .max_tests(cases * 4)
        .quickcheck((|ops: Ops| run::<C>(&ops.0)) as fn(Ops));
}

#[test]
fn u32_sets_match_btreeset() {
    check::<radix_core::DefaultConfig<u32, ()>>();
}

#[test]
fn u8_sets_match_btreeset() {
    check::<radix_core::DefaultConfig<u8, ()>>();
}

#[test]
fn compressed_u64_sets_match_btreeset() {
    check::<SparseConfig>();
}

/// `RadixSet` reads as `BTreeSet` in the forms a user writes.
#[test]
fn set_api_reads_as_btreeset() {
    let a = RadixSet::<u16>::from([1, 2, 3]);
    let b: RadixSet<u16> = [3, 4].iter().copied().collect();
    let mut c = RadixSet::<u16>::new();
    c.extend(&[9, 8]);
    c.extend([7]);
    assert_eq!((&a | &b).len(), 4);
    assert_eq!((&a & &b).iter().collect::<Vec<_>>(), [3]);
    assert_eq!((&a - &b).iter().collect::<Vec<_>>(), [1, 2]);
    assert_eq!((&a ^ &b).iter().collect::<Vec<_>>(), [1, 2, 4]);
    assert_eq!(c.iter().collect::<Vec<_>>(), [7, 8, 9]);
}
