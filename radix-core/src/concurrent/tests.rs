//! Unit tests of the concurrent engine: every compression and layout
//! against a `BTreeMap`, single-threaded, then with threads. Small sizes
//! under Miri, whose race detector checks every shared word is atomic.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use super::space::Space;
use super::{ConcurrentLayout, ConcurrentTree};
use crate::config::{Compression, Config};
use crate::mem::LocalMemory;
use crate::node::SizeClasses;
use crate::value::{Embedded, Leaf, VarBytes, Varlen};

macro_rules! configs {
    ($($name:ident: $key:ty, $layout:ty, $compression:ident;)*) => {$(
        enum $name {}
        impl Config for $name {
            type Key = $key;
            type Layout = $layout;
            type Memory = LocalMemory;
            const SIZE_CLASSES: SizeClasses = SizeClasses::DEFAULT;
            const DELETE: bool = true;
            const COMPRESSION: Compression = Compression::$compression;
        }
    )*};
}

configs! {
    U64None: u64, Embedded<u64>, None;
    U64Full: u64, Embedded<u64>, Full;
    U64Lazy: u64, Embedded<u64>, Lazy;
    U64Path: u64, Embedded<u64>, Path;
    U32LeafNone: u32, Leaf<String>, None;
    U128LeafFull: u128, Leaf<String>, Full;
    U64LeafNone: u64, Leaf<String>, None;
    U64LeafFull: u64, Leaf<String>, Full;
    U16None: u16, Embedded<u32>, None;
    U64VarNone: u64, Varlen<VarBytes>, None;
    U64VarPath: u64, Varlen<VarBytes>, Path;
    PlantedPublishBeforeCopy: u64, Embedded<u64>, Path;
}

const N: u64 = if cfg!(miri) { 24 } else { 20_000 };

/// Keys of several shapes: dense, strided, and scattered.
fn keys(n: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..n {
        out.push(i);
        out.push(i * 8 + (1 << 20));
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.push(x >> (i % 40));
    }
    out
}

fn check_against_model<C: Config<Key = u64, Layout = Embedded<u64>>>() {
    let tree = ConcurrentTree::<C>::new();
    let mut model = BTreeMap::new();
    for (i, k) in keys(N).into_iter().enumerate() {
        assert_eq!(
            tree.insert(k, i as u64),
            model.insert(k, i as u64),
            "insert {k}"
        );
    }
    for (&k, &v) in &model {
        assert_eq!(tree.get(k), Some(v), "get {k}");
    }
    assert_eq!(tree.get(u64::MAX - 1), model.get(&(u64::MAX - 1)).copied());
    assert!(tree.iter().eq(model.iter().map(|(&k, &v)| (k, v))));
    assert!(
        tree.iter()
            .rev()
            .eq(model.iter().rev().map(|(&k, &v)| (k, v)))
    );
    let (lo, hi) = (1000, 1 << 21);
    assert!(
        tree.range(lo..hi)
            .eq(model.range(lo..hi).map(|(&k, &v)| (k, v)))
    );
    assert!(
        tree.range(lo..=hi)
            .rev()
            .eq(model.range(lo..=hi).rev().map(|(&k, &v)| (k, v)))
    );
    // Remove every other key, then all.
    let peak = tree.memory_usage();
    let all: Vec<u64> = model.keys().copied().collect();
    for k in all.iter().step_by(2) {
        assert_eq!(tree.remove(*k), model.remove(k), "remove {k}");
    }
    assert!(tree.iter().eq(model.iter().map(|(&k, &v)| (k, v))));
    for k in &all {
        assert_eq!(tree.remove(*k), model.remove(k), "remove {k}");
    }
    assert!(tree.is_empty());
    // An emptied tree still holds what waits for the epochs (up to a few
    // batches of retired nodes per writer) in its slabs. Churn frees and
    // reuses it: filling and emptying the tree again and again stays
    // within its first peak. (Not at Miri's sizes, where a few slab
    // blocks and a batch of retired nodes outweigh the tree.)
    if cfg!(miri) {
        return;
    }
    for _ in 0..3 {
        for &k in &all {
            tree.insert(k, k);
        }
        for &k in &all {
            assert_eq!(tree.remove(k), Some(k));
        }
    }
    let held = tree.memory_usage();
    assert!(
        held <= peak + peak / 4,
        "churn grew the tree from {peak} to {held} bytes"
    );
}

