//! A port of PostgreSQL's `test_radixtree` suite (src/test/modules/
//! test_radixtree), extended to every key width and value layout, plus one
//! test per applicable bug from PostgreSQL's history (REFERENCE.md, "Bugs
//! they hit") and checks of the shrink thresholds, the height rule and the
//! ordered-access API.
//!
//! Every case is a generic function over the configuration; the `suite!`
//! invocation at the bottom instantiates them for each key width (u16, u32,
//! u64, u128) and value layout (Auto, Embedded, Leaf, Inline and Varlen),
//! each with the default size classes and, where the case is about classes,
//! with two non-default class lists.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use crate::common::*;
use radix_core::mem::LocalMemory;
use radix_core::value::{Auto, Embedded, Inline, Leaf, VarBytes, Varlen};
use radix_core::{Config, Key, Kind, RawTree, SizeClasses};
use test_depth::pick;

const CUSTOM: SizeClasses = SizeClasses::new(CUSTOM_CAPS);
const TWO: SizeClasses = SizeClasses::new(TWO_CAPS);

/// PostgreSQL's key counts, one per default size class.
const PG_COUNTS: [usize; 5] = [2, 15, 30, 60, 256];

/// The shifts PostgreSQL tests (0, 8 and the top chunk), for this width.
fn shifts<K: Key>() -> Vec<u32> {
    let mut v = vec![0, 8, K::BITS - 8];
    v.dedup();
    v
}

/// PostgreSQL's counts plus every class boundary of `C` (capacity - 1,
/// capacity, capacity + 1).
fn counts<C: Config>() -> Vec<usize> {
    if cfg!(miri) {
        return vec![2, 15];
    }
    let mut set: BTreeSet<usize> = PG_COUNTS.into_iter().collect();
    for &cap in C::SIZE_CLASSES.capacities() {
        let cap = cap as usize;
        for n in [cap - 1, cap, cap + 1] {
            if (2..=256).contains(&n) {
                set.insert(n);
            }
        }
    }
    set.into_iter().collect()
}

/// Expected `(inner, last_level)` nodes per class when `n >= 2` keys
/// `i << shift` are stored: one node of the smallest class holding `n` at
/// the level of `shift`, and below it a chain of single-child node4s (class
/// 0) per key.
fn expected_shape<C: Config>(n: usize, shift: u32) -> Vec<(usize, usize)> {
    let mut shape = vec![(0, 0); C::SIZE_CLASSES.len()];
    let class = class_for::<C>(n);
    if shift == 0 {
        shape[class].1 += 1;
    } else {
        shape[class].0 += 1;
        shape[0].1 += n;
        shape[0].0 += n * (shift as usize / 8 - 1);
    }
    shape
}

#[track_caller]
fn verify<C: Config>(t: &RawTree<C>, phase: &str) {
    if let Err(e) = t.verify() {
        panic!("verify failed after {phase}: {e}");
    }
}

/// Asserts that `stats()` counts one leaf per stored value whose layout
/// puts it in a leaf.
#[track_caller]
fn assert_leaves<C: Config<Layout: TestLayout>>(t: &RawTree<C>, tags: impl Iterator<Item = u64>) {
    let expected = tags
        .filter(|&tg| <C::Layout as TestLayout>::is_leaf(tg))
        .count();
    assert_eq!(t.stats().leaves, expected, "stats().leaves");
}

// ---------------------------------------------------------------------
// PostgreSQL's test_basic: every size class, shifts 0, 8 and the top.
// ---------------------------------------------------------------------

/// One run of PostgreSQL's `test_basic`: `n` keys `i << shift`.
fn basic<C: Config<Layout: TestLayout, Memory = LocalMemory>>(n: usize, shift: u32, asc: bool) {
    let ctx = format!("n={n} shift={shift} asc={asc}");
    let mut keys: Vec<u128> = (0..n as u128).map(|i| i << shift).collect();
    if !asc {
        keys.reverse();
    }
    let k = |w: u128| key::<C::Key>(w);
    let mut t = RawTree::<C>::new();
    assert_eq!(t.memory_usage(), 0, "{ctx}: new tree holds memory");

    // Insert: every key is new.
    for &w in &keys {
        assert_old(put(&mut t, k(w), tag(w, 0)), None, &ctx);
    }
    verify(&t, &format!("{ctx}: insert"));
    assert_eq!(t.len(), n);
    assert_eq!(t.height(), shift as usize / 8 + 1, "{ctx}: height");
    assert_eq!(
        shape(&t.stats()),
        expected_shape::<C>(n, shift),
        "{ctx}: nodes per class after insert"
    );
    assert_leaves(&t, keys.iter().map(|&w| tag(w, 0)));

    // Find: every key has its value.
    for &w in &keys {
        assert!(holds(&t, k(w), tag(w, 0)), "{ctx}: find {w:#x}");
        assert!(t.contains_key(k(w)));
    }

    // Update: every key is found and its old value returned.
    for &w in &keys {
        assert_old(put(&mut t, k(w), tag(w, 1)), Some(tag(w, 0)), &ctx);
    }
    verify(&t, &format!("{ctx}: update"));
    assert_eq!(t.len(), n);
    for &w in &keys {
        assert!(holds(&t, k(w), tag(w, 1)), "{ctx}: find updated {w:#x}");
    }

    // Delete and re-insert each key.
    for &w in &keys {
        assert_old(del(&mut t, k(w)), Some(tag(w, 1)), &ctx);
        assert!(t.get(k(w)).is_none(), "{ctx}: {w:#x} found after delete");
        assert_old(put(&mut t, k(w), tag(w, 2)), None, &ctx);
    }
    verify(&t, &format!("{ctx}: delete and re-insert"));
    assert_eq!(
        shape(&t.stats()),
        expected_shape::<C>(n, shift),
        "{ctx}: nodes per class after delete and re-insert"
    );
    for &w in &keys {
        assert!(holds(&t, k(w), tag(w, 2)), "{ctx}: find re-inserted {w:#x}");
    }

    // Iterate in order.
    let model: BTreeMap<u128, u64> = keys.iter().map(|&w| (w, tag(w, 2))).collect();
    assert_same(&t, &model);

    // Delete all, then find none.
    for (i, &w) in keys.iter().enumerate() {
        assert_old(del(&mut t, k(w)), Some(tag(w, 2)), &ctx);
        assert_old(del(&mut t, k(w)), None, &ctx);
        if i == n / 2 {
            verify(&t, &format!("{ctx}: half deleted"));
        }
    }
    for &w in &keys {
        assert!(
            t.get(k(w)).is_none(),
            "{ctx}: {w:#x} found after delete all"
        );
    }
    verify(&t, &format!("{ctx}: delete all"));
    assert!(t.is_empty());
    assert_eq!(t.height(), 0);
    assert!(t.iter().next().is_none());
    assert_eq!(t.memory_usage(), 0, "{ctx}: memory after delete all");
}

