//! The TID bitmap workloads TB-1 to TB-6 (bitmap index and heap scans):
//! WORKLOADS.md's `matches(blocks, tpp, ppm, seed)`, the bitmaps built
//! from it, their combination and their walk, generic over
//! [`TidBitmapPeer`].
//!
//! - `matches(blocks, tpp, ppm, seed)`: the TIDs `(blk, off)` with
//!   `blk in 0..blocks`, `off in 1..=tpp` and
//!   `hash64((seed << 48) | (blk << 16) | off) % 1,000,000 < ppm`, in block
//!   then offset order ([`matches()`]). A *random* index order is that list
//!   shuffled with PRNG seed `seed`; a *correlated* one is the list as it
//!   is.
//! - TB-1 and TB-2 build one unlimited bitmap, TB-3 one within a budget;
//!   TB-4 builds A and B and intersects them into A; TB-5 builds eight and
//!   ORs the other seven into the first; TB-6 makes 1,000,000 bitmaps of
//!   one page each, each within the budget: add five TIDs, walk, drop.
//! - Every add is one [`TidBitmapPeer::add_tid`] call; the walk gives each
//!   page's block and its exact offsets or the lossy mark to a
//!   [`PageSink`], which counts ([`Walked`]) or checks them against the
//!   model ([`Verified`]).
//!
//! `--scale` multiplies the blocks (1,000,000), TB-6's rounds and TB-3's
//! budget, so that a scaled TB-3 still turns most of its pages lossy
//! (the budget is kept at least [`MIN_SCALED_BUDGET`]); TB-6's budget is
//! not scaled, its bitmaps being one page at every scale. TB-6's blocks
//! are `r % 1,000,000` at every scale.

use std::hint::black_box;

use tidstore::Tid;

use crate::rng::{hash64, shuffle_seeded};
use crate::structures::{PageSink, TidBitmapPeer};

use super::Sizing;

/// Blocks `0..TB_BLOCKS` of every TB workload but TB-6.
pub const TB_BLOCKS: u64 = 1_000_000;

/// Tuples per page: offsets `1..=TB_TPP`.
pub const TB_TPP: u16 = 100;

/// The budget of TB-3 and TB-6: 4 MiB.
pub const TB_BUDGET: usize = 4_194_304;

/// The least budget a scaled TB-3 is given.
pub const MIN_SCALED_BUDGET: usize = 32 << 10;

/// TB-6's rounds.
pub const TB6_ROUNDS: u64 = 1_000_000;

/// TB-6's offsets on each round's page: `1..=TB6_OFFSETS`.
pub const TB6_OFFSETS: u16 = 5;

/// TB-6's block of round `r` is `r % TB6_BLOCK_MODULUS`.
pub const TB6_BLOCK_MODULUS: u64 = 1_000_000;

/// TB-5's bitmaps: seeds `1..=TB5_SEEDS`.
pub const TB5_SEEDS: u64 = 8;

/// The ids of the TB workloads, in order.
pub const TB_IDS: [&str; 6] = ["TB-1", "TB-2", "TB-3", "TB-4", "TB-5", "TB-6"];

/// The order an index returns its TIDs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexOrder {
    /// `matches` shuffled with PRNG seed `seed`.
    Random,
    /// `matches` as it is, in block then offset order.
    Correlated,
}

impl IndexOrder {
    /// `random` or `correlated`, as in `params`.
    pub fn name(self) -> &'static str {
        match self {
            IndexOrder::Random => "random",
            IndexOrder::Correlated => "correlated",
        }
    }
}

/// One `matches` list: the share of TIDs that match, and the seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Matches {
    /// Matches per million TIDs.
    pub ppm: u32,
    /// The seed: of the hash, and of the shuffle of a random order.
    pub seed: u64,
}

