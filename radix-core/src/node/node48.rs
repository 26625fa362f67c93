//! node48: up to 64 children. A 256-byte map takes a chunk to its slot
//! (`EMPTY` when absent) and a 64-bit `isset` bitmap records which slots are
//! in use, so a lookup is two dependent loads and insertion finds a free
//! slot with one trailing-zeros count.
//!
//! An inner node48 hands a lookup its child with the trait's default
//! [`find_child`](NodeKind::find_child): a branch on the map byte, then the
//! slot's read. The branch is predicted (a lookup of a present key takes it
//! the same way at every node48), so the slot's load starts as early as it
//! would after a branch-free select of "slot or absent word", and it is
//! three instructions (map read, compare-and-branch, slot read) where the
//! select was six (map read, compare, address, select, read, null test).
//! Against the select, RT-5 lookups at fanouts 48 and 64 (node48s below two
//! levels of node4) took 0.87x the time, the other workloads the same
//! (`benches/RESULTS.md`, "Node48's child read after a branch").
//!
//! PostgreSQL once cleared the map entry on delete but not the slot's
//! `isset` bit, and the next insert looped forever looking for a free slot;
//! [`Node48::remove`] clears both.

use core::ptr::NonNull;

use super::{Entry, Kind, NodeKind, count, header, slot_ptr, write_header};

/// The node48 kind.
pub(crate) enum Node48 {}

const ISSET_AT: usize = 8;
const MAP_AT: usize = 16;
const EMPTY: u8 = 0xFF;

#[cfg_attr(not(debug_assertions), inline(always))]
fn isset(node: NonNull<u8>) -> NonNull<u64> {
    // SAFETY: the bitmap lies inside every node48's allocation.
    unsafe { node.byte_add(ISSET_AT).cast() }
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn map(node: NonNull<u8>) -> NonNull<u8> {
    // SAFETY: the map lies inside every node48's allocation.
    unsafe { node.byte_add(MAP_AT) }
}

impl NodeKind for Node48 {
    const KIND: Kind = Kind::N48;
    const INDEX_END: usize = MAP_AT + 256;

    #[inline]
    unsafe fn init(node: NonNull<u8>, class: usize) {
        // SAFETY: the fresh allocation covers header, bitmap and map.
        unsafe {
            write_header(node, Kind::N48, class);
            isset(node).write(0);
            map(node).write_bytes(EMPTY, 256);
        }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn find<S>(node: NonNull<u8>, chunk: u8) -> Option<NonNull<S>> {
        // SAFETY: caller's contract; a mapped slot index is below capacity.
        unsafe {
            let idx = map(node).add(chunk as usize).read();
            if idx == EMPTY {
                None
            } else {
                Some(slot_ptr(node, Self::INDEX_END, idx as usize))
            }
        }
    }

    /// The map line that holds `chunk`'s slot index, which is all a
    /// lookup reads before its slot (the header line holds only the
    /// first 48 chunks' indexes).
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn prefetch_lookup<S>(node: NonNull<u8>, chunk: u8) {
        crate::simd::prefetch(
            node.as_ptr()
                .cast_const()
                .wrapping_add(MAP_AT + chunk as usize),
        );
    }

    #[inline]
    unsafe fn insert<S>(node: NonNull<u8>, chunk: u8, value: S) {
        // SAFETY: caller's contract: the node has a free slot below its
        // capacity (at most 64), so `!isset` has a set bit there.
        unsafe {
            let bits = isset(node).read();
            let idx = (!bits).trailing_zeros() as usize;
            debug_assert!(idx < 64);
            isset(node).write(bits | (1u64 << idx));
            map(node).add(chunk as usize).write(idx as u8);
            slot_ptr::<S>(node, Self::INDEX_END, idx).write(value);
            (*header(node).as_ptr()).count += 1;
        }
    }

    /// The slots in the order given, each chunk mapped to its index, and
    /// the first `n` bits of `isset`.
    #[inline]
    unsafe fn fill_from_sorted<S>(
        node: NonNull<u8>,
        chunks: NonNull<u8>,
        slots: NonNull<S>,
        n: usize,
    ) {
        debug_assert!(n <= 64);
        // SAFETY: the caller's contract: a fresh node48 (every map entry
        // `EMPTY`, no slot set) with room for `n <= 64` distinct chunks;
        // the source slots are another node's.
        unsafe {
            for i in 0..n {
                map(node).add(chunks.add(i).read() as usize).write(i as u8);
            }
            slots.copy_to_nonoverlapping(slot_ptr::<S>(node, Self::INDEX_END, 0), n);
            isset(node).write(u64::MAX.checked_shr(64 - n as u32).unwrap_or(0));
            (*header(node).as_ptr()).count = n as u16;
        }
    }

    #[inline]
    unsafe fn remove<S>(node: NonNull<u8>, chunk: u8) -> Option<S> {
        // SAFETY: caller's contract; a mapped chunk's slot is in use.
        unsafe {
            let entry = map(node).add(chunk as usize);
            let idx = entry.read();
            if idx == EMPTY {
                return None;
            }
            let idx = idx as usize;
            debug_assert!(idx < 64);
            entry.write(EMPTY);
            isset(node).write(isset(node).read() & !(1u64 << idx));
            (*header(node).as_ptr()).count -= 1;
            Some(slot_ptr::<S>(node, Self::INDEX_END, idx).read())
        }
    }

    #[inline]
    unsafe fn seek(_node: NonNull<u8>, chunk: u8) -> u16 {
        chunk as u16
    }

    #[inline]
    unsafe fn entry_at<S>(node: NonNull<u8>, pos: u16) -> Option<Entry<S>> {
        // SAFETY: caller's contract; the map has 256 initialised bytes.
        unsafe {
            if count(node) == 0 {
                return None;
            }
            let map = map(node);
            for chunk in pos as usize..256 {
                let idx = map.add(chunk).read();
                if idx != EMPTY {
                    return Some(Entry {
                        chunk: chunk as u8,
                        slot: slot_ptr(node, Self::INDEX_END, idx as usize),
                        next: chunk as u16 + 1,
                    });
                }
            }
            None
        }
    }

    #[inline]
    unsafe fn entry_before<S>(node: NonNull<u8>, end: u16) -> Option<Entry<S>> {
        // SAFETY: caller's contract; the map has 256 initialised bytes.
        unsafe {
            let map = map(node);
            (0..end as usize).rev().find_map(|chunk| {
                let idx = map.add(chunk).read();
                (idx != EMPTY).then(|| Entry {
                    chunk: chunk as u8,
                    slot: slot_ptr(node, Self::INDEX_END, idx as usize),
                    next: chunk as u16,
                })
            })
        }
    }
}

impl Node48 {
    /// The `isset` bitmap and whether each mapped chunk points at a set
    /// slot; for invariant checks.
    ///
    /// # Safety
    ///
    /// `node` is a live node48.
    pub(crate) unsafe fn check(node: NonNull<u8>) -> Result<(), &'static str> {
        // SAFETY: caller's contract.
        unsafe {
            let bits = isset(node).read();
            let mut mapped = 0u64;
            for chunk in 0..256 {
                let idx = map(node).add(chunk).read();
                if idx == EMPTY {
                    continue;
                }
                if idx >= 64 || mapped & (1 << idx) != 0 {
                    return Err("node48 maps two chunks to one slot, or past 64");
                }
                mapped |= 1 << idx;
            }
            if mapped != bits {
                return Err("node48 isset bits disagree with the chunk map");
            }
            if bits.count_ones() as usize != count(node) {
                return Err("node48 count disagrees with isset");
            }
            Ok(())
        }
    }
}
