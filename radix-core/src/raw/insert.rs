//! Insert: descend to the key's last-level node (or straight to it, when
//! the insert hint says inserts come in key order), then store the value,
//! growing the node into the next class when it is full, or build the
//! missing part of the path: a chain of new nodes, a lazy leaf, or a
//! prefix split.

use core::ptr::NonNull;

use crate::config::{Config, Pools, RefOf};
use crate::key::{Key, SPAN};
use crate::mem::{InfallibleMemory, Memory};
use crate::node::{self, Kind, NodeKind, dispatch};
use crate::ptr::NodePtr;
use crate::value::ValueLayout;

use super::{
    InputOf, LayoutOf, MemError, Needs, OldOf, RawTree, SlotOf, ValueOf, find_slot, follow,
    insert_entry, stored,
};

/// The parent slot of the last-level node that keys with `prefix` (their
/// last chunk cleared) reach: the insert-in-key-order fast path.
///
/// One compare tells a hit: a prefix has its last chunk clear, so the
/// `MAX` key, whose last chunk is all ones, never matches and marks "no
/// hint" (`slot` is then dangling and unused).
pub(crate) struct InsertHint<C: Config> {
    pub(crate) prefix: C::Key,
    pub(crate) slot: NonNull<RefOf<C>>,
}

impl<C: Config> InsertHint<C> {
    pub(crate) const NONE: Self = Self {
        prefix: C::Key::MAX,
        slot: NonNull::dangling(),
    };

    /// The hinted slot, if keys with `prefix` lead to it.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn get(&self, prefix: C::Key) -> Option<NonNull<RefOf<C>>> {
        (self.prefix == prefix).then_some(self.slot)
    }
}

/// Where a key's path ends above the last level in a tree that lacks the
/// key: the slot holding the node that has no child for the key's chunk,
/// that node, and its shift (above 0).
pub(super) struct PathEnd<C: Config> {
    pub(super) loc: NonNull<RefOf<C>>,
    pub(super) node: NodePtr,
    pub(super) shift: u32,
}

impl<C: Config> RawTree<C>
where
    C::Memory: InfallibleMemory,
{
    /// Stores `value` under `key`, returning the previous value (for
    /// [`Varlen`](crate::value::Varlen): whether there was one).
    #[inline]
    pub fn insert(&mut self, key: C::Key, value: InputOf<'_, C>) -> OldOf<C> {
        match self.try_insert(key, value) {
            Ok(old) => old,
            Err(never) => match never {},
        }
    }

    /// Stores `value` under `key` as [`insert`](Self::insert) does, first
    /// handing the value it replaces, if any, to `old`. For a
    /// [`Varlen`](crate::value::Varlen) tree, whose `insert` only says
    /// whether there was a value, this is the way to see it, without a
    /// second walk down the tree.
    #[inline]
    pub fn insert_with_old(
        &mut self,
        key: C::Key,
        value: InputOf<'_, C>,
        old: impl FnOnce(&ValueOf<C>),
    ) -> OldOf<C> {
        match self.try_insert_with_old(key, value, old) {
            Ok(old) => old,
            Err(never) => match never {},
        }
    }
}

impl<C: Config> RawTree<C> {
    /// Stores `value` under `key`, returning the previous value.
    ///
    /// # Errors
    ///
    /// The memory back end could not provide a node or a leaf. Nothing
    /// changed; the value was dropped.
    #[inline]
    pub(crate) fn try_insert(
        &mut self,
        key: C::Key,
        value: InputOf<'_, C>,
    ) -> Result<OldOf<C>, MemError<C>> {
        self.try_insert_with_old(key, value, |_| {})
    }