fn size_classes<C: Config<Layout: TestLayout, Memory = LocalMemory>>() {
    for n in counts::<C>() {
        for shift in shifts::<C::Key>() {
            basic::<C>(n, shift, true);
            basic::<C>(n, shift, false);
        }
    }
}

// ---------------------------------------------------------------------
// PostgreSQL's test_random.
// ---------------------------------------------------------------------

/// PostgreSQL's mask, `0x07FF00FF`, for 32 bits and wider. For u16 that mask
/// would leave one chunk, so u16 uses `0xF0FF`, the same shape (a sparse
/// upper chunk, a dense lower one) in 16 bits.
fn random_mask<K: Key>() -> u128 {
    if K::BITS == 16 { 0xF0FF } else { 0x07FF_00FF }
}

fn random<C: Config<Layout: TestLayout, Memory = LocalMemory>>(draws: usize, seed: u64) {
    let k = |w: u128| key::<C::Key>(w);
    let max = max_of::<C::Key>();
    let mask = random_mask::<C::Key>();
    let mut rng = SplitMix64::new(seed);
    let order: Vec<u128> = (0..draws).map(|_| rng.next_u64() as u128 & mask).collect();
    let mut t = RawTree::<C>::new();
    let mut model = BTreeMap::new();

    // Insert; a repeated key is an update returning the previous value.
    for (i, &w) in order.iter().enumerate() {
        let tg = tag(w, i as u64);
        assert_old(put(&mut t, k(w), tg), model.insert(w, tg), "insert");
    }
    verify(&t, "random inserts");
    assert_eq!(t.len(), model.len());
    assert_leaves(&t, model.values().copied());

    // Find every key, and none of the absent neighbours.
    for (&w, &tg) in &model {
        assert!(holds(&t, k(w), tg), "find {w:#x}");
        for n in [w.checked_sub(1), w.checked_add(1).filter(|&n| n <= max)]
            .into_iter()
            .flatten()
        {
            if !model.contains_key(&n) {
                assert!(t.get(k(n)).is_none(), "absent neighbour {n:#x} found");
                assert!(!t.contains_key(k(n)));
            }
        }
    }
    // Keys above the mask are all absent.
    for _ in 0..pick(1000, 200, 20) {
        let w = (rng.next_u128() & max) | (mask + 1);
        if w <= max && !model.contains_key(&w) {
            assert!(t.get(k(w)).is_none(), "key {w:#x} outside the mask found");
        }
    }

    // Ordered iteration equals the model.
    assert_same(&t, &model);

    // Ranges.
    for _ in 0..pick(16, 16, 3) {
        let (a, b) = (rng.next_u64() as u128 & mask, rng.next_u64() as u128 & mask);
        let (lo, hi) = (a.min(b), a.max(b));
        let got = |r: (Bound<C::Key>, Bound<C::Key>)| t.range(r).map(|(k, _)| wide(k)).collect();
        let want = |r: (Bound<u128>, Bound<u128>)| model.range(r).map(|(&k, _)| k).collect();
        use Bound::*;
        for (lb, hb) in [
            (Included(lo), Excluded(hi)),
            (Included(lo), Included(hi)),
            (Excluded(lo), Included(hi)),
            (Included(lo), Unbounded),
            (Unbounded, Excluded(hi)),
        ] {
            let mine: Vec<u128> = got((lb.map(k), hb.map(k)));
            let theirs: Vec<u128> = want((lb, hb));
            assert_eq!(mine, theirs, "range {lb:?}..{hb:?}");
            let mine_back: Vec<u128> = t
                .range((lb.map(k), hb.map(k)))
                .rev()
                .map(|(k, _)| wide(k))
                .collect();
            let theirs_back: Vec<u128> = model.range((lb, hb)).rev().map(|(&k, _)| k).collect();
            assert_eq!(mine_back, theirs_back, "range {lb:?}..{hb:?} backwards");
        }
        // Values in a range are the keys' values.
        let lo_k = k(lo);
        for (key, v) in t.range(lo_k..).take(50) {
            assert!(check_value::<C>(v, model[&wide(key)]));
        }
    }

    // Delete in the original insertion order: the first delete of a key
    // finds it, repeats do not.
    for (i, &w) in order.iter().enumerate() {
        assert_old(del(&mut t, k(w)), model.remove(&w), "delete");
        if i % (draws / 4).max(1) == 0 {
            verify(&t, "random deletes");
            assert_eq!(t.len(), model.len());
        }
    }
    verify(&t, "delete all");
    assert!(t.is_empty());
    assert_eq!(t.memory_usage(), 0, "memory after deleting every key");
}

// ---------------------------------------------------------------------
// Bug 1: replacing an embedded value by a leaf and back.
// ---------------------------------------------------------------------