/// What a TB workload builds and does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TbShape {
    /// TB-1 to TB-3: one bitmap.
    One {
        /// Its TIDs.
        side: Matches,
        /// The order they are added in.
        order: IndexOrder,
    },
    /// TB-4: `A ∩= B`, both added in random order.
    And {
        /// A, the result.
        a: Matches,
        /// B.
        b: Matches,
    },
    /// TB-5: `matches(…, ppm, s)` for `s in 1..=seeds`, added in random
    /// order, the others OR-ed into the first.
    Or {
        /// Matches per million of each.
        ppm: u32,
        /// Bitmaps: seeds `1..=seeds`.
        seeds: u64,
    },
    /// TB-6: rounds of a new bitmap, the TIDs `(r % 1,000,000, 1..=5)`
    /// added, a walk, a drop.
    Rounds {
        /// Rounds.
        rounds: u64,
    },
}

/// One TB workload with its parameters fixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TbCase {
    /// The WORKLOADS.md id.
    pub id: &'static str,
    /// Blocks `0..blocks` (TB-6: unused, its blocks are `r % 1,000,000`).
    pub blocks: u32,
    /// Tuples per page: a lossy page stands for this many recheck tuples
    /// (TB-6: its five).
    pub tpp: u16,
    /// The memory budget of every bitmap, `None` for unlimited.
    pub budget: Option<usize>,
    /// What is built and done.
    pub shape: TbShape,
}

/// The case of TB workload `id` (upper case).
pub(crate) fn case(id: &str, sizing: Sizing) -> Option<TbCase> {
    let blocks = u32::try_from(sizing.apply(TB_BLOCKS)).unwrap_or(u32::MAX);
    let one = |ppm, order| TbShape::One {
        side: Matches { ppm, seed: 1 },
        order,
    };
    let (shape, budget) = match id {
        "TB-1" => (one(10_000, IndexOrder::Random), None),
        "TB-2" => (one(100_000, IndexOrder::Correlated), None),
        "TB-3" => (
            one(100_000, IndexOrder::Random),
            Some(scaled_budget(sizing)),
        ),
        "TB-4" => (
            TbShape::And {
                a: Matches {
                    ppm: 10_000,
                    seed: 1,
                },
                b: Matches {
                    ppm: 100_000,
                    seed: 2,
                },
            },
            None,
        ),
        "TB-5" => (
            TbShape::Or {
                ppm: 5_000,
                seeds: TB5_SEEDS,
            },
            None,
        ),
        "TB-6" => (
            TbShape::Rounds {
                rounds: sizing.apply(TB6_ROUNDS),
            },
            Some(TB_BUDGET),
        ),
        _ => return None,
    };
    let id = TB_IDS.into_iter().find(|&i| i == id)?;
    let tpp = if matches!(shape, TbShape::Rounds { .. }) {
        TB6_OFFSETS
    } else {
        TB_TPP
    };
    Some(TbCase {
        id,
        blocks,
        tpp,
        budget,
        shape,
    })
}

/// TB-3's budget at `sizing`: 4 MiB scaled, at least
/// [`MIN_SCALED_BUDGET`]; 4 MiB exactly at scale 1.
fn scaled_budget(sizing: Sizing) -> usize {
    let scaled = usize::try_from(sizing.apply(TB_BUDGET as u64)).unwrap_or(usize::MAX);
    if sizing.scale == 1.0 {
        scaled
    } else {
        scaled.max(MIN_SCALED_BUDGET)
    }
}

