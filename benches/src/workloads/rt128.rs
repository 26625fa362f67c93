//! RT-7 `load_random_u128`: the one radix tree workload with `u128` keys.
//!
//! Random 128-bit keys, as UUIDs or hashes are, make a radix tree walk
//! sixteen levels where all but the top two or three have a single child:
//! the case path compression and lazy expansion exist for. Data
//! generation exactly as WORKLOADS.md writes it; the measured phases are
//! RT-3's, generic over `RtMap<u128>`.

use crate::rng::SplitMix64;
use crate::structures::RtMap;

use super::Sizing;
use super::rt::{load_pairs, pair_answers, search_pairs};

/// RT-7 with its parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rt128Case {
    /// Number of keys.
    pub cnt: u64,
}

impl Rt128Case {
    /// The WORKLOADS.md id.
    pub fn id(&self) -> &'static str {
        "RT-7"
    }

    /// The WORKLOADS.md name.
    pub fn name(&self) -> &'static str {
        "load_random_u128"
    }

    /// The parameters, as `name=value` pairs joined by commas.
    pub fn params(&self) -> String {
        format!("cnt={}", self.cnt)
    }
}

/// The case of RT-7 at `sizing` (1,000,000 keys, 10,000,000 large); it
/// takes no variant.
pub(crate) fn case(arg: Option<&str>, sizing: Sizing) -> Result<Rt128Case, String> {
    match arg {
        None => Ok(Rt128Case {
            cnt: sizing.pick(1_000_000, 10_000_000),
        }),
        Some(_) => Err("RT-7 takes no variant".to_string()),
    }
}

/// RT-7's data: the inserts, looked up again in the same order.
#[derive(Debug, Clone)]
pub struct Rt128Data {
    /// `(key, lo)` for each key, in generation order.
    pairs: Vec<(u128, u64)>,
    /// Number of distinct keys.
    nkeys: u64,
    /// Wrapping sum of the values the lookups find.
    expected_sum: u64,
}

impl Rt128Data {
    /// Generates the data of `case`: per key, `hi = prng()`, `lo = prng()`
    /// (one PRNG seeded 0), `key = hi << 64 | lo`, value `lo`.
    pub fn generate(case: &Rt128Case) -> Self {
        let mut rng = SplitMix64::new(0);
        let pairs: Vec<(u128, u64)> = (0..case.cnt)
            .map(|_| {
                let hi = rng.next_u64();
                let lo = rng.next_u64();
                ((u128::from(hi) << 64) | u128::from(lo), lo)
            })
            .collect();
        let (nkeys, expected_sum) = pair_answers(&pairs);
        Self {
            pairs,
            nkeys,
            expected_sum,
        }
    }

    /// The inserts, in order.
    pub fn pairs(&self) -> &[(u128, u64)] {
        &self.pairs
    }

    /// Number of distinct keys the map holds after the load.
    pub fn nkeys(&self) -> u64 {
        self.nkeys
    }

    /// Lookups the search phase makes, each of which must hit.
    pub fn lookups(&self) -> u64 {
        self.pairs.len() as u64
    }

    /// The wrapping sum of the values a correct map returns to
    /// [`search`](Self::search).
    pub fn expected_sum(&self) -> u64 {
        self.expected_sum
    }

    /// Loads `map` (the timed load phase); returns the number of inserts.
    #[inline(never)]
    pub fn load<M: RtMap<u128>>(&self, map: &mut M) -> u64 {
        load_pairs(map, &self.pairs)
    }

    /// Searches `map` (the timed search phase): the hits and the wrapping
    /// sum of the values found.
    #[inline(never)]
    pub fn search<M: RtMap<u128>>(&self, map: &M) -> (u64, u64) {
        search_pairs(map, &self.pairs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::Size;

    #[test]
    fn keys_are_two_draws_each() {
        let data = Rt128Data::generate(&Rt128Case { cnt: 3 });
        let mut rng = SplitMix64::new(0);
        for &(key, value) in data.pairs() {
            let hi = rng.next_u64();
            let lo = rng.next_u64();
            assert_eq!(key, (u128::from(hi) << 64) | u128::from(lo));
            assert_eq!(value, lo);
        }
        assert_eq!(data.nkeys(), 3);
        let sum = data
            .pairs()
            .iter()
            .fold(0u64, |s, &(_, v)| s.wrapping_add(v));
        assert_eq!(data.expected_sum(), sum);
    }

    #[test]
    fn sizes() {
        assert_eq!(case(None, Sizing::default()).unwrap().cnt, 1_000_000);
        assert_eq!(
            case(None, Sizing::new(Size::Large)).unwrap().cnt,
            10_000_000
        );
        assert!(case(Some("x"), Sizing::default()).is_err());
    }
}