#[test]
fn matches_a_model_uncompressed() {
    check_against_model::<U64None>();
}

#[test]
fn matches_a_model_fully_compressed() {
    check_against_model::<U64Full>();
}

#[test]
#[cfg_attr(
    miri,
    ignore = "the same atomics as the none and full runs; Miri's time goes to those"
)]
fn matches_a_model_lazy() {
    check_against_model::<U64Lazy>();
}

#[test]
#[cfg_attr(
    miri,
    ignore = "the same atomics as the none and full runs; Miri's time goes to those"
)]
fn matches_a_model_path() {
    check_against_model::<U64Path>();
}

#[test]
fn leaf_values_are_replaced_and_freed() {
    let tree = ConcurrentTree::<U32LeafNone>::new();
    for k in 0..N as u32 {
        tree.insert(k * 3, k.to_string());
    }
    assert_eq!(tree.insert(9, "nine".into()), Some("3".into()));
    assert_eq!(tree.get_with(9, |v| v.clone()), Some("nine".into()));
    assert_eq!(tree.remove(9), Some("nine".into()));
    assert_eq!(tree.get_cloned(9), None);
    assert_eq!(tree.len(), N as usize - 1);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "the same atomics as the none and full runs; Miri's time goes to those"
)]
fn wide_keys_leaf_values() {
    let tree = ConcurrentTree::<U128LeafFull>::new();
    let mut model = BTreeMap::new();
    for k in keys(N / 4) {
        let key = u128::from(k) << 64 | u128::from(k.rotate_left(17));
        assert_eq!(
            tree.insert(key, k.to_string()),
            model.insert(key, k.to_string())
        );
    }
    assert!(tree.iter().eq(model.clone()));
    for (i, k) in model.keys().enumerate() {
        if i % 3 == 0 {
            tree.remove(*k);
        }
    }
    let kept: Vec<_> = model
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % 3 != 0)
        .map(|(_, e)| e)
        .collect();
    assert!(tree.iter().eq(kept));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "the same atomics as the none and full runs; Miri's time goes to those"
)]
fn narrow_keys_fill_and_empty_every_node_kind() {
    let tree = ConcurrentTree::<U16None>::new();
    for round in 0..3u32 {
        for k in 0..=u16::MAX / if cfg!(miri) { 1024 } else { 1 } {
            tree.insert(k, u32::from(k) + round);
        }
        for k in (0..=u16::MAX / if cfg!(miri) { 1024 } else { 1 }).rev() {
            assert_eq!(tree.remove(k), Some(u32::from(k) + round));
        }
        assert!(tree.is_empty());
    }
}

#[test]
fn upsert_runs_once_per_call() {
    let tree = ConcurrentTree::<U64None>::new();
    let rounds = if cfg!(miri) { 10 } else { 100 };
    for i in 0..rounds * 10 {
        tree.update_or_insert(i % 10, |old| old.copied().unwrap_or(0) + 1);
    }
    assert!(tree.iter().all(|(_, n)| n == rounds));
}

#[test]
fn threads_insert_disjoint_ranges_and_read_meanwhile() {
    let tree = ConcurrentTree::<U64Full>::new();
    let per = if cfg!(miri) { 12 } else { 5000 };
    std::thread::scope(|s| {
        for t in 0..3u64 {
            let tree = &tree;
            s.spawn(move || {
                for i in 0..per {
                    tree.insert((t << 40) | (i * 7), i);
                }
                for i in (0..per).step_by(2) {
                    assert_eq!(tree.remove((t << 40) | (i * 7)), Some(i));
                }
            });
        }
        s.spawn(|| {
            for i in 0..per {
                if let Some(v) = tree.get((1 << 40) | (i * 7)) {
                    assert_eq!(v, i);
                }
            }
        });
    });
    for t in 0..3u64 {
        for i in 0..per {
            let expected = (i % 2 == 1).then_some(i);
            assert_eq!(tree.get((t << 40) | (i * 7)), expected);
        }
    }
}

#[path = "../../tests/it/lincheck/check.rs"]
mod lincheck;

/// Whether `grow` publishes the grown node before copying into it: the
/// bug planted for [`the_planted_publish_before_copy_is_caught`], in the
/// trees of its configuration [`PlantedPublishBeforeCopy`] only. (A
/// process-wide switch planted it in every path-compressed tree of the
/// tests running beside it, and one of them failed now and then.)
pub(super) fn publishes_before_copy<C: Config>() -> bool {
    core::any::TypeId::of::<C>() == core::any::TypeId::of::<PlantedPublishBeforeCopy>()
}

