//! The TID store harness: operation sequences against a
//! `BTreeMap<block, offsets>` model.
//!
//! Offsets come as arbitrary `u16` lists as often as well-formed ones, so
//! that `set_block_offsets` refuses many calls; a refused call must return
//! an error that names a real problem of the input and change nothing (the
//! TID and block counts, the memory held and the block's old offsets are
//! checked). Every [`BATCH`] operations and at the end the
//! store is verified and iterated in full.
//!
//! The block table stores a run of blocks with equal offsets as range
//! values (one per aligned chunk of 256 equal blocks, or of 65,536), so
//! [`TidOp::EqualRun`] sets the same offsets on up to [`MAX_EQUAL_RUN`]
//! consecutive blocks, merging chunks as they fill, and then changes one
//! block in the middle, splitting the range it lies in; the checks above
//! and `is_member_each` over the run see both.
//!
//! The input picks the store ([`StoreKind`]): a local [`TidStore`], or a
//! [`SharedTidStore`] in a heap-backed area, driven through its locks. In
//! an area with a size limit a valid call may also be refused, with
//! `AreaFull`, and must change nothing as well: the counts, the block's
//! offsets and `verify()` are checked at once (the area may give back
//! spare room, never grow), the rest at the next full comparison.

use std::collections::BTreeMap;
use std::fmt;

use arbitrary::Arbitrary;
use tidstore::{DeadBlock, SharedTidStore, Tid, TidStore, TidStoreError, MAX_OFFSET};

use crate::harness::BATCH;
use crate::keys::{Bases, KeyInt, KeySpec};
use crate::shared::{make_area, AreaLimit};

/// Runs stop adding new blocks once the model has this many blocks or
/// [`MAX_TIDS`] TIDs, which keeps executions fast.
pub const MAX_BLOCKS: usize = 4096;

/// See [`MAX_BLOCKS`].
pub const MAX_TIDS: usize = 1 << 16;

/// Offsets of a block probed with `is_member` after each
/// `set_block_offsets` (with their neighbours).
pub const PROBES_PER_BLOCK: usize = 16;

/// The longest [`TidOp::EqualRun`]: two full chunks of 256 blocks and
/// parts of the chunks at both ends, wherever it starts.
pub const MAX_EQUAL_RUN: u16 = 600;

/// One input of the `tidstore` target.
#[derive(Arbitrary, Clone, Debug)]
pub struct TidInput {
    /// `TidStore::insert_only` rather than `TidStore::new` (a local store).
    pub insert_only: bool,
    /// The memory budget.
    pub budget: Budget,
    /// Which store: local, or shared in an area that may be limited.
    pub store: StoreKind,
    /// The bases of [`KeySpec::Clustered`] block numbers.
    pub bases: Bases,
    /// The operations, applied in order.
    pub ops: Vec<TidOp>,
}

/// A store's memory budget, which also caps its allocation blocks at a
/// sixteenth of it.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Budget {
    /// 1 GiB: large blocks.
    Large,
    /// 64 KiB: 4 KiB blocks.
    Small,
    /// This many bytes: blocks of one node, `is_full` soon true.
    Tiny(u16),
}

impl Budget {
    /// The budget in bytes.
    pub fn bytes(self) -> usize {
        match self {
            Budget::Large => 1 << 30,
            Budget::Small => 64 << 10,
            Budget::Tiny(n) => usize::from(n),
        }
    }
}

/// The store an input drives.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreKind {
    /// A local [`TidStore`].
    Local,
    /// A [`SharedTidStore`] in a heap-backed area (the layout, allocator
    /// and locks of POSIX shared memory) of this size limit: with one,
    /// valid calls are refused with [`TidStoreError::AreaFull`] too, and
    /// must then change nothing, a block range split half-way included.
    Shared(AreaLimit),
}

