//! The TID store's set operations: two stores decoded from the input,
//! combined with `union_with`, `intersect_with` and `difference_with`
//! (chained, in place, or into a copy with a tiny budget) against
//! `BTreeSet<(block, offset)>` models, with `is_subset` and
//! `ordered_lookup` checked along the way.
//!
//! Blocks lie mostly in a window of 256 (so the two stores meet), and
//! every offset list is valid and takes each entry form: up to three
//! offsets, runs, bitmaps (strides and 64-bit patterns), offsets at both
//! ends of `1..=2048` and the full block. After every step both stores are
//! verified and compared with their models, and probed with
//! `is_member` and `ordered_lookup().is_member` (sorted and unsorted). A
//! combination must either succeed, giving the model's result within the
//! store's budget, or fail with `OverBudget` (never for an empty result)
//! and leave the store exactly as it was: contents, `num_tids`,
//! `num_blocks` and `memory_usage`.

use std::collections::BTreeSet;
use std::fmt;

use arbitrary::Arbitrary;
use tidstore::{Tid, TidStore, TidStoreError, MAX_OFFSET};

use crate::values::mix64;

/// The first block of the window most blocks fall in.
pub const WINDOW: u32 = 0x0001_2300;

/// The most blocks one input sets per store before the steps.
pub const MAX_BLOCKS_PER_STORE: usize = 32;

/// The most steps one input takes.
pub const MAX_STEPS: usize = 32;

/// The most TIDs of a store's model probed after a step (spread evenly).
pub const MAX_MODEL_PROBES: usize = 256;

/// A TID set: `(block, offset)` pairs.
pub type TidSet = BTreeSet<(u32, u16)>;

/// One input of the `tidstore_set_ops` target.
#[derive(Arbitrary, Clone, Debug)]
pub struct SetOpsInput {
    /// The two stores: how they are made, and their blocks.
    pub stores: [StoreSpec; 2],
    /// What is done to them, in order.
    pub steps: Vec<Step>,
    /// TIDs probed after every step, besides those of the models.
    pub probes: Vec<(BlockPick, u16)>,
}

/// How one store is made.
#[derive(Arbitrary, Clone, Debug)]
pub struct StoreSpec {
    /// `TidStore::insert_only` rather than `TidStore::new`.
    pub insert_only: bool,
    /// The budget.
    pub budget: SetBudget,
    /// Its blocks, set in this order (a block set twice keeps the last).
    pub blocks: Vec<(BlockPick, OffsetForm)>,
}

/// A store's budget.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum SetBudget {
    /// 1 GiB: nothing goes over.
    Large,
    /// This many bytes: most combinations go over.
    Tiny(u16),
}

impl SetBudget {
    /// The budget in bytes.
    pub fn bytes(self) -> usize {
        match self {
            SetBudget::Large => 1 << 30,
            SetBudget::Tiny(n) => usize::from(n),
        }
    }
}

/// A block number.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum BlockPick {
    /// `WINDOW + n`: the blocks both stores use.
    Window(u8),
    /// `WINDOW + 256 * n`: one block per last-level node.
    Spread(u8),
    /// Any block.
    Raw(u32),
}

impl BlockPick {
    /// The block number.
    pub fn block(self) -> u32 {
        match self {
            BlockPick::Window(n) => WINDOW + u32::from(n),
            BlockPick::Spread(n) => WINDOW + (u32::from(n) << 8),
            BlockPick::Raw(b) => b,
        }
    }
}

/// The offsets of one block, valid by construction (an empty result sets
/// offset 1 instead).
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum OffsetForm {
    /// One to three offsets: the inline form.
    Few {
        /// How many (1 + n % 3).
        n: u8,
        /// The offsets, each modulo 2048 plus 1.
        offsets: [u16; 3],
    },
    /// `start..start + len`, within `1..=2048`: the run form.
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
    /// The set bits of `bits`, offset `base + bit`: a dense bitmap.
    Bits {
        /// First offset of the 64 (modulo 2048, plus 1).
        base: u16,
        /// Which of the 64 are set.
        bits: u64,
    },
    /// Offsets `1..=low % 9` and `2048 - high % 9..=2048`: both ends.
    Edges {
        /// How many at the low end.
        low: u8,
        /// How many at the high end.
        high: u8,
    },
    /// Every offset.
    Full,
}

