//! The intersection of two trees node by node (`intersect_with`): one
//! paired walk, moving each common key's value into a fresh tree.

use core::ptr::NonNull;

use crate::config::{Config, RefOf};
use crate::key::{Key, SPAN};
use crate::mem::LocalMemory;
use crate::node;
use crate::ptr::NodePtr;
use crate::value::{MutableLayout, ValueLayout};

use super::super::{
    LayoutOf, MAX_LEVELS, RawTree, SlotOf, ValueOf, entry_at, find_slot, follow, remove_entry,
    resolve,
};

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
    pub(crate) fn intersect_paired<F>(&mut self, other: &Self, merge: &mut F)
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
