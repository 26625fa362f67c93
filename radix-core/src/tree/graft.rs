//! Node-by-node operations on two uncompressed trees: moving whole
//! subtrees between them (`split_off`, `append`, `union_with`), removing
//! the keys of one from the other (`difference_with`), and keeping only
//! the keys they share (`intersect_with`), without a descent per key.
//!
//! Each tree owns its memory, so a subtree changes trees as a *move by
//! copy*: every node of it is copied byte for byte into an object of the
//! same pool on the receiving back end (the twin [`Clone`] makes, see
//! `tree/clone.rs`), its child references are rewritten to the copies, and
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

use super::clone::{pool_sizes, twin_of, twin_slot};
use super::{
    LayoutOf, MAX_LEVELS, RawTree, SlotOf, ValueOf, entry_at, find_slot, follow, remove_entry,
    resolve, stored, walk_nodes,
};
use crate::config::{Config, RefOf, Removable};
use crate::key::{Key, SPAN};
use crate::mem::{InfallibleMemory, LocalMemory, Memory};
use crate::node;
use crate::ptr::NodePtr;
use crate::value::{MutableLayout, ValueLayout};
use core::mem::MaybeUninit;
use core::ptr::NonNull;

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

/// Lists the chunks of `node` at or above `first` in `out`, returning how
/// many there are.
///
/// # Safety
///
/// `node` is live with slots `S`.
unsafe fn chunks_from<S>(node: NodePtr, first: u8, out: &mut [u8; 256]) -> usize {
    let mut count = 0;
    // SAFETY: the caller's contract.
    unsafe {
        let mut pos = super::seek(node, first);
        while let Some(e) = entry_at::<S>(node, pos) {
            out[count] = e.chunk;
            count += 1;
            pos = e.next;
        }
    }
    count
}

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
    pub(super) fn merge_from<F>(&mut self, mut other: Self, mut merge: F)
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
            unsafe { super::insert_entry(parent, 0, stored(mem, node)) };
            node = parent;
            shift += SPAN;
        }
        node
    }

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

