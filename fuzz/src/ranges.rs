//! Trees with range values (`ranges: true`): the `tree_ranges` target's
//! operations, its model and its harness.
//!
//! A tree with ranges holds, in an inner slot, one value for every key of
//! an aligned [`Span`] (`256^level` keys). The model knows nothing of
//! spans: it is a `BTreeMap` from each key to its value
//! ([`RangeModel`]), with one concession to size: a span of level 3
//! (2^24 keys, the widest a `u32` tree has) is kept as a *block default*,
//! a value for every key of the block that keys of the map override
//! (with a value, or as removed). Everything else is key by key, and every
//! answer of the tree is checked against it:
//!
//! - `insert` and `remove` (the old value must come back), also in runs of
//!   up to [`MAX_RANGE_RUN`] ascending keys with one value, so that
//!   last-level nodes fill with one value and must merge into a range (a
//!   run that fills an empty aligned chunk of 256 must leave it under a
//!   range); an insert under a range of the same value must be absorbed
//!   (the range stays), of another value must split it (the key gets a
//!   slot of its own);
//! - `insert_span` and `insert_span_with_old` (the keys that had a value
//!   are counted, and every replaced value is shown once with keys that
//!   really had it), `get_span` (the span holds the key and every key of
//!   it has the value), `get_span_mut` (a change to a range changes every
//!   key of its span; a layout without it gets the effect through
//!   `insert_span`);
//! - `spans()` and `spans_range()`: intervals ascending and disjoint, each
//!   range the aligned span `get_span` names (clipped to the bounds), each
//!   key of each interval the model's, and together exactly the model's
//!   keys; `stats().ranges` counts the intervals wider than a key;
//! - `iter`, `keys`, `values` and `range` from both ends (a 64-bit
//!   pattern), `first_key_value`/`last_key_value`,
//!   `first_at_or_after`/`last_at_or_before`, cursors (`next`, `prev`,
//!   peeks, `seek`, `seek_get`, clones of the cursor), every range value
//!   expanded key by key; `get_each` (batched) against `get`;
//! - `clone()`: verified, equal to the original (`==`, spans, `stats()`),
//!   then changed at one key or span without the original changing, `==`
//!   following the model;
//! - `verify()`, `len()` and the spans after every [`BATCH`] operations,
//!   `len()` and `is_empty()` after every one; with [`Counted`] values,
//!   one live value per stored value (a key of its own or a range), and
//!   none left once the tree is gone.
//!
//! Walks expand ranges key by key, so their cost is bounded: an operation
//! walks at most [`WALK_LIMIT`] items, a full walk runs only while the
//! model holds at most [`FULL_WALK`] keys, and every input has a
//! [`WORK_BUDGET`] of model keys written or walked, beyond which costly
//! operations are skipped. With a block default in the model (a level-3
//! span) nothing is walked in full: the spans and point lookups compare.
//!
//! [`Counted`]: crate::Counted

use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Bound, RangeInclusive};

use arbitrary::Arbitrary;
use radix_core::{Span, SpanError, Stats};

use crate::counted;
use crate::harness::{same, BATCH};
use crate::keys::{interval, run_step};
use crate::map::{CursorStep, Previous};
use crate::ops::Finish;
use crate::values::ModelValue;
use crate::walk::walk;

/// Keys of [`RangeKey::Low`] and [`RangeKey::Chunk`] lie below this: four
/// spans of level 2, 1024 of level 1.
pub const LOW_KEYS: u32 = 1 << 18;

/// The longest insert or remove run: enough to fill two chunks of 256.
pub const MAX_RANGE_RUN: u16 = 600;

/// The most items an operation's walk takes (ranges expand key by key).
pub const WALK_LIMIT: usize = 4096;

/// Full walks (every key, both ways) run while the model holds at most
/// this many keys (a span of level 2 is more: then the spans and bounded
/// walks compare).
pub const FULL_WALK: usize = 20_000;

/// Model keys one input may write or walk; beyond it, the operations that
/// would spend more (runs, spans of level 1 and 2, walks, full checks
/// before the last) are skipped. 2^16 keys (a level-2 span) keep the
/// target at about 20 inputs a second under AddressSanitizer; 2^18 made
/// it 8.
pub const WORK_BUDGET: usize = 1 << 16;

/// An interval of more keys than this that an operation's result names
/// is checked against the model at [`SAMPLES`] keys rather than at every
/// key (the full comparison of every batch checks them all).
pub const SAMPLE_ABOVE: u32 = 256;

/// See [`SAMPLE_ABOVE`].
pub const SAMPLES: u32 = 16;

/// The most keys the model's map may hold (a level-3 span is one block
/// default, not 2^24 keys).
pub const MAX_MODEL_KEYS: usize = 1 << 18;

/// The most cursor moves one [`RangeOp::Cursor`] makes.
pub const MAX_RANGE_CURSOR_MOVES: usize = 64;

/// The most keys one [`RangeOp::GetEach`] looks up.
pub const MAX_GET_EACH: usize = 1024;

/// A tree is drained key by key at the end ([`Finish::Drain`]) only up to
/// this many keys; a larger one is cleared.
pub const MAX_DRAIN: usize = 8192;

/// The value seeds an input's value bytes pick from (`byte % 8`): few, so
/// that runs and neighbours share values, and for byte strings lengths on
/// both sides of the 7-byte embedding limit.
pub const VALUE_SEEDS: [u64; 8] = [0, 1, 6, 7, 8, 20, 39, 40];

/// The model value a value byte stands for.
pub fn value_of<M: ModelValue>(byte: u8) -> M {
    M::from_seed(VALUE_SEEDS[usize::from(byte % 8)])
}

/// The span level a level byte stands for (`byte % 16`): 0 once, 1
/// eleven times, 2 (65,536 keys, each written to the model) twice, 3 (2^24
/// keys, a block default) once, and once 4, which a `u32` key cannot have
/// (`SpanError::TooWide`).
pub fn level_of(byte: u8) -> u32 {
    match byte % 16 {
        0 => 0,
        1..=11 => 1,
        12..=13 => 2,
        14 => 3,
        _ => 4,
    }
}

/// One input of the `tree_ranges` target.
#[derive(Arbitrary, Clone, Debug)]
pub struct RangesInput {
    /// Build the trees over insert-only memory (leaves in bump arenas).
    pub insert_only: bool,
    /// Which tree runs after the embedded one.
    pub second: SecondTree,
    /// How the trees are emptied at the end (a drain only up to
    /// [`MAX_DRAIN`] keys).
    pub finish: Finish,
    /// The operations, applied in order.
    pub ops: Vec<RangeOp>,
}

/// The tree that runs the input after the `u32 -> u64` embedded one.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecondTree {
    /// `u32 -> Counted` in leaves: copies on split, drops on merge.
    Leaf,
    /// `u32 -> VarBytes`: byte strings, embedded or in leaves.
    Varlen,
    /// `u32 -> Pair`: 16-byte values inside last-level nodes.
    Inline,
}

/// A key an operation names.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeKey {
    /// `n % LOW_KEYS`.
    Low(u32),
    /// Key `offset` of chunk `chunk % 1024`: a chunk's edges, below
    /// [`LOW_KEYS`].
    Chunk {
        /// Which chunk of 256 keys.
        chunk: u16,
        /// The key's place in it.
        offset: u8,
    },
    /// The model's first key at or after `at` (reduced modulo
    /// [`LOW_KEYS`] when its top bit is clear), or its last key, plus
    /// `delta` (wrapping).
    Existing {
        /// Where to look from.
        at: u32,
        /// Added to the key found.
        delta: i8,
    },
    /// Any key.
    Any(u32),
}

impl RangeKey {
    /// The key this names in `model`'s state (`Existing` needs a key in
    /// the model; on an empty one it is 0).
    pub fn key<M: ModelValue>(self, model: &RangeModel<M>) -> u32 {
        match self {
            RangeKey::Low(n) => n % LOW_KEYS,
            RangeKey::Chunk { chunk, offset } => u32::from(chunk % 1024) * 256 + u32::from(offset),
            RangeKey::Existing { at, delta } => {
                let from = if at >> 31 == 0 { at % LOW_KEYS } else { at };
                let found = model
                    .first_at_or_after(from)
                    .or_else(|| model.last_at_or_before(u32::MAX));
                found
                    .map_or(0, |(k, _)| k)
                    .wrapping_add_signed(i32::from(delta))
            }
            RangeKey::Any(n) => n,
        }
    }
}

/// One end of a range.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeBound {
    /// The key itself is in the range.
    Included(RangeKey),
    /// The key itself is not in the range.
    Excluded(RangeKey),
    /// No bound on this side.
    Unbounded,
}

