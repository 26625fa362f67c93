//! The tree harness: applies an [`Input`]'s operations to one or more trees
//! and to a `BTreeMap` model, comparing every result.
//!
//! After every operation each tree's `len()` and `is_empty()` must match
//! the model. Every [`BATCH`] operations, after the last one and on
//! [`Op::Verify`], each tree is checked in full ([`Harness::check_all`]):
//! `verify()`, a forward iteration against the model, memory held exactly
//! when non-empty, and, for [`Counted`](crate::Counted) values, as many live
//! values as keys. At the end the trees are emptied as [`Finish`] says and
//! dropped, after which no counted value may be alive.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Bound;

use radix_core::{Compression, Stats};

use crate::counted;
use crate::keys::{interval, run_step, Bases, KeyInt};
use crate::map::FuzzMap;
use crate::ops::{Finish, Input, Op, MAX_RUN};
use crate::values::{mix64, ModelValue};
use crate::walk::{walk, walk_exact};

/// A boxed tree under test with key `K` and model values `M`.
pub type DynMap<K, M> = Box<dyn FuzzMap<Key = K, Model = M>>;

/// Operations between two full checks.
pub const BATCH: usize = 16;

/// Runs stop adding new keys once the model holds this many, which keeps
/// executions fast; trees this large already have every node kind at
/// several levels.
pub const MAX_KEYS: usize = 8192;

/// Runs `input` on `trees` (all empty) and on a model, panicking on the
/// first difference. Every tree receives every operation.
///
/// # Panics
///
/// On any difference between a tree and the model, a failed `verify()`,
/// a memory or drop-count mismatch: that is, on a bug.
pub fn check_trees<K: KeyInt, M: ModelValue>(input: &Input, trees: Vec<DynMap<K, M>>) {
    assert!(!trees.is_empty(), "no trees to check");
    let mut harness = Harness::new(trees, input.bases);
    for (index, op) in input.ops.iter().enumerate() {
        let at = At::Op { index, op };
        harness.apply(op, &at);
        harness.check_len(&at);
        if index % BATCH == BATCH - 1 {
            harness.check_all(&at);
        }
    }
    let at = At::End;
    harness.check_all(&at);
    harness.compare_walks(&at, 0);
    harness.compare_walks(&at, !0);
    harness.compare_walks(&at, 0x5555_5555_5555_5555);
    harness.check_stats(&at);
    harness.finish(input.finish);
}

/// Where a check failed, formatted only when it does.
#[derive(Clone, Copy)]
pub enum At<'a> {
    /// While or after applying an operation.
    Op {
        /// Its position in the input.
        index: usize,
        /// The operation.
        op: &'a Op,
    },
    /// After the last operation.
    End,
    /// While emptying the trees.
    Finish(Finish),
}

impl fmt::Debug for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            At::Op { index, op } => write!(f, "op {index} ({op:?})"),
            At::End => write!(f, "after the last op"),
            At::Finish(finish) => write!(f, "finishing with {finish:?}"),
        }
    }
}

/// Trees under test and their model.
pub struct Harness<K: KeyInt, M: ModelValue> {
    trees: Vec<DynMap<K, M>>,
    model: BTreeMap<K, M>,
    bases: Bases,
    /// Trees whose values are counted.
    counting: usize,
    /// Counted values alive before the trees were made.
    live_before: usize,
}

impl<K: KeyInt, M: ModelValue> Harness<K, M> {
    /// A harness for `trees`, which must be empty, with key bases `bases`.
    pub fn new(trees: Vec<DynMap<K, M>>, bases: Bases) -> Self {
        for t in &trees {
            assert!(t.is_empty(), "{}: a new tree is not empty", t.name());
        }
        Self {
            counting: trees.iter().filter(|t| t.counts_values()).count(),
            trees,
            model: BTreeMap::new(),
            bases,
            live_before: counted::live(),
        }
    }

