//! Key helpers the engine's unit tests share: keys of any width built from
//! and widened to `u128`, a seeded generator, and sizes Miri can afford.

use crate::Key;

/// The key of width `K` holding the low bits of `x`.
pub(crate) fn key<K: Key>(x: u128) -> K {
    let mut k = K::MIN;
    let mut shift = 0;
    while shift < K::BITS {
        k = k.with_chunk(shift, (x >> shift) as u8);
        shift += 8;
    }
    k
}

/// `k` as a `u128`.
pub(crate) fn wide<K: Key>(k: K) -> u128 {
    let mut x = 0u128;
    let mut shift = 0;
    while shift < K::BITS {
        x |= u128::from(k.chunk(shift)) << shift;
        shift += 8;
    }
    x
}

/// The splitmix64 generator, seeded explicitly so every failure
/// reproduces.
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(crate) fn next_u128(&mut self) -> u128 {
        (u128::from(self.next()) << 64) | u128::from(self.next())
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
