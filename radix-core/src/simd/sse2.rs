//! SSE2 search: two 16-byte compares and two move-masks.
//!
//! SSE2 has no unsigned byte comparison, so `c >= key` is computed as
//! `max_epu8(c, key) == c`, which is exact for unsigned bytes.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::GROUP_BYTES;

/// Prefetches the line holding `addr` into every cache level.
#[cfg_attr(miri, allow(dead_code))] // Miri takes the portable no-op.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn prefetch(addr: *const u8) {
    // SAFETY: SSE is enabled on this target; a prefetch is a hint that
    // never faults and never dereferences in the language's sense.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(addr.cast::<i8>()) }
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn halves(chunks: &[u8; GROUP_BYTES]) -> (__m128i, __m128i) {
    // SAFETY: SSE2 is enabled on this target (module cfg); both unaligned
    // loads read 16 bytes inside the 32-byte array.
    unsafe {
        let p = chunks.as_ptr().cast::<__m128i>();
        (_mm_loadu_si128(p), _mm_loadu_si128(p.add(1)))
    }
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn join(lo: __m128i, hi: __m128i) -> u32 {
    // SAFETY: SSE2 is enabled on this target.
    unsafe { (_mm_movemask_epi8(lo) as u32 & 0xFFFF) | ((_mm_movemask_epi8(hi) as u32) << 16) }
}

/// `key` in every byte. SSE2 has no byte shuffle, so `_mm_set1_epi8` is a
/// move, an unpack and two shuffles; a multiply spreads the byte over a
/// word in one instruction, leaving a move and one shuffle.
#[cfg_attr(not(debug_assertions), inline(always))]
fn broadcast(key: u8) -> __m128i {
    let word = u64::from(key).wrapping_mul(0x0101_0101_0101_0101);
    // SAFETY: SSE2 is enabled on this target.
    unsafe { _mm_set1_epi64x(word as i64) }
}

/// Bit `i` set when `chunks[i] == key`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn eq_mask(chunks: &[u8; GROUP_BYTES], key: u8) -> u32 {
    let (lo, hi) = halves(chunks);
    let k = broadcast(key);
    // SAFETY: SSE2 is enabled on this target.
    unsafe { join(_mm_cmpeq_epi8(lo, k), _mm_cmpeq_epi8(hi, k)) }
}

/// Bit `i` set when `chunks[i] >= key` (unsigned).
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn ge_mask(chunks: &[u8; GROUP_BYTES], key: u8) -> u32 {
    let (lo, hi) = halves(chunks);
    // SAFETY: SSE2 is enabled on this target.
    unsafe {
        let k = _mm_set1_epi8(key as i8);
        join(
            _mm_cmpeq_epi8(_mm_max_epu8(lo, k), lo),
            _mm_cmpeq_epi8(_mm_max_epu8(hi, k), hi),
        )
    }
}

/// `chunks[from..] = key`. Up to the middle, two overlapping unaligned
/// stores of the broadcast key, at `from` and at 16, cover the tail
/// exactly and read nothing; past it, where a store at `from` would run
/// off the array, the high half is blended with a mask of the byte
/// indices below `from`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn pad(chunks: &mut [u8; GROUP_BYTES], from: usize, key: u8) {
    const HALF: usize = GROUP_BYTES / 2;
    let fill = broadcast(key);
    let p = chunks.as_mut_ptr();
    // (Indices and `from` are at most 32: the signed byte compare is exact.)
    // SAFETY: SSE2 is enabled on this target (module cfg); each access is
    // 16 unaligned bytes from `from <= 16` or 16: inside the 32-byte array.
    unsafe {
        if from <= HALF {
            _mm_storeu_si128(p.add(from).cast::<__m128i>(), fill);
            _mm_storeu_si128(p.add(HALF).cast::<__m128i>(), fill);
        } else {
            let high = p.add(HALF).cast::<__m128i>();
            let idx = _mm_setr_epi8(
                16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
            );
            let keep = _mm_cmplt_epi8(idx, broadcast(from as u8));
            let old = _mm_loadu_si128(high);
            _mm_storeu_si128(
                high,
                _mm_or_si128(_mm_and_si128(keep, old), _mm_andnot_si128(keep, fill)),
            );
        }
    }
}