impl RangeBound {
    /// The bound this names in `model`'s state.
    pub fn bound<M: ModelValue>(self, model: &RangeModel<M>) -> Bound<u32> {
        match self {
            RangeBound::Included(k) => Bound::Included(k.key(model)),
            RangeBound::Excluded(k) => Bound::Excluded(k.key(model)),
            RangeBound::Unbounded => Bound::Unbounded,
        }
    }
}

/// A cursor move of [`RangeOp::Cursor`].
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeCursorMove {
    /// `next()`.
    Next,
    /// `prev()`.
    Prev,
    /// `peek_next()`.
    PeekNext,
    /// `peek_prev()`.
    PeekPrev,
    /// `seek(key)`.
    Seek(RangeKey),
    /// `seek_get(key)`.
    SeekGet(RangeKey),
    /// Continue with a clone of the cursor.
    Fork,
}

/// What [`RangeOp::CloneChange`] does to the clone.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    /// `insert(key, value)`.
    Insert {
        /// The key.
        key: RangeKey,
        /// The value byte.
        value: u8,
    },
    /// `remove(key)`.
    Remove(RangeKey),
    /// `insert_span` of the span of `level % 4` holding `key`.
    Span {
        /// A key of the span.
        key: RangeKey,
        /// The level, modulo 4.
        level: u8,
        /// The value byte.
        value: u8,
    },
}

/// One operation on the tree and the model.
#[derive(Arbitrary, Clone, Debug)]
pub enum RangeOp {
    /// `insert`: absorbed by a range of the same value, splitting one of
    /// another.
    Insert {
        /// The key.
        key: RangeKey,
        /// The value byte.
        value: u8,
    },
    /// `remove`: splitting the range the key lies under.
    Remove(RangeKey),
    /// `insert` of `start + i * step` for `i < len % (MAX_RANGE_RUN + 1)`,
    /// ascending (stopping at the top of the key space), with one value,
    /// except every `vary`-th key (when not 0), which gets the next one.
    InsertRun {
        /// The first key.
        start: RangeKey,
        /// The number of keys.
        len: u16,
        /// The step ([`run_step`]: 1 to 4 or a power of 256).
        step: u8,
        /// The value byte.
        value: u8,
        /// Every `vary`-th key another value (0: none).
        vary: u8,
    },
    /// `remove` of `start + i * step`, as [`RangeOp::InsertRun`].
    RemoveRun {
        /// The first key.
        start: RangeKey,
        /// The number of keys.
        len: u16,
        /// The step.
        step: u8,
    },
    /// `insert_span` (or `insert_span_with_old`) of the span of
    /// [`level_of`]`(level)` holding `key`; a level the key type lacks is
    /// refused.
    InsertSpan {
        /// A key of the span.
        key: RangeKey,
        /// The level byte.
        level: u8,
        /// The value byte.
        value: u8,
        /// Through `insert_span_with_old`, checking what it shows.
        with_old: bool,
    },
    /// `get_span_mut` of `key`, writing a new value for its whole span.
    SetSpan {
        /// The key.
        key: RangeKey,
        /// The value byte.
        value: u8,
    },
    /// `get`, `contains_key` and `get_span` of a key and its neighbours.
    Get(RangeKey),
    /// `spans_range` between two bounds.
    Spans {
        /// The lower bound.
        low: RangeBound,
        /// The upper bound.
        high: RangeBound,
    },
    /// `range` between two bounds, walked from both ends as `pattern`
    /// says.
    Range {
        /// The lower bound.
        low: RangeBound,
        /// The upper bound.
        high: RangeBound,
        /// Which end each step takes from.
        pattern: u64,
    },
    /// `iter`, `keys` and `values` walked with a pattern; the ends.
    Iterate(u64),
    /// `first_at_or_after` and `last_at_or_before` of a key.
    Seek(RangeKey),
    /// A cursor at `start`, moved (at most [`MAX_RANGE_CURSOR_MOVES`]).
    Cursor {
        /// Where the cursor starts.
        start: RangeKey,
        /// The moves.
        moves: Vec<RangeCursorMove>,
    },
    /// `get_each` of the keys, then of `run % (MAX_GET_EACH + 1)`
    /// ascending keys from the first, against `get`.
    GetEach {
        /// The keys (the first [`MAX_GET_EACH`]).
        keys: Vec<RangeKey>,
        /// Length of the ascending batch.
        run: u16,
    },
    /// `clone()`, compared with the original, then changed.
    CloneChange(Edit),
    /// `clear`.
    Clear,
    /// `verify` and the full comparison now.
    Verify,
}

/// A key's value in [`RangeModel::keys`]: `None` marks a key removed from
/// a block default.
type Slot<M> = Option<M>;

/// The key-by-key model: every key's value, and for level-3 spans a block
/// default (see the module documentation).
#[derive(Clone, Debug)]
pub struct RangeModel<M> {
    /// Keys with a value of their own; inside a block with a default,
    /// `None` for a key removed from it.
    keys: BTreeMap<u32, Slot<M>>,
    /// Default values of whole blocks of 2^24 keys, by their top byte.
    blocks: BTreeMap<u8, M>,
    /// The keys with a value.
    len: usize,
}

/// The block (top byte) of `key`.
fn block_of(key: u32) -> u8 {
    (key >> 24) as u8
}

/// The first key of block `b`.
fn block_start(b: u8) -> u32 {
    u32::from(b) << 24
}

/// The last key of block `b`.
fn block_last(b: u8) -> u32 {
    block_start(b) | 0x00FF_FFFF
}

/// `lo..=hi` cut at block boundaries.
fn pieces(lo: u32, hi: u32) -> impl Iterator<Item = (u32, u32)> {
    let mut next = Some(lo).filter(|&lo| lo <= hi);
    std::iter::from_fn(move || {
        let p = next?;
        let q = block_last(block_of(p)).min(hi);
        next = (q < hi).then(|| q + 1);
        Some((p, q))
    })
}

impl<M: ModelValue> Default for RangeModel<M> {
    fn default() -> Self {
        Self {
            keys: BTreeMap::new(),
            blocks: BTreeMap::new(),
            len: 0,
        }
    }
}

impl<M: ModelValue> RangeModel<M> {
    /// The keys with a value.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no key has a value.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether a block default (a level-3 span) is in: then nothing is
    /// walked in full.
    pub fn is_wide(&self) -> bool {
        !self.blocks.is_empty()
    }

    /// The entries of the map (outside blocks every entry has a value).
    pub fn map_len(&self) -> usize {
        self.keys.len()
    }

