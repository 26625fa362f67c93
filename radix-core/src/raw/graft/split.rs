//! Splitting a tree at a key node by node (`split_off`): one descent
//! along the key, moving whole every subtree above the key's path.

use core::mem::MaybeUninit;
use core::ptr::NonNull;

use crate::config::{Config, RefOf, Removable};
use crate::key::{Key, SPAN};
use crate::mem::LocalMemory;
use crate::node;
use crate::ptr::NodePtr;
use crate::value::MutableLayout;

use super::super::seek;
use super::super::{
    LayoutOf, MAX_LEVELS, RawTree, SlotOf, ValueOf, entry_at, find_slot, follow, remove_entry,
    resolve, stored,
};
use super::move_subtree;

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
        let mut pos = seek(node, first);
        while let Some(e) = entry_at::<S>(node, pos) {
            out[count] = e.chunk;
            count += 1;
            pos = e.next;
        }
    }
    count
}

impl<C: Config<Memory = LocalMemory> + Removable> RawTree<C>
where
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    /// `split_off` for an uncompressed tree that holds keys on both sides
    /// of `key` within its height (see the module docs): returns the tree
    /// of the keys at or after `key`.
    pub(crate) fn split_moving(&mut self, key: C::Key) -> Self {
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