/// The tree under the checker: the recorded keys sit in one last-level
/// node with the churned ones.
impl<C: Config<Key = u64, Layout = Embedded<u64>>> lincheck::TestMap for ConcurrentTree<C> {
    fn get(&self, key: u64) -> Option<u64> {
        ConcurrentTree::get(self, key)
    }
    fn insert(&self, key: u64, value: u64) -> Option<u64> {
        ConcurrentTree::<C>::insert(self, key, value)
    }
    fn remove(&self, key: u64) -> Option<u64> {
        ConcurrentTree::<C>::remove(self, key)
    }
}

/// Records `rounds` histories of three threads on keys 0..3 while a fourth
/// thread inserts and removes keys 3..200 beside them, so that their node
/// grows through every kind and shrinks back, and returns the first
/// round that is rejected: its history has no linearization, or one of
/// its threads panicked (a debug assertion of the engine's caught the
/// bug first; the panic's message is printed).
///
/// With `far`, a key at bit 40 first lifts the tree under a chain, so that
/// the recorded lookups go through the shortcut (`shortcut.rs`), and the
/// churning thread also fills and empties the chunks at bit 8 of the
/// chain's bottom node, which moves the shortcut from node to node.
fn first_rejected<C: Config<Key = u64, Layout = Embedded<u64>>>(
    rounds: u64,
    far: bool,
) -> Option<u64> {
    /// Stops the churning thread however the recording ends, so that a
    /// panicking recorder fails the round instead of waiting forever.
    struct StopOnDrop<'a>(&'a AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }

    for seed in 0..rounds {
        let tree = ConcurrentTree::<C>::new();
        if far {
            // A root at bit 0 first, which the far key lifts.
            tree.insert(200, 200);
            tree.insert(1 << 40, 0);
            assert_eq!(shortcut_of(&tree), Some(0));
        }
        let stop = AtomicBool::new(false);
        let recorded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            std::thread::scope(|s| {
                s.spawn(|| {
                    let wide = if far { 1..40 } else { 0..0 };
                    while !stop.load(Ordering::Relaxed) {
                        for k in (3..200).chain(wide.clone().map(|c| c << 8)) {
                            tree.insert(k, k);
                        }
                        for k in (3..200).chain(wide.clone().map(|c| c << 8)) {
                            tree.remove(k);
                        }
                    }
                });
                let _stop = StopOnDrop(&stop);
                lincheck::record(&tree, 3, 40, seed)
            })
        }));
        match recorded {
            Ok(history) if lincheck::check(&history).is_ok() => {}
            _ => return Some(seed),
        }
    }
    None
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of threads' histories; Miri runs the model tests"
)]
fn histories_are_linearizable() {
    // Each round starts four threads of an unoptimised build beside a
    // churning one: about 0.2 s. 150 rounds at full depth, 40 in the
    // test command.
    let rounds = test_depth::pick(150, 40, 0);
    assert_eq!(first_rejected::<U64None>(rounds, false), None);
    assert_eq!(first_rejected::<U64Full>(rounds, false), None);
    // Through the shortcut, while it moves.
    assert_eq!(first_rejected::<U64None>(rounds / 2, true), None);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of threads' histories; Miri runs the model tests"
)]
fn the_planted_publish_before_copy_is_caught() {
    let caught = first_rejected::<PlantedPublishBeforeCopy>(test_depth::pick(2000, 1000, 0), false);
    let round = caught.expect("a grown node published before its copy was never caught");
    println!("publishing a grown node before its copy was rejected in round {round}");
}

