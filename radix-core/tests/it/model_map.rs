//! Model tests for the `BTreeMap`-like API beyond insert, get and remove:
//! the entry API, mutable and owning iteration, `pop_first`/`pop_last`,
//! `retain`, `split_off`, `append`, `extend`, `first_at_or_after`/
//! `last_at_or_before`, `Clone`, equality, ordering, hashing and `Index`.
//!
//! As in `model.rs`, each quickcheck case is a random operation sequence
//! applied both to a tree and to a `BTreeMap<u128, V>` model (keys widened
//! to `u128`, values the tree's own values, so `or_default` and in-place
//! changes are modelled exactly). After every operation that changes a
//! tree, the tree is verified and its whole iteration compared with the
//! model; trees made on the way (clones, split-off halves, the emptied
//! argument of `append`, trees rebuilt with `FromIterator`) are verified
//! too.
//!
//! The mutable layouts (embedded, leaf, inline) run everything
//! ([`run`]); the `varlen` layout, whose values are unsized byte copies,
//! runs what it has ([`run_shared`]): seeks, `Clone`, equality and
//! `Index`, over the tag model of `common`. What both run is one
//! [`CommonOp`] and one [`run_common`], generic over how the model holds a
//! value ([`Modelled`]: the value itself, or its tag).
//!
//! Failing sequences shrink by dropping operations, so a failure reports a
//! short reproduction.

use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::hash::{Hash, Hasher};
use std::ops::Bound;

use crate::common::*;
use quickcheck::{Arbitrary, Gen, QuickCheck};
use radix_core::config::Removable;
use radix_core::mem::LocalMemory;
use radix_core::value::{CloneLayout, Embedded, Inline, Leaf, MutableLayout, VarBytes, Varlen};
use radix_core::{Config, Entry, Key, RawTree, SizeClasses, ValueOf};

/// Values of the mutable layouts under test: made from a 64-bit seed,
/// changed in place, and digested for predicates that depend on them.
trait Val: Clone + Eq + Ord + Hash + Debug + Default {
    fn make(x: u64) -> Self;
    fn mutate(&mut self, x: u64);
    fn digest(&self) -> u64;
}

impl Val for u64 {
    fn make(x: u64) -> Self {
        x
    }
    fn mutate(&mut self, x: u64) {
        *self = mix64(*self ^ x);
    }
    fn digest(&self) -> u64 {
        *self
    }
}

impl Val for [u64; 3] {
    fn make(x: u64) -> Self {
        inline_value(x)
    }
    fn mutate(&mut self, x: u64) {
        self[0] = mix64(self[0] ^ x);
        self[2] = self[2].wrapping_add(x | 1);
    }
    fn digest(&self) -> u64 {
        self[0] ^ self[1].rotate_left(21) ^ self[2].rotate_left(42)
    }
}

type Model<V> = BTreeMap<u128, V>;

/// The operations both sequences draw: what every layout, `Varlen`
/// included, supports.
#[derive(Clone, Debug)]
enum CommonOp {
    Insert(u128, u64),
    Remove(u128),
    /// Inserts the run's keys.
    InsertRun(KeyRun, u64),
    /// Removes the run's keys.
    RemoveRun(KeyRun),
    /// `first_at_or_after` and `last_at_or_before` at a key.
    Seek(u128),
    /// Both seeks at the `n % len`-th key and at its neighbours.
    SeekExisting(usize),
    /// Clone, then change the clone (these keys, then every value) and the
    /// original independently; keep the clone (dropping the original) when
    /// true.
    CloneMutate(Vec<u128>, u64, bool),
    /// `tree[key]` for the `n % len`-th key.
    Index(usize),
}

/// What a sequence's model holds for a key, and how it meets the tree:
/// the values themselves ([`Values`], for the mutable layouts) or the tags
/// they are built from ([`Tags`], for every layout).
trait Modelled<C: Config<Memory = LocalMemory>> {
    /// The model's value for a key.
    type M: Clone + Debug + PartialEq;
    /// The model value of key `w` in generation `x`.
    fn make(w: u128, x: u64) -> Self::M;
    /// Stores `m` under `w` in both, asserting they held the same value.
    fn insert(t: &mut RawTree<C>, model: &mut Model<Self::M>, w: u128, m: Self::M, at: &str);
    /// Removes `w` from both, asserting they held the same value.
    fn remove(t: &mut RawTree<C>, model: &mut Model<Self::M>, w: u128, at: &str);
    /// Gives every key a new value in both, made from `x`.
    fn change_all(t: &mut RawTree<C>, model: &mut Model<Self::M>, x: u64, at: &str);
    /// Whether a value of the tree is the model's `m`.
    fn is(v: &ValueOf<C>, m: &Self::M) -> bool;
    /// Verifies the tree and compares it whole with the model.
    fn check(t: &RawTree<C>, model: &Model<Self::M>, at: &str);
}

/// The model holds the tree's own values ([`run`]).
struct Values;

impl<C> Modelled<C> for Values
where
    C: Config<Memory = LocalMemory> + Removable,
    C::Layout: MutableLayout,
    ValueOf<C>: Val,
{
    type M = ValueOf<C>;

    fn make(w: u128, x: u64) -> Self::M {
        <ValueOf<C> as Val>::make(x ^ (w as u64).rotate_left(13))
    }

    #[track_caller]
    fn insert(t: &mut RawTree<C>, model: &mut Model<Self::M>, w: u128, m: Self::M, at: &str) {
        assert_eq!(ins(t, key(w), m.clone()), model.insert(w, m), "{at}");
    }

    #[track_caller]
    fn remove(t: &mut RawTree<C>, model: &mut Model<Self::M>, w: u128, at: &str) {
        assert_eq!(rem(t, key(w)), model.remove(&w), "{at}");
    }

    /// Changes the values in place, through `iter_mut`.
    fn change_all(t: &mut RawTree<C>, model: &mut Model<Self::M>, x: u64, _at: &str) {
        for (_, v) in t.iter_mut() {
            v.mutate(x);
        }
        for v in model.values_mut() {
            v.mutate(x);
        }
    }

    fn is(v: &ValueOf<C>, m: &Self::M) -> bool {
        v == m
    }

    #[track_caller]
    fn check(t: &RawTree<C>, model: &Model<Self::M>, at: &str) {
        check(t, model, at);
    }
}

/// The model holds tags, from which `common` builds and checks values of
/// every layout ([`run_shared`]).
struct Tags;

impl<C> Modelled<C> for Tags
where
    C: Config<Layout: TestLayout, Memory = LocalMemory>,
{
    type M = u64;

    fn make(w: u128, x: u64) -> u64 {
        tag(w, x)
    }

    #[track_caller]
    fn insert(t: &mut RawTree<C>, model: &mut Model<u64>, w: u128, m: u64, at: &str) {
        assert_old(put(t, key(w), m), model.insert(w, m), at);
    }

    #[track_caller]
    fn remove(t: &mut RawTree<C>, model: &mut Model<u64>, w: u128, at: &str) {
        assert_old(del(t, key(w)), model.remove(&w), at);
    }

    /// Stores a value for every key anew: a varlen value is not changed in
    /// place.
    #[track_caller]
    fn change_all(t: &mut RawTree<C>, model: &mut Model<u64>, x: u64, at: &str) {
        for (&w, tg) in model.iter_mut() {
            let old = std::mem::replace(tg, tag(w, x));
            assert_old(put(t, key(w), *tg), Some(old), at);
        }
    }

    fn is(v: &ValueOf<C>, &m: &u64) -> bool {
        check_value::<C>(v, m)
    }

    #[track_caller]
    fn check(t: &RawTree<C>, model: &Model<u64>, at: &str) {
        check_tags(t, model, at);
    }
}