    /// [`try_insert`](Self::try_insert), handing a replaced value to `old`
    /// before it is dropped.
    ///
    /// The code here is the common case: a key whose last-level node
    /// exists (found from the hint or by a descent that changes nothing)
    /// and has room or the key already. What makes or grows nodes is out
    /// of line ([`insert_first`](Self::insert_first),
    /// [`raise_root`](Self::raise_root), [`grow_and_add`](Self::grow_and_add),
    /// and the chain and growth that [`insert_below`](Self::insert_below)
    /// calls), so that the common path moves and spills fewer registers
    /// around code it does not run (RT-6 at fanout 120: 87 instructions
    /// an insert before, 76 after, in callgrind).
    #[inline]
    pub(crate) fn try_insert_with_old(
        &mut self,
        key: C::Key,
        value: InputOf<'_, C>,
        old: impl FnOnce(&ValueOf<C>),
    ) -> Result<OldOf<C>, MemError<C>> {
        let on_replace = old;
        // Build the slot first: after this point nothing can panic until the
        // tree is consistent again, and every allocation below is reserved
        // before the tree changes.
        let mut slot_value = LayoutOf::<C>::into_slot(value, &mut self.mem)?;
        if !C::COMPRESSION.is_none() {
            return self.insert_compressed(key, slot_value, on_replace);
        }
        if C::RANGES {
            return self.insert_ranged(key, slot_value, on_replace);
        }
        let prefix = key.clear_below(0);
        // The location of the last-level node for `key`: from the last
        // insert's hint, or by descending.
        //
        // The hint is the parent slot of the last-level node the last insert
        // reached. It stays valid until the tree changes other than by an
        // insert into that node (which may grow it, writing the grown node
        // through the slot, while the parent holding the slot is unchanged):
        // inserts that reach a last-level node set it, inserts that add to
        // an inner node clear it (the grown node may move the slot), and
        // removals and clears clear it. A new root above the old one leaves
        // every existing node, and so the hinted slot, in place. A
        // last-level root (at most 256 keys) gets no hint: a pointer
        // to the root field would not survive the tree being moved.
        let loc = match self.hint.get(prefix) {
            Some(loc) => loc,
            None => {
                let Some(_) = self.root else {
                    return self.insert_first(key, slot_value);
                };
                if key.above(self.root_shift) {
                    slot_value = self.raise_root(key, slot_value)?;
                }
                let root = NonNull::from(self.root.as_mut().expect("non-empty tree"));
                // SAFETY: `root` is the root field of a non-empty tree of
                // height `root_shift` on this memory.
                match unsafe { Self::descend_to_leaf(&self.mem, root, self.root_shift, key) } {
                    Ok(loc) => {
                        if self.root_shift > 0 {
                            self.hint = InsertHint { prefix, slot: loc };
                        }
                        loc
                    }
                    Err(end) => {
                        // Growing this inner node may move the slot the
                        // hint points into.
                        self.hint = InsertHint::NONE;
                        // SAFETY: the descent ended at `end`, a node that
                        // lacks the key's chunk.
                        unsafe { Self::insert_below(&mut self.mem, end, key, slot_value)? };
                        self.len += 1;
                        return Ok(LayoutOf::<C>::absent());
                    }
                }
            }
        };
        // SAFETY: `loc` holds the live last-level node for this key's
        // prefix: found by the descent, or the hint's (valid as argued above).
        let old = unsafe { Self::insert_at_leaf(&mut self.mem, loc, key, slot_value, on_replace)? };
        self.len += usize::from(old.is_none());
        Ok(old.unwrap_or_else(LayoutOf::<C>::absent))
    }

