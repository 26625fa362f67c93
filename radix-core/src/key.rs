//! Key widths.
//!
//! A key is cut into 8-bit *chunks*, most significant first; each level of
//! the tree consumes one chunk. A node's *shift* is the bit position of the
//! chunk it consumes, so the last level has shift 0 and a tree whose largest
//! key needs `b` bits has a root at shift `(b - 1) / 8 * 8` (0 for keys below
//! 256). Height therefore adapts to the largest key, never to the key type.

use core::fmt::Debug;

/// Bits consumed per tree level.
pub const SPAN: u32 = 8;

mod sealed {
    pub trait Sealed {}
}

/// An unsigned integer usable as a radix tree key: `u16`, `u32`, `u64` or
/// `u128` (and `u8`, a one-level tree).
///
/// The trait is sealed: the tree's correctness depends on every method
/// agreeing with plain unsigned arithmetic.
pub trait Key: Copy + Ord + Eq + core::hash::Hash + Debug + sealed::Sealed + 'static {
    /// Width of the key in bits.
    const BITS: u32;
    /// The largest key.
    const MAX: Self;
    /// The smallest key (zero).
    const MIN: Self;
    /// The largest number of levels a tree of this key type can have.
    const MAX_LEVELS: usize = (Self::BITS / SPAN) as usize;

    /// The chunk of this key consumed by the node at `shift`.
    fn chunk(self, shift: u32) -> u8;
    /// The shift of the smallest root that can hold this key.
    fn root_shift(self) -> u32;
    /// Whether the key has a non-zero chunk above the one at `shift`, so a
    /// tree whose root is at `shift` cannot hold it. One shift and one
    /// compare, where [`root_shift`](Key::root_shift) needs a bit scan.
    fn above(self, shift: u32) -> bool;
    /// This key with the chunk at `shift` replaced by `chunk`; used to
    /// rebuild keys while iterating.
    fn with_chunk(self, shift: u32, chunk: u8) -> Self;
    /// This key with every bit below `shift + 8` cleared.
    fn clear_below(self, shift: u32) -> Self;
    /// The key one larger, or `None` for [`Key::MAX`].
    fn checked_next(self) -> Option<Self>;
    /// The largest key a root at `shift` holds: every bit below
    /// `shift + 8` set. `key > Self::largest_under(shift)` is
    /// [`key.above(shift)`](Key::above) as one compare, for loops that
    /// test many keys against one root.
    fn largest_under(shift: u32) -> Self;

    /// The *prefix word* of a path-compressed node at `shift` on this
    /// key's path: the key's bits above the node's chunk, with `shift` in
    /// the low byte (whose bits a prefix never uses: they lie below
    /// `shift + 8`). See `src/node/mod.rs`, "Compression".
    fn prefix_word(self, shift: u32) -> Self;
    /// The shift a prefix word records.
    fn word_shift(self) -> u32;
    /// Whether this key agrees with prefix word `word` on every bit above
    /// the word's node's chunk: whether the node lies on the key's path.
    fn matches_word(self, word: Self) -> bool;
    /// The shift of the highest chunk in which `self` and `other` differ.
    /// They must differ.
    fn diverging_shift(self, other: Self) -> u32;
    /// The key one smaller, or `None` for zero.
    fn checked_prev(self) -> Option<Self>;
    /// This key with every bit below `shift + 8` set: the last key of the
    /// block that a node at `shift` on this key's path holds.
    fn fill_below(self, shift: u32) -> Self;
    /// The key as a `u128`, for messages and counts.
    fn to_u128(self) -> u128;
}

/// A key, or a reference to one: what a set extends from, as `BTreeSet`
/// extends from `T` and `&T`.
///
/// One trait on the key types rather than two `Extend` impls on the set:
/// the set knows its key only as a projection (`C::Key`), and coherence
/// cannot tell `Extend<C::Key>` from `Extend<&C::Key>`; here the types are
/// plain parameters (`K` and `&K` cannot be the same type). Implemented for
/// every key and every reference to one, so code generic over the key
/// extends a set from either without naming this trait.
pub trait KeyItem<K> {
    /// The key.
    fn key(self) -> K;
}

impl<K: Key> KeyItem<K> for K {
    #[inline]
    fn key(self) -> K {
        self
    }
}

impl<K: Key> KeyItem<K> for &K {
    #[inline]
    fn key(self) -> K {
        *self
    }
}