impl TbCase {
    /// A short name for headings and chart labels (WORKLOADS.md gives
    /// none).
    pub fn name(&self) -> &'static str {
        match self.id {
            "TB-1" => "1% random",
            "TB-2" => "10% correlated",
            "TB-3" => "10% random, budget",
            "TB-4" => "1% AND 10%",
            "TB-5" => "8 x 0.5% OR",
            _ => "one-page rounds",
        }
    }

    /// The parameters, as WORKLOADS.md writes them:
    /// `blocks=…,tpp=…,ppm=…,order=…,budget=…` (`budget=0` for unlimited;
    /// TB-4 `ppm=10000+100000`, TB-5 `ppm=5000x8`), TB-6
    /// `rounds=…,budget=…`.
    pub fn params(&self) -> String {
        let budget = self.budget.unwrap_or(0);
        let (ppm, order) = match self.shape {
            TbShape::One { side, order } => (side.ppm.to_string(), order),
            TbShape::And { a, b } => (format!("{}+{}", a.ppm, b.ppm), IndexOrder::Random),
            TbShape::Or { ppm, seeds } => (format!("{ppm}x{seeds}"), IndexOrder::Random),
            TbShape::Rounds { rounds } => return format!("rounds={rounds},budget={budget}"),
        };
        format!(
            "blocks={},tpp={},ppm={ppm},order={},budget={budget}",
            self.blocks,
            self.tpp,
            order.name()
        )
    }

    /// Whether pages may be lossy in a correct result: TB-3 only (TB-6's
    /// bitmaps, of one page, never need to be).
    pub fn lossy_allowed(&self) -> bool {
        self.budget.is_some() && matches!(self.shape, TbShape::One { .. })
    }

    /// Bitmaps built (TB-6: one per round).
    pub fn bitmaps(&self) -> u64 {
        match self.shape {
            TbShape::One { .. } => 1,
            TbShape::And { .. } => 2,
            TbShape::Or { seeds, .. } => seeds,
            TbShape::Rounds { rounds } => rounds,
        }
    }
}

/// Whether `(blk, off)` is in `matches(…, ppm, seed)`.
#[inline]
pub fn is_match(blk: u32, off: u16, ppm: u32, seed: u64) -> bool {
    let key = (seed << 48) | (u64::from(blk) << 16) | u64::from(off);
    hash64(key) % 1_000_000 < u64::from(ppm)
}

/// WORKLOADS.md's `matches(blocks, tpp, ppm, seed)`, in block then offset
/// order.
pub fn matches(blocks: u32, tpp: u16, ppm: u32, seed: u64) -> Vec<Tid> {
    let expected = u64::from(blocks) * u64::from(tpp) * u64::from(ppm) / 1_000_000;
    let mut out = Vec::with_capacity(usize::try_from(expected + expected / 16 + 16).unwrap_or(0));
    for blk in 0..blocks {
        for off in 1..=tpp {
            if is_match(blk, off, ppm, seed) {
                out.push(Tid::new(blk, off));
            }
        }
    }
    out
}

/// What a walk saw, or what a correct walk sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Walked {
    /// Pages, exact and lossy.
    pub pages: u64,
    /// Exact pages.
    pub exact_pages: u64,
    /// Lossy pages.
    pub lossy_pages: u64,
    /// Offsets the exact pages gave.
    pub tuples: u64,
    /// Tuples to recheck: `tpp` for each lossy page, plus the tuples of
    /// exact pages marked recheck.
    pub recheck_tuples: u64,
    /// Wrapping sum of `(blk << 16) | off` over the exact pages' offsets.
    pub checksum: u64,
}

impl Walked {
    /// Adds `other`'s counts to these (TB-6 sums its rounds' walks).
    pub fn add(&mut self, other: &Walked) {
        self.pages += other.pages;
        self.exact_pages += other.exact_pages;
        self.lossy_pages += other.lossy_pages;
        self.tuples += other.tuples;
        self.recheck_tuples += other.recheck_tuples;
        self.checksum = self.checksum.wrapping_add(other.checksum);
    }

    /// The walk of a bitmap that holds `tids` (ascending, distinct) in
    /// exact pages, none to recheck.
    pub fn of_exact(tids: &[Tid]) -> Walked {
        let mut walked = Walked::default();
        let mut last = None;
        for &tid in tids {
            if last != Some(tid.block()) {
                walked.pages += 1;
                last = Some(tid.block());
            }
            walked.tuples += 1;
            walked.checksum = walked.checksum.wrapping_add(encode(tid));
        }
        walked.exact_pages = walked.pages;
        walked
    }
}