/// Every write whose space refuses an allocation part way: for each
/// budget, an insert fails or succeeds whole. A refused insert leaves the
/// tree equal to the model, its memory count unchanged, and nothing it
/// built allocated; the drop frees every allocation.
fn refused_writes_change_nothing<C: Config<Key = u64>, V>(value: impl Fn(u64) -> V)
where
    C::Layout: for<'a> ConcurrentLayout<Value = V, Input<'a> = V, Old = Option<V>>,
    V: Clone + PartialEq + std::fmt::Debug,
{
    use super::space::budget::BudgetSpace;
    use std::sync::atomic::Ordering::Relaxed;
    // Keys that need every kind of build: a first key, a path split
    // high up, a taller root, a lazy leaf's split at the last level, and
    // growth through every node kind.
    let mut keys = vec![5u64, 1 << 40, 6, 7, 1 << 50, (1 << 40) | 1, 300, 70_000];
    keys.extend((0..if cfg!(miri) { 12 } else { 300 }).map(|i| (i * 7) << 8));
    let space = BudgetSpace::default();
    let tree = ConcurrentTree::<C, BudgetSpace>::in_space(space.clone());
    let mut model = BTreeMap::new();
    let mut refusals = 0;
    for (i, &key) in keys.iter().enumerate() {
        for budget in 0.. {
            tree.space.left.store(budget, Relaxed);
            let (live, bytes) = (tree.space.live.load(Relaxed), tree.memory_usage());
            match tree.upsert(key, |_| value(i as u64)) {
                Ok(old) => {
                    assert_eq!(old, model.insert(key, value(i as u64)), "key {key:#x}");
                    break;
                }
                Err(_) => {
                    refusals += 1;
                    assert_eq!(
                        tree.space.live.load(Relaxed),
                        live,
                        "a refused write leaked"
                    );
                    assert_eq!(tree.memory_usage(), bytes, "a refused write counted");
                    assert!(budget < 64, "key {key:#x} never fits");
                }
            }
        }
        if i % 16 == 0 && !cfg!(miri) {
            assert!(tree.iter().eq(model.iter().map(|(&k, v)| (k, v.clone()))));
        }
    }
    assert!(tree.iter().eq(model.iter().map(|(&k, v)| (k, v.clone()))));
    assert!(refusals > keys.len(), "budgets that refused: {refusals}");
    // Removals never need memory they cannot do without.
    tree.space.left.store(0, Relaxed);
    for &key in keys.iter().step_by(3) {
        assert_eq!(tree.remove_in(key).unwrap(), model.remove(&key));
    }
    assert!(tree.iter().eq(model.iter().map(|(&k, v)| (k, v.clone()))));
    assert!(space.live.load(Relaxed) > 0);
    drop(tree);
    assert_eq!(space.live.load(Relaxed), 0, "the drop left allocations");
}

#[test]
fn refused_writes_change_nothing_uncompressed() {
    refused_writes_change_nothing::<U64None, _>(|i| i);
}

#[test]
fn refused_writes_change_nothing_compressed() {
    refused_writes_change_nothing::<U64Full, _>(|i| i);
    refused_writes_change_nothing::<U64Lazy, _>(|i| i);
    refused_writes_change_nothing::<U64Path, _>(|i| i);
}

#[test]
fn refused_writes_change_nothing_with_leaf_values() {
    refused_writes_change_nothing::<U64LeafNone, _>(|i| i.to_string());
    refused_writes_change_nothing::<U64LeafFull, _>(|i| i.to_string());
}

/// The bytes of the varlen value stored for `key` in round `round`: 0 to
/// 19 bytes, so that some travel in the slot word and some in leaves, and
/// a replacement moves a value between the two.
fn var_bytes(key: u64, round: u64) -> Vec<u8> {
    let len = ((key ^ round.wrapping_mul(7)) % 20) as usize;
    (0..len)
        .map(|i| (key as u8).wrapping_add(i as u8 + round as u8))
        .collect()
}

/// The tree's entries as owned bytes, through the lending walk.
fn var_contents<C: Config<Key = u64, Layout = Varlen<VarBytes>>, S: super::Space>(
    tree: &ConcurrentTree<C, S>,
) -> Vec<(u64, Vec<u8>)> {
    let mut out = Vec::new();
    tree.for_each_in(.., |key, value| out.push((key, value.as_bytes().to_vec())));
    out
}

