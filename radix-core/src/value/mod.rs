//! Value layouts: how a value sits in a last-level slot.
//!
//! A layout is chosen at compile time by the configuration and decides the
//! last-level node's slot type:
//!
//! | layout | slot | when |
//! |---|---|---|
//! | [`Embedded<V>`] | one word holding `V`'s bytes | `V` fits a pointer-sized, pointer-aligned word |
//! | [`Leaf<V>`] | one word holding a pointer to `V` | any `V`: one allocation per value |
//! | [`Auto<V>`] | embedded when `V` fits, otherwise a leaf | the default; the branch is on a constant |
//! | [`Varlen<V>`] | embedded with the tag bit when the value is small at run time, otherwise a pointer to a leaf of its size | [`VarlenValue`] types such as the TID store's entries |
//! | [`Inline<V>`] | `V` itself: last-level nodes become leaf nodes with `V` slots | values of 9 to about 64 bytes, saving a pointer and an allocation each |
//!
//! Slots are moved with plain memory copies when nodes grow or shrink, which
//! is sound for every Rust value. A layout turns an input into a slot value
//! *before* the tree makes room for it, so a panic in user code (a
//! [`VarlenValue`] method) can never leave a node with a half-written slot.

mod clone;
mod drop_all;
mod extend;
mod inline;
mod varlen;
mod word;

use core::ptr::NonNull;

pub use clone::CloneLayout;
pub(crate) use drop_all::DropsAll;
pub use extend::{CollectFrom, ExtendFrom};
pub use inline::Inline;
pub use varlen::{TAG_BIT, VarBytes, Varlen, VarlenValue};
pub use word::{Auto, Embedded, Leaf, SlotWord, Word};

use crate::mem::Memory;

/// How values are stored in last-level slots.
///
/// The trait is sealed: the layouts of this module are its
/// implementations; a new value encoding implements [`VarlenValue`]
/// instead.
///
/// # Safety
///
/// `get` must return a reference valid for as long as the slot is neither
/// moved out by `take` nor dropped; `into_slot`, `take` and `drop_slot` must
/// balance every allocation they make.
pub unsafe trait ValueLayout: crate::sealed::Sealed {
    /// The type a lookup returns a reference to.
    type Value: ?Sized;
    /// What a last-level node stores per key.
    type Slot;
    /// What `insert` takes: the value, or for [`Varlen`] a reference to it.
    type Input<'a>
    where
        Self: 'a;
    /// What `insert` and `remove` give back for a previous value: `Option<V>`,
    /// or for [`Varlen`] whether there was one.
    type Old;
    /// A short name for the layout, for `Debug` output and statistics.
    const NAME: &'static str;
    /// Whether dropping or clearing the tree must visit every slot (values
    /// with `Drop`, or leaves to free). When false, clearing the tree just
    /// releases its slab blocks.
    const VISIT_ON_DROP: bool;
    /// Whether every slot value is a pointer-sized word that is never null
    /// (a leaf pointer, or an embedded value carrying a tag bit). A
    /// last-level node256 then keeps its absent slots null and a lookup
    /// reads the slot alone, without the bitmap.
    ///
    /// A layout that sets it promises that `Slot` is pointer-sized and that
    /// every slot value `into_slot` makes is fully initialised and not all
    /// zero bits.
    const NONNULL_SLOT: bool = false;

    /// Whether values have drop glue (a `V` that needs dropping). A layout
    /// that only needs to visit its slots to free leaves may skip the visit
    /// when the back end frees leaves wholesale
    /// ([`Memory::releases_leaves`]).
    const DROPS_VALUES: bool;

    /// Size of a value in bytes, 0 for values sized at run time; with
    /// [`VALUE_ALIGN`](Self::VALUE_ALIGN), part of the configuration a
    /// shared tree checks when another process attaches.
    const VALUE_SIZE: usize;
    /// Alignment of a value.
    const VALUE_ALIGN: usize;

    /// The `Old` value meaning "there was none".
    fn absent() -> Self::Old;