/// `(blk << 16) | off`.
#[inline]
fn encode(tid: Tid) -> u64 {
    (u64::from(tid.block()) << 16) | u64::from(tid.offset())
}

/// The [`PageSink`] of the measured walk: counts pages and tuples into a
/// [`Walked`].
#[derive(Debug, Clone, Default)]
pub struct WalkCounts {
    /// Tuples a lossy page stands for.
    pub tpp: u64,
    /// The counts so far.
    pub walked: Walked,
}

impl PageSink for WalkCounts {
    #[inline]
    fn exact(&mut self, block: u32, offsets: impl Iterator<Item = u16>, recheck: bool) {
        let base = u64::from(block) << 16;
        let mut n = 0;
        let mut sum = 0u64;
        for off in offsets {
            n += 1;
            sum = sum.wrapping_add(base | u64::from(off));
        }
        let w = &mut self.walked;
        w.pages += 1;
        w.exact_pages += 1;
        w.tuples += n;
        w.checksum = w.checksum.wrapping_add(sum);
        if recheck {
            w.recheck_tuples += n;
        }
    }

    #[inline]
    fn lossy(&mut self, _block: u32) {
        let w = &mut self.walked;
        w.pages += 1;
        w.lossy_pages += 1;
        w.recheck_tuples += self.tpp;
    }
}

/// The iterate phase: walks `bitmap` in block order, counting what it
/// gives; `tpp` tuples per lossy page.
#[inline(never)]
pub fn walk<B: TidBitmapPeer>(bitmap: &B, tpp: u16) -> Walked {
    let mut sink = WalkCounts {
        tpp: u64::from(tpp),
        walked: Walked::default(),
    };
    bitmap.walk(&mut sink);
    sink.walked
}

/// What a walk did wrong, against the model: all zero for a correct one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Verified {
    /// Pages given out of block order, or more than once.
    pub out_of_order: u64,
    /// Exact pages whose offsets are not exactly the model's matches on
    /// that block (an exact page the model has no match on included).
    pub wrong_pages: u64,
    /// Matching TIDs on no page of the walk, exact or lossy.
    pub missed: u64,
}

impl Verified {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Verified) {
        self.out_of_order += other.out_of_order;
        self.wrong_pages += other.wrong_pages;
        self.missed += other.missed;
    }

    /// Whether the walk was right.
    pub fn is_clean(&self) -> bool {
        *self == Verified::default()
    }
}

/// The [`PageSink`] that checks a walk against the model's TIDs, in one
/// pass beside them.
struct Verifier<'a> {
    /// The model's TIDs, ascending.
    model: &'a [Tid],
    /// The first model TID not yet accounted for.
    pos: usize,
    /// The last block given.
    last: Option<u32>,
    found: Verified,
}

impl Verifier<'_> {
    /// Checks the order of `block`, counts the model's TIDs before it as
    /// missed, and returns the end of its run of model TIDs.
    fn enter(&mut self, block: u32) -> usize {
        if self.last.is_some_and(|last| last >= block) {
            self.found.out_of_order += 1;
        }
        self.last = Some(block);
        while self.pos < self.model.len() && self.model[self.pos].block() < block {
            self.found.missed += 1;
            self.pos += 1;
        }
        let mut end = self.pos;
        while end < self.model.len() && self.model[end].block() == block {
            end += 1;
        }
        end
    }
}

impl PageSink for Verifier<'_> {
    fn exact(&mut self, block: u32, mut offsets: impl Iterator<Item = u16>, _recheck: bool) {
        let end = self.enter(block);
        let run = &self.model[self.pos..end];
        let mut want = run.iter().map(|t| t.offset());
        let same = loop {
            match (offsets.next(), want.next()) {
                (None, None) => break !run.is_empty(),
                (Some(a), Some(b)) if a == b => {}
                _ => break false,
            }
        };
        if !same {
            self.found.wrong_pages += 1;
        }
        self.pos = end;
    }

    fn lossy(&mut self, block: u32) {
        self.pos = self.enter(block);
    }
}