impl OffsetForm {
    /// The offsets, strictly ascending within `1..=2048` and never empty.
    pub fn offsets(self) -> Vec<u16> {
        let first = |start: u16| start % MAX_OFFSET + 1;
        let mut offsets: Vec<u16> = match self {
            OffsetForm::Few { n, offsets } => offsets[..1 + usize::from(n % 3)]
                .iter()
                .map(|&o| first(o))
                .collect(),
            OffsetForm::Run { start, len } => {
                let start = first(start);
                let end = (start + len % (MAX_OFFSET + 1)).min(MAX_OFFSET + 1);
                (start..end).collect()
            }
            OffsetForm::Stride { start, step, count } => {
                let start = first(start);
                let step = u16::from(step).max(1);
                (0..u16::from(count))
                    .map_while(|i| {
                        start
                            .checked_add(i.checked_mul(step)?)
                            .filter(|&o| o <= MAX_OFFSET)
                    })
                    .collect()
            }
            OffsetForm::Bits { base, bits } => {
                let base = first(base);
                (0..64u16)
                    .filter(|&i| (bits >> i) & 1 == 1)
                    .map(|i| base + i)
                    .filter(|&o| o <= MAX_OFFSET)
                    .collect()
            }
            OffsetForm::Edges { low, high } => {
                let low = u16::from(low % 9);
                let high = u16::from(high % 9);
                (1..=low)
                    .chain(MAX_OFFSET + 1 - high..=MAX_OFFSET)
                    .collect()
            }
            OffsetForm::Full => (1..=MAX_OFFSET).collect(),
        };
        offsets.sort_unstable();
        offsets.dedup();
        if offsets.is_empty() {
            offsets.push(1);
        }
        offsets
    }
}

/// Which set operation.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TidSetOp {
    /// `union_with`.
    Union,
    /// `intersect_with`.
    Intersect,
    /// `difference_with`.
    Difference,
}

impl TidSetOp {
    /// The operation's name in [`TidStoreError::OverBudget`].
    pub fn name(self) -> &'static str {
        match self {
            TidSetOp::Union => "union",
            TidSetOp::Intersect => "intersection",
            TidSetOp::Difference => "difference",
        }
    }

    /// The model's result of `a op b`.
    pub fn apply(self, a: &TidSet, b: &TidSet) -> TidSet {
        match self {
            TidSetOp::Union => a.union(b).copied().collect(),
            TidSetOp::Intersect => a.intersection(b).copied().collect(),
            TidSetOp::Difference => a.difference(b).copied().collect(),
        }
    }
}

/// One step.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Step {
    /// The second store (or the first) combined into the other, in place:
    /// steps chain.
    Combine {
        /// Which operation.
        op: TidSetOp,
        /// Combine the first store into the second (else the second into
        /// the first).
        into_second: bool,
    },
    /// As `Combine`, into a fresh copy of the store (made with
    /// `set_block_offsets`) whose budget is `max_bytes`; the stores do not
    /// change.
    CombineCopy {
        /// Which operation.
        op: TidSetOp,
        /// Copy the second store (else the first).
        into_second: bool,
        /// The copy's budget.
        max_bytes: u16,
    },
    /// `set_block_offsets` on one store.
    Set {
        /// The second store (else the first).
        second: bool,
        /// The block.
        block: BlockPick,
        /// Its offsets.
        offsets: OffsetForm,
    },
    /// `clear()` one store.
    Clear {
        /// The second store (else the first).
        second: bool,
    },
}

/// A store and its model.
struct Side {
    store: TidStore,
    model: TidSet,
    insert_only: bool,
}

impl Side {
    fn new(insert_only: bool, max_bytes: usize) -> Self {
        Self {
            store: make_store(insert_only, max_bytes),
            model: TidSet::new(),
            insert_only,
        }
    }

    fn set(&mut self, block: u32, offsets: &[u16]) {
        if let Err(e) = self.store.set_block_offsets(block, offsets) {
            panic!("set_block_offsets({block}, {offsets:?}) refused valid offsets: {e}");
        }
        let old: Vec<(u32, u16)> = self
            .model
            .range((block, 0)..=(block, u16::MAX))
            .copied()
            .collect();
        for tid in old {
            self.model.remove(&tid);
        }
        self.model.extend(offsets.iter().map(|&o| (block, o)));
    }
}

fn make_store(insert_only: bool, max_bytes: usize) -> TidStore {
    if insert_only {
        TidStore::insert_only(max_bytes)
    } else {
        TidStore::new(max_bytes)
    }
}

