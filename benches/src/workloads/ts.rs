//! The TID store workloads TS-1 to TS-8, TS-D and TS-S: WORKLOADS.md's
//! `prepare(maxblk, ndead, interval, consecutive, page_interval)` and the
//! measured phases, generic over [`DeadTidSet`].

use tidstore::Tid;

use crate::rng::shuffle_prefix;
use crate::structures::DeadTidSet;
pub use crate::structures::lookup;

use super::{Size, Sizing};

/// One TID store workload: the arguments of `prepare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TsCase {
    /// The WORKLOADS.md id.
    pub id: &'static str,
    /// Blocks `0..maxblk`.
    pub maxblk: u32,
    /// Dead offsets per dead block.
    pub ndead: u32,
    /// Every `interval`-th offset is dead.
    pub interval: u32,
    /// The first `consecutive` blocks of every `page_interval` have dead
    /// offsets.
    pub consecutive: u32,
    /// See `consecutive`.
    pub page_interval: u32,
}

/// WORKLOADS.md's table: id and `prepare` arguments at the default size.
pub const TS_TABLE: [(&str, [u32; 5]); 10] = [
    ("TS-1", [1_000_000, 10, 1, 1, 20]),
    ("TS-2", [1_000_000, 10, 1, 1, 1]),
    ("TS-3", [1_000_000, 2, 100, 1, 1]),
    ("TS-4", [1_000_000, 100, 1, 1, 1]),
    ("TS-5", [1_000_000, 150, 1, 10_000, 20_000]),
    ("TS-6", [1_000_000, 10, 1, 10_000, 20_000]),
    ("TS-7", [1_000_000, 150, 1, 1000, 999_000]),
    ("TS-8", [1_000_000, 100, 1, 50, 100]),
    ("TS-D", [1_000_000, 100, 1, 1000, 1100]),
    ("TS-S", [1_000_000, 2, 50, 1, 1000]),
];

/// TS-S's `maxblk` at the large size (the only TS workload with one).
pub const TS_S_LARGE_MAXBLK: u32 = 10_000_000;

/// The case of TS workload `id` (upper case).
pub(crate) fn case(id: &str, sizing: Sizing) -> Option<TsCase> {
    let &(id, [maxblk, ndead, interval, consecutive, page_interval]) =
        TS_TABLE.iter().find(|(i, _)| *i == id)?;
    let maxblk = if id == "TS-S" && sizing.size == Size::Large {
        TS_S_LARGE_MAXBLK
    } else {
        maxblk
    };
    let maxblk = u32::try_from(sizing.apply(u64::from(maxblk))).unwrap_or(u32::MAX);
    Some(TsCase {
        id,
        maxblk,
        ndead,
        interval,
        consecutive,
        page_interval,
    })
}

impl TsCase {
    /// `maxoff = ndead * interval`: index TIDs have offsets `1..=maxoff`.
    pub fn maxoff(&self) -> u32 {
        self.ndead * self.interval
    }

    /// Whether block `blk` has dead TIDs.
    #[inline]
    pub fn is_dead_block(&self, blk: u32) -> bool {
        blk % self.page_interval < self.consecutive
    }

    /// Whether offset `off` is dead on a block with dead TIDs.
    #[inline]
    pub fn is_dead_offset(&self, off: u32) -> bool {
        off.is_multiple_of(self.interval)
    }

    /// Whether index TID `tid` is dead.
    #[inline]
    pub fn is_dead(&self, tid: Tid) -> bool {
        self.is_dead_block(tid.block()) && self.is_dead_offset(u32::from(tid.offset()))
    }

    /// The dead offsets of a block with dead TIDs, ascending.
    pub fn dead_offsets(&self) -> Vec<u16> {
        (1..=self.maxoff())
            .filter(|&off| self.is_dead_offset(off))
            .map(|off| off as u16)
            .collect()
    }