macro_rules! impl_key {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Key for $t {
            const BITS: u32 = <$t>::BITS;
            const MAX: Self = <$t>::MAX;
            const MIN: Self = 0;

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn chunk(self, shift: u32) -> u8 {
                // `shift` is below BITS by construction; the cast keeps the
                // low eight bits, which is the chunk.
                (self >> shift) as u8
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn above(self, shift: u32) -> bool {
                // `shift` is a node's shift, below BITS by construction.
                // (Widened so that `u8` needs no special case.)
                (self >> shift) as u128 > 0xFF
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn root_shift(self) -> u32 {
                let bits = <$t>::BITS - (self | 1).leading_zeros();
                (bits - 1) / SPAN * SPAN
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn with_chunk(self, shift: u32, chunk: u8) -> Self {
                (self & !((0xFF as $t) << shift)) | ((chunk as $t) << shift)
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn clear_below(self, shift: u32) -> Self {
                let top = shift + SPAN;
                if top >= <$t>::BITS { 0 } else { (self >> top) << top }
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn largest_under(shift: u32) -> Self {
                <$t>::MAX >> (<$t>::BITS - SPAN).saturating_sub(shift)
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn prefix_word(self, shift: u32) -> Self {
                self.clear_below(shift) | shift as $t
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn word_shift(self) -> u32 {
                u32::from(self as u8)
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn matches_word(self, word: Self) -> bool {
                // Two shifts, each below BITS, where one by `shift + 8`
                // could reach BITS at the top level. (`checked_shr` folds
                // to a plain shift by 8 for keys wider than a byte; a
                // `u8` key has no bits above its only chunk.)
                ((self ^ word) >> word.word_shift()).checked_shr(SPAN).unwrap_or(0) == 0
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn diverging_shift(self, other: Self) -> u32 {
                debug_assert_ne!(self, other);
                let top_bit = <$t>::BITS - 1 - (self ^ other).leading_zeros();
                top_bit / SPAN * SPAN
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn checked_next(self) -> Option<Self> {
                self.checked_add(1)
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn checked_prev(self) -> Option<Self> {
                self.checked_sub(1)
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn fill_below(self, shift: u32) -> Self {
                self | Self::largest_under(shift)
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn to_u128(self) -> u128 {
                self as u128
            }
        }
    )*};
}

impl_key!(u8, u16, u32, u64, u128);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_shift_follows_the_largest_byte() {
        assert_eq!(0u64.root_shift(), 0);
        assert_eq!(255u64.root_shift(), 0);
        assert_eq!(256u64.root_shift(), 8);
        assert_eq!(u64::MAX.root_shift(), 56);
        assert_eq!(u16::MAX.root_shift(), 8);
        assert_eq!(u128::MAX.root_shift(), 120);
        assert_eq!((1u128 << 64).root_shift(), 64);
    }

    #[test]
    fn above_agrees_with_root_shift() {
        for k in [0u64, 1, 255, 256, 65_535, 65_536, 1 << 40, u64::MAX] {
            for shift in (0..64).step_by(8) {
                assert_eq!(k.above(shift), k.root_shift() > shift, "{k:#x} at {shift}");
            }
        }
        assert!(u128::MAX.above(112) && !u128::MAX.above(120));
        assert!(!u8::MAX.above(0));
    }

    #[test]
    fn largest_under_bounds_above() {
        for k in [0u64, 1, 255, 256, 65_535, 65_536, 1 << 40, u64::MAX] {
            for shift in (0..64).step_by(8) {
                assert_eq!(
                    k > u64::largest_under(shift),
                    k.above(shift),
                    "{k:#x} at {shift}"
                );
            }
        }
        assert_eq!(u128::largest_under(120), u128::MAX);
        assert_eq!(u128::largest_under(0), 0xFF);
        assert_eq!(u8::largest_under(0), u8::MAX);
        assert_eq!(u32::largest_under(16), 0xFF_FFFF);
    }

    #[test]
    fn prefix_words_match_the_keys_on_their_path() {
        let k: u64 = 0x0123_4567_89AB_CDEF;
        for shift in (0..64).step_by(8) {
            let w = k.prefix_word(shift);
            assert_eq!(w.word_shift(), shift);
            assert!(k.matches_word(w), "shift {shift}");
            // A key differing only at or below the node's chunk matches.
            assert!((k ^ (0xFF << shift)).matches_word(w));
            if shift < 56 {
                assert!(!(k ^ (1 << (shift + 8))).matches_word(w), "shift {shift}");
            }
        }
        assert!(0xFFu8.matches_word(0u8.prefix_word(0)));
        let top = 0u128.prefix_word(120);
        assert!(u128::MAX.matches_word(top));
        assert!(!(1u128 << 127).matches_word(0u128.prefix_word(112)));
    }

    #[test]
    fn diverging_shift_finds_the_highest_differing_chunk() {
        assert_eq!(0u64.diverging_shift(1), 0);
        assert_eq!(0u64.diverging_shift(0x100), 8);
        assert_eq!(0u64.diverging_shift(u64::MAX), 56);
        assert_eq!(1u128.diverging_shift(1 << 127), 120);
        assert_eq!(3u16.diverging_shift(0x8003), 8);
    }

    #[test]
    fn chunks_rebuild_the_key() {
        let k: u64 = 0x0123_4567_89AB_CDEF;
        let mut rebuilt = 0u64;
        for level in 0..8 {
            let shift = level * 8;
            rebuilt = rebuilt.with_chunk(shift, k.chunk(shift));
        }
        assert_eq!(rebuilt, k);
        assert_eq!(k.clear_below(8), 0x0123_4567_89AB_0000);
        assert_eq!(k.clear_below(56), 0);
    }
}
