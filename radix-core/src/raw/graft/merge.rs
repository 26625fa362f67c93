//! Merging two trees node by node: `append` and `union_with` walk both
//! trees together and move whole every subtree of the other tree under a
//! chunk this tree lacks.

use core::ptr::NonNull;

use crate::config::{Config, RefOf};
use crate::key::{Key, SPAN};
use crate::mem::InfallibleMemory;
use crate::ptr::NodePtr;
use crate::value::{MutableLayout, ValueLayout};

use super::super::insert_entry;
use super::super::{
    LayoutOf, MAX_LEVELS, RawTree, SlotOf, ValueOf, entry_at, find_slot, follow, resolve, stored,
    walk_nodes,
};
use super::move_subtree;

/// A frame of [`MergeWalk`]: where our node is held, the other tree's node
/// at the same place, the walk position in it, the shift, and the key bits
/// above.
type MergeFrame<C> = (NonNull<RefOf<C>>, NodePtr, u16, u32, <C as Config>::Key);

/// The walk of [`RawTree::merge_from`] over the other tree, which also
/// knows what a panic while settling a key leaves behind there.
struct MergeWalk<'a, C: Config> {
    /// The other tree's memory; its root is detached.
    src: &'a mut C::Memory,
    stack: [MergeFrame<C>; MAX_LEVELS],
    depth: usize,
}

impl<C: Config> Drop for MergeWalk<'_, C> {
    /// Frames are left only when settling a key panicked: drops the
    /// values each frame's node has at and after its position (an inner
    /// frame's position is past the child the frame above it walks). The
    /// nodes go when the other tree's memory is released.
    fn drop(&mut self) {
        if !LayoutOf::<C>::VISIT_ON_DROP {
            return;
        }
        for &(_, theirs, pos, shift, _) in &self.stack[..self.depth] {
            // SAFETY: the walk's nodes are live, and the values at and
            // after each frame's position are the ones not moved yet: each
            // is dropped once.
            unsafe {
                let mut pos = pos;
                if shift == 0 {
                    drop_values_from::<C>(self.src, theirs, pos);
                    continue;
                }
                while let Some(e) = entry_at::<RefOf<C>>(theirs, pos) {
                    pos = e.next;
                    let child = resolve(&*self.src, e.slot.read());
                    walk_nodes::<C, _>(self.src, child, shift - SPAN, |src, visit| {
                        if visit.shift == 0 {
                            drop_values_from::<C>(src, visit.node, 0);
                        }
                    });
                }
            }
        }
    }
}

/// Drops the values of last-level node `node` at and after walk position
/// `pos`.
///
/// # Safety
///
/// `node` is a live last-level node on `mem` whose values there are not
/// used again.
unsafe fn drop_values_from<C: Config>(mem: &mut C::Memory, node: NodePtr, mut pos: u16) {
    // SAFETY: the caller's contract.
    unsafe {
        while let Some(e) = entry_at::<SlotOf<C>>(node, pos) {
            pos = e.next;
            LayoutOf::<C>::drop_slot(e.slot, mem);
        }
    }
}