    /// Every key and value, when no block default is in.
    fn entries(&self) -> impl DoubleEndedIterator<Item = (u32, M)> + '_ {
        assert!(!self.is_wide(), "the model expands no block");
        self.keys
            .iter()
            .map(|(&k, v)| (k, v.clone().expect("no removed keys outside blocks")))
    }

    /// The value of `key`.
    pub fn get(&self, key: u32) -> Option<&M> {
        match self.keys.get(&key) {
            Some(slot) => slot.as_ref(),
            None => self.blocks.get(&block_of(key)),
        }
    }

    /// Sets (or with `None` removes) the value of `key`; the old value.
    pub fn set(&mut self, key: u32, new: Option<M>) -> Option<M> {
        let old = self.get(key).cloned();
        self.len = self.len - usize::from(old.is_some()) + usize::from(new.is_some());
        if self.blocks.contains_key(&block_of(key)) {
            self.keys.insert(key, new);
        } else {
            match new {
                Some(v) => self.keys.insert(key, Some(v)),
                None => self.keys.remove(&key),
            };
        }
        old
    }

    /// How many keys of `lo..=hi` have a value.
    pub fn count(&self, lo: u32, hi: u32) -> usize {
        pieces(lo, hi)
            .map(|(p, q)| {
                let entries = self.keys.range(p..=q);
                if self.blocks.contains_key(&block_of(p)) {
                    let removed = entries.filter(|(_, v)| v.is_none()).count();
                    (q - p) as usize + 1 - removed
                } else {
                    entries.count()
                }
            })
            .sum()
    }

    /// Whether every key of `lo..=hi` has the value `v`; if not, the first
    /// key found that does not, and what it has.
    pub fn covers(&self, lo: u32, hi: u32, v: &M) -> Result<(), String> {
        for (p, q) in pieces(lo, hi) {
            let mut seen = 0usize;
            for (&k, slot) in self.keys.range(p..=q) {
                seen += 1;
                match slot {
                    Some(x) if x == v => {}
                    Some(x) => return Err(format!("key {k} has {x:?}, not {v:?}")),
                    None => return Err(format!("key {k} has no value")),
                }
            }
            if seen <= (q - p) as usize {
                match self.blocks.get(&block_of(p)) {
                    Some(d) if d == v => {}
                    Some(d) => return Err(format!("keys of {p}..={q} have {d:?}, not {v:?}")),
                    None => {
                        let absent = (q - p) as usize + 1 - seen;
                        return Err(format!("{absent} keys of {p}..={q} have no value"));
                    }
                }
            }
        }
        Ok(())
    }

    /// [`covers`](Self::covers) for an interval of at most
    /// [`SAMPLE_ABOVE`] keys; for a wider one, `get` at its ends and at
    /// [`SAMPLES`] keys spread over it.
    pub fn covers_sampled(&self, lo: u32, hi: u32, v: &M) -> Result<(), String> {
        let width = hi - lo;
        if width < SAMPLE_ABOVE {
            return self.covers(lo, hi, v);
        }
        let step = width / SAMPLES;
        for k in (0..=SAMPLES).map(|i| lo + i * step).chain([hi]) {
            match self.get(k) {
                Some(x) if x == v => {}
                other => return Err(format!("key {k} has {other:?}, not {v:?}")),
            }
        }
        Ok(())
    }

    /// Stores `v` for every key of `span`; how many had a value.
    pub fn insert_span(&mut self, span: Span<u32>, v: &M) -> usize {
        let (lo, hi) = (span.start(), span.last());
        if span.level() < 2 {
            return span
                .keys()
                .map(|k| usize::from(self.set(k, Some(v.clone())).is_some()))
                .sum();
        }
        if span.level() == 2 {
            // 65,536 keys, each with the value (over a block default as
            // overrides): the map rebuilt in one ascending pass.
            let had = self.count(lo, hi);
            let mut inside = self.keys.split_off(&lo);
            let after = match hi.checked_add(1) {
                Some(next) => inside.split_off(&next),
                None => BTreeMap::new(),
            };
            let before = std::mem::take(&mut self.keys);
            let fresh = (lo..=hi).map(|k| (k, Some(v.clone())));
            self.keys = before.into_iter().chain(fresh).chain(after).collect();
            self.len = self.len - had + span.key_count() as usize;
            return had;
        }
        let b = block_of(span.start());
        let had = self.count(block_start(b), block_last(b));
        let inside: Vec<u32> = self
            .keys
            .range(block_start(b)..=block_last(b))
            .map(|(&k, _)| k)
            .collect();
        for k in inside {
            self.keys.remove(&k);
        }
        self.blocks.insert(b, v.clone());
        self.len = self.len - had + (1 << 24);
        had
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// The first key at or after `key`, with its value.
    pub fn first_at_or_after(&self, key: u32) -> Option<(u32, M)> {
        let mut key = key;
        loop {
            let b = block_of(key);
            if let Some(d) = self.blocks.get(&b) {
                // The first key of `key..` in the block that is not
                // removed: an override, or a gap between them.
                let mut at = u64::from(key);
                for (&k, slot) in self.keys.range(key..=block_last(b)) {
                    if u64::from(k) != at {
                        break;
                    }
                    if let Some(v) = slot {
                        return Some((k, v.clone()));
                    }
                    at += 1;
                }
                if at <= u64::from(block_last(b)) {
                    // A key no override names: the block's default.
                    return Some((at as u32, d.clone()));
                }
            } else {
                let next = b
                    .checked_add(1)
                    .and_then(|n| self.blocks.range(n..).next())
                    .map(|(&n, _)| n);
                let limit = next.map_or(u32::MAX, |n| block_start(n) - 1);
                if let Some((&k, slot)) = self.keys.range(key..=limit).next() {
                    return Some((k, slot.clone().expect("outside blocks")));
                }
                key = block_start(next?);
                continue;
            }
            key = block_last(b).checked_add(1)?;
        }
    }

    /// The last key at or before `key`, with its value.
    pub fn last_at_or_before(&self, key: u32) -> Option<(u32, M)> {
        let mut key = key;
        loop {
            let b = block_of(key);
            if let Some(d) = self.blocks.get(&b) {
                let mut at = i64::from(key);
                for (&k, slot) in self.keys.range(block_start(b)..=key).rev() {
                    if i64::from(k) != at {
                        break;
                    }
                    if let Some(v) = slot {
                        return Some((k, v.clone()));
                    }
                    at -= 1;
                }
                if at >= i64::from(block_start(b)) {
                    // A key no override names: the block's default.
                    return Some((at as u32, d.clone()));
                }
            } else {
                let previous = b
                    .checked_sub(1)
                    .and_then(|p| self.blocks.range(..=p).next_back())
                    .map(|(&p, _)| p);
                let limit = previous.map_or(0, |p| block_last(p) + 1);
                if let Some((&k, slot)) = self.keys.range(limit..=key).next_back() {
                    return Some((k, slot.clone().expect("outside blocks")));
                }
                key = block_last(previous?);
                continue;
            }
            key = block_start(b).checked_sub(1)?;
        }
    }

    /// What a walk of `lo..=hi` gives, from both ends as `pattern` says,
    /// stopping after `take` items: as [`walk_partial`] of the tree's
    /// iterator.
    ///
    /// [`walk_partial`]: crate::walk::walk_partial
    pub fn walk(&self, lo: u32, hi: u32, pattern: u64, take: usize) -> Vec<(u32, M)> {
        // The next item from the front is at or after `front`, from the
        // back at or before `back`.
        let (mut front, mut back) = (i64::from(lo), i64::from(hi));
        let mut out = Vec::new();
        while out.len() < take && front <= back {
            let from_back = (pattern >> (out.len() % 64)) & 1 == 1;
            let item = if from_back {
                self.last_at_or_before(back as u32)
                    .filter(|&(k, _)| i64::from(k) >= front)
            } else {
                self.first_at_or_after(front as u32)
                    .filter(|&(k, _)| i64::from(k) <= back)
            };
            let Some((k, v)) = item else { break };
            if from_back {
                back = i64::from(k) - 1;
            } else {
                front = i64::from(k) + 1;
            }
            out.push((k, v));
        }
        out
    }

    /// The model of a cursor at `start` moved by `steps`: a gap before
    /// `Some(key)` or after the last key (`None`).
    pub fn cursor(&self, start: u32, steps: &[CursorStep<u32>]) -> Vec<Option<(u32, M)>> {
        let after = |gap: Option<u32>| gap.and_then(|g| self.first_at_or_after(g));
        let before = |gap: Option<u32>| match gap {
            Some(0) => None,
            Some(g) => self.last_at_or_before(g - 1),
            None => self.last_at_or_before(u32::MAX),
        };
        let mut gap = Some(start);
        let mut out = Vec::with_capacity(steps.len());
        for step in steps {
            out.push(match *step {
                CursorStep::Next => {
                    let e = after(gap);
                    if let Some((k, _)) = e {
                        gap = k.checked_add(1);
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
                    self.get(k).map(|v| (k, v.clone()))
                }
                CursorStep::Fork => None,
            });
        }
        out
    }
}

/// An interval of keys and their value, as `spans()` gives them.
pub type SpanItem<M> = (RangeInclusive<u32>, M);

/// A tree with range values under test, with values in their model
/// representation. [`impl_range_map!`](crate::impl_range_map) implements
/// it for a `radix_tree!` type with `ranges: true`, calling the type's own
/// methods; the methods a tree with ranges does not offer (`iter_mut`,
/// entries, `get_mut`, `retain`, `split_off`, owning iteration, ...) are
/// not here.
pub trait RangeMap: Clone {
    /// The model representation of the values.
    type Model: ModelValue;

    /// The tree type's name, for messages.
    fn name(&self) -> &'static str;
    /// Whether the values are [`Counted`](crate::Counted).
    fn counts_values(&self) -> bool;
    /// `insert`.
    fn insert(&mut self, key: u32, value: &Self::Model) -> Previous<Self::Model>;
    /// `remove`.
    fn remove(&mut self, key: u32) -> Previous<Self::Model>;
    /// `insert_span`.
    ///
    /// # Errors
    ///
    /// As `insert_span`.
    fn insert_span(&mut self, span: Span<u32>, value: &Self::Model) -> Result<usize, SpanError>;
    /// `insert_span_with_old`, each replaced value decoded for `old`.
    ///
    /// # Errors
    ///
    /// As `insert_span_with_old`.
    fn insert_span_with_old(
        &mut self,
        span: Span<u32>,
        value: &Self::Model,
        old: &mut dyn FnMut(Span<u32>, Self::Model),
    ) -> Result<usize, SpanError>;
    /// `get_span_mut(key)`, writing `value` through the reference: the
    /// span it covered (`None` for an absent key); `None` when the layout
    /// has no `get_span_mut` (`varlen`).
    fn set_span(&mut self, key: u32, value: &Self::Model) -> Option<Option<Span<u32>>>;
    /// `get`.
    fn get(&self, key: u32) -> Option<Self::Model>;
    /// `contains_key`.
    fn contains_key(&self, key: u32) -> bool;
    /// `get_span`.
    fn get_span(&self, key: u32) -> Option<(Span<u32>, Self::Model)>;
    /// `len`.
    fn len(&self) -> usize;
    /// `is_empty`.
    fn is_empty(&self) -> bool;
    /// `clear`.
    fn clear(&mut self);
    /// `verify`.
    fn verify(&self) -> Result<(), String>;
    /// `memory_usage`.
    fn memory_usage(&self) -> usize;
    /// `stats`.
    fn stats(&self) -> Stats;
    /// The first `limit` items of `spans_range((low, high))`.
    fn spans(&self, low: Bound<u32>, high: Bound<u32>, limit: usize) -> Vec<SpanItem<Self::Model>>;
    /// `range((low, high))`, walked with `pattern`, at most `take` items.
    fn walk_range(
        &self,
        low: Bound<u32>,
        high: Bound<u32>,
        pattern: u64,
        take: usize,
    ) -> Vec<(u32, Self::Model)>;
    /// `iter()`, walked with `pattern`, its length checked at every step,
    /// at most `take` items.
    fn walk_iter(&self, pattern: u64, take: usize) -> Vec<(u32, Self::Model)>;
    /// `keys()`, as [`walk_iter`](Self::walk_iter).
    fn walk_keys(&self, pattern: u64, take: usize) -> Vec<u32>;
    /// `values()`, as [`walk_iter`](Self::walk_iter).
    fn walk_values(&self, pattern: u64, take: usize) -> Vec<Self::Model>;
    /// `first_key_value`.
    fn first(&self) -> Option<(u32, Self::Model)>;
    /// `last_key_value`.
    fn last(&self) -> Option<(u32, Self::Model)>;
    /// `first_at_or_after`.
    fn first_at_or_after(&self, key: u32) -> Option<(u32, Self::Model)>;
    /// `last_at_or_before`.
    fn last_at_or_before(&self, key: u32) -> Option<(u32, Self::Model)>;
    /// A cursor at `start`, moved by `steps`: what each step gave.
    fn cursor(&self, start: u32, steps: &[CursorStep<u32>]) -> Vec<Option<(u32, Self::Model)>>;
    /// `get_each(keys)`: each key with what it found, in order.
    fn get_each(&self, keys: &[u32]) -> Vec<(u32, Option<Self::Model>)>;
    /// `self == other`.
    fn same_as(&self, other: &Self) -> bool;
    /// The length of the `Debug` output of the tree (and of its spans).
    fn debug_len(&self) -> usize;
}

/// Implements [`RangeMap`] for `UnderTest<TREE>` (see
/// [`under_test!`](crate::under_test)), TREE a `radix_tree!` type with
/// `key: u32` and `ranges: true`, by delegating to its methods.
///
/// ```ignore
/// radix_fuzz::under_test!();
/// radix_core::radix_tree! {
///     struct Words { key: u32, value: u64, layout: embedded, ranges: true }
/// }
/// radix_fuzz::impl_range_map!(Words, u64, sized);
/// radix_core::radix_tree! {
///     struct Bytes { key: u32, value: VarBytes, layout: varlen, ranges: true }
/// }
/// radix_fuzz::impl_range_map!(Bytes, VarBytes, varlen);
/// ```
///
/// The last argument says which signatures the type has: `sized` (values
/// by value, `insert` and `remove` return `Option<V>`, `get_span_mut`) or
/// `varlen` (values by reference, `bool`s, no `get_span_mut`). It also
/// provides `UnderTest::<Tree>::create(insert_only)`, a tree over the
/// default memory or over insert-only memory.
#[macro_export]
macro_rules! impl_range_map {
    ($tree:ident, $value:ty, sized) => {
        $crate::impl_range_map!(@impl $tree, $value, {
            fn insert(&mut self, key: u32, value: &Self::Model) -> $crate::Previous<Self::Model> {
                let old = $tree::insert(self, key, <$value as $crate::FuzzValue>::encode(value));
                $crate::Previous::from_option(old.map(|v| $crate::FuzzValue::decode(&v)))
            }

            fn remove(&mut self, key: u32) -> $crate::Previous<Self::Model> {
                let old = $tree::remove(self, key);
                $crate::Previous::from_option(old.map(|v| $crate::FuzzValue::decode(&v)))
            }

            fn insert_span(
                &mut self,
                span: ::radix_core::Span<u32>,
                value: &Self::Model,
            ) -> ::core::result::Result<usize, ::radix_core::SpanError> {
                $tree::insert_span(self, span, <$value as $crate::FuzzValue>::encode(value))
            }

            fn insert_span_with_old(
                &mut self,
                span: ::radix_core::Span<u32>,
                value: &Self::Model,
                old: &mut dyn FnMut(::radix_core::Span<u32>, Self::Model),
            ) -> ::core::result::Result<usize, ::radix_core::SpanError> {
                $tree::insert_span_with_old(
                    self,
                    span,
                    <$value as $crate::FuzzValue>::encode(value),
                    |s, v| old(s, $crate::FuzzValue::decode(v)),
                )
            }

            fn set_span(
                &mut self,
                key: u32,
                value: &Self::Model,
            ) -> Option<Option<::radix_core::Span<u32>>> {
                Some($tree::get_span_mut(self, key).map(|(span, slot)| {
                    *slot = <$value as $crate::FuzzValue>::encode(value);
                    span
                }))
            }
        });
    };
    ($tree:ident, $value:ty, varlen) => {
        $crate::impl_range_map!(@impl $tree, $value, {
            fn insert(&mut self, key: u32, value: &Self::Model) -> $crate::Previous<Self::Model> {
                let value = <$value as $crate::FuzzValue>::encode(value);
                $crate::Previous::from_bool($tree::insert(self, key, &value))
            }

            fn remove(&mut self, key: u32) -> $crate::Previous<Self::Model> {
                $crate::Previous::from_bool($tree::remove(self, key))
            }

            fn insert_span(
                &mut self,
                span: ::radix_core::Span<u32>,
                value: &Self::Model,
            ) -> ::core::result::Result<usize, ::radix_core::SpanError> {
                let value = <$value as $crate::FuzzValue>::encode(value);
                $tree::insert_span(self, span, &value)
            }

            fn insert_span_with_old(
                &mut self,
                span: ::radix_core::Span<u32>,
                value: &Self::Model,
                old: &mut dyn FnMut(::radix_core::Span<u32>, Self::Model),
            ) -> ::core::result::Result<usize, ::radix_core::SpanError> {
                let value = <$value as $crate::FuzzValue>::encode(value);
                $tree::insert_span_with_old(self, span, &value, |s, v| {
                    old(s, $crate::FuzzValue::decode(v))
                })
            }

            fn set_span(
                &mut self,
                _key: u32,
                _value: &Self::Model,
            ) -> Option<Option<::radix_core::Span<u32>>> {
                None
            }
        });
    };
    (@impl $tree:ident, $value:ty, { $($methods:tt)* }) => {
        impl UnderTest<$tree> {
            /// A tree over the default memory, or over insert-only memory.
            #[allow(dead_code)]
            fn create(insert_only: bool) -> Self {
                if insert_only {
                    let specs = $tree::pool_specs();
                    UnderTest($tree::with_memory(::radix_core::mem::LocalMemory::insert_only(
                        &specs,
                        16 << 10,
                    )))
                } else {
                    UnderTest($tree::new())
                }
            }
        }

        impl $crate::RangeMap for UnderTest<$tree> {
            type Model = <$value as $crate::FuzzValue>::Model;

            fn name(&self) -> &'static str {
                stringify!($tree)
            }

            fn counts_values(&self) -> bool {
                <$value as $crate::FuzzValue>::COUNTED
            }

            $($methods)*

            fn get(&self, key: u32) -> Option<Self::Model> {
                $tree::get(self, key).map($crate::FuzzValue::decode)
            }

            fn contains_key(&self, key: u32) -> bool {
                $tree::contains_key(self, key)
            }

            fn get_span(&self, key: u32) -> Option<(::radix_core::Span<u32>, Self::Model)> {
                $tree::get_span(self, key).map(|(s, v)| (s, $crate::FuzzValue::decode(v)))
            }

            fn len(&self) -> usize {
                $tree::len(self)
            }

            fn is_empty(&self) -> bool {
                $tree::is_empty(self)
            }

            fn clear(&mut self) {
                $tree::clear(self)
            }

            fn verify(&self) -> Result<(), String> {
                $tree::verify(self)
            }

            fn memory_usage(&self) -> usize {
                $tree::memory_usage(self)
            }

            fn stats(&self) -> ::radix_core::Stats {
                $tree::stats(self)
            }

            fn spans(
                &self,
                low: ::core::ops::Bound<u32>,
                high: ::core::ops::Bound<u32>,
                limit: usize,
            ) -> Vec<$crate::ranges::SpanItem<Self::Model>> {
                $tree::spans_range(self, (low, high))
                    .take(limit)
                    .map(|(keys, v)| (keys, $crate::FuzzValue::decode(v)))
                    .collect()
            }

            fn walk_range(
                &self,
                low: ::core::ops::Bound<u32>,
                high: ::core::ops::Bound<u32>,
                pattern: u64,
                take: usize,
            ) -> Vec<(u32, Self::Model)> {
                let it = $tree::range(self, (low, high))
                    .map(|(k, v)| (k, $crate::FuzzValue::decode(v)));
                $crate::walk::walk_partial(it, pattern, take)
            }

            fn walk_iter(&self, pattern: u64, take: usize) -> Vec<(u32, Self::Model)> {
                let it = $tree::iter(self).map(|(k, v)| (k, $crate::FuzzValue::decode(v)));
                $crate::walk::walk_exact_partial(it, pattern, take)
            }

            fn walk_keys(&self, pattern: u64, take: usize) -> Vec<u32> {
                $crate::walk::walk_exact_partial($tree::keys(self), pattern, take)
            }

            fn walk_values(&self, pattern: u64, take: usize) -> Vec<Self::Model> {
                let it = $tree::values(self).map($crate::FuzzValue::decode);
                $crate::walk::walk_exact_partial(it, pattern, take)
            }

            fn first(&self) -> Option<(u32, Self::Model)> {
                $tree::first_key_value(self).map(|(k, v)| (k, $crate::FuzzValue::decode(v)))
            }

            fn last(&self) -> Option<(u32, Self::Model)> {
                $tree::last_key_value(self).map(|(k, v)| (k, $crate::FuzzValue::decode(v)))
            }

            fn first_at_or_after(&self, key: u32) -> Option<(u32, Self::Model)> {
                $tree::first_at_or_after(self, key).map(|(k, v)| (k, $crate::FuzzValue::decode(v)))
            }

            fn last_at_or_before(&self, key: u32) -> Option<(u32, Self::Model)> {
                $tree::last_at_or_before(self, key).map(|(k, v)| (k, $crate::FuzzValue::decode(v)))
            }

            fn cursor(
                &self,
                start: u32,
                steps: &[$crate::map::CursorStep<u32>],
            ) -> Vec<Option<(u32, Self::Model)>> {
                $crate::map::cursor_on_tree($tree::cursor_at(self, start), steps)
            }

            fn get_each(&self, keys: &[u32]) -> Vec<(u32, Option<Self::Model>)> {
                let mut out = Vec::with_capacity(keys.len());
                $tree::get_each(self, keys, |&k| k, |&k, v| {
                    out.push((k, v.map($crate::FuzzValue::decode)))
                });
                out
            }

            fn same_as(&self, other: &Self) -> bool {
                self.0 == other.0
            }

            fn debug_len(&self) -> usize {
                format!("{:?} {:?}", self.0, $tree::spans(self)).len()
            }
        }
    };
}

