//! The operations the tree targets decode from fuzz input.

use arbitrary::Arbitrary;

use crate::keys::{Bases, BoundSpec, KeyInt, KeySpec};

/// The longest insert or remove run: enough to push one node through every
/// size class (up to 256 children) and back.
pub const MAX_RUN: u16 = 300;

/// One input of a tree target.
#[derive(Arbitrary, Clone, Debug)]
pub struct Input {
    /// Build the trees over insert-only memory (leaves in bump arenas).
    pub insert_only: bool,
    /// How the trees are emptied at the end.
    pub finish: Finish,
    /// The bases of [`KeySpec::Clustered`] keys.
    pub bases: Bases,
    /// The operations, applied in order.
    pub ops: Vec<Op>,
}

/// How the trees are emptied once the operations are done.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// Remove every key, alternating between the smallest and the largest,
    /// comparing each removed value; the trees must end with no memory.
    Drain,
    /// `clear()`.
    Clear,
    /// Drop the trees with their values in them.
    Drop,
}

/// One operation, applied to every tree and to the model.
///
/// `index` fields pick the `index % len`-th key of the model, so that
/// removes, lookups and replacements hit existing keys however few there
/// are (they do nothing on an empty model).
#[derive(Arbitrary, Clone, Debug)]
pub enum Op {
    /// Insert a key, new or not.
    Insert {
        /// The key.
        key: KeySpec,
        /// Seed of the value.
        value: u64,
    },
    /// Insert over an existing key; the old value must come back.
    Replace {
        /// Which existing key.
        index: u16,
        /// Seed of the new value.
        value: u64,
    },
    /// Overwrite an existing key's value through `get_mut` (an insert for
    /// layouts without `get_mut`).
    Modify {
        /// Which existing key.
        index: u16,
        /// Seed of the new value.
        value: u64,
    },
    /// Remove a key, present or not.
    Remove(KeySpec),
    /// Remove an existing key.
    RemoveExisting(u16),
    /// Look a key up.
    Get(KeySpec),
    /// Look up an existing key plus `delta`: the key itself, or a
    /// neighbour that may or may not exist.
    GetNear {
        /// Which existing key.
        index: u16,
        /// Added to the key, wrapping.
        delta: i8,
    },
    /// Walk a range, from both ends as `pattern` says.
    Range {
        /// Start bound.
        low: BoundSpec,
        /// End bound.
        high: BoundSpec,
        /// Which end each item is taken from.
        pattern: u64,
    },
    /// Walk a range between (neighbours of) two existing keys.
    RangeNear {
        /// Which existing key starts the range.
        from: u16,
        /// Added to the start key.
        from_delta: i8,
        /// Whether the start is excluded.
        from_excluded: bool,
        /// Which existing key ends the range.
        to: u16,
        /// Added to the end key.
        to_delta: i8,
        /// Whether the end is excluded.
        to_excluded: bool,
        /// Which end each item is taken from.
        pattern: u64,
    },
    /// Walk `iter()`, `keys()` and `values()` from both ends; compare the
    /// first and last entries; check `stats()` and `Debug`.
    Iterate {
        /// Which end each item is taken from.
        pattern: u64,
    },
    /// Remove everything.
    Clear,
    /// Insert `start + i * step` for `i < len % 301`.
    InsertRun {
        /// The first key.
        start: KeySpec,
        /// Number of keys, modulo 301.
        len: u16,
        /// The step, see [`run_step`](crate::run_step).
        step: u8,
        /// Seed of the values (mixed with `i`; the shared harness's trees
        /// with range values take an even seed as one value for the run,
        /// see [`run_seed`](crate::shared::run_seed)).
        value: u64,
    },
    /// Remove `start + i * step` for `i < len % 301`.
    RemoveRun {
        /// The first key.
        start: KeySpec,
        /// Number of keys, modulo 301.
        len: u16,
        /// The step, see [`run_step`](crate::run_step).
        step: u8,
    },
    /// Verify every tree now.
    Verify,