/// Varlen values in a concurrent tree against a model: stored in the word
/// or a leaf by their size, replaced across forms, removed, walked, and
/// every leaf freed, with allocations refused part way through writes.
fn varlen_matches_a_model<C: Config<Key = u64, Layout = Varlen<VarBytes>>>() {
    use super::space::budget::BudgetSpace;
    use std::sync::atomic::Ordering::Relaxed;
    let space = BudgetSpace::default();
    let tree = ConcurrentTree::<C, BudgetSpace>::in_space(space.clone());
    let mut model = BTreeMap::new();
    let all = keys(if cfg!(miri) { 8 } else { 2000 });
    for round in 0..2u64 {
        for (i, &key) in all.iter().enumerate() {
            let bytes = var_bytes(key, round);
            let value = VarBytes::new(&bytes).unwrap();
            // Every few writes, start from a budget that refuses.
            let mut budget = if i % 5 == 0 { 0 } else { usize::MAX / 2 };
            loop {
                space.left.store(budget, Relaxed);
                let live = space.live.load(Relaxed);
                match tree.upsert(key, |_| &*value) {
                    Ok(old) => {
                        assert_eq!(old, model.insert(key, bytes.clone()).is_some());
                        break;
                    }
                    Err(_) => {
                        assert_eq!(space.live.load(Relaxed), live, "a refused write leaked");
                        budget += 1;
                    }
                }
            }
        }
        space.left.store(usize::MAX / 2, Relaxed);
        assert!(var_contents(&tree).into_iter().eq(model.clone()));
        for &key in all.iter().step_by(3) {
            assert_eq!(
                tree.get_with(key, |v| v.as_bytes().to_vec()),
                model.get(&key).cloned()
            );
            assert_eq!(tree.remove_in(key).unwrap(), model.remove(&key).is_some());
        }
        assert!(var_contents(&tree).into_iter().eq(model.clone()));
    }
    let mut seen = Vec::new();
    tree.get_each_with(
        &all[..4],
        |&k| k,
        |&k, v| {
            seen.push((k, v.map(|v| v.as_bytes().to_vec())));
        },
    );
    let expected: Vec<_> = all[..4]
        .iter()
        .map(|k| (*k, model.get(k).cloned()))
        .collect();
    assert_eq!(seen, expected);
    assert_eq!(tree.len(), model.len());
    drop(tree);
    assert_eq!(space.live.load(Relaxed), 0, "the drop left allocations");
}

#[test]
fn varlen_values_match_a_model_uncompressed() {
    varlen_matches_a_model::<U64VarNone>();
}

#[test]
fn varlen_values_match_a_model_path_compressed() {
    varlen_matches_a_model::<U64VarPath>();
}

#[test]
fn threads_replace_varlen_values_under_readers() {
    // Each value's bytes are its key's, repeated to a length that each
    // replacement changes: a reader that saw a torn or freed value would
    // see other bytes.
    let tree = ConcurrentTree::<U64VarNone>::new();
    let per = if cfg!(miri) { 6 } else { 2000 };
    let value = |key: u64, round: u64| {
        VarBytes::new(&vec![key as u8; ((key + round) % 24) as usize]).unwrap()
    };
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let tree = &tree;
            s.spawn(move || {
                for round in 0..3 {
                    for i in 0..per {
                        let key = t << 32 | i;
                        tree.insert(key, &value(key, round));
                    }
                }
            });
        }
        s.spawn(|| {
            for _ in 0..3 {
                for i in 0..per {
                    let key = 1 << 32 | i;
                    tree.get_with(key, |v| {
                        assert!(v.as_bytes().iter().all(|&b| b == key as u8))
                    });
                }
            }
        });
    });
    assert_eq!(tree.len(), 2 * per as usize);
    tree.for_each_in(.., |key, v| {
        assert_eq!(v.as_bytes(), value(key, 2).as_bytes());
    });
}

/// `get_each_pipelined` answers every probe as a lookup does, for batches
/// shorter and longer than its ring.
fn check_pipeline<C: Config>(
    tree: &ConcurrentTree<C>,
    probes: &[C::Key],
    show: impl Fn(&super::ValueOf<C>) -> String,
) where
    C::Layout: ConcurrentLayout,
{
    for len in [0, 1, 15, 16, 17, 33, probes.len()] {
        let batch = &probes[..len.min(probes.len())];
        let mut seen = Vec::new();
        let pin = tree.reclaimer.pin();
        tree.get_each_pipelined(&pin, batch, |&k| k, |&k, v| seen.push((k, v.map(&show))));
        let expected: Vec<_> = batch
            .iter()
            .map(|&k| (k, tree.get_with(k, &show)))
            .collect();
        assert!(seen == expected, "a batch of {len} answered otherwise");
    }
}