/// Where a check failed, formatted only when it does.
struct At<'a> {
    tree: &'static str,
    place: Place<'a>,
}

/// The operation a check belongs to.
enum Place<'a> {
    Op(usize, &'a RangeOp),
    Named(&'static str),
}

impl fmt::Debug for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.place {
            Place::Op(i, op) => write!(f, "{}: op {i} ({op:?})", self.tree),
            Place::Named(what) => write!(f, "{}: {what}", self.tree),
        }
    }
}

/// A tree, its model, and what the input may still spend.
struct Harness<T: RangeMap> {
    tree: T,
    model: RangeModel<T::Model>,
    /// Model keys the input may still write or walk.
    work: usize,
    /// Counted values alive before the tree was made.
    live_before: usize,
}

/// Runs `input` on `tree` (empty) and on a model, panicking on the first
/// difference; then empties the tree as the input says and drops it.
///
/// # Panics
///
/// On any difference between the tree and the model, a failed `verify()`,
/// a memory or live-value count that is off: that is, on a bug.
pub fn check_ranges<T: RangeMap>(input: &RangesInput, tree: T) {
    let name = tree.name();
    let mut h = Harness {
        tree,
        model: RangeModel::default(),
        work: WORK_BUDGET,
        live_before: counted::live(),
    };
    let counting = h.tree.counts_values();
    let live_before = h.live_before;
    let named = |what| At {
        tree: name,
        place: Place::Named(what),
    };
    h.check_all(&named("a new tree"), true);
    for (index, op) in input.ops.iter().enumerate() {
        let at = At {
            tree: name,
            place: Place::Op(index, op),
        };
        h.apply(op, &at);
        h.check_len(&at);
        if index % BATCH == BATCH - 1 {
            h.check_all(&at, false);
        }
    }
    h.check_all(&named("after the last op"), true);
    h.finish(input.finish, &named("finishing"));
    if counting {
        assert_eq!(
            counted::live(),
            live_before,
            "{name}: Counted values outlive the tree"
        );
    }
}

