//! Remove and clear: take the key's value out, then repair bottom-up.
//! Nodes left sparse shrink into smaller kinds at PostgreSQL's thresholds,
//! empty nodes are freed, and a root with a single child at chunk 0 gives
//! way to that child.

use core::mem::MaybeUninit;
use core::ptr::NonNull;

use crate::config::{Config, RefOf};
use crate::key::{Key, SPAN};
use crate::mem::{InfallibleMemory, Memory};
use crate::node::{self, MAX_CLASSES, lazy};
use crate::ptr::NodePtr;
use crate::value::{DropsAll, ValueLayout};

use super::{
    InsertHint, LayoutOf, MAX_LEVELS, MemError, OldOf, RawTree, SlotOf, entry_at, find_slot,
    follow, remove_entry, walk_nodes,
};

impl<C: Config> RawTree<C>
where
    C::Memory: InfallibleMemory,
{
    /// Removes `key`, returning its value (for [`Varlen`](crate::value::Varlen):
    /// whether it was present).
    ///
    /// Nodes left sparse shrink into smaller kinds at PostgreSQL's
    /// thresholds, empty nodes are freed, a root with a single child at
    /// chunk 0 gives way to that child, and removing the last key returns
    /// every slab block, so the tree is back to its empty size.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m: RadixMap<u32, char> = [(1, 'a'), (2, 'b')].into();
    /// assert_eq!(m.remove(1), Some('a'));
    /// assert_eq!(m.remove(1), None);
    /// ```
    ///
    /// A configuration without delete (`delete: false` in `radix_tree!`,
    /// `Config::DELETE` false) has no `remove`: a call fails to compile,
    /// with a message saying so, once it is built to code (`cargo build`,
    /// not `cargo check`, which builds no code).
    ///
    /// ```compile_fail
    /// radix_core::radix_tree! {
    ///     struct Grows { key: u32, value: u64, delete: false }
    /// }
    /// let mut m = Grows::new();
    /// m.insert(1, 2);
    /// m.remove(1); // `remove` on a tree configured without delete
    /// ```
    #[inline]
    pub fn remove(&mut self, key: C::Key) -> OldOf<C> {
        const {
            assert!(
                C::DELETE,
                "`remove` on a tree configured without delete (`delete: false`)"
            )
        };
        match self.try_remove(key) {
            Ok(old) => old,
            Err(never) => match never {},
        }
    }
}

impl<C: Config> RawTree<C> {
    /// Shrink targets per class, as `(target class, threshold)`.
    const SHRINK: [Option<(usize, usize)>; MAX_CLASSES] = {
        let mut table = [None; MAX_CLASSES];
        let mut class = 0;
        while class < C::SIZE_CLASSES.len() {
            table[class] = C::SIZE_CLASSES.shrink_target(class);
            class += 1;
        }
        table
    };

    /// Per class, the count at or below which a node may shrink (0 for a
    /// class with no smaller kind): the one compare a removal makes before
    /// [`shrink_target`](Self::shrink_target)'s walk of the shrink chain.
    const SHRINK_AT: [usize; MAX_CLASSES] = {
        let mut table = [0; MAX_CLASSES];
        let mut class = 0;
        while class < C::SIZE_CLASSES.len() {
            if let Some((_, threshold)) = Self::SHRINK[class] {
                table[class] = threshold;
            }
            class += 1;
        }
        table
    };