#[test]
fn pipelined_batches_answer_as_lookups_do() {
    let n = if cfg!(miri) { 20 } else { 3000 };
    // Probes: present and absent keys, mixed, with repeats.
    let probes: Vec<u64> = keys(n / 3)
        .into_iter()
        .flat_map(|k| [k, k.wrapping_add(1) ^ 0x55, k])
        .collect();
    let embedded = ConcurrentTree::<U64None>::new();
    let lazy = ConcurrentTree::<U64Lazy>::new();
    let varlen = ConcurrentTree::<U64VarNone>::new();
    let leaves = ConcurrentTree::<U32LeafNone>::new();
    let narrow = ConcurrentTree::<U16None>::new();
    for (i, key) in keys(n / 3).into_iter().enumerate() {
        if i % 4 == 3 {
            continue;
        }
        embedded.insert(key, key);
        lazy.insert(key, key);
        let bytes = var_bytes(key, 0);
        varlen.insert(key, &VarBytes::new(&bytes).unwrap());
        leaves.insert(key as u32, key.to_string());
        narrow.insert(key as u16, key as u32);
    }
    check_pipeline(&embedded, &probes, u64::to_string);
    check_pipeline(&lazy, &probes, u64::to_string);
    check_pipeline(&varlen, &probes, |v| format!("{:?}", v.as_bytes()));
    let probes32: Vec<u32> = probes.iter().map(|&k| k as u32).collect();
    check_pipeline(&leaves, &probes32, String::clone);
    let probes16: Vec<u16> = probes.iter().map(|&k| k as u16).collect();
    check_pipeline(&narrow, &probes16, u32::to_string);
}

/// Where the shortcut points, checked against the tree: `None` when it is
/// clear, else the shift of the child in its slot, once the slot is found
/// to be the chunk-0 slot of the node one chunk above that shift on the
/// all-zero path from the root.
fn shortcut_of<C: Config>(tree: &ConcurrentTree<C>) -> Option<u32>
where
    C::Layout: ConcurrentLayout,
{
    let cut = tree.space.anchor().shortcut().load(Ordering::Relaxed);
    if cut.is_null() {
        return None;
    }
    let shift = (cut.addr() & 7) as u32 * 8;
    let pin = tree.reclaimer.pin();
    let mut word = pin.load(tree.root());
    loop {
        let kind = super::node::Kind::of(word).expect("the zero path reaches the shortcut");
        // SAFETY: a node of this tree, loaded under the pin.
        let node = unsafe { tree.node_at(word, kind) };
        let at = node.header().shift();
        assert!(at > shift, "the shortcut lies on the zero path");
        let slot = node
            .slot(0)
            .expect("the zero path is whole down to the shortcut");
        if at == shift + 8 {
            let addr = core::ptr::from_ref(slot).cast_mut().cast();
            assert_eq!(tree.space.word(addr), cut.map_addr(|a| a & !7));
            return Some(shift);
        }
        word = pin.load(slot);
    }
}

/// The shortcut's life in one tree: set by a root lifted over a chain,
/// moved as the chain's bottom node grows through every kind and shrinks
/// back, cleared before the small keys' subtree leaves, and set again by
/// the next chain. Every lookup answers as before throughout.
fn check_shortcut_life<C: Config<Key = u64, Layout = Embedded<u64>>>() {
    let tree = ConcurrentTree::<C>::new();
    let small = if cfg!(miri) { 40 } else { 2000 };
    // The old root's shift: 0 for keys below 256, else 8.
    let old = if small > 256 { 8 } else { 0 };
    let check = |present: &[u64]| {
        for &k in present {
            assert_eq!(tree.get(k), Some(k), "get {k}");
            assert!(tree.contains_key(k));
        }
        assert_eq!(tree.get(small), None);
    };
    for k in 0..small {
        tree.insert(k, k);
    }
    assert_eq!(shortcut_of(&tree), None, "a root grown a level at a time");
    tree.insert(1 << 40, 1 << 40);
    assert_eq!(shortcut_of(&tree), Some(old), "the old root's shift");
    let small_keys: Vec<u64> = (0..small).collect();
    check(&small_keys);
    // Give the chain's bottom node, one chunk above the old root,
    // children up to a node of 256 (of 32 under Miri), then take them
    // away.
    let step = if cfg!(miri) { 9 } else { 1 };
    let wide: Vec<u64> = (1..=255).step_by(step).map(|c| c << (old + 8)).collect();
    for &k in &wide {
        tree.insert(k, k);
        assert_eq!(shortcut_of(&tree), Some(old), "after insert {k}");
    }
    check(&small_keys);
    check(&wide);
    for &k in &wide {
        assert_eq!(tree.remove(k), Some(k));
        assert_eq!(shortcut_of(&tree), Some(old), "after remove {k}");
    }
    check(&small_keys);
    for k in 0..small {
        assert_eq!(tree.remove(k), Some(k));
        assert_eq!(tree.get(k), None);
    }
    assert_eq!(shortcut_of(&tree), None, "the old root left");
    assert_eq!(tree.get(1 << 40), Some(1 << 40));
    tree.insert(5, 5);
    check(&[5, 1 << 40]);
    tree.insert(1 << 56, 1 << 56);
    assert_eq!(shortcut_of(&tree), Some(40), "a root lifted again");
    check(&[5, 1 << 40, 1 << 56]);
    assert_eq!(tree.iter().count(), 3);
}

