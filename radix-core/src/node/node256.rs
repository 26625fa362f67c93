//! node256: a child for every chunk value. Slot `c` belongs to chunk `c`; a
//! 256-bit bitmap says which slots are in use, so walking the children
//! skips empty stretches a word at a time.
//!
//! In an inner node256 the slots of absent children are also null, so a
//! lookup reads the slot alone and needs no bitmap: one load, one cache
//! line, instead of two (PostgreSQL reads the bitmap first). The same holds
//! for last-level node256s whose value layout never stores a null word
//! ([`ValueLayout::NONNULL_SLOT`](crate::value::ValueLayout::NONNULL_SLOT):
//! leaves, and varlen values such as the TID store's entries). Such nodes
//! have their slots cleared when created ([`Node256::clear_slots`]),
//! `remove` clears the slot it empties, and `verify` checks the agreement.

use core::ptr::NonNull;

use super::{Entry, Kind, NodeKind, count, header, slot_ptr, write_header};
use crate::ptr::StoredRef;

/// The node256 kind.
pub(crate) enum Node256 {}

const BITMAP_AT: usize = 8;

#[cfg_attr(not(debug_assertions), inline(always))]
fn bitmap_word(node: NonNull<u8>, chunk: usize) -> NonNull<u64> {
    // SAFETY: the four bitmap words lie inside every node256's allocation.
    unsafe { node.byte_add(BITMAP_AT).cast::<u64>().add(chunk / 64) }
}

impl NodeKind for Node256 {
    const KIND: Kind = Kind::N256;
    const INDEX_END: usize = BITMAP_AT + 32;