    /// Removes `key`, returning its value (see [`RawTree::remove`]).
    ///
    /// # Errors
    ///
    /// The memory back end could not provide the smaller node a sparse
    /// node shrinks into. Nothing changed.
    pub(crate) fn try_remove(&mut self, key: C::Key) -> Result<OldOf<C>, MemError<C>> {
        if !C::COMPRESSION.is_none() {
            return self.remove_compressed(key);
        }
        if C::RANGES {
            self.split_ranges_on_path(key)?;
        }
        let absent = LayoutOf::<C>::absent;
        let Some(_) = self.root else {
            return Ok(absent());
        };
        if key.above(self.root_shift) {
            return Ok(absent());
        }
        let mut path = [MaybeUninit::<NonNull<RefOf<C>>>::uninit(); MAX_LEVELS];
        let mut loc = NonNull::from(self.root.as_mut().expect("non-empty tree"));
        let mut shift = self.root_shift;
        let mut depth = 0;
        // SAFETY: as in `insert`; locations in `path` are visited bottom-up,
        // so each is used before its parent node changes.
        unsafe {
            loop {
                // (`% MAX_LEVELS` drops the bounds check: the depth of a
                // key's levels is below it by construction.)
                path[depth % MAX_LEVELS].write(loc);
                if shift == 0 {
                    break;
                }
                match find_slot::<RefOf<C>>(follow::<C>(&self.mem, loc.read()), key.chunk(shift)) {
                    Some(child) => {
                        loc = child;
                        shift -= SPAN;
                        depth += 1;
                    }
                    None => return Ok(absent()),
                }
            }
            let leaf_node = follow::<C>(&self.mem, loc.read());
            if C::Memory::FALLIBLE {
                // Reserve before the first change, which needs a search
                // of its own here.
                if find_slot::<SlotOf<C>>(leaf_node, key.chunk(0)).is_none() {
                    return Ok(absent());
                }
                Self::reserve_shrink(&mut self.mem, &path[..=depth])?;
            }
            let Some(slot) = remove_entry::<SlotOf<C>>(leaf_node, key.chunk(0)) else {
                return Ok(absent());
            };
            self.len -= 1;
            // The common case: the last-level node keeps more entries than
            // its class shrinks at, so no node changes but this one.
            let (count, class) = (node::count(leaf_node.addr()), node::class(leaf_node.addr()));
            if count > Self::SHRINK_AT[class % MAX_CLASSES] {
                // SAFETY: the slot value was moved out of its node and is
                // consumed once.
                return Ok(LayoutOf::<C>::take(slot, &mut self.mem));
            }
            let freed = Self::after_sparse_removal(&mut self.mem, &path[..=depth], key);
            // Before the memory may be released below: taking the value
            // frees its leaf, if it has one.
            // SAFETY: as above.
            let old = LayoutOf::<C>::take(slot, &mut self.mem);
            // Only a freed node changes the levels above it: its parent
            // loses an entry (and may shrink, moving the slot the insert
            // hint points into), and the root may be left with a single
            // child at chunk 0. A last-level node that only shrank is
            // relinked through the hinted slot, which stays valid.
            if freed || self.len == 0 {
                self.hint = InsertHint::NONE;
                if self.len == 0 {
                    self.root = None;
                    // SAFETY: every node has been freed; none is used again.
                    self.mem.release_all();
                } else {
                    self.drop_levels();
                }
            }
            Ok(old)
        }
    }

    /// What a removal does once the last-level node on `path` has become
    /// sparse or empty: shrinks it, or frees it and every ancestor it
    /// leaves empty, then shrinks the lowest node that keeps entries.
    /// Whether it freed a node. Out of line, so that the removal from a node
    /// that stays as it is inlines small.
    ///
    /// It borrows the memory alone, so that the locations in `path`, the
    /// first of which is the root field, stay valid.
    ///
    /// # Safety
    ///
    /// `path` holds the live locations on `mem` from the root to the
    /// last-level node of `key`, from which `key` was just removed;
    /// nothing else changed since the descent.
    #[inline(never)]
    unsafe fn after_sparse_removal(
        mem: &mut C::Memory,
        path: &[MaybeUninit<NonNull<RefOf<C>>>],
        key: C::Key,
    ) -> bool {
        let depth = path.len() - 1;
        let mut level = depth;
        let mut shift = 0;
        // SAFETY: the caller's contract; locations in `path` are visited
        // bottom-up, so each is used before its parent node changes.
        unsafe {
            loop {
                let loc = path[level].assume_init();
                let node = follow::<C>(mem, loc.read());
                if node::count(node.addr()) > 0 {
                    if shift == 0 {
                        Self::shrink_if_sparse::<SlotOf<C>>(mem, loc, node, shift);
                    } else {
                        Self::shrink_if_sparse::<RefOf<C>>(mem, loc, node, shift);
                    }
                    break;
                }
                Self::free_node(mem, node, shift);
                if level == 0 {
                    break;
                }
                level -= 1;
                shift += SPAN;
                let parent = follow::<C>(mem, path[level].assume_init().read());
                remove_entry::<RefOf<C>>(parent, key.chunk(shift))
                    .expect("the child is in its parent");
            }
        }
        level < depth
    }

    /// Forgets the entries without dropping them: the tree is empty but
    /// keeps its node memory until it is cleared or dropped, which then
    /// frees the memory without visiting a slot. For owned iteration,
    /// which moves the values out of the nodes it goes on reading.
    pub(crate) fn detach_entries(&mut self) {
        self.hint = InsertHint::NONE;
        self.root = None;
        self.len = 0;
    }