impl<C: Config> RawTree<C>
where
    C::Memory: InfallibleMemory,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    /// Moves every entry of `other` into this uncompressed tree, walking
    /// both together (see the module docs); where a key is in both,
    /// `merge(key, &mut ours, theirs)` settles it, in ascending key order.
    /// `other` is left empty, and its memory holds nothing.
    ///
    /// A panic in `merge` leaves this tree whole, with the entries moved
    /// so far; the values of `other` not yet moved are dropped.
    pub(crate) fn merge_from<F>(&mut self, mut other: Self, mut merge: F)
    where
        F: FnMut(C::Key, &mut ValueOf<C>, ValueOf<C>),
    {
        debug_assert!(C::COMPRESSION.is_none(), "subtrees move only uncompressed");
        if self.root.is_none() {
            core::mem::swap(self, &mut other);
            return;
        }
        // Detached: `other` now drops as an empty tree, releasing its
        // memory wholesale without visiting a slot.
        let Some(src_root) = other.root.take() else {
            return;
        };
        other.len = 0;
        self.hint = super::InsertHint::NONE;
        while self.root_shift < other.root_shift {
            self.add_level();
        }
        let src = &mut other.mem;
        let dst = &mut self.mem;
        let len = &mut self.len;
        let src_root = resolve(src, src_root);
        let src_shift = other.root_shift;
        // Our locations are derived from the root field once and then only
        // from our nodes; a node grows (`add_child`) only after every
        // location inside it is done with, as the walk finishes a child
        // before adding to its parent. `merge` gets the only reference to
        // our value and runs between changes, with `self.len` up to date.
        // SAFETY: as above; the other tree is detached, each of its nodes
        // read until its entries have moved, then freed, and each moved
        // slot value consumed once (into `merge`'s argument or an entry).
        unsafe {
            let mut loc = NonNull::from(self.root.as_mut().expect("non-empty tree"));
            // The other tree's root stands for keys with every chunk above
            // its own zero: follow chunk 0 down to its level.
            let mut shift = self.root_shift;
            while shift > src_shift {
                let node = follow::<C>(dst, loc.read());
                match find_slot::<RefOf<C>>(node, 0) {
                    Some(child) => loc = child,
                    None => {
                        let (twin, moved) = move_subtree::<C>(src, dst, src_root, src_shift);
                        let twin = Self::chain_to(dst, twin, src_shift, shift - SPAN);
                        Self::add_child(dst, loc, node, 0, stored(dst, twin), shift);
                        *len += moved;
                        return;
                    }
                }
                shift -= SPAN;
            }
            let mut walk = MergeWalk::<C> {
                src,
                stack: [(loc, src_root, 0, shift, C::Key::MIN); MAX_LEVELS],
                depth: 1,
            };
            while walk.depth > 0 {
                let top = walk.depth - 1;
                let (loc, theirs, pos, shift, prefix) = walk.stack[top];
                if shift == 0 {
                    while let Some(e) = entry_at::<SlotOf<C>>(theirs, walk.stack[top].2) {
                        walk.stack[top].2 = e.next;
                        let slot = LayoutOf::<C>::move_slot(e.slot.read(), walk.src, dst);
                        let node = follow::<C>(dst, loc.read());
                        match find_slot::<SlotOf<C>>(node, e.chunk) {
                            Some(ours) => {
                                let theirs = LayoutOf::<C>::into_value(slot, dst);
                                let ours = LayoutOf::<C>::get_mut(ours, dst);
                                merge(prefix.with_chunk(0, e.chunk), ours, theirs);
                            }
                            None => {
                                Self::add_child(dst, loc, node, e.chunk, slot, 0);
                                *len += 1;
                            }
                        }
                    }
                    Self::free_node(walk.src, theirs, 0);
                    walk.depth -= 1;
                    continue;
                }
                let Some(e) = entry_at::<RefOf<C>>(theirs, pos) else {
                    Self::free_node(walk.src, theirs, shift);
                    walk.depth -= 1;
                    continue;
                };
                walk.stack[top].2 = e.next;
                let child = resolve(walk.src, e.slot.read());
                let node = follow::<C>(dst, loc.read());
                match find_slot::<RefOf<C>>(node, e.chunk) {
                    Some(ours) => {
                        let prefix = prefix.with_chunk(shift, e.chunk);
                        walk.stack[walk.depth] = (ours, child, 0, shift - SPAN, prefix);
                        walk.depth += 1;
                    }
                    None => {
                        let (twin, moved) = move_subtree::<C>(walk.src, dst, child, shift - SPAN);
                        Self::add_child(dst, loc, node, e.chunk, stored(dst, twin), shift);
                        *len += moved;
                    }
                }
            }
        }
    }

    /// `node`, a node at `from`, below a chain of fresh single-child nodes
    /// reaching up to level `to` by chunk 0: the place of a root of
    /// height `from` in a tree of height above `to`.
    fn chain_to(mem: &mut C::Memory, mut node: NodePtr, from: u32, to: u32) -> NodePtr {
        let mut shift = from + SPAN;
        while shift <= to {
            let parent = Self::new_node(mem, 0, shift, C::Key::MIN);
            // SAFETY: a fresh node is empty and has room for one child.
            unsafe { insert_entry(parent, 0, stored(mem, node)) };
            node = parent;
            shift += SPAN;
        }
        node
    }
}