/// Checks `bitmap`'s walk against `model`, the TIDs it should hold
/// (ascending, distinct): every one on a page, exact or lossy, and exact
/// pages holding exactly their matches, in block order.
pub fn verify<B: TidBitmapPeer>(bitmap: &B, model: &[Tid]) -> Verified {
    let mut verifier = Verifier {
        model,
        pos: 0,
        last: None,
        found: Verified::default(),
    };
    bitmap.walk(&mut verifier);
    verifier.found.missed += (model.len() - verifier.pos) as u64;
    verifier.found
}

/// The data of a TB workload.
#[derive(Debug, Clone)]
pub struct TbData {
    /// Each bitmap's TIDs in the order they are added: one list for TB-1
    /// to TB-3, A then B for TB-4, seeds 1 to 8 for TB-5; none for TB-6.
    pub sides: Vec<Vec<Tid>>,
    /// The TIDs of the result, ascending (TB-6: none, its rounds are
    /// arithmetic).
    pub result: Vec<Tid>,
    /// The walk of a correct result with no lossy page (TB-6: of all its
    /// rounds together).
    pub expected: Walked,
}

/// What a TB workload adds, and what its result holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TbModel {
    /// TIDs added, one call each, over every bitmap.
    pub adds: u64,
    /// Bitmaps built.
    pub bitmaps: u64,
    /// The walk of a correct result with no lossy page.
    pub expected: Walked,
}

impl TbData {
    /// Generates the data of `case`.
    pub fn generate(case: &TbCase) -> Self {
        let list = |m: Matches| matches(case.blocks, case.tpp, m.ppm, m.seed);
        let shuffled = |m: Matches| {
            let mut tids = list(m);
            shuffle_seeded(&mut tids, m.seed);
            tids
        };
        match case.shape {
            TbShape::One { side, order } => {
                let result = list(side);
                let added = match order {
                    IndexOrder::Correlated => result.clone(),
                    IndexOrder::Random => {
                        let mut tids = result.clone();
                        shuffle_seeded(&mut tids, side.seed);
                        tids
                    }
                };
                Self::with_result(vec![added], result)
            }
            TbShape::And { a, b } => {
                let (la, lb) = (list(a), list(b));
                let result = intersect_sorted(&la, &lb);
                let mut sa = la;
                shuffle_seeded(&mut sa, a.seed);
                let mut sb = lb;
                shuffle_seeded(&mut sb, b.seed);
                Self::with_result(vec![sa, sb], result)
            }
            TbShape::Or { ppm, seeds } => {
                let sides: Vec<Vec<Tid>> = (1..=seeds)
                    .map(|seed| shuffled(Matches { ppm, seed }))
                    .collect();
                let mut result: Vec<Tid> = sides.iter().flatten().copied().collect();
                result.sort_unstable();
                result.dedup();
                Self::with_result(sides, result)
            }
            TbShape::Rounds { rounds } => Self {
                sides: Vec::new(),
                result: Vec::new(),
                expected: rounds_walk(rounds),
            },
        }
    }

    fn with_result(sides: Vec<Vec<Tid>>, result: Vec<Tid>) -> Self {
        let expected = Walked::of_exact(&result);
        Self {
            sides,
            result,
            expected,
        }
    }

    /// What the workload adds and what its result holds.
    pub fn model(&self, case: &TbCase) -> TbModel {
        let adds = match case.shape {
            TbShape::Rounds { rounds } => rounds * u64::from(TB6_OFFSETS),
            _ => self.sides.iter().map(|s| s.len() as u64).sum(),
        };
        TbModel {
            adds,
            bitmaps: case.bitmaps(),
            expected: self.expected,
        }
    }

    /// A new bitmap (within `case`'s budget) given the TIDs of side
    /// `side`, one [`TidBitmapPeer::add_tid`] each, in order: the build
    /// of one bitmap.
    #[inline(never)]
    pub fn build<B: TidBitmapPeer>(&self, case: &TbCase, side: usize) -> B {
        let mut bitmap = B::new(case.budget);
        for &tid in &self.sides[side] {
            bitmap.add_tid(tid);
        }
        bitmap
    }

