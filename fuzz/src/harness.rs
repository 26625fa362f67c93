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
//!
//! The map API's operations are checked against `BTreeMap`'s own (entry
//! API, `range_mut`, `retain`, `pop_*`) or against the model's ranges and
//! sets; those that restructure the tree in bulk (`retain`, split and
//! append, `append`, set operations, consuming the tree, changing a
//! clone) are followed by the full check at once, and the trees they make
//! on the side (halves, clones, second trees) are verified and compared
//! too. A tree whose layout lacks an operation gets its effect through
//! `insert` and `remove` (as [`Op::Modify`] does without `get_mut`), so
//! that it stays in step with the model. Operations that copy whole trees
//! draw on a per-input [`COPY_BUDGET`].

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::ops::Bound;

use radix_core::{Compression, Stats};

use crate::counted;
use crate::keys::{interval, near_bound, run_step, Bases, KeyInt};
use crate::map::{
    fold, keeps, merged, retained, rewrites, CursorStep, EntryOutcome, FuzzMap, OwnedItems,
    Snapshot,
};
use crate::ops::{
    CursorMove, EntryAction, Finish, Input, Merge, OccupiedAction, Op, OtherSpec, Owned, SetKind,
    MAX_CURSOR_MOVES, MAX_OTHER_SHARED, MAX_RUN,
};
use crate::values::{mix64, ModelValue};
use crate::walk::{walk, walk_exact, walk_exact_partial};

/// A boxed tree under test with key `K` and model values `M`.
pub type DynMap<K, M> = Box<dyn FuzzMap<Key = K, Model = M>>;

/// Operations between two full checks.
pub const BATCH: usize = 16;

/// Runs stop adding new keys once the model holds this many, which keeps
/// executions fast; trees this large already have every node kind at
/// several levels.
pub const MAX_KEYS: usize = 8192;

