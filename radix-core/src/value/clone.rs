//! Cloning one value slot, for cloning a whole tree.
//!
//! A tree's [`Clone`] copies its nodes byte for byte, but a slot cannot be
//! copied so: an embedded or inline value may own memory (an `Rc` in a
//! one-word slot, a `String` inline), and a copied leaf reference would
//! have two trees free one leaf. Each slot is instead made anew from a
//! clone of its value, in the copy's memory.

use core::ptr::NonNull;

use super::{Inline, ValueLayout, Varlen, VarlenValue, Word};
use crate::mem::Memory;

/// Layouts whose slots can be cloned into another tree's memory.
///
/// # Safety
///
/// [`clone_slot`](CloneLayout::clone_slot) must return a slot value that
/// is independent of the one it read: it owns its own value and any leaf it
/// needs, allocated on `dst`, so that dropping either slot (with
/// [`ValueLayout::drop_slot`] or [`ValueLayout::take`]) on its own memory
/// never touches the other. It must not change the slot it reads, and if
/// it fails or panics it must leave nothing allocated on `dst`.
pub unsafe trait CloneLayout: ValueLayout {
    /// A new slot value on `dst` holding a clone of the value in `slot`.
    ///
    /// # Safety
    ///
    /// `slot` holds a live slot value made on `src`.
    ///
    /// # Errors
    ///
    /// `dst` could not allocate a leaf; nothing was allocated.
    unsafe fn clone_slot<M: Memory>(
        slot: NonNull<Self::Slot>,
        src: &M,
        dst: &mut M,
    ) -> Result<Self::Slot, M::Error>;

    /// A new slot value on `mem` holding a clone of the value in `slot`,
    /// which lives on the same `mem`: what splitting a range value
    /// ([`Config::clone_value_slot`](crate::Config::clone_value_slot))
    /// copies into each part.
    ///
    /// # Safety
    ///
    /// `slot` holds a live slot value made on `mem`.
    ///
    /// # Errors
    ///
    /// `mem` could not allocate a leaf; nothing was allocated.
    unsafe fn clone_slot_in<M: Memory>(
        slot: NonNull<Self::Slot>,
        mem: &mut M,
    ) -> Result<Self::Slot, M::Error>;
}

// SAFETY: the value is cloned before anything is allocated, and the clone
// is stored by `into_slot`, embedded or in a leaf of its own on `dst`.
unsafe impl<V: Clone, const EMBED: bool> CloneLayout for Word<V, EMBED> {
    #[inline]
    unsafe fn clone_slot<M: Memory>(
        slot: NonNull<Self::Slot>,
        src: &M,
        dst: &mut M,
    ) -> Result<Self::Slot, M::Error> {
        // SAFETY: the caller's contract: a live slot made on `src`.
        let value = unsafe { Self::get(slot, src) }.clone();
        Self::into_slot(value, dst)
    }

    #[inline]
    unsafe fn clone_slot_in<M: Memory>(
        slot: NonNull<Self::Slot>,
        mem: &mut M,
    ) -> Result<Self::Slot, M::Error> {
        // SAFETY: the caller's contract: a live slot made on `mem`; the
        // clone is taken before `mem` is borrowed again.
        let value = unsafe { Self::get(slot, &*mem) }.clone();
        Self::into_slot(value, mem)
    }
}

// SAFETY: the slot is the value; its clone owns whatever it owns.
unsafe impl<V: Clone> CloneLayout for Inline<V> {
    #[inline]
    unsafe fn clone_slot<M: Memory>(slot: NonNull<V>, src: &M, dst: &mut M) -> Result<V, M::Error> {
        // SAFETY: the caller's contract: a live slot made on `src`.
        let value = unsafe { Self::get(slot, src) }.clone();
        Self::into_slot(value, dst)
    }

    #[inline]
    unsafe fn clone_slot_in<M: Memory>(slot: NonNull<V>, mem: &mut M) -> Result<V, M::Error> {
        // SAFETY: the caller's contract: a live slot made on `mem`.
        let value = unsafe { Self::get(slot, &*mem) }.clone();
        Self::into_slot(value, mem)
    }
}

// SAFETY: a varlen value owns nothing and is its bytes (`VarlenValue`'s
// contract), so `into_slot` copying them into a new slot or a new leaf of
// their size on `dst` clones it; the value's own methods run before that
// leaf is allocated, and nothing can fail or panic after it.
unsafe impl<V: ?Sized + VarlenValue> CloneLayout for Varlen<V> {
    #[inline]
    unsafe fn clone_slot<M: Memory>(
        slot: NonNull<Self::Slot>,
        src: &M,
        dst: &mut M,
    ) -> Result<Self::Slot, M::Error> {
        // SAFETY: the caller's contract: a live slot made on `src`.
        let value = unsafe { Self::get(slot, src) };
        Self::into_slot(value, dst)
    }

    #[inline]
    unsafe fn clone_slot_in<M: Memory>(
        slot: NonNull<Self::Slot>,
        mem: &mut M,
    ) -> Result<Self::Slot, M::Error> {
        // SAFETY: the caller's contract: a live slot made on `mem`. The
        // value's bytes lie in the slot or its leaf, not in `mem` itself,
        // and `into_slot` copies them before anything is freed.
        let value = unsafe { Self::get(slot, &*mem) };
        Self::into_slot(value, mem)
    }
}
