//! The difference of two trees node by node (`difference_with`): one
//! paired walk, removing each common key where the walk is.

use alloc::vec::Vec;
use core::ptr::NonNull;

use crate::config::{Config, RefOf, Removable};
use crate::key::SPAN;
use crate::mem::{InfallibleMemory, Memory};
use crate::node;
use crate::ptr::NodePtr;
use crate::value::ValueLayout;

use super::super::{
    LayoutOf, MAX_LEVELS, RawTree, SlotOf, entry_at, find_slot, follow, remove_entry, resolve,
};

/// A frame of [`RawTree::difference_paired`]: where our node is held, the
/// chunk it hangs under in its parent, the other tree's node at the same
/// place, the walk position in it, and the shift.
type PrunedFrame<C> = (NonNull<RefOf<C>>, u8, NodePtr, u16, u32);

impl<C: Config + Removable> RawTree<C>
where
    C::Memory: InfallibleMemory,
{
    /// `difference_with` for an uncompressed tree: walks `other` and the
    /// matching part of this tree together, node by node, so a subtree on
    /// one side only is passed over without a visit, and each common key
    /// is removed from the last-level node the walk is in, without a
    /// descent. Nodes left empty go and sparse ones shrink, bottom-up, as
    /// each is finished.
    ///
    /// No user code runs during the walk: values with drop glue are set
    /// aside and dropped once the tree is whole again, so a panicking
    /// `Drop` cannot leave an emptied node behind.
    pub(crate) fn difference_paired(&mut self, other: &Self) {
        debug_assert!(C::COMPRESSION.is_none(), "only uncompressed trees pair");
        let (Some(_), Some(their_root)) = (self.root, other.root) else {
            return;
        };
        let theirs_mem = &other.mem;
        let mem = &mut self.mem;
        let mut removed = 0;
        let mut set_aside = Vec::new();
        // A node of ours changes (loses an entry, shrinks or goes) only
        // when the walk below it is done, and a location inside it is taken
        // afresh after each change. The other tree is only read.
        // SAFETY: as in `try_remove`, our locations come from the root
        // field once and then from our nodes, used as said above.
        unsafe {
            // Both sides at the lower root's level: the higher tree's
            // keys there all have their upper chunks zero.
            let mut theirs = resolve(theirs_mem, their_root);
            let mut their_shift = other.root_shift;
            while their_shift > self.root_shift {
                match find_slot::<RefOf<C>>(theirs, 0) {
                    Some(child) => theirs = resolve(theirs_mem, child.read()),
                    None => return,
                }
                their_shift -= SPAN;
            }
            let mut chain = [NonNull::from(self.root.as_mut().expect("non-empty")); MAX_LEVELS];
            let mut chain_len = 1;
            let mut shift = self.root_shift;
            while shift > their_shift {
                let node = follow::<C>(mem, chain[chain_len - 1].read());
                match find_slot::<RefOf<C>>(node, 0) {
                    Some(child) => chain[chain_len] = child,
                    None => return,
                }
                chain_len += 1;
                shift -= SPAN;
            }
            let start: PrunedFrame<C> = (chain[chain_len - 1], 0, theirs, 0, shift);
            let mut stack = [start; MAX_LEVELS];
            let mut depth = 1;
            // Whether the node of the frame just finished was freed, so
            // its parent must drop the entry for it.
            let mut gone = false;
            while depth > 0 {
                let (loc, _, theirs, pos, shift) = stack[depth - 1];
                let node = follow::<C>(mem, loc.read());
                let next = if node::count(node.addr()) == 0 {
                    None
                } else if shift == 0 {
                    let mut pos = 0;
                    while let Some(e) = entry_at::<SlotOf<C>>(theirs, pos) {
                        pos = e.next;
                        if let Some(slot) = remove_entry::<SlotOf<C>>(node, e.chunk) {
                            let value = LayoutOf::<C>::take(slot, mem);
                            if LayoutOf::<C>::DROPS_VALUES {
                                set_aside.push(value);
                            }
                            removed += 1;
                            if node::count(node.addr()) == 0 {
                                break;
                            }
                        }
                    }
                    None
                } else {
                    entry_at::<RefOf<C>>(theirs, pos)
                };
                if let Some(e) = next {
                    stack[depth - 1].3 = e.next;
                    if let Some(child) = find_slot::<RefOf<C>>(node, e.chunk) {
                        let their_child = resolve(theirs_mem, e.slot.read());
                        stack[depth] = (child, e.chunk, their_child, 0, shift - SPAN);
                        depth += 1;
                    }
                    continue;
                }
                // The frame is done: its node goes or shrinks, and its
                // parent forgets it.
                gone = Self::prune(mem, loc, node, shift);
                depth -= 1;
                if gone && depth > 0 {
                    let parent = follow::<C>(mem, stack[depth - 1].0.read());
                    remove_entry::<RefOf<C>>(parent, stack[depth].1).expect("in its parent");
                }
            }
            // The chain of chunk-0 nodes above the common level, if any.
            for level in (0..chain_len - 1).rev() {
                if !gone {
                    break;
                }
                let node = follow::<C>(mem, chain[level].read());
                remove_entry::<RefOf<C>>(node, 0).expect("in its parent");
                let shift = self.root_shift - level as u32 * SPAN;
                gone = Self::prune(mem, chain[level], node, shift);
            }
        }
        self.len -= removed;
        self.hint = super::InsertHint::NONE;
        if self.len == 0 {
            self.root = None;
            // SAFETY: every node has been freed; none is used again.
            unsafe { self.mem.release_all() };
        } else if removed > 0 {
            self.drop_levels();
        }
        // The tree is whole: a `Drop` may panic now (the values after it
        // are still dropped, as a `Vec` does).
        drop(set_aside);
    }

    /// Frees `node`, held at `loc`, if it has no entry left (returning
    /// true), and otherwise moves it into a smaller class if it has become
    /// sparse.
    ///
    /// # Safety
    ///
    /// `loc` holds `node`, a live node at `shift`.
    unsafe fn prune(
        mem: &mut C::Memory,
        loc: NonNull<RefOf<C>>,
        node: NodePtr,
        shift: u32,
    ) -> bool {
        // SAFETY: the caller's contract; a freed node's slots are empty.
        unsafe {
            if node::count(node.addr()) == 0 {
                Self::free_node(mem, node, shift);
                return true;
            }
            if shift == 0 {
                Self::shrink_if_sparse::<SlotOf<C>>(mem, loc, node, 0);
            } else {
                Self::shrink_if_sparse::<RefOf<C>>(mem, loc, node, shift);
            }
            false
        }
    }
}
