//! Portable scalar search, the reference for the vector versions.

use super::GROUP_BYTES;

/// Bit `i` set when `chunks[i] == key`.
#[inline]
pub fn eq_mask(chunks: &[u8; GROUP_BYTES], key: u8) -> u32 {
    chunks
        .iter()
        .enumerate()
        .fold(0, |m, (i, &c)| m | (((c == key) as u32) << i))
}

/// Bit `i` set when `chunks[i] >= key` (unsigned).
#[inline]
pub fn ge_mask(chunks: &[u8; GROUP_BYTES], key: u8) -> u32 {
    chunks
        .iter()
        .enumerate()
        .fold(0, |m, (i, &c)| m | (((c >= key) as u32) << i))
}
