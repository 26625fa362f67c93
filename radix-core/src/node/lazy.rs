//! Lazy leaves: a subtree of one key, not built.
//!
//! With lazy expansion, a child slot that would lead to a subtree holding
//! a single key instead refers to a *lazy leaf*: the whole key and its
//! value slot, side by side in one small object from a pool of its own.
//! The reference carries bit 2 ([`NodePtr::lazy`](crate::ptr::NodePtr))
//! so a descent tells it from a node without loading it, and a lookup that
//! reaches one compares the stored key with its own: equal is a hit, any
//! other key a miss. An insert whose key meets a lazy leaf builds just
//! the node where the two keys diverge (with path compression; without it,
//! also the single-child nodes down to there), and a removal that leaves a
//! node with one key collapses it back into a lazy leaf.
//!
//! A random `u64` key in a tree of a million then costs about three
//! nodes' share of slots plus one 16-byte lazy leaf (24 bytes for a `u128`
//! key), where the
//! uncompressed tree builds five single-child node4s below the dense top.

use core::ptr::NonNull;

use crate::ptr::NODE_ALIGN;

/// Where a lazy leaf keeps its key: right after the value slot, which
/// comes first so that it has the slot type's alignment (a lookup hands
/// out references into it). The key is read unaligned, so a `u128` key
/// beside a one-word slot makes a 24-byte leaf, not the 32 bytes a
/// 16-aligned `u128` field would take.
const fn key_offset<S>() -> usize {
    size_of::<S>()
}

/// The alignment of a lazy leaf with slot `S`: the slot's, and at least
/// [`NODE_ALIGN`] so that its pointer has room for the tags.
pub(crate) const fn lazy_leaf_align<S>() -> usize {
    if align_of::<S>() > NODE_ALIGN {
        align_of::<S>()
    } else {
        NODE_ALIGN
    }
}

/// The size of a lazy leaf of key `K` and slot `S`: the slot, then the
/// key, rounded up to the leaf's alignment.
pub(crate) const fn lazy_leaf_size<K, S>() -> usize {
    let align = lazy_leaf_align::<S>();
    (key_offset::<S>() + size_of::<K>()).div_ceil(align) * align
}

/// The key of the lazy leaf at `leaf`.
///
/// # Safety
///
/// `leaf` is a live, initialised lazy leaf of key `K` and slot `S`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn key<K: Copy, S>(leaf: NonNull<u8>) -> K {
    // SAFETY: the caller's contract: the key was written at this offset,
    // inside the leaf's allocation.
    unsafe {
        leaf.byte_add(key_offset::<S>())
            .cast::<K>()
            .as_ptr()
            .read_unaligned()
    }
}

/// The value slot of the lazy leaf at `leaf`.
///
/// # Safety
///
/// `leaf` is a live lazy leaf of slot `S`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn slot<S>(leaf: NonNull<u8>) -> NonNull<S> {
    // The slot is at the start of the leaf, aligned as the pool is.
    leaf.cast()
}

/// Initialises a lazy leaf.
///
/// # Safety
///
/// `leaf` is a fresh allocation of [`lazy_leaf_size`] bytes and [`lazy_leaf_align`].
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn init<K, S>(leaf: NonNull<u8>, key: K, slot: S) {
    // SAFETY: the caller's contract: the allocation holds a slot at its
    // start, aligned for `S`, and the key after it.
    unsafe {
        leaf.cast::<S>().write(slot);
        leaf.byte_add(key_offset::<S>())
            .cast::<K>()
            .as_ptr()
            .write_unaligned(key);
    }
}
