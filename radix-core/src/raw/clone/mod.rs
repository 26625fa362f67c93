//! `Clone` for local trees: a structural copy, node by node.
//!
//! Inserting every key into a new tree would rebuild the same shape (the
//! structure is canonical) but pay a descent per key, grow each node
//! through its classes and leave the nodes it grew out of behind in the
//! slabs. The copy instead walks the source, parents before children, and
//! gives each node and lazy leaf a *twin* from the same pool of an empty
//! back end with the source's options ([`LocalMemory::empty_like`]). The
//! clone has the source's classes, height, length and `stats()`, in as few
//! slab blocks as its nodes need, and an empty insert hint.
//!
//! A twin starts as a byte copy of its original's whole pool object: with
//! path compression the prefix word in front, then header, index (node48's
//! map and bits, node256's bitmap), chunks and slots; for a lazy leaf, its
//! key and slot. Then every slot that refers to something is rewritten: a
//! child slot to the child's twin, tagged as the original reference is
//! (kind, lazy bit, skipped-bytes flag), and a value slot, in a last-level
//! node or a lazy leaf, to a clone of its value made in the copy's memory
//! ([`CloneLayout::clone_slot`]).
//!
//! A value's `clone` may panic. The copy is built inside a guard,
//! [`Partial`], that owns its memory. Values are cloned in key order, each
//! after the link to its node is written, so the clones made so far are
//! the copy's first values in key order, reached through twins alone. On
//! unwinding the guard drops exactly those, and its memory then frees every
//! block. The slots after them still hold byte copies of the source's
//! slots and are neither dropped nor followed; the source is only read.

use super::copy::{pool_sizes, twin_of, twin_slot};
use super::*;
use crate::value::CloneLayout;

impl<C: Config<Memory = LocalMemory>> Clone for RawTree<C>
where
    C::Layout: CloneLayout,
{
    /// A structural copy: the same nodes, in memory with the same options,
    /// holding clones of the values (see the module docs).
    fn clone(&self) -> Self {
        let mut copy = Partial::<C> {
            mem: self.mem.empty_like(),
            root: None,
            root_shift: self.root_shift,
            cloned: 0,
        };
        if let Some(root) = self.root {
            // SAFETY: `root` is this live tree's root at `root_shift`; the
            // borrow of `self` keeps the tree unchanged while it is copied.
            unsafe { copy.copy_tree(&self.mem, resolve(&self.mem, root)) };
        }
        let (root, mem) = copy.finish();
        // SAFETY: a finished copy: the source's nodes, height and values,
        // on `mem` (or nothing, for an empty source).
        unsafe { Self::from_parts(root, self.root_shift, self.len, mem) }
    }
}

/// A copy being built, and what a panic while building it must undo.
struct Partial<C: Config<Memory = LocalMemory>> {
    /// The copy's memory; dropping it frees every block and arena.
    mem: LocalMemory,
    /// The root's twin, once it is made.
    root: Option<RefOf<C>>,
    root_shift: u32,
    /// How many values have been cloned: the copy's first ones in key
    /// order, every link on the way to them already written.
    cloned: usize,
}

impl<C: Config<Memory = LocalMemory>> Partial<C>
where
    C::Layout: CloneLayout,
{
    /// Copies the tree whose root node is `root`, as the root field names it.
    ///
    /// # Safety
    ///
    /// `root` is the root of a live tree of configuration `C` on `src`, at
    /// `self.root_shift`, unchanged while this runs; `self` is empty.
    unsafe fn copy_tree(&mut self, src: &LocalMemory, root: NodePtr) {
        let sizes = pool_sizes::<C>();
        // SAFETY: the caller's contract: a live root at `root_shift`.
        let (twin, shift) = unsafe { twin_of::<C>(&mut self.mem, &sizes, root, self.root_shift) };
        self.root = Some(stored(&self.mem, twin));
        let (node, twin) = (unflagged::<C>(root), unflagged::<C>(twin));
        if node.is_lazy() || shift == 0 {
            // SAFETY: `twin` is the linked twin of `node`, which holds values.
            unsafe { self.clone_values(src, node, twin) };
            return;
        }
        // Frames: an inner node, its twin, the walk position, its shift.
        let mut stack = [(node, twin, 0u16, shift); MAX_LEVELS];
        let mut depth = 1;
        while depth > 0 {
            let (node, twin, pos, shift) = stack[depth - 1];
            // SAFETY: the source is live; inner slots are child references.
            let Some(e) = (unsafe { entry_at::<RefOf<C>>(node, pos) }) else {
                depth -= 1;
                continue;
            };
            stack[depth - 1].2 = e.next;
            // SAFETY: as above; the child's first chunk is the one below
            // `shift`; `e.slot` is a slot of `node`, and `twin` a copy of
            // `node`, so the counterpart slot lies in `twin`.
            let (child, child_twin, child_shift) = unsafe {
                let child = resolve(src, e.slot.read());
                let (child_twin, child_shift) =
                    twin_of::<C>(&mut self.mem, &sizes, child, shift - SPAN);
                twin_slot(node, twin, e.slot).write(stored(&self.mem, child_twin));
                (child, child_twin, child_shift)
            };
            let (child, child_twin) = (unflagged::<C>(child), unflagged::<C>(child_twin));
            if child.is_lazy() || child_shift == 0 {
                // SAFETY: the linked twin of a live lazy leaf or last-level
                // node.
                unsafe { self.clone_values(src, child, child_twin) };
            } else {
                // A descent has at most `MAX_LEVELS - 1` inner levels.
                stack[depth] = (child, child_twin, 0, child_shift);
                depth += 1;
            }
        }
    }

    /// Clones the values of `node`, a lazy leaf or a last-level node, into
    /// its twin, in key order, counting each once its slot is written.
    ///
    /// # Safety
    ///
    /// `node` is live on `src` and `twin` its linked twin.
    unsafe fn clone_values(&mut self, src: &LocalMemory, node: NodePtr, twin: NodePtr) {
        // SAFETY: the caller's contract: slots of live values of `src`, and
        // their counterparts in a twin of the same layout. A write only
        // replaces a byte copy, which owned nothing.
        unsafe {
            if node.is_lazy() {
                let slot = lazy::slot::<SlotOf<C>>(node.addr());
                let Ok(value) = LayoutOf::<C>::clone_slot(slot, src, &mut self.mem);
                lazy::slot::<SlotOf<C>>(twin.addr()).write(value);
                self.cloned += 1;
                return;
            }
            let mut pos = 0;
            while let Some(e) = entry_at::<SlotOf<C>>(node, pos) {
                let Ok(value) = LayoutOf::<C>::clone_slot(e.slot, src, &mut self.mem);
                twin_slot(node, twin, e.slot).write(value);
                self.cloned += 1;
                pos = e.next;
            }
        }
    }
}