/// A list of offsets for `set_block_offsets`.
#[derive(Arbitrary, Clone, Debug)]
pub enum OffsetSpec {
    /// Exactly as given: mostly invalid (out of range, unsorted, empty).
    Raw(Vec<u16>),
    /// Each reduced modulo 2049, sorted and deduplicated: valid unless
    /// empty or holding 0.
    Sorted(Vec<u16>),
    /// `start..start + len`, clamped to `1..=2048`: the run form (or
    /// the inline form when short; refused when empty).
    Run {
        /// First offset (modulo 2048, plus 1).
        start: u16,
        /// Number of offsets (modulo 2049).
        len: u16,
    },
    /// `start + i * step` for `i < count`, within `1..=2048`: a bitmap.
    Stride {
        /// First offset (modulo 2048, plus 1).
        start: u16,
        /// Distance between offsets (at least 1).
        step: u8,
        /// Number of offsets.
        count: u8,
    },
    /// A list that breaks one rule in a chosen place: `base`, made valid,
    /// then with offset `at` replaced by `value`, or duplicated.
    Broken {
        /// The otherwise valid list.
        base: Vec<u16>,
        /// Which offset to break.
        at: u8,
        /// The replacement (0, 2049 and neighbours are likely).
        value: u16,
        /// Duplicate the offset instead of replacing it.
        duplicate: bool,
    },
}

impl OffsetSpec {
    /// The offsets this spec describes.
    pub fn offsets(&self) -> Vec<u16> {
        let valid = |raw: &[u16]| {
            let mut offsets: Vec<u16> = raw.iter().map(|&o| o % MAX_OFFSET + 1).collect();
            offsets.sort_unstable();
            offsets.dedup();
            offsets
        };
        match self {
            OffsetSpec::Raw(raw) => raw.clone(),
            OffsetSpec::Sorted(raw) => {
                let mut offsets: Vec<u16> = raw.iter().map(|&o| o % (MAX_OFFSET + 1)).collect();
                offsets.sort_unstable();
                offsets.dedup();
                offsets
            }
            &OffsetSpec::Run { start, len } => {
                let start = start % MAX_OFFSET + 1;
                let end = (start + len % (MAX_OFFSET + 1)).min(MAX_OFFSET + 1);
                (start..end).collect()
            }
            &OffsetSpec::Stride { start, step, count } => {
                let start = start % MAX_OFFSET + 1;
                let step = u16::from(step).max(1);
                (0..u16::from(count))
                    .map_while(|i| {
                        start
                            .checked_add(i.checked_mul(step)?)
                            .filter(|&o| o <= MAX_OFFSET)
                    })
                    .collect()
            }
            OffsetSpec::Broken {
                base,
                at,
                value,
                duplicate,
            } => {
                let mut offsets = valid(base);
                if !offsets.is_empty() {
                    let i = usize::from(*at) % offsets.len();
                    if *duplicate {
                        offsets.insert(i, offsets[i]);
                    } else {
                        offsets[i] = *value;
                    }
                }
                offsets
            }
        }
    }
}

/// Whether `offsets` meets the `set_block_offsets` contract: non-empty,
/// strictly ascending, within `1..=2048`.
pub fn offsets_valid(offsets: &[u16]) -> bool {
    !offsets.is_empty()
        && offsets.iter().all(|&o| (1..=MAX_OFFSET).contains(&o))
        && offsets.windows(2).all(|w| w[0] < w[1])
}

