//! The simulated heap: which tuples are dead.
//!
//! A heap has `blocks` pages of `tuples_per_page` tuples each. Tuple `i` in
//! heap order is the TID `(i / tuples_per_page, i % tuples_per_page + 1)`.
//! A [`DeadPattern`] says which of them the workload deleted; [`Heap`]
//! answers, page by page, with the page's dead offsets in ascending order,
//! the way lazy vacuum's heap scan finds them.

use core::fmt;
use core::str::FromStr;

/// Which tuples of the heap are dead.
///
/// Written on the command line (and printed) as `all`, `tail:FRACTION`,
/// `random:FRACTION` or `every:N`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DeadPattern {
    /// Every tuple is dead (`all`).
    All,
    /// Every tuple of the last `fraction` of the table's pages is dead
    /// (`tail:0.2`): the last `round(fraction × blocks)` pages.
    Tail(f64),
    /// Each tuple is dead with probability `fraction`, decided per tuple
    /// from a seeded hash (`random:0.05`): tuple `i` (in heap order) is dead
    /// when the `i`-th output of `splitmix64` seeded with the run's seed is
    /// below `fraction × 2^64`.
    Random(f64),
    /// On every page, the tuples whose offset is a multiple of `n` are dead
    /// (`every:3`): offsets `n, 2n, 3n, …`, so `tuples_per_page / n` (rounded
    /// down) per page.
    Every(u32),
}

/// Why a dead pattern was not understood.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// Not one of the known forms.
    #[error("unknown dead pattern `{0}`: expected all, tail:FRACTION, random:FRACTION or every:N")]
    Unknown(String),
    /// A fraction that is not a number in 0..=1.
    #[error("bad fraction `{0}` in dead pattern: expected a number from 0 to 1, such as 0.2")]
    BadFraction(String),
    /// A period that is not a whole number of at least 1.
    #[error("bad period `{0}` in dead pattern: expected a whole number of at least 1, such as 3")]
    BadPeriod(String),
}

fn parse_fraction(text: &str) -> Result<f64, PatternError> {
    match text.trim().parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(PatternError::BadFraction(text.to_string())),
    }
}

impl FromStr for DeadPattern {
    type Err = PatternError;

    fn from_str(text: &str) -> Result<Self, PatternError> {
        let text = text.trim();
        let (kind, arg) = match text.split_once(':') {
            Some((kind, arg)) => (kind.trim(), Some(arg)),
            None => (text, None),
        };
        match (kind.to_ascii_lowercase().as_str(), arg) {
            ("all", None) => Ok(Self::All),
            ("tail", Some(arg)) => parse_fraction(arg).map(Self::Tail),
            ("random", Some(arg)) => parse_fraction(arg).map(Self::Random),
            ("every", Some(arg)) => match arg.trim().parse::<u32>() {
                Ok(n) if n >= 1 => Ok(Self::Every(n)),
                _ => Err(PatternError::BadPeriod(arg.to_string())),
            },
            _ => Err(PatternError::Unknown(text.to_string())),
        }
    }
}

impl fmt::Display for DeadPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::All => f.write_str("all"),
            Self::Tail(x) => write!(f, "tail:{x}"),
            Self::Random(x) => write!(f, "random:{x}"),
            Self::Every(n) => write!(f, "every:{n}"),
        }
    }
}

/// `splitmix64`'s mixing steps applied to `x` (WORKLOADS.md's `hash64`).
#[inline]
pub fn hash64(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The `i`-th output (from 0) of `splitmix64` seeded with `seed`: random
/// access into the sequence WORKLOADS.md's PRNG produces.
#[inline]
pub fn splitmix64_at(seed: u64, i: u64) -> u64 {
    hash64(seed.wrapping_add(i.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15)))
}

/// How a [`Heap`] decides deadness, precomputed from its [`DeadPattern`].
#[derive(Clone, Copy, Debug)]
enum Rule {
    /// Pages from this block on are entirely dead (`All` is `FromBlock(0)`).
    FromBlock(u32),
    /// Tuples whose hash is below the threshold are dead.
    Below(u64),
    /// Offsets that are multiples of the period are dead.
    Every(u32),
}

/// A heap of `blocks` pages, `tuples_per_page` tuples each, some of them
/// dead according to a [`DeadPattern`].
#[derive(Clone, Debug)]
pub struct Heap {
    blocks: u32,
    tuples_per_page: u16,
    pattern: DeadPattern,
    seed: u64,
    rule: Rule,
}

impl Heap {
    /// A heap of the given shape. `seed` drives the `random:` pattern.
    pub fn new(blocks: u32, tuples_per_page: u16, pattern: DeadPattern, seed: u64) -> Self {
        let rule = match pattern {
            DeadPattern::All => Rule::FromBlock(0),
            DeadPattern::Tail(fraction) => {
                let dead_pages = (fraction * f64::from(blocks)).round() as u32;
                Rule::FromBlock(blocks - dead_pages.min(blocks))
            }
            DeadPattern::Random(fraction) if fraction >= 1.0 => Rule::FromBlock(0),
            // The cast saturates; fractions below 1 give a threshold below 2^64.
            DeadPattern::Random(fraction) => {
                Rule::Below((fraction * 18_446_744_073_709_551_616.0) as u64)
            }
            DeadPattern::Every(n) => Rule::Every(n),
        };
        Self {
            blocks,
            tuples_per_page,
            pattern,
            seed,
            rule,
        }
    }

    /// Number of pages.
    pub fn blocks(&self) -> u32 {
        self.blocks
    }