/// Checks a store against its model in full: `verify`, contents (block
/// by block, each non-empty with `len()` counting its offsets), counts,
/// and memory held exactly when non-empty.
fn check_store(store: &TidStore, model: &TidSet, what: &dyn fmt::Debug) {
    if let Err(e) = store.verify() {
        panic!("{what:?}: verify failed: {e}");
    }
    let mut want = model.iter().copied().peekable();
    let mut blocks = 0;
    for dead in store.iter() {
        let block = dead.block();
        blocks += 1;
        assert!(!dead.is_empty(), "{what:?}: block {block} is empty");
        let mut len = 0;
        for offset in dead.offsets() {
            len += 1;
            match want.next() {
                Some(tid) if tid == (block, offset) => {}
                other => panic!(
                    "{what:?}: the store holds ({block}, {offset}) where the model has {other:?}"
                ),
            }
        }
        assert_eq!(dead.len(), len, "{what:?}: block {block}: len()");
    }
    if let Some(missing) = want.next() {
        panic!("{what:?}: the store lacks {missing:?} and what follows in the model");
    }
    assert_eq!(store.num_tids(), model.len() as u64, "{what:?}: num_tids");
    assert_eq!(store.num_blocks(), blocks, "{what:?}: num_blocks");
    assert_eq!(store.is_empty(), model.is_empty(), "{what:?}: is_empty");
    if model.is_empty() {
        assert_eq!(
            store.memory_usage(),
            0,
            "{what:?}: an empty store holds memory"
        );
    } else {
        assert!(
            store.memory_usage() > 0,
            "{what:?}: a non-empty store holds no memory"
        );
    }
}

/// Probes `store` with `is_member` and with one `ordered_lookup` over
/// `probes` in the order given, comparing both with the model.
fn check_probes(store: &TidStore, model: &TidSet, probes: &[(u32, u16)], what: &dyn fmt::Debug) {
    let mut lookup = store.ordered_lookup();
    for (i, &(block, offset)) in probes.iter().enumerate() {
        let tid = Tid::new(block, offset);
        let want = model.contains(&(block, offset));
        assert_eq!(
            store.is_member(tid),
            want,
            "{what:?}: is_member(({block}, {offset}))"
        );
        assert_eq!(
            lookup.is_member(tid),
            want,
            "{what:?}: ordered_lookup().is_member(({block}, {offset})), probe {i} of {}",
            probes.len()
        );
    }
}

/// The two stores, their models and the probes of the input.
struct Harness {
    sides: [Side; 2],
    probes: Vec<(u32, u16)>,
}

/// Where a check failed, formatted only when it does.
#[derive(Clone, Copy)]
struct At<'a>(Option<(usize, &'a Step)>, &'static str);

impl fmt::Debug for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some((i, step)) => write!(f, "step {i} ({step:?}): {}", self.1),
            None => write!(f, "before the steps: {}", self.1),
        }
    }
}

impl At<'_> {
    fn on(self, what: &'static str) -> Self {
        At(self.0, what)
    }
}

/// Runs `input`, panicking on the first difference from the models.
///
/// # Panics
///
/// On any difference, a failed `verify()`, an error other than
/// `OverBudget`, or a refused operation that changed its store: that is,
/// on a bug.
pub fn check_tidstore_set_ops(input: &SetOpsInput) {
    let mut h = Harness {
        sides: [0, 1].map(|i| {
            let spec = &input.stores[i];
            Side::new(spec.insert_only, spec.budget.bytes())
        }),
        probes: input.probes.iter().map(|&(b, o)| (b.block(), o)).collect(),
    };
    for (side, spec) in h.sides.iter_mut().zip(&input.stores) {
        for &(block, form) in spec.blocks.iter().take(MAX_BLOCKS_PER_STORE) {
            side.set(block.block(), &form.offsets());
        }
    }
    h.check(At(None, "the stores as built"));
    for (i, step) in input.steps.iter().take(MAX_STEPS).enumerate() {
        let at = At(Some((i, step)), "");
        h.apply(step, at);
        h.check(at.on("after the step"));
    }
}