/// Asserts that `error` names a rule `offsets` really breaks, for `block`.
///
/// # Panics
///
/// When it does not.
#[track_caller]
pub fn assert_error_fits(error: &TidStoreError, block: u32, offsets: &[u16]) {
    let fits = match *error {
        TidStoreError::NoOffsets { block: b } => b == block && offsets.is_empty(),
        TidStoreError::OffsetOutOfRange { block: b, offset } => {
            b == block && (offset == 0 || offset > MAX_OFFSET) && offsets.contains(&offset)
        }
        TidStoreError::NotAscending {
            block: b,
            previous,
            offset,
        } => {
            b == block && previous >= offset && offsets.windows(2).any(|w| w == [previous, offset])
        }
        // Only a shared store's area fills; this target's stores are local.
        // Only the set operations go over budget.
        TidStoreError::AreaFull { .. }
        | TidStoreError::SharedMemory { .. }
        | TidStoreError::OverBudget { .. } => false,
    };
    assert!(
        fits,
        "set_block_offsets({block}, {offsets:?}) failed with {error:?}, which does not describe the input"
    );
}

/// One operation on the store and the model.
///
/// `index` fields pick the `index % len`-th block of the model.
#[derive(Arbitrary, Clone, Debug)]
pub enum TidOp {
    /// `set_block_offsets` on any block.
    Set {
        /// The block.
        block: KeySpec,
        /// The offsets.
        offsets: OffsetSpec,
    },
    /// `set_block_offsets` on an existing block: a replacement.
    Replace {
        /// Which existing block.
        index: u16,
        /// The new offsets.
        offsets: OffsetSpec,
    },
    /// The same offsets for `start + i * step`, `i < count`: many blocks,
    /// so the tree's nodes grow.
    SetRun {
        /// The first block.
        start: KeySpec,
        /// Number of blocks.
        count: u8,
        /// Distance between blocks (at least 1).
        step: u8,
        /// The offsets.
        offsets: OffsetSpec,
    },
    /// `is_member` of any TID.
    Probe {
        /// The block.
        block: KeySpec,
        /// The offset (any, 0 and > 2048 included).
        offset: u16,
    },
    /// `is_member` near an existing TID: block and offset moved by deltas.
    ProbeNear {
        /// Which existing block.
        index: u16,
        /// Which of its offsets.
        pick: u16,
        /// Added to the block.
        block_delta: i8,
        /// Added to the offset.
        offset_delta: i8,
    },
    /// `copy_offsets` of an existing block into a buffer of any length.
    CopyOffsets {
        /// Which existing block.
        index: u16,
        /// The buffer length.
        buf_len: u16,
    },
    /// Iterate the whole store and compare.
    Iterate,
    /// `clear`.
    Clear,
    /// `verify` now.
    Verify,
    /// The same offsets on the blocks `start..start + count % 601`, in
    /// ascending order: the block table (`ranges: true`) stores each
    /// aligned chunk of 256 equal entries as one range value, merged as
    /// the 256th block comes in. Then the block `at % count` of the run
    /// gets `changed` (when given), which splits the range it lies in;
    /// then `is_member_each` over the run's blocks, their first and last
    /// offsets and the offsets next to them, against `is_member`.
    EqualRun {
        /// The first block.
        start: KeySpec,
        /// Number of blocks (modulo `MAX_EQUAL_RUN + 1`).
        count: u16,
        /// The offsets of every block of the run.
        offsets: OffsetSpec,
        /// Which block of the run changes.
        at: u16,
        /// Its new offsets.
        changed: Option<OffsetSpec>,
    },
}

/// Where a check failed, formatted only when it does.
struct At<'a>(usize, &'a TidOp);

impl fmt::Debug for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "op {} ({:?})", self.0, self.1)
    }
}

/// The store under test: every call the harness makes, on a local store
/// or through a shared store's lock.
enum Subject {
    Local(TidStore),
    Shared {
        store: SharedTidStore,
        /// Whether its area has a size limit.
        limited: bool,
    },
}

impl Subject {
    fn set_block_offsets(&mut self, block: u32, offsets: &[u16]) -> Result<(), TidStoreError> {
        match self {
            Subject::Local(ts) => ts.set_block_offsets(block, offsets),
            Subject::Shared { store, .. } => store.write().set_block_offsets(block, offsets),
        }
    }

    fn clear(&mut self) {
        match self {
            Subject::Local(ts) => ts.clear(),
            Subject::Shared { store, .. } => store.write().clear(),
        }
    }