    /// The `index % len`-th key of the model, if it has any.
    fn nth(&self, index: u16) -> Option<K> {
        crate::walk::nth_key(&self.model, index)
    }

    /// Applies one operation to the trees and the model.
    pub fn apply(&mut self, op: &Op, at: &At<'_>) {
        let bases = self.bases;
        match *op {
            Op::Insert { key, value } => self.insert(key.key(&bases), M::from_seed(value), at),
            Op::Replace { index, value } => {
                if let Some(key) = self.nth(index) {
                    self.insert(key, M::from_seed(value), at);
                }
            }
            Op::Modify { index, value } => {
                if let Some(key) = self.nth(index) {
                    self.modify(key, M::from_seed(value), at);
                }
            }
            Op::Remove(key) => self.remove(key.key(&bases), at),
            Op::RemoveExisting(index) => {
                if let Some(key) = self.nth(index) {
                    self.remove(key, at);
                }
            }
            Op::Get(key) => self.get(key.key(&bases), at),
            Op::GetNear { index, delta } => {
                if let Some(key) = self.nth(index) {
                    self.get(key.offset(i128::from(delta)), at);
                }
            }
            Op::Range { low, high, pattern } => {
                self.range(low.bound(&bases), high.bound(&bases), pattern, at)
            }
            Op::RangeNear {
                from,
                from_delta,
                from_excluded,
                to,
                to_delta,
                to_excluded,
                pattern,
            } => {
                if let (Some(from), Some(to)) = (self.nth(from), self.nth(to)) {
                    let bound = |key: K, delta: i8, excluded: bool| {
                        let key = key.offset(i128::from(delta));
                        if excluded {
                            Bound::Excluded(key)
                        } else {
                            Bound::Included(key)
                        }
                    };
                    let low = bound(from, from_delta, from_excluded);
                    let high = bound(to, to_delta, to_excluded);
                    self.range(low, high, pattern, at);
                }
            }
            Op::Iterate { pattern } => {
                self.compare_walks(at, pattern);
                self.check_stats(at);
            }
            Op::Clear => self.clear(at),
            Op::InsertRun {
                start,
                len,
                step,
                value,
            } => {
                let start = start.key::<K>(&bases).to_u128();
                let step = run_step::<K>(step);
                for i in 0..len % (MAX_RUN + 1) {
                    let key = K::from_u128(start.wrapping_add(u128::from(i).wrapping_mul(step)));
                    if self.model.len() >= MAX_KEYS && !self.model.contains_key(&key) {
                        break;
                    }
                    let seed = mix64(value ^ u64::from(i));
                    self.insert(key, M::from_seed(seed), at);
                }
            }
            Op::RemoveRun { start, len, step } => {
                let start = start.key::<K>(&bases).to_u128();
                let step = run_step::<K>(step);
                for i in 0..len % (MAX_RUN + 1) {
                    let key = K::from_u128(start.wrapping_add(u128::from(i).wrapping_mul(step)));
                    self.remove(key, at);
                }
            }
            Op::Verify => self.check_all(at),
        }
    }

    fn insert(&mut self, key: K, value: M, at: &At<'_>) {
        let expected = self.model.insert(key, value.clone());
        for t in &mut self.trees {
            let what = (at, t.name(), "insert", key);
            t.insert(key, &value).assert_is(expected.as_ref(), &what);
        }
    }

    fn modify(&mut self, key: K, value: M, at: &At<'_>) {
        let expected = self.model.insert(key, value.clone());
        for t in &mut self.trees {
            let what = (at, t.name(), "get_mut", key);
            match t.overwrite(key, &value) {
                Some(found) => assert!(found, "{what:?}: existing key not found"),
                None => t.insert(key, &value).assert_is(expected.as_ref(), &what),
            }
        }
    }

    fn remove(&mut self, key: K, at: &At<'_>) {
        let expected = self.model.remove(&key);
        for t in &mut self.trees {
            let what = (at, t.name(), "remove", key);
            t.remove(key).assert_is(expected.as_ref(), &what);
            assert!(!t.contains_key(key), "{what:?}: removed key still present");
        }
    }

