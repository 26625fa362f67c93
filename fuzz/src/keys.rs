//! Keys: integer widths and a key generator that favours node boundaries.
//!
//! Fuzz input bytes chosen uniformly would give keys spread over the whole
//! key space: every node a node4 with one child, the root at the top level.
//! [`KeySpec`] instead describes a key by *where* it lies: near zero, near
//! the width's maximum, around a power of two (a chunk boundary when the
//! exponent is a multiple of 8), with every byte equal, or close to one of
//! a few per-input *bases*, so that most keys share their upper chunks and
//! nodes fill up. Only [`KeySpec::Raw`] is uniform.

use core::fmt::Debug;
use core::ops::Bound;

use arbitrary::Arbitrary;

/// An unsigned integer key type, converted to and from `u128` by keeping
/// the low bits.
pub trait KeyInt: Copy + Ord + Debug + 'static {
    /// Width in bits.
    const BITS: u32;
    /// The key holding the low [`BITS`](Self::BITS) bits of `wide`.
    fn from_u128(wide: u128) -> Self;
    /// The key as a `u128`.
    fn to_u128(self) -> u128;
    /// `self + delta`, wrapping around the key width.
    fn offset(self, delta: i128) -> Self {
        Self::from_u128(self.to_u128().wrapping_add(delta as u128))
    }
}

macro_rules! impl_key_int {
    ($($t:ty),*) => {$(
        impl KeyInt for $t {
            const BITS: u32 = <$t>::BITS;
            #[inline]
            fn from_u128(wide: u128) -> Self {
                wide as $t
            }
            #[inline]
            fn to_u128(self) -> u128 {
                self as u128
            }
        }
    )*};
}

impl_key_int!(u8, u16, u32, u64, u128);

/// Per-input base keys that [`KeySpec::Clustered`] keys are offsets from.
pub type Bases = [u128; 3];

/// Where a key lies; resolved against the input's [`Bases`] and the key
/// width by [`KeySpec::key`].
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeySpec {
    /// The key `n`: the first node at every level.
    Small(u8),
    /// The key `MAX - n`: the last node at every level, the tallest root.
    NearMax(u8),
    /// Base number `base % 3` plus `offset`: keys that share upper chunks.
    Clustered {
        /// Index into the bases.
        base: u8,
        /// Added to the base, wrapping.
        offset: u16,
    },
    /// `2^(exponent % BITS) + delta`: both sides of a chunk or height
    /// boundary.
    PowerOfTwo {
        /// The exponent, reduced modulo the key width.
        exponent: u8,
        /// Added to the power of two, wrapping.
        delta: i8,
    },
    /// Every byte of the key equal to this one (`0x0101…`, `0xFFFF…`).
    Repeated(u8),
    /// Any key, truncated to the width.
    Raw(u128),
}

impl KeySpec {
    /// The key of type `K` this spec describes.
    pub fn key<K: KeyInt>(self, bases: &Bases) -> K {
        let wide = match self {
            KeySpec::Small(n) => u128::from(n),
            KeySpec::NearMax(n) => u128::MAX - u128::from(n),
            KeySpec::Clustered { base, offset } => {
                bases[usize::from(base) % bases.len()].wrapping_add(u128::from(offset))
            }
            KeySpec::PowerOfTwo { exponent, delta } => {
                let power = 1u128 << (u32::from(exponent) % K::BITS);
                // Wrap at the key width, not at 128 bits: `1 - 2` is MAX.
                return K::from_u128(power).offset(i128::from(delta));
            }
            KeySpec::Repeated(byte) => u128::from_ne_bytes([byte; 16]),
            KeySpec::Raw(wide) => wide,
        };
        K::from_u128(wide)
    }
}

/// One end of a range.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundSpec {
    /// The key itself is in the range.
    Included(KeySpec),
    /// The key itself is not in the range.
    Excluded(KeySpec),
    /// No bound on this side.
    Unbounded,
}

