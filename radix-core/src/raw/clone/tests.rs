//! Sized for Miri: a few hundred keys per tree there, a few thousand
//! otherwise. Every test checks the clone with `verify()` and against
//! its source; values that count their owners (`Rc`) show each value
//! dropped exactly once, and Miri shows no leak and no double free.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::{Rc, Weak};

use crate::mem::LocalMemory;
use crate::raw::test_keys::test_config;
use crate::raw::test_keys::{SplitMix64, key, wide};
use crate::value::{
    Auto, CloneLayout, Inline, Leaf, MutableLayout, ValueLayout, VarBytes, Varlen, Word,
};
use crate::{Config, Key, Kind, RawTree, SizeClasses, Stats};
use test_depth::pick;

const DEFAULT: SizeClasses = SizeClasses::DEFAULT;
/// A node4 class of one child first.
const ONE: SizeClasses = SizeClasses::new(&[1, 8, 32, 40, 256]);
/// A node4 class of three children first.
const THREE: SizeClasses = SizeClasses::new(&[3, 8, 32, 40, 256]);

// Every key width, one-word values.
test_config!(U8None, u8, Auto<u64>, DEFAULT, None);
test_config!(U8Full, u8, Auto<u64>, DEFAULT, Full);
test_config!(U16None, u16, Auto<u64>, DEFAULT, None);
test_config!(U32Lazy, u32, Auto<u64>, THREE, Lazy);
test_config!(U64None, u64, Auto<u64>, DEFAULT, None);
test_config!(U64Path, u64, Auto<u64>, ONE, Path);
// u128 keys in every compression.
test_config!(U128None, u128, Auto<u64>, DEFAULT, None);
test_config!(U128Lazy, u128, Auto<u64>, DEFAULT, Lazy);
test_config!(U128Path, u128, Auto<u64>, DEFAULT, Path);
test_config!(U128Full, u128, Auto<u64>, DEFAULT, Full);
test_config!(U128FullOne, u128, Auto<u64>, ONE, Full);
// Leaf, inline and varlen values.
test_config!(U16LeafLazy, u16, Leaf<String>, DEFAULT, Lazy);
test_config!(U64LeafNone, u64, Leaf<String>, THREE, None);
test_config!(U128InlinePath, u128, Inline<[u32; 5]>, THREE, Path);
test_config!(U32InlineNone, u32, Inline<[u32; 5]>, ONE, None);
test_config!(U32VarlenNone, u32, Varlen<VarBytes>, DEFAULT, None);
test_config!(U128VarlenFull, u128, Varlen<VarBytes>, THREE, Full);
// Values that count their owners, embedded, in leaves and inline.
test_config!(U64TrackedLeaf, u64, Leaf<Tracked>, DEFAULT, None);
test_config!(U32TrackedLazy, u32, Auto<Tracked>, ONE, Lazy);
test_config!(U64TrackedPath, u64, Auto<Tracked>, THREE, Path);
test_config!(U128FatFull, u128, Inline<Fat>, DEFAULT, Full);
test_config!(U16StringFull, u16, Inline<String>, THREE, Full);

// ------------------------------------------------------------ values

thread_local! {
    /// Clones of a `Tracked` left before one panics; 0 for never.
    static FUSE: Cell<usize> = const { Cell::new(0) };
}

/// A one-word value whose `Rc` counts the trees holding it, and whose
/// `clone` panics when the armed [`FUSE`] burns down.
#[derive(Debug, PartialEq)]
struct Tracked(Rc<u64>);

impl Clone for Tracked {
    fn clone(&self) -> Self {
        FUSE.with(|fuse| match fuse.get() {
            0 => {}
            1 => {
                fuse.set(0);
                panic!("clone fuse burnt at value {}", self.0);
            }
            n => fuse.set(n - 1),
        });
        Tracked(Rc::clone(&self.0))
    }
}

/// A three-word tracked value, for the inline layout.
#[derive(Clone, Debug, PartialEq)]
struct Fat {
    pad: [u64; 2],
    tracked: Tracked,
}