    /// Tuples on each page.
    pub fn tuples_per_page(&self) -> u16 {
        self.tuples_per_page
    }

    /// The dead pattern.
    pub fn pattern(&self) -> DeadPattern {
        self.pattern
    }

    /// Number of tuples: `blocks × tuples_per_page`, which is also the
    /// number of entries in every index.
    pub fn num_tuples(&self) -> u64 {
        u64::from(self.blocks) * u64::from(self.tuples_per_page)
    }

    /// Replaces `out` with the dead offsets of `block`, ascending (empty
    /// when the page has none).
    #[inline]
    pub fn dead_offsets(&self, block: u32, out: &mut Vec<u16>) {
        out.clear();
        let tpp = self.tuples_per_page;
        match self.rule {
            Rule::FromBlock(first) => {
                if block >= first {
                    out.extend(1..=tpp);
                }
            }
            Rule::Below(threshold) => {
                let base = u64::from(block) * u64::from(tpp);
                out.extend((1..=tpp).filter(|&off| {
                    splitmix64_at(self.seed, base + u64::from(off) - 1) < threshold
                }));
            }
            Rule::Every(n) => {
                if let Ok(n) = u16::try_from(n) {
                    out.extend((n..=tpp).step_by(usize::from(n)));
                }
            }
        }
    }

    /// The number of dead tuples in the whole heap, computed from the
    /// pattern (by arithmetic where it can be, otherwise by visiting every
    /// tuple).
    pub fn count_dead(&self) -> u64 {
        let tpp = u64::from(self.tuples_per_page);
        match self.rule {
            Rule::FromBlock(first) => u64::from(self.blocks - first) * tpp,
            Rule::Every(n) => u64::from(self.blocks) * (tpp / u64::from(n)),
            Rule::Below(threshold) => (0..self.num_tuples())
                .filter(|&i| splitmix64_at(self.seed, i) < threshold)
                .count() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dead(heap: &Heap, block: u32) -> Vec<u16> {
        let mut v = Vec::new();
        heap.dead_offsets(block, &mut v);
        v
    }

    #[test]
    fn parses_and_prints_patterns() {
        for (text, pattern) in [
            ("all", DeadPattern::All),
            ("tail:0.2", DeadPattern::Tail(0.2)),
            ("random:0.05", DeadPattern::Random(0.05)),
            ("every:3", DeadPattern::Every(3)),
        ] {
            assert_eq!(text.parse::<DeadPattern>(), Ok(pattern));
            assert_eq!(pattern.to_string(), text);
        }
        assert_eq!("ALL".parse::<DeadPattern>(), Ok(DeadPattern::All));
        assert!(matches!(
            "tail:1.5".parse::<DeadPattern>(),
            Err(PatternError::BadFraction(_))
        ));
        assert!(matches!(
            "random:x".parse::<DeadPattern>(),
            Err(PatternError::BadFraction(_))
        ));
        assert!(matches!(
            "every:0".parse::<DeadPattern>(),
            Err(PatternError::BadPeriod(_))
        ));
        assert!(matches!(
            "tail".parse::<DeadPattern>(),
            Err(PatternError::Unknown(_))
        ));
        assert!(matches!(
            "some".parse::<DeadPattern>(),
            Err(PatternError::Unknown(_))
        ));
    }

    #[test]
    fn hash64_matches_splitmix64() {
        // splitmix64 with seed 0: the first output (a well-known value).
        assert_eq!(splitmix64_at(0, 0), 0xE220_A839_7B1D_CDAF);
        assert_eq!(hash64(0), 0);
    }

    #[test]
    fn all_and_every() {
        let heap = Heap::new(3, 10, DeadPattern::All, 0);
        assert_eq!(dead(&heap, 2), (1..=10).collect::<Vec<u16>>());
        assert_eq!(heap.count_dead(), 30);
        let heap = Heap::new(3, 10, DeadPattern::Every(3), 0);
        assert_eq!(dead(&heap, 0), [3, 6, 9]);
        assert_eq!(heap.count_dead(), 9);
        let heap = Heap::new(3, 10, DeadPattern::Every(11), 0);
        assert!(dead(&heap, 0).is_empty());
        assert_eq!(heap.count_dead(), 0);
    }

    #[test]
    fn tail_is_the_last_pages() {
        let heap = Heap::new(10, 4, DeadPattern::Tail(0.2), 0);
        assert!(dead(&heap, 7).is_empty());
        assert_eq!(dead(&heap, 8), [1, 2, 3, 4]);
        assert_eq!(heap.count_dead(), 8);
        assert_eq!(Heap::new(10, 4, DeadPattern::Tail(0.0), 0).count_dead(), 0);
        assert_eq!(Heap::new(10, 4, DeadPattern::Tail(1.0), 0).count_dead(), 40);
    }

    #[test]
    fn random_is_seeded_and_counted() {
        let heap = Heap::new(200, 100, DeadPattern::Random(0.1), 7);
        let mut total = 0;
        for block in 0..200 {
            let offsets = dead(&heap, block);
            assert!(offsets.windows(2).all(|w| w[0] < w[1]));
            total += offsets.len() as u64;
        }
        assert_eq!(total, heap.count_dead());
        assert!((1_500..2_500).contains(&total), "{total}");
        let other = Heap::new(200, 100, DeadPattern::Random(0.1), 8);
        assert_ne!(dead(&heap, 0), dead(&other, 0));
        assert_eq!(
            Heap::new(5, 5, DeadPattern::Random(1.0), 0).count_dead(),
            25
        );
        assert_eq!(Heap::new(5, 5, DeadPattern::Random(0.0), 0).count_dead(), 0);
    }
}