impl Harness {
    fn apply(&mut self, step: &Step, at: At<'_>) {
        match *step {
            Step::Combine { op, into_second } => {
                let [a, b] = &mut self.sides;
                let (into, from) = if into_second { (b, a) } else { (a, b) };
                let expected = op.apply(&into.model, &from.model);
                if combine(&mut into.store, &into.model, &from.store, op, &expected, at) {
                    into.model = expected;
                }
            }
            Step::CombineCopy {
                op,
                into_second,
                max_bytes,
            } => {
                let [a, b] = &self.sides;
                let (into, from) = if into_second { (b, a) } else { (a, b) };
                let mut copy = make_store(into.insert_only, usize::from(max_bytes));
                for (block, offsets) in by_block(&into.model) {
                    if let Err(e) = copy.set_block_offsets(block, &offsets) {
                        panic!("{at:?}: copying block {block}: valid offsets refused: {e}");
                    }
                }
                check_store(&copy, &into.model, &at.on("the copy"));
                let expected = op.apply(&into.model, &from.model);
                let model = if combine(&mut copy, &into.model, &from.store, op, &expected, at) {
                    expected
                } else {
                    into.model.clone()
                };
                check_subsets(&copy, &model, &from.store, &from.model, &at.on("the copy"));
                let probes = self.probes_for(&model);
                check_probes(&copy, &model, &probes, &at.on("the copy, probes sorted"));
            }
            Step::Set {
                second,
                block,
                offsets,
            } => self.sides[usize::from(second)].set(block.block(), &offsets.offsets()),
            Step::Clear { second } => {
                let side = &mut self.sides[usize::from(second)];
                side.store.clear();
                side.model.clear();
            }
        }
    }

    /// The probes for a store of `model`: TIDs of the model (at most
    /// [`MAX_MODEL_PROBES`], spread evenly) with their neighbours, the ends
    /// of each block's offset range, and the input's, sorted.
    fn probes_for(&self, model: &TidSet) -> Vec<(u32, u16)> {
        let stride = model.len().div_ceil(MAX_MODEL_PROBES).max(1);
        let mut probes = self.probes.clone();
        for &(block, offset) in model.iter().step_by(stride) {
            probes.extend([
                (block, offset - 1),
                (block, offset),
                (block, offset + 1),
                (block, MAX_OFFSET),
                (block.wrapping_add(1), offset),
            ]);
        }
        probes.sort_unstable();
        probes
    }

    /// Both stores in full, subsets both ways, and the probes sorted and
    /// in a scrambled order.
    fn check(&self, at: At<'_>) {
        for (i, side) in self.sides.iter().enumerate() {
            let name = if i == 0 {
                "first store"
            } else {
                "second store"
            };
            check_store(&side.store, &side.model, &at.on(name));
            let sorted = self.probes_for(&side.model);
            check_probes(&side.store, &side.model, &sorted, &at.on(name));
            let mut scrambled = sorted;
            let n = scrambled.len();
            for j in 0..n {
                let k = (mix64(j as u64) % n as u64) as usize;
                scrambled.swap(j, k);
            }
            scrambled.extend(self.probes.iter().rev());
            check_probes(&side.store, &side.model, &scrambled, &at.on(name));
        }
        let [a, b] = &self.sides;
        check_subsets(&a.store, &a.model, &b.store, &b.model, &at.on("is_subset"));
    }
}

/// Combines `from` into `into` with `op`: either it succeeds, giving
/// `expected` within the budget, or it fails with `OverBudget` and `into`
/// is unchanged. Returns whether it succeeded.
fn combine(
    into: &mut TidStore,
    before: &TidSet,
    from: &TidStore,
    op: TidSetOp,
    expected: &TidSet,
    at: At<'_>,
) -> bool {
    let (tids, blocks, memory) = (into.num_tids(), into.num_blocks(), into.memory_usage());
    let result = match op {
        TidSetOp::Union => into.union_with(from),
        TidSetOp::Intersect => into.intersect_with(from),
        TidSetOp::Difference => into.difference_with(from),
    };
    let max = into.max_bytes();
    match result {
        Ok(()) => {
            check_store(into, expected, &at.on("the result"));
            assert!(
                into.memory_usage() <= max,
                "{at:?}: the result holds {} bytes, over the budget of {max}",
                into.memory_usage()
            );
            assert!(
                !into.is_full(),
                "{at:?}: is_full() after a result within budget"
            );
            true
        }
        Err(TidStoreError::OverBudget {
            operation,
            needed,
            max_bytes,
        }) => {
            let what = at.on("refused over budget");
            assert!(
                !expected.is_empty(),
                "{what:?}: an empty result refused ({needed} bytes needed of {max_bytes})"
            );
            assert_eq!(operation, op.name(), "{what:?}: the error's operation");
            assert_eq!(max_bytes, max, "{what:?}: the error's max_bytes");
            assert!(
                needed > max_bytes,
                "{what:?}: needed {needed} within {max_bytes}"
            );
            assert_eq!(into.num_tids(), tids, "{what:?}: num_tids changed");
            assert_eq!(into.num_blocks(), blocks, "{what:?}: num_blocks changed");
            assert_eq!(
                into.memory_usage(),
                memory,
                "{what:?}: memory_usage changed"
            );
            check_store(into, before, &what);
            false
        }
        Err(e) => panic!("{at:?}: {} failed with {e:?}", op.name()),
    }
}