    fn get(&self, key: K, at: &At<'_>) {
        let expected = self.model.get(&key);
        for t in &self.trees {
            let name = t.name();
            assert_eq!(
                t.get(key).as_ref(),
                expected,
                "{at:?}: {name}: get({key:?})"
            );
            assert_eq!(
                t.contains_key(key),
                expected.is_some(),
                "{at:?}: {name}: contains_key({key:?})"
            );
        }
    }

    fn range(&self, low: Bound<K>, high: Bound<K>, pattern: u64, at: &At<'_>) {
        let expected = match interval(low, high) {
            Some((first, last)) => walk(
                self.model.range(first..=last).map(|(k, v)| (*k, v.clone())),
                pattern,
            ),
            None => Vec::new(),
        };
        for t in &self.trees {
            let what = (at, t.name(), "range", low, high, pattern);
            same(&t.walk_range(low, high, pattern), &expected, &what);
        }
    }

    fn clear(&mut self, at: &At<'_>) {
        for t in &mut self.trees {
            t.clear();
        }
        self.model.clear();
        self.check_all(at);
    }

    /// Checks that every tree's length matches the model's.
    pub fn check_len(&self, at: &At<'_>) {
        for t in &self.trees {
            assert_eq!(t.len(), self.model.len(), "{at:?}: {}: len()", t.name());
            assert_eq!(
                t.is_empty(),
                self.model.is_empty(),
                "{at:?}: {}: is_empty()",
                t.name()
            );
        }
    }

    /// The full check: `verify()`, length, a forward iteration against the
    /// model, memory held exactly when non-empty, and the live counted
    /// values.
    pub fn check_all(&self, at: &At<'_>) {
        self.check_len(at);
        let expected: Vec<(K, M)> = self.model.iter().map(|(k, v)| (*k, v.clone())).collect();
        for t in &self.trees {
            let name = t.name();
            if let Err(e) = t.verify() {
                panic!("{at:?}: {name}: verify failed: {e}");
            }
            same(&t.walk_iter(0), &expected, &(at, name, "iter()"));
            let memory = t.memory_usage();
            if self.model.is_empty() {
                assert_eq!(memory, 0, "{at:?}: {name}: an empty tree holds memory");
            } else {
                assert!(
                    memory > 0,
                    "{at:?}: {name}: a non-empty tree holds no memory"
                );
            }
        }
        self.check_live(at);
    }

    /// Checks that every counted value in the trees, and no other, is alive.
    fn check_live(&self, at: &At<'_>) {
        let live = counted::live() - self.live_before;
        assert_eq!(
            live,
            self.counting * self.model.len(),
            "{at:?}: live counted values (trees counting: {})",
            self.counting
        );
    }

    /// Compares `iter()`, `keys()` and `values()` walked with `pattern`,
    /// and the first and last entries, with the model.
    pub fn compare_walks(&self, at: &At<'_>, pattern: u64) {
        let entries = walk_exact(self.model.iter().map(|(k, v)| (*k, v.clone())), pattern);
        let keys = walk_exact(self.model.keys().copied(), pattern);
        let values = walk_exact(self.model.values().cloned(), pattern);
        let first = self.model.first_key_value().map(|(k, v)| (*k, v.clone()));
        let last = self.model.last_key_value().map(|(k, v)| (*k, v.clone()));
        for t in &self.trees {
            let name = t.name();
            same(
                &t.walk_iter(pattern),
                &entries,
                &(at, name, "iter()", pattern),
            );
            same(&t.walk_keys(pattern), &keys, &(at, name, "keys()", pattern));
            same(
                &t.walk_values(pattern),
                &values,
                &(at, name, "values()", pattern),
            );
            assert_eq!(t.first(), first, "{at:?}: {name}: first_key_value()");
            assert_eq!(t.last(), last, "{at:?}: {name}: last_key_value()");
        }
    }