impl<T: RangeMap> Harness<T> {
    /// Takes `n` from the work budget, or says there is not that much.
    fn spend(&mut self, n: usize) -> bool {
        match self.work.checked_sub(n) {
            Some(left) => {
                self.work = left;
                true
            }
            None => false,
        }
    }

    /// Whether the model may store a span: below level 3 it writes every
    /// key (paid from the budget, within [`MAX_MODEL_KEYS`]); at level 3 it
    /// drops the keys of the block (paid too).
    fn can_store(&mut self, span: Span<u32>) -> bool {
        if span.level() >= 3 {
            let cost = self.model.map_len();
            return self.spend(cost);
        }
        let keys = span.key_count() as usize;
        self.model.map_len() + keys <= MAX_MODEL_KEYS && self.spend(keys)
    }

    fn apply(&mut self, op: &RangeOp, at: &At<'_>) {
        match op {
            &RangeOp::Insert { key, value } => {
                let k = key.key(&self.model);
                self.insert(k, &value_of(value), at);
            }
            &RangeOp::Remove(key) => {
                let k = key.key(&self.model);
                self.remove(k, at);
            }
            &RangeOp::InsertRun {
                start,
                len,
                step,
                value,
                vary,
            } => {
                let start = start.key(&self.model);
                self.insert_run(start, len, step, value, vary, at);
            }
            &RangeOp::RemoveRun { start, len, step } => {
                let start = start.key(&self.model);
                let keys = run_keys(start, len, step);
                if self.spend(keys.len()) {
                    for k in keys {
                        self.remove(k, at);
                    }
                }
            }
            &RangeOp::InsertSpan {
                key,
                level,
                value,
                with_old,
            } => {
                let k = key.key(&self.model);
                self.insert_span(k, level_of(level), &value_of(value), with_old, at);
            }
            &RangeOp::SetSpan { key, value } => {
                let k = key.key(&self.model);
                self.set_span(k, &value_of(value), at);
            }
            &RangeOp::Get(key) => {
                let k = key.key(&self.model);
                for probe in [k.wrapping_sub(1), k, k.wrapping_add(1)] {
                    self.check_key(&self.tree, probe, at);
                }
            }
            &RangeOp::Spans { low, high } => {
                let low = low.bound(&self.model);
                let high = high.bound(&self.model);
                self.spans_range(low, high, at);
            }
            &RangeOp::Range { low, high, pattern } => {
                let low = low.bound(&self.model);
                let high = high.bound(&self.model);
                if self.spend(WALK_LIMIT) {
                    self.range(low, high, pattern, WALK_LIMIT, at);
                }
            }
            &RangeOp::Iterate(pattern) => {
                if self.spend(3 * WALK_LIMIT) {
                    self.walks(pattern, WALK_LIMIT, at);
                }
                self.check_ends(at);
            }
            &RangeOp::Seek(key) => {
                let k = key.key(&self.model);
                let what = (at, "first_at_or_after", k);
                assert_eq!(
                    self.tree.first_at_or_after(k),
                    self.model.first_at_or_after(k),
                    "{what:?}"
                );
                let what = (at, "last_at_or_before", k);
                assert_eq!(
                    self.tree.last_at_or_before(k),
                    self.model.last_at_or_before(k),
                    "{what:?}"
                );
            }
            RangeOp::Cursor { start, moves } => {
                let start = start.key(&self.model);
                let steps: Vec<CursorStep<u32>> = moves
                    .iter()
                    .take(MAX_RANGE_CURSOR_MOVES)
                    .map(|m| match *m {
                        RangeCursorMove::Next => CursorStep::Next,
                        RangeCursorMove::Prev => CursorStep::Prev,
                        RangeCursorMove::PeekNext => CursorStep::PeekNext,
                        RangeCursorMove::PeekPrev => CursorStep::PeekPrev,
                        RangeCursorMove::Seek(k) => CursorStep::Seek(k.key(&self.model)),
                        RangeCursorMove::SeekGet(k) => CursorStep::SeekGet(k.key(&self.model)),
                        RangeCursorMove::Fork => CursorStep::Fork,
                    })
                    .collect();
                let what = (at, "cursor", start, &steps);
                same(
                    &self.tree.cursor(start, &steps),
                    &self.model.cursor(start, &steps),
                    &what,
                );
            }
            RangeOp::GetEach { keys, run } => {
                let mut probes: Vec<u32> = keys
                    .iter()
                    .take(MAX_GET_EACH)
                    .map(|k| k.key(&self.model))
                    .collect();
                let first = probes.first().copied().unwrap_or(0);
                let run = usize::from(*run) % (MAX_GET_EACH + 1);
                probes.extend((0..run as u32).map_while(|i| first.checked_add(i)));
                if self.spend(probes.len()) {
                    self.get_each(&probes, at);
                }
            }
            &RangeOp::CloneChange(edit) => self.clone_change(edit, at),
            RangeOp::Clear => {
                self.tree.clear();
                self.model.clear();
                self.check_all(at, true);
            }
            RangeOp::Verify => self.check_all(at, false),
        }
    }