/// Values made from a tag.
trait Make {
    fn make(tag: u64) -> Self;
}

impl Make for u64 {
    fn make(tag: u64) -> Self {
        tag
    }
}

impl Make for String {
    fn make(tag: u64) -> Self {
        format!("value {tag:x}")
    }
}

impl Make for [u32; 5] {
    fn make(tag: u64) -> Self {
        [tag as u32, (tag >> 32) as u32, !tag as u32, 7, 9]
    }
}

impl Make for Tracked {
    fn make(tag: u64) -> Self {
        Tracked(Rc::new(tag))
    }
}

impl Make for Fat {
    fn make(tag: u64) -> Self {
        Fat {
            pad: [!tag, tag.rotate_left(7)],
            tracked: Tracked::make(tag),
        }
    }
}

/// Values whose owners are counted.
trait Owners {
    fn rc(&self) -> &Rc<u64>;
}

impl Owners for Tracked {
    fn rc(&self) -> &Rc<u64> {
        &self.0
    }
}

impl Owners for Fat {
    fn rc(&self) -> &Rc<u64> {
        &self.tracked.0
    }
}

/// One interface over the layouts under test.
trait Fill: ValueLayout {
    /// Stores the value of `tag` under `k`.
    fn put<C: Config<Layout = Self, Memory = LocalMemory>>(t: &mut RawTree<C>, k: C::Key, tag: u64);
    /// Whether `v` is the value of `tag`.
    fn is(v: &Self::Value, tag: u64) -> bool;
}

impl<V: Make + PartialEq, const E: bool> Fill for Word<V, E> {
    fn put<C: Config<Layout = Self, Memory = LocalMemory>>(
        t: &mut RawTree<C>,
        k: C::Key,
        tag: u64,
    ) {
        t.insert(k, V::make(tag));
    }
    fn is(v: &V, tag: u64) -> bool {
        *v == V::make(tag)
    }
}

impl<V: Make + PartialEq> Fill for Inline<V> {
    fn put<C: Config<Layout = Self, Memory = LocalMemory>>(
        t: &mut RawTree<C>,
        k: C::Key,
        tag: u64,
    ) {
        t.insert(k, V::make(tag));
    }
    fn is(v: &V, tag: u64) -> bool {
        *v == V::make(tag)
    }
}

/// Tags make byte strings of 0 to 19 bytes: embedded up to 7, leaves
/// beyond.
fn var_bytes(tag: u64) -> Vec<u8> {
    (0..tag % 20).map(|i| (tag ^ i) as u8).collect()
}

impl Fill for Varlen<VarBytes> {
    fn put<C: Config<Layout = Self, Memory = LocalMemory>>(
        t: &mut RawTree<C>,
        k: C::Key,
        tag: u64,
    ) {
        t.insert(k, &VarBytes::new(&var_bytes(tag)).unwrap());
    }
    fn is(v: &VarBytes, tag: u64) -> bool {
        v.as_bytes() == var_bytes(tag)
    }
}

// ------------------------------------------------------------ keys

