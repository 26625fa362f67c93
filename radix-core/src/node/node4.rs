//! node4: up to four children behind a sorted chunk array of four bytes,
//! searched as one 32-bit word: the classic "which byte is zero" test on
//! the word XOR the broadcast key, with no loop and no branch on the count.
//! (The test can flag a byte above a true zero, never one below it, so the
//! lowest flag is exact; the padding makes the count irrelevant.)

use core::ptr::NonNull;

use super::sorted::{sorted_node_kind, ChunkSearch};
use super::Kind;

/// The node4 kind.
pub(crate) enum Node4 {}

impl ChunkSearch for Node4 {
    const KIND: Kind = Kind::N4;
    /// A node4's slots share the chunks' line or the next one.
    const PREFETCH_SLOTS: bool = false;
    const CHUNKS: usize = 4;

    #[inline(always)]
    fn find(chunks: NonNull<u8>, chunk: u8) -> Option<usize> {
        let zero_bytes = matches(chunks, chunk);
        (zero_bytes != 0).then(|| zero_bytes.trailing_zeros() as usize / 8)
    }

    #[inline(always)]
    fn position(chunks: NonNull<u8>, chunk: u8) -> (bool, usize) {
        // The first chunk on its own first: a node4 with one child (the
        // chains below sparse keys' top levels) answers with one compare.
        // SAFETY: a node4's chunk array is initialised.
        if unsafe { chunks.read() } == chunk {
            return (true, 0);
        }
        let zero_bytes = matches(chunks, chunk);
        // trailing_zeros(0) is 32: byte 4, which the mask turns into 0.
        (
            zero_bytes != 0,
            (zero_bytes.trailing_zeros() as usize / 8) & 3,
        )
    }

    #[inline(always)]
    fn lower_bound(chunks: NonNull<u8>, count: usize, chunk: u8) -> usize {
        // SAFETY: `count <= 4` chunks are initialised.
        (0..count)
            .find(|&i| unsafe { chunks.add(i).read() } >= chunk)
            .unwrap_or(count)
    }
}

/// The high bit of byte `i` set when chunk `i` may equal `chunk` (exactly
/// for the lowest set bit; see the module docs).
#[inline(always)]
fn matches(chunks: NonNull<u8>, chunk: u8) -> u32 {
    const ONES: u32 = 0x0101_0101;
    const HIGHS: u32 = 0x8080_8080;
    // SAFETY: all four chunk bytes are initialised; the array starts at
    // byte 4 of a node aligned to at least 8, so the load is aligned.
    let word = u32::from_le_bytes(unsafe { chunks.cast::<[u8; 4]>().read() });
    let diff = word ^ (u32::from(chunk) * ONES);
    diff.wrapping_sub(ONES) & !diff & HIGHS
}

sorted_node_kind!(Node4);