    /// Checks `stats()` (keys, memory, height, lazy leaves) and that
    /// `Debug` works.
    pub fn check_stats(&self, at: &At<'_>) {
        let largest = self.model.keys().next_back().copied();
        for t in &self.trees {
            let name = t.name();
            let stats = t.stats();
            assert_eq!(stats.keys, self.model.len(), "{at:?}: {name}: stats().keys");
            assert_eq!(
                stats.memory_bytes,
                t.memory_usage(),
                "{at:?}: {name}: stats().memory_bytes"
            );
            let compression = t.compression();
            assert_eq!(
                stats.height,
                expected_height(largest, compression),
                "{at:?}: {name}: stats().height"
            );
            check_lazy_leaves(&stats, compression, &(at, name));
            assert!(t.debug_len() >= 2, "{at:?}: {name}: Debug output");
        }
    }

    /// Empties the trees as `finish` says, checks, and drops them.
    pub fn finish(mut self, finish: Finish) {
        let at = At::Finish(finish);
        match finish {
            Finish::Drain => {
                let mut from_back = false;
                while let Some(key) = if from_back {
                    self.model.keys().next_back().copied()
                } else {
                    self.model.keys().next().copied()
                } {
                    self.remove(key, &at);
                    from_back = !from_back;
                }
                self.check_all(&at);
            }
            Finish::Clear => self.clear(&at),
            Finish::Drop => {}
        }
        let Self {
            trees, live_before, ..
        } = self;
        drop(trees);
        assert_eq!(
            counted::live(),
            live_before,
            "{at:?}: counted values alive after the trees were dropped"
        );
    }
}

/// The height `stats()` must report for a tree of `compression` whose
/// largest key is `largest`: one level per byte of the largest key, as the
/// height adapts to it (a lazy root stands for any height), except that a
/// path-compressed tree's root always sits at the key type's top byte, its
/// prefix word saying where its chunk really is.
pub fn expected_height<K: KeyInt>(largest: Option<K>, compression: Compression) -> usize {
    match largest {
        None => 0,
        Some(_) if compression.path() => (K::BITS / 8) as usize,
        Some(k) => ((k.to_u128() | 1).ilog2() / 8 + 1) as usize,
    }
}

/// Asserts what `stats()` can say about lazy leaves without the tree's
/// shape: none without lazy expansion, at most one per key with it, and a
/// single key always one (no node may hold a single key).
///
/// # Panics
///
/// When `stats` breaks one of those.
#[track_caller]
pub fn check_lazy_leaves(stats: &Stats, compression: Compression, what: &dyn fmt::Debug) {
    if compression.lazy() {
        assert!(
            stats.lazy_leaves <= stats.keys,
            "{what:?}: {} lazy leaves for {} keys",
            stats.lazy_leaves,
            stats.keys
        );
        if stats.keys == 1 {
            assert_eq!(
                stats.lazy_leaves, 1,
                "{what:?}: a single key not in a lazy leaf"
            );
        }
    } else {
        assert_eq!(
            stats.lazy_leaves, 0,
            "{what:?}: lazy leaves without lazy expansion"
        );
    }
}

/// Asserts that a tree's walk `got` equals the model's `want`, reporting
/// the lengths and the first difference rather than both sequences.
///
/// # Panics
///
/// When they differ.
#[track_caller]
pub fn same<T: PartialEq + fmt::Debug>(got: &[T], want: &[T], what: &dyn fmt::Debug) {
    if got == want {
        return;
    }
    let first = got.iter().zip(want).position(|(g, w)| g != w);
    match first {
        Some(i) => panic!(
            "{what:?}: item {i} is {:?}, the model has {:?} (tree {} items, model {})",
            got[i],
            want[i],
            got.len(),
            want.len()
        ),
        None => panic!(
            "{what:?}: tree gives {} items, model {}; first extra: {:?}",
            got.len(),
            want.len(),
            got.get(want.len()).or(want.get(got.len()))
        ),
    }
}