impl<C: Config<Memory = LocalMemory>> Partial<C> {
    /// The finished copy's root and memory. The guard is disarmed.
    fn finish(mut self) -> (Option<RefOf<C>>, LocalMemory) {
        self.cloned = 0;
        let mem = core::mem::replace(&mut self.mem, LocalMemory::with_pools(&[]));
        (self.root, mem)
    }

    /// Drops the first `self.cloned` values of the copy in key order,
    /// walking it as [`Self::copy_tree`] built it and stopping after them.
    ///
    /// # Safety
    ///
    /// `root` is the copy's root, the first `self.cloned` values in key
    /// order are clones made on `self.mem`, and every link on the way to
    /// them is written; they are not used again.
    unsafe fn drop_cloned(&mut self, root: NodePtr) {
        let mut left = self.cloned;
        // SAFETY: the caller's contract: the root's twin is a live copy.
        let shift = unsafe { node_shift::<C>(root, self.root_shift) };
        if root.is_lazy() || shift == 0 {
            // SAFETY: as above; at least one value is to be dropped.
            unsafe { self.drop_values(root, &mut left) };
            return;
        }
        let mut stack = [(root, 0u16, shift); MAX_LEVELS];
        let mut depth = 1;
        while depth > 0 && left > 0 {
            let (node, pos, shift) = stack[depth - 1];
            // SAFETY: the twins reached are copies of live nodes; since
            // values are left to drop, the next link in key order is one
            // to a twin (the caller's contract).
            unsafe {
                let Some(e) = entry_at::<RefOf<C>>(node, pos) else {
                    depth -= 1;
                    continue;
                };
                stack[depth - 1].1 = e.next;
                let child = follow::<C>(&self.mem, e.slot.read());
                let child_shift = node_shift::<C>(child, shift - SPAN);
                if child.is_lazy() || child_shift == 0 {
                    self.drop_values(child, &mut left);
                } else {
                    stack[depth] = (child, 0, child_shift);
                    depth += 1;
                }
            }
        }
    }

    /// Drops the values of `node`, a lazy leaf or last-level twin, in key
    /// order until `left` is zero, counting them down.
    ///
    /// # Safety
    ///
    /// `left > 0`, and `node`'s first `left` values (or all of them) are
    /// clones on `self.mem`, not used again.
    unsafe fn drop_values(&mut self, node: NodePtr, left: &mut usize) {
        // SAFETY: the caller's contract; each slot is dropped once.
        unsafe {
            if node.is_lazy() {
                LayoutOf::<C>::drop_slot(lazy::slot::<SlotOf<C>>(node.addr()), &mut self.mem);
                *left -= 1;
                return;
            }
            let mut pos = 0;
            while *left > 0 {
                let Some(e) = entry_at::<SlotOf<C>>(node, pos) else {
                    return;
                };
                LayoutOf::<C>::drop_slot(e.slot, &mut self.mem);
                *left -= 1;
                pos = e.next;
            }
        }
    }
}

impl<C: Config<Memory = LocalMemory>> Drop for Partial<C> {
    /// If a value's `clone` panicked (the guard was not disarmed by
    /// [`Partial::finish`]): drops the clones made so far; the memory,
    /// dropped next, frees the blocks.
    fn drop(&mut self) {
        if let (Some(root), true) = (self.root, self.cloned > 0) {
            let root = follow::<C>(&self.mem, root);
            // SAFETY: `cloned` counts the values cloned so far, the first in
            // key order, each after the links leading to it were written.
            unsafe { self.drop_cloned(root) };
        }
    }
}

#[cfg(test)]
mod tests;
