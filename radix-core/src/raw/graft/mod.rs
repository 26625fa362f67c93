//! Node-by-node operations on two uncompressed trees: moving whole
//! subtrees between them (`split_off`, `append`, `union_with`), removing
//! the keys of one from the other (`difference_with`), and keeping only
//! the keys they share (`intersect_with`), without a descent per key.
//!
//! Each tree owns its memory, so a subtree changes trees as a *move by
//! copy*: every node of it is copied byte for byte into an object of the
//! same pool on the receiving back end (the twin [`Clone`] makes, see
//! `raw/copy.rs`), its child references are rewritten to the copies, and
//! the original is freed. A value travels inside its node's bytes; only a
//! value in a leaf of its own ([`Leaf`](crate::value::Leaf) layouts, or
//! [`Auto`](crate::value::Auto) with a large value) needs a step of its
//! own: its leaf is handed over to the receiver
//! ([`Memory::hand_over_leaf`]), or where the back ends cannot share
//! leaves, its value moved into a new one. No key is searched for, no node grows through its classes,
//! and no value's code runs: a subtree of `n` entries in `k` nodes costs `k`
//! node copies and frees.
//!
//! Handing the slab blocks over instead would copy nothing, but a block
//! also holds nodes of the subtrees that stay behind, and the blocks of a
//! slab's first few kilobytes (its ramp, see `mem/slab.rs`) are found by
//! comparing addresses with the slab's own list, which a foreign block is
//! not on.
//!
//! On top of the move:
//!
//! - [`RawTree::split_off`] descends once along the split key. At every
//!   level the children above the key's chunk move to the new tree whole,
//!   at the last level the values at or above it one by one, and then the
//!   path's nodes shrink or go, bottom-up, as after a removal.
//! - [`RawTree::append`] and [`RawTree::union_with`] walk the two trees
//!   together ([`RawTree::merge_from`]): a child of the other tree whose
//!   chunk this tree lacks moves whole; where both have it, the walk goes
//!   down; at the last level the values meet one by one. Appending a tree
//!   whose keys all lie above this one's thus moves all but the nodes on
//!   one path in whole subtrees.
//!
//! The same paired walk, without a move:
//!
//! - [`RawTree::difference_paired`] walks the other tree and the matching
//!   part of this one together: a subtree on either side only is passed
//!   over, and each common key is removed from the last-level node the
//!   walk is in. It runs no user code: the removed values with drop glue
//!   are set aside and dropped after the walk, since a value's `Drop`
//!   could otherwise panic while a node waits, emptied, for the walk to
//!   free it.
//! - [`RawTree::intersect_paired`] walks both trees together, going down
//!   only where both have a child, and moves each common key's value
//!   (after the merge function has seen it) into a fresh tree built in key
//!   order. What it does not keep stays in the old tree, whose nodes are
//!   left as they are and released whole once the new tree is in place,
//!   so the values' `Drop` runs only after the walk here too.
//!
//! Only uncompressed trees take these paths. With lazy expansion or path
//! compression a subtree's form depends on its place (a lone key is a lazy
//! leaf, a single-child node merges into its child and records the skipped
//! bytes), so each move would have to re-canonicalise both ends; those
//! trees move their entries one at a time.
//!
//! One operation per file: [`merge`] (`append`, `union_with`), [`split`]
//! (`split_off`), [`difference`] and [`intersect`]; this module holds the
//! move they share.

use super::copy::{pool_sizes, twin_of, twin_slot};
use super::{
    InsertHint, LayoutOf, MAX_LEVELS, RawTree, SlotOf, ValueOf, entry_at, find_slot, follow,
    resolve, stored,
};
use crate::config::{Config, RefOf};
use crate::key::{Key, SPAN};
use crate::mem::InfallibleMemory;
use crate::node;
use crate::ptr::NodePtr;
use crate::value::{MutableLayout, ValueLayout};
use core::ptr::NonNull;

mod difference;
mod intersect;
mod merge;
mod split;