    /// Follows `key` down from the root field `root` of a tree of height
    /// `root_shift`, changing nothing: the slot holding the key's
    /// last-level node, or where the key's path ends above it.
    ///
    /// # Safety
    ///
    /// `root` is the live root field of a non-empty tree on `mem` whose root
    /// is at `root_shift`, at or above the key's level.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn descend_to_leaf(
        mem: &C::Memory,
        root: NonNull<RefOf<C>>,
        root_shift: u32,
        key: C::Key,
    ) -> Result<NonNull<RefOf<C>>, PathEnd<C>> {
        let mut loc = root;
        let mut shift = root_shift;
        while shift > 0 {
            // SAFETY: `loc` always points at a live slot holding a live
            // node reference (the root field, or a child slot of a live
            // inner node).
            let node = follow::<C>(mem, unsafe { loc.read() });
            // SAFETY: `node` is a live inner node, whose slots are references.
            match unsafe { find_slot::<RefOf<C>>(node, key.chunk(shift)) } {
                Some(child) => {
                    loc = child;
                    shift -= SPAN;
                }
                None => return Err(PathEnd { loc, node, shift }),
            }
        }
        Ok(loc)
    }

    /// Stores the first key of an empty tree: a chain of one-entry nodes
    /// from the smallest root that holds it.
    #[inline(never)]
    pub(super) fn insert_first(
        &mut self,
        key: C::Key,
        mut slot_value: SlotOf<C>,
    ) -> Result<OldOf<C>, MemError<C>> {
        let shift = key.root_shift();
        if C::Memory::FALLIBLE {
            let mut needs = Needs::NONE;
            Self::chain_needs(&mut needs, shift);
            slot_value = Self::reserve(&mut self.mem, &needs, slot_value)?;
        }
        let root = Self::chain(&mut self.mem, key, shift, slot_value);
        self.root = Some(stored(&self.mem, root));
        self.root_shift = shift;
        self.len = 1;
        Ok(LayoutOf::<C>::absent())
    }

    /// Adds roots until the tree's height reaches `key`'s level. The key's
    /// chain then goes beside the old tree in the topmost root, so this
    /// reserves that chain too (and the topmost root's growth, if class 0
    /// holds one child only); the slot value comes back for it.
    #[inline(never)]
    pub(super) fn raise_root(
        &mut self,
        key: C::Key,
        mut slot_value: SlotOf<C>,
    ) -> Result<SlotOf<C>, MemError<C>> {
        if C::Memory::FALLIBLE {
            let shift = key.root_shift();
            let mut needs = Needs::NONE;
            let levels = (shift - self.root_shift) / SPAN;
            needs.add(Pools::<C>::inner(0), levels as usize);
            Self::chain_needs(&mut needs, shift - SPAN);
            if C::SIZE_CLASSES.capacity(0) < 2 {
                needs.add(Pools::<C>::inner(1), 1);
            }
            slot_value = Self::reserve(&mut self.mem, &needs, slot_value)?;
        }
        while key.above(self.root_shift) {
            self.add_level();
        }
        Ok(slot_value)
    }

    /// Adds `key`'s chain below the inner node where its path ends, growing
    /// that node if it is full.
    ///
    /// It borrows the memory alone, so that `end.loc`, which may be the
    /// root field, stays valid. (Inlined: out of line, it was a call
    /// between two calls, which cost RT-3's random loads 4 % more
    /// instructions.)
    ///
    /// # Safety
    ///
    /// `end` is where `key`'s path ends in a live tree on `mem`: its node
    /// has no child for the key's chunk at its shift.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) unsafe fn insert_below(
        mem: &mut C::Memory,
        end: PathEnd<C>,
        key: C::Key,
        mut slot_value: SlotOf<C>,
    ) -> Result<(), MemError<C>> {
        let PathEnd { loc, node, shift } = end;
        if C::Memory::FALLIBLE {
            let mut needs = Needs::NONE;
            Self::chain_needs(&mut needs, shift - SPAN);
            // SAFETY: the caller's contract.
            unsafe { Self::grow_needs(&mut needs, node, shift) };
            slot_value = Self::reserve(mem, &needs, slot_value)?;
        }
        let child = Self::chain(mem, key, shift - SPAN, slot_value);
        let child = stored(mem, child);
        // SAFETY: the caller's contract.
        unsafe { Self::add_child(mem, loc, node, key.chunk(shift), child, shift) };
        Ok(())
    }

    /// Stores `slot_value` under `key` in the last-level node held at
    /// `loc`: replaces the old value (returned, as `Some`), or adds the
    /// chunk, growing the node first if it is full (`None`).
    ///
    /// It borrows the memory alone, so that `loc`, which may be the root
    /// field, stays valid.
    ///
    /// # Safety
    ///
    /// `loc` holds the live last-level node that `key`'s prefix leads to.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) unsafe fn insert_at_leaf(
        mem: &mut C::Memory,
        loc: NonNull<RefOf<C>>,
        key: C::Key,
        slot_value: SlotOf<C>,
        on_replace: impl FnOnce(&ValueOf<C>),
    ) -> Result<Option<OldOf<C>>, MemError<C>> {
        let chunk = key.chunk(0);
        // One kind dispatch for the search and the insert into a node with
        // room (the common case); only a full node goes through
        // `grow_and_add`.
        // SAFETY: the caller's contract; the replaced slot value is live
        // (its value shown to `on_replace`) until `take` consumes it.
        unsafe {
            let node = follow::<C>(mem, loc.read());
            dispatch!(node, K => {
                let addr = node.addr_as(K::KIND);
                // Keys inserted in order pass their node's last chunk,
                // which a sorted kind tells without the search.
                if !K::follows_last(addr, chunk)
                    && let Some(slot) = K::find::<SlotOf<C>>(addr, chunk) {
                        let mut old = slot.read();
                        slot.write(slot_value);
                        on_replace(LayoutOf::<C>::get(NonNull::from(&mut old), mem));
                        return Ok(Some(LayoutOf::<C>::take(old, mem)));
                    }
                // A node256 that lacks the chunk has room for it.
                if K::KIND == Kind::N256
                    || node::count(addr) < C::SIZE_CLASSES.capacity(node::class(addr))
                {
                    K::insert::<SlotOf<C>>(addr, chunk, slot_value);
                    return Ok(None);
                }
            });
            Self::grow_and_add(mem, loc, node, chunk, slot_value)?;
        }
        Ok(None)
    }

    /// Adds `chunk` to the full last-level node `node` held at `loc`: the
    /// node grows into the next class first. Out of line, so that the
    /// insert with room stays small.
    ///
    /// # Safety
    ///
    /// `loc` holds `node`, a live, full last-level node on `mem` that lacks
    /// `chunk`.
    #[inline(never)]
    unsafe fn grow_and_add(
        mem: &mut C::Memory,
        loc: NonNull<RefOf<C>>,
        node: NodePtr,
        chunk: u8,
        mut slot_value: SlotOf<C>,
    ) -> Result<(), MemError<C>> {
        if C::Memory::FALLIBLE {
            let mut needs = Needs::NONE;
            // SAFETY: the caller's contract.
            unsafe { Self::grow_needs(&mut needs, node, 0) };
            slot_value = Self::reserve(mem, &needs, slot_value)?;
        }
        // SAFETY: the caller's contract.
        unsafe { Self::add_child(mem, loc, node, chunk, slot_value, 0) };
        Ok(())
    }

    /// Adds a level above the root: a new root whose chunk 0 is the old one.
    /// Its node is reserved.
    pub(super) fn add_level(&mut self) {
        let old = self.root.expect("non-empty tree");
        let shift = self.root_shift + SPAN;
        let root = Self::new_node(&mut self.mem, 0, shift, C::Key::MIN);
        // SAFETY: the new root is empty and has room for one child.
        unsafe { insert_entry(root, 0, old) };
        self.root = Some(stored(&self.mem, root));
        self.root_shift = shift;
    }
}