    /// Removes every key, dropping the values and returning every slab block
    /// and leaf to the allocator.
    pub fn clear(&mut self) {
        // Detach first, so that no value is reached twice; a value whose
        // `Drop` panics does not stop the rest (`DropsAll`, as std does),
        // and the guard returns every node even as the panic resumes (the
        // tree must not keep memory it can no longer reach).
        self.hint = InsertHint::NONE;
        let root = self.root.take();
        self.len = 0;
        let memory = ReleaseOnDrop(&mut self.mem);
        // Visit the slots only for values to drop or leaves the back end
        // would not free wholesale.
        let visit = LayoutOf::<C>::VISIT_ON_DROP
            && (LayoutOf::<C>::DROPS_VALUES || !memory.0.releases_leaves());
        let mut drops = DropsAll::new();
        if let (Some(root), true) = (root, visit) {
            let root = follow::<C>(memory.0, root);
            // SAFETY: the detached tree is live until the guard releases it;
            // each value slot is dropped exactly once.
            unsafe {
                walk_nodes::<C, _>(memory.0, root, self.root_shift, |mem, visit| {
                    let (node, shift) = (visit.node, visit.shift);
                    if node.is_lazy() {
                        let slot = lazy::slot::<SlotOf<C>>(node.addr());
                        drops.drop_one(|| LayoutOf::<C>::drop_slot(slot, mem));
                    } else if shift == 0 {
                        let mut pos = 0;
                        while let Some(e) = entry_at::<SlotOf<C>>(node, pos) {
                            drops.drop_one(|| LayoutOf::<C>::drop_slot(e.slot, mem));
                            pos = e.next;
                        }
                    }
                });
            }
        }
        drops.finish();
    }

    /// Removes every key without dropping its value, as
    /// [`core::mem::forget`] would each, and returns every slab block to
    /// the allocator without visiting a slot.
    ///
    /// It is [`clear`](RawTree::clear) for values whose `Drop` would do
    /// nothing, which the type alone cannot tell: an enum whose variants
    /// that own memory are known to be absent (a TID bitmap of small
    /// pages only). A value that owned something leaks it, which is safe,
    /// as `mem::forget` is. Leaves (values of the `leaf` layout and long
    /// `varlen` ones) are allocations of their own and leak too unless
    /// the memory back end frees them wholesale (a bump arena).
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m: RadixMap<u64, u64> = (0..1000).map(|k| (k, k)).collect();
    /// m.forget_values();
    /// assert!(m.is_empty());
    /// assert_eq!(m.memory_usage(), 0);
    /// ```
    pub fn forget_values(&mut self) {
        self.detach_entries();
        // With the root detached, `clear` frees the node memory alone.
        self.clear();
    }

    /// Removes root levels that only lead to chunk 0, so the height again
    /// matches the largest key.
    pub(super) fn drop_levels(&mut self) {
        while self.root_shift > 0 {
            let root = follow::<C>(&self.mem, self.root.expect("non-empty tree"));
            // SAFETY: the root is live and inner; its only child is live.
            unsafe {
                if node::count(root.addr()) != 1 {
                    return;
                }
                match entry_at::<RefOf<C>>(root, 0) {
                    // A range value stays in a slot: the root never is one.
                    Some(e) if C::RANGES && follow::<C>(&self.mem, e.slot.read()).is_lazy() => {
                        return;
                    }
                    Some(e) if e.chunk == 0 => {
                        self.root = Some(e.slot.read());
                        Self::free_node(&mut self.mem, root, self.root_shift);
                        self.root_shift -= SPAN;
                    }
                    _ => return,
                }
            }
        }
    }

    /// The class a node of `class` with `count` children belongs in: itself,
    /// or the last class of its shrink chain whose threshold it is at or
    /// below.
    ///
    /// With unusual class lists a shrink target can itself be at or below
    /// its own threshold (classes 33 and 32 of different kinds, say), so the
    /// node moves straight to the last class in that chain: every node then
    /// stays above its class's threshold, which `verify` checks.
    #[inline]
    pub(crate) fn shrink_target(count: usize, class: usize) -> usize {
        let mut target = class;
        while let Some((smaller, threshold)) = Self::SHRINK[target] {
            if count > threshold {
                break;
            }
            target = smaller;
        }
        target
    }

    /// Moves the node at `loc` into a smaller class when it has become
    /// sparse enough (into a reserved node).
    ///
    /// # Safety
    ///
    /// As for `add_child`.
    #[inline]
    pub(crate) unsafe fn shrink_if_sparse<S>(
        mem: &mut C::Memory,
        loc: NonNull<RefOf<C>>,
        node: NodePtr,
        shift: u32,
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            let (count, class) = (node::count(node.addr()), node::class(node.addr()));
            if count > Self::SHRINK_AT[class % MAX_CLASSES] {
                return;
            }
            let target = Self::shrink_target(count, class);
            if target != class {
                let new = Self::convert::<S>(mem, node, target, shift);
                Self::relink(mem, loc, new);
            }
        }
    }
}

/// Releases every node and leaf of a detached tree when dropped, also
/// while unwinding from a value's panicking `Drop`.
struct ReleaseOnDrop<'a, M: Memory>(&'a mut M);

impl<M: Memory> Drop for ReleaseOnDrop<'_, M> {
    fn drop(&mut self) {
        // SAFETY: the guard is made only over a tree whose root has been
        // detached: no node is reached again.
        unsafe { self.0.release_all() };
    }
}
