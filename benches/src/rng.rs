//! WORKLOADS.md's common definitions of randomness: the `splitmix64` PRNG,
//! the `hash64` mixer and the Fisher–Yates shuffle.
//!
//! Every workload is built from these, so that the same seed gives the same
//! keys on every machine and the results can be set beside PostgreSQL's.

/// The `splitmix64` generator (WORKLOADS.md "PRNG").
///
/// ```
/// let mut rng = benches::rng::SplitMix64::new(0);
/// assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
/// ```
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

/// The increment `splitmix64` adds to its state before each output.
pub const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

impl SplitMix64 {
    /// A generator with state `seed` (WORKLOADS.md uses seed 0 unless stated).
    pub const fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next value: `s += GOLDEN_GAMMA`, then [`hash64`] of the new state.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        hash64(self.state)
    }
}

/// WORKLOADS.md's `hash64(i)`: the `splitmix64` mixing steps applied to `i`
/// directly, with no increment.
///
/// ```
/// assert_eq!(benches::rng::hash64(0), 0);
/// ```
#[inline]
pub const fn hash64(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// WORKLOADS.md's shuffle: Fisher–Yates from the front with a fresh
/// `splitmix64` seeded 0. For `i in 0..n-1` it picks
/// `j = i + (prng() % (n - i))` and swaps `a[i]` and `a[j]`.
pub fn shuffle<T>(a: &mut [T]) {
    shuffle_seeded(a, 0);
}

/// [`shuffle`] with its `splitmix64` seeded `seed` instead of 0, for the
/// workloads that name another seed (RT-C's reader `t` shuffles with
/// `t + 1`). Seed 0 is [`shuffle`] exactly.
pub fn shuffle_seeded<T>(a: &mut [T], seed: u64) {
    shuffle_prefix_seeded(a, a.len(), seed);
}

/// The first `len` steps of [`shuffle`]: afterwards `a[..len]` holds exactly
/// what a full shuffle puts there (Fisher–Yates from the front fixes
/// `a[i]` at step `i`), a uniform random sample of `a` in random order,
/// without paying for the rest of the permutation.
pub fn shuffle_prefix<T>(a: &mut [T], len: usize) {
    shuffle_prefix_seeded(a, len, 0);
}

/// The first `len` steps of [`shuffle_seeded`].
fn shuffle_prefix_seeded<T>(a: &mut [T], len: usize, seed: u64) {
    let n = a.len();
    let mut rng = SplitMix64::new(seed);
    for i in 0..len.min(n.saturating_sub(1)) {
        let j = i + (rng.next_u64() % (n - i) as u64) as usize;
        a.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_seed_0_first_values() {
        // The reference sequence of splitmix64 from state 0.
        let mut rng = SplitMix64::new(0);
        let first: Vec<u64> = (0..4).map(|_| rng.next_u64()).collect();
        assert_eq!(
            first,
            [
                0xE220_A839_7B1D_CDAF,
                0x6E78_9E6A_A1B9_65F4,
                0x06C4_5D18_8009_454F,
                0xF88B_B8A8_724C_81EC,
            ]
        );
    }

    #[test]
    fn hash64_is_the_mixer_without_increment() {
        assert_eq!(hash64(0), 0);
        assert_eq!(hash64(GOLDEN_GAMMA), 0xE220_A839_7B1D_CDAF);
        assert_eq!(hash64(GOLDEN_GAMMA.wrapping_mul(2)), 0x6E78_9E6A_A1B9_65F4);
        // Independently computed values of the formula.
        assert_eq!(hash64(1), HASH64_1);
        assert_eq!(hash64(0x7F_07FF_00FF), HASH64_FILTER);
    }

    const HASH64_1: u64 = 0x5692_161D_100B_05E5;
    const HASH64_FILTER: u64 = 0xD528_5073_888A_AEDC;

    #[test]
    fn shuffle_is_a_permutation() {
        for n in [0usize, 1, 2, 3, 10, 1000] {
            let mut a: Vec<usize> = (0..n).collect();
            shuffle(&mut a);
            let mut sorted = a.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..n).collect::<Vec<_>>());
            if n >= 10 {
                assert_ne!(a, sorted, "a shuffle of {n} left the order alone");
            }
        }
    }

    #[test]
    fn shuffle_follows_the_definition() {
        // n = 3: i = 0 picks 0 + prng() % 3, i = 1 picks 1 + prng() % 2.
        let mut rng = SplitMix64::new(0);
        let j0 = (rng.next_u64() % 3) as usize;
        let j1 = 1 + (rng.next_u64() % 2) as usize;
        let mut expected = [0, 1, 2];
        expected.swap(0, j0);
        expected.swap(1, j1);
        let mut a = [0, 1, 2];
        shuffle(&mut a);
        assert_eq!(a, expected);
    }

    #[test]
    fn seeded_shuffles() {
        let mut zero: Vec<u32> = (0..1000).collect();
        let mut plain = zero.clone();
        shuffle_seeded(&mut zero, 0);
        shuffle(&mut plain);
        assert_eq!(zero, plain, "seed 0 is the plain shuffle");

        // n = 3 with seed 7: the definition, from a PRNG seeded 7.
        let mut rng = SplitMix64::new(7);
        let j0 = (rng.next_u64() % 3) as usize;
        let j1 = 1 + (rng.next_u64() % 2) as usize;
        let mut expected = [0, 1, 2];
        expected.swap(0, j0);
        expected.swap(1, j1);
        let mut a = [0, 1, 2];
        shuffle_seeded(&mut a, 7);
        assert_eq!(a, expected);

        let mut one: Vec<u32> = (0..1000).collect();
        shuffle_seeded(&mut one, 1);
        assert_ne!(one, plain, "seeds 0 and 1 gave the same order");
    }

    #[test]
    fn shuffle_prefix_is_the_full_shuffle_prefix() {
        let full = {
            let mut a: Vec<u32> = (0..1000).collect();
            shuffle(&mut a);
            a
        };
        for len in [0, 1, 7, 999, 1000, 5000] {
            let mut a: Vec<u32> = (0..1000).collect();
            shuffle_prefix(&mut a, len);
            let len = len.min(1000);
            assert_eq!(a[..len], full[..len], "prefix {len}");
        }
    }
}