    // The map API below exists for every layout but `varlen` unless noted;
    // a tree without it gets the operation's effect through `insert` and
    // `remove` instead, so that it stays in step with the model.
    /// `entry(key)` and one of its combinators.
    Entry {
        /// The key.
        key: KeyPick,
        /// What to do with the entry.
        action: EntryAction,
        /// Seed of the inserted value; `mix64(value)` seeds the value
        /// written through a returned reference.
        value: u64,
    },
    /// `iter_mut()` (or `values_mut()`) walked from both ends as `pattern`
    /// says, rewriting the values [`rewrites`](crate::map::rewrites)
    /// picks.
    IterMut {
        /// Which end each item is taken from.
        pattern: u64,
        /// Which values are rewritten, and to what.
        rewrite: u64,
        /// `values_mut()` rather than `iter_mut()`.
        values_only: bool,
    },
    /// `range_mut` walked from both ends, rewriting values as
    /// [`Op::IterMut`] does.
    RangeMut {
        /// Start bound.
        low: BoundPick,
        /// End bound.
        high: BoundPick,
        /// Which end each item is taken from.
        pattern: u64,
        /// Which values are rewritten, and to what.
        rewrite: u64,
    },
    /// An owning iteration, its first `take` items taken from both ends
    /// as `pattern` says and the rest dropped with the iterator: of a
    /// clone (the tree unchanged), or, for `into_iter` with `on_self`, of
    /// the tree itself, rebuilt from the items taken (the model keeps
    /// those alone).
    IntoIter {
        /// `into_iter`, `into_keys` or `into_values`.
        kind: Owned,
        /// Which end each item is taken from.
        pattern: u64,
        /// How many items to take before dropping the iterator.
        take: u16,
        /// Consume the tree itself (`into_iter` only).
        on_self: bool,
    },
    /// `pop_first` or `pop_last` (as `pattern` says) `count % 33` times.
    Pop {
        /// How many entries, modulo 33.
        count: u8,
        /// Bit `i` set pops the `i`-th entry from the back.
        pattern: u64,
    },
    /// `retain`, keeping an entry when [`keeps`](crate::map::keeps) says
    /// so and rewriting the kept values with `rewrite`.
    Retain {
        /// Seed of the predicate and of the new values.
        seed: u64,
        /// Out of 256, about how many entries to keep.
        keep: u8,
        /// Rewrite the kept values.
        rewrite: bool,
    },
    /// `split_off(at)`, both halves checked, then `append` back (either
    /// half into the other); the tree must be what it was.
    SplitAppend {
        /// Where to split.
        at: KeyPick,
        /// Append the upper half into the lower one (else the lower into
        /// the upper, which then takes the tree's place).
        upper_into_lower: bool,
    },
    /// `append` a second tree, which must end empty.
    Append(OtherSpec),
    /// `first_at_or_after` and `last_at_or_before` (every layout).
    Seek(KeyPick),
    /// A cursor from `cursor_at(start)`, moved as `moves` says (at most
    /// [`MAX_CURSOR_MOVES`]), every result compared (every layout).
    Cursor {
        /// Where the cursor starts.
        start: KeyPick,
        /// What it does.
        moves: Vec<CursorMove>,
    },
    /// `clone()`, compared with `==` (and `Hash`), then changed at one key
    /// without changing the original; `==` and `Ord` must follow the
    /// models' (every layout, `Ord` and `Hash` but for `varlen`).
    CloneChange {
        /// The key the clone changes.
        key: KeyPick,
        /// Remove the key from the clone (else insert `value`).
        remove: bool,
        /// Seed of the inserted value.
        value: u64,
    },
    /// `union_with`, `intersect_with` or `difference_with` a second tree.
    SetOp {
        /// Which.
        kind: SetKind,
        /// The second tree.
        other: OtherSpec,
        /// What the merge function of a union or intersection keeps.
        merge: Merge,
    },
    /// `is_subset`, `is_superset` and `is_disjoint` both ways with a
    /// second tree (every layout).
    Compare(OtherSpec),
}

/// The most cursor moves one [`Op::Cursor`] makes.
pub const MAX_CURSOR_MOVES: usize = 64;

/// A key an operation names.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum KeyPick {
    /// Any key.
    Any(KeySpec),
    /// The `n % len`-th key of the model (`n` itself when it is empty).
    Existing(u16),
    /// An existing key plus `delta`, wrapping: a neighbour, present or not.
    Near {
        /// Which existing key.
        index: u16,
        /// Added to it.
        delta: i8,
    },
}

impl KeyPick {
    /// The key, given the model's keys.
    pub fn key<K: KeyInt, V>(self, bases: &Bases, model: &std::collections::BTreeMap<K, V>) -> K {
        let nth = |index: u16| {
            crate::walk::nth_key(model, index).unwrap_or_else(|| K::from_u128(index.into()))
        };
        match self {
            KeyPick::Any(spec) => spec.key(bases),
            KeyPick::Existing(index) => nth(index),
            KeyPick::Near { index, delta } => nth(index).offset(i128::from(delta)),
        }
    }
}

