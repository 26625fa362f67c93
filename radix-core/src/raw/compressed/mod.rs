//! Lookup, insert and remove in trees with lazy expansion or path
//! compression ([`Compression`](crate::Compression) other than `None`).
//!
//! The uncompressed tree keeps its own code paths in the parent module,
//! untouched: a configuration without compression compiles exactly the
//! engine it had before compression existed, so dense keys pay nothing.
//! Here the descent differs in two places:
//!
//! - a child reference may be a *lazy leaf* ([`crate::node::lazy`]): the
//!   whole key and its value, standing for a subtree of one key. A lookup
//!   compares keys there and stops.
//! - with path compression, a node's shift is not its depth's: each node
//!   records it in its prefix word ([`crate::node::prefix`]), with every key
//!   bit above its chunk. A lookup checks the word (one XOR and two shifts)
//!   and takes the node's shift from it.
//!
//! The structure is kept canonical, so that the same keys always make the
//! same tree and [`RawTree::verify`] can check it: with lazy expansion no
//! subtree holds a single key, and with path compression no inner node has
//! a single child. An insert that diverges from a lazy leaf or from a
//! node's prefix adds just the node where the keys part; a removal that
//! leaves a node with one key collapses it into a lazy leaf, and one that
//! leaves an inner node with one child merges it into that child (whose
//! prefix word, holding whole key bits, is already right).
//!
//! With path compression the root is always at the key type's top shift
//! (its prefix word says where its chunk is); with lazy expansion alone
//! the height follows the largest key as in the uncompressed tree, a lazy
//! root standing for any height.
//!
//! # Pointer invariants
//!
//! The unsafe code here relies on these, beside those of the uncompressed
//! engine:
//!
//! - A reference with the lazy bit names a lazy leaf: a pool object of
//!   the lazy pool holding a slot, then the whole key, unaligned.
//! - With path compression, every node (never a lazy leaf) is preceded,
//!   inside its own pool object, by its prefix word; a reference whose
//!   skipped-bytes flag is set names a node whose prefix word fixes bytes
//!   the parent's chunk does not, and an unflagged one a node directly
//!   below its parent. The flag lives in the reference, so the word is
//!   read only where the flag says it matters.
//! - A node's shift is the one its prefix word records (with path
//!   compression) or its parent's less one chunk (without), and every key
//!   under it agrees with its prefix word above that shift.

use super::*;
use crate::node::prefix::prefix_word;

/// The value slot of lazy leaf `leaf` if it holds `key`.
///
/// # Safety
///
/// `leaf` is a live lazy leaf of a tree of configuration `C`.
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn lazy_match<C: Config>(leaf: NodePtr, key: C::Key) -> Option<NonNull<SlotOf<C>>> {
    let addr = leaf.addr();
    // SAFETY: the caller's contract.
    unsafe { (lazy::key::<C::Key, SlotOf<C>>(addr) == key).then(|| lazy::slot::<SlotOf<C>>(addr)) }
}

/// One node on a removal's path: where it is held, the node, its shift,
/// and the shift of the chunk after its parent's.
type PathStep<C> = (NonNull<RefOf<C>>, NodePtr, u32, u32);

/// Where a removal found its key.
enum Found<R> {
    /// A lazy leaf, held at this location below the recorded path.
    Lazy(NonNull<R>),
    /// In the last recorded node, a last-level node.
    Value,
}

impl<C: Config> RawTree<C> {
    /// The smallest class holding two entries, for the node where two
    /// keys part.
    const PAIR_CLASS: usize = if C::SIZE_CLASSES.capacity(0) >= 2 {
        0
    } else {
        1
    };