    /// Whether a valid call may be refused with `AreaFull`.
    fn limited(&self) -> bool {
        matches!(self, Subject::Shared { limited: true, .. })
    }

    /// What the store holds when empty: nothing, or its area's empty size.
    fn empty_memory(&self) -> usize {
        match self {
            Subject::Local(_) => 0,
            Subject::Shared { store, .. } => store.area().empty_size(),
        }
    }

    fn debug(&self) -> String {
        match self {
            Subject::Local(ts) => format!("{ts:?}"),
            Subject::Shared { store, .. } => format!("{store:?} {:?}", store.read()),
        }
    }

    /// Calls `f` with the store's blocks in ascending order (under the
    /// read lock for a shared store).
    fn with_blocks<R>(
        &self,
        f: impl FnOnce(&mut dyn ExactSizeIterator<Item = DeadBlock<'_>>) -> R,
    ) -> R {
        match self {
            Subject::Local(ts) => f(&mut ts.iter()),
            Subject::Shared { store, .. } => f(&mut store.read().iter()),
        }
    }
}

/// The reads, forwarded to the local store or a shared store's read guard.
macro_rules! subject_reads {
    ($(fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty;)*) => {
        impl Subject {
            $(
                fn $name(&self $(, $arg: $ty)*) -> $ret {
                    match self {
                        Subject::Local(ts) => ts.$name($($arg),*),
                        Subject::Shared { store, .. } => store.read().$name($($arg),*),
                    }
                }
            )*
        }
    };
}

subject_reads! {
    fn is_member(&self, tid: Tid) -> bool;
    fn is_member_each(&self, tids: &[Tid], found: &mut dyn FnMut(Tid, bool)) -> ();
    fn num_tids(&self) -> u64;
    fn num_blocks(&self) -> usize;
    fn memory_usage(&self) -> usize;
    fn max_bytes(&self) -> usize;
    fn is_full(&self) -> bool;
    fn verify(&self) -> Result<(), String>;
}

/// A store and its model.
struct TidHarness {
    store: Subject,
    model: BTreeMap<u32, Vec<u16>>,
    /// The number of offsets in the model.
    tids: usize,
    budget: usize,
}

/// Runs `input` on a new store and on a model, panicking on the first
/// difference.
///
/// # Panics
///
/// On any difference, a failed `verify()`, or a refused call that changed
/// the store: that is, on a bug.
pub fn check_tidstore(input: &TidInput) {
    let budget = input.budget.bytes();
    let store = match input.store {
        StoreKind::Local if input.insert_only => Subject::Local(TidStore::insert_only(budget)),
        StoreKind::Local => Subject::Local(TidStore::new(budget)),
        StoreKind::Shared(limit) => Subject::Shared {
            store: SharedTidStore::create_in(&make_area(limit), budget)
                .expect("a store in a new area"),
            limited: limit.extra().is_some(),
        },
    };
    let mut h = TidHarness {
        store,
        model: BTreeMap::new(),
        tids: 0,
        budget,
    };
    h.check_counts(&"a new store");
    h.check_all(&"a new store");
    for (i, op) in input.ops.iter().enumerate() {
        let at = At(i, op);
        h.apply(op, &input.bases, &at);
        h.check_counts(&at);
        if i % BATCH == BATCH - 1 {
            h.check_all(&at);
        }
    }
    h.check_all(&"after the last op");
    h.clear();
    h.check_all(&"after the final clear");
}

impl TidHarness {
    /// The `index % len`-th block of the model.
    fn nth(&self, index: u16) -> Option<u32> {
        crate::walk::nth_key(&self.model, index)
    }