    /// The blocks with dead TIDs, ascending.
    pub fn dead_blocks(&self) -> Vec<u32> {
        (0..self.maxblk)
            .filter(|&blk| self.is_dead_block(blk))
            .collect()
    }

    /// The dead TID count, by arithmetic rather than enumeration.
    pub fn dead_by_arithmetic(&self) -> u64 {
        let (maxblk, pi, c) = (
            u64::from(self.maxblk),
            u64::from(self.page_interval),
            u64::from(self.consecutive),
        );
        let blocks = maxblk / pi * c.min(pi) + (maxblk % pi).min(c);
        let offsets = u64::from(self.maxoff() / self.interval);
        blocks * offsets
    }

    /// The parameters, as `name=value` pairs joined by commas.
    pub fn params(&self) -> String {
        format!(
            "maxblk={},ndead={},interval={},consecutive={},page_interval={}",
            self.maxblk, self.ndead, self.interval, self.consecutive, self.page_interval
        )
    }
}

/// The lookup orders of the TS workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Index TIDs in block order.
    Ordered,
    /// Index TIDs shuffled.
    Shuffled,
}

impl Order {
    /// Both orders, as reported.
    pub const ALL: [Order; 2] = [Order::Ordered, Order::Shuffled];

    /// `ordered` or `shuffled`.
    pub fn name(self) -> &'static str {
        match self {
            Order::Ordered => "ordered",
            Order::Shuffled => "shuffled",
        }
    }
}

/// `prepare`'s output.
#[derive(Debug, Clone)]
pub struct TsData {
    /// Blocks with dead TIDs, ascending.
    pub dead_blocks: Vec<u32>,
    /// The dead offsets of each of those blocks, ascending (the pattern is
    /// the same on every dead block, so it is kept once).
    pub dead_offsets: Vec<u16>,
    /// Every index TID in block order.
    pub ordered: Vec<Tid>,
    /// The index TIDs shuffled: all of them, or the first `n` of
    /// WORKLOADS.md's shuffle when [`prepare_sampled`](Self::prepare_sampled)
    /// was given a sample size `n` below the index count (a uniform random
    /// sample, in random order).
    pub shuffled: Vec<Tid>,
    /// The dead TIDs among `shuffled`: what a shuffled pass must match.
    pub shuffled_dead: u64,
}

impl TsData {
    /// WORKLOADS.md's `prepare`, every index TID in both orders.
    pub fn prepare(case: &TsCase) -> Self {
        Self::prepare_sampled(case, None)
    }

    /// WORKLOADS.md's `prepare`, with the shuffled lookups cut to the first
    /// `shuffled_sample` TIDs of the shuffle when that is fewer than the
    /// index TIDs.
    ///
    /// A shuffled pass costs the same per lookup on a prefix of the shuffle
    /// as on all of it (each lookup is an independent uniform draw), while
    /// on the 100-200 M index TIDs of TS-3 to TS-S the slow peers (the
    /// array, `BTreeSet`, roaring) take minutes per full pass; sampling
    /// keeps the default `bench-report` run within its time budget. The
    /// ordered pass always visits every index TID: its cost per lookup
    /// depends on walking whole blocks in order.
    pub fn prepare_sampled(case: &TsCase, shuffled_sample: Option<u64>) -> Self {
        let maxoff = case.maxoff();
        assert!(
            (1..=u32::from(tidstore::MAX_OFFSET)).contains(&maxoff),
            "{}: maxoff {maxoff} is not a valid offset",
            case.id
        );
        let dead_offsets = case.dead_offsets();
        let dead_blocks = case.dead_blocks();
        let index = u64::from(case.maxblk) * u64::from(maxoff);
        let mut ordered = Vec::with_capacity(usize::try_from(index).expect("index fits"));
        for blk in 0..case.maxblk {
            ordered.extend((1..=maxoff).map(|off| Tid::new(blk, off as u16)));
        }
        let sample = shuffled_sample.map_or(ordered.len(), |n| {
            usize::try_from(n).map_or(ordered.len(), |n| n.min(ordered.len()))
        });
        let mut shuffled = ordered.clone();
        shuffle_prefix(&mut shuffled, sample);
        shuffled.truncate(sample);
        shuffled.shrink_to_fit();
        let shuffled_dead = shuffled.iter().filter(|&&t| case.is_dead(t)).count() as u64;
        Self {
            dead_blocks,
            dead_offsets,
            ordered,
            shuffled,
            shuffled_dead,
        }
    }

