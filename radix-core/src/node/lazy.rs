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
//! nodes' share of slots plus one 16-byte lazy leaf, where the
//! uncompressed tree builds five single-child node4s below the dense top.

use core::ptr::NonNull;

use crate::mem::PoolSpec;
use crate::ptr::NODE_ALIGN;

/// A lazy leaf: a key and its value slot.
#[repr(C)]
pub(crate) struct LazyLeaf<K, S> {
    pub(crate) key: K,
    pub(crate) slot: S,
}

/// The pool of lazy leaves of key `K` and slot `S`.
pub(crate) const fn lazy_leaf_spec<K, S>() -> PoolSpec {
    let align = if align_of::<LazyLeaf<K, S>>() > NODE_ALIGN {
        align_of::<LazyLeaf<K, S>>()
    } else {
        NODE_ALIGN
    };
    PoolSpec {
        size: size_of::<LazyLeaf<K, S>>().div_ceil(align) * align,
        align,
    }
}

/// The key of the lazy leaf at `leaf`.
///
/// # Safety
///
/// `leaf` is a live, initialised lazy leaf of key `K` and slot `S`.
#[inline(always)]
pub(crate) unsafe fn key<K: Copy, S>(leaf: NonNull<u8>) -> K {
    // SAFETY: the caller's contract.
    unsafe { (*leaf.cast::<LazyLeaf<K, S>>().as_ptr()).key }
}

/// The value slot of the lazy leaf at `leaf`.
///
/// # Safety
///
/// `leaf` is a live lazy leaf of key `K` and slot `S`.
#[inline(always)]
pub(crate) unsafe fn slot<K, S>(leaf: NonNull<u8>) -> NonNull<S> {
    // SAFETY: the caller's contract; the field is inside the allocation.
    unsafe { leaf.byte_add(core::mem::offset_of!(LazyLeaf<K, S>, slot)).cast() }
}

/// Initialises a lazy leaf.
///
/// # Safety
///
/// `leaf` is a fresh allocation from the pool of [`lazy_leaf_spec`].
#[inline(always)]
pub(crate) unsafe fn init<K, S>(leaf: NonNull<u8>, key: K, slot: S) {
    // SAFETY: the caller's contract.
    unsafe { leaf.cast::<LazyLeaf<K, S>>().write(LazyLeaf { key, slot }) }
}
