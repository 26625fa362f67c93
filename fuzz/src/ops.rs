//! The operations the tree targets decode from fuzz input.

use arbitrary::Arbitrary;

use crate::keys::{Bases, BoundSpec, KeySpec};

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
        /// Seed of the values (mixed with `i`).
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
}