/// One end of a range, at any key or next to an existing one.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum BoundPick {
    /// The key is in the range.
    Included(KeyPick),
    /// The key is not in the range.
    Excluded(KeyPick),
    /// No bound on this side.
    Unbounded,
}

impl BoundPick {
    /// The bound, given the model's keys.
    pub fn bound<K: KeyInt, V>(
        self,
        bases: &Bases,
        model: &std::collections::BTreeMap<K, V>,
    ) -> std::ops::Bound<K> {
        use std::ops::Bound;
        match self {
            BoundPick::Included(k) => Bound::Included(k.key(bases, model)),
            BoundPick::Excluded(k) => Bound::Excluded(k.key(bases, model)),
            BoundPick::Unbounded => Bound::Unbounded,
        }
    }
}

/// What [`Op::Entry`] does with the entry. `value` is the operation's
/// value, `update` the one seeded by `mix64` of its seed.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryAction {
    /// `or_insert(value)`, then write `update` through the reference.
    OrInsert {
        /// Write `update` through the returned reference.
        write: bool,
    },
    /// `or_insert_with(|| value)`.
    OrInsertWith {
        /// Write `update` through the returned reference.
        write: bool,
    },
    /// `or_insert_with_key(|k| ..)`, the value seeded from the key.
    OrInsertWithKey,
    /// `or_default()`.
    OrDefault {
        /// Write `update` through the returned reference.
        write: bool,
    },
    /// `and_modify(|v| *v = update)`, then `or_insert(value)` or nothing.
    AndModify {
        /// Follow with `or_insert(value)`.
        insert: bool,
    },
    /// Match the entry: an occupied one does `occupied`, a vacant one
    /// inserts `value` or gives its key back.
    Match {
        /// What an occupied entry does.
        occupied: OccupiedAction,
        /// A vacant entry inserts (else `into_key`).
        vacant_insert: bool,
        /// Write `update` through the reference a vacant insert returns.
        write: bool,
    },
}

/// What an occupied entry does in [`EntryAction::Match`].
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OccupiedAction {
    /// `get()`.
    Get,
    /// `get_mut()`, writing `update`, then `get()`.
    GetMut,
    /// `into_mut()`, writing `update`.
    IntoMut,
    /// `insert(update)`, which returns the old value, then `get()`.
    Insert,
    /// `remove()`.
    Remove,
    /// `remove_entry()`.
    RemoveEntry,
}

/// Which owning iterator [`Op::IntoIter`] walks.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owned {
    /// `into_iter()`.
    Entries,
    /// `into_keys()`.
    Keys,
    /// `into_values()`.
    Values,
}

/// One move of [`Op::Cursor`].
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum CursorMove {
    /// `next()`.
    Next,
    /// `prev()`.
    Prev,
    /// `peek_next()`.
    PeekNext,
    /// `peek_prev()`.
    PeekPrev,
    /// `seek(key)`.
    Seek(KeyPick),
    /// `seek_get(key)`.
    SeekGet(KeyPick),
    /// Continue with a clone of the cursor.
    Fork,
}

/// A set operation of [`Op::SetOp`].
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetKind {
    /// `union_with(other, merge)`.
    Union,
    /// `intersect_with(&other, merge)`.
    Intersect,
    /// `difference_with(&other)`.
    Difference,
}

/// What a union's or intersection's merge function leaves under a key in
/// both trees.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Merge {
    /// The first tree's value.
    Ours,
    /// The second tree's value.
    Theirs,
    /// A value seeded from both (see [`merged`](crate::map::merged)).
    Mixed,
}

/// A second tree, built from the model's keys and the input: shared keys
/// make intersections and subsets, new ones unions.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub struct OtherSpec {
    /// Take every `every`-th key of the model (none when 0), at most
    /// [`MAX_OTHER_SHARED`], ...
    pub every: u8,
    /// ... starting at the `from % len`-th.
    pub from: u16,
    /// Then keys `start + i * step` for `i < len`.
    pub start: KeySpec,
    /// Number of run keys.
    pub len: u8,
    /// The step, see [`run_step`](crate::run_step).
    pub step: u8,
    /// Seed of the values (mixed with the key).
    pub value: u64,
}

/// The most model keys an [`OtherSpec`] takes.
pub const MAX_OTHER_SHARED: usize = 512;