/// Runs a common operation on the tree and the model; returns whether it
/// may have changed the tree.
#[track_caller]
fn run_common<C, S>(t: &mut RawTree<C>, model: &mut Model<S::M>, op: &CommonOp, at: &str) -> bool
where
    C: Config<Layout: CloneLayout, Memory = LocalMemory>,
    ValueOf<C>: PartialEq,
    S: Modelled<C>,
{
    let max = max_of::<C::Key>();
    match *op {
        CommonOp::Insert(w, x) => {
            let w = w & max;
            S::insert(t, model, w, S::make(w, x), at);
        }
        CommonOp::Remove(w) => S::remove(t, model, w & max, at),
        CommonOp::InsertRun(run, x) => {
            for w in run.keys(max) {
                S::insert(t, model, w, S::make(w, x), at);
            }
        }
        CommonOp::RemoveRun(run) => {
            for w in run.keys(max) {
                S::remove(t, model, w, at);
            }
        }
        CommonOp::Seek(w) => {
            seek::<C, S>(t, model, w & max, at);
            return false;
        }
        CommonOp::SeekExisting(n) => {
            if let Some(w) = nth(model, n) {
                for probe in [w, w.wrapping_sub(1) & max, w.wrapping_add(1) & max] {
                    seek::<C, S>(t, model, probe, at);
                }
            }
            return false;
        }
        CommonOp::CloneMutate(ref keys, x, keep_clone) => {
            let mut c = t.clone();
            let mut mc = model.clone();
            S::check(&c, &mc, &format!("{at}: the clone"));
            assert!(c == *t, "{at}: clone != original");
            // (Not the sequence's choice of memory: `append` into an empty
            // tree swaps the trees, memory options included.)
            assert_eq!(
                c.memory().is_insert_only(),
                t.memory().is_insert_only(),
                "{at}: the clone's memory options"
            );
            for (j, &w) in keys.iter().enumerate() {
                let w = w & max;
                if j % 3 == 2 {
                    S::remove(&mut c, &mut mc, w, &format!("{at}: the clone"));
                } else {
                    S::insert(&mut c, &mut mc, w, S::make(w, x ^ j as u64), at);
                }
            }
            S::change_all(&mut c, &mut mc, x.rotate_left(3), at);
            S::check(
                t,
                model,
                &format!("{at}: the original after changing the clone"),
            );
            S::check(&c, &mc, &format!("{at}: the changed clone"));
            S::change_all(t, model, !x, at);
            if let Some(w) = nth(model, x as usize) {
                S::remove(t, model, w, at);
            }
            S::check(
                &c,
                &mc,
                &format!("{at}: the clone after changing the original"),
            );
            assert_eq!(c == *t, mc == *model, "{at}: == after changing both");
            if keep_clone {
                *t = c;
                *model = mc;
            }
        }
        CommonOp::Index(n) => {
            if let Some(w) = nth(model, n) {
                let m = &model[&w];
                assert!(
                    S::is(&t[key(w)], m),
                    "{at}: tree[{w:#x}], the model holds {m:?}"
                );
            }
            return false;
        }
    }
    true
}

/// Both seeks at `w`, against the model.
#[track_caller]
fn seek<C, S>(t: &RawTree<C>, model: &Model<S::M>, w: u128, at: &str)
where
    C: Config<Memory = LocalMemory>,
    S: Modelled<C>,
{
    let k = key::<C::Key>(w);
    for (what, got, want) in [
        (
            "first_at_or_after",
            t.first_at_or_after(k),
            model.range(w..).next(),
        ),
        (
            "last_at_or_before",
            t.last_at_or_before(k),
            model.range(..=w).next_back(),
        ),
    ] {
        assert_eq!(
            got.map(|(kk, _)| wide(kk)),
            want.map(|(&w, _)| w),
            "{at}: {what}({w:#x})"
        );
        if let (Some((_, v)), Some((_, m))) = (got, want) {
            assert!(
                S::is(v, m),
                "{at}: {what}({w:#x}) value, the model holds {m:?}"
            );
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// What every layout supports.
    Common(CommonOp),
    /// `entry(key).or_insert(v)`, then a change through the `&mut`.
    OrInsert(u128, u64),
    /// `entry(key).or_insert_with(f)`.
    OrInsertWith(u128, u64),
    /// `entry(key).or_insert_with_key(f)`.
    OrInsertWithKey(u128, u64),
    /// `entry(key).and_modify(f).or_insert(v)`.
    AndModifyOrInsert(u128, u64, u64),
    /// `entry(key).or_default()`, then a change through the `&mut`.
    OrDefault(u128, u64),
    /// On the `n % len`-th key: `key`, `get`, `get_mut`, `insert`,
    /// `into_mut` of its occupied entry.
    Occupied(usize, u64),
    /// Removes the `n % len`-th key through its entry (`remove_entry` when
    /// true).
    OccupiedRemove(usize, bool),
    /// The entry of a random key: if vacant, `into_key` (when true) or
    /// `insert` then a change through the returned `&mut`.
    Vacant(u128, u64, bool),
    /// `iter_mut` (or `&mut tree` as `IntoIterator`, when the pattern's
    /// bit 63 is set) consumed from both ends, changing every value.
    IterMut(u64, u64),
    /// `range_mut` between random bounds, consumed from both ends,
    /// changing every value.
    RangeMut(Bound<u128>, Bound<u128>, u64, u64),
    /// `values_mut` consumed from both ends, changing every value.
    ValuesMut(u64, u64),
    /// `into_iter` of a clone, `n % (len + 2)` items taken from both ends,
    /// then dropped.
    IntoIter(u64, usize),
    /// `into_iter` of the tree itself, consumed fully from both ends; the
    /// tree is then rebuilt with `FromIterator` in descending key order.
    IntoIterAll(u64),
    /// `into_keys` of a clone, partly consumed.
    IntoKeys(u64, usize),
    /// `into_values` of a clone, partly consumed.
    IntoValues(u64, usize),
    /// `n` removals or changes at the first key: `pop_first`,
    /// `first_entry` removed, `first_entry` changed, by turns.
    PopFirst(u8),
    /// `n` removals at the last key: `pop_last`, `last_entry` removed,
    /// `remove_entry` of the last key, by turns.
    PopLast(u8),
    /// `retain` keeping about `percent`% of the entries, chosen by key and
    /// value, and changing the kept values.
    Retain(u64, u8),
    /// `split_off` at a key; then drop the upper half (0), append it back
    /// (1), or append the lower half to it and keep that (2).
    SplitOff(u128, u8),
    /// `append` of a tree holding these keys: as drawn (overlapping, and
    /// with every other key replaced by an existing one) (0), moved above
    /// the tree's keys (1), or below them (2).
    Append(Vec<u128>, u64, u8),
    /// `extend` with these keys.
    Extend(Vec<u128>, u64),
    /// `==`, `cmp`, `hash` against a tree with the same entries built in a
    /// shuffled order, then against one differing as `kind` says.
    Compare(u64, u8),
}

/// A generated operation sequence.
#[derive(Clone, Debug)]
struct Ops(Vec<Op>);

fn key_list(keys: &mut KeyGen, max_len: u64) -> Vec<u128> {
    let n = keys.rng.below(max_len + 1);
    let mut out = Vec::with_capacity(n as usize);
    // Runs of neighbours as well as scattered keys.
    while (out.len() as u64) < n {
        let start = keys.key();
        let run = 1 + keys.rng.below(8);
        for j in 0..run {
            out.push(start.wrapping_add(j as u128));
        }
    }
    out
}

fn seek_key(keys: &mut KeyGen) -> u128 {
    match keys.rng.below(8) {
        0 => 0,
        1 => u128::MAX,
        _ => keys.key(),
    }
}

impl Arbitrary for Ops {
    fn arbitrary(g: &mut Gen) -> Self {
        let ops = draw_ops(g, |keys| {
            let x = keys.rng.next_u64();
            let n = keys.rng.next_u64() as usize;
            let flag = keys.rng.percent(50);
            match keys.rng.below(100) {
                0..=7 => Op::Common(CommonOp::Insert(keys.key(), x)),
                8..=11 => Op::Common(CommonOp::Remove(keys.key())),
                12..=16 => Op::Common(CommonOp::InsertRun(KeyRun::draw(keys), x)),
                17..=18 => Op::Common(CommonOp::RemoveRun(KeyRun::draw(keys))),
                19..=22 => Op::OrInsert(keys.key(), x),
                23..=24 => Op::OrInsertWith(keys.key(), x),
                25..=27 => Op::OrInsertWithKey(keys.key(), x),
                28..=31 => Op::AndModifyOrInsert(keys.key(), x, keys.rng.next_u64()),
                32..=34 => Op::OrDefault(keys.key(), x),
                35..=39 => Op::Occupied(n, x),
                40..=44 => Op::OccupiedRemove(n, flag),
                45..=48 => Op::Vacant(keys.key(), x, flag),
                49..=51 => Op::IterMut(x, keys.pattern()),
                52..=55 => Op::RangeMut(keys.bound(), keys.bound(), x, keys.pattern()),
                56..=57 => Op::ValuesMut(x, keys.pattern()),
                58..=61 => Op::IntoIter(keys.pattern(), n),
                62 => Op::IntoIterAll(keys.pattern()),
                63..=64 => Op::IntoKeys(keys.pattern(), n),
                65..=66 => Op::IntoValues(keys.pattern(), n),
                67..=69 => Op::PopFirst(keys.rng.below(20) as u8),
                70..=72 => Op::PopLast(keys.rng.below(20) as u8),
                73..=75 => {
                    let percent = match keys.rng.below(4) {
                        0 => 0,
                        1 => 100,
                        _ => keys.rng.below(101) as u8,
                    };
                    Op::Retain(x, percent)
                }
                76..=79 => Op::SplitOff(seek_key(keys), keys.rng.below(3) as u8),
                80..=83 => {
                    let list = key_list(keys, 200);
                    Op::Append(list, x, keys.rng.below(3) as u8)
                }
                84..=85 => Op::Extend(key_list(keys, 100), x),
                86..=89 => Op::Common(CommonOp::Seek(seek_key(keys))),
                90..=91 => Op::Common(CommonOp::SeekExisting(n)),
                92..=94 => Op::Common(CommonOp::CloneMutate(key_list(keys, 40), x, flag)),
                95..=97 => Op::Compare(x, keys.rng.below(4) as u8),
                _ => Op::Common(CommonOp::Index(n)),
            }
        });
        Ops(ops)
    }

    /// Drops blocks of operations, halving the block size down to one.
    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        Box::new(crate::common::without_blocks(&self.0).into_iter().map(Ops))
    }
}

/// `insert` of a value, returning the previous one.
fn ins<C>(t: &mut RawTree<C>, k: C::Key, v: ValueOf<C>) -> Option<ValueOf<C>>
where
    C: Config<Memory = LocalMemory>,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    <C::Layout as MutableLayout>::old_value(t.insert(k, <C::Layout as MutableLayout>::input(v)))
}