    /// `insert(k, v)`, the old value and the span after it checked.
    fn insert(&mut self, k: u32, v: &T::Model, at: &At<'_>) {
        let before = self.tree.get_span(k);
        let old = self.model.set(k, Some(v.clone()));
        let what = (at, "insert", k, v);
        self.tree.insert(k, v).assert_is(old.as_ref(), &what);
        let after = self.tree.get_span(k);
        let Some((span, got)) = &after else {
            panic!("{what:?}: get_span finds nothing after the insert");
        };
        assert!(span.contains(k) && got == v, "{what:?}: get_span {after:?}");
        if let Some((range, held)) = before.filter(|(s, _)| s.level() > 0) {
            if held == *v {
                assert_eq!(*span, range, "{what:?}: not absorbed by {range:?}");
            } else {
                assert_eq!(*span, Span::key(k), "{what:?}: {range:?} not split");
            }
        }
    }

    /// `remove(k)`, the old value checked.
    fn remove(&mut self, k: u32, at: &At<'_>) {
        let old = self.model.set(k, None);
        let what = (at, "remove", k);
        self.tree.remove(k).assert_is(old.as_ref(), &what);
        assert!(
            self.tree.get_span(k).is_none(),
            "{what:?}: get_span finds the removed key"
        );
    }

    /// An ascending insert run; a chunk of 256 keys, all absent before,
    /// that the run filled with one value must be under a range after it.
    fn insert_run(&mut self, start: u32, len: u16, step: u8, value: u8, vary: u8, at: &At<'_>) {
        let keys = run_keys(start, len, step);
        if !self.spend(keys.len()) || self.model.map_len() + keys.len() > MAX_MODEL_KEYS {
            return;
        }
        let values: Vec<T::Model> = (0..keys.len())
            .map(|i| {
                let other = vary != 0 && i % usize::from(vary) == usize::from(vary) - 1;
                value_of(value.wrapping_add(u8::from(other)))
            })
            .collect();
        // Aligned chunks the run fills, every key of them absent before,
        // with one value.
        let mut filled = Vec::new();
        if run_step::<u32>(step) == 1 {
            if let (Some(&first), Some(&last)) = (keys.first(), keys.last()) {
                let mut chunk = u64::from(first).next_multiple_of(256);
                while chunk + 255 <= u64::from(last) {
                    let c = chunk as u32;
                    let i = (c - first) as usize;
                    let one_value = values[i..i + 256].iter().all(|v| *v == values[i]);
                    if one_value && self.model.count(c, c + 255) == 0 {
                        filled.push((c, values[i].clone()));
                    }
                    chunk += 256;
                }
            }
        }
        for (k, v) in keys.iter().zip(&values) {
            self.insert(*k, v, at);
        }
        for (c, v) in filled {
            let what = (at, "a chunk filled with one value", c);
            match self.tree.get_span(c) {
                Some((span, got)) if span.level() >= 1 && got == v => {}
                other => panic!("{what:?}: did not merge into a range: get_span {other:?}"),
            }
        }
    }

    /// `insert_span` of the span of `level` holding `k`, or of
    /// `insert_span_with_old`, checked against the model, which then takes
    /// the span too.
    fn insert_span(&mut self, k: u32, level: u32, v: &T::Model, with_old: bool, at: &At<'_>) {
        let what = (at, "insert_span", k, level, v);
        let span = match Span::<u32>::containing(k, level) {
            Ok(span) => span,
            Err(e) => {
                assert_eq!(e, SpanError::TooWide { level, bits: 32 }, "{what:?}");
                assert!(level > Span::<u32>::MAX_LEVEL, "{what:?}: refused {e}");
                return;
            }
        };
        check_span_api(span, k, &what);
        if !self.can_store(span) {
            return;
        }
        let had = self.model.count(span.start(), span.last());
        let result = if with_old {
            let mut shown = Vec::new();
            let result = self
                .tree
                .insert_span_with_old(span, v, &mut |s, old| shown.push((s, old)));
            self.check_shown(span, &mut shown, had, &what);
            result
        } else {
            self.tree.insert_span(span, v)
        };
        assert_eq!(result, Ok(had), "{what:?}: keys that had a value");
        self.model.insert_span(span, v);
        match self.tree.get_span(k) {
            Some((s, got)) if s.level() >= level && s.contains(span.start()) && got == *v => {}
            other => panic!("{what:?}: get_span after it: {other:?}"),
        }
    }

    /// What `insert_span_with_old` showed of `span`'s old values: disjoint
    /// spans inside it (`span` itself for a wider range of the same value,
    /// which absorbs it), each key of which had the value shown, `had`
    /// keys in all.
    fn check_shown(
        &self,
        span: Span<u32>,
        shown: &mut [(Span<u32>, T::Model)],
        had: usize,
        what: &dyn fmt::Debug,
    ) {
        shown.sort_by_key(|(s, _)| s.start());
        let mut next = u64::from(span.start());
        let mut keys = 0u128;
        for (s, old) in shown.iter() {
            assert!(
                u64::from(s.start()) >= next && s.last() <= span.last(),
                "{what:?}: shown {s:?} is not inside {span:?} or overlaps another: {shown:?}"
            );
            next = u64::from(s.last()) + 1;
            keys += s.key_count();
            if let Err(e) = self.model.covers_sampled(s.start(), s.last(), old) {
                panic!("{what:?}: shown {s:?} with {old:?}, but {e}");
            }
        }
        assert_eq!(keys, had as u128, "{what:?}: shown {shown:?}");
    }

    /// `get_span_mut(k)` with a new value: the span must be the one
    /// `get_span` names, and every key of it changes.
    fn set_span(&mut self, k: u32, v: &T::Model, at: &At<'_>) {
        let what = (at, "get_span_mut", k, v);
        let before = self.tree.get_span(k).map(|(span, _)| span);
        if let Some(span) = before {
            if !self.can_store(span) {
                return;
            }
        }
        let got = match self.tree.set_span(k, v) {
            Some(got) => got,
            None => {
                // No get_span_mut (varlen): the same through insert_span.
                if let Some(span) = before {
                    self.tree.insert_span(span, v).expect("a u32 tree");
                }
                before
            }
        };
        assert_eq!(got, before, "{what:?}: the span written");
        match got {
            Some(span) => {
                self.model.insert_span(span, v);
            }
            None => assert!(self.model.get(k).is_none(), "{what:?}: key not found"),
        }
        self.check_key(&self.tree, k, at);
    }

    /// `get`, `contains_key` and `get_span` of `k` in `tree` against the
    /// model.
    fn check_key(&self, tree: &T, k: u32, at: &At<'_>) {
        let want = self.model.get(k);
        let what = (at, "get", k);
        assert_eq!(tree.get(k).as_ref(), want, "{what:?}");
        assert_eq!(
            tree.contains_key(k),
            want.is_some(),
            "{what:?}: contains_key"
        );
        match (tree.get_span(k), want) {
            (None, None) => {}
            (Some((span, v)), Some(w)) => {
                assert!(
                    span.contains(k) && v == *w,
                    "{what:?}: get_span {span:?} {v:?}"
                );
                if let Err(e) = self.model.covers_sampled(span.start(), span.last(), &v) {
                    panic!("{what:?}: get_span gives {span:?} with {v:?}, but {e}");
                }
            }
            (got, _) => panic!("{what:?}: get_span {got:?}, model {want:?}"),
        }
    }

