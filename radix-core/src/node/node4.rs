//! node4: up to four children behind a sorted chunk array of four bytes,
//! searched by four compares in order, with no loop and no test of the
//! count: the padding (copies of the last chunk) makes the first match the
//! real one.
//!
//! Branches, not a branch-free word test, because of what they let the
//! CPU do: a predicted compare puts nothing between this node's load and
//! the child's, while a word test (XOR with the broadcast chunk, the
//! "which byte is zero" trick, a bit scan) adds about a dozen cycles to
//! every level of a lookup. Node4 lookups are predictable where they are
//! common: keys in order, and the single-child node4s under sparse keys'
//! top levels. Measured on RT-5 with fanouts 3 and 4 (only node4s below
//! the top): lookups 1.3x faster; RT-1 to RT-4 unchanged.
//!
//! Having branched, a lookup reads the slot only when found
//! ([`ChunkSearch::BRANCH_FREE`] is false): selecting between the slot and
//! an absent word, as the branch-free node16 does, cost a miss about a
//! dozen more instructions. Misses at a node4 are what most TID store
//! lookups are on a sparse table (TS-7's root has two children of sixteen
//! possible): callgrind counts 37.4 instructions per TS-7 lookup against
//! 47.4 with the select, and RT-5 fanout 3 lookups fell from 138 to 122.
//!
//! Nor does node4 guess the index of a run first, as node16 does: the
//! predicted compares already let the child's load start without waiting
//! for the index, and the guess only added work, most of all to misses
//! (RT-3 lookups 1.25x, TS-7 shuffled 1.49x; `benches/RESULTS.md`).

use core::ptr::NonNull;

use super::Kind;
use super::sorted::{ChunkSearch, sorted_node_kind};

/// The node4 kind.
pub(crate) enum Node4 {}

impl ChunkSearch for Node4 {
    const KIND: Kind = Kind::N4;
    /// A node4's slots share the chunks' line or the next one.
    const PREFETCH_SLOTS: bool = false;
    const CHUNKS: usize = 4;
    const BRANCH_FREE: bool = false;
    const GUESS_RUN: bool = false;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn find(chunks: NonNull<u8>, chunk: u8) -> Option<usize> {
        let (found, i) = Self::position(chunks, chunk);
        found.then_some(i)
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn position(chunks: NonNull<u8>, chunk: u8) -> (bool, usize) {
        // Predicted branches: see the module docs.
        // SAFETY: a node4's four chunk bytes are initialised.
        let [c0, c1, c2, c3] = unsafe { chunks.cast::<[u8; 4]>().read() };
        if c0 == chunk {
            (true, 0)
        } else if c1 == chunk {
            (true, 1)
        } else if c2 == chunk {
            (true, 2)
        } else {
            (c3 == chunk, 3)
        }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn pad(chunks: NonNull<u8>, from: usize, chunk: u8) {
        // Keep the bytes below `from`, the rest become `chunk`: one word.
        let keep = if from >= 4 {
            u32::MAX
        } else {
            (1u32 << (8 * from)) - 1
        };
        // SAFETY: the four chunk bytes are initialised; the array starts at
        // byte 4 of a node aligned to at least 8, so the word is aligned.
        unsafe {
            let word = chunks.cast::<u32>().read();
            let padded = (word & keep) | ((u32::from(chunk) * 0x0101_0101) & !keep);
            chunks.cast::<u32>().write(padded);
        }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn lower_bound(chunks: NonNull<u8>, count: usize, chunk: u8) -> usize {
        // SAFETY: `count <= 4` chunks are initialised.
        (0..count)
            .find(|&i| unsafe { chunks.add(i).read() } >= chunk)
            .unwrap_or(count)
    }
}

sorted_node_kind!(Node4);