/// The value under one key is replaced through every length from 1 to 40
/// bytes and back down (for Varlen: embedded up to 7 bytes, a leaf above),
/// then made to jump straight between embedded and leaf sizes. Neighbours
/// in the same node must keep their values; memory must follow the leaf
/// size exactly (nodes do not change, so memory minus leaf bytes is
/// constant).
fn replace_cycle<C: Config<Layout: TestLayout, Memory = LocalMemory>>() {
    let max = max_of::<C::Key>();
    let k = |w: u128| key::<C::Key>(w);
    let targets: &[u128] = if cfg!(miri) {
        &[256]
    } else {
        &[0, 1, 255, 256, 0x1234_5678, u128::MAX]
    };
    for target in targets.iter().map(|&w| w & max) {
        let mut t = RawTree::<C>::new();
        // Neighbours sharing the target's last-level node: one embedded-size,
        // one leaf-size value.
        let neighbours: Vec<(u128, u64)> = [target ^ 1, target ^ 2]
            .into_iter()
            .zip([tag_with_len(3, 11), tag_with_len(25, 12)])
            .collect();
        for &(w, tg) in &neighbours {
            assert_old(put(&mut t, k(w), tg), None, "neighbour");
        }
        // Under Miri: up to 10 bytes and back (still embedded and leaf).
        let longest = if cfg!(miri) { 10 } else { VARLEN_MAX_DATA };
        let lens: Vec<usize> = (1..=longest)
            .chain((1..longest).rev())
            .chain(
                [3, 30, 0, 8, 7, 8, 7, 40, 1, 9, 2]
                    .into_iter()
                    .cycle()
                    .take(pick(44, 44, 11)),
            )
            .collect();
        let mut current: Option<u64> = None;
        let mut node_bytes: Option<usize> = None;
        for (step, &len) in lens.iter().enumerate() {
            let tg = tag_with_len(len, mix64(step as u64 ^ target as u64));
            let ctx = format!("key {target:#x} step {step} len {len}");
            assert_old(put(&mut t, k(target), tg), current, &ctx);
            current = Some(tg);
            assert!(holds(&t, k(target), tg), "{ctx}: value");
            for &(w, ntg) in &neighbours {
                assert!(holds(&t, k(w), ntg), "{ctx}: neighbour {w:#x} disturbed");
            }
            let leaves: usize = neighbours
                .iter()
                .map(|&(_, ntg)| <C::Layout as TestLayout>::leaf_bytes(ntg))
                .sum::<usize>()
                + <C::Layout as TestLayout>::leaf_bytes(tg);
            let nodes = t
                .memory_usage()
                .checked_sub(leaves)
                .unwrap_or_else(|| panic!("{ctx}: memory below the leaves' bytes"));
            assert_eq!(*node_bytes.get_or_insert(nodes), nodes, "{ctx}: memory");
            assert_leaves(&t, neighbours.iter().map(|&(_, t)| t).chain([tg]));
            if step % 10 == 0 {
                verify(&t, &ctx);
            }
        }
        assert_old(del(&mut t, k(target)), current, "delete target");
        assert!(t.get(k(target)).is_none());
        for &(w, ntg) in &neighbours {
            assert!(holds(&t, k(w), ntg));
            assert_old(del(&mut t, k(w)), Some(ntg), "delete neighbour");
        }
        verify(&t, "replace cycle");
        assert_eq!(t.memory_usage(), 0);
    }
}

// ---------------------------------------------------------------------
// Bug 2: keys above 2^23 lost to 32-bit arithmetic; width boundaries.
// ---------------------------------------------------------------------

fn boundary_keys<C: Config<Layout: TestLayout, Memory = LocalMemory>>() {
    let max = max_of::<C::Key>();
    let k = |w: u128| key::<C::Key>(w);
    let mut candidates: BTreeSet<u128> = [
        0,
        1,
        255,
        256,
        (1 << 23) - 1,
        1 << 23,
        (1 << 23) + 1,
        (1 << 31) - 1,
        1 << 31,
        (1 << 32) - 2,
        (1 << 32) - 1,
        1 << 32,
        1 << 63,
        u64::MAX as u128 - 1,
        u64::MAX as u128,
        1 << 64,
        1 << 127,
        u128::MAX - 1,
        u128::MAX,
    ]
    .into_iter()
    .filter(|&w| w <= max)
    .collect();
    // The same boundaries for this width: max/2, max/2+1, max-1, max.
    candidates.extend([max / 2, max / 2 + 1, max - 1, max]);

    // Each key alone in an empty tree: found, its neighbours not, and
    // deleting it returns all memory.
    for &w in &candidates {
        let mut t = RawTree::<C>::new();
        assert_old(put(&mut t, k(w), tag(w, 0)), None, "lone insert");
        assert!(holds(&t, k(w), tag(w, 0)), "lone key {w:#x}");
        assert_eq!(t.height(), k(w).root_shift() as usize / 8 + 1);
        for n in [w.wrapping_sub(1), w.wrapping_add(1)] {
            if n <= max && n != w {
                assert!(t.get(k(n)).is_none(), "neighbour {n:#x} of {w:#x}");
            }
        }
        assert_eq!(t.first_key_value().map(|(k, _)| wide(k)), Some(w));
        assert_eq!(t.last_key_value().map(|(k, _)| wide(k)), Some(w));
        verify(&t, "lone key");
        assert_old(del(&mut t, k(w)), Some(tag(w, 0)), "lone delete");
        assert_eq!(t.memory_usage(), 0, "memory after deleting {w:#x}");
        assert_eq!(t.height(), 0);
    }

    // All together.
    let mut t = RawTree::<C>::new();
    let mut model = BTreeMap::new();
    for &w in candidates.iter().rev() {
        assert_old(put(&mut t, k(w), tag(w, 0)), None, "insert");
        model.insert(w, tag(w, 0));
    }
    verify(&t, "boundary keys");
    assert_same(&t, &model);
    for &w in &candidates {
        for n in [w.wrapping_sub(1), w.wrapping_add(1)] {
            if n <= max && !model.contains_key(&n) {
                assert!(t.get(k(n)).is_none(), "neighbour {n:#x}");
            }
        }
    }
    // Delete from the top: the height follows the largest remaining key.
    for &w in candidates.iter().rev() {
        assert_old(del(&mut t, k(w)), model.remove(&w), "delete");
        verify(&t, "boundary delete");
        if let Some((&largest, _)) = model.iter().next_back() {
            assert_eq!(t.height(), k(largest).root_shift() as usize / 8 + 1);
        }
        if cfg!(not(miri)) || model.len() % 8 == 0 {
            assert_same(&t, &model);
        }
    }
    assert_eq!(t.memory_usage(), 0);
}

// ---------------------------------------------------------------------
// Bug 3: delete then re-insert looped forever in node48.
// ---------------------------------------------------------------------

/// Chunk `i` of a node of `n` children, spread over 0..=255 and not in
/// order (97 is odd, so `i -> 97 i + 13 mod 256` is a bijection).
fn spread_chunk(i: usize) -> u128 {
    ((i * 97 + 13) % 256) as u128
}