impl<C: Config<Memory = LocalMemory> + Removable> RawTree<C>
where
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    /// `split_off` for an uncompressed tree that holds keys on both sides
    /// of `key` within its height (see the module docs): returns the tree
    /// of the keys at or after `key`.
    pub(super) fn split_moving(&mut self, key: C::Key) -> Self {
        debug_assert!(C::COMPRESSION.is_none(), "subtrees move only uncompressed");
        let mut upper_mem = self.mem.empty_like();
        let mut upper_root: Option<RefOf<C>> = None;
        let mut moved = 0;
        self.hint = super::InsertHint::NONE;
        let top = self.root_shift;
        let mem = &mut self.mem;
        // The upper tree's locations are derived from `upper_root` once
        // and then from its nodes, and a node of it only grows before any
        // location inside it is taken.
        // SAFETY: as in `try_remove`, the locations in `path` come from the
        // root field and our nodes, used bottom-up, each before its parent
        // node changes; the upper tree's as said above.
        unsafe {
            let root_loc = NonNull::from(self.root.as_mut().expect("non-empty tree"));
            let upper_root_loc = NonNull::from(&mut upper_root);
            let mut path = [MaybeUninit::<NonNull<RefOf<C>>>::uninit(); MAX_LEVELS];
            let mut upper_path = [NonNull::<RefOf<C>>::dangling(); MAX_LEVELS];
            let mut upper_made = 0;
            let mut loc = root_loc;
            let mut depth = 0;
            let mut shift = top;
            loop {
                path[depth].write(loc);
                let node = follow::<C>(mem, loc.read());
                let chunk = key.chunk(shift);
                // The chunks that move: above the key's, and at the last
                // level the key's own.
                let first = if shift == 0 {
                    Some(chunk)
                } else {
                    chunk.checked_add(1)
                };
                let mut moving = [0u8; 256];
                let count = match first {
                    Some(first) if shift == 0 => chunks_from::<SlotOf<C>>(node, first, &mut moving),
                    Some(first) => chunks_from::<RefOf<C>>(node, first, &mut moving),
                    None => 0,
                };
                if count > 0 {
                    // The upper tree's node at `depth`, made (with those
                    // above it) the first time something moves into it.
                    let upper_loc = Self::path_to(
                        &mut upper_mem,
                        upper_root_loc,
                        top,
                        key,
                        &mut upper_path,
                        &mut upper_made,
                        depth,
                    );
                    for &c in &moving[..count] {
                        let upper = follow::<C>(&upper_mem, upper_loc.read());
                        if shift == 0 {
                            let slot = remove_entry::<SlotOf<C>>(node, c).expect("listed");
                            let slot = LayoutOf::<C>::move_slot(slot, mem, &mut upper_mem);
                            Self::add_child(&mut upper_mem, upper_loc, upper, c, slot, 0);
                            moved += 1;
                        } else {
                            let child = remove_entry::<RefOf<C>>(node, c).expect("listed");
                            let child = resolve(mem, child);
                            let (twin, n) =
                                move_subtree::<C>(mem, &mut upper_mem, child, shift - SPAN);
                            let twin = stored(&upper_mem, twin);
                            Self::add_child(&mut upper_mem, upper_loc, upper, c, twin, shift);
                            moved += n;
                        }
                    }
                }
                // A node may just have lost every entry, and the node
                // kinds are not searched empty.
                if shift == 0 || node::count(node.addr()) == 0 {
                    break;
                }
                match find_slot::<RefOf<C>>(node, chunk) {
                    Some(child) => {
                        loc = child;
                        shift -= SPAN;
                        depth += 1;
                    }
                    None => break,
                }
            }
            // Bottom-up, as after a removal: a node left empty goes, and
            // one left sparse shrinks.
            loop {
                let loc = path[depth].assume_init();
                let node = follow::<C>(mem, loc.read());
                if node::count(node.addr()) == 0 {
                    Self::free_node(mem, node, shift);
                    if depth == 0 {
                        break;
                    }
                    let parent = follow::<C>(mem, path[depth - 1].assume_init().read());
                    remove_entry::<RefOf<C>>(parent, key.chunk(shift + SPAN))
                        .expect("the child is in its parent");
                } else if shift == 0 {
                    Self::shrink_if_sparse::<SlotOf<C>>(mem, loc, node, 0);
                } else {
                    Self::shrink_if_sparse::<RefOf<C>>(mem, loc, node, shift);
                }
                if depth == 0 {
                    break;
                }
                depth -= 1;
                shift += SPAN;
            }
        }
        self.len -= moved;
        debug_assert!(self.len > 0, "the caller leaves keys below `key`");
        self.drop_levels();
        // SAFETY: `upper_root` holds what moved: `moved` values under a
        // root at this tree's height, on `upper_mem`.
        let mut upper = unsafe { Self::from_parts(upper_root, top, moved, upper_mem) };
        if moved > 0 {
            upper.drop_levels();
        }
        upper
    }
}

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
    pub(super) fn difference_paired(&mut self, other: &Self) {
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

/// A frame of [`RawTree::intersect_paired`]: our node and the other tree's
/// node at the same place, the walk position in the one with fewer entries
/// (ours when the flag is set), the shift, and the key bits above.
type MeetFrame<C> = (NodePtr, NodePtr, u16, bool, u32, <C as Config>::Key);

/// Normalises the height of the tree an intersection builds when the build
/// ends, also when it is cut short by a panicking merge function, so the
/// tree left behind is one an insert could have made.
struct SettleHeight<'a, C: Config>(&'a mut RawTree<C>);

impl<C: Config> Drop for SettleHeight<'_, C> {
    fn drop(&mut self) {
        if self.0.root.is_some() {
            self.0.drop_levels();
        } else {
            self.0.root_shift = 0;
        }
    }
}

