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

/// `chunks[from..] = key`, as four 8-byte words each blended with a mask of
/// the bytes kept.
#[inline]
pub fn pad(chunks: &mut [u8; GROUP_BYTES], from: usize, key: u8) {
    let fill = u64::from(key) * 0x0101_0101_0101_0101;
    for (j, bytes) in chunks.chunks_exact_mut(8).enumerate() {
        let kept = from.saturating_sub(8 * j).min(8) as u32;
        let keep = !u64::MAX.checked_shl(8 * kept).unwrap_or(0);
        let word = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
        bytes.copy_from_slice(&((word & keep) | (fill & !keep)).to_le_bytes());
    }
}