/// Fills one node with `n` children at `shift`, then deletes and re-inserts
/// each child, and deletes and re-inserts a third of them at once (making
/// holes in node48's slot array), round after round. Node48 with 40
/// children does this 100 times.
fn churn<C: Config<Layout: TestLayout, Memory = LocalMemory>>() {
    let counts: &[usize] = if cfg!(miri) {
        &[4, 40]
    } else {
        &[2, 4, 5, 15, 16, 17, 30, 33, 40, 48, 60, 64, 65, 200, 256]
    };
    let k = |w: u128| key::<C::Key>(w);
    for &n in counts {
        for shift in [0, 8] {
            let rounds = match n {
                40 => pick(100, 12, 3),
                _ => pick(12, 4, 3),
            };
            let ctx = format!("n={n} shift={shift}");
            let keys: Vec<u128> = (0..n).map(|i| spread_chunk(i) << shift).collect();
            let mut tags: Vec<u64> = keys.iter().map(|&w| tag(w, 0)).collect();
            let mut t = RawTree::<C>::new();
            for (&w, &tg) in keys.iter().zip(&tags) {
                assert_old(put(&mut t, k(w), tg), None, &ctx);
            }
            verify(&t, &ctx);
            let snapshot = shape(&t.stats());
            for round in 0..rounds {
                let ctx = format!("{ctx} round {round}");
                // One at a time, in a changing order.
                for j in 0..n {
                    let i = if round % 2 == 0 { j } else { n - 1 - j };
                    let w = keys[i];
                    assert_old(del(&mut t, k(w)), Some(tags[i]), &ctx);
                    assert!(!t.contains_key(k(w)), "{ctx}: {w:#x} after delete");
                    tags[i] = tag(w, (round * 2 + 1) as u64);
                    assert_old(put(&mut t, k(w), tags[i]), None, &ctx);
                    assert!(holds(&t, k(w), tags[i]), "{ctx}: {w:#x} re-inserted");
                }
                assert_eq!(t.len(), n);
                // A third at once, re-inserted in reverse.
                let subset: Vec<usize> = (0..n).filter(|i| i % 3 == round % 3).collect();
                for &i in &subset {
                    assert_old(del(&mut t, k(keys[i])), Some(tags[i]), &ctx);
                }
                for (i, &w) in keys.iter().enumerate() {
                    let present = !subset.contains(&i);
                    assert_eq!(t.contains_key(k(w)), present, "{ctx}: key {i}");
                }
                for &i in subset.iter().rev() {
                    tags[i] = tag(keys[i], (round * 2 + 2) as u64);
                    assert_old(put(&mut t, k(keys[i]), tags[i]), None, &ctx);
                }
                verify(&t, &ctx);
                assert_eq!(shape(&t.stats()), snapshot, "{ctx}: node classes drifted");
                for (i, &w) in keys.iter().enumerate() {
                    assert!(holds(&t, k(w), tags[i]), "{ctx}: {w:#x}");
                }
            }
            for (i, &w) in keys.iter().enumerate() {
                assert_old(del(&mut t, k(w)), Some(tags[i]), &ctx);
            }
            verify(&t, &ctx);
            assert_eq!(t.memory_usage(), 0, "{ctx}: memory");
        }
    }
}

// ---------------------------------------------------------------------
// Bugs 4 and 7: memory returns to the empty tree's.
// ---------------------------------------------------------------------

fn memory_to_empty<C: Config<Layout: TestLayout, Memory = LocalMemory>>() {
    let k = |w: u128| key::<C::Key>(w);
    let max = max_of::<C::Key>();
    let levels = C::Key::BITS as usize / 8;
    let empty = RawTree::<C>::new().memory_usage();
    assert_eq!(empty, 0, "an empty tree allocates nothing");

    // A single large key into an empty tree (bug 7), then deleted.
    for w in [max, max - 1, 1 << (C::Key::BITS - 8), 256] {
        let mut t = RawTree::<C>::new();
        assert_old(put(&mut t, k(w), tag(w, 0)), None, "insert");
        assert!(t.memory_usage() > empty);
        assert_eq!(t.height(), k(w).root_shift() as usize / 8 + 1);
        verify(&t, "one large key");
        assert_old(del(&mut t, k(w)), Some(tag(w, 0)), "delete");
        assert_eq!(t.memory_usage(), empty, "memory after deleting {w:#x}");
        assert_eq!(t.height(), 0);
        verify(&t, "large key deleted");
        // The tree is usable again.
        assert_old(put(&mut t, k(3), tag(3, 0)), None, "reuse");
        assert_eq!(t.height(), 1);
    }
    {
        let mut t = RawTree::<C>::new();
        assert_old(put(&mut t, k(max), 1), None, "max");
        assert_eq!(t.height(), levels);
        assert_old(put(&mut t, k(0), 2), None, "zero");
        assert_old(del(&mut t, k(max)), Some(1), "delete max");
        assert_eq!(t.height(), 1, "levels above the small key are dropped");
        verify(&t, "max deleted");
        assert_old(del(&mut t, k(0)), Some(2), "delete zero");
        assert_eq!(t.memory_usage(), empty);
    }

    // Many keys, deleted; then many keys, cleared.
    let n = pick(10_000, 2_000, 200);
    let mut rng = SplitMix64::new(0x4B1D);
    let keys: Vec<u128> = (0..n)
        .map(|i| match i % 3 {
            0 => i as u128,
            1 => rng.next_u128() & max,
            _ => rng.next_u64() as u128 & random_mask::<C::Key>(),
        })
        .collect();
    let mut t = RawTree::<C>::new();
    for round in 0..2 {
        let mut model = BTreeMap::new();
        for (i, &w) in keys.iter().enumerate() {
            let tg = tag(w, (i + round) as u64);
            assert_old(put(&mut t, k(w), tg), model.insert(w, tg), "fill");
        }
        verify(&t, "filled");
        assert!(t.memory_usage() > empty);
        if round == 0 {
            for &w in &keys {
                assert_old(del(&mut t, k(w)), model.remove(&w), "delete");
            }
        } else {
            t.clear();
        }
        verify(&t, "emptied");
        assert!(t.is_empty());
        assert_eq!(t.height(), 0);
        assert!(t.iter().next().is_none());
        assert!(t.get(k(keys[0])).is_none());
        assert_eq!(
            t.memory_usage(),
            empty,
            "memory after emptying (round {round})"
        );
    }
    // Clearing an empty tree is harmless; the tree is reusable.
    t.clear();
    assert_eq!(t.memory_usage(), empty);
    assert_old(put(&mut t, k(max), 5), None, "after clear");
    assert!(holds(&t, k(max), 5));
    verify(&t, "reused");
}

