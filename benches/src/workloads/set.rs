//! The set-operation workloads SET-1 and SET-2: two structures A and B
//! built untimed, then `A ∪= B` and `A ∩= B`, each timed on a fresh copy
//! of A, generic over [`SetOps`](crate::peers::SetOps).
//!
//! - SET-1: TID stores, A = the dead TIDs of TS-6, B = the dead TIDs of
//!   TS-8 (both at the same `maxblk`);
//! - SET-2: `u64 -> u64` trees, A = the first `n` keys of `prng()` (seed
//!   0), B = keys `n/2 .. n/2 + n` of the same stream, value = key; `n` is
//!   1,000,000 (default) or 10,000,000 (large), as RT-3's key counts.
//!
//! Every structure's result sizes (and a checksum of its contents) are
//! checked against a model computed once from sorted vectors.

use std::cmp::Ordering;

use crate::rng::SplitMix64;
use crate::structures::{TidSide, element_checksum};

use super::Sizing;
use super::ts::{self, TsCase};

/// SET-2's key count at the default size (WORKLOADS.md: A is the first
/// 1,000,000 keys of the stream).
pub const SET2_KEYS: u64 = 1_000_000;

/// SET-2's key count at the large size, RT-3's large count.
pub const SET2_KEYS_LARGE: u64 = 10_000_000;

/// One set-operation workload with its parameters fixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetCase {
    /// SET-1: A = the dead TIDs of TS-6, B = those of TS-8.
    Tids {
        /// TS-6 at this size.
        a: TsCase,
        /// TS-8 at this size.
        b: TsCase,
    },
    /// SET-2: A = keys `0..nkeys` of `prng()`, B = keys
    /// `nkeys/2 .. nkeys/2 + nkeys`, value = key.
    Keys {
        /// Keys in each of A and B.
        nkeys: u64,
    },
}

/// The case of SET workload `id` (upper case).
pub(crate) fn case(id: &str, sizing: Sizing) -> Option<SetCase> {
    match id {
        // TS-6 and TS-8 have one size; the large SET-1 is the default one.
        "SET-1" => Some(SetCase::Tids {
            a: ts::case("TS-6", sizing)?,
            b: ts::case("TS-8", sizing)?,
        }),
        "SET-2" => Some(SetCase::Keys {
            nkeys: sizing.pick(SET2_KEYS, SET2_KEYS_LARGE),
        }),
        _ => None,
    }
}

impl SetCase {
    /// The WORKLOADS.md id.
    pub fn id(&self) -> &'static str {
        match self {
            SetCase::Tids { .. } => "SET-1",
            SetCase::Keys { .. } => "SET-2",
        }
    }

    /// What is combined, for headings.
    pub fn name(&self) -> &'static str {
        match self {
            SetCase::Tids { .. } => "TID stores",
            SetCase::Keys { .. } => "trees (u64 -> u64)",
        }
    }

    /// The parameters, as `name=value` pairs joined by commas.
    pub fn params(&self) -> String {
        match self {
            SetCase::Tids { a, b } => {
                format!("a={},b={},maxblk={}", a.id, b.id, a.maxblk)
            }
            SetCase::Keys { nkeys } => {
                let (a, b) = key_ranges(*nkeys);
                format!(
                    "nkeys={nkeys},a={}..{},b={}..{}",
                    a.start, a.end, b.start, b.end
                )
            }
        }
    }
}

/// SET-2's stream ranges: A = `0..n`, B = `n/2 .. n/2 + n`.
pub fn key_ranges(nkeys: u64) -> (std::ops::Range<u64>, std::ops::Range<u64>) {
    let start = nkeys / 2;
    (0..nkeys, start..start + nkeys)
}

impl From<&TsCase> for TidSide {
    /// The dead TIDs of `case`, as its load phase gives them.
    fn from(case: &TsCase) -> Self {
        Self {
            id: case.id,
            blocks: case.dead_blocks(),
            offsets: case.dead_offsets(),
        }
    }
}

/// The data of a set workload: A and B.
#[derive(Debug, Clone)]
pub enum SetData {
    /// SET-1.
    Tids {
        /// TS-6's dead TIDs.
        a: TidSide,
        /// TS-8's dead TIDs.
        b: TidSide,
    },
    /// SET-2: the keys of A and of B, in stream order (each value is its
    /// key).
    Keys {
        /// Keys `0..n` of the stream.
        a: Vec<u64>,
        /// Keys `n/2 .. n/2 + n` of the stream.
        b: Vec<u64>,
    },
}

impl SetData {
    /// Generates the data of `case`.
    pub fn generate(case: &SetCase) -> Self {
        match case {
            SetCase::Tids { a, b } => SetData::Tids {
                a: TidSide::from(a),
                b: TidSide::from(b),
            },
            SetCase::Keys { nkeys } => {
                let (a, b) = key_ranges(*nkeys);
                let mut rng = SplitMix64::new(0);
                let stream: Vec<u64> = (0..b.end).map(|_| rng.next_u64()).collect();
                let cut =
                    |r: std::ops::Range<u64>| stream[r.start as usize..r.end as usize].to_vec();
                SetData::Keys {
                    a: cut(a),
                    b: cut(b),
                }
            }
        }
    }

