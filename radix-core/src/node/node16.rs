//! node16: up to 32 children behind a sorted chunk array of 32 bytes,
//! searched by comparing the whole padded array against the key chunk with
//! SIMD ([`crate::simd`]). The array is 32
//! bytes whatever the class, so every node16 class has the same layout and
//! one search serves them all.
//!
//! Before the search, a lookup tries the index a run of consecutive chunks
//! would give (`chunk - chunks[0]`, confirmed by one compare): dense keys
//! make runs, and a confirmed guess starts the child's load without
//! waiting for the vector compare and bit scan (see `sorted::run_guess`).

use core::ptr::NonNull;

use super::Kind;
use super::sorted::{ChunkSearch, sorted_node_kind};
use crate::simd;

/// The node16 kind.
pub(crate) enum Node16 {}

impl ChunkSearch for Node16 {
    const KIND: Kind = Kind::N16;
    const PREFETCH_SLOTS: bool = true;
    const CHUNKS: usize = simd::GROUP_BYTES;
    const BRANCH_FREE: bool = true;
    const GUESS_RUN: bool = true;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn find(chunks: NonNull<u8>, chunk: u8) -> Option<usize> {
        // SAFETY: a node16's 32-byte chunk array is always initialised and
        // suitably aligned for a byte array.
        let group = unsafe { chunks.cast::<[u8; simd::GROUP_BYTES]>().as_ref() };
        simd::find(group, chunk)
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn position(chunks: NonNull<u8>, chunk: u8) -> (bool, usize) {
        // SAFETY: as in `find`.
        let group = unsafe { chunks.cast::<[u8; simd::GROUP_BYTES]>().as_ref() };
        simd::position(group, chunk)
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn pad(chunks: NonNull<u8>, from: usize, chunk: u8) {
        // SAFETY: the caller's contract: a whole 32-byte array.
        let group = unsafe { chunks.cast::<[u8; simd::GROUP_BYTES]>().as_mut() };
        simd::pad(group, from, chunk);
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn lower_bound(chunks: NonNull<u8>, count: usize, chunk: u8) -> usize {
        // SAFETY: as in `find`.
        let group = unsafe { chunks.cast::<[u8; simd::GROUP_BYTES]>().as_ref() };
        simd::lower_bound(group, count, chunk)
    }
}

sorted_node_kind!(Node16);