    fn apply(&mut self, op: &TidOp, bases: &Bases, at: &At<'_>) {
        match op {
            TidOp::Set { block, offsets } => self.set(block.key(bases), &offsets.offsets(), at),
            TidOp::Replace { index, offsets } => {
                if let Some(block) = self.nth(*index) {
                    self.set(block, &offsets.offsets(), at);
                }
            }
            TidOp::SetRun {
                start,
                count,
                step,
                offsets,
            } => {
                let start: u32 = start.key(bases);
                let offsets = offsets.offsets();
                let step = u32::from(*step).max(1);
                for i in 0..u32::from(*count) {
                    let block = start.wrapping_add(i.wrapping_mul(step));
                    let full = self.model.len() >= MAX_BLOCKS || self.tids >= MAX_TIDS;
                    if full && !self.model.contains_key(&block) {
                        break;
                    }
                    self.set(block, &offsets, at);
                }
            }
            TidOp::Probe { block, offset } => self.probe(block.key(bases), *offset, at),
            &TidOp::ProbeNear {
                index,
                pick,
                block_delta,
                offset_delta,
            } => {
                if let Some(block) = self.nth(index) {
                    let offsets = &self.model[&block];
                    let offset = offsets[usize::from(pick) % offsets.len()];
                    self.probe(
                        block.offset(i128::from(block_delta)),
                        offset.wrapping_add_signed(i16::from(offset_delta)),
                        at,
                    );
                }
            }
            &TidOp::CopyOffsets { index, buf_len } => {
                if let Some(block) = self.nth(index) {
                    self.copy_offsets(block, usize::from(buf_len), at);
                }
            }
            TidOp::Iterate => {
                self.compare_iter(at);
                assert!(!self.store.debug().is_empty());
            }
            TidOp::Clear => {
                self.clear();
                self.check_all(at);
            }
            TidOp::Verify => self.check_all(at),
            TidOp::EqualRun {
                start,
                count,
                offsets,
                at: change_at,
                changed,
            } => {
                let start: u32 = start.key(bases);
                let count = u32::from(*count % (MAX_EQUAL_RUN + 1));
                let blocks: Vec<u32> = (0..count).map_while(|i| start.checked_add(i)).collect();
                let offsets = offsets.offsets();
                for &block in &blocks {
                    let full = self.model.len() >= MAX_BLOCKS || self.tids >= MAX_TIDS;
                    if full && !self.model.contains_key(&block) {
                        break;
                    }
                    self.set(block, &offsets, at);
                }
                if let (Some(changed), false) = (changed, blocks.is_empty()) {
                    let block = blocks[usize::from(*change_at) % blocks.len()];
                    self.set(block, &changed.offsets(), at);
                }
                self.probe_each(&blocks, at);
            }
        }
    }

    /// `is_member_each` of TIDs on `blocks` and next to them (each
    /// block's first and last offsets and their neighbours, the ends of
    /// the offset range), in ascending order, against the model.
    fn probe_each(&self, blocks: &[u32], at: &At<'_>) {
        let (Some(&first), Some(&last)) = (blocks.first(), blocks.last()) else {
            return;
        };
        let mut tids = Vec::new();
        let around = [first.wrapping_sub(1)]
            .into_iter()
            .chain(blocks.iter().copied())
            .chain([last.wrapping_add(1)]);
        for block in around {
            let offsets = self.model.get(&block).map_or(&[][..], Vec::as_slice);
            let ends = [offsets.first(), offsets.last()].into_iter().flatten();
            let mut probes: Vec<u16> = ends.flat_map(|&o| [o - 1, o, o + 1]).collect();
            probes.extend([1, MAX_OFFSET]);
            probes.sort_unstable();
            probes.dedup();
            tids.extend(probes.into_iter().map(|o| Tid::new(block, o)));
        }
        let mut answers = Vec::with_capacity(tids.len());
        self.store
            .is_member_each(&tids, &mut |tid, found| answers.push((tid, found)));
        let want: Vec<(Tid, bool)> = tids
            .iter()
            .map(|&tid| {
                let member = self
                    .model
                    .get(&tid.block())
                    .is_some_and(|o| o.binary_search(&tid.offset()).is_ok());
                (tid, member)
            })
            .collect();
        crate::harness::same(&answers, &want, &(at, "is_member_each"));
        for &(tid, found) in answers.iter().step_by(answers.len() / 64 + 1) {
            assert_eq!(
                self.store.is_member(tid),
                found,
                "{at:?}: is_member({tid:?}) and is_member_each differ"
            );
        }
    }