    /// The slot of `key` in a compressed tree.
    ///
    /// A child reference's tag says whether the child needs a closer look
    /// (a lazy leaf, or a node that skips bytes); where it does not, the
    /// descent is the uncompressed one, the next chunk's shift known before
    /// the child is loaded.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn find_compressed(&self, key: C::Key) -> Option<NonNull<SlotOf<C>>> {
        let mut node = resolve(&self.mem, self.root?);
        let mut shift = self.root_shift;
        if !C::COMPRESSION.path() && key.above(shift) {
            return None;
        }
        loop {
            // SAFETY: reachable nodes and lazy leaves are live, inner slots
            // hold child references, flagged nodes have prefix words.
            unsafe {
                // (Without path compression bit 3 belongs to the address.)
                let check = if C::COMPRESSION.path() {
                    node.needs_check()
                } else {
                    node.is_lazy()
                };
                if check {
                    if C::COMPRESSION.lazy() && node.is_lazy() {
                        return lazy_match::<C>(node, key);
                    }
                    node = node.without_prefixed();
                    let word = prefix_word::<C::Key>(node.addr());
                    if !key.matches_word(word) {
                        return None;
                    }
                    shift = word.word_shift();
                }
                if shift == 0 {
                    return find_value_slot::<C>(node, key.chunk(0));
                }
                node = find_child(&self.mem, node, key.chunk(shift))?;
            }
            shift -= SPAN;
        }
    }

    /// The stored reference to `node` placed where the chunk at `start` is
    /// next: with path compression, flagged if the node skips bytes.
    ///
    /// # Safety
    ///
    /// `node` is a live node or lazy leaf of this tree.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn link(mem: &C::Memory, node: NodePtr, start: u32) -> RefOf<C> {
        let node = if C::COMPRESSION.path() && !node.is_lazy() {
            // SAFETY: the caller's contract.
            let shift = unsafe { prefix_word::<C::Key>(node.addr()).word_shift() };
            node.with_prefixed(shift != start)
        } else {
            node
        };
        stored(mem, node)
    }

    /// Counts what [`Self::single`] allocates.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn single_needs(needs: &mut Needs) {
        if C::COMPRESSION.lazy() {
            needs.add(Pools::<C>::cell(), 1);
        } else {
            needs.add(Pools::<C>::leaf(0), 1);
        }
    }

    /// What stands for a subtree holding only `key`: a lazy leaf, or (path
    /// compression alone) a last-level node with every higher byte in its
    /// prefix. Allocated from a reservation ([`Self::single_needs`]).
    fn single(mem: &mut C::Memory, key: C::Key, slot_value: SlotOf<C>) -> NodePtr {
        if C::COMPRESSION.lazy() {
            let raw = mem.alloc_node(Pools::<C>::cell());
            // SAFETY: a fresh lazy leaf from its pool.
            unsafe { lazy::init(raw, key, slot_value) };
            NodePtr::lazy(raw)
        } else {
            let node = Self::new_node(mem, 0, 0, key);
            // SAFETY: a fresh node is empty and has room for one entry.
            unsafe { insert_entry(node, key.chunk(0), slot_value) };
            node
        }
    }

    /// Counts what [`Self::split_lazy`] allocates.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn split_lazy_needs(needs: &mut Needs, diverge: u32, start: u32) {
        needs.add(Pools::<C>::at(Self::PAIR_CLASS, diverge), 1);
        if diverge > 0 {
            needs.add(Pools::<C>::cell(), 1);
        }
        if !C::COMPRESSION.path() {
            needs.add(Pools::<C>::inner(0), ((start - diverge) / SPAN) as usize);
        }
    }

    /// The subtree of `leaf` (a lazy leaf holding `other`) and `key`, which
    /// first differ in the chunk at `diverge`, the subtree starting at
    /// `start`: a node at `diverge` holding both (their lazy leaves, or at
    /// the last level their values, the old leaf then freed), and without
    /// path compression the single-child nodes above it up to `start`.
    ///
    /// # Safety
    ///
    /// `leaf` is a live lazy leaf of this tree's memory holding `other`;
    /// `diverge <= start`; the allocations are reserved.
    unsafe fn split_lazy(
        mem: &mut C::Memory,
        leaf: NodePtr,
        other: C::Key,
        key: C::Key,
        diverge: u32,
        start: u32,
        slot_value: SlotOf<C>,
    ) -> NodePtr {
        let mut node = Self::new_node(mem, Self::PAIR_CLASS, diverge, key);
        // SAFETY: the node is fresh with room for two entries of distinct
        // chunks; the old leaf's slot value is moved, then its object freed
        // and not used again.
        unsafe {
            if diverge == 0 {
                let old = lazy::slot::<SlotOf<C>>(leaf.addr()).read();
                insert_entry(node, other.chunk(0), old);
                insert_entry(node, key.chunk(0), slot_value);
                mem.free_node(Pools::<C>::cell(), leaf.addr());
            } else {
                let new = Self::single(mem, key, slot_value);
                insert_entry(node, other.chunk(diverge), stored(mem, leaf));
                insert_entry(
                    node,
                    key.chunk(diverge),
                    Self::link(mem, new, diverge - SPAN),
                );
            }
        }
        if !C::COMPRESSION.path() {
            let mut level = diverge + SPAN;
            while level <= start {
                let parent = Self::new_node(mem, 0, level, key);
                // SAFETY: as above.
                unsafe { insert_entry(parent, key.chunk(level), stored(mem, node)) };
                node = parent;
                level += SPAN;
            }
        }
        node
    }

    /// Stores `slot_value` under `key` in a compressed tree (see
    /// [`RawTree::try_insert_with_old`]).
    pub(super) fn insert_compressed(
        &mut self,
        key: C::Key,
        mut slot_value: SlotOf<C>,
        on_replace: impl FnOnce(&ValueOf<C>),
    ) -> Result<OldOf<C>, MemError<C>> {
        let absent = LayoutOf::<C>::absent;
        let top = C::Key::BITS - SPAN;
        let Some(root) = self.root else {
            if C::Memory::FALLIBLE {
                let mut needs = Needs::NONE;
                Self::single_needs(&mut needs);
                slot_value = Self::reserve(&mut self.mem, &needs, slot_value)?;
            }
            let root = Self::single(&mut self.mem, key, slot_value);
            self.root_shift = if C::COMPRESSION.path() {
                top
            } else {
                key.root_shift()
            };
            // SAFETY: the new root is live.
            self.root = Some(unsafe { Self::link(&self.mem, root, self.root_shift) });
            self.len = 1;
            return Ok(absent());
        };
        if !C::COMPRESSION.path() && key.above(self.root_shift) {
            if follow::<C>(&self.mem, root).is_lazy() {
                // A lazy root stands for any height.
                self.root_shift = key.root_shift();
            } else {
                // New roots up to the key's level, then the key's lazy
                // leaf beside the old tree in the topmost.
                if C::Memory::FALLIBLE {
                    let mut needs = Needs::NONE;
                    let levels = (key.root_shift() - self.root_shift) / SPAN;
                    needs.add(Pools::<C>::inner(0), levels as usize);
                    Self::single_needs(&mut needs);
                    if C::SIZE_CLASSES.capacity(0) < 2 {
                        needs.add(Pools::<C>::inner(1), 1);
                    }
                    slot_value = Self::reserve(&mut self.mem, &needs, slot_value)?;
                }
                while key.above(self.root_shift) {
                    self.add_level();
                }
            }
        }
        // The insert hint, as in the uncompressed tree: the slot holding
        // the last-level node for keys with this prefix (that node's prefix
        // word, with path compression, is the prefix itself). Besides what
        // invalidates it there (an inner node growing, any removal), a
        // prefix split may put a new node in the hinted slot: splits clear
        // it too. Lazy splits never touch it: the hinted slot holds a node.
        let prefix = key.clear_below(0);
        if let Some(loc) = self.hint.get(prefix) {
            // SAFETY: the hint is valid (see above): `loc` holds the live
            // last-level node for this prefix.
            let old =
                unsafe { Self::insert_at_leaf(&mut self.mem, loc, key, slot_value, on_replace)? };
            self.len += usize::from(old.is_none());
            return Ok(old.unwrap_or_else(absent));
        }
        let mut loc = NonNull::from(self.root.as_mut().expect("non-empty tree"));
        let mut at_root = true;
        // The shift of the first chunk below the node holding `loc`.
        let mut shift = self.root_shift;
        // `loc` is the root field or a child slot of a live node that is
        // not changed while `loc` is used.
        // SAFETY: `loc` holds a live reference (see above); lazy leaves and
        // prefix words exist only in configurations that have them.
        unsafe {
            loop {
                let node = follow::<C>(&self.mem, loc.read());
                if C::COMPRESSION.lazy() && node.is_lazy() {
                    let other = lazy::key::<C::Key, SlotOf<C>>(node.addr());
                    if other == key {
                        let slot = lazy::slot::<SlotOf<C>>(node.addr());
                        let mut old = slot.read();
                        slot.write(slot_value);
                        on_replace(LayoutOf::<C>::get(NonNull::from(&mut old), &self.mem));
                        return Ok(LayoutOf::<C>::take(old, &mut self.mem));
                    }
                    let diverge = key.diverging_shift(other);
                    if C::Memory::FALLIBLE {
                        let mut needs = Needs::NONE;
                        Self::split_lazy_needs(&mut needs, diverge, shift);
                        slot_value = Self::reserve(&mut self.mem, &needs, slot_value)?;
                    }
                    let mem = &mut self.mem;
                    let new = Self::split_lazy(mem, node, other, key, diverge, shift, slot_value);
                    loc.write(Self::link(mem, new, shift));
                    // The slot now holds the last-level node of both keys,
                    // unless (lazy expansion alone) a chain leads to it.
                    if diverge == 0 && !at_root && (C::COMPRESSION.path() || shift == 0) {
                        self.hint = InsertHint { prefix, slot: loc };
                    }
                    self.len += 1;
                    return Ok(absent());
                }
                if C::COMPRESSION.path() {
                    let word = prefix_word::<C::Key>(node.addr());
                    if !key.matches_word(word) {
                        // The key leaves the node's path inside its prefix:
                        // a node where they part takes the node's place,
                        // the node (its word unchanged) below it.
                        let diverge = key.diverging_shift(word);
                        if C::Memory::FALLIBLE {
                            let mut needs = Needs::NONE;
                            needs.add(Pools::<C>::inner(Self::PAIR_CLASS), 1);
                            Self::single_needs(&mut needs);
                            slot_value = Self::reserve(&mut self.mem, &needs, slot_value)?;
                        }
                        let mem = &mut self.mem;
                        let parent = Self::new_node(mem, Self::PAIR_CLASS, diverge, key);
                        let new = Self::single(mem, key, slot_value);
                        let below = diverge - SPAN;
                        insert_entry(parent, word.chunk(diverge), Self::link(mem, node, below));
                        insert_entry(parent, key.chunk(diverge), Self::link(mem, new, below));
                        loc.write(Self::link(mem, parent, shift));
                        self.hint = InsertHint::NONE;
                        self.len += 1;
                        return Ok(absent());
                    }
                    shift = word.word_shift();
                }
                if shift == 0 {
                    // (A pointer to the root field would not survive the
                    // tree being moved.)
                    if !at_root {
                        self.hint = InsertHint { prefix, slot: loc };
                    }
                    let old =
                        Self::insert_at_leaf(&mut self.mem, loc, key, slot_value, on_replace)?;
                    self.len += usize::from(old.is_none());
                    return Ok(old.unwrap_or_else(absent));
                }
                let chunk = key.chunk(shift);
                match find_slot::<RefOf<C>>(node, chunk) {
                    Some(child) => {
                        loc = child;
                        at_root = false;
                        shift -= SPAN;
                    }
                    None => {
                        // Growing this inner node may move the hinted slot.
                        self.hint = InsertHint::NONE;
                        if C::Memory::FALLIBLE {
                            let mut needs = Needs::NONE;
                            Self::single_needs(&mut needs);
                            Self::grow_needs(&mut needs, node, shift);
                            slot_value = Self::reserve(&mut self.mem, &needs, slot_value)?;
                        }
                        let mem = &mut self.mem;
                        let new = Self::single(mem, key, slot_value);
                        let new = Self::link(mem, new, shift - SPAN);
                        Self::add_child(mem, loc, node, chunk, new, shift);
                        self.len += 1;
                        return Ok(absent());
                    }
                }
            }
        }
    }

    /// Removes `key` from a compressed tree (see [`RawTree::try_remove`]).
    pub(super) fn remove_compressed(&mut self, key: C::Key) -> Result<OldOf<C>, MemError<C>> {
        let absent = LayoutOf::<C>::absent;
        let Some(_) = self.root else {
            return Ok(absent());
        };
        if !C::COMPRESSION.path() && key.above(self.root_shift) {
            return Ok(absent());
        }
        // The nodes from the root down: location, node, shift, and the
        // shift of the chunk after the parent's.
        let mut path = [MaybeUninit::<PathStep<C>>::uninit(); MAX_LEVELS];
        let mut depth = 0;
        let mut loc = NonNull::from(self.root.as_mut().expect("non-empty tree"));
        let mut shift = self.root_shift;
        // SAFETY: as in `insert_compressed`; the recorded locations are
        // used bottom-up, each before its parent node changes.
        unsafe {
            let found = loop {
                let start = shift;
                let node = follow::<C>(&self.mem, loc.read());
                if C::COMPRESSION.lazy() && node.is_lazy() {
                    if lazy::key::<C::Key, SlotOf<C>>(node.addr()) != key {
                        return Ok(absent());
                    }
                    break Found::Lazy(loc);
                }
                if C::COMPRESSION.path() {
                    let word = prefix_word::<C::Key>(node.addr());
                    if !key.matches_word(word) {
                        return Ok(absent());
                    }
                    shift = word.word_shift();
                }
                path[depth].write((loc, node, shift, start));
                depth += 1;
                if shift == 0 {
                    if find_slot::<SlotOf<C>>(node, key.chunk(0)).is_none() {
                        return Ok(absent());
                    }
                    break Found::Value;
                }
                match find_slot::<RefOf<C>>(node, key.chunk(shift)) {
                    Some(child) => {
                        loc = child;
                        shift -= SPAN;
                    }
                    None => return Ok(absent()),
                }
            };
            // A removal may move, merge or collapse any node on the path.
            self.hint = InsertHint::NONE;
            if C::Memory::FALLIBLE {
                let value = matches!(found, Found::Value);
                Self::reserve_removal(&mut self.mem, &path[..depth], value)?;
            }
            let mem = &mut self.mem;
            let slot = match found {
                Found::Lazy(at) => {
                    let leaf = follow::<C>(mem, at.read());
                    let slot = lazy::slot::<SlotOf<C>>(leaf.addr()).read();
                    mem.free_node(Pools::<C>::cell(), leaf.addr());
                    if depth > 0 {
                        let (_, parent, parent_shift, _) = path[depth - 1].assume_init();
                        remove_entry::<RefOf<C>>(parent, key.chunk(parent_shift))
                            .expect("the lazy leaf is in its parent");
                    }
                    slot
                }
                Found::Value => {
                    let (_, node, _, _) = path[depth - 1].assume_init();
                    remove_entry::<SlotOf<C>>(node, key.chunk(0)).expect("found above")
                }
            };
            self.len -= 1;
            // Take the value before releasing the memory, which may hold
            // its leaf.
            let old = LayoutOf::<C>::take(slot, &mut self.mem);
            if self.len == 0 {
                self.root = None;
                // SAFETY: the last value is out; no node is used again.
                self.mem.release_all();
            } else {
                // Only the memory field is borrowed: the recorded
                // locations may point into the root field.
                Self::repair(&mut self.mem, key, &path[..depth]);
                self.fix_height();
            }
            Ok(old)
        }
    }

    /// Restores the canonical shape after the last node of `path` lost an
    /// entry (the tree still holds keys): frees emptied nodes, collapses a
    /// subtree left with one key into a lazy leaf, merges an inner node
    /// left with one child into the child, shrinks a sparse node.
    ///
    /// # Safety
    ///
    /// `path` holds the live nodes from the root down to the node that
    /// lost `key`'s entry, with their locations and shifts; what this
    /// allocates is reserved ([`Self::reserve_removal`]).
    unsafe fn repair(mem: &mut C::Memory, key: C::Key, path: &[MaybeUninit<PathStep<C>>]) {
        let mut level = path.len();
        // Whether the node at `level - 1` lost an entry (rather than had
        // its child collapse into a lazy leaf in place).
        let mut lost = true;
        // SAFETY: the caller's contract; each node is changed or freed
        // only after the levels below it are done, through its location.
        unsafe {
            while level > 0 {
                level -= 1;
                let (loc, node, shift, start) = path[level].assume_init();
                let count = node::count(node.addr());
                if count == 0 {
                    // A last-level node with one value (path compression
                    // alone); its parent loses it.
                    Self::free_node(mem, node, shift);
                    let (_, parent, parent_shift, _) = path[level - 1].assume_init();
                    remove_entry::<RefOf<C>>(parent, key.chunk(parent_shift))
                        .expect("the child is in its parent");
                    lost = true;
                    continue;
                }
                if count >= 2 {
                    if lost {
                        if shift == 0 {
                            Self::shrink_if_sparse::<SlotOf<C>>(mem, loc, node, shift);
                        } else {
                            Self::shrink_if_sparse::<RefOf<C>>(mem, loc, node, shift);
                        }
                    }
                    break;
                }
                // One entry left.
                if shift == 0 {
                    if !C::COMPRESSION.lazy() {
                        // One value under a prefix: canonical without lazy
                        // leaves, in the smallest class that holds it.
                        if lost {
                            Self::shrink_if_sparse::<SlotOf<C>>(mem, loc, node, shift);
                        }
                        break;
                    }
                    let e = entry_at::<SlotOf<C>>(node, 0).expect("one entry");
                    let raw = mem.alloc_node(Pools::<C>::cell());
                    lazy::init(raw, key.with_chunk(0, e.chunk), e.slot.read());
                    Self::free_node(mem, node, shift);
                    loc.write(stored(mem, NodePtr::lazy(raw)));
                    lost = false;
                    continue;
                }
                let e = entry_at::<RefOf<C>>(node, 0).expect("one entry");
                let child = follow::<C>(mem, e.slot.read());
                if child.is_lazy() || C::COMPRESSION.path() {
                    // A lazy leaf takes the place of the node holding only
                    // it; with path compression a node does too, its prefix
                    // word already right (and now skipping bytes).
                    Self::free_node(mem, node, shift);
                    loc.write(Self::link(mem, child, start));
                    if child.is_lazy() && !C::COMPRESSION.path() {
                        // Without path compression a single-child node
                        // above may now hold one key too.
                        lost = false;
                        continue;
                    }
                    break;
                }
                // Lazy expansion alone: a single-child node over a subtree
                // of several keys stays, shrunk if need be.
                if lost {
                    Self::shrink_if_sparse::<RefOf<C>>(mem, loc, node, shift);
                }
                break;
            }
        }
    }

    /// Without path compression, brings the height back to the largest
    /// key's after a removal: a lazy root's is its key's, a node root
    /// drops the levels that only lead to chunk 0.
    fn fix_height(&mut self) {
        if !C::COMPRESSION.path() {
            let root = follow::<C>(&self.mem, self.root.expect("non-empty tree"));
            if root.is_lazy() {
                // SAFETY: a live lazy leaf.
                let only = unsafe { lazy::key::<C::Key, SlotOf<C>>(root.addr()) };
                self.root_shift = only.root_shift();
            } else {
                self.drop_levels();
            }
        }
    }

    /// Reserves what [`Self::repair`] may allocate after removing a key
    /// below `path` (from its last node when `value`, else from a lazy leaf
    /// below it): the node the lowest node keeping two entries shrinks
    /// into, and a lazy leaf for a last-level node left with one value.
    ///
    /// # Safety
    ///
    /// `path` holds live nodes.
    unsafe fn reserve_removal(
        mem: &mut C::Memory,
        path: &[MaybeUninit<PathStep<C>>],
        value: bool,
    ) -> Result<(), MemError<C>> {
        let mut needs = Needs::NONE;
        if let (true, true, Some(last)) = (C::COMPRESSION.lazy(), value, path.last()) {
            // SAFETY: caller's contract.
            let (_, node, _, _) = unsafe { last.assume_init() };
            // SAFETY: as above.
            if unsafe { node::count(node.addr()) } == 2 {
                needs.add(Pools::<C>::cell(), 1);
            }
        }
        for frame in path.iter().rev() {
            // SAFETY: caller's contract.
            let (_, node, shift, _) = unsafe { frame.assume_init() };
            // SAFETY: as above.
            let (count, class) = unsafe { (node::count(node.addr()), node::class(node.addr())) };
            if count > 1 {
                let target = Self::shrink_target(count - 1, class);
                if target != class {
                    needs.add(Pools::<C>::at(target, shift), 1);
                }
                break;
            }
        }
        needs.reserve(mem)
    }
}

#[cfg(test)]
mod tests;