impl BoundSpec {
    /// The bound of type `K` this spec describes.
    pub fn bound<K: KeyInt>(self, bases: &Bases) -> Bound<K> {
        match self {
            BoundSpec::Included(k) => Bound::Included(k.key(bases)),
            BoundSpec::Excluded(k) => Bound::Excluded(k.key(bases)),
            BoundSpec::Unbounded => Bound::Unbounded,
        }
    }
}

/// The step of an insert or remove run: `1 + n % 4` for most bytes, so a
/// run fills consecutive slots of one last-level node, and for the top 32
/// byte values a power of 256, so a run walks the children of a node one or
/// more levels up.
pub fn run_step<K: KeyInt>(step: u8) -> u128 {
    const CHUNK_STEPS: u8 = 224;
    if step < CHUNK_STEPS {
        1 + u128::from(step % 4)
    } else {
        let levels = (K::BITS / 8).max(1);
        1u128 << (8 * (u32::from(step - CHUNK_STEPS) % levels))
    }
}

/// The bound `RangeNear` describes: `key` moved by `delta` (wrapping),
/// excluded or included.
pub fn near_bound<K: KeyInt>(key: K, delta: i8, excluded: bool) -> Bound<K> {
    let key = key.offset(i128::from(delta));
    if excluded {
        Bound::Excluded(key)
    } else {
        Bound::Included(key)
    }
}

/// The inclusive key interval a pair of bounds selects, or `None` when it
/// is empty (including a start after the end, where `BTreeMap::range`
/// would panic).
pub fn interval<K: KeyInt>(low: Bound<K>, high: Bound<K>) -> Option<(K, K)> {
    let max = K::from_u128(u128::MAX);
    let low = match low {
        Bound::Included(k) => k,
        Bound::Excluded(k) if k == max => return None,
        Bound::Excluded(k) => k.offset(1),
        Bound::Unbounded => K::from_u128(0),
    };
    let high = match high {
        Bound::Included(k) => k,
        Bound::Excluded(k) if k.to_u128() == 0 => return None,
        Bound::Excluded(k) => k.offset(-1),
        Bound::Unbounded => max,
    };
    (low <= high).then_some((low, high))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_resolve_at_every_width() {
        let bases = [0x1234_5678, 1 << 100, u128::MAX];
        assert_eq!(KeySpec::NearMax(1).key::<u16>(&bases), u16::MAX - 1);
        assert_eq!(KeySpec::NearMax(0).key::<u128>(&bases), u128::MAX);
        assert_eq!(
            KeySpec::PowerOfTwo {
                exponent: 16,
                delta: -1
            }
            .key::<u32>(&bases),
            0xFFFF
        );
        assert_eq!(
            KeySpec::PowerOfTwo {
                exponent: 0,
                delta: -2
            }
            .key::<u8>(&bases),
            u8::MAX
        );
        assert_eq!(
            KeySpec::Clustered { base: 2, offset: 1 }.key::<u64>(&bases),
            0
        );
        assert_eq!(KeySpec::Repeated(1).key::<u32>(&bases), 0x0101_0101);
        assert_eq!(run_step::<u16>(224), 1);
        assert_eq!(run_step::<u16>(225), 256);
        assert_eq!(run_step::<u16>(226), 1);
        assert_eq!(run_step::<u64>(231), 1 << 56);
    }

    #[test]
    fn intervals_match_btreemap_semantics() {
        use Bound::*;
        assert_eq!(interval::<u8>(Excluded(255), Unbounded), None);
        assert_eq!(interval::<u8>(Unbounded, Excluded(0)), None);
        assert_eq!(interval::<u8>(Excluded(3), Excluded(4)), None);
        assert_eq!(interval::<u8>(Included(4), Included(4)), Some((4, 4)));
        assert_eq!(interval::<u8>(Included(5), Included(4)), None);
        assert_eq!(interval::<u8>(Unbounded, Unbounded), Some((0, 255)));
    }
}
