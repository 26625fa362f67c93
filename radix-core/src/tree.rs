//! The generic tree: lookup, insert, remove, clear.
//!
//! [`RawTree`] is the engine every `radix_tree!` type wraps. It owns a root
//! pointer, the root's shift (height), the number of keys and a memory back
//! end. All algorithms are loops, never recursion: a descent is at most
//! `Key::BITS / 8` levels, and paths that must be revisited (for shrinking
//! after a delete) are kept in a fixed array of slot locations.
//!
//! Where a node is replaced (it grew, shrank or was freed) the tree writes
//! the new pointer through the *location* of the old one: the parent's slot,
//! or the root field. Locations are raw pointers derived from the node
//! allocations, so they stay valid while the parent node is unchanged, which
//! the bottom-up order of every repair guarantees.

use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr::NonNull;

use crate::config::{Config, Pools};
use crate::key::{Key, SPAN};
use crate::mem::Memory;
use crate::node::{self, dispatch, Entry, Kind, Node256, NodeKind, MAX_CLASSES};
use crate::ptr::NodePtr;
use crate::value::{MutableLayout, ValueLayout};

/// The layout of configuration `C`.
pub(crate) type LayoutOf<C> = <C as Config>::Layout;
/// The last-level slot type of configuration `C`.
pub(crate) type SlotOf<C> = <LayoutOf<C> as ValueLayout>::Slot;
/// The value type of configuration `C`.
pub type ValueOf<C> = <LayoutOf<C> as ValueLayout>::Value;
/// What `insert` takes for configuration `C`.
pub type InputOf<'a, C> = <LayoutOf<C> as ValueLayout>::Input<'a>;
/// What `insert` and `remove` return for configuration `C`.
pub type OldOf<C> = <LayoutOf<C> as ValueLayout>::Old;

/// The most levels any key type needs (`u128`).
pub(crate) const MAX_LEVELS: usize = 16;

/// An adaptive radix tree, generic over its [`Config`].
///
/// Most users never name this type: `radix_tree!` wraps it in a named,
/// documented type with the same methods. It reads like
/// [`BTreeMap`](std::collections::BTreeMap): keys are passed and returned by
/// value, values by reference, and iteration is in ascending key order.
pub struct RawTree<C: Config> {
    root: Option<NodePtr>,
    /// Shift of the root node; the tree holds keys below `256 << root_shift`.
    root_shift: u32,
    len: usize,
    mem: C::Memory,
    _owns: PhantomData<Box<ValueOf<C>>>,
}

// SAFETY: the tree owns its nodes and values exactly as a `Box<V>` would;
// nodes are reached only through `&self`/`&mut self`.
unsafe impl<C: Config> Send for RawTree<C>
where
    ValueOf<C>: Send,
    C::Memory: Send,
{
}

// SAFETY: `&RawTree` only reads nodes and hands out `&V`.
unsafe impl<C: Config> Sync for RawTree<C>
where
    ValueOf<C>: Sync,
    C::Memory: Sync,
{
}

/// Finds `chunk` in any node.
///
/// # Safety
///
/// `node` is live and its slots are `S`.
#[inline(always)]
pub(crate) unsafe fn find_slot<S>(node: NodePtr, chunk: u8) -> Option<NonNull<S>> {
    // SAFETY: forwarded contract.
    unsafe { dispatch!(node.kind(), K => K::find::<S>(node.addr(), chunk)) }
}

/// The child of inner node `node` for `chunk`: [`find_slot`] and a read,
/// which node256 does in one load (see [`NodeKind::find_child`]).
///
/// # Safety
///
/// `node` is a live inner node.
#[inline(always)]
pub(crate) unsafe fn find_child(node: NodePtr, chunk: u8) -> Option<NodePtr> {
    // SAFETY: forwarded contract.
    unsafe { dispatch!(node.kind(), K => K::find_child(node.addr(), chunk)) }
}

/// The first entry of `node` at or after walk position `pos`.
///
/// # Safety
///
/// `node` is live and its slots are `S`.
#[inline(always)]
pub(crate) unsafe fn entry_at<S>(node: NodePtr, pos: u16) -> Option<Entry<S>> {
    // SAFETY: forwarded contract.
    unsafe { dispatch!(node.kind(), K => K::entry_at::<S>(node.addr(), pos)) }
}