/// Moves the subtree under `node`, a node at `shift` on `src`, to `dst`:
/// returns its copy on `dst` and the number of values it holds. Every node
/// of the original is freed and every value moved, so the reference to
/// `node` must not be followed again.
///
/// # Safety
///
/// `node` is a live node at `shift` of an uncompressed tree of
/// configuration `C` on `src`, and `dst` serves `C`'s pools.
unsafe fn move_subtree<C: Config>(
    src: &mut C::Memory,
    dst: &mut C::Memory,
    node: NodePtr,
    shift: u32,
) -> (NodePtr, usize)
where
    C::Memory: InfallibleMemory,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    debug_assert!(C::COMPRESSION.is_none(), "subtrees move only uncompressed");
    let sizes = pool_sizes::<C>();
    // SAFETY: the caller's contract: a live node at `shift`.
    let (twin, _) = unsafe { twin_of::<C>(dst, &sizes, node, shift) };
    if shift == 0 {
        // SAFETY: `twin` is the copy of `node`, a last-level node; once its
        // values have moved it is freed and not used again.
        return unsafe {
            let moved = move_values::<C>(src, dst, node, twin);
            RawTree::<C>::free_node(src, node, 0);
            (twin, moved)
        };
    }
    let mut moved = 0;
    // Frames: an original inner node, its twin, the walk position, its shift.
    let mut stack = [(node, twin, 0u16, shift); MAX_LEVELS];
    let mut depth = 1;
    while depth > 0 {
        let (node, twin, pos, shift) = stack[depth - 1];
        // SAFETY: `node` is live until its frame ends; its slots are child
        // references, each followed once, and the counterpart slot lies in
        // its twin. A node is freed after its last child was copied.
        unsafe {
            let Some(e) = entry_at::<RefOf<C>>(node, pos) else {
                RawTree::<C>::free_node(src, node, shift);
                depth -= 1;
                continue;
            };
            stack[depth - 1].2 = e.next;
            let child = resolve(src, e.slot.read());
            let child_shift = shift - SPAN;
            let (child_twin, _) = twin_of::<C>(dst, &sizes, child, child_shift);
            twin_slot(node, twin, e.slot).write(stored(dst, child_twin));
            if child_shift == 0 {
                moved += move_values::<C>(src, dst, child, child_twin);
                RawTree::<C>::free_node(src, child, 0);
            } else {
                // A descent has at most `MAX_LEVELS - 1` inner levels.
                stack[depth] = (child, child_twin, 0, child_shift);
                depth += 1;
            }
        }
    }
    (twin, moved)
}

/// Moves the values of last-level node `node` on `src` into `twin`, its
/// byte copy on `dst`, and returns how many there are. Only a value in a
/// leaf of its own needs work ([`MutableLayout::move_slot`]).
///
/// # Safety
///
/// `node` is a live last-level node on `src` and `twin` its copy; `node`'s
/// slots are not used again.
unsafe fn move_values<C: Config>(
    src: &mut C::Memory,
    dst: &mut C::Memory,
    node: NodePtr,
    twin: NodePtr,
) -> usize
where
    C::Memory: InfallibleMemory,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    // SAFETY: the caller's contract; each leaf value is moved out once, and
    // its slot in the twin (a stale byte copy) overwritten.
    unsafe {
        if LayoutOf::<C>::VISIT_ON_DROP {
            let mut pos = 0;
            while let Some(e) = entry_at::<SlotOf<C>>(node, pos) {
                if LayoutOf::<C>::is_leaf(e.slot) {
                    twin_slot(node, twin, e.slot).write(LayoutOf::<C>::move_slot(
                        e.slot.read(),
                        src,
                        dst,
                    ));
                }
                pos = e.next;
            }
        }
        node::count(node.addr())
    }
}

impl<C: Config> RawTree<C>
where
    C::Memory: InfallibleMemory,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    /// Where the node at level `depth` of `key`'s path is held, in a tree
    /// being built whose root field is `root` and whose root is at `top`.
    /// `locs[..*made]` hold the path's nodes made so far; the levels from
    /// `*made` to `depth` are made now, each an empty node added to its
    /// parent, and recorded.
    ///
    /// # Safety
    ///
    /// `root` is the root field of a tree on `mem` whose nodes on `key`'s
    /// path are exactly those `locs[..*made]` hold (the root field empty
    /// when `*made` is 0), unchanged since: a node grows as a child is
    /// added to it, which moves the locations inside it.
    unsafe fn path_to(
        mem: &mut C::Memory,
        root: NonNull<Option<RefOf<C>>>,
        top: u32,
        key: C::Key,
        locs: &mut [NonNull<RefOf<C>>; MAX_LEVELS],
        made: &mut usize,
        depth: usize,
    ) -> NonNull<RefOf<C>> {
        while *made <= depth {
            let level = *made;
            let shift = top - level as u32 * SPAN;
            let new = Self::new_node(mem, 0, shift, key);
            let new = stored(mem, new);
            // SAFETY: the caller's contract: the root field and the
            // parent's location are live, and the parent was just made or
            // recorded, so its slot for `chunk` is found after the add.
            locs[level] = unsafe {
                if level == 0 {
                    root.write(Some(new));
                    NonNull::from((*root.as_ptr()).as_mut().expect("just set"))
                } else {
                    let parent_loc = locs[level - 1];
                    let parent = follow::<C>(mem, parent_loc.read());
                    let chunk = key.chunk(shift + SPAN);
                    Self::add_child(mem, parent_loc, parent, chunk, new, shift + SPAN);
                    let parent = follow::<C>(mem, parent_loc.read());
                    find_slot::<RefOf<C>>(parent, chunk).expect("just added")
                }
            };
            *made += 1;
        }
        locs[depth]
    }
}