#[test]
fn the_shortcut_moves_with_its_node_and_goes_with_its_child() {
    check_shortcut_life::<U64None>();
    check_shortcut_life::<U64Lazy>();
}

#[test]
fn compressed_and_wide_trees_keep_no_shortcut() {
    let full = ConcurrentTree::<U64Full>::new();
    full.insert(1, 1);
    full.insert(1 << 40, 2);
    assert_eq!(shortcut_of(&full), None);
    let wide = ConcurrentTree::<U128LeafFull>::new();
    wide.insert(1, "1".into());
    wide.insert(1 << 100, "2".into());
    assert_eq!(shortcut_of(&wide), None);
    let leaves = ConcurrentTree::<U32LeafNone>::new();
    for k in 0..10 {
        leaves.insert(k, k.to_string());
    }
    leaves.insert(1 << 30, "far".into());
    assert_eq!(shortcut_of(&leaves), Some(0));
    assert_eq!(leaves.get_cloned(9), Some("9".into()));
    assert_eq!(leaves.get_cloned(10), None);
}

/// Readers look up the small keys while one writer moves the shortcut
/// (filling and emptying the chain's bottom node) and another churns keys
/// beside the far one; then a writer removes the small keys under the
/// readers, who must never see one come back.
#[test]
fn readers_through_the_shortcut_while_writers_move_and_clear_it() {
    let tree = ConcurrentTree::<U64None>::new();
    let small = if cfg!(miri) { 24 } else { 3000 };
    let rounds = if cfg!(miri) { 2 } else { 50 };
    for k in 0..small {
        tree.insert(k, k);
    }
    tree.insert(1 << 40, 0);
    assert!(shortcut_of(&tree).is_some());
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            // The chain's bottom node, one chunk above the old root.
            let at = if small > 256 { 16 } else { 8 };
            let wide = (1..=255u64).step_by(if cfg!(miri) { 50 } else { 1 });
            for _ in 0..rounds {
                for c in wide.clone() {
                    tree.insert(c << at, c);
                }
                for c in wide.clone() {
                    assert_eq!(tree.remove(c << at), Some(c));
                }
            }
            stop.store(true, Ordering::Relaxed);
        });
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                for i in 0..64 {
                    tree.insert((1 << 40) | (i + 1), i);
                }
                for i in 0..64 {
                    tree.remove((1 << 40) | (i + 1));
                }
            }
        });
        s.spawn(|| {
            loop {
                let done = stop.load(Ordering::Relaxed);
                for k in 0..small {
                    assert_eq!(tree.get(k), Some(k), "get {k}");
                }
                if done {
                    break;
                }
            }
        });
    });
    let removed = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            for k in (0..small).rev() {
                assert_eq!(tree.remove(k), Some(k));
            }
            removed.store(true, Ordering::Relaxed);
        });
        s.spawn(|| {
            let mut gone = vec![false; small as usize];
            loop {
                let done = removed.load(Ordering::Relaxed);
                for k in 0..small {
                    match tree.get(k) {
                        Some(v) => {
                            assert_eq!(v, k);
                            assert!(!gone[k as usize], "{k} came back");
                        }
                        None => gone[k as usize] = true,
                    }
                }
                if done {
                    break;
                }
            }
            assert!(gone.iter().all(|&g| g));
        });
    });
    assert_eq!(shortcut_of(&tree), None);
    assert_eq!(tree.iter().count(), 1);
}