/// The entries one input may copy, per tree, with operations that clone a
/// whole tree or split it ([`Op::IntoIter`] of a clone,
/// [`Op::CloneChange`], [`Op::SplitAppend`]); beyond it they are skipped,
/// which bounds the time an input takes.
pub const COPY_BUDGET: usize = 1 << 16;

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
    /// Entries copied so far, against [`COPY_BUDGET`].
    copied: usize,
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
            copied: 0,
        }
    }

    /// Charges `entries` copied to the budget: whether there was room.
    fn charge(&mut self, entries: usize) -> bool {
        let room = self.copied + entries <= COPY_BUDGET;
        if room {
            self.copied += entries;
        }
        room
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
                    let low = near_bound(from, from_delta, from_excluded);
                    let high = near_bound(to, to_delta, to_excluded);
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
            Op::Entry { key, action, value } => {
                let key = key.key(&bases, &self.model);
                self.entry(key, action, value, at);
            }
            Op::IterMut {
                pattern,
                rewrite,
                values_only,
            } => self.iter_mut(pattern, rewrite, values_only, at),
            Op::RangeMut {
                low,
                high,
                pattern,
                rewrite,
            } => {
                let low = low.bound(&bases, &self.model);
                let high = high.bound(&bases, &self.model);
                self.range_mut(low, high, pattern, rewrite, at);
            }
            Op::IntoIter {
                kind,
                pattern,
                take,
                on_self,
            } => {
                let take = usize::from(take) % (self.model.len() + 1);
                if on_self && kind == Owned::Entries {
                    self.consume(pattern, take, at);
                } else if self.charge(self.model.len()) {
                    self.owned(kind, pattern, take, at);
                }
            }
            Op::Pop { count, pattern } => {
                for i in 0..count % 33 {
                    self.pop((pattern >> i) & 1 == 1, at);
                }
            }
            Op::Retain {
                seed,
                keep,
                rewrite,
            } => self.retain(seed, keep, rewrite, at),
            Op::SplitAppend {
                at: key,
                upper_into_lower,
            } => {
                let key = key.key(&bases, &self.model);
                if self.charge(self.model.range(key..).count()) {
                    self.split_append(key, upper_into_lower, at);
                }
            }
            Op::Append(ref spec) => {
                let other = self.other(spec);
                self.append(&other, at);
            }
            Op::Seek(key) => self.seek(key.key(&bases, &self.model), at),
            Op::Cursor { start, ref moves } => {
                let start = start.key(&bases, &self.model);
                let steps: Vec<CursorStep<K>> = moves
                    .iter()
                    .take(MAX_CURSOR_MOVES)
                    .map(|m| match *m {
                        CursorMove::Next => CursorStep::Next,
                        CursorMove::Prev => CursorStep::Prev,
                        CursorMove::PeekNext => CursorStep::PeekNext,
                        CursorMove::PeekPrev => CursorStep::PeekPrev,
                        CursorMove::Seek(k) => CursorStep::Seek(k.key(&bases, &self.model)),
                        CursorMove::SeekGet(k) => CursorStep::SeekGet(k.key(&bases, &self.model)),
                        CursorMove::Fork => CursorStep::Fork,
                    })
                    .collect();
                self.cursor(start, &steps, at);
            }
            Op::CloneChange { key, remove, value } => {
                let key = key.key(&bases, &self.model);
                if self.charge(self.model.len()) {
                    let value = (!remove).then(|| M::from_seed(value));
                    self.clone_change(key, value, at);
                }
            }
            Op::SetOp {
                kind,
                ref other,
                merge,
            } => {
                let other = self.other(other);
                self.set_op(kind, &other, merge, at);
            }
            Op::Compare(ref spec) => {
                let other = self.other(spec);
                self.compare_sets(&other, at);
            }
        }
    }

    /// The entries of a second tree: every `every`-th key of the model
    /// (at most [`MAX_OTHER_SHARED`]) and a run of keys, with values
    /// seeded from the spec and the key.
    fn other(&self, spec: &OtherSpec) -> Vec<(K, M)> {
        let mut other = BTreeMap::new();
        let value = |key: K| M::from_seed(mix64(spec.value ^ fold(key)));
        if spec.every > 0 && !self.model.is_empty() {
            let from = usize::from(spec.from) % self.model.len();
            for &key in self
                .model
                .keys()
                .skip(from)
                .step_by(usize::from(spec.every))
                .take(MAX_OTHER_SHARED)
            {
                other.insert(key, value(key));
            }
        }
        let start = spec.start.key::<K>(&self.bases).to_u128();
        let step = run_step::<K>(spec.step);
        for i in 0..spec.len {
            let key = K::from_u128(start.wrapping_add(u128::from(i).wrapping_mul(step)));
            other.insert(key, value(key));
        }
        other.into_iter().collect()
    }

    /// Brings trees without the map API in step with the model: sets each
    /// key of `changes` to its value, or removes it.
    fn catch_up(t: &mut DynMap<K, M>, changes: &[(K, Option<M>)]) {
        for (key, value) in changes {
            match value {
                Some(value) => drop(t.insert(*key, value)),
                None => drop(t.remove(*key)),
            }
        }
    }

    fn entry(&mut self, key: K, action: EntryAction, seed: u64, at: &At<'_>) {
        let expected = model_entry(&mut self.model, key, action, seed);
        let changes = [(key, self.model.get(&key).cloned())];
        for t in &mut self.trees {
            match t.entry_op(key, action, seed) {
                Some(got) => assert_eq!(got, expected, "{at:?}: {}: entry({key:?})", t.name()),
                None => Self::catch_up(t, &changes),
            }
        }
    }

    fn iter_mut(&mut self, pattern: u64, seed: u64, values_only: bool, at: &At<'_>) {
        let expected = walk_exact(self.model.iter().map(|(k, v)| (*k, v.clone())), pattern);
        let changes = rewrite_model(self.model.iter_mut(), seed);
        let values: Vec<M> = expected.iter().map(|(_, v)| v.clone()).collect();
        for t in &mut self.trees {
            let name = t.name();
            if values_only {
                match t.walk_values_mut(pattern, seed) {
                    Some(got) => same(&got, &values, &(at, name, "values_mut()", pattern)),
                    None => Self::catch_up(t, &changes),
                }
            } else {
                match t.walk_iter_mut(pattern, seed) {
                    Some(got) => same(&got, &expected, &(at, name, "iter_mut()", pattern)),
                    None => Self::catch_up(t, &changes),
                }
            }
        }
    }

    fn range_mut(&mut self, low: Bound<K>, high: Bound<K>, pattern: u64, seed: u64, at: &At<'_>) {
        let (expected, changes) = match interval(low, high) {
            Some((first, last)) => (
                walk(
                    self.model.range(first..=last).map(|(k, v)| (*k, v.clone())),
                    pattern,
                ),
                rewrite_model(self.model.range_mut(first..=last), seed),
            ),
            None => (Vec::new(), Vec::new()),
        };
        for t in &mut self.trees {
            match t.walk_range_mut(low, high, pattern, seed) {
                Some(got) => same(
                    &got,
                    &expected,
                    &(at, t.name(), "range_mut", low, high, pattern),
                ),
                None => Self::catch_up(t, &changes),
            }
        }
    }

    fn owned(&self, kind: Owned, pattern: u64, take: usize, at: &At<'_>) {
        let entries = self.model.iter().map(|(k, v)| (*k, v.clone()));
        let expected = match kind {
            Owned::Entries => OwnedItems::Entries(walk_exact_partial(entries, pattern, take)),
            Owned::Keys => OwnedItems::Keys(walk_exact_partial(
                self.model.keys().copied(),
                pattern,
                take,
            )),
            Owned::Values => OwnedItems::Values(walk_exact_partial(
                self.model.values().cloned(),
                pattern,
                take,
            )),
        };
        for t in &self.trees {
            if let Some(got) = t.walk_owned(kind, pattern, take) {
                assert_eq!(
                    got,
                    expected,
                    "{at:?}: {}: owning iteration of a clone",
                    t.name()
                );
            }
        }
        self.check_live(at);
    }

    fn consume(&mut self, pattern: u64, take: usize, at: &At<'_>) {
        let taken = walk_exact_partial(
            self.model.iter().map(|(k, v)| (*k, v.clone())),
            pattern,
            take,
        );
        let kept: BTreeMap<K, M> = taken.iter().cloned().collect();
        let changes: Vec<(K, Option<M>)> = self
            .model
            .keys()
            .filter(|k| !kept.contains_key(k))
            .map(|k| (*k, None))
            .collect();
        for t in &mut self.trees {
            match t.consume_self(pattern, take) {
                Some(got) => same(&got, &taken, &(at, t.name(), "into_iter()", pattern)),
                None => Self::catch_up(t, &changes),
            }
        }
        self.model = kept;
        self.check_all(at);
    }

    fn pop(&mut self, back: bool, at: &At<'_>) {
        let expected = if back {
            self.model.pop_last()
        } else {
            self.model.pop_first()
        };
        for t in &mut self.trees {
            match t.pop_end(back) {
                Some(got) => assert_eq!(
                    got,
                    expected,
                    "{at:?}: {}: pop_{}()",
                    t.name(),
                    if back { "last" } else { "first" }
                ),
                None => {
                    if let Some((key, _)) = &expected {
                        t.remove(*key);
                    }
                }
            }
        }
    }

    fn retain(&mut self, seed: u64, keep: u8, rewrite: bool, at: &At<'_>) {
        let seen: Vec<(K, M)> = self.model.iter().map(|(k, v)| (*k, v.clone())).collect();
        let mut changes = Vec::new();
        self.model.retain(|&k, v| {
            let kept = keeps(seed, keep, k);
            if !kept {
                changes.push((k, None));
            } else if rewrite {
                *v = retained(seed, k, v);
                changes.push((k, Some(v.clone())));
            }
            kept
        });
        for t in &mut self.trees {
            match t.retain_op(seed, keep, rewrite) {
                Some(got) => same(&got, &seen, &(at, t.name(), "retain: entries seen")),
                None => Self::catch_up(t, &changes),
            }
        }
        self.check_all(at);
    }

    fn split_append(&mut self, key: K, upper_into_lower: bool, at: &At<'_>) {
        let lower: Vec<(K, M)> = self
            .model
            .range(..key)
            .map(|(k, v)| (*k, v.clone()))
            .collect();
        let upper: Vec<(K, M)> = self
            .model
            .range(key..)
            .map(|(k, v)| (*k, v.clone()))
            .collect();
        for t in &mut self.trees {
            let name = t.name();
            if let Some(r) = t.split_append(key, upper_into_lower) {
                check_snapshot(&r.lower, &lower, &(at, name, "split_off: lower half", key));
                check_snapshot(&r.upper, &upper, &(at, name, "split_off: upper half", key));
                check_snapshot(&r.emptied, &[], &(at, name, "append: the half appended"));
            }
        }
        self.check_all(at);
    }

    fn append(&mut self, other: &[(K, M)], at: &At<'_>) {
        let changes: Vec<(K, Option<M>)> =
            other.iter().map(|(k, v)| (*k, Some(v.clone()))).collect();
        self.model.extend(other.iter().cloned());
        for t in &mut self.trees {
            let name = t.name();
            match t.append_other(other) {
                Some(emptied) => check_snapshot(&emptied, &[], &(at, name, "append: other")),
                None => Self::catch_up(t, &changes),
            }
        }
        self.check_all(at);
    }

    fn seek(&self, key: K, at: &At<'_>) {
        let entry = |e: Option<(&K, &M)>| e.map(|(k, v)| (*k, v.clone()));
        let expected = [
            entry(self.model.range(key..).next()),
            entry(self.model.range(..=key).next_back()),
        ];
        for t in &self.trees {
            assert_eq!(
                t.seek_both(key),
                expected,
                "{at:?}: {}: [first_at_or_after, last_at_or_before]({key:?})",
                t.name()
            );
        }
    }

    fn cursor(&self, start: K, steps: &[CursorStep<K>], at: &At<'_>) {
        let expected = model_cursor(&self.model, start, steps);
        for t in &self.trees {
            let got = t.cursor_walk(start, steps);
            if got != expected {
                let i = got
                    .iter()
                    .zip(&expected)
                    .position(|(g, w)| g != w)
                    .unwrap_or(got.len().min(expected.len()));
                panic!(
                    "{at:?}: {}: cursor_at({start:?}): step {i} ({:?}) gives {:?}, the model {:?}",
                    t.name(),
                    steps.get(i),
                    got.get(i),
                    expected.get(i)
                );
            }
        }
    }

    fn clone_change(&mut self, key: K, value: Option<M>, at: &At<'_>) {
        let entries: Vec<(K, M)> = self.model.iter().map(|(k, v)| (*k, v.clone())).collect();
        let mut changed = self.model.clone();
        match &value {
            Some(v) => drop(changed.insert(key, v.clone())),
            None => drop(changed.remove(&key)),
        }
        let changed_entries: Vec<(K, M)> = changed.iter().map(|(k, v)| (*k, v.clone())).collect();
        let equal_after = changed == self.model;
        let order_after = changed.cmp(&self.model);
        for t in &self.trees {
            let name = t.name();
            let r = t.clone_change(key, value.as_ref());
            assert_eq!(
                r.equal, [true; 2],
                "{at:?}: {name}: a clone is not == its original"
            );
            assert_ne!(
                r.hash_equal,
                Some(false),
                "{at:?}: {name}: a clone hashes unlike its original"
            );
            let shape = |s: &Stats| {
                let mut s = s.clone();
                s.memory_bytes = 0;
                s
            };
            assert_eq!(
                shape(&r.stats[0]),
                shape(&r.stats[1]),
                "{at:?}: {name}: stats() of a clone (left) and its original"
            );
            check_snapshot(&r.copy, &entries, &(at, name, "clone()"));
            assert_eq!(
                r.equal_after, [equal_after; 2],
                "{at:?}: {name}: == after changing the clone at {key:?}"
            );
            if let Some((ord, partial)) = r.order_after {
                assert_eq!(
                    (ord, partial),
                    (order_after, Some(order_after)),
                    "{at:?}: {name}: the changed clone's cmp and partial_cmp with its original"
                );
            }
            check_snapshot(
                &r.copy_after,
                &changed_entries,
                &(at, name, "the clone after its change", key),
            );
        }
        self.check_all(at);
    }

    fn set_op(&mut self, kind: SetKind, other: &[(K, M)], merge: Merge, at: &At<'_>) {
        let mut merges = Vec::new();
        let mut changes = Vec::new();
        match kind {
            SetKind::Union => {
                for (k, theirs) in other {
                    let new = match self.model.get(k) {
                        Some(ours) => {
                            merges.push((*k, ours.clone(), theirs.clone()));
                            merged(merge, *k, ours, theirs)
                        }
                        None => theirs.clone(),
                    };
                    self.model.insert(*k, new.clone());
                    changes.push((*k, Some(new)));
                }
            }
            SetKind::Intersect => {
                let theirs: BTreeMap<K, &M> = other.iter().map(|(k, v)| (*k, v)).collect();
                self.model.retain(|k, ours| match theirs.get(k) {
                    Some(&t) => {
                        merges.push((*k, ours.clone(), t.clone()));
                        *ours = merged(merge, *k, ours, t);
                        changes.push((*k, Some(ours.clone())));
                        true
                    }
                    None => {
                        changes.push((*k, None));
                        false
                    }
                });
            }
            SetKind::Difference => {
                for (k, _) in other {
                    if self.model.remove(k).is_some() {
                        changes.push((*k, None));
                    }
                }
            }
        }
        for t in &mut self.trees {
            let name = t.name();
            match t.set_op(kind, other, merge) {
                Some(r) => {
                    same(&r.merges, &merges, &(at, name, kind, "merge calls"));
                    if let Some(o) = &r.other {
                        check_snapshot(o, other, &(at, name, kind, "the second tree after"));
                    }
                }
                None => Self::catch_up(t, &changes),
            }
        }
        self.check_all(at);
    }

    fn compare_sets(&self, other: &[(K, M)], at: &At<'_>) {
        let ours: BTreeSet<K> = self.model.keys().copied().collect();
        let theirs: BTreeSet<K> = other.iter().map(|(k, _)| *k).collect();
        let expected = [
            ours.is_subset(&theirs),
            ours.is_superset(&theirs),
            ours.is_disjoint(&theirs),
            theirs.is_subset(&ours),
            theirs.is_superset(&ours),
            theirs.is_disjoint(&ours),
        ];
        for t in &self.trees {
            assert_eq!(
                t.compare_sets(other),
                expected,
                "{at:?}: {}: [is_subset, is_superset, is_disjoint] with a tree of {} keys, both ways",
                t.name(),
                other.len()
            );
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

/// Rewrites the model values of `entries` as
/// [`rewrite`](crate::map::rewrite) does the trees', returning the changes.
fn rewrite_model<'a, K: KeyInt, M: ModelValue>(
    entries: impl Iterator<Item = (&'a K, &'a mut M)>,
    seed: u64,
) -> Vec<(K, Option<M>)> {
    let mut changes = Vec::new();
    for (k, v) in entries {
        if let Some(new) = rewrites(seed, v.fingerprint()) {
            *v = M::from_seed(new);
            changes.push((*k, Some(v.clone())));
        }
    }
    changes
}

/// The model side of [`entry_on_tree`](crate::map::entry_on_tree):
/// `BTreeMap`'s entry API doing what the tree's does.
fn model_entry<K: KeyInt, M: ModelValue>(
    model: &mut BTreeMap<K, M>,
    key: K,
    action: EntryAction,
    seed: u64,
) -> EntryOutcome<K, M> {
    use std::collections::btree_map::Entry;
    let value = M::from_seed(seed);
    let update = M::from_seed(mix64(seed));
    let entry = model.entry(key);
    let mut out = EntryOutcome {
        occupied: matches!(entry, Entry::Occupied(_)),
        keys: vec![*entry.key()],
        values: Vec::new(),
    };
    let mut called = None;
    match action {
        EntryAction::OrInsert { write } => {
            let r = entry.or_insert(value);
            out.values.push(r.clone());
            if write {
                *r = update;
            }
        }
        EntryAction::OrInsertWith { write } => {
            let r = entry.or_insert_with(|| {
                called = Some(key);
                value
            });
            out.values.push(r.clone());
            if write {
                *r = update;
            }
        }
        EntryAction::OrInsertWithKey => {
            let r = entry.or_insert_with_key(|&k| {
                called = Some(k);
                M::from_seed(seed ^ fold(k))
            });
            out.values.push(r.clone());
        }
        EntryAction::OrDefault { write } => {
            let r = entry.or_default();
            out.values.push(r.clone());
            if write {
                *r = update;
            }
        }
        EntryAction::AndModify { insert } => {
            let mut old = None;
            let entry = entry.and_modify(|v| {
                old = Some(v.clone());
                *v = update;
            });
            out.values.extend(old);
            out.keys.push(*entry.key());
            if insert {
                out.values.push(entry.or_insert(value).clone());
            }
        }
        EntryAction::Match {
            occupied,
            vacant_insert,
            write,
        } => match entry {
            Entry::Occupied(mut o) => {
                out.keys.push(*o.key());
                match occupied {
                    OccupiedAction::Get => out.values.push(o.get().clone()),
                    OccupiedAction::GetMut => {
                        *o.get_mut() = update;
                        out.values.push(o.get().clone());
                    }
                    OccupiedAction::IntoMut => {
                        let r = o.into_mut();
                        out.values.push(r.clone());
                        *r = update;
                    }
                    OccupiedAction::Insert => {
                        out.values.push(o.insert(update));
                        out.values.push(o.get().clone());
                    }
                    OccupiedAction::Remove => out.values.push(o.remove()),
                    OccupiedAction::RemoveEntry => {
                        let (k, v) = o.remove_entry();
                        out.keys.push(k);
                        out.values.push(v);
                    }
                }
            }
            Entry::Vacant(v) => {
                out.keys.push(*v.key());
                if vacant_insert {
                    let r = v.insert(value);
                    out.values.push(r.clone());
                    if write {
                        *r = update;
                    }
                } else {
                    out.keys.push(v.into_key());
                }
            }
        },
    }
    out.keys.extend(called);
    out
}

/// The model of a cursor: a gap before `Some(key)` (every key at or above
/// it lies after the gap) or after the largest key (`None`), moved as the
/// tree's cursor is.
fn model_cursor<K: KeyInt, M: ModelValue>(
    model: &BTreeMap<K, M>,
    start: K,
    steps: &[CursorStep<K>],
) -> Vec<Option<(K, M)>> {
    let entry = |e: Option<(&K, &M)>| e.map(|(k, v)| (*k, v.clone()));
    let after = |gap: Option<K>| gap.and_then(|g| entry(model.range(g..).next()));
    let before = |gap: Option<K>| match gap {
        Some(g) => entry(model.range(..g).next_back()),
        None => entry(model.last_key_value()),
    };
    let max = K::from_u128(u128::MAX);
    let mut gap = Some(start);
    let mut out = Vec::with_capacity(steps.len());
    for step in steps {
        out.push(match *step {
            CursorStep::Next => {
                let e = after(gap);
                if let Some((k, _)) = e {
                    gap = (k != max).then(|| k.offset(1));
                }
                e
            }
            CursorStep::Prev => {
                let e = before(gap);
                if let Some((k, _)) = e {
                    gap = Some(k);
                }
                e
            }
            CursorStep::PeekNext => after(gap),
            CursorStep::PeekPrev => before(gap),
            CursorStep::Seek(k) => {
                gap = Some(k);
                None
            }
            CursorStep::SeekGet(k) => {
                gap = Some(k);
                model.get(&k).map(|v| (k, v.clone()))
            }
            CursorStep::Fork => None,
        });
    }
    out
}

/// Asserts that a [`Snapshot`] of a tree shows `want`: it verifies, its
/// length and entries are the model's, and it holds memory exactly when
/// non-empty.
///
/// # Panics
///
/// When it does not.
#[track_caller]
pub fn check_snapshot<K: KeyInt, M: ModelValue>(
    got: &Snapshot<K, M>,
    want: &[(K, M)],
    what: &dyn fmt::Debug,
) {
    if let Err(e) = &got.verify {
        panic!("{what:?}: verify failed: {e}");
    }
    assert_eq!(got.len, want.len(), "{what:?}: len()");
    same(&got.entries, want, what);
    if want.is_empty() {
        assert_eq!(got.memory, 0, "{what:?}: an empty tree holds memory");
    } else {
        assert!(got.memory > 0, "{what:?}: a non-empty tree holds no memory");
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

#[cfg(test)]
mod tests {
    use radix_core::value::VarBytes;

    use super::*;
    use crate::counted::Counted;
    use crate::values::Pair;

    radix_core::radix_tree! {
        struct Words { key: u64, value: u64, layout: embedded, compression: none }
    }
    radix_core::radix_tree! {
        struct LazyCounted { key: u32, value: Counted, layout: leaf, compression: lazy }
    }
    radix_core::radix_tree! {
        struct FullCounted { key: u32, value: Counted, layout: inline, compression: full }
    }
    radix_core::radix_tree! {
        struct PathPairs { key: u16, value: Pair, layout: inline, compression: path }
    }
    radix_core::radix_tree! {
        struct Strings { key: u64, value: VarBytes, layout: varlen, compression: full }
    }
    crate::under_test!();
    crate::impl_fuzz_map!(Words, u64, u64, sized);
    crate::impl_fuzz_map!(LazyCounted, u32, Counted, sized);
    crate::impl_fuzz_map!(FullCounted, u32, Counted, sized);
    crate::impl_fuzz_map!(PathPairs, u16, Pair, sized);
    crate::impl_fuzz_map!(Strings, u64, VarBytes, varlen);

    fn run_all(input: &Input) {
        let io = input.insert_only;
        check_trees(input, vec![Box::new(UnderTest::<Words>::create(io))]);
        check_trees(
            input,
            vec![
                Box::new(UnderTest::<LazyCounted>::create(io)),
                Box::new(UnderTest::<FullCounted>::create(io)),
            ],
        );
        check_trees(input, vec![Box::new(UnderTest::<PathPairs>::create(io))]);
        check_trees(input, vec![Box::new(UnderTest::<Strings>::create(io))]);
    }

    /// The committed tree seeds decode to what make_seeds.py meant (their
    /// whole length read, every operation kind present) and pass.
    #[test]
    fn tree_seeds_decode_and_pass() {
        let mut kinds = std::collections::BTreeSet::new();
        for (_, input) in crate::seeds::decoded::<Input>("tree_embedded") {
            kinds.extend(crate::seeds::kinds(&input.ops));
            run_all(&input);
        }
        assert_eq!(kinds.len(), 27, "operation kinds in the seeds: {kinds:?}");
    }

    /// Pseudo-random inputs through every layout: the harness itself must
    /// hold (a smoke test; the fuzz targets do the real search).
    #[test]
    fn random_inputs_run_on_every_layout() {
        for input in crate::seeds::smoke_inputs(0x1234_5678, 120, |i: &mut Input| &mut i.ops) {
            run_all(&input);
        }
    }
}