    #[inline]
    unsafe fn init(node: NonNull<u8>, class: usize) {
        // SAFETY: the fresh allocation covers header and bitmap.
        unsafe {
            write_header(node, Kind::N256, class);
            node.byte_add(BITMAP_AT).write_bytes(0, 32);
        }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn find<S>(node: NonNull<u8>, chunk: u8) -> Option<NonNull<S>> {
        let chunk = chunk as usize;
        // SAFETY: caller's contract; 256 slots exist.
        unsafe {
            if bitmap_word(node, chunk).read() & (1u64 << (chunk % 64)) == 0 {
                None
            } else {
                Some(slot_ptr(node, Self::INDEX_END, chunk))
            }
        }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn prefetch_lookup<S>(node: NonNull<u8>, chunk: u8) {
        let offset =
            super::slots_offset::<S>(Self::INDEX_END) + chunk as usize * core::mem::size_of::<S>();
        crate::simd::prefetch(node.as_ptr().cast_const().wrapping_add(offset));
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn find_nonnull<S>(node: NonNull<u8>, chunk: u8) -> Option<NonNull<S>> {
        // SAFETY: caller's contract: 256 slots exist, each an initialised
        // pointer-sized word that is null exactly when its chunk is absent.
        unsafe {
            let slot = slot_ptr::<S>(node, Self::INDEX_END, chunk as usize);
            (!slot.cast::<*const u8>().read().is_null()).then_some(slot)
        }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn find_child<R: StoredRef>(node: NonNull<u8>, chunk: u8) -> Option<R> {
        // An inner node256's absent children's slots are null (module
        // docs), and `Option<R>` is an `R` with null as `None` (a
        // `StoredRef` is a transparent non-zero word).
        // SAFETY: caller's contract (a live inner node256); see above.
        unsafe { slot_ptr::<Option<R>>(node, Self::INDEX_END, chunk as usize).read() }
    }

    #[inline]
    unsafe fn insert<S>(node: NonNull<u8>, chunk: u8, value: S) {
        let chunk = chunk as usize;
        // SAFETY: caller's contract; 256 slots exist.
        unsafe {
            let word = bitmap_word(node, chunk);
            word.write(word.read() | (1u64 << (chunk % 64)));
            slot_ptr::<S>(node, Self::INDEX_END, chunk).write(value);
            (*header(node).as_ptr()).count += 1;
        }
    }

    #[inline]
    unsafe fn remove<S>(node: NonNull<u8>, chunk: u8) -> Option<S> {
        let chunk = chunk as usize;
        // SAFETY: caller's contract; a set bit marks a slot in use.
        unsafe {
            let word = bitmap_word(node, chunk);
            let bits = word.read();
            let bit = 1u64 << (chunk % 64);
            if bits & bit == 0 {
                return None;
            }
            word.write(bits & !bit);
            (*header(node).as_ptr()).count -= 1;
            let slot = slot_ptr::<S>(node, Self::INDEX_END, chunk);
            let value = slot.read();
            // Keeps an inner node's absent children null (module docs).
            slot.write_bytes(0, 1);
            Some(value)
        }
    }

    #[inline]
    unsafe fn seek(_node: NonNull<u8>, chunk: u8) -> u16 {
        chunk as u16
    }

    #[inline]
    unsafe fn entry_at<S>(node: NonNull<u8>, pos: u16) -> Option<Entry<S>> {
        let mut pos = pos as usize;
        // SAFETY: caller's contract; 256 slots exist.
        unsafe {
            while pos < 256 {
                let bits = bitmap_word(node, pos).read() >> (pos % 64);
                if bits != 0 {
                    let chunk = pos + bits.trailing_zeros() as usize;
                    return Some(Entry {
                        chunk: chunk as u8,
                        slot: slot_ptr(node, Self::INDEX_END, chunk),
                        next: chunk as u16 + 1,
                    });
                }
                pos = (pos / 64 + 1) * 64;
            }
            None
        }
    }

    #[inline]
    unsafe fn entry_before<S>(node: NonNull<u8>, end: u16) -> Option<Entry<S>> {
        let mut end = end as usize;
        // SAFETY: caller's contract; 256 slots exist.
        unsafe {
            while end > 0 {
                let last = end - 1;
                // Keep the bits at or below `last` within its word.
                let bits = bitmap_word(node, last).read() << (63 - last % 64);
                if bits != 0 {
                    let chunk = last - bits.leading_zeros() as usize;
                    return Some(Entry {
                        chunk: chunk as u8,
                        slot: slot_ptr(node, Self::INDEX_END, chunk),
                        next: chunk as u16,
                    });
                }
                end = last / 64 * 64;
            }
            None
        }
    }
}

impl Node256 {
    /// Nulls every slot of a fresh node256 whose slots are `S`.
    ///
    /// # Safety
    ///
    /// `node` is a fresh node256 allocation for slots of type `S`.
    #[inline]
    pub(crate) unsafe fn clear_slots<S>(node: NonNull<u8>) {
        // SAFETY: caller's contract; 256 slots exist.
        unsafe { slot_ptr::<S>(node, Self::INDEX_END, 0).write_bytes(0, 256) }
    }

    /// Whether the null slots of `node` are exactly its absent chunks; for
    /// invariant checks.
    ///
    /// # Safety
    ///
    /// `node` is a live node256 whose pointer-sized slots `S` were cleared
    /// at creation (an inner node, or a leaf of a
    /// [`NONNULL_SLOT`](crate::value::ValueLayout::NONNULL_SLOT) layout).
    pub(crate) unsafe fn check_null_slots<S>(node: NonNull<u8>) -> Result<(), &'static str> {
        for chunk in 0..=255u8 {
            // SAFETY: caller's contract.
            let (present, nonnull) = unsafe {
                (
                    Self::find::<S>(node, chunk).is_some(),
                    Self::find_nonnull::<S>(node, chunk).is_some(),
                )
            };
            if present != nonnull {
                return Err("node256 null slots and bitmap disagree");
            }
        }
        Ok(())
    }

    /// Whether the bitmap's population agrees with the count; for invariant
    /// checks.
    ///
    /// # Safety
    ///
    /// `node` is a live node256.
    pub(crate) unsafe fn check(node: NonNull<u8>) -> Result<(), &'static str> {
        // SAFETY: caller's contract.
        unsafe {
            let ones: u32 = (0..4)
                .map(|w| bitmap_word(node, w * 64).read().count_ones())
                .sum();
            if ones as usize != count(node) {
                return Err("node256 count disagrees with its bitmap");
            }
        }
        Ok(())
    }
}
