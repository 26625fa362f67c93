//! Index orders: the order in which an index pass visits its entries.
//!
//! Every index has one entry per heap tuple. Entry `p` *in heap order* is
//! the TID `(p / tuples_per_page, p % tuples_per_page + 1)`. A
//! [`IndexOrder::Correlated`] index (say, on a serial `int` column) visits
//! its entries in heap order, `p = 0, 1, 2, …`; a [`IndexOrder::Random`]
//! index (a `uuid` column) visits them in a random order, `p = π(0), π(1),
//! …`, where π is a seeded bijection on `0..n` computed on the fly by
//! [`RandomOrder`]: nothing of size `n` is stored.

use core::fmt;
use core::str::FromStr;

use crate::heap::splitmix64_at;

/// How an index's entries are ordered relative to the heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexOrder {
    /// Index order is heap order (`correlated`; e.g. a serial `int` key).
    Correlated,
    /// Index order is a seeded random permutation of heap order (`random`,
    /// or `uuid`; e.g. a random `uuid` key).
    Random,
}

/// Why an index list was not understood.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IndexOrderError {
    /// Not `correlated` or `random`.
    #[error("unknown index order `{0}`: expected correlated or random (or uuid)")]
    Unknown(String),
    /// An empty list.
    #[error("no indexes given: expected a comma-separated list such as correlated,random")]
    Empty,
}

impl FromStr for IndexOrder {
    type Err = IndexOrderError;

    fn from_str(text: &str) -> Result<Self, IndexOrderError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "correlated" | "int" => Ok(Self::Correlated),
            "random" | "uuid" => Ok(Self::Random),
            _ => Err(IndexOrderError::Unknown(text.trim().to_string())),
        }
    }
}

impl fmt::Display for IndexOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Correlated => "correlated",
            Self::Random => "random",
        })
    }
}

/// Parses a comma-separated list of index orders, such as
/// `correlated,random`. The list must not be empty.
pub fn parse_index_list(text: &str) -> Result<Vec<IndexOrder>, IndexOrderError> {
    let list = text
        .split(',')
        .filter(|part| !part.trim().is_empty())
        .map(str::parse)
        .collect::<Result<Vec<_>, _>>()?;
    if list.is_empty() {
        return Err(IndexOrderError::Empty);
    }
    Ok(list)
}

/// Formats a list of index orders as `correlated, random`.
pub fn format_index_list(list: &[IndexOrder]) -> String {
    list.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A seeded pseudo-random bijection on `0..n`, computed per element.
///
/// It is a 4-round Feistel network on `bits`-bit integers, where `2^bits` is
/// the smallest power of two `>= n` (at least 4). The integer is split into
/// a high half of `bits / 2` bits and a low half of the rest; each round
/// XORs one half with a keyed hash of the other (alternating), which is
/// invertible whatever the hash, so the network permutes `0..2^bits`.
/// *Cycle walking* then restricts it to `0..n`: apply the network until the
/// result is below `n`. Since the network is a permutation, the walk from
/// a start below `n` ends (at most after returning to the start) and no two
/// starts end at the same place, so [`get`](Self::get) is a bijection on
/// `0..n`. On average it takes `2^bits / n < 2` network evaluations.
#[derive(Clone, Debug)]
pub struct RandomOrder {
    n: u64,
    low_bits: u32,
    high_mask: u64,
    low_mask: u64,
    keys: [u64; 4],
}

impl RandomOrder {
    /// The permutation of `0..n` for `seed`. Different seeds give
    /// (practically always) different permutations.
    pub fn new(n: u64, seed: u64) -> Self {
        let bits = (64 - n.saturating_sub(1).leading_zeros()).max(2);
        let high_bits = bits / 2;
        let low_bits = bits - high_bits;
        let keys = [0, 1, 2, 3].map(|round| splitmix64_at(seed, round) | 1);
        Self {
            n,
            low_bits,
            high_mask: (1u64 << high_bits) - 1,
            low_mask: (1u64 << low_bits) - 1,
            keys,
        }
    }

    /// The size of the domain, `n`.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Whether the domain is empty.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The keyed round function: a multiply by an odd 64-bit key, with the
    /// high half folded onto the low. Halves have at most 32 bits, so bits
    /// 32.. of the product depend on every input bit, and after the fold so
    /// do the low bits that the caller keeps.
    #[inline(always)]
    fn round(key: u64, half: u64) -> u64 {
        let x = (half ^ (key >> 17)).wrapping_mul(key);
        x ^ (x >> 32)
    }

    /// The Feistel network: a permutation of `0..2^bits`.
    #[inline(always)]
    fn network(&self, x: u64) -> u64 {
        let mut high = x >> self.low_bits;
        let mut low = x & self.low_mask;
        high ^= Self::round(self.keys[0], low) & self.high_mask;
        low ^= Self::round(self.keys[1], high) & self.low_mask;
        high ^= Self::round(self.keys[2], low) & self.high_mask;
        low ^= Self::round(self.keys[3], high) & self.low_mask;
        (high << self.low_bits) | low
    }

    /// The position that element `i` of the order maps to: `π(i)`.
    /// `i` must be below `n`.
    #[inline]
    pub fn get(&self, i: u64) -> u64 {
        debug_assert!(i < self.n);
        let mut x = self.network(i);
        while x >= self.n {
            x = self.network(x);
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_orders_and_lists() {
        assert_eq!(
            parse_index_list("correlated,random"),
            Ok(vec![IndexOrder::Correlated, IndexOrder::Random])
        );
        assert_eq!(parse_index_list(" uuid "), Ok(vec![IndexOrder::Random]));
        assert_eq!(parse_index_list(""), Err(IndexOrderError::Empty));
        assert_eq!(
            parse_index_list("correlated,btree"),
            Err(IndexOrderError::Unknown("btree".into()))
        );
        assert_eq!(
            format_index_list(&[IndexOrder::Correlated, IndexOrder::Random]),
            "correlated, random"
        );
    }

    #[test]
    fn is_a_permutation_for_small_n() {
        for n in 0..300u64 {
            for seed in 0..3 {
                let order = RandomOrder::new(n, seed);
                let mut seen = vec![false; n as usize];
                for i in 0..n {
                    let p = order.get(i);
                    assert!(p < n, "n={n} seed={seed}: {p} out of range");
                    assert!(!seen[p as usize], "n={n} seed={seed}: {p} twice");
                    seen[p as usize] = true;
                }
            }
        }
    }

    #[test]
    fn looks_shuffled() {
        let n = 10_000;
        let order = RandomOrder::new(n, 0);
        let fixed = (0..n).filter(|&i| order.get(i) == i).count();
        assert!(fixed < 20, "{fixed} fixed points");
        // Consecutive elements land far apart on average (about n / 3).
        let jumps: u64 = (1..n)
            .map(|i| order.get(i).abs_diff(order.get(i - 1)))
            .sum();
        let mean = jumps / (n - 1);
        assert!((2_500..4_200).contains(&mean), "mean jump {mean}");
        let other = RandomOrder::new(n, 1);
        assert!((0..n).filter(|&i| order.get(i) == other.get(i)).count() < 20);
    }
}
