//! The node visitor: every node and lazy leaf of a tree, parents before
//! children, without recursion. `verify`, `stats`, `clear` and `clone`
//! are built on it; beside it, the last-level nodes alone
//! ([`RawTree::visit_last_level`](crate::RawTree::visit_last_level)) and
//! two trees walked together where both hold values
//! ([`RawTree::for_each_overlap`](crate::RawTree::for_each_overlap)).

use core::borrow::Borrow;

use crate::config::{Config, RefOf};
use crate::key::{Key, SPAN};
use crate::ptr::NodePtr;

use super::{MAX_LEVELS, entry_at, flagged, node_key, node_shift, resolve, unflagged};

mod last_level;
mod overlaps;
pub(crate) mod stats;
mod verify;

pub use last_level::LastLevelNode;
pub use overlaps::OverlapSide;

/// One node or lazy leaf met by [`walk_nodes`].
#[derive(Clone, Copy)]
pub(crate) struct Visit<K> {
    /// The node, or a lazy leaf.
    pub(crate) node: NodePtr,
    /// The shift of the chunk the node consumes (for a lazy leaf, `start`).
    pub(crate) shift: u32,
    /// The shift of the first chunk below the parent's: `shift` plus the
    /// bytes a path-compressed node skips.
    pub(crate) start: u32,
    /// The key bits the path to it fixes: every bit above `start + 8`
    /// (zero for the root).
    pub(crate) path_key: K,
    /// Whether the reference to it carries the skipped-bytes flag.
    pub(crate) flagged: bool,
}

/// Visits every node and lazy leaf below and including `root`, parents
/// before children. Uses an explicit stack, never recursion.
///
/// The visitor gets the walk's access to the memory back end: `&mut &M`
/// for a read-only walk, `&mut M` for one that frees leaves as it goes.
///
/// # Safety
///
/// `root` is a live tree of configuration `C` whose root field is at
/// `root_shift`, on that memory; `visit` must not free or change the nodes.
pub(crate) unsafe fn walk_nodes<C: Config, A: Borrow<C::Memory>>(
    access: &mut A,
    root: NodePtr,
    root_shift: u32,
    mut visit: impl FnMut(&mut A, Visit<C::Key>),
) {
    let root_flagged = flagged::<C>(root);
    let root = unflagged::<C>(root);
    // Frames: node, walk position, the node's shift, its path's key.
    let mut stack = [(root, 0u16, 0u32, C::Key::MIN); MAX_LEVELS];
    // SAFETY: the caller's contract: the node is live.
    let shift = unsafe { node_shift::<C>(root, root_shift) };
    visit(
        access,
        Visit {
            node: root,
            shift,
            start: root_shift,
            path_key: C::Key::MIN,
            flagged: root_flagged,
        },
    );
    if root.is_lazy() {
        return;
    }
    // SAFETY: the root is a live node.
    stack[0] = (root, 0, shift, unsafe { node_key::<C>(root, C::Key::MIN) });
    let mut depth = 1;
    while depth > 0 {
        let (node, pos, shift, key) = stack[depth - 1];
        // SAFETY: inner nodes' slots are child references; the caller
        // promises the tree is live.
        match unsafe { entry_at::<RefOf<C>>(node, pos) } {
            Some(e) if shift > 0 => {
                stack[depth - 1].1 = e.next;
                let path_key = key.with_chunk(shift, e.chunk);
                // SAFETY: the slot holds a live child reference.
                let raw = resolve((*access).borrow(), unsafe { e.slot.read() });
                let child = unflagged::<C>(raw);
                // SAFETY: as above.
                let child_shift = unsafe { node_shift::<C>(child, shift - SPAN) };
                let visit_child = Visit {
                    node: child,
                    shift: child_shift,
                    start: shift - SPAN,
                    path_key,
                    flagged: flagged::<C>(raw),
                };
                visit(access, visit_child);
                if !child.is_lazy() && child_shift > 0 {
                    // SAFETY: as above.
                    let child_key = unsafe { node_key::<C>(child, path_key) };
                    stack[depth] = (child, 0, child_shift, child_key);
                    depth += 1;
                }
            }
            _ => depth -= 1,
        }
    }
}