    fn clear(&mut self) {
        self.store.clear();
        self.model.clear();
        self.tids = 0;
    }

    fn set(&mut self, block: u32, offsets: &[u16], at: &At<'_>) {
        let (tids, blocks, memory) = (
            self.store.num_tids(),
            self.store.num_blocks(),
            self.store.memory_usage(),
        );
        let result = self.store.set_block_offsets(block, offsets);
        let what = (at, "set_block_offsets", block, offsets);
        match result {
            Ok(()) => {
                assert!(offsets_valid(offsets), "{what:?}: invalid offsets accepted");
                let old = self.model.insert(block, offsets.to_vec());
                self.tids = self.tids - old.map_or(0, |o| o.len()) + offsets.len();
            }
            Err(e) => {
                // Only a limited area refuses valid offsets, for want of
                // room, and it may give back spare room: no larger.
                let area_full = matches!(e, TidStoreError::AreaFull { .. }) && self.store.limited();
                if !area_full {
                    assert!(
                        !offsets_valid(offsets),
                        "{what:?}: valid offsets refused: {e}"
                    );
                    assert_error_fits(&e, block, offsets);
                }
                assert_eq!(self.store.num_tids(), tids, "{what:?}: refused, num_tids");
                assert_eq!(
                    self.store.num_blocks(),
                    blocks,
                    "{what:?}: refused, num_blocks"
                );
                let now = self.store.memory_usage();
                if area_full {
                    assert!(now <= memory, "{what:?}: a refused call grew the area");
                    if let Err(e) = self.store.verify() {
                        panic!("{what:?}: verify after a refusal: {e}");
                    }
                } else {
                    assert_eq!(now, memory, "{what:?}: refused, memory_usage");
                }
            }
        }
        self.check_block(block, at);
    }

    /// Checks `is_member` for the offsets of `block` in the model (at most
    /// [`PROBES_PER_BLOCK`] of them, spread evenly, first and last
    /// included), for the offsets next to them, and for the ends of the
    /// offset range. The full iteration every batch checks the rest.
    fn check_block(&self, block: u32, at: &At<'_>) {
        let offsets = self.model.get(&block).map_or(&[][..], Vec::as_slice);
        let stride = offsets.len().div_ceil(PROBES_PER_BLOCK).max(1);
        let sample = offsets.iter().step_by(stride).chain(offsets.last());
        for &o in sample {
            for probe in [o - 1, o, o + 1] {
                self.probe(block, probe, at);
            }
        }
        for probe in [0, 1, MAX_OFFSET, MAX_OFFSET + 1, u16::MAX] {
            self.probe(block, probe, at);
        }
    }

    fn probe(&self, block: u32, offset: u16, at: &At<'_>) {
        let expected = self
            .model
            .get(&block)
            .is_some_and(|offsets| offsets.binary_search(&offset).is_ok());
        assert_eq!(
            self.store.is_member(Tid::new(block, offset)),
            expected,
            "{at:?}: is_member(({block},{offset}))"
        );
    }