    /// Every bitmap of the workload, built in order.
    pub fn build_all<B: TidBitmapPeer>(&self, case: &TbCase) -> Vec<B> {
        (0..self.sides.len()).map(|i| self.build(case, i)).collect()
    }
}

/// The operation phase: TB-4's `A ∩= B` and TB-5's unions of the others
/// into the first, leaving the result in `bitmaps[0]`; nothing for one
/// bitmap.
#[inline(never)]
pub fn combine<B: TidBitmapPeer>(case: &TbCase, bitmaps: &mut [B]) {
    let Some((first, rest)) = bitmaps.split_first_mut() else {
        return;
    };
    match case.shape {
        TbShape::And { .. } => {
            for other in rest {
                first.intersect_with(other);
            }
        }
        TbShape::Or { .. } => {
            for other in rest {
                first.union_with(other);
            }
        }
        TbShape::One { .. } | TbShape::Rounds { .. } => {}
    }
}

/// TB-6's block of round `r`.
#[inline]
pub fn round_block(r: u64) -> u32 {
    (r % TB6_BLOCK_MODULUS) as u32
}

/// TB-6's rounds: a new bitmap within `budget`, the TIDs
/// `(r % 1,000,000, 1..=5)` added one call each, with `WALK` a walk,
/// then the drop. Returns the walks' counts added up (zero without
/// `WALK`).
#[inline(never)]
pub fn rounds<B: TidBitmapPeer, const WALK: bool>(rounds: u64, budget: Option<usize>) -> Walked {
    let mut total = Walked::default();
    for r in 0..rounds {
        let block = round_block(r);
        let mut bitmap = B::new(budget);
        for off in 1..=TB6_OFFSETS {
            bitmap.add_tid(Tid::new(block, off));
        }
        if WALK {
            total.add(&walk(&bitmap, TB6_OFFSETS));
        } else {
            black_box(&bitmap);
        }
        drop(bitmap);
    }
    total
}

/// The TIDs of TB-6's round `r`.
pub fn round_tids(r: u64) -> [Tid; TB6_OFFSETS as usize] {
    let block = round_block(r);
    std::array::from_fn(|i| Tid::new(block, i as u16 + 1))
}

/// The walks of TB-6's `rounds` rounds, added up, by arithmetic.
pub fn rounds_walk(rounds: u64) -> Walked {
    let per_round = u64::from(TB6_OFFSETS);
    let offsets: u64 = (1..=per_round).sum();
    let checksum = (0..rounds).fold(0u64, |sum, r| {
        let base = u64::from(round_block(r)) << 16;
        sum.wrapping_add(base.wrapping_mul(per_round).wrapping_add(offsets))
    });
    Walked {
        pages: rounds,
        exact_pages: rounds,
        lossy_pages: 0,
        tuples: rounds * per_round,
        recheck_tuples: 0,
        checksum,
    }
}