/// Keys of `C` making every shape: a dense run of `n / 2` (full
/// last-level nodes), a stride (a wide inner node), random keys (lazy
/// leaves, long skipped prefixes), clusters under random prefixes
/// (nodes that skip bytes), and a ladder of last-level and inner nodes
/// of 1 to 35 entries (with the dense run, every class of every class
/// list under test, once `n` is in the thousands).
fn mixed_keys<C: Config>(n: usize, seed: u64) -> Vec<u128> {
    let max = wide(C::Key::MAX);
    let mut rng = SplitMix64(seed);
    let mut keys: Vec<u128> = (0..n as u128 / 2).collect();
    keys.extend((0..n as u128 / 8).map(|i| (i << 8) | 7));
    keys.extend((0..n / 4).map(|_| rng.next_u128()));
    for cluster in 0..4u128 {
        let prefix = rng.next_u128() & !0xFFFF;
        let size = (n as u128 / 32) << cluster;
        keys.extend((0..size).map(|j| prefix | (j * 37 % 0x1_0000)));
    }
    // Under Miri, the rungs past the smallest and the largest class.
    let rungs = [1u128, 3, 5, 20, 35];
    for (rung, &count) in pick(&rungs[..], &rungs[..], &[5, 35]).iter().enumerate() {
        let rung = rung as u128;
        keys.extend((0..count).map(|j| ((0xA0 + rung) << 16) | (j << 8) | 3));
        keys.extend((0..count).map(|j| ((0xC0 + rung) << 16) | (j * 5)));
    }
    let mut keys: Vec<u128> = keys.into_iter().map(|k| k & max).collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// The tag of key `k`.
fn tag(k: u128) -> u64 {
    (k as u64) ^ ((k >> 64) as u64).rotate_left(17) ^ 0x5EED
}

/// A tree holding `keys`, each with the value of its tag.
fn build<C: Config<Memory = LocalMemory>>(keys: &[u128]) -> RawTree<C>
where
    C::Layout: Fill,
{
    let mut t = RawTree::<C>::new();
    for &k in keys {
        <C::Layout as Fill>::put(&mut t, key(k), tag(k));
    }
    t.verify().unwrap();
    assert_eq!(t.len(), keys.len());
    t
}

// ------------------------------------------------------------ checks

/// `t`'s stats without its memory, which a clone may hold less of.
fn shape<C: Config>(t: &RawTree<C>) -> Stats {
    Stats {
        memory_bytes: 0,
        ..t.stats()
    }
}

/// Clones `t` and checks the clone: verified, equal entry for entry,
/// the same shape, every value its own (at another address), no more
/// memory, and a clone of the clone as small as the clone.
fn check_clone<C: Config<Memory = LocalMemory>>(t: &RawTree<C>) -> RawTree<C>
where
    C::Layout: CloneLayout,
    <C::Layout as ValueLayout>::Value: PartialEq,
{
    let c = t.clone();
    c.verify().unwrap();
    assert_eq!(c.len(), t.len());
    assert_eq!(c.height(), t.height());
    assert!(c.iter().eq(t.iter()), "the clone's entries differ");
    for ((_, a), (_, b)) in c.iter().zip(t.iter()) {
        let (a, b): (*const _, *const _) = (a, b);
        assert!(!core::ptr::addr_eq(a, b), "a value shared with the source");
    }
    assert_eq!(shape(&c), shape(t));
    assert!(c.memory_usage() <= t.memory_usage());
    // Under Miri the clone of a clone is left out: it runs the same code
    // as the clone above, and two more walks of the tree were a third of
    // this check's time there.
    if !cfg!(miri) {
        let cc = c.clone();
        cc.verify().unwrap();
        assert_eq!(cc.stats(), c.stats());
    }
    c
}

/// Whether `t` holds exactly `model`'s keys with their tags' values.
fn holds<C: Config<Memory = LocalMemory>>(t: &RawTree<C>, model: &BTreeMap<u128, u64>) -> bool
where
    C::Layout: Fill,
{
    t.len() == model.len()
        && t.iter()
            .zip(model)
            .all(|((k, v), (&mk, &mt))| wide(k) == mk && <C::Layout as Fill>::is(v, mt))
}

/// Changes `t`: inserts in key order past its largest key (which the
/// insert hint serves), replacements, removals and `get_mut`, each
/// recorded in `model`.
fn change<C: Config<Memory = LocalMemory>>(
    t: &mut RawTree<C>,
    model: &mut BTreeMap<u128, u64>,
    salt: u64,
) where
    C::Layout: Fill + MutableLayout,
    <C::Layout as ValueLayout>::Value: Make + Sized,
{
    let max = wide(C::Key::MAX);
    let last = *model.keys().next_back().unwrap();
    for i in 1..=20u128 {
        if let Some(k) = last.checked_add(i * u128::from(salt)).filter(|&k| k <= max) {
            <C::Layout as Fill>::put(t, key(k), tag(k) ^ salt);
            model.insert(k, tag(k) ^ salt);
        }
    }
    // Under Miri, a sample still large enough for every kind of change
    // in every class of node.
    let some: Vec<u128> = model.keys().copied().step_by(pick(3, 3, 7)).collect();
    for (i, &k) in some.iter().enumerate() {
        match i % 3 {
            0 => {
                <C::Layout as Fill>::put(t, key(k), tag(k) ^ salt);
                model.insert(k, tag(k) ^ salt);
            }
            1 => {
                t.remove(key(k));
                model.remove(&k);
            }
            _ => {
                *t.get_mut(key(k)).unwrap() = Make::make(!tag(k) ^ salt);
                model.insert(k, !tag(k) ^ salt);
            }
        }
    }
    t.verify().unwrap();
    assert!(holds(t, model), "the changed tree");
}

/// Clones a tree of `keys`, then changes the clone and the source in
/// turn ([`change`]), each change seen by one tree only.
fn check_independent<C: Config<Memory = LocalMemory>>(keys: &[u128])
where
    C::Layout: Fill + CloneLayout + MutableLayout,
    <C::Layout as ValueLayout>::Value: PartialEq + Make + Sized,
{
    let mut t = build::<C>(keys);
    let mut model: BTreeMap<u128, u64> = keys.iter().map(|&k| (k, tag(k))).collect();
    let mut c = check_clone(&t);
    let mut c_model = model.clone();
    change(&mut c, &mut c_model, 1);
    t.verify().unwrap();
    assert!(
        holds(&t, &model),
        "a change to the clone reached the source"
    );
    change(&mut t, &mut model, 2);
    c.verify().unwrap();
    assert!(
        holds(&c, &c_model),
        "a change to the source reached the clone"
    );
}

/// Clones trees of `keys` whose values count their owners: clones
/// dropped before and after their source, and clones that panic on
/// their first, middle and last value. Every value ends with exactly
/// its source's owner, and none outlives its last tree.
fn check_drops<C: Config<Memory = LocalMemory>>(keys: &[u128])
where
    C::Layout: Fill + CloneLayout,
    <C::Layout as ValueLayout>::Value: PartialEq + Owners,
{
    let owners = |t: &RawTree<C>, n: usize| t.values().all(|v| Rc::strong_count(v.rc()) == n);
    let t = build::<C>(keys);
    let weak: Vec<Weak<u64>> = t.values().map(|v| Rc::downgrade(v.rc())).collect();
    // A clone dropped before its source.
    let c = check_clone(&t);
    assert!(owners(&t, 2));
    drop(c);
    assert!(owners(&t, 1));
    t.verify().unwrap();
    // A clone whose value panics part of the way: the source is whole.
    // Under Miri, half-way only: the unwinding code is the same.
    let fuses = [1, keys.len().div_ceil(2), keys.len()];
    for &fuse in pick(&fuses[..], &fuses[..], &fuses[1..2]) {
        FUSE.with(|f| f.set(fuse));
        let result = catch_unwind(AssertUnwindSafe(|| t.clone()));
        assert!(result.is_err(), "the fuse at {fuse} did not burn");
        assert_eq!(FUSE.with(Cell::get), 0);
        t.verify().unwrap();
        assert!(owners(&t, 1), "a clone outlived its panic (fuse {fuse})");
        assert!(
            t.values()
                .zip(&weak)
                .all(|(v, w)| Rc::ptr_eq(v.rc(), &w.upgrade().unwrap()))
        );
    }
    // A fuse past the last value does not burn.
    FUSE.with(|f| f.set(keys.len() + 1));
    let c = t.clone();
    FUSE.with(|f| f.set(0));
    assert!(owners(&t, 2) && owners(&c, 2));
    // A clone dropped after its source.
    drop(t);
    c.verify().unwrap();
    assert!(owners(&c, 1));
    drop(c);
    assert!(weak.iter().all(|w| w.strong_count() == 0), "a value leaked");
}

// ------------------------------------------------------------ tests

#[test]
fn clone_of_an_empty_tree_is_empty() {
    let t = RawTree::<U64None>::new();
    let mut c = check_clone(&t);
    assert!(c.is_empty());
    assert_eq!(c.memory_usage(), 0);
    c.insert(5, 6);
    assert_eq!(c.get(5), Some(&6));
    assert!(t.is_empty());
    // Emptied by removals, and cleared.
    let mut t = build::<U128Full>(&mixed_keys::<U128Full>(40, 1));
    let keys: Vec<u128> = t.keys().collect();
    for k in keys {
        t.remove(k);
    }
    let c = check_clone(&t);
    assert!(c.is_empty() && c.memory_usage() == 0);
    let mut t = build::<U16LeafLazy>(&[1, 2, 300]);
    t.clear();
    assert!(check_clone(&t).is_empty());
}

#[test]
fn clone_of_a_single_key() {
    fn one<C: Config<Memory = LocalMemory>>(k: u128) -> Stats
    where
        C::Layout: Fill + CloneLayout,
        <C::Layout as ValueLayout>::Value: PartialEq,
    {
        let k = k & wide(C::Key::MAX);
        let c = check_clone(&build::<C>(&[k]));
        assert!(holds(&c, &BTreeMap::from([(k, tag(k))])));
        c.stats()
    }
    let k = 0x0123_4567_89AB_CDEF_FEDC_BA98_7654_3210;
    // A lazy root stands for the whole tree.
    assert_eq!(one::<U128Lazy>(k).lazy_leaves, 1);
    assert_eq!(one::<U128Full>(k).lazy_leaves, 1);
    assert_eq!(one::<U128VarlenFull>(k).lazy_leaves, 1);
    // A path-compressed root skips every byte but the last.
    assert_eq!(one::<U128Path>(k).nodes(), 1);
    assert_eq!(one::<U128InlinePath>(k).nodes(), 1);
    assert_eq!(one::<U128None>(k).nodes(), 16);
    assert_eq!(one::<U8None>(k).nodes(), 1);
    assert_eq!(one::<U32VarlenNone>(k).leaves, 1);
    one::<U64Path>(k);
    one::<U16StringFull>(k);
}

#[test]
fn clone_of_a_full_u8_tree() {
    let keys: Vec<u128> = (0..256).collect();
    for t in [build::<U8None>(&keys), build::<U8None>(&keys[..200])] {
        let c = check_clone(&t);
        assert_eq!(c.stats().nodes_of_kind(Kind::N256), 1);
        assert_eq!(c.len(), t.len());
    }
    let c = check_clone(&build::<U8Full>(&keys));
    assert_eq!(c.stats().nodes(), 1);
    check_independent::<U8None>(&keys[..250]);
}

/// Shapes, not memory safety: the other tests cover every kind and
/// layout under Miri, so this one runs natively only.
#[test]
#[cfg_attr(miri, ignore)]
fn clone_of_every_key_width() {
    let n = 3000;
    check_clone(&build::<U8None>(&mixed_keys::<U8None>(n, 2)));
    check_clone(&build::<U16None>(&mixed_keys::<U16None>(n, 3)));
    check_clone(&build::<U32Lazy>(&mixed_keys::<U32Lazy>(n, 4)));
    check_clone(&build::<U64None>(&mixed_keys::<U64None>(n, 5)));
    check_clone(&build::<U64Path>(&mixed_keys::<U64Path>(n, 6)));
    check_clone(&build::<U128None>(&mixed_keys::<U128None>(n, 7)));
}

/// Shapes, not memory safety: the other tests cover every kind and
/// layout under Miri, so this one runs natively only.
#[test]
#[cfg_attr(miri, ignore)]
fn clone_of_u128_keys_in_every_compression() {
    let n = 3000;
    let keys = mixed_keys::<U128None>(n, 8);
    let none = check_clone(&build::<U128None>(&keys)).stats();
    let lazy = check_clone(&build::<U128Lazy>(&keys)).stats();
    let path = check_clone(&build::<U128Path>(&keys)).stats();
    let full = check_clone(&build::<U128Full>(&keys)).stats();
    let one = check_clone(&build::<U128FullOne>(&keys)).stats();
    assert_eq!(none.lazy_leaves + path.lazy_leaves, 0);
    assert!(lazy.lazy_leaves > 0 && full.lazy_leaves > 0 && one.lazy_leaves > 0);
    assert!(full.nodes() < path.nodes() && path.nodes() < none.nodes());
    for stats in [none, lazy, path, full] {
        for kind in [Kind::N4, Kind::N16, Kind::N48, Kind::N256] {
            assert!(stats.nodes_of_kind(kind) > 0, "{stats}");
        }
    }
    // Classes of one child are never used with full compression: a
    // single key is a lazy leaf, a single child merged.
    assert_eq!(one.nodes_of_kind(Kind::N4), 0);
    assert!(one.classes[1..].iter().all(|c| c.inner + c.last_level > 0));
}

#[test]
fn clone_changes_are_its_own() {
    let n = pick(2000, 2000, 30);
    check_independent::<U64None>(&mixed_keys::<U64None>(n, 9));
    check_independent::<U16LeafLazy>(&mixed_keys::<U16LeafLazy>(n, 13));
    check_independent::<U128InlinePath>(&mixed_keys::<U128InlinePath>(n, 14));
    check_independent::<U16StringFull>(&mixed_keys::<U16StringFull>(n, 15));
    // Under Miri the four above hold every layout and compression; these
    // change only the key width and the classes, and take as long again.
    if !cfg!(miri) {
        check_independent::<U128Lazy>(&mixed_keys::<U128Lazy>(n, 10));
        check_independent::<U128Path>(&mixed_keys::<U128Path>(n, 11));
        check_independent::<U128FullOne>(&mixed_keys::<U128FullOne>(n, 12));
    }
}

#[test]
fn clone_drops_every_value_once() {
    let n = pick(1000, 1000, 20);
    check_drops::<U64TrackedLeaf>(&mixed_keys::<U64TrackedLeaf>(n, 16));
    check_drops::<U32TrackedLazy>(&mixed_keys::<U32TrackedLazy>(n, 17));
    check_drops::<U64TrackedPath>(&mixed_keys::<U64TrackedPath>(n, 18));
    check_drops::<U128FatFull>(&mixed_keys::<U128FatFull>(n, 19));
}

#[test]
fn clone_panicking_in_a_lazy_root_or_a_single_value() {
    check_drops::<U32TrackedLazy>(&[0xDEAD_BEEF]);
    check_drops::<U128FatFull>(&[7]);
    check_drops::<U64TrackedPath>(&[1 << 40]);
    check_drops::<U64TrackedLeaf>(&[3]);
}

#[test]
fn clone_of_varlen_values_embedded_and_in_leaves() {
    let n = pick(2000, 2000, 50);
    for t in [
        build::<U32VarlenNone>(&mixed_keys::<U32VarlenNone>(n, 20)),
        build::<U32VarlenNone>(&(0..20).collect::<Vec<_>>()),
    ] {
        let c = check_clone(&t);
        let stats = c.stats();
        assert!(stats.leaves > 0 && stats.leaves < c.len(), "{stats}");
    }
    let t = build::<U128VarlenFull>(&mixed_keys::<U128VarlenFull>(n, 21));
    let c = check_clone(&t);
    assert!(c.stats().leaves > 0 && c.stats().lazy_leaves > 0);
    drop(t);
    c.verify().unwrap();
    let keys: Vec<u128> = mixed_keys::<U128VarlenFull>(n, 21);
    let model: BTreeMap<u128, u64> = keys.iter().map(|&k| (k, tag(k))).collect();
    assert!(holds(&c, &model));
}

#[test]
fn clone_of_inline_and_leaf_values() {
    let n = pick(2000, 2000, 25);
    let c = check_clone(&build::<U32InlineNone>(&mixed_keys::<U32InlineNone>(n, 22)));
    assert_eq!(c.stats().layout, "inline");
    let c = check_clone(&build::<U128InlinePath>(&mixed_keys::<U128InlinePath>(
        n, 23,
    )));
    assert!(c.stats().nodes_of_kind(Kind::N48) > 0);
    let t = build::<U64LeafNone>(&mixed_keys::<U64LeafNone>(n, 24));
    let c = check_clone(&t);
    assert_eq!(c.stats().leaves, c.len());
    assert_eq!(c.get(3).map(String::as_str), Some(&*String::make(tag(3))));
}

/// Shapes, not memory safety: the other tests cover every kind and
/// layout under Miri, so this one runs natively only.
#[test]
#[cfg_attr(miri, ignore)]
fn clone_of_classes_from_one_and_three() {
    let n = 2000;
    let used = |stats: &Stats, class: usize| {
        let c = stats.classes[class];
        c.inner + c.last_level > 0
    };
    for (stats, first_used) in [
        (
            check_clone(&build::<U64Path>(&mixed_keys::<U64Path>(n, 25))).stats(),
            true,
        ),
        (
            check_clone(&build::<U32Lazy>(&mixed_keys::<U32Lazy>(n, 27))).stats(),
            true,
        ),
        (
            check_clone(&build::<U32InlineNone>(&mixed_keys::<U32InlineNone>(n, 28))).stats(),
            true,
        ),
        (
            check_clone(&build::<U128FullOne>(&mixed_keys::<U128FullOne>(n, 26))).stats(),
            false,
        ),
    ] {
        assert_eq!(used(&stats, 0), first_used, "{stats}");
        assert!((1..stats.classes.len()).all(|c| used(&stats, c)), "{stats}");
    }
}

#[test]
fn clone_of_a_shrunk_tree() {
    // Removals leave nodes shrunk into smaller classes, node256 slots
    // cleared, node48 maps with holes and lazy leaves collapsed.
    fn shrink<C: Config<Memory = LocalMemory>>(seed: u64)
    where
        C::Layout: Fill + CloneLayout,
        <C::Layout as ValueLayout>::Value: PartialEq,
    {
        let keys = mixed_keys::<C>(pick(2000, 2000, 25), seed);
        let mut t = build::<C>(&keys);
        for &k in keys.iter().step_by(3).chain(keys.iter().skip(1).step_by(7)) {
            t.remove(key(k));
        }
        t.verify().unwrap();
        let c = check_clone(&t);
        // The source's slabs keep room its nodes had; the clone's do not.
        assert!(c.memory_usage() < t.memory_usage());
    }
    shrink::<U64None>(29);
    shrink::<U128Full>(30);
    shrink::<U128Path>(31);
    shrink::<U16LeafLazy>(32);
    shrink::<U128VarlenFull>(33);
}

#[test]
fn clone_keeps_the_memory_options() {
    let pools = RawTree::<U32VarlenNone>::pool_specs();
    for mem in [
        LocalMemory::insert_only(&pools, 8 << 10),
        LocalMemory::with_block_limit(&pools, 1 << 10),
    ] {
        let insert_only = mem.is_insert_only();
        let mut t = RawTree::<U32VarlenNone>::with_memory(mem);
        for k in mixed_keys::<U32VarlenNone>(pick(1000, 1000, 50), 34) {
            <Varlen<VarBytes> as Fill>::put(&mut t, k as u32, tag(k));
        }
        let c = check_clone(&t);
        assert_eq!(c.memory().is_insert_only(), insert_only);
        for pool in 0..pools.len() {
            assert_eq!(c.memory().block_size(pool), t.memory().block_size(pool));
        }
    }
}

/// The largest trees, beyond what Miri runs in reasonable time.
#[test]
#[cfg_attr(miri, ignore)]
fn clone_of_large_trees() {
    let n = 60_000;
    check_clone(&build::<U64None>(&mixed_keys::<U64None>(n, 35)));
    check_clone(&build::<U128Full>(&mixed_keys::<U128Full>(n, 36)));
    check_drops::<U128FatFull>(&mixed_keys::<U128FatFull>(n / 4, 37));
}