    /// What a correct structure's results hold, computed by merging the
    /// two sides' sorted, deduplicated elements.
    pub fn model(&self) -> SetModel {
        match self {
            SetData::Tids { a, b } => SetModel::merge(a.encoded(), b.encoded()),
            SetData::Keys { a, b } => {
                let sorted = |keys: &[u64]| {
                    let mut v = keys.to_vec();
                    v.sort_unstable();
                    v.dedup();
                    v
                };
                let (a, b) = (sorted(a), sorted(b));
                SetModel::merge(a.iter().copied(), b.iter().copied())
            }
        }
    }
}

/// The correct results of a set workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SetModel {
    /// Distinct elements of A.
    pub a_len: u64,
    /// Distinct elements of B.
    pub b_len: u64,
    /// Elements of `A ∪ B`.
    pub union_len: u64,
    /// Elements of `A ∩ B`.
    pub intersect_len: u64,
    /// Wrapping sum of [`element_checksum`] over `A ∪ B` (each value being
    /// its key).
    pub union_sum: u64,
    /// The same over `A ∩ B`.
    pub intersect_sum: u64,
}

impl SetModel {
    /// The model of two ascending, duplicate-free sequences, by one merge.
    pub fn merge(a: impl Iterator<Item = u64>, b: impl Iterator<Item = u64>) -> Self {
        let mut model = SetModel::default();
        let add = |model: &mut SetModel, key: u64, both: bool| {
            let sum = element_checksum(key, key);
            model.union_len += 1;
            model.union_sum = model.union_sum.wrapping_add(sum);
            if both {
                model.intersect_len += 1;
                model.intersect_sum = model.intersect_sum.wrapping_add(sum);
            }
        };
        let (mut a, mut b) = (a.peekable(), b.peekable());
        loop {
            let order = match (a.peek(), b.peek()) {
                (None, None) => break,
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some(x), Some(y)) => x.cmp(y),
            };
            match order {
                Ordering::Less => {
                    let key = a.next().expect("peeked");
                    model.a_len += 1;
                    add(&mut model, key, false);
                }
                Ordering::Greater => {
                    let key = b.next().expect("peeked");
                    model.b_len += 1;
                    add(&mut model, key, false);
                }
                Ordering::Equal => {
                    let key = a.next().expect("peeked");
                    b.next();
                    model.a_len += 1;
                    model.b_len += 1;
                    add(&mut model, key, true);
                }
            }
        }
        model
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::Size;

    #[test]
    fn full_size_sides() {
        let Some(SetCase::Tids { a, b }) = case("SET-1", Sizing::default()) else {
            panic!("SET-1")
        };
        assert_eq!((a.id, b.id), ("TS-6", "TS-8"));
        assert_eq!(a.dead_by_arithmetic(), 5_000_000);
        assert_eq!(b.dead_by_arithmetic(), 50_000_000);
        assert_eq!(
            case("SET-1", Sizing::new(Size::Large)),
            case("SET-1", Sizing::default())
        );
        assert_eq!(
            case("SET-2", Sizing::default()),
            Some(SetCase::Keys { nkeys: 1_000_000 })
        );
        assert_eq!(
            case("SET-2", Sizing::new(Size::Large)),
            Some(SetCase::Keys { nkeys: 10_000_000 })
        );
        assert_eq!(
            SetCase::Keys { nkeys: 1_000_000 }.params(),
            "nkeys=1000000,a=0..1000000,b=500000..1500000"
        );
        assert_eq!(case("SET-3", Sizing::default()), None);
    }

    #[test]
    fn set2_sides_are_windows_of_one_stream() {
        let data = SetData::generate(&SetCase::Keys { nkeys: 1000 });
        let SetData::Keys { a, b } = &data else {
            unreachable!()
        };
        let mut rng = SplitMix64::new(0);
        let stream: Vec<u64> = (0..1500).map(|_| rng.next_u64()).collect();
        assert_eq!(a[..], stream[..1000]);
        assert_eq!(b[..], stream[500..1500]);
        let model = data.model();
        assert_eq!((model.a_len, model.b_len), (1000, 1000));
        assert_eq!((model.union_len, model.intersect_len), (1500, 500));
    }

    #[test]
    fn set1_model_matches_arithmetic() {
        let sizing = Sizing::scaled(Size::Default, 0.05);
        let c = case("SET-1", sizing).unwrap();
        let SetCase::Tids { a, b } = c else {
            unreachable!()
        };
        let model = SetData::generate(&c).model();
        assert_eq!(model.a_len, a.dead_by_arithmetic());
        assert_eq!(model.b_len, b.dead_by_arithmetic());
        // TS-6's offsets 1..=10 lie within TS-8's 1..=100: on a block of
        // both, the union is B's 100 and the intersection A's 10.
        let both = (0..a.maxblk)
            .filter(|&blk| a.is_dead_block(blk) && b.is_dead_block(blk))
            .count() as u64;
        assert_eq!(model.intersect_len, both * 10);
        assert_eq!(model.union_len, model.a_len + model.b_len - both * 10);
    }

    #[test]
    fn the_model_counts_a_merge() {
        let m = SetModel::merge([1, 3, 5, 7].into_iter(), [3, 4, 7, 9, 11].into_iter());
        assert_eq!(
            (m.a_len, m.b_len, m.union_len, m.intersect_len),
            (4, 5, 7, 2)
        );
        let sum = |keys: &[u64]| {
            keys.iter()
                .fold(0u64, |s, &k| s.wrapping_add(element_checksum(k, k)))
        };
        assert_eq!(m.union_sum, sum(&[1, 3, 4, 5, 7, 9, 11]));
        assert_eq!(m.intersect_sum, sum(&[3, 7]));
    }
}