/// The TIDs in both of two ascending, distinct lists.
fn intersect_sorted(a: &[Tid], b: &[Tid]) -> Vec<Tid> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::Size;

    fn scaled(id: &str, scale: f64) -> TbCase {
        case(id, Sizing::scaled(Size::Default, scale)).unwrap()
    }

    #[test]
    fn params_are_workloads_md_s() {
        let full = |id| case(id, Sizing::default()).unwrap().params();
        assert_eq!(
            full("TB-1"),
            "blocks=1000000,tpp=100,ppm=10000,order=random,budget=0"
        );
        assert_eq!(
            full("TB-2"),
            "blocks=1000000,tpp=100,ppm=100000,order=correlated,budget=0"
        );
        assert_eq!(
            full("TB-3"),
            "blocks=1000000,tpp=100,ppm=100000,order=random,budget=4194304"
        );
        assert_eq!(
            full("TB-4"),
            "blocks=1000000,tpp=100,ppm=10000+100000,order=random,budget=0"
        );
        assert_eq!(
            full("TB-5"),
            "blocks=1000000,tpp=100,ppm=5000x8,order=random,budget=0"
        );
        assert_eq!(full("TB-6"), "rounds=1000000,budget=4194304");
        assert_eq!(case("TB-7", Sizing::default()), None);
        assert_eq!(
            case("TB-1", Sizing::new(Size::Large)),
            case("TB-1", Sizing::default())
        );
        // Scaled: blocks, rounds and TB-3's budget (at least 32 KiB).
        assert_eq!(scaled("TB-3", 0.1).budget, Some(419_430));
        assert_eq!(scaled("TB-3", 0.001).budget, Some(MIN_SCALED_BUDGET));
        assert_eq!(scaled("TB-6", 0.01).params(), "rounds=10000,budget=4194304");
        assert_eq!(scaled("TB-2", 0.01).blocks, 10_000);
        assert!(scaled("TB-3", 0.01).lossy_allowed());
        assert!(!scaled("TB-6", 0.01).lossy_allowed());
        assert!(!scaled("TB-1", 0.01).lossy_allowed());
    }

    #[test]
    fn matches_follows_the_definition() {
        let tids = matches(300, 100, 100_000, 1);
        let literal: Vec<Tid> = (0..300u32)
            .flat_map(|blk| (1..=100u16).map(move |off| (blk, off)))
            .filter(|&(blk, off)| {
                let key = (1u64 << 48) | (u64::from(blk) << 16) | u64::from(off);
                hash64(key) % 1_000_000 < 100_000
            })
            .map(|(blk, off)| Tid::new(blk, off))
            .collect();
        assert_eq!(tids, literal);
        // About 10%, in block then offset order.
        assert!((2_700..3_300).contains(&tids.len()), "{}", tids.len());
        assert!(tids.windows(2).all(|w| w[0] < w[1]));
        // Another seed, other TIDs.
        assert_ne!(matches(300, 100, 100_000, 2), tids);
    }

    #[test]
    fn data_follows_the_workloads() {
        let c = scaled("TB-1", 0.002);
        let data = TbData::generate(&c);
        let mut expected = matches(c.blocks, 100, 10_000, 1);
        assert_eq!(data.result, expected);
        shuffle_seeded(&mut expected, 1);
        assert_eq!(data.sides, [expected]);

        let c = scaled("TB-2", 0.002);
        let data = TbData::generate(&c);
        assert_eq!(data.sides[0], data.result);
        assert_eq!(data.expected, Walked::of_exact(&data.result));

        let c = scaled("TB-4", 0.005);
        let data = TbData::generate(&c);
        let (a, b) = (
            matches(c.blocks, 100, 10_000, 1),
            matches(c.blocks, 100, 100_000, 2),
        );
        assert_eq!(data.sides[0].len(), a.len());
        assert_eq!(data.sides[1].len(), b.len());
        let both: Vec<Tid> = a.iter().copied().filter(|t| b.contains(t)).collect();
        assert_eq!(data.result, both);
        assert!(!both.is_empty());

        let c = scaled("TB-5", 0.002);
        let data = TbData::generate(&c);
        assert_eq!(data.sides.len(), 8);
        let mut all: Vec<Tid> = (1..=8)
            .flat_map(|s| matches(c.blocks, 100, 5_000, s))
            .collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(data.result, all);
        assert_eq!(
            data.model(&c).adds,
            data.sides.iter().map(|s| s.len() as u64).sum::<u64>()
        );

        let c = scaled("TB-6", 0.001);
        let data = TbData::generate(&c);
        let rounds: Vec<Tid> = (0..1000).flat_map(round_tids).collect();
        assert_eq!(data.expected, Walked::of_exact(&rounds));
        assert_eq!(data.model(&c).adds, 5_000);
        assert_eq!(round_block(1_000_007), 7);
    }
}