    /// Whether the shuffled pass is a sample rather than every index TID.
    pub fn is_sampled(&self) -> bool {
        self.shuffled.len() < self.ordered.len()
    }

    /// Lookups in a pass in `order`.
    pub fn lookups(&self, order: Order) -> u64 {
        self.index_tids(order).len() as u64
    }

    /// What a correct pass in `order` matches: the dead count, or the dead
    /// TIDs of the sample.
    pub fn expected_matched(&self, order: Order) -> u64 {
        match order {
            Order::Ordered => self.dead(),
            Order::Shuffled => self.shuffled_dead,
        }
    }

    /// Number of dead TIDs.
    pub fn dead(&self) -> u64 {
        self.dead_blocks.len() as u64 * self.dead_offsets.len() as u64
    }

    /// Number of index TIDs.
    pub fn index(&self) -> u64 {
        self.ordered.len() as u64
    }

    /// The index TIDs in `order`.
    pub fn index_tids(&self, order: Order) -> &[Tid] {
        match order {
            Order::Ordered => &self.ordered,
            Order::Shuffled => &self.shuffled,
        }
    }

    /// The load phase: a new set, then one `set_block_offsets` per dead
    /// block in block order (through
    /// [`set_blocks_each`](DeadTidSet::set_blocks_each) for a
    /// [`BATCHED`](DeadTidSet::BATCHED) set: the same calls, in the same
    /// order).
    #[inline(never)]
    pub fn load<S: DeadTidSet>(&self) -> S {
        let mut set = S::with_capacity(self.dead());
        if S::BATCHED {
            set.set_blocks_each(&self.dead_blocks, &self.dead_offsets);
        } else {
            for &blk in &self.dead_blocks {
                set.set_block_offsets(blk, &self.dead_offsets);
            }
        }
        set
    }

    /// The lookup phase: `is_member` for every index TID in `order`; the
    /// number matched. In block order, a set answers through
    /// [`DeadTidSet::count_members_ascending`].
    #[inline(never)]
    pub fn lookup<S: DeadTidSet>(&self, set: &S, order: Order) -> u64 {
        match order {
            Order::Ordered => set.count_members_ascending(&self.ordered),
            Order::Shuffled => lookup(set, &self.shuffled),
        }
    }
}

/// What the iterate phase saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Walked {
    /// Blocks visited.
    pub blocks: u64,
    /// Offsets extracted.
    pub tids: u64,
    /// Wrapping sum of `block * 2048 + offset` over the offsets.
    pub checksum: u64,
}

/// The iterate phase: walk `set` in block order, extracting each block's
/// offsets.
#[inline(never)]
pub fn iterate<S: DeadTidSet>(set: &S) -> Walked {
    let mut walked = Walked::default();
    set.for_each_block(|block, offsets| {
        walked.blocks += 1;
        walked.tids += offsets.len() as u64;
        for &off in offsets {
            walked.checksum = walked
                .checksum
                .wrapping_add(u64::from(block) * 2048 + u64::from(off));
        }
    });
    walked
}