/// `is_subset` both ways and with itself, against the models.
fn check_subsets(
    a: &TidStore,
    a_model: &TidSet,
    b: &TidStore,
    b_model: &TidSet,
    at: &dyn fmt::Debug,
) {
    assert_eq!(
        a.is_subset(b),
        a_model.is_subset(b_model),
        "{at:?}: first.is_subset(second)"
    );
    assert_eq!(
        b.is_subset(a),
        b_model.is_subset(a_model),
        "{at:?}: second.is_subset(first)"
    );
    assert!(a.is_subset(a), "{at:?}: a store is not a subset of itself");
}

/// A model's blocks with their offsets, in order.
fn by_block(model: &TidSet) -> Vec<(u32, Vec<u16>)> {
    let mut out: Vec<(u32, Vec<u16>)> = Vec::new();
    for &(block, offset) in model {
        match out.last_mut() {
            Some((b, offsets)) if *b == block => offsets.push(offset),
            _ => out.push((block, vec![offset])),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_is_valid() {
        let forms = [
            OffsetForm::Few {
                n: 2,
                offsets: [5, 5, 2047],
            },
            OffsetForm::Run {
                start: 2047,
                len: 5,
            },
            OffsetForm::Stride {
                start: 0,
                step: 0,
                count: 0,
            },
            OffsetForm::Bits {
                base: 2040,
                bits: u64::MAX,
            },
            OffsetForm::Edges { low: 0, high: 0 },
            OffsetForm::Edges { low: 8, high: 8 },
            OffsetForm::Full,
        ];
        for form in forms {
            assert!(crate::tids::offsets_valid(&form.offsets()), "{form:?}");
        }
        assert_eq!(
            OffsetForm::Edges { low: 2, high: 1 }.offsets(),
            [1, 2, 2048]
        );
        assert_eq!(OffsetForm::Full.offsets().len(), 2048);
    }

    /// The committed seeds decode to what make_seeds.py meant and pass.
    #[test]
    fn seeds_decode_and_pass() {
        let mut seeds = 0;
        for (path, input) in crate::seeds::decoded::<SetOpsInput>("tidstore_set_ops") {
            assert!(
                input.stores.iter().all(|s| !s.blocks.is_empty())
                    && input.steps.len() >= 6
                    && input.probes.len() >= 3,
                "{path:?} decodes to {input:?}"
            );
            check_tidstore_set_ops(&input);
            seeds += 1;
        }
        assert!(seeds >= 3);
    }

    #[test]
    fn a_small_input_runs() {
        let input = SetOpsInput {
            stores: [
                StoreSpec {
                    insert_only: false,
                    budget: SetBudget::Large,
                    blocks: vec![
                        (BlockPick::Window(1), OffsetForm::Full),
                        (BlockPick::Window(2), OffsetForm::Edges { low: 3, high: 3 }),
                    ],
                },
                StoreSpec {
                    insert_only: true,
                    budget: SetBudget::Tiny(100),
                    blocks: vec![(BlockPick::Window(1), OffsetForm::Run { start: 9, len: 100 })],
                },
            ],
            steps: vec![
                Step::CombineCopy {
                    op: TidSetOp::Union,
                    into_second: false,
                    max_bytes: 10,
                },
                Step::Combine {
                    op: TidSetOp::Union,
                    into_second: true,
                },
                Step::Combine {
                    op: TidSetOp::Difference,
                    into_second: false,
                },
                Step::Combine {
                    op: TidSetOp::Intersect,
                    into_second: true,
                },
            ],
            probes: vec![(BlockPick::Window(1), 0), (BlockPick::Raw(0), 1)],
        };
        check_tidstore_set_ops(&input);
    }
}