// ---------------------------------------------------------------------
// Shrink and growth thresholds.
// ---------------------------------------------------------------------

/// The shrink rule as REFERENCE.md states it, written out per class list:
/// `(largest count at which the class moves, target class)`.
fn reference_shrink(classes: SizeClasses, class: usize) -> Option<(usize, usize)> {
    if classes == SizeClasses::DEFAULT {
        // node256 -> node48 at <= 48; node48 -> node16 (16) at <= 12;
        // node16 (16 or 32) -> node4 at <= 4.
        [
            None,
            Some((4, 0)),
            Some((4, 0)),
            Some((12, 1)),
            Some((48, 3)),
        ][class]
    } else if classes == CUSTOM {
        // [3, 8, 32, 40, 256]: node256 -> node48 (40) at <= 30 (3/4 of 40),
        // node48 -> node16 (8) at <= 6, node16 -> node4 (3) at <= 3.
        [
            None,
            Some((3, 0)),
            Some((3, 0)),
            Some((6, 1)),
            Some((30, 3)),
        ][class]
    } else if classes == TWO {
        // [16, 256]: node256 -> node16 at <= 12.
        [None, Some((12, 0))][class]
    } else {
        unreachable!("no reference table for {classes:?}")
    }
}

/// The class of the single node at `shift`: at shift 0 the tree is one
/// node; at shift 8 the root is the only inner node.
fn node_class<C: Config>(t: &RawTree<C>, shift: u32) -> usize {
    let stats = t.stats();
    let level: Vec<usize> = stats
        .classes
        .iter()
        .map(|c| if shift == 0 { c.last_level } else { c.inner })
        .collect();
    assert_eq!(
        level.iter().sum::<usize>(),
        1,
        "one node at the level: {stats}"
    );
    let class = level.iter().position(|&n| n == 1).unwrap();
    let kind = C::SIZE_CLASSES.kind(class);
    if shift == 0 {
        assert_eq!(stats.nodes(), 1);
        for other in [Kind::N4, Kind::N16, Kind::N48, Kind::N256] {
            assert_eq!(stats.nodes_of_kind(other), (other == kind) as usize);
        }
    } else {
        // The root plus one single-child node of class 0 per child.
        let children = t.len();
        let kind0 = C::SIZE_CLASSES.kind(0);
        assert_eq!(stats.classes[0].last_level, children, "{stats}");
        let expected = children + (kind == kind0) as usize;
        assert_eq!(stats.nodes_of_kind(kind0), expected, "{stats}");
    }
    class
}

/// Grows one node from 1 to 256 children and deletes down again, checking
/// the class after every step against the reference rule, then runs a
/// random walk of inserts and deletes against the same rule.
fn thresholds<C: Config<Layout: TestLayout, Memory = LocalMemory>>() {
    let classes = C::SIZE_CLASSES;
    let k = |w: u128| key::<C::Key>(w);
    // Under Miri, only the single-node case (a stats walk of one node).
    let shifts: &[u32] = if cfg!(miri) { &[0] } else { &[0, 8] };
    for &shift in shifts {
        let ctx = format!("shift {shift}");
        // Chunk 255 is always present: the node never empties and, at shift
        // 8, the root keeps its level.
        let mut t = RawTree::<C>::new();
        let mut present = BTreeSet::from([255u128]);
        assert_old(put(&mut t, k(255 << shift), 0), None, &ctx);
        let mut class = node_class(&t, shift);
        assert_eq!(class, 0);
        // Simulated class after a change of count.
        let after_insert = |class: usize, count_before: usize| {
            if count_before == classes.capacity(class) {
                class + 1
            } else {
                class
            }
        };
        let after_delete = |class: usize, count_after: usize| match reference_shrink(classes, class)
        {
            Some((threshold, target)) if count_after <= threshold => target,
            _ => class,
        };

        // Growth in ascending order; record where the class changes.
        let mut grew_at = Vec::new();
        for c in 0..255u128 {
            let before = present.len();
            assert_old(put(&mut t, k(c << shift), 1), None, &ctx);
            present.insert(c);
            let expected = after_insert(class, before);
            let got = node_class(&t, shift);
            assert_eq!(got, expected, "{ctx}: class at {} children", present.len());
            if got != class {
                grew_at.push(present.len());
            }
            class = got;
        }
        assert_eq!(class, classes.len() - 1, "{ctx}: 256 children is a node256");
        verify(&t, &ctx);

        // Shrink: delete down to one child; record where the class changes.
        let mut shrank_at = Vec::new();
        for c in (0..255u128).rev() {
            assert_old(del(&mut t, k(c << shift)), Some(1), &ctx);
            present.remove(&c);
            let expected = after_delete(class, present.len());
            let got = node_class(&t, shift);
            assert_eq!(got, expected, "{ctx}: class at {} children", present.len());
            if got != class {
                shrank_at.push(present.len());
            }
            class = got;
            if c % 32 == 0 {
                verify(&t, &ctx);
            }
        }
        if classes == SizeClasses::DEFAULT {
            // REFERENCE.md: growth at 5, 17, 33, 65; node256 -> node48 at 48,
            // node48 -> node16 at 12, node16 -> node4 at 4.
            assert_eq!(grew_at, [5, 17, 33, 65], "{ctx}: growth points");
            assert_eq!(shrank_at, [48, 12, 4], "{ctx}: shrink points");
        } else if classes == CUSTOM {
            assert_eq!(grew_at, [4, 9, 33, 41], "{ctx}: growth points");
            assert_eq!(shrank_at, [30, 6, 3], "{ctx}: shrink points");
        } else if classes == TWO {
            assert_eq!(grew_at, [17], "{ctx}: growth points");
            assert_eq!(shrank_at, [12], "{ctx}: shrink points");
        }

        // A random walk of single-child changes, alternately filling and
        // draining, so every boundary is crossed both ways from both sides.
        let mut rng = SplitMix64::new(0x5EED ^ shift as u64);
        let steps = pick(4000, 800, 150);
        for step in 0..steps {
            let filling = (step / 400) % 2 == 0;
            let insert = rng.percent(if filling { 90 } else { 10 });
            let before = present.len();
            if insert {
                let c = rng.below(255) as u128;
                if present.contains(&c) {
                    continue;
                }
                assert_old(put(&mut t, k(c << shift), 2), None, &ctx);
                present.insert(c);
                class = after_insert(class, before);
            } else {
                if before == 1 {
                    continue;
                }
                // Any present chunk but the pinned 255.
                let c = *present
                    .iter()
                    .nth(rng.below(before as u64 - 1) as usize)
                    .unwrap();
                assert!(matches!(del(&mut t, k(c << shift)), Old::Present(_)));
                present.remove(&c);
                class = after_delete(class, present.len());
            }
            assert_eq!(
                node_class(&t, shift),
                class,
                "{ctx}: random walk step {step}, {} children",
                present.len()
            );
            if step % 100 == 0 {
                verify(&t, &ctx);
                assert!(
                    t.keys()
                        .map(|k| wide(k) >> shift)
                        .eq(present.iter().copied())
                );
            }
        }
    }
}