    /// Turns an input into a slot value, allocating a leaf if needed.
    ///
    /// # Errors
    ///
    /// The back end could not allocate the leaf; nothing was allocated.
    fn into_slot<M: Memory>(input: Self::Input<'_>, mem: &mut M) -> Result<Self::Slot, M::Error>;

    /// The value a slot holds.
    ///
    /// # Safety
    ///
    /// `slot` holds a live slot value made on `mem`; the reference must not
    /// outlive it.
    unsafe fn get<'a, M: Memory>(slot: NonNull<Self::Slot>, mem: &M) -> &'a Self::Value;

    /// Consumes a slot value that has been removed from its node.
    ///
    /// # Safety
    ///
    /// `slot` is a live slot value from `into_slot` on the same `mem`.
    unsafe fn take<M: Memory>(slot: Self::Slot, mem: &mut M) -> Self::Old;

    /// Drops the slot value in place, freeing its leaf.
    ///
    /// # Safety
    ///
    /// As for `take`; the slot is dead afterwards.
    unsafe fn drop_slot<M: Memory>(slot: NonNull<Self::Slot>, mem: &mut M);

    /// Whether the slot's value lives in a separate leaf allocation.
    ///
    /// # Safety
    ///
    /// `slot` holds a live slot value.
    unsafe fn is_leaf(slot: NonNull<Self::Slot>) -> bool;

    /// Whether the slot is encoded as this layout says it must be (for
    /// [`RawTree::verify`](crate::RawTree::verify)); layouts whose every
    /// bit pattern is valid accept everything.
    ///
    /// # Safety
    ///
    /// `slot` holds a live slot value made on `mem`.
    unsafe fn check_slot<M: Memory>(
        slot: NonNull<Self::Slot>,
        mem: &M,
    ) -> Result<(), &'static str> {
        let _ = (slot, mem);
        Ok(())
    }
}

/// Layouts whose values are sized and may be changed in place.
///
/// # Safety
///
/// As for [`ValueLayout::get`].
pub unsafe trait MutableLayout:
    ValueLayout<Value: Sized> + CollectFrom<<Self as ValueLayout>::Value>
{
    /// The value a slot holds, mutably.
    ///
    /// # Safety
    ///
    /// `slot` holds a live slot value made on `mem`, and nothing else refers
    /// to it while the reference lives.
    unsafe fn get_mut<'a, M: Memory>(slot: NonNull<Self::Slot>, mem: &M) -> &'a mut Self::Value;

    /// Moves the value out of a slot value removed from its node (or from
    /// a tree that will not drop it again), freeing its leaf.
    ///
    /// # Safety
    ///
    /// As for [`ValueLayout::take`].
    unsafe fn into_value<M: Memory>(slot: Self::Slot, mem: &mut M) -> Self::Value
    where
        Self::Value: Sized;

    /// The same value as a slot value on `dst`: its leaf, if it has one,
    /// handed over ([`Memory::hand_over_leaf`]) or else moved into a new
    /// leaf on `dst`. For moving whole subtrees between trees.
    ///
    /// # Safety
    ///
    /// `slot` is a live slot value made on `src`, consumed here.
    unsafe fn move_slot<M: crate::mem::InfallibleMemory>(
        slot: Self::Slot,
        src: &mut M,
        dst: &mut M,
    ) -> Self::Slot
    where
        Self::Value: Sized,
    {
        // SAFETY: the caller's contract.
        let value = unsafe { Self::into_value(slot, src) };
        let Ok(slot) = Self::into_slot(Self::input(value), dst);
        slot
    }

    /// A value as what `insert` takes.
    fn input<'a>(value: Self::Value) -> Self::Input<'a>
    where
        Self: 'a,
        Self::Value: Sized;

    /// What `insert` and `remove` returned, as the value they replaced or
    /// removed.
    fn old_value(old: Self::Old) -> Option<Self::Value>
    where
        Self::Value: Sized;
}