impl TsData {
    /// What a correct set's iterate phase sees.
    pub fn expected_walk(&self) -> Walked {
        let per_block: u64 = self.dead_offsets.iter().map(|&o| u64::from(o)).sum();
        let n = self.dead_offsets.len() as u64;
        let checksum = self.dead_blocks.iter().fold(0u64, |sum, &b| {
            sum.wrapping_add(
                (u64::from(b) * 2048)
                    .wrapping_mul(n)
                    .wrapping_add(per_block),
            )
        });
        Walked {
            blocks: self.dead_blocks.len() as u64,
            tids: self.dead(),
            checksum,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::shuffle;

    fn scaled(id: &str, scale: f64) -> TsCase {
        case(id, Sizing::scaled(Size::Default, scale)).unwrap()
    }

    #[test]
    fn dead_counts_match_arithmetic() {
        // 2 % of each workload only at full depth: it is most of the time.
        let scales = test_depth::pick(
            &[0.000_5, 0.001, 0.003_7, 0.02][..],
            &[0.000_5, 0.001, 0.003_7],
            &[0.000_5, 0.001, 0.003_7],
        );
        for (id, _) in TS_TABLE {
            for &scale in scales {
                let c = scaled(id, scale);
                let data = TsData::prepare(&c);
                assert_eq!(data.dead(), c.dead_by_arithmetic(), "{id} at {scale}");
                assert_eq!(data.index(), u64::from(c.maxblk) * u64::from(c.maxoff()));
                // The literal definition: index TIDs filtered.
                let literal = data.ordered.iter().filter(|&&t| c.is_dead(t)).count() as u64;
                assert_eq!(literal, data.dead(), "{id} at {scale}");
            }
        }
    }

    #[test]
    fn full_size_dead_counts() {
        let dead = |id| case(id, Sizing::default()).unwrap().dead_by_arithmetic();
        assert_eq!(dead("TS-1"), 50_000 * 10);
        assert_eq!(dead("TS-2"), 10_000_000);
        assert_eq!(dead("TS-3"), 2_000_000);
        assert_eq!(dead("TS-4"), 100_000_000);
        assert_eq!(dead("TS-5"), 500_000 * 150);
        assert_eq!(dead("TS-7"), 2000 * 150);
        assert_eq!(dead("TS-S"), 1000 * 2);
        let large = case("TS-S", Sizing::new(Size::Large)).unwrap();
        assert_eq!(large.maxblk, TS_S_LARGE_MAXBLK);
        assert_eq!(
            case("TS-1", Sizing::new(Size::Large)).unwrap().maxblk,
            1_000_000
        );
    }

    #[test]
    fn prepare_shuffles_the_index() {
        let data = TsData::prepare(&scaled("TS-3", 0.001));
        let mut expected = data.ordered.clone();
        shuffle(&mut expected);
        assert_eq!(data.shuffled, expected);
        assert_eq!(data.dead_offsets, [100, 200]);
        assert!(!data.is_sampled());
        assert_eq!(data.expected_matched(Order::Shuffled), data.dead());
    }

    #[test]
    fn a_sample_is_the_shuffle_prefix_with_its_dead_count() {
        let case = scaled("TS-8", 0.001);
        let full = TsData::prepare(&case);
        for n in [0, 1, 1000, full.index() - 1, full.index(), full.index() + 5] {
            let data = TsData::prepare_sampled(&case, Some(n));
            let len = n.min(full.index()) as usize;
            assert_eq!(data.shuffled, full.shuffled[..len], "sample {n}");
            assert_eq!(data.ordered, full.ordered);
            assert_eq!(data.is_sampled(), len < full.ordered.len());
            let dead = full.shuffled[..len]
                .iter()
                .filter(|&&t| case.is_dead(t))
                .count() as u64;
            assert_eq!(data.expected_matched(Order::Shuffled), dead);
            assert_eq!(data.expected_matched(Order::Ordered), full.dead());
        }
        // A sample of half the TIDs holds about half the dead ones.
        let half = TsData::prepare_sampled(&case, Some(full.index() / 2));
        let ratio = half.shuffled_dead as f64 / (full.dead() as f64 / 2.0);
        assert!((0.9..1.1).contains(&ratio), "ratio {ratio}");
    }
}