// ---------------------------------------------------------------------
// Height follows the largest key.
// ---------------------------------------------------------------------

fn height<C: Config<Layout: TestLayout, Memory = LocalMemory>>() {
    let k = |w: u128| key::<C::Key>(w);
    let levels = C::Key::BITS / 8;
    let mut t = RawTree::<C>::new();
    assert_eq!(t.height(), 0);
    put(&mut t, k(0), 0);
    assert_eq!(t.height(), 1, "key 0");
    put(&mut t, k(255), 0);
    assert_eq!(t.height(), 1, "key 255");
    put(&mut t, k(256), 0);
    assert_eq!(t.height(), 2, "key 256");
    if levels > 2 {
        put(&mut t, k(65536), 0);
        assert_eq!(t.height(), 3, "key 65536");
        put(&mut t, k(65535), 0);
        assert_eq!(t.height(), 3, "key 65535");
    }
    for level in 3..levels {
        put(&mut t, k(1 << (8 * level)), 0);
        assert_eq!(t.height(), level as usize + 1, "key 1 << {}", 8 * level);
        assert_eq!(t.stats().height, t.height());
    }
    verify(&t, "height grown");
    for level in (3..levels).rev() {
        del(&mut t, k(1 << (8 * level)));
        assert_eq!(t.height(), level as usize, "delete 1 << {}", 8 * level);
        verify(&t, "height shrinking");
    }
    if levels > 2 {
        del(&mut t, k(65536));
        assert_eq!(t.height(), 2, "65535 needs two levels");
        del(&mut t, k(65535));
        assert_eq!(t.height(), 2, "256 needs two levels");
    }
    del(&mut t, k(256));
    assert_eq!(t.height(), 1, "keys 0 and 255 need one level");
    verify(&t, "height back to one");
    del(&mut t, k(0));
    assert_eq!(t.height(), 1);
    del(&mut t, k(255));
    assert_eq!(t.height(), 0);
    assert_eq!(t.memory_usage(), 0);

    // Deleting small keys under a large one keeps the height.
    put(&mut t, k(max_of::<C::Key>()), 0);
    put(&mut t, k(1), 0);
    del(&mut t, k(1));
    assert_eq!(t.height(), levels as usize);
    verify(&t, "max alone");
}

// ---------------------------------------------------------------------
// Ordered access: first/last, keys, values, ranges with every bound.
// ---------------------------------------------------------------------

fn in_bounds(w: u128, lo: Bound<u128>, hi: Bound<u128>) -> bool {
    let above = match lo {
        Bound::Included(l) => w >= l,
        Bound::Excluded(l) => w > l,
        Bound::Unbounded => true,
    };
    let below = match hi {
        Bound::Included(h) => w <= h,
        Bound::Excluded(h) => w < h,
        Bound::Unbounded => true,
    };
    above && below
}

fn bounds(w: u128) -> [Bound<u128>; 3] {
    [Bound::Included(w), Bound::Excluded(w), Bound::Unbounded]
}

