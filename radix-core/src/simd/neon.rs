//! NEON search: unsigned compares (`vceqq_u8`, `vcgeq_u8`) on two 16-byte
//! registers, narrowed to a bit mask.
//!
//! NEON has no move-mask; each comparison lane (0x00 or 0xFF) is ANDed with
//! its bit weight and the weights are summed across each 8-lane half. The
//! compares are on `u8` lanes, so there is no signedness trap (PostgreSQL
//! hit one with signed lanes).

use core::arch::aarch64::*;

use super::GROUP_BYTES;

#[cfg_attr(not(debug_assertions), inline(always))]
fn to_mask(lanes: uint8x16_t) -> u32 {
    const WEIGHTS: [u8; 16] = [1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128];
    // SAFETY: NEON is part of the AArch64 baseline; the weight load reads
    // the 16-byte constant.
    unsafe {
        let weighted = vandq_u8(lanes, vld1q_u8(WEIGHTS.as_ptr()));
        let lo = vaddv_u8(vget_low_u8(weighted)) as u32;
        let hi = vaddv_u8(vget_high_u8(weighted)) as u32;
        lo | (hi << 8)
    }
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn halves(chunks: &[u8; GROUP_BYTES]) -> (uint8x16_t, uint8x16_t) {
    // SAFETY: both loads read 16 bytes inside the 32-byte array.
    unsafe { (vld1q_u8(chunks.as_ptr()), vld1q_u8(chunks.as_ptr().add(16))) }
}

/// Bit `i` set when `chunks[i] == key`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn eq_mask(chunks: &[u8; GROUP_BYTES], key: u8) -> u32 {
    let (lo, hi) = halves(chunks);
    // SAFETY: NEON is part of the AArch64 baseline.
    unsafe {
        let k = vdupq_n_u8(key);
        to_mask(vceqq_u8(lo, k)) | (to_mask(vceqq_u8(hi, k)) << 16)
    }
}

/// Bit `i` set when `chunks[i] >= key` (unsigned).
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn ge_mask(chunks: &[u8; GROUP_BYTES], key: u8) -> u32 {
    let (lo, hi) = halves(chunks);
    // SAFETY: NEON is part of the AArch64 baseline.
    unsafe {
        let k = vdupq_n_u8(key);
        to_mask(vcgeq_u8(lo, k)) | (to_mask(vcgeq_u8(hi, k)) << 16)
    }
}

/// `chunks[from..] = key`: the portable blend serves here (it is off the
/// lookup path).
pub use super::generic::pad;