/// The walk position of the first entry of `node` with a chunk `>= chunk`.
///
/// # Safety
///
/// `node` is live.
#[inline(always)]
pub(crate) unsafe fn seek(node: NodePtr, chunk: u8) -> u16 {
    // SAFETY: forwarded contract.
    unsafe { dispatch!(node.kind(), K => K::seek(node.addr(), chunk)) }
}

/// The last entry of `node` before walk position `end`.
///
/// # Safety
///
/// `node` is live and its slots are `S`.
#[inline(always)]
pub(crate) unsafe fn entry_before<S>(node: NodePtr, end: u16) -> Option<Entry<S>> {
    // SAFETY: forwarded contract.
    unsafe { dispatch!(node.kind(), K => K::entry_before::<S>(node.addr(), end)) }
}

/// Visits every node below and including `root`, parents before children,
/// with the node's shift. Uses an explicit stack, never recursion.
///
/// # Safety
///
/// `root` is a live tree of height `root_shift` whose inner slots are
/// `NodePtr`; `visit` must not free or change the nodes.
pub(crate) unsafe fn walk_nodes(
    root: NodePtr,
    root_shift: u32,
    mut visit: impl FnMut(NodePtr, u32),
) {
    let mut stack = [(root, 0u16); MAX_LEVELS];
    let mut depth = 1;
    visit(root, root_shift);
    while depth > 0 {
        let (node, pos) = stack[depth - 1];
        let shift = root_shift - SPAN * (depth as u32 - 1);
        // SAFETY: inner nodes' slots are child pointers; the caller promises
        // the tree is live.
        match unsafe { entry_at::<NodePtr>(node, pos) } {
            Some(e) if shift > 0 => {
                stack[depth - 1].1 = e.next;
                // SAFETY: the slot holds a live child pointer.
                let child = unsafe { e.slot.read() };
                visit(child, shift - SPAN);
                if shift > SPAN {
                    stack[depth] = (child, 0);
                    depth += 1;
                }
            }
            _ => depth -= 1,
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

    /// An empty tree. It allocates nothing until the first insert.
    pub fn new() -> Self {
        let (specs, count) = Pools::<C>::specs();
        Self::with_memory(C::Memory::with_pools(&specs[..count]))
    }

    /// An empty tree over a memory back end made by the caller from
    /// [`RawTree::pool_specs`], for example with a block limit or in
    /// insert-only mode.
    ///
    /// # Panics
    ///
    /// If the back end was built for other pools (another configuration's):
    /// its nodes could be too small. That is a bug in the caller.
    pub fn with_memory(mem: C::Memory) -> Self {
        let (specs, count) = Pools::<C>::specs();
        assert!(
            mem.serves(&specs[..count]),
            "memory back end built for other node pools; build it from RawTree::pool_specs()"
        );
        Self {
            root: None,
            root_shift: 0,
            len: 0,
            mem,
            _owns: PhantomData,
        }
    }

    /// The node pools this configuration needs, for building a back end.
    pub fn pool_specs() -> Vec<crate::mem::PoolSpec> {
        let (specs, count) = Pools::<C>::specs();
        specs[..count].to_vec()
    }

    /// Number of keys.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the tree holds no keys.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes the tree holds from its memory back end: slab blocks and
    /// leaves. An empty tree holds none.
    #[inline]
    pub fn memory_usage(&self) -> usize {
        self.mem.bytes_held()
    }

    /// The memory back end.
    pub fn memory(&self) -> &C::Memory {
        &self.mem
    }

    /// Levels of nodes from the root to the values (0 when empty).
    pub fn height(&self) -> usize {
        if self.root.is_some() {
            (self.root_shift / SPAN) as usize + 1
        } else {
            0
        }
    }

    pub(crate) fn root(&self) -> Option<(NodePtr, u32)> {
        self.root.map(|r| (r, self.root_shift))
    }

    #[inline(always)]
    fn find(&self, key: C::Key) -> Option<NonNull<SlotOf<C>>> {
        let mut node = self.root?;
        let mut shift = self.root_shift;
        if key.above(shift) {
            return None;
        }
        // SAFETY: nodes reachable from the root are live; slots above the
        // last level are child pointers, at the last level value slots.
        unsafe {
            while shift > 0 {
                node = find_child(node, key.chunk(shift))?;
                shift -= SPAN;
            }
            // Only at the last level, which holds most of a large tree's
            // nodes: the levels above are few and stay cached, and there
            // the prefetch instructions would be pure cost.
            dispatch!(node.kind(), K => K::prefetch_slots::<SlotOf<C>>(node.addr()));
            if LayoutOf::<C>::NONNULL_SLOT {
                dispatch!(node.kind(), K => K::find_nonnull::<SlotOf<C>>(node.addr(), key.chunk(0)))
            } else {
                find_slot::<SlotOf<C>>(node, key.chunk(0))
            }
        }
    }

    /// The value for `key`.
    #[inline]
    pub fn get(&self, key: C::Key) -> Option<&ValueOf<C>> {
        // SAFETY: the slot is live while `self` is borrowed.
        self.find(key)
            .map(|slot| unsafe { LayoutOf::<C>::get(slot) })
    }

    /// The value for `key`, mutably.
    #[inline]
    pub fn get_mut(&mut self, key: C::Key) -> Option<&mut ValueOf<C>>
    where
        C::Layout: MutableLayout,
    {
        // SAFETY: the slot is live and exclusively borrowed with `self`.
        self.find(key)
            .map(|slot| unsafe { LayoutOf::<C>::get_mut(slot) })
    }

    /// Whether `key` is present.
    #[inline]
    pub fn contains_key(&self, key: C::Key) -> bool {
        self.find(key).is_some()
    }

    /// Stores `value` under `key`, returning the previous value (for
    /// [`Varlen`](crate::value::Varlen): whether there was one).
    pub fn insert(&mut self, key: C::Key, value: InputOf<'_, C>) -> OldOf<C> {
        // Build the slot first: after this point nothing can panic until the
        // tree is consistent again.
        let slot_value = LayoutOf::<C>::into_slot(value, &mut self.mem);
        let Some(_) = self.root else {
            let shift = key.root_shift();
            self.root = Some(Self::chain(&mut self.mem, key, shift, slot_value));
            self.root_shift = shift;
            self.len = 1;
            return LayoutOf::<C>::absent();
        };
        while key.above(self.root_shift) {
            self.add_level();
        }
        let mem = &mut self.mem;
        let mut loc = NonNull::from(self.root.as_mut().expect("non-empty tree"));
        let mut shift = self.root_shift;
        // SAFETY: `loc` always points at a live slot holding a live node
        // pointer (the root field, or a child slot of a live node whose
        // parent is not changed while `loc` is used).
        unsafe {
            loop {
                let node = loc.read();
                let chunk = key.chunk(shift);
                if shift == 0 {
                    if let Some(slot) = find_slot::<SlotOf<C>>(node, chunk) {
                        let old = slot.read();
                        slot.write(slot_value);
                        return LayoutOf::<C>::take(old, mem);
                    }
                    Self::add_child(mem, loc, node, chunk, slot_value, 0);
                    break;
                }
                match find_slot::<NodePtr>(node, chunk) {
                    Some(child) => {
                        loc = child;
                        shift -= SPAN;
                    }
                    None => {
                        let child = Self::chain(mem, key, shift - SPAN, slot_value);
                        Self::add_child(mem, loc, node, chunk, child, shift);
                        break;
                    }
                }
            }
        }
        self.len += 1;
        LayoutOf::<C>::absent()
    }

    /// Removes `key`, returning its value (for [`Varlen`](crate::value::Varlen):
    /// whether it was present).
    ///
    /// Nodes left sparse shrink into smaller kinds at PostgreSQL's
    /// thresholds, empty nodes are freed, a root with a single child at
    /// chunk 0 gives way to that child, and removing the last key returns
    /// every slab block, so the tree is back to its empty size.
    pub fn remove(&mut self, key: C::Key) -> OldOf<C> {
        let absent = LayoutOf::<C>::absent;
        let Some(_) = self.root else {
            return absent();
        };
        if key.above(self.root_shift) {
            return absent();
        }
        let mem = &mut self.mem;
        let mut path = [MaybeUninit::<NonNull<NodePtr>>::uninit(); MAX_LEVELS];
        let mut loc = NonNull::from(self.root.as_mut().expect("non-empty tree"));
        let mut shift = self.root_shift;
        let mut depth = 0;
        // SAFETY: as in `insert`; locations in `path` are visited bottom-up,
        // so each is used before its parent node changes.
        let slot = unsafe {
            loop {
                path[depth].write(loc);
                if shift == 0 {
                    break;
                }
                match find_slot::<NodePtr>(loc.read(), key.chunk(shift)) {
                    Some(child) => {
                        loc = child;
                        shift -= SPAN;
                        depth += 1;
                    }
                    None => return absent(),
                }
            }
            let leaf_node = loc.read();
            if find_slot::<SlotOf<C>>(leaf_node, key.chunk(0)).is_none() {
                return absent();
            }
            let slot = remove_entry::<SlotOf<C>>(leaf_node, key.chunk(0));
            let mut level = depth;
            let mut shift = 0;
            loop {
                let loc = path[level].assume_init();
                let node = loc.read();
                if node::count(node.addr()) > 0 {
                    if shift == 0 {
                        Self::shrink_if_sparse::<SlotOf<C>>(mem, loc, node, shift);
                    } else {
                        Self::shrink_if_sparse::<NodePtr>(mem, loc, node, shift);
                    }
                    break;
                }
                Self::free_node(mem, node, shift);
                if level == 0 {
                    break;
                }
                level -= 1;
                shift += SPAN;
                let parent = path[level].assume_init().read();
                remove_entry::<NodePtr>(parent, key.chunk(shift));
            }
            slot
        };
        self.len -= 1;
        // SAFETY: the slot value was moved out of its node and is consumed once.
        let old = unsafe { LayoutOf::<C>::take(slot, &mut self.mem) };
        if self.len == 0 {
            self.root = None;
            // SAFETY: every node has been freed; none is used again.
            unsafe { self.mem.release_all() };
        } else {
            self.drop_levels();
        }
        old
    }

    /// Removes every key, dropping the values and returning every slab block
    /// and leaf to the allocator.
    pub fn clear(&mut self) {
        // Detach first: if a value's `Drop` panics, the rest leak rather
        // than being dropped twice.
        let root = self.root.take();
        self.len = 0;
        if let (Some(root), true) = (root, LayoutOf::<C>::VISIT_ON_DROP) {
            let mem = &mut self.mem;
            // SAFETY: the detached tree is live until `release_all`; each
            // value slot is dropped exactly once.
            unsafe {
                walk_nodes(root, self.root_shift, |node, shift| {
                    if shift == 0 {
                        let mut pos = 0;
                        while let Some(e) = entry_at::<SlotOf<C>>(node, pos) {
                            LayoutOf::<C>::drop_slot(e.slot, mem);
                            pos = e.next;
                        }
                    }
                });
            }
        }
        // SAFETY: the tree is detached; no node is used again.
        unsafe { self.mem.release_all() };
    }

    /// Adds a level above the root: a new root whose chunk 0 is the old one.
    fn add_level(&mut self) {
        let old = self.root.expect("non-empty tree");
        let shift = self.root_shift + SPAN;
        let root = Self::new_node(&mut self.mem, 0, shift);
        // SAFETY: the new root is empty and has room for one child.
        unsafe { insert_entry(root, 0, old) };
        self.root = Some(root);
        self.root_shift = shift;
    }

    /// Removes root levels that only lead to chunk 0, so the height again
    /// matches the largest key.
    fn drop_levels(&mut self) {
        while self.root_shift > 0 {
            let root = self.root.expect("non-empty tree");
            // SAFETY: the root is live and inner; its only child is live.
            unsafe {
                if node::count(root.addr()) != 1 {
                    return;
                }
                match entry_at::<NodePtr>(root, 0) {
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

    /// A fresh, empty node of `class` for level `shift`.
    #[inline]
    fn new_node(mem: &mut C::Memory, class: usize, shift: u32) -> NodePtr {
        let kind = C::SIZE_CLASSES.kind(class);
        let raw = mem.alloc_node(Pools::<C>::at(class, shift));
        // SAFETY: a fresh allocation of this class's size for this level;
        // an inner node's slots are child pointers, a last-level node's
        // are the layout's.
        unsafe {
            dispatch!(kind, K => K::init(raw, class));
            if kind == Kind::N256 {
                if shift > 0 {
                    Node256::clear_slots::<NodePtr>(raw);
                } else if LayoutOf::<C>::NONNULL_SLOT {
                    const {
                        assert!(
                            !LayoutOf::<C>::NONNULL_SLOT
                                || size_of::<SlotOf<C>>() == size_of::<*const u8>(),
                            "a NONNULL_SLOT layout's slot must be one pointer word"
                        )
                    };
                    Node256::clear_slots::<SlotOf<C>>(raw);
                }
            }
        }
        NodePtr::new(raw, kind)
    }

    /// # Safety
    ///
    /// `node` is a live node at `shift` whose slots have been moved out or
    /// dropped, and it is not used again.
    #[inline]
    unsafe fn free_node(mem: &mut C::Memory, node: NodePtr, shift: u32) {
        // SAFETY: forwarded contract.
        unsafe {
            let class = node::class(node.addr());
            mem.free_node(Pools::<C>::at(class, shift), node.addr());
        }
    }

    /// A chain of single-child nodes from level `shift` down to the last
    /// level, holding `key`'s value.
    fn chain(mem: &mut C::Memory, key: C::Key, shift: u32, value: SlotOf<C>) -> NodePtr {
        let mut child = Self::new_node(mem, 0, 0);
        // SAFETY: fresh nodes are empty and have room for one entry.
        unsafe { insert_entry(child, key.chunk(0), value) };
        let mut level = SPAN;
        while level <= shift {
            let node = Self::new_node(mem, 0, level);
            // SAFETY: as above.
            unsafe { insert_entry(node, key.chunk(level), child) };
            child = node;
            level += SPAN;
        }
        child
    }

    /// Adds `chunk` to the node at `loc`, growing it into the next size
    /// class first if it is full.
    ///
    /// # Safety
    ///
    /// `loc` holds `node`, a live node at `shift` with slots `S` that lacks
    /// `chunk`.
    #[inline]
    unsafe fn add_child<S>(
        mem: &mut C::Memory,
        loc: NonNull<NodePtr>,
        mut node: NodePtr,
        chunk: u8,
        value: S,
        shift: u32,
    ) {
        // SAFETY: forwarded contract; the largest class (256) is never full
        // when a chunk is absent, so `class + 1` exists when growing.
        unsafe {
            let class = node::class(node.addr());
            if node::count(node.addr()) == C::SIZE_CLASSES.capacity(class) {
                node = Self::convert::<S>(mem, node, class + 1, shift);
                loc.write(node);
            }
            insert_entry(node, chunk, value);
        }
    }

    /// Moves the node at `loc` into a smaller class when it has become
    /// sparse enough.
    ///
    /// With unusual class lists a shrink target can itself be at or below
    /// its own threshold (classes 33 and 32 of different kinds, say), so the
    /// node moves straight to the last class in that chain: every node then
    /// stays above its class's threshold, which `verify` checks.
    ///
    /// # Safety
    ///
    /// As for `add_child`.
    #[inline]
    unsafe fn shrink_if_sparse<S>(
        mem: &mut C::Memory,
        loc: NonNull<NodePtr>,
        node: NodePtr,
        shift: u32,
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            let count = node::count(node.addr());
            let class = node::class(node.addr());
            let mut target = class;
            while let Some((smaller, threshold)) = Self::SHRINK[target] {
                if count > threshold {
                    break;
                }
                target = smaller;
            }
            if target != class {
                loc.write(Self::convert::<S>(mem, node, target, shift));
            }
        }
    }

    /// Copies `old`'s entries into a new node of `class` and frees `old`.
    ///
    /// # Safety
    ///
    /// `old` is a live node at `shift` with slots `S` whose entries fit the
    /// new class; it is not used again.
    unsafe fn convert<S>(mem: &mut C::Memory, old: NodePtr, class: usize, shift: u32) -> NodePtr {
        let new = Self::new_node(mem, class, shift);
        // SAFETY: entries come out in ascending chunk order, so every
        // insert appends; slot values are moved bitwise, then `old` is freed
        // without dropping them.
        unsafe {
            let mut pos = 0;
            while let Some(e) = entry_at::<S>(old, pos) {
                insert_entry(new, e.chunk, e.slot.read());
                pos = e.next;
            }
            Self::free_node(mem, old, shift);
        }
        new
    }
}

/// # Safety
///
/// `node` is live with slots `S`, lacks `chunk` and has room.
#[inline(always)]
unsafe fn insert_entry<S>(node: NodePtr, chunk: u8, value: S) {
    // SAFETY: forwarded contract.
    unsafe { dispatch!(node.kind(), K => K::insert::<S>(node.addr(), chunk, value)) }
}

/// # Safety
///
/// `node` is live with slots `S` and holds `chunk`.
#[inline(always)]
unsafe fn remove_entry<S>(node: NodePtr, chunk: u8) -> S {
    // SAFETY: forwarded contract.
    unsafe { dispatch!(node.kind(), K => K::remove::<S>(node.addr(), chunk)) }
}

impl<C: Config> Drop for RawTree<C> {
    fn drop(&mut self) {
        self.clear();
    }
}

impl<C: Config> Default for RawTree<C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Config> fmt::Debug for RawTree<C>
where
    ValueOf<C>: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}
