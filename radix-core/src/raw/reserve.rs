//! Reservation planning: before an insert or a remove changes the tree,
//! it counts the nodes it will allocate, per pool, and reserves them.
//!
//! A back end that can run out (a shared area with a size limit) thus
//! refuses a change before anything moved, and the change itself cannot
//! fail half-way. For local memory, which cannot fail, the planning
//! compiles away.

use core::mem::MaybeUninit;
use core::ptr::NonNull;

use crate::config::{Config, MAX_POOLS, Pools, RefOf};
use crate::key::SPAN;
use crate::mem::Memory;
use crate::node::{self, MAX_CLASSES};
use crate::ptr::NodePtr;
use crate::value::ValueLayout;

use super::{LayoutOf, MemError, RawTree, SlotOf, follow};

/// The nodes one modification will allocate, per pool, so that they can be
/// reserved before the tree changes.
pub(crate) struct Needs {
    counts: [u8; MAX_POOLS],
}

impl Needs {
    pub(crate) const NONE: Self = Self {
        counts: [0; MAX_POOLS],
    };

    #[inline]
    pub(crate) fn add(&mut self, pool: usize, count: usize) {
        self.counts[pool] += count as u8;
    }

    /// Reserves every counted node.
    #[inline]
    pub(crate) fn reserve<M: Memory>(&self, mem: &mut M) -> Result<(), M::Error> {
        // Most inserts need no node at all: one compare says so.
        let (nodes, lazy) = self.counts.split_at(2 * MAX_CLASSES);
        if u128::from_ne_bytes(nodes.try_into().expect("16 node pools")) == 0 && lazy[0] == 0 {
            return Ok(());
        }
        for (pool, &count) in self.counts.iter().enumerate() {
            if count > 0 {
                mem.reserve_nodes(pool, count as usize)?;
            }
        }
        Ok(())
    }
}

impl<C: Config> RawTree<C> {
    /// Reserves `needs` and hands `slot_value` back, or drops it and
    /// reports why not. Callers only work out `needs` for a fallible back
    /// end, so that local trees do none of it.
    ///
    /// It borrows the memory field alone, so that locations held into the
    /// root field stay valid.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn reserve(
        mem: &mut C::Memory,
        needs: &Needs,
        slot_value: SlotOf<C>,
    ) -> Result<SlotOf<C>, MemError<C>> {
        if let Err(e) = needs.reserve(mem) {
            // SAFETY: the slot value was made by `into_slot` on this memory
            // and is consumed once.
            drop(unsafe { LayoutOf::<C>::take(slot_value, mem) });
            return Err(e);
        }
        Ok(slot_value)
    }

    /// Counts the nodes of a chain built by [`Self::chain`] from `shift`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn chain_needs(needs: &mut Needs, shift: u32) {
        needs.add(Pools::<C>::inner(0), (shift / SPAN) as usize);
        needs.add(Pools::<C>::leaf(0), 1);
    }

    /// Counts the node [`Self::add_child`] allocates if `node` is full.
    ///
    /// # Safety
    ///
    /// `node` is a live node at `shift`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) unsafe fn grow_needs(needs: &mut Needs, node: NodePtr, shift: u32) {
        // SAFETY: forwarded contract.
        let (count, class) = unsafe { (node::count(node.addr()), node::class(node.addr())) };
        if count == C::SIZE_CLASSES.capacity(class) {
            needs.add(Pools::<C>::at(class + 1, shift), 1);
        }
    }

    /// Reserves the node that removing one key below `path` shrinks into,
    /// if any: the lowest node on the path that keeps a child loses one,
    /// and every node below it is freed.
    ///
    /// # Safety
    ///
    /// `path` holds the live locations from the root to the last level.
    pub(super) unsafe fn reserve_shrink(
        mem: &mut C::Memory,
        path: &[MaybeUninit<NonNull<RefOf<C>>>],
    ) -> Result<(), MemError<C>> {
        for (level, loc) in path.iter().enumerate().rev() {
            // SAFETY: caller's contract.
            let node = follow::<C>(mem, unsafe { loc.assume_init().read() });
            // SAFETY: as above.
            let (count, class) = unsafe { (node::count(node.addr()), node::class(node.addr())) };
            if count > 1 {
                let target = Self::shrink_target(count - 1, class);
                if target != class {
                    let shift = ((path.len() - 1 - level) as u32) * SPAN;
                    let mut needs = Needs::NONE;
                    needs.add(Pools::<C>::at(target, shift), 1);
                    return needs.reserve(mem);
                }
                return Ok(());
            }
        }
        Ok(())
    }
}