    /// `spans_range(low, high)`, at most [`WALK_LIMIT`] intervals: inside
    /// the bounds, ascending and disjoint, each a span `get_span` names
    /// clipped to the bounds, each key the model's, and together the
    /// model's keys up to where they end.
    fn spans_range(&mut self, low: Bound<u32>, high: Bound<u32>, at: &At<'_>) {
        let what = (at, "spans_range", low, high);
        let got = self.tree.spans(low, high, WALK_LIMIT);
        let Some((lo, hi)) = interval(low, high) else {
            assert!(got.is_empty(), "{what:?}: an empty range gives {got:?}");
            return;
        };
        if !self.spend(got.len()) {
            return;
        }
        let mut next = i64::from(lo);
        let mut keys = 0usize;
        for (interval, v) in &got {
            let (a, b) = (*interval.start(), *interval.end());
            assert!(
                i64::from(a) >= next && a <= b && b <= hi,
                "{what:?}: {interval:?} out of order or out of {lo}..={hi}"
            );
            next = i64::from(b) + 1;
            keys += (b - a) as usize + 1;
            match self.tree.get_span(a) {
                Some((span, w))
                    if w == *v && span.start().max(lo) == a && span.last().min(hi) == b => {}
                other => panic!("{what:?}: {interval:?} with {v:?}, get_span {other:?}"),
            }
            if let Err(e) = self.model.covers_sampled(a, b, v) {
                panic!("{what:?}: {interval:?} with {v:?}, but {e}");
            }
        }
        let end = match got.last() {
            Some((interval, _)) if got.len() == WALK_LIMIT => *interval.end(),
            _ => hi,
        };
        // Counting walks the model's keys in the interval.
        let cost = self.model.map_len().min((end - lo) as usize + 1);
        if self.spend(cost) {
            assert_eq!(
                keys,
                self.model.count(lo, end),
                "{what:?}: the intervals up to {end} hold other keys than the model's"
            );
        }
    }

    /// `range(low, high)` against the model, both walked with `pattern`.
    fn range(&self, low: Bound<u32>, high: Bound<u32>, pattern: u64, take: usize, at: &At<'_>) {
        let want = match interval(low, high) {
            Some((lo, hi)) => self.model.walk(lo, hi, pattern, take),
            None => Vec::new(),
        };
        let what = (at, "range", low, high, pattern);
        same(
            &self.tree.walk_range(low, high, pattern, take),
            &want,
            &what,
        );
    }

    /// `iter()`, `keys()` and `values()` walked with `pattern`, at most
    /// `take` items each.
    fn walks(&self, pattern: u64, take: usize, at: &At<'_>) {
        let want = if self.model.is_wide() || take < self.model.len() {
            self.model.walk(0, u32::MAX, pattern, take)
        } else {
            walk(self.model.entries(), pattern)
        };
        same(
            &self.tree.walk_iter(pattern, take),
            &want,
            &(at, "iter", pattern),
        );
        let keys: Vec<u32> = want.iter().map(|(k, _)| *k).collect();
        same(
            &self.tree.walk_keys(pattern, take),
            &keys,
            &(at, "keys", pattern),
        );
        let values: Vec<T::Model> = want.into_iter().map(|(_, v)| v).collect();
        same(
            &self.tree.walk_values(pattern, take),
            &values,
            &(at, "values", pattern),
        );
    }

    /// `first_key_value` and `last_key_value`.
    fn check_ends(&self, at: &At<'_>) {
        let what = (at, "first_key_value");
        assert_eq!(
            self.tree.first(),
            self.model.first_at_or_after(0),
            "{what:?}"
        );
        let what = (at, "last_key_value");
        assert_eq!(
            self.tree.last(),
            self.model.last_at_or_before(u32::MAX),
            "{what:?}"
        );
    }

    /// `get_each(probes)` against `get` and the model.
    fn get_each(&self, probes: &[u32], at: &At<'_>) {
        let got = self.tree.get_each(probes);
        let want: Vec<(u32, Option<T::Model>)> = probes
            .iter()
            .map(|&k| (k, self.model.get(k).cloned()))
            .collect();
        same(&got, &want, &(at, "get_each", probes.len()));
        for &k in probes.iter().step_by(probes.len() / 64 + 1) {
            assert_eq!(
                self.tree.get(k),
                self.model.get(k).cloned(),
                "{at:?}: get({k})"
            );
        }
    }

    /// A clone: verified, equal to the tree, then changed by `edit` while
    /// the tree stays as it was.
    fn clone_change(&mut self, edit: Edit, at: &At<'_>) {
        let small = !self.model.is_wide() && self.model.len() <= FULL_WALK;
        let walks = if small { 2 * self.model.len() } else { 0 };
        if !self.spend(self.model.map_len() + walks) {
            return;
        }
        let spans = self
            .tree
            .spans(Bound::Unbounded, Bound::Unbounded, usize::MAX);
        let live = counted::live();
        let mut copy = self.tree.clone();
        let what = (at, "clone");
        if let Err(e) = copy.verify() {
            panic!("{what:?}: verify failed: {e}");
        }
        assert_eq!(copy.len(), self.tree.len(), "{what:?}: len()");
        same(
            &copy.spans(Bound::Unbounded, Bound::Unbounded, usize::MAX),
            &spans,
            &what,
        );
        // The same shape; the memory held may differ (the copy's blocks
        // are filled afresh).
        let shape = |mut s: Stats| {
            s.memory_bytes = 0;
            s
        };
        assert_eq!(
            shape(copy.stats()),
            shape(self.tree.stats()),
            "{what:?}: stats() of the clone (left) and the original"
        );
        if self.tree.counts_values() {
            assert_eq!(
                counted::live() - live,
                spans.len(),
                "{what:?}: the clone's live values"
            );
        }
        if small {
            assert!(
                copy.same_as(&self.tree) && self.tree.same_as(&copy),
                "{what:?}: a clone is not =="
            );
        }
        // The change, and whether it changed anything.
        let what = (at, "the clone changed", edit);
        let (unchanged, len) = match edit {
            Edit::Insert { key, value } => {
                let (k, v) = (key.key(&self.model), value_of::<T::Model>(value));
                let old = self.model.get(k);
                copy.insert(k, &v).assert_is(old, &what);
                let unchanged = old == Some(&v);
                (unchanged, self.model.len() + usize::from(old.is_none()))
            }
            Edit::Remove(key) => {
                let k = key.key(&self.model);
                let old = self.model.get(k);
                copy.remove(k).assert_is(old, &what);
                (old.is_none(), self.model.len() - usize::from(old.is_some()))
            }
            Edit::Span { key, level, value } => {
                let (k, v) = (key.key(&self.model), value_of::<T::Model>(value));
                let span = Span::containing(k, u32::from(level % 4)).expect("levels 0 to 3");
                let had = self.model.count(span.start(), span.last());
                assert_eq!(copy.insert_span(span, &v), Ok(had), "{what:?}");
                let unchanged = self.model.covers(span.start(), span.last(), &v).is_ok();
                (
                    unchanged,
                    self.model.len() - had + span.key_count() as usize,
                )
            }
        };
        if let Err(e) = copy.verify() {
            panic!("{what:?}: verify failed: {e}");
        }
        assert_eq!(copy.len(), len, "{what:?}: the clone's len()");
        same(
            &self
                .tree
                .spans(Bound::Unbounded, Bound::Unbounded, usize::MAX),
            &spans,
            &(at, "the original after its clone changed"),
        );
        if small && len <= FULL_WALK {
            assert_eq!(
                copy.same_as(&self.tree),
                unchanged,
                "{what:?}: == after the change"
            );
        }
        drop(copy);
        if self.tree.counts_values() {
            assert_eq!(
                counted::live(),
                live,
                "{what:?}: the clone's values outlive it"
            );
        }
    }

    /// `len()` and `is_empty()`.
    fn check_len(&self, at: &At<'_>) {
        assert_eq!(self.tree.len(), self.model.len(), "{at:?}: len()");
        assert_eq!(
            self.tree.is_empty(),
            self.model.is_empty(),
            "{at:?}: is_empty()"
        );
    }

    /// `verify()`, the counts, memory held exactly when non-empty, and the
    /// spans against the model; walks in full while the model is small.
    /// Unless `always`, only what the work budget still pays for.
    fn check_all(&mut self, at: &At<'_>, always: bool) {
        self.check_len(at);
        let memory = self.tree.memory_usage();
        assert_eq!(
            memory > 0,
            !self.model.is_empty(),
            "{at:?}: memory_usage() {memory}"
        );
        // `verify()` walks every node, as the spans below walk every
        // entry: both are paid from the budget, but at the start and the
        // end of an input.
        let cost = self.model.map_len().max(1);
        if !self.spend(cost) && !always {
            return;
        }
        if let Err(e) = self.tree.verify() {
            panic!("{at:?}: verify failed: {e}");
        }
        self.check_spans(at);
        self.check_ends(at);
        let small = !self.model.is_wide() && self.model.len() <= FULL_WALK;
        if small && (self.spend(2 * self.model.len()) || always) {
            for pattern in [0, !0] {
                let want: Vec<_> = walk(self.model.entries(), pattern);
                same(
                    &self.tree.walk_iter(pattern, usize::MAX),
                    &want,
                    &(at, "full iter", pattern),
                );
            }
            if self.model.len() <= 4096 {
                assert!(self.tree.debug_len() > 0, "{at:?}: Debug");
            }
        } else {
            for pattern in [0, !0, 0x5555_5555_5555_5555] {
                self.walks(pattern, 256, at);
            }
        }
    }

