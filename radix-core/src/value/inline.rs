//! Inline values: last-level nodes are leaf nodes whose slots are `V`.
//!
//! This is the inner/leaf split PostgreSQL used early on and dropped because
//! in C it doubled every node type and function. Here the node code is
//! generic over its slot type, so inner nodes (slots are child pointers) and
//! leaf nodes (slots are `V`) share one implementation. For values of 9 to
//! about 64 bytes it saves a pointer and an allocation per value; leaf nodes
//! get their own slab pools sized for `V`.

use core::marker::PhantomData;
use core::mem::needs_drop;
use core::ptr::NonNull;

use super::{MutableLayout, ValueLayout};
use crate::mem::Memory;

/// `V` stored inline in last-level leaf nodes.
pub struct Inline<V>(PhantomData<V>);

impl<V> crate::sealed::Sealed for Inline<V> {}

// SAFETY: the slot is the value itself, read or dropped exactly once.
unsafe impl<V> ValueLayout for Inline<V> {
    type Value = V;
    type Slot = V;
    type Input<'a>
        = V
    where
        Self: 'a;
    type Old = Option<V>;
    const NAME: &'static str = "inline";
    const VISIT_ON_DROP: bool = needs_drop::<V>();
    const DROPS_VALUES: bool = needs_drop::<V>();
    const VALUE_SIZE: usize = core::mem::size_of::<V>();
    const VALUE_ALIGN: usize = core::mem::align_of::<V>();

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn absent() -> Option<V> {
        None
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn into_slot<M: Memory>(value: V, _mem: &mut M) -> Result<V, M::Error> {
        Ok(value)
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn get<'a, M: Memory>(slot: NonNull<V>, _mem: &M) -> &'a V {
        // SAFETY: the slot holds a live `V`.
        unsafe { slot.as_ref() }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn take<M: Memory>(slot: V, _mem: &mut M) -> Option<V> {
        Some(slot)
    }

    #[inline]
    unsafe fn drop_slot<M: Memory>(slot: NonNull<V>, _mem: &mut M) {
        // SAFETY: the slot holds a live `V`, dropped exactly once.
        unsafe { slot.drop_in_place() }
    }

    #[inline]
    unsafe fn is_leaf(_slot: NonNull<V>) -> bool {
        false
    }
}

// SAFETY: as `get`, with exclusive access promised by the caller.
unsafe impl<V> MutableLayout for Inline<V> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn get_mut<'a, M: Memory>(mut slot: NonNull<V>, _mem: &M) -> &'a mut V {
        // SAFETY: the slot holds a live `V`; access is exclusive.
        unsafe { slot.as_mut() }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn into_value<M: Memory>(slot: V, _mem: &mut M) -> V {
        slot
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn input<'a>(value: V) -> V
    where
        Self: 'a,
    {
        value
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn old_value(old: Option<V>) -> Option<V> {
        old
    }
}