impl<C: Config<Memory = LocalMemory>> RawTree<C>
where
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    /// `intersect_with` for an uncompressed tree: walks this tree and
    /// `other` together, node by node, going down only where both have a
    /// child, and moves each common key's value, after `merge` has seen it,
    /// into a fresh tree built in key order, which replaces this one. A
    /// subtree on one side only is passed over without a visit; the values
    /// left behind go with the old tree, after the new one is in place.
    ///
    /// A panic in `merge` leaves this tree holding the entries merged
    /// before it.
    pub(super) fn intersect_paired<F>(&mut self, other: &Self, merge: &mut F)
    where
        F: FnMut(C::Key, &mut ValueOf<C>, &ValueOf<C>),
    {
        debug_assert!(C::COMPRESSION.is_none(), "only uncompressed trees pair");
        let empty = Self::with_memory(self.memory().empty_like());
        // Dropped last, after the result has settled.
        let mut ours = core::mem::replace(self, empty);
        let (Some(our_root), Some(their_root)) = (ours.root, other.root) else {
            return;
        };
        let theirs_mem = &other.mem;
        let result = SettleHeight(self);
        let tree = &mut *result.0;
        // Our old nodes only lose the entries whose values move, and only
        // where a value's slot would otherwise be dropped again with them;
        // a node is searched only while it has entries. The result's
        // locations come from its root field and then from its nodes, and
        // a node of it grows only before a location inside it is taken
        // (its path below is made afresh after each new child).
        // SAFETY: as above; both trees are live and uncompressed, the other
        // is only read, and each moved slot is read once.
        unsafe {
            // Both sides at the lower root's level: the higher tree's keys
            // there all have their upper chunks zero.
            let mut a = follow::<C>(&ours.mem, our_root);
            let mut b = resolve(theirs_mem, their_root);
            let (mut a_shift, mut b_shift) = (ours.root_shift, other.root_shift);
            while a_shift > b_shift {
                match find_slot::<RefOf<C>>(a, 0) {
                    Some(child) => a = follow::<C>(&ours.mem, child.read()),
                    None => return,
                }
                a_shift -= SPAN;
            }
            while b_shift > a_shift {
                match find_slot::<RefOf<C>>(b, 0) {
                    Some(child) => b = resolve(theirs_mem, child.read()),
                    None => return,
                }
                b_shift -= SPAN;
            }
            tree.root_shift = a_shift;
            let result_root = NonNull::from(&mut tree.root);
            let fewer_ours =
                |a: NodePtr, b: NodePtr| node::count(a.addr()) <= node::count(b.addr());
            let start: MeetFrame<C> = (a, b, 0, fewer_ours(a, b), a_shift, C::Key::MIN);
            let mut stack = [start; MAX_LEVELS];
            let mut depth = 1;
            // Where the result's node for each frame is held, valid for
            // the first `made` frames: made when a value first moves below.
            let mut made_locs = [NonNull::<RefOf<C>>::dangling(); MAX_LEVELS];
            let mut made = 0;
            while depth > 0 {
                let (a, b, pos, walk_ours, shift, prefix) = stack[depth - 1];
                if shift > 0 {
                    let (walked, sought) = if walk_ours { (a, b) } else { (b, a) };
                    let Some(e) = entry_at::<RefOf<C>>(walked, pos) else {
                        depth -= 1;
                        continue;
                    };
                    stack[depth - 1].2 = e.next;
                    let Some(found) = find_slot::<RefOf<C>>(sought, e.chunk) else {
                        continue;
                    };
                    let (ours_child, theirs_child) = if walk_ours {
                        (e.slot.read(), found.read())
                    } else {
                        (found.read(), e.slot.read())
                    };
                    let a = follow::<C>(&ours.mem, ours_child);
                    let b = resolve(theirs_mem, theirs_child);
                    let prefix = prefix.with_chunk(shift, e.chunk);
                    stack[depth] = (a, b, 0, fewer_ours(a, b), shift - SPAN, prefix);
                    made = made.min(depth);
                    depth += 1;
                    continue;
                }
                // The last level. Walking theirs keeps our walk positions
                // out of the way of the removals.
                let walk_ours = walk_ours && !LayoutOf::<C>::VISIT_ON_DROP;
                let walked = if walk_ours { a } else { b };
                let mut pos = 0;
                while let Some(e) = entry_at::<SlotOf<C>>(walked, pos) {
                    pos = e.next;
                    if node::count(a.addr()) == 0 {
                        break;
                    }
                    let (ours_slot, theirs_slot) = if walk_ours {
                        match find_slot::<SlotOf<C>>(b, e.chunk) {
                            Some(theirs) => (e.slot, theirs),
                            None => continue,
                        }
                    } else {
                        match find_slot::<SlotOf<C>>(a, e.chunk) {
                            Some(ours) => (ours, e.slot),
                            None => continue,
                        }
                    };
                    let key = prefix.with_chunk(0, e.chunk);
                    merge(
                        key,
                        LayoutOf::<C>::get_mut(ours_slot, &ours.mem),
                        LayoutOf::<C>::get(theirs_slot, theirs_mem),
                    );
                    let slot = if LayoutOf::<C>::VISIT_ON_DROP {
                        remove_entry::<SlotOf<C>>(a, e.chunk).expect("just found")
                    } else {
                        ours_slot.read()
                    };
                    let slot = LayoutOf::<C>::move_slot(slot, &mut ours.mem, &mut tree.mem);
                    let loc = Self::path_to(
                        &mut tree.mem,
                        result_root,
                        a_shift,
                        prefix,
                        &mut made_locs,
                        &mut made,
                        depth - 1,
                    );
                    let node = follow::<C>(&tree.mem, loc.read());
                    Self::add_child(&mut tree.mem, loc, node, e.chunk, slot, 0);
                    tree.len += 1;
                }
                depth -= 1;
            }
        }
        drop(result);
    }
}