    fn copy_offsets(&self, block: u32, buf_len: usize, at: &At<'_>) {
        const SENTINEL: u16 = 0xDEAD;
        let want = &self.model[&block];
        let mut buf = vec![SENTINEL; buf_len];
        let count = self.store.with_blocks(|blocks| {
            blocks
                .filter(|b| b.block() == block)
                .map(|dead| dead.copy_offsets(&mut buf))
                .next()
        });
        let Some(count) = count else {
            panic!("{at:?}: block {block} missing from iter()");
        };
        assert_eq!(
            count,
            want.len(),
            "{at:?}: copy_offsets of block {block} into {buf_len}"
        );
        let copied = buf_len.min(want.len());
        assert_eq!(buf[..copied], want[..copied], "{at:?}: copied offsets");
        assert!(
            buf[copied..].iter().all(|&x| x == SENTINEL),
            "{at:?}: copy_offsets wrote past the offsets"
        );
    }

    /// Checks the counts, emptiness and budget against the model.
    fn check_counts(&self, at: &dyn fmt::Debug) {
        assert_eq!(self.store.num_tids(), self.tids as u64, "{at:?}: num_tids");
        assert_eq!(
            self.store.num_blocks(),
            self.model.len(),
            "{at:?}: num_blocks"
        );
        if let Subject::Local(ts) = &self.store {
            assert_eq!(ts.is_empty(), self.model.is_empty(), "{at:?}: is_empty");
        }
        assert_eq!(self.store.max_bytes(), self.budget, "{at:?}: max_bytes");
        assert_eq!(
            self.store.is_full(),
            self.store.memory_usage() > self.budget,
            "{at:?}: is_full"
        );
    }

    /// `verify`, the counts, a full iteration, and no memory when empty.
    fn check_all(&self, at: &dyn fmt::Debug) {
        let tids: usize = self.model.values().map(Vec::len).sum();
        assert_eq!(
            tids, self.tids,
            "{at:?}: the harness lost count of the model"
        );
        if let Err(e) = self.store.verify() {
            panic!("{at:?}: verify failed: {e}");
        }
        self.check_counts(at);
        self.compare_iter(at);
        let (memory, empty) = (self.store.memory_usage(), self.store.empty_memory());
        if self.model.is_empty() {
            assert_eq!(memory, empty, "{at:?}: an empty store holds memory");
        } else {
            assert!(memory > empty, "{at:?}: a non-empty store holds no memory");
        }
    }

    /// Compares the whole iteration, block by block, with the model.
    fn compare_iter(&self, at: &dyn fmt::Debug) {
        self.store.with_blocks(|it| self.compare_blocks(it, at));
    }

    fn compare_blocks(
        &self,
        it: &mut dyn ExactSizeIterator<Item = DeadBlock<'_>>,
        at: &dyn fmt::Debug,
    ) {
        let mut model = self.model.iter();
        loop {
            assert_eq!(it.len(), model.len(), "{at:?}: iter().len()");
            match (it.next(), model.next()) {
                (None, None) => break,
                (Some(dead), Some((&block, offsets))) => {
                    assert_eq!(dead.block(), block, "{at:?}: next block");
                    assert!(!dead.is_empty(), "{at:?}: block {block} is empty");
                    assert_eq!(dead.len(), offsets.len(), "{at:?}: block {block} len()");
                    assert!(
                        dead.offsets().eq(offsets.iter().copied()),
                        "{at:?}: block {block}: offsets() {:?}, model {offsets:?}",
                        dead.offsets().collect::<Vec<_>>()
                    );
                }
                (got, want) => panic!(
                    "{at:?}: iter() gives {:?}, the model {want:?}",
                    got.map(|d| d.block())
                ),
            }
        }
        assert!(it.next().is_none(), "{at:?}: iter() resumes after its end");
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    /// The committed seeds decode to what make_seeds.py meant (every
    /// operation kind present) and pass.
    #[test]
    fn seeds_decode_and_pass() {
        let mut kinds = std::collections::BTreeSet::new();
        for (_, input) in crate::seeds::decoded::<TidInput>("tidstore") {
            kinds.extend(crate::seeds::kinds(&input.ops));
            check_tidstore(&input);
        }
        assert_eq!(kinds.len(), 10, "operation kinds in the seeds: {kinds:?}");
    }
}