    /// The whole of `spans()` against the model: ascending and disjoint,
    /// each range the aligned span `get_span` names (one of a key its own
    /// span), every key of every interval the model's, as many keys as the
    /// model has; `stats()` counting the ranges; one live value each with
    /// [`Counted`](crate::Counted) values.
    fn check_spans(&self, at: &At<'_>) {
        let spans = self
            .tree
            .spans(Bound::Unbounded, Bound::Unbounded, usize::MAX);
        let what = (at, "spans()");
        let mut next = 0i64;
        let mut keys = 0u64;
        let mut ranges = 0;
        let sample = spans.len() / 1024 + 1;
        for (i, (interval, v)) in spans.iter().enumerate() {
            let (a, b) = (*interval.start(), *interval.end());
            assert!(
                i64::from(a) >= next && a <= b,
                "{what:?}: {interval:?} out of order"
            );
            next = i64::from(b) + 1;
            keys += u64::from(b - a) + 1;
            if a != b || i % sample == 0 {
                ranges += usize::from(a != b);
                match self.tree.get_span(a) {
                    Some((span, w)) if span.keys() == *interval && w == *v => {}
                    other => panic!("{what:?}: {interval:?} with {v:?}, get_span {other:?}"),
                }
            }
            if let Err(e) = self.model.covers(a, b, v) {
                panic!("{what:?}: {interval:?} with {v:?}, but {e}");
            }
        }
        assert_eq!(keys, self.model.len() as u64, "{what:?}: keys in all");
        let stats = self.tree.stats();
        assert_eq!(stats.ranges, ranges, "{what:?}: stats().ranges {stats}");
        assert_eq!(stats.keys, self.model.len(), "{what:?}: stats().keys");
        if self.tree.counts_values() {
            assert_eq!(
                counted::live() - self.live_before,
                spans.len(),
                "{what:?}: live Counted values"
            );
        }
    }

    /// Empties the tree as `finish` says (a drain only up to
    /// [`MAX_DRAIN`] keys) and drops it: no memory may be left.
    fn finish(mut self, finish: Finish, at: &At<'_>) {
        match finish {
            Finish::Drain if !self.model.is_wide() && self.model.len() <= MAX_DRAIN => {
                let keys: Vec<u32> = self.model.entries().map(|(k, _)| k).collect();
                let (mut front, mut back) = (0, keys.len());
                while front < back {
                    let k = if (front + keys.len() - back).is_multiple_of(2) {
                        front += 1;
                        keys[front - 1]
                    } else {
                        back -= 1;
                        keys[back]
                    };
                    self.remove(k, at);
                }
                self.check_all(at, true);
                assert_eq!(self.tree.memory_usage(), 0, "{at:?}: drained, memory held");
            }
            Finish::Drain | Finish::Clear => {
                self.tree.clear();
                self.model.clear();
                self.check_all(at, true);
            }
            Finish::Drop => {}
        }
    }
}

/// The keys of a run: `start + i * step` for `i < len % (MAX_RANGE_RUN +
/// 1)`, ascending, stopping at the top of the key space.
fn run_keys(start: u32, len: u16, step: u8) -> Vec<u32> {
    let step = run_step::<u32>(step) as u64;
    let n = u64::from(len % (MAX_RANGE_RUN + 1));
    (0..n)
        .map(|i| u64::from(start) + i * step)
        .take_while(|&k| k <= u64::from(u32::MAX))
        .map(|k| k as u32)
        .collect()
}

/// `Span`'s own answers for `span`, made from `key`: its ends, count and
/// membership, and `new` refusing a start that is not aligned.
fn check_span_api(span: Span<u32>, key: u32, what: &dyn fmt::Debug) {
    let level = span.level();
    assert!(span.contains(key), "{what:?}: {span:?}");
    assert_eq!(
        u128::from(span.last() - span.start()) + 1,
        span.key_count(),
        "{what:?}: {span:?}"
    );
    assert_eq!(span.keys(), span.start()..=span.last(), "{what:?}");
    assert_eq!(Span::new(span.start(), level), Ok(span), "{what:?}");
    if key != span.start() {
        assert_eq!(
            Span::new(key, level),
            Err(SpanError::Misaligned {
                start: u128::from(key),
                level
            }),
            "{what:?}"
        );
    }
    if level == 0 {
        assert_eq!(span, Span::key(key), "{what:?}");
    }
}

#[cfg(test)]
mod tests {
    use radix_core::value::VarBytes;

    use super::*;
    use crate::counted::Counted;
    use crate::values::Pair;

    radix_core::radix_tree! {
        struct Words { key: u32, value: u64, layout: embedded, compression: none, ranges: true }
    }
    radix_core::radix_tree! {
        struct Leaves { key: u32, value: Counted, layout: leaf, compression: none, ranges: true }
    }
    radix_core::radix_tree! {
        struct Bytes { key: u32, value: VarBytes, layout: varlen, compression: none, ranges: true }
    }
    radix_core::radix_tree! {
        struct Pairs { key: u32, value: Pair, layout: inline, compression: none, ranges: true }
    }
    crate::under_test!();
    crate::impl_range_map!(Words, u64, sized);
    crate::impl_range_map!(Leaves, Counted, sized);
    crate::impl_range_map!(Bytes, VarBytes, varlen);
    crate::impl_range_map!(Pairs, Pair, sized);

    fn run_all(input: &RangesInput) {
        let io = input.insert_only;
        check_ranges(input, UnderTest::<Words>::create(io));
        check_ranges(input, UnderTest::<Leaves>::create(io));
        check_ranges(input, UnderTest::<Bytes>::create(io));
        check_ranges(input, UnderTest::<Pairs>::create(io));
    }

    #[test]
    fn the_model_walks_blocks_and_overrides() {
        let mut m = RangeModel::<u64>::default();
        m.set(5, Some(1));
        m.set(1 << 25, Some(2));
        assert_eq!(m.insert_span(Span::new(1 << 24, 3).unwrap(), &7), 0);
        assert_eq!(m.len(), 2 + (1 << 24));
        m.set(1 << 24, None);
        m.set((1 << 24) + 1, Some(8));
        m.set((1 << 24) + 2, None);
        assert_eq!(m.first_at_or_after(6), Some(((1 << 24) + 1, 8)));
        assert_eq!(m.first_at_or_after((1 << 24) + 2), Some(((1 << 24) + 3, 7)));
        assert_eq!(m.last_at_or_before((1 << 24) + 2), Some(((1 << 24) + 1, 8)));
        assert_eq!(m.last_at_or_before(1 << 24), Some((5, 1)));
        assert_eq!(m.first_at_or_after((2 << 24) - 1), Some(((2 << 24) - 1, 7)));
        assert_eq!(m.first_at_or_after(2 << 24), Some((1 << 25, 2)));
        assert_eq!(m.count(0, u32::MAX), m.len());
        assert_eq!(m.count(1 << 24, (1 << 24) + 9), 8);
        assert!(m.covers((1 << 24) + 3, (2 << 24) - 1, &7).is_ok());
        assert!(m.covers(1 << 24, (1 << 24) + 3, &7).is_err());
        assert_eq!(
            m.walk(0, u32::MAX, !0, 3),
            [(1 << 25, 2), ((2 << 24) - 1, 7), ((2 << 24) - 2, 7)]
        );
        // A second level-3 span over the block takes its overrides away.
        assert_eq!(
            m.insert_span(Span::new(1 << 24, 3).unwrap(), &9),
            (1 << 24) - 2
        );
        assert_eq!(m.len(), 2 + (1 << 24));
        assert_eq!(m.first_at_or_after(6), Some((1 << 24, 9)));
    }

    /// The committed seeds decode to what make_seeds.py meant (their whole
    /// length read, every operation kind present) and pass on every tree.
    #[test]
    fn seeds_decode_and_pass() {
        let mut kinds = std::collections::BTreeSet::new();
        for (_, input) in crate::seeds::decoded::<RangesInput>("tree_ranges") {
            kinds.extend(crate::seeds::kinds(&input.ops));
            run_all(&input);
        }
        assert_eq!(kinds.len(), 16, "operation kinds in the seeds: {kinds:?}");
    }

    /// Pseudo-random inputs through every layout: the harness itself must
    /// hold (a smoke test; the fuzz target does the real search).
    #[test]
    fn random_inputs_run_on_every_layout() {
        for input in crate::seeds::smoke_inputs(0x5EED_0002, 80, |i: &mut RangesInput| &mut i.ops) {
            run_all(&input);
        }
    }
}
