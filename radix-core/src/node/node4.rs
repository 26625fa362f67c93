//! node4: up to four children behind a sorted chunk array, searched by a
//! plain scan (four bytes are cheaper to scan than to load into a vector).

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
    fn find(chunks: NonNull<u8>, count: usize, chunk: u8) -> Option<usize> {
        // SAFETY: `count <= 4` chunks are initialised.
        (0..count).find(|&i| unsafe { chunks.add(i).read() } == chunk)
    }

    #[inline(always)]
    fn lower_bound(chunks: NonNull<u8>, count: usize, chunk: u8) -> usize {
        // SAFETY: `count <= 4` chunks are initialised.
        (0..count)
            .find(|&i| unsafe { chunks.add(i).read() } >= chunk)
            .unwrap_or(count)
    }
}

sorted_node_kind!(Node4);