/// `remove`, returning the removed value.
fn rem<C>(t: &mut RawTree<C>, k: C::Key) -> Option<ValueOf<C>>
where
    C: Config<Memory = LocalMemory>,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    <C::Layout as MutableLayout>::old_value(t.remove(k))
}

/// Verifies `t` and asserts that its entries are exactly the model's, in
/// order (through `IntoIterator for &RawTree`), and that an empty tree
/// holds no memory.
#[track_caller]
fn check<C>(t: &RawTree<C>, model: &Model<ValueOf<C>>, at: &str)
where
    C: Config<Memory = LocalMemory>,
    ValueOf<C>: Val,
{
    if let Err(e) = t.verify() {
        panic!("{at}: verify failed: {e}");
    }
    assert_eq!(t.len(), model.len(), "{at}: len");
    assert_eq!(t.is_empty(), model.is_empty(), "{at}: is_empty");
    let mut want = model.iter();
    for (k, v) in t {
        match want.next() {
            Some((&w, mv)) => {
                assert_eq!(wide(k), w, "{at}: key");
                assert_eq!(v, mv, "{at}: value at {w:#x}");
            }
            None => panic!("{at}: the tree has an extra key {:#x}", wide(k)),
        }
    }
    if let Some((w, _)) = want.next() {
        panic!("{at}: the tree lacks key {w:#x}");
    }
    if model.is_empty() {
        assert_eq!(t.memory_usage(), 0, "{at}: an empty tree holds memory");
    }
}

/// Takes `take` items from `it`, from the end each bit of `pattern` says,
/// asserting that the front yields `want` ascending and the back
/// descending, and that `len()` counts down; when `take` covers `want`,
/// also that the iterator is exhausted and fused at both ends. Then drops
/// the iterator.
#[track_caller]
fn walk<I, W>(mut it: I, want: &[W], pattern: u64, take: usize, at: &str)
where
    I: DoubleEndedIterator<Item = W> + ExactSizeIterator,
    W: PartialEq + Debug,
{
    let (mut front, mut back) = (0, want.len());
    for step in 0..take.min(want.len()) {
        assert_eq!(it.len(), back - front, "{at}: len() at step {step}");
        if (pattern >> (step % 64)) & 1 == 1 {
            back -= 1;
            assert_eq!(
                it.next_back().as_ref(),
                Some(&want[back]),
                "{at}: step {step} (back)"
            );
        } else {
            front += 1;
            assert_eq!(
                it.next().as_ref(),
                Some(&want[front - 1]),
                "{at}: step {step}"
            );
        }
    }
    if take >= want.len() {
        assert_eq!(it.len(), 0, "{at}: len() at the end");
        assert!(it.next().is_none(), "{at}: past the end at the front");
        assert!(it.next_back().is_none(), "{at}: past the end at the back");
        assert!(it.next().is_none(), "{at}: not fused");
    }
}

/// The `DefaultHasher` hash of `x`.
fn hash_of<T: Hash + ?Sized>(x: &T) -> u64 {
    let mut h = DefaultHasher::new();
    x.hash(&mut h);
    h.finish()
}

/// The hash a tree with the model's entries must have: its length, then
/// each `(key, &value)` in key order, as `BTreeMap` hashes.
fn model_hash<K: Key, V: Hash>(model: &Model<V>) -> u64 {
    let mut h = DefaultHasher::new();
    h.write_usize(model.len());
    for (&w, v) in model {
        (key::<K>(w), v).hash(&mut h);
    }
    h.finish()
}

/// The `n % len`-th key of the model.
fn nth<V>(model: &Model<V>, n: usize) -> Option<u128> {
    let len = model.len();
    (len > 0).then(|| *model.keys().nth(n % len).unwrap())
}

/// Whether a `retain` keeps this entry.
fn keeps<V: Val>(w: u128, v: &V, x: u64, percent: u8) -> bool {
    mix64((w as u64) ^ ((w >> 64) as u64).rotate_left(7) ^ x ^ v.digest()) % 100 < percent as u64
}