fn ordered_access<C: Config<Layout: TestLayout, Memory = LocalMemory>>() {
    let k = |w: u128| key::<C::Key>(w);
    let max = max_of::<C::Key>();

    // The empty tree.
    let mut t = RawTree::<C>::new();
    assert!(t.first_key_value().is_none());
    assert!(t.last_key_value().is_none());
    assert!(t.keys().next().is_none());
    assert!(t.values().next().is_none());
    for lo in bounds(0).into_iter().chain(bounds(max)) {
        for hi in bounds(0).into_iter().chain(bounds(max)) {
            assert!(t.range((lo.map(k), hi.map(k))).next().is_none());
        }
    }

    let mut keys: BTreeSet<u128> = [
        0,
        1,
        2,
        3,
        100,
        254,
        255,
        256,
        257,
        300,
        511,
        512,
        4095,
        65535,
        65536,
        65537,
        1 << 24,
        (1 << 32) - 1,
        1 << 32,
        1 << 40,
        (1 << 64) - 1,
        1 << 64,
        1 << 100,
    ]
    .into_iter()
    .filter(|&w| w <= max)
    .collect();
    keys.extend([max - 256, max - 1, max]);
    let mut rng = SplitMix64::new(0xB0_0D5);
    let base = rng.next_u128() & max;
    for i in 0..pick(40, 20, 6) {
        keys.insert(rng.next_u128() & max);
        keys.insert(base.saturating_add(i as u128 * 3).min(max));
    }
    let mut model = BTreeMap::new();
    for &w in &keys {
        put(&mut t, k(w), tag(w, 0));
        model.insert(w, tag(w, 0));
    }
    verify(&t, "ordered access");
    assert_same(&t, &model);
    let (first, _) = t.first_key_value().unwrap();
    assert_eq!(wide(first), 0);
    let (last, v) = t.last_key_value().unwrap();
    assert_eq!(wide(last), max);
    assert!(check_value::<C>(v, tag(max, 0)));
    assert_eq!(t.keys().len(), keys.len());
    assert_eq!(t.values().len(), keys.len());
    assert_eq!((&t).into_iter().count(), keys.len());

    // Probes: stored keys, their neighbours, 0 and MAX.
    let mut probes: BTreeSet<u128> = [0, max].into_iter().collect();
    for (i, &w) in keys.iter().enumerate() {
        if i % 2 == 0 || cfg!(not(miri)) {
            probes.insert(w);
            probes.insert(w.saturating_sub(1));
            probes.insert(w.saturating_add(1).min(max));
        }
    }
    // At most about 28 probes (8 by default, 5 under Miri), evenly
    // spread.
    let wanted = pick(28, 8, 5);
    let stride = probes.len().div_ceil(wanted);
    let probes: Vec<u128> = probes.into_iter().step_by(stride).chain([max]).collect();
    let mut checked = 0;
    for &a in &probes {
        for &b in &probes {
            for lo in bounds(a) {
                for hi in bounds(b) {
                    let want: Vec<u128> = model
                        .keys()
                        .copied()
                        .filter(|&w| in_bounds(w, lo, hi))
                        .collect();
                    let mut range = t.range((lo.map(k), hi.map(k)));
                    let got: Vec<u128> = range.by_ref().map(|(key, _)| wide(key)).collect();
                    assert_eq!(got, want, "range ({lo:?}, {hi:?})");
                    assert!(range.next().is_none(), "range is fused");
                    let want: Vec<(u128, u64)> = want.iter().map(|&w| (w, model[&w])).collect();
                    // Backwards, and one of the mixed patterns in turn.
                    let patterns = walk_patterns(a as u64 ^ (b as u64) << 1);
                    let mixed = patterns[checked % patterns.len()];
                    for pattern in [!0, mixed].into_iter().take(pick(2, 2, 1)) {
                        let what = format!("range ({lo:?}, {hi:?})");
                        assert_walk::<C, _>(t.range((lo.map(k), hi.map(k))), &want, pattern, &what);
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 0);

    // Named edge cases.
    let all: Vec<u128> = model.keys().copied().collect();
    let collect =
        |r: (Bound<C::Key>, Bound<C::Key>)| t.range(r).map(|(k, _)| wide(k)).collect::<Vec<_>>();
    use Bound::*;
    assert!(
        collect((Excluded(k(max)), Unbounded)).is_empty(),
        "(MAX, ..)"
    );
    assert!(collect((Excluded(k(max)), Included(k(max)))).is_empty());
    assert_eq!(collect((Included(k(max)), Included(k(max)))), [max]);
    assert_eq!(collect((Unbounded, Included(k(max)))), all);
    assert_eq!(collect((Unbounded, Unbounded)), all);
    assert_eq!(collect((Included(k(0)), Unbounded)), all);
    assert_eq!(collect((Excluded(k(0)), Unbounded)), all[1..]);
    assert!(collect((Unbounded, Excluded(k(0)))).is_empty());
    assert!(collect((Included(k(0)), Excluded(k(0)))).is_empty());
    assert!(collect((Excluded(k(5)), Excluded(k(5)))).is_empty());
    // Start after end: empty, no panic.
    assert!(collect((Included(k(max)), Included(k(0)))).is_empty());
    assert!(collect((Included(k(257)), Excluded(k(256)))).is_empty());
    assert!(t.range(k(300)..k(255)).next().is_none());
    // Range values are the keys' values.
    for (key, v) in t.range(k(256)..) {
        assert!(check_value::<C>(v, tag(wide(key), 0)));
    }
    // Cloned iterators continue independently.
    let mut it = t.iter();
    it.next();
    let rest: Vec<_> = it.clone().map(|(k, _)| wide(k)).collect();
    assert_eq!(rest, all[1..]);
    assert_eq!(it.len(), all.len() - 1);
}

// ---------------------------------------------------------------------
// Unusual but valid class lists: the invariants hold at every step.
// ---------------------------------------------------------------------

/// Grows one node (at shift 0 and at shift 8) from 1 to 256 children and
/// back, then walks randomly, calling `verify()` after every single insert
/// and delete and checking every key. `verify()` checks, among the rest,
/// that no node is at or below its class's shrink threshold, so a shrink
/// that lands in a class which should itself have shrunk is caught.
fn every_step_verified<C: Config<Layout: TestLayout, Memory = LocalMemory>>() {
    let k = |w: u128| key::<C::Key>(w);
    let classes = C::SIZE_CLASSES;
    let shifts: &[u32] = if cfg!(miri) { &[0] } else { &[0, 8] };
    for &shift in shifts {
        let ctx = |what: &str, count: usize| {
            format!(
                "classes {:?}, shift {shift}, {what} at {count} children",
                classes.capacities()
            )
        };
        let mut t = RawTree::<C>::new();
        let mut model = BTreeMap::new();
        // Chunk 255 stays, as in `thresholds`.
        let step = |t: &mut RawTree<C>, c: u128, insert: bool, model: &mut BTreeMap<u128, u64>| {
            let w = c << shift;
            if insert {
                assert_old(
                    put(t, k(w), tag(w, 0)),
                    model.insert(w, tag(w, 0)),
                    "insert",
                );
            } else {
                assert_old(del(t, k(w)), model.remove(&w), "delete");
            }
            if let Err(e) = t.verify() {
                panic!(
                    "{}: {e}",
                    ctx(if insert { "insert" } else { "delete" }, model.len())
                );
            }
            // Every key after every step at full depth; after every
            // fourth step by default, every sixteenth under Miri.
            if model.len().is_multiple_of(pick(1, 4, 16)) {
                for (&w, &tg) in model.iter() {
                    assert!(
                        holds(t, k(w), tg),
                        "{}: key {w:#x}",
                        ctx("lookup", model.len())
                    );
                }
            }
        };
        step(&mut t, 255, true, &mut model);
        for c in 0..255 {
            step(&mut t, c, true, &mut model);
        }
        for c in (0..255).rev() {
            step(&mut t, c, false, &mut model);
        }
        let mut rng = SplitMix64::new(0x0DD ^ shift as u64);
        for i in 0..pick(2000, 250, 100) {
            let filling = (i / 300) % 2 == 0;
            let c = rng.below(255) as u128;
            let present = model.contains_key(&(c << shift));
            let insert = rng.percent(if filling { 90 } else { 10 });
            if insert != present {
                step(&mut t, c, insert, &mut model);
            }
        }
        assert_same(&t, &model);
    }
}

/// Minimal reproduction: with classes [4, 5, 64, 256], a node48 that
/// drops to 3 children (its threshold, 3/4 of 5) moves into the node16 of
/// 5, whose own threshold is 4: it should have become a node4.
#[test]
fn shrink_target_below_its_own_threshold_4_5_64_256() {
    tree_config!(Odd, u64, Auto<u64>, SizeClasses::new(&[4, 5, 64, 256]));
    let mut t = RawTree::<Odd>::new();
    for key in 0..6 {
        t.insert(key, key);
    }
    assert_eq!(t.stats().nodes_of_kind(Kind::N48), 1, "6 children: node48");
    for key in [5, 4] {
        t.remove(key);
        t.verify().unwrap();
    }
    t.remove(3);
    assert_eq!(t.len(), 3);
    t.verify().unwrap();
    assert_eq!(t.stats().nodes_of_kind(Kind::N4), 1, "3 children: node4");
}

/// Minimal reproduction: with classes [2, 32, 33, 256], a node256 that
/// drops to 24 children (3/4 of 33) moves into the node48 of 33, whose own
/// threshold is also 24 (3/4 of 32): it should have become a node16.
#[test]
fn shrink_target_below_its_own_threshold_2_32_33_256() {
    tree_config!(Odd, u64, Auto<u64>, SizeClasses::new(&[2, 32, 33, 256]));
    let mut t = RawTree::<Odd>::new();
    for key in 0..34 {
        t.insert(key, key);
    }
    assert_eq!(
        t.stats().nodes_of_kind(Kind::N256),
        1,
        "34 children: node256"
    );
    for key in (25..34).rev() {
        t.remove(key);
        t.verify().unwrap();
    }
    t.remove(24);
    assert_eq!(t.len(), 24);
    t.verify().unwrap();
    assert_eq!(t.stats().nodes_of_kind(Kind::N16), 1, "24 children: node16");
}

macro_rules! odd_classes {
    ($($name:ident: $caps:expr;)*) => {$(
        mod $name {
            use super::*;

            const CLASSES: SizeClasses = SizeClasses::new(&$caps);
            tree_config!(U64Auto, u64, Auto<u64>, CLASSES);
            tree_config!(U32Varlen, u32, Varlen<VarBytes>, CLASSES);
            tree_config!(U16Inline, u16, Inline<[u64; 3]>, CLASSES);

            #[test]
            fn invariants_hold_at_every_step() {
                every_step_verified::<U64Auto>();
                every_step_verified::<U32Varlen>();
                every_step_verified::<U16Inline>();
            }

            #[test]
            fn postgres_basic() {
                for n in [2, 3, 5, 6, 24, 25, 34, 40, 64, 65, 256] {
                    for shift in [0, 8] {
                        basic::<U64Auto>(n, shift, true);
                        basic::<U32Varlen>(n, shift, false);
                    }
                }
            }
        }
    )*};
}

odd_classes! {
    // A single class: every node is a node256.
    classes_256: [256];
    classes_1_256: [1, 256];
    // No node4, no node48: node256 shrinks straight into the node16.
    classes_8_32_256: [8, 32, 256];
    // No node16 and no node4.
    classes_64_256: [64, 256];
    // Eight classes, the most allowed.
    classes_1_2_3_4_16_32_64_256: [1, 2, 3, 4, 16, 32, 64, 256];
    // The smallest node16 class barely above the node4: node48 shrinks into
    // it at 3 children (3/4 of 5), at or below node16's own threshold (4).
    classes_4_5_64_256: [4, 5, 64, 256];
    // node48 and node16 classes of 33 and 32: node256 shrinks into the
    // node48 at 24 (3/4 of 33), which is node48's own threshold (3/4 of 32).
    classes_2_32_33_256: [2, 32, 33, 256];
}

// ---------------------------------------------------------------------
// Instantiation.
// ---------------------------------------------------------------------

macro_rules! suite {
    ($($name:ident: $key:ty, $layout:ty;)*) => {$(
        mod $name {
            use super::*;

            tree_config!(Dflt, $key, $layout);
            tree_config!(Custom, $key, $layout, CUSTOM);
            tree_config!(Two, $key, $layout, TWO);

            #[test]
            fn size_classes_default() {
                size_classes::<Dflt>();
            }

            #[test]
            fn size_classes_custom() {
                size_classes::<Custom>();
                size_classes::<Two>();
            }

            #[test]
            fn random_keys() {
                let draws = match <$key as Key>::BITS {
                    16 => pick(20_000, 2_000, 200),
                    _ => pick(100_000, 4_000, 300),
                };
                random::<Dflt>(draws, 0x0123_4567_89AB_CDEF);
            }

            #[test]
            fn random_keys_custom_classes() {
                random::<Custom>(pick(20_000, 1_500, 200), 7);
                random::<Two>(pick(20_000, 1_500, 200), 8);
            }

            #[test]
            fn bug1_replace_embedded_and_leaf() {
                replace_cycle::<Dflt>();
            }

            #[test]
            fn bug2_boundary_keys() {
                boundary_keys::<Dflt>();
            }

            #[test]
            fn bug3_delete_reinsert_every_class() {
                churn::<Dflt>();
                churn::<Custom>();
                churn::<Two>();
            }

            #[test]
            fn bug4_7_memory_returns_to_empty() {
                memory_to_empty::<Dflt>();
                memory_to_empty::<Custom>();
            }

            #[test]
            fn shrink_and_growth_thresholds() {
                thresholds::<Dflt>();
                thresholds::<Custom>();
                thresholds::<Two>();
            }

            #[test]
            fn height_follows_largest_key() {
                height::<Dflt>();
            }

            #[test]
            fn ordered_access_and_ranges() {
                ordered_access::<Dflt>();
                ordered_access::<Two>();
            }
        }
    )*};
}

suite! {
    u16_auto: u16, Auto<u64>;
    u16_embedded: u16, Embedded<u64>;
    u16_leaf: u16, Leaf<u64>;
    u16_inline: u16, Inline<[u64; 3]>;
    u16_varlen: u16, Varlen<VarBytes>;
    u32_auto: u32, Auto<u64>;
    u32_embedded: u32, Embedded<u64>;
    u32_leaf: u32, Leaf<u64>;
    u32_inline: u32, Inline<[u64; 3]>;
    u32_varlen: u32, Varlen<VarBytes>;
    u64_auto: u64, Auto<u64>;
    u64_embedded: u64, Embedded<u64>;
    u64_leaf: u64, Leaf<u64>;
    u64_inline: u64, Inline<[u64; 3]>;
    u64_varlen: u64, Varlen<VarBytes>;
    u128_auto: u128, Auto<u64>;
    u128_embedded: u128, Embedded<u64>;
    u128_leaf: u128, Leaf<u64>;
    u128_inline: u128, Inline<[u64; 3]>;
    u128_varlen: u128, Varlen<VarBytes>;
}
