//! Node twins: a byte copy of a node or lazy leaf in another back end's
//! pool of the same size, its references still the original's. `Clone`
//! (`clone.rs`) rewrites a twin's slots to the copies of its children and
//! values; the node-by-node operations (`graft/`) move a subtree by
//! making twins on the receiving back end and freeing the originals.

use core::ptr::NonNull;

use crate::config::{Config, MAX_POOLS, Pools};
use crate::mem::Memory;
use crate::node;
use crate::ptr::NodePtr;

use super::{flagged, node_shift, unflagged};

/// The byte size of each of `C`'s pool objects: what a twin copies.
pub(super) fn pool_sizes<C: Config>() -> [usize; MAX_POOLS] {
    Pools::<C>::specs().0.map(|spec| spec.size)
}

/// A twin of `node` (as a reference names it: with path compression,
/// possibly flagged): a fresh object from the same pool of `mem` holding a
/// copy of its whole object, tagged the same way. Also returns the node's
/// shift (`start` for a lazy leaf). The twin's child references and value
/// slots are still the original's bytes: the caller rewrites or moves them.
///
/// # Safety
///
/// `node` is a live node or lazy leaf of a tree of configuration `C`
/// whose parent's chunk is the one above `start` (or which is the root
/// at `start`), and `sizes` are `C`'s pool sizes ([`pool_sizes`]).
pub(super) unsafe fn twin_of<C: Config>(
    mem: &mut C::Memory,
    sizes: &[usize; MAX_POOLS],
    node: NodePtr,
    start: u32,
) -> (NodePtr, u32) {
    let flag = flagged::<C>(node);
    let node = unflagged::<C>(node);
    if node.is_lazy() {
        let pool = Pools::<C>::cell();
        let twin = mem.alloc_node(pool);
        // SAFETY: a lazy leaf is the whole object of its pool's size;
        // the twin is a fresh object of that pool.
        unsafe { twin.copy_from_nonoverlapping(node.addr(), sizes[pool]) };
        return (NodePtr::lazy(twin), start);
    }
    // SAFETY: the caller's contract: a live node placed at `start`.
    let (shift, class) = unsafe { (node_shift::<C>(node, start), node::class(node.addr())) };
    let pool = Pools::<C>::at(class, shift);
    let object = mem.alloc_node(pool);
    // SAFETY: a node's pool object starts `PREFIX` bytes before it and
    // is its pool's size (`free_node` frees it so); the twin is a fresh
    // object of the same pool, disjoint from it.
    let twin = unsafe {
        let original = node.addr().byte_sub(Pools::<C>::PREFIX);
        object.copy_from_nonoverlapping(original, sizes[pool]);
        object.byte_add(Pools::<C>::PREFIX)
    };
    let twin = NodePtr::new(twin, node.kind());
    (if flag { twin.with_prefixed(true) } else { twin }, shift)
}

/// The slot of `twin` at the place `slot` has in `node`.
///
/// # Safety
///
/// `slot` is a slot of `node`, and `twin` a copy of `node` of its size.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) unsafe fn twin_slot<S>(node: NodePtr, twin: NodePtr, slot: NonNull<S>) -> NonNull<S> {
    let offset = slot.addr().get() - node.addr().addr().get();
    // SAFETY: the caller's contract: the offset lies inside the twin.
    unsafe { twin.addr().byte_add(offset).cast() }
}