/// Consumes a mutable iterator from both ends as `pattern` says, asserting
/// it yields the model's entries at `keys` (ascending), and changes each
/// value (and the model's) with `x` and the key. Checks `len()` when the
/// iterator has one.
#[track_caller]
fn walk_mut<'a, I, V>(
    mut it: I,
    keys: &[u128],
    model: &mut Model<V>,
    x: u64,
    pattern: u64,
    len: impl Fn(&I) -> Option<usize>,
    at: &str,
) where
    I: DoubleEndedIterator<Item = (u128, &'a mut V)>,
    V: Val + 'a,
{
    let (mut front, mut back) = (0, keys.len());
    let mut step = 0;
    while front < back {
        if let Some(len) = len(&it) {
            assert_eq!(len, back - front, "{at}: len() at step {step}");
        }
        let (got, w) = if (pattern >> (step % 64)) & 1 == 1 {
            back -= 1;
            (it.next_back(), keys[back])
        } else {
            front += 1;
            (it.next(), keys[front - 1])
        };
        let (gw, v) = got.unwrap_or_else(|| panic!("{at}: ended early, expected {w:#x}"));
        assert_eq!(gw, w, "{at}: key at step {step}");
        let mv = model.get_mut(&w).unwrap();
        assert_eq!(&*v, &*mv, "{at}: value at {w:#x}");
        v.mutate(x ^ w as u64);
        mv.mutate(x ^ w as u64);
        step += 1;
    }
    assert!(it.next().is_none(), "{at}: past the end at the front");
    assert!(it.next_back().is_none(), "{at}: past the end at the back");
}

/// An empty tree, its leaves from bump arenas with `INSERT_ONLY`.
fn new_tree<C, const INSERT_ONLY: bool>() -> RawTree<C>
where
    C: Config<Memory = LocalMemory>,
{
    if INSERT_ONLY {
        let t = RawTree::<C>::with_memory(LocalMemory::insert_only(
            &RawTree::<C>::pool_specs(),
            16 << 10,
        ));
        assert!(t.memory().is_insert_only());
        t
    } else {
        RawTree::new()
    }
}

/// Runs `ops` on a tree and on the model, panicking on any difference.
/// With `INSERT_ONLY`, the tree's leaves come from bump arenas.
fn run<C, const INSERT_ONLY: bool>(ops: Ops) -> bool
where
    C: Config<Memory = LocalMemory> + Removable,
    C::Layout: MutableLayout + CloneLayout,
    ValueOf<C>: Val,
{
    let max = max_of::<C::Key>();
    let k = |w: u128| key::<C::Key>(w & max);
    let make = <Values as Modelled<C>>::make;
    let mut t = new_tree::<C, INSERT_ONLY>();
    let mut model: Model<ValueOf<C>> = BTreeMap::new();
    for (i, op) in ops.0.iter().enumerate() {
        let at = format!("at op {i} ({op:?})");
        let mut changed = true;
        match *op {
            Op::OrInsert(w, x) => {
                let w = w & max;
                let e = t.entry(k(w));
                assert_eq!(wide(e.key()), w, "{at}: Entry::key");
                assert_eq!(
                    matches!(e, Entry::Occupied(_)),
                    model.contains_key(&w),
                    "{at}: entry kind"
                );
                let r = e.or_insert(make(w, x));
                let mr = model.entry(w).or_insert(make(w, x));
                assert_eq!(&*r, &*mr, "{at}");
                r.mutate(x);
                mr.mutate(x);
            }
            Op::OrInsertWith(w, x) => {
                let w = w & max;
                let mut called = false;
                let r = t.entry(k(w)).or_insert_with(|| {
                    called = true;
                    make(w, x)
                });
                let r = r.clone();
                assert_eq!(called, !model.contains_key(&w), "{at}: default called");
                assert_eq!(&r, model.entry(w).or_insert_with(|| make(w, x)), "{at}");
            }
            Op::OrInsertWithKey(w, x) => {
                let w = w & max;
                let mut called = false;
                let r = t.entry(k(w)).or_insert_with_key(|kk| {
                    called = true;
                    make(wide(kk), x)
                });
                let r = r.clone();
                assert_eq!(called, !model.contains_key(&w), "{at}: default called");
                assert_eq!(&r, model.entry(w).or_insert_with(|| make(w, x)), "{at}");
            }
            Op::AndModifyOrInsert(w, x, y) => {
                let w = w & max;
                let r = t
                    .entry(k(w))
                    .and_modify(|v| v.mutate(x))
                    .or_insert(make(w, y))
                    .clone();
                let mr = model
                    .entry(w)
                    .and_modify(|v| v.mutate(x))
                    .or_insert(make(w, y));
                assert_eq!(&r, mr, "{at}");
            }
            Op::OrDefault(w, x) => {
                let w = w & max;
                let r = t.entry(k(w)).or_default();
                let mr = model.entry(w).or_default();
                assert_eq!(&*r, &*mr, "{at}");
                r.mutate(x);
                mr.mutate(x);
            }
            Op::Occupied(n, x) => {
                let Some(w) = nth(&model, n) else { continue };
                let mv = model.get_mut(&w).unwrap();
                match t.entry(k(w)) {
                    Entry::Vacant(_) => panic!("{at}: present key {w:#x} has a vacant entry"),
                    Entry::Occupied(mut e) => {
                        assert_eq!(wide(e.key()), w, "{at}: OccupiedEntry::key");
                        assert_eq!(e.get(), &*mv, "{at}: get");
                        e.get_mut().mutate(x);
                        mv.mutate(x);
                        assert_eq!(e.get(), &*mv, "{at}: get after get_mut");
                        let new = make(w, !x);
                        let old = e.insert(new.clone());
                        assert_eq!(old, std::mem::replace(mv, new), "{at}: insert's old value");
                        assert_eq!(e.get(), &*mv, "{at}: get after insert");
                        let r = e.into_mut();
                        r.mutate(x.rotate_left(1));
                        mv.mutate(x.rotate_left(1));
                    }
                }
            }
            Op::OccupiedRemove(n, whole) => {
                let Some(w) = nth(&model, n) else { continue };
                let mv = model.remove(&w).unwrap();
                match t.entry(k(w)) {
                    Entry::Vacant(_) => panic!("{at}: present key {w:#x} has a vacant entry"),
                    Entry::Occupied(e) => {
                        if whole {
                            let (kk, v) = e.remove_entry();
                            assert_eq!((wide(kk), v), (w, mv), "{at}: remove_entry");
                        } else {
                            assert_eq!(e.remove(), mv, "{at}: remove");
                        }
                    }
                }
                assert!(!t.contains_key(k(w)), "{at}: still present");
            }
            Op::Vacant(w, x, into_key) => {
                let w = w & max;
                match t.entry(k(w)) {
                    Entry::Occupied(e) => {
                        let mv = model.get(&w).unwrap_or_else(|| {
                            panic!("{at}: absent key {w:#x} has an occupied entry")
                        });
                        assert_eq!(e.get(), mv, "{at}: get");
                        changed = false;
                    }
                    Entry::Vacant(e) => {
                        assert!(!model.contains_key(&w), "{at}: present key is vacant");
                        assert_eq!(wide(e.key()), w, "{at}: VacantEntry::key");
                        if into_key {
                            assert_eq!(wide(e.into_key()), w, "{at}: into_key");
                        } else {
                            let r = e.insert(make(w, x));
                            assert_eq!(*r, make(w, x), "{at}: insert");
                            r.mutate(x);
                            let mut mv = make(w, x);
                            mv.mutate(x);
                            model.insert(w, mv);
                        }
                    }
                }
            }
            Op::IterMut(x, pattern) => {
                let keys: Vec<u128> = model.keys().copied().collect();
                if pattern >> 63 == 1 {
                    let it = (&mut t).into_iter().map(|(kk, v)| (wide(kk), v));
                    walk_mut(it, &keys, &mut model, x, pattern, |i| Some(i.len()), &at);
                } else {
                    let it = t.iter_mut().map(|(kk, v)| (wide(kk), v));
                    walk_mut(it, &keys, &mut model, x, pattern, |i| Some(i.len()), &at);
                }
            }
            Op::RangeMut(lo, hi, x, pattern) => {
                let (lo, hi) = (lo.map(|w| w & max), hi.map(|w| w & max));
                let keys: Vec<u128> = model
                    .keys()
                    .copied()
                    .filter(|&w| in_bounds(w, lo, hi))
                    .collect();
                let it = t
                    .range_mut((lo.map(k), hi.map(k)))
                    .map(|(kk, v)| (wide(kk), v));
                walk_mut(it, &keys, &mut model, x, pattern, |_| None, &at);
            }
            Op::ValuesMut(x, pattern) => {
                let keys: Vec<u128> = model.keys().copied().collect();
                let mut it = t.values_mut();
                assert_eq!(it.len(), keys.len(), "{at}: values_mut().len()");
                let (mut front, mut back) = (0, keys.len());
                let mut step = 0;
                while front < back {
                    assert_eq!(it.len(), back - front, "{at}: len() at step {step}");
                    let (v, w) = if (pattern >> (step % 64)) & 1 == 1 {
                        back -= 1;
                        (it.next_back(), keys[back])
                    } else {
                        front += 1;
                        (it.next(), keys[front - 1])
                    };
                    let v = v.unwrap_or_else(|| panic!("{at}: ended early"));
                    let mv = model.get_mut(&w).unwrap();
                    assert_eq!(&*v, &*mv, "{at}: value at {w:#x}");
                    v.mutate(x);
                    mv.mutate(x);
                    step += 1;
                }
                assert!(
                    it.next().is_none() && it.next_back().is_none(),
                    "{at}: past the end"
                );
            }
            Op::IntoIter(pattern, n) => {
                let c = t.clone();
                let want: Vec<(u128, ValueOf<C>)> =
                    model.iter().map(|(&w, v)| (w, v.clone())).collect();
                let it = c.into_iter();
                assert_eq!(it.len(), want.len(), "{at}: into_iter().len()");
                walk(
                    it.map(|(kk, v)| (wide(kk), v)),
                    &want,
                    pattern,
                    n % (want.len() + 2),
                    &at,
                );
                changed = false;
            }
            Op::IntoIterAll(pattern) => {
                let want: Vec<(u128, ValueOf<C>)> =
                    model.iter().map(|(&w, v)| (w, v.clone())).collect();
                let tree = std::mem::take(&mut t);
                check(&t, &Model::new(), &at);
                walk(
                    tree.into_iter().map(|(kk, v)| (wide(kk), v)),
                    &want,
                    pattern,
                    want.len(),
                    &at,
                );
                t = new_tree::<C, INSERT_ONLY>();
                t.extend(want.iter().rev().map(|(w, v)| (k(*w), v.clone())));
                // `FromIterator` too, in descending key order.
                let collected: RawTree<C> =
                    want.iter().rev().map(|(w, v)| (k(*w), v.clone())).collect();
                check(&collected, &model, &format!("{at}: collected"));
            }
            Op::IntoKeys(pattern, n) => {
                let want: Vec<u128> = model
                    .keys()
                    .copied()
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                let it = t.clone().into_keys();
                walk(it.map(wide), &want, pattern, n % (want.len() + 2), &at);
                changed = false;
            }
            Op::IntoValues(pattern, n) => {
                let want: Vec<ValueOf<C>> = model.values().cloned().collect();
                let it = t.clone().into_values();
                walk(it, &want, pattern, n % (want.len() + 2), &at);
                changed = false;
            }
            // Removals at the ends, by turns through `pop_*`, the end's
            // entry (`first_entry`/`last_entry`, removed or changed in
            // place) and `remove_entry` of the end's key.
            Op::PopFirst(n) => {
                for i in 0..n {
                    match i % 3 {
                        0 => {
                            let got = t.pop_first().map(|(kk, v)| (wide(kk), v));
                            assert_eq!(got, model.pop_first(), "{at}");
                        }
                        1 => {
                            let got = t.first_entry().map(|e| e.remove_entry());
                            let got = got.map(|(kk, v)| (wide(kk), v));
                            assert_eq!(got, model.pop_first(), "{at}: first_entry");
                        }
                        _ => {
                            let got = t.first_entry().map(|mut e| {
                                e.get_mut().mutate(u64::from(i));
                                (wide(e.key()), e.get().clone())
                            });
                            let want = model.first_entry().map(|mut e| {
                                e.get_mut().mutate(u64::from(i));
                                (*e.key(), e.get().clone())
                            });
                            assert_eq!(got, want, "{at}: first_entry changed");
                        }
                    }
                }
            }
            Op::PopLast(n) => {
                for i in 0..n {
                    let got = match i % 3 {
                        0 => t.pop_last(),
                        1 => t.last_entry().map(|e| e.remove_entry()),
                        _ => match model.last_key_value() {
                            Some((&w, _)) => t.remove_entry(k(w)),
                            None => t.last_entry().map(|e| e.remove_entry()),
                        },
                    };
                    let got = got.map(|(kk, v)| (wide(kk), v));
                    assert_eq!(got, model.pop_last(), "{at}: pop_last way {}", i % 3);
                }
            }
            Op::Retain(x, percent) => {
                let mut visited = Vec::new();
                t.retain(|kk, v| {
                    let w = wide(kk);
                    visited.push(w);
                    let keep = keeps(w, v, x, percent);
                    if keep {
                        v.mutate(x);
                    }
                    keep
                });
                assert!(
                    visited.iter().eq(model.keys()),
                    "{at}: retain visited {} keys, not each key once in order",
                    visited.len()
                );
                model.retain(|&w, v| {
                    let keep = keeps(w, v, x, percent);
                    if keep {
                        v.mutate(x);
                    }
                    keep
                });
            }
            Op::SplitOff(w, then) => {
                let w = w & max;
                let mut upper = t.split_off(k(w));
                let mut mupper = model.split_off(&w);
                check(&t, &model, &format!("{at}: lower half"));
                check(&upper, &mupper, &format!("{at}: upper half"));
                assert_eq!(
                    upper.memory().is_insert_only(),
                    t.memory().is_insert_only(),
                    "{at}: the upper half's memory options"
                );
                match then {
                    0 => drop(upper),
                    1 => {
                        t.append(&mut upper);
                        model.append(&mut mupper);
                        check(&upper, &mupper, &format!("{at}: upper half after append"));
                    }
                    _ => {
                        upper.append(&mut t);
                        mupper.append(&mut model);
                        check(&t, &model, &format!("{at}: lower half after append"));
                        t = upper;
                        model = mupper;
                    }
                }
            }
            Op::Append(ref keys, x, placement) => {
                let keys: Vec<u128> = match placement {
                    0 => keys
                        .iter()
                        .enumerate()
                        .map(|(j, &w)| match nth(&model, w as usize) {
                            Some(existing) if j % 2 == 1 => existing,
                            _ => w & max,
                        })
                        .collect(),
                    1 => {
                        let above = model
                            .keys()
                            .next_back()
                            .map_or(Some(0), |&m| m.checked_add(1));
                        keys.iter()
                            .filter_map(|&w| above?.checked_add(w % 2048))
                            .filter(|&w| w <= max)
                            .collect()
                    }
                    _ => {
                        let below = model.keys().next().copied().unwrap_or(max);
                        let below = below.min(1 << 20);
                        keys.iter()
                            .filter(|_| below > 0)
                            .map(|&w| w % below.max(1))
                            .collect()
                    }
                };
                let mut other = RawTree::<C>::new();
                let mut mother = Model::new();
                for &w in &keys {
                    let v = make(w, x);
                    ins(&mut other, k(w), v.clone());
                    mother.insert(w, v);
                }
                check(&other, &mother, &format!("{at}: the other tree"));
                t.append(&mut other);
                model.append(&mut mother);
                check(
                    &other,
                    &mother,
                    &format!("{at}: the other tree after append"),
                );
                // The emptied tree is usable.
                ins(&mut other, k(7), make(7, x));
                mother.insert(7 & max, make(7, x));
                check(&other, &mother, &format!("{at}: the other tree reused"));
            }
            Op::Extend(ref keys, x) => {
                let entries: Vec<(u128, ValueOf<C>)> =
                    keys.iter().map(|&w| (w & max, make(w & max, x))).collect();
                t.extend(entries.iter().map(|(w, v)| (k(*w), v.clone())));
                model.extend(entries);
            }
            Op::Common(ref op) => changed = run_common::<C, Values>(&mut t, &mut model, op, &at),
            Op::Compare(x, kind) => {
                compare(&t, &model, x, kind, &at);
                changed = false;
            }
        }
        if changed {
            check(&t, &model, &at);
        } else {
            assert_eq!(t.len(), model.len(), "{at}: len");
        }
    }
    check(&t, &model, "at the end");
    // Empty the tree from both ends, which must give back all memory.
    let mut i = 0;
    while !model.is_empty() {
        let (got, want) = if i % 2 == 0 {
            (t.pop_first(), model.pop_first())
        } else {
            (t.pop_last(), model.pop_last())
        };
        assert_eq!(got.map(|(kk, v)| (wide(kk), v)), want, "final pops");
        i += 1;
    }
    assert!(t.pop_first().is_none() && t.pop_last().is_none());
    check(&t, &model, "after popping everything");
    true
}

/// `==`, `cmp` and `hash` of `t` against a tree with the same entries
/// built in a shuffled order, then against one that differs as `kind`
/// says: a changed value, a removed key, an added key, or (3) an added key
/// and a removed one.
#[track_caller]
fn compare<C>(t: &RawTree<C>, model: &Model<ValueOf<C>>, x: u64, kind: u8, at: &str)
where
    C: Config<Memory = LocalMemory>,
    C::Layout: MutableLayout,
    ValueOf<C>: Val,
{
    let max = max_of::<C::Key>();
    let k = |w: u128| key::<C::Key>(w & max);
    let mut rng = SplitMix64::new(x);
    let mut entries: Vec<(u128, ValueOf<C>)> = model.iter().map(|(&w, v)| (w, v.clone())).collect();
    for i in (1..entries.len()).rev() {
        entries.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let mut other: RawTree<C> = entries.iter().map(|(w, v)| (k(*w), v.clone())).collect();
    check(
        &other,
        model,
        &format!("{at}: the tree built in another order"),
    );
    assert!(*t == other, "{at}: equal entries, not ==");
    assert!(!t.ne(&other), "{at}: equal entries, !=");
    assert_eq!(t.cmp(&other), Ordering::Equal, "{at}: cmp");
    assert_eq!(
        t.partial_cmp(&other),
        Some(Ordering::Equal),
        "{at}: partial_cmp"
    );
    assert_eq!(
        hash_of(t),
        hash_of(&other),
        "{at}: equal trees hash differently"
    );
    assert_eq!(
        hash_of(t),
        model_hash::<C::Key, _>(model),
        "{at}: hash is not len then entries"
    );
    // Make them differ.
    let mut mo = model.clone();
    let existing = nth(model, rng.next_u64() as usize);
    let absent = (0..64)
        .map(|_| rng.next_u128() & max)
        .chain(0..=max.min(300))
        .find(|w| !model.contains_key(w));
    if (kind == 0 || kind == 1 || kind == 3)
        && let Some(w) = existing
    {
        if kind == 0 {
            let mut v = model[&w].clone();
            v.mutate(x | 1);
            if v == model[&w] {
                v = <ValueOf<C> as Val>::make(!x);
            }
            mo.insert(w, v.clone());
            ins(&mut other, k(w), v);
        } else {
            mo.remove(&w);
            rem(&mut other, k(w));
        }
    }
    if (kind == 2 || kind == 3)
        && let Some(w) = absent
    {
        let v = <ValueOf<C> as Val>::make(x);
        mo.insert(w, v.clone());
        ins(&mut other, k(w), v);
    }
    check(&other, &mo, &format!("{at}: the changed tree"));
    let want = model.iter().cmp(mo.iter());
    assert_eq!(*t == other, *model == mo, "{at}: == after a change");
    assert_eq!(t.cmp(&other), want, "{at}: cmp after a change");
    assert_eq!(
        other.cmp(t),
        want.reverse(),
        "{at}: reversed cmp after a change"
    );
    assert_eq!(
        t.partial_cmp(&other),
        Some(want),
        "{at}: partial_cmp after a change"
    );
    assert_eq!(t < &other, want == Ordering::Less, "{at}: <");
    assert_eq!(
        hash_of(&other),
        model_hash::<C::Key, _>(&mo),
        "{at}: hash after a change"
    );
    if *model != mo {
        assert_ne!(
            hash_of(t),
            hash_of(&other),
            "{at}: different trees hash equal"
        );
    }
}

fn check_mutable<C, const INSERT_ONLY: bool>()
where
    C: Config<Memory = LocalMemory> + Removable,
    C::Layout: MutableLayout + CloneLayout,
    ValueOf<C>: Val,
{
    QuickCheck::new()
        .rng(Gen::new(test_depth::pick(40, 40, 8)))
        .tests(test_depth::cases(80, 5, 2))
        .quickcheck(run::<C, INSERT_ONLY> as fn(Ops) -> bool);
}

const DEFAULT: SizeClasses = SizeClasses::DEFAULT;
const CUSTOM: SizeClasses = SizeClasses::new(CUSTOM_CAPS);
const TWO: SizeClasses = SizeClasses::new(TWO_CAPS);

/// A `tree_config!` configuration that also offers removal.
macro_rules! removable_config {
    ($name:ident, $key:ty, $layout:ty, $classes:expr, $compression:ident) => {
        tree_config!(
            $name,
            $key,
            $layout,
            $classes,
            radix_core::Compression::$compression
        );
        impl Removable for $name {}
    };
}

macro_rules! model_tests {
    ($($name:ident: $key:ty, $layout:ty, $classes:expr, $compression:ident
        $(, $insert_only:ident)?;)*) => {$(
        #[test]
        fn $name() {
            removable_config!(Cfg, $key, $layout, $classes, $compression);
            check_mutable::<Cfg, { false $(|| stringify!($insert_only).len() > 0)? }>();
        }
    )*};
}

model_tests! {
    u8_embedded: u8, Embedded<u64>, DEFAULT, None;
    u8_leaf: u8, Leaf<u64>, DEFAULT, None;
    u8_inline: u8, Inline<[u64; 3]>, DEFAULT, None;
    u8_embedded_full: u8, Embedded<u64>, DEFAULT, Full;
    u8_leaf_full: u8, Leaf<u64>, DEFAULT, Full;
    u8_inline_full: u8, Inline<[u64; 3]>, DEFAULT, Full;
    u16_embedded: u16, Embedded<u64>, DEFAULT, None;
    u16_leaf: u16, Leaf<u64>, DEFAULT, None;
    u16_inline: u16, Inline<[u64; 3]>, DEFAULT, None;
    u16_embedded_full: u16, Embedded<u64>, DEFAULT, Full;
    u16_leaf_full: u16, Leaf<u64>, DEFAULT, Full;
    u16_inline_full: u16, Inline<[u64; 3]>, TWO, Full;
    u32_embedded: u32, Embedded<u64>, DEFAULT, None;
    u32_leaf: u32, Leaf<u64>, CUSTOM, None;
    u32_inline: u32, Inline<[u64; 3]>, DEFAULT, None;
    u32_embedded_full: u32, Embedded<u64>, DEFAULT, Full;
    u32_leaf_full: u32, Leaf<u64>, DEFAULT, Full;
    u32_inline_full: u32, Inline<[u64; 3]>, DEFAULT, Full;
    u64_embedded: u64, Embedded<u64>, DEFAULT, None;
    u64_leaf: u64, Leaf<[u64; 3]>, DEFAULT, None;
    u64_inline: u64, Inline<[u64; 3]>, DEFAULT, None;
    u64_embedded_full: u64, Embedded<u64>, CUSTOM, Full;
    u64_leaf_full: u64, Leaf<u64>, DEFAULT, Full;
    u64_inline_full: u64, Inline<[u64; 3]>, DEFAULT, Full;
    u128_embedded: u128, Embedded<u64>, DEFAULT, None;
    u128_leaf: u128, Leaf<u64>, DEFAULT, None;
    u128_inline: u128, Inline<[u64; 3]>, CUSTOM, None;
    u128_embedded_full: u128, Embedded<u64>, DEFAULT, Full;
    u128_leaf_full: u128, Leaf<u64>, TWO, Full;
    u128_inline_full: u128, Inline<[u64; 3]>, DEFAULT, Full;
    // Lazy expansion and path compression alone.
    u32_embedded_lazy: u32, Embedded<u64>, DEFAULT, Lazy;
    u64_leaf_path: u64, Leaf<u64>, DEFAULT, Path;
    u64_inline_lazy: u64, Inline<[u64; 3]>, TWO, Lazy;
    u128_embedded_path: u128, Embedded<u64>, CUSTOM, Path;
    // Leaves (and arenas) from bump arenas: clones and split-off halves
    // keep the original's options.
    u32_leaf_insert_only: u32, Leaf<u64>, DEFAULT, None, insert_only;
    u64_inline_full_insert_only: u64, Inline<[u64; 3]>, DEFAULT, Full, insert_only;
    u128_leaf_lazy_insert_only: u128, Leaf<[u64; 3]>, CUSTOM, Lazy, insert_only;
}

// --- The varlen layout: seeks, Clone, equality and Index. ---

/// An operation of the varlen sequence.
#[derive(Clone, Debug)]
enum SharedOp {
    Common(CommonOp),
    /// `==` against a tree with the same entries built in a shuffled
    /// order, then after changing it as `kind` says.
    Equal(u64, u8),
}

#[derive(Clone, Debug)]
struct SharedOps(Vec<SharedOp>);

impl Arbitrary for SharedOps {
    fn arbitrary(g: &mut Gen) -> Self {
        let ops = draw_ops(g, |keys| {
            let x = keys.rng.next_u64();
            let n = keys.rng.next_u64() as usize;
            match keys.rng.below(100) {
                0..=24 => SharedOp::Common(CommonOp::Insert(keys.key(), x)),
                25..=34 => SharedOp::Common(CommonOp::Remove(keys.key())),
                35..=44 => SharedOp::Common(CommonOp::InsertRun(KeyRun::draw(keys), x)),
                45..=49 => SharedOp::Common(CommonOp::RemoveRun(KeyRun::draw(keys))),
                50..=64 => SharedOp::Common(CommonOp::Seek(seek_key(keys))),
                65..=74 => SharedOp::Common(CommonOp::SeekExisting(n)),
                75..=84 => SharedOp::Common(CommonOp::CloneMutate(
                    key_list(keys, 40),
                    x,
                    keys.rng.percent(50),
                )),
                85..=94 => SharedOp::Equal(x, keys.rng.below(4) as u8),
                _ => SharedOp::Common(CommonOp::Index(n)),
            }
        });
        SharedOps(ops)
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        Box::new(
            crate::common::without_blocks(&self.0)
                .into_iter()
                .map(SharedOps),
        )
    }
}

#[track_caller]
fn check_tags<C>(t: &RawTree<C>, model: &BTreeMap<u128, u64>, at: &str)
where
    C: Config<Layout: TestLayout, Memory = LocalMemory>,
{
    if let Err(e) = t.verify() {
        panic!("{at}: verify failed: {e}");
    }
    assert_same(t, model);
    if model.is_empty() {
        assert_eq!(t.memory_usage(), 0, "{at}: an empty tree holds memory");
    }
}

/// Runs `ops` on a tree of any layout (`varlen` included) and on the tag
/// model.
fn run_shared<C>(ops: SharedOps) -> bool
where
    C: Config<Layout: TestLayout + CloneLayout, Memory = LocalMemory>,
    ValueOf<C>: PartialEq,
{
    let max = max_of::<C::Key>();
    let k = |w: u128| key::<C::Key>(w & max);
    let mut t = RawTree::<C>::new();
    let mut model: BTreeMap<u128, u64> = BTreeMap::new();
    for (i, op) in ops.0.iter().enumerate() {
        let at = format!("at op {i} ({op:?})");
        let changed = match *op {
            SharedOp::Common(ref op) => run_common::<C, Tags>(&mut t, &mut model, op, &at),
            SharedOp::Equal(x, kind) => {
                let mut rng = SplitMix64::new(x);
                let mut entries: Vec<(u128, u64)> = model.iter().map(|(&w, &tg)| (w, tg)).collect();
                for j in (1..entries.len()).rev() {
                    entries.swap(j, rng.below(j as u64 + 1) as usize);
                }
                let mut other = RawTree::<C>::new();
                for &(w, tg) in &entries {
                    put(&mut other, k(w), tg);
                }
                check_tags(
                    &other,
                    &model,
                    &format!("{at}: the tree built in another order"),
                );
                assert!(t == other, "{at}: equal entries, not ==");
                assert!(other.eq(&t), "{at}: equal entries, not == (reversed)");
                let mut mo = model.clone();
                match (kind, nth(&model, rng.next_u64() as usize)) {
                    (0, Some(w)) => {
                        // A value of another length or other bytes.
                        let tg = tag(w, !x);
                        if varlen_bytes(tg) != varlen_bytes(model[&w]) {
                            mo.insert(w, tg);
                            put(&mut other, k(w), tg);
                        }
                    }
                    (1, Some(w)) => {
                        mo.remove(&w);
                        del(&mut other, k(w));
                    }
                    _ => {
                        if let Some(w) = (0..=max.min(300)).find(|w| !model.contains_key(w)) {
                            mo.insert(w, tag(w, x));
                            put(&mut other, k(w), tag(w, x));
                        }
                    }
                }
                check_tags(&other, &mo, &format!("{at}: the changed tree"));
                let equal = model == mo;
                assert_eq!(t == other, equal, "{at}: == after a change");
                assert_eq!(t != other, !equal, "{at}: != after a change");
                false
            }
        };
        if changed {
            check_tags(&t, &model, &at);
        } else {
            assert_eq!(t.len(), model.len(), "{at}: len");
        }
    }
    check_tags(&t, &model, "at the end");
    true
}

fn check_shared<C>()
where
    C: Config<Layout: TestLayout + CloneLayout, Memory = LocalMemory>,
    ValueOf<C>: PartialEq,
{
    QuickCheck::new()
        .rng(Gen::new(test_depth::pick(40, 40, 8)))
        .tests(test_depth::cases(80, 5, 2))
        .quickcheck(run_shared::<C> as fn(SharedOps) -> bool);
}

macro_rules! shared_tests {
    ($($name:ident: $key:ty, $layout:ty, $classes:expr, $compression:ident;)*) => {$(
        #[test]
        fn $name() {
            tree_config!(Cfg, $key, $layout, $classes, radix_core::Compression::$compression);
            check_shared::<Cfg>();
        }
    )*};
}

shared_tests! {
    shared_u8_varlen: u8, Varlen<VarBytes>, DEFAULT, None;
    shared_u8_varlen_full: u8, Varlen<VarBytes>, DEFAULT, Full;
    shared_u16_varlen: u16, Varlen<VarBytes>, DEFAULT, None;
    shared_u16_varlen_full: u16, Varlen<VarBytes>, TWO, Full;
    shared_u32_varlen: u32, Varlen<VarBytes>, CUSTOM, None;
    shared_u32_varlen_full: u32, Varlen<VarBytes>, DEFAULT, Full;
    shared_u64_varlen: u64, Varlen<VarBytes>, DEFAULT, None;
    shared_u64_varlen_full: u64, Varlen<VarBytes>, DEFAULT, Full;
    shared_u128_varlen: u128, Varlen<VarBytes>, DEFAULT, None;
    shared_u128_varlen_full: u128, Varlen<VarBytes>, CUSTOM, Full;
    // The same operations over a mutable layout, as a cross-check.
    shared_u32_inline_path: u32, Inline<[u64; 3]>, DEFAULT, Path;
}

// --- Deterministic cases the random sequences reach rarely. ---

/// A named `retain` predicate over a key and its value's digest.
type Pred = (&'static str, fn(u128, u64) -> bool);

/// `retain` over more rejections than one batch (1024) holds, with
/// predicates that reject everything, nothing, a prefix, a suffix and a
/// scattered majority.
#[test]
fn retain_in_batches() {
    fn go<C>()
    where
        C: Config<Memory = LocalMemory> + Removable,
        C::Layout: MutableLayout + CloneLayout,
        ValueOf<C>: Val,
    {
        let max = max_of::<C::Key>();
        let n: u128 = test_depth::pick(5000, 1000, 40);
        let mut base = RawTree::<C>::new();
        let mut model = Model::new();
        let mut rng = SplitMix64::new(0xBA7C);
        for j in 0..n {
            let w = (j * 3 + rng.below(3) as u128) & max;
            let v = <ValueOf<C> as Val>::make(rng.next_u64());
            ins(&mut base, key(w), v.clone());
            model.insert(w, v);
        }
        check(&base, &model, "built");
        let preds: [Pred; 5] = [
            ("nothing", |_, _| false),
            ("everything", |_, _| true),
            ("a prefix", |w, _| w >= 7000),
            ("a suffix", |w, _| w < 4000),
            ("a scattered third", |w, d| {
                mix64(w as u64 ^ d).is_multiple_of(3)
            }),
        ];
        for (what, keep) in preds {
            let mut t = base.clone();
            let mut m = model.clone();
            let mut visited = 0;
            t.retain(|kk, v| {
                visited += 1;
                let ok = keep(wide(kk), v.digest());
                if ok {
                    v.mutate(5);
                }
                ok
            });
            assert_eq!(visited, model.len(), "retain {what}: visits");
            m.retain(|&w, v| {
                let ok = keep(w, v.digest());
                if ok {
                    v.mutate(5);
                }
                ok
            });
            check(&t, &m, &format!("retain {what}"));
        }
    }
    removable_config!(A, u32, Embedded<u64>, DEFAULT, None);
    removable_config!(B, u64, Leaf<u64>, DEFAULT, Full);
    removable_config!(D, u128, Inline<[u64; 3]>, DEFAULT, Full);
    removable_config!(E, u16, Inline<[u64; 3]>, TWO, None);
    go::<A>();
    go::<B>();
    go::<D>();
    go::<E>();
}

/// Seeks at 0 and at `MAX` on empty and one-key trees, and at every key
/// of a small dense tree, for every width.
#[test]
fn seek_at_the_extremes() {
    fn go<C>()
    where
        C: Config<Memory = LocalMemory> + Removable,
        C::Layout: MutableLayout + CloneLayout,
        ValueOf<C>: Val,
    {
        let max = max_of::<C::Key>();
        let mut t = RawTree::<C>::new();
        let mut model = Model::new();
        for w in [0, max] {
            seek::<C, Values>(&t, &model, w, "empty");
        }
        for only in [0, 1, max - 1, max] {
            let mut t = RawTree::<C>::new();
            let mut model = Model::new();
            ins(&mut t, key(only), <ValueOf<C> as Val>::make(1));
            model.insert(only, <ValueOf<C> as Val>::make(1));
            for w in [
                0,
                1,
                only.saturating_sub(1),
                only,
                only.saturating_add(1) & max,
                max - 1,
                max,
            ] {
                seek::<C, Values>(&t, &model, w, &format!("only {only:#x}"));
            }
        }
        for w in (0..60).chain((max - 60)..=max) {
            if w % 3 != 1 {
                ins(&mut t, key(w), <ValueOf<C> as Val>::make(w as u64));
                model.insert(w, <ValueOf<C> as Val>::make(w as u64));
            }
        }
        check(&t, &model, "dense");
        for w in (0..70).chain((max - 70)..=max) {
            seek::<C, Values>(&t, &model, w, "dense");
        }
    }
    removable_config!(A, u8, Embedded<u64>, DEFAULT, None);
    removable_config!(B, u16, Leaf<u64>, DEFAULT, Full);
    removable_config!(D, u32, Inline<[u64; 3]>, DEFAULT, None);
    removable_config!(E, u64, Embedded<u64>, DEFAULT, Full);
    removable_config!(F, u128, Leaf<u64>, DEFAULT, Path);
    removable_config!(G, u128, Inline<[u64; 3]>, DEFAULT, None);
    go::<A>();
    go::<B>();
    go::<D>();
    go::<E>();
    go::<F>();
    go::<G>();
}

/// `Index` panics on a missing key, as `BTreeMap`'s does.
#[test]
#[should_panic(expected = "no entry found for key")]
fn index_of_a_missing_key_panics() {
    removable_config!(A, u64, Embedded<u64>, DEFAULT, None);
    let mut t = RawTree::<A>::new();
    ins(&mut t, 1, 10);
    let _ = t[2];
}

radix_core::radix_tree! {
    /// A generated type, to check the forwarding methods and traits.
    struct Gen64 {
        key: u64,
        value: u64,
        delete: true,
    }
}

/// The methods and traits a `radix_tree!` type forwards, over a random
/// sequence, against the model; `Extend<(K, &V)>` included.
#[test]
fn generated_type_forwards() {
    let mut rng = SplitMix64::new(0x6E4E);
    let rounds = test_depth::pick(3000, 1000, 20);
    let mut t = Gen64::new();
    let mut model: BTreeMap<u64, u64> = BTreeMap::new();
    let key = |rng: &mut SplitMix64| match rng.below(4) {
        0 => rng.below(64),
        1 => u64::MAX - rng.below(64),
        2 => 1 << 40 | rng.below(2000),
        _ => rng.next_u64(),
    };
    for round in 0..rounds {
        let (kk, x) = (key(&mut rng), rng.next_u64());
        let at = format!("round {round}");
        match rng.below(16) {
            0 | 1 => assert_eq!(t.insert(kk, x), model.insert(kk, x), "{at}"),
            2 => {
                let r = t.entry(kk).and_modify(|v| *v ^= x).or_insert(x);
                *r = r.wrapping_add(1);
                let m = model.entry(kk).and_modify(|v| *v ^= x).or_insert(x);
                *m = m.wrapping_add(1);
            }
            3 => {
                if let Some((&w, _)) = model.range(kk..).next() {
                    match t.entry(w) {
                        radix_core::Entry::Occupied(e) => {
                            assert_eq!(e.remove(), model.remove(&w).unwrap())
                        }
                        radix_core::Entry::Vacant(_) => panic!("{at}: vacant"),
                    }
                }
            }
            4 => {
                for (kk, v) in t.iter_mut() {
                    *v = v.wrapping_mul(3) ^ kk;
                }
                for (kk, v) in model.iter_mut() {
                    *v = v.wrapping_mul(3) ^ kk;
                }
                for v in t.range_mut(kk..).rev().take(5) {
                    *v.1 += 1;
                }
                for v in model.range_mut(kk..).rev().take(5) {
                    *v.1 += 1;
                }
                for v in t.values_mut().take(3) {
                    *v = !*v;
                }
                for v in model.values_mut().take(3) {
                    *v = !*v;
                }
            }
            5 => assert_eq!(t.pop_first(), model.pop_first(), "{at}"),
            6 => assert_eq!(t.pop_last(), model.pop_last(), "{at}"),
            7 => {
                t.retain(|kk, v| {
                    *v += 1;
                    (kk ^ *v ^ x) % 4 != 0
                });
                model.retain(|&kk, v| {
                    *v += 1;
                    (kk ^ *v ^ x) % 4 != 0
                });
            }
            8 => {
                let mut upper = t.split_off(kk);
                let mut mupper = model.split_off(&kk);
                assert!(upper.iter().eq(mupper.iter().map(|(&a, b)| (a, b))), "{at}");
                if x % 2 == 0 {
                    t.append(&mut upper);
                    model.append(&mut mupper);
                    assert!(upper.is_empty());
                }
            }
            9 => {
                let extra: Vec<(u64, u64)> = (0..rng.below(20))
                    .map(|j| (kk.wrapping_add(j), x ^ j))
                    .collect();
                t.extend(extra.iter().map(|(a, b)| (*a, b)));
                model.extend(extra.iter().map(|(a, b)| (*a, *b)));
                let mut other: Gen64 = extra
                    .iter()
                    .rev()
                    .map(|&(a, b)| (a.wrapping_mul(7), b))
                    .collect();
                let mut mother: BTreeMap<u64, u64> =
                    extra.iter().map(|&(a, b)| (a.wrapping_mul(7), b)).collect();
                t.append(&mut other);
                model.append(&mut mother);
                assert!(other.is_empty());
            }
            10 => {
                assert_eq!(
                    t.first_at_or_after(kk),
                    model.range(kk..).next().map(|(&a, b)| (a, b)),
                    "{at}"
                );
                assert_eq!(
                    t.last_at_or_before(kk),
                    model.range(..=kk).next_back().map(|(&a, b)| (a, b)),
                    "{at}"
                );
            }
            11 => {
                let c = t.clone();
                let rebuilt: Gen64 = model.iter().rev().map(|(&a, &b)| (a, b)).collect();
                assert!(c == t && rebuilt == t, "{at}");
                assert_eq!(c.cmp(&rebuilt), Ordering::Equal);
                assert_eq!(hash_of(&c), hash_of(&rebuilt), "{at}");
                assert_eq!(hash_of(&c), hash_of(&model), "{at}: hash as BTreeMap's");
            }
            12 => {
                let c = t.clone();
                let half = model.len() / 2;
                let got: Vec<(u64, u64)> = c.into_iter().rev().take(half).collect();
                let want: Vec<(u64, u64)> = model
                    .iter()
                    .rev()
                    .take(half)
                    .map(|(&a, &b)| (a, b))
                    .collect();
                assert_eq!(got, want, "{at}");
                let keys: Vec<u64> = t.clone().into_keys().collect();
                assert!(keys.iter().eq(model.keys()), "{at}");
                let values: Vec<u64> = t.clone().into_values().rev().collect();
                assert!(values.iter().eq(model.values().rev()), "{at}");
                let mut n = 0;
                for (a, b) in &t {
                    assert_eq!(model[&a], *b);
                    n += 1;
                }
                for (_, b) in &mut t {
                    *b ^= 1;
                }
                for b in model.values_mut() {
                    *b ^= 1;
                }
                assert_eq!(n, model.len());
            }
            13 => {
                if let Some((&w, &v)) = model.range(kk..).next() {
                    assert_eq!(t[w], v, "{at}");
                }
            }
            14 => {
                let all = std::mem::take(&mut t);
                let got: Vec<(u64, u64)> = all.into_iter().collect();
                assert!(got.iter().map(|(a, b)| (a, b)).eq(model.iter()), "{at}");
                t = got.into_iter().collect();
            }
            _ => assert_eq!(t.remove(kk), model.remove(&kk), "{at}"),
        }
        assert_eq!(t.len(), model.len(), "{at}");
        if round % 64 == 0 {
            assert!(t.iter().eq(model.iter().map(|(&a, b)| (a, b))), "{at}");
        }
    }
    assert!(t.iter().eq(model.iter().map(|(&a, b)| (a, b))));
}
