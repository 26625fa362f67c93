//! The generic tree: lookup, insert, remove, clear.
//!
//! [`RawTree`] is the engine every `radix_tree!` type wraps. It owns a root
//! reference, the root's shift (height), the number of keys and a memory
//! back end. All algorithms are loops, never recursion: a descent is at most
//! `Key::BITS / 8` levels, and paths that must be revisited (for shrinking
//! after a delete) are kept in a fixed array of slot locations.
//!
//! Slots and the root field hold the back end's stored references
//! ([`Memory::Ref`]); the engine resolves one into a [`NodePtr`] each time
//! it follows it (see [`crate::mem`]), which for local memory is free.
//!
//! Where a node is replaced (it grew, shrank or was freed) the tree writes
//! the new reference through the *location* of the old one: the parent's
//! slot, or the root field. Locations are raw pointers derived from the node
//! allocations, so they stay valid while the parent node is unchanged, which
//! the bottom-up order of every repair guarantees.
//!
//! A modification first works out which nodes it will allocate and
//! reserves them ([`Memory::reserve_nodes`]); only then does it change the
//! tree. A back end that can run out (a shared area with a size limit) thus
//! fails an insert or a remove before anything changed. For local memory,
//! which cannot fail, the planning compiles away.

use core::borrow::Borrow;
use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr::NonNull;

use crate::config::{Config, MAX_POOLS, Pools, RefOf};
use crate::key::{Key, SPAN};
use crate::mem::{InfallibleMemory, LocalMemory, Memory, PoolSpec};
use crate::node::{
    self, Entry, Kind, MAX_CLASSES, Node256, NodeKind, dispatch, dispatch_kind, lazy,
};
use crate::ptr::NodePtr;
use crate::value::{MutableLayout, ValueLayout};

mod batch;
mod bulk;
mod clone;
mod compressed;
pub(crate) mod entry;
mod graft;
#[cfg(test)]
mod map_tests;
mod set_ops;
#[cfg(test)]
mod test_keys;
mod traits;

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
/// Why an allocation of configuration `C`'s memory failed.
pub(crate) type MemError<C> = <<C as Config>::Memory as Memory>::Error;

/// The most levels any key type needs (`u128`).
pub(crate) const MAX_LEVELS: usize = 16;

/// An adaptive radix tree, generic over its [`Config`].
///
/// Most users never name this type: `radix_tree!` wraps it in a named,
/// documented type with the same methods. It reads like
/// [`BTreeMap`](std::collections::BTreeMap): keys are passed and returned by
/// value, values by reference, and iteration is in ascending key order.
pub struct RawTree<C: Config> {
    root: Option<RefOf<C>>,
    /// Shift of the root node; the tree holds keys below `256 << root_shift`.
    root_shift: u32,
    len: usize,
    mem: C::Memory,
    /// Where the last insert's last-level node hangs, so that the next
    /// insert under the same node, as inserts in key order are, skips the
    /// descent. See [`RawTree::try_insert_with_old`] for when it is valid.
    hint: InsertHint<C>,
    _owns: PhantomData<Box<ValueOf<C>>>,
}

/// The parent slot of the last-level node that keys with `prefix` (their
/// last chunk cleared) reach: the insert-in-key-order fast path.
///
/// One compare tells a hit: a prefix has its last chunk clear, so the
/// `MAX` key, whose last chunk is all ones, never matches and marks "no
/// hint" (`slot` is then dangling and unused).
struct InsertHint<C: Config> {
    prefix: C::Key,
    slot: NonNull<RefOf<C>>,
}

impl<C: Config> InsertHint<C> {
    const NONE: Self = Self {
        prefix: C::Key::MAX,
        slot: NonNull::dangling(),
    };

    /// The hinted slot, if keys with `prefix` lead to it.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn get(&self, prefix: C::Key) -> Option<NonNull<RefOf<C>>> {
        (self.prefix == prefix).then_some(self.slot)
    }
}

/// Where a key's path ends above the last level in a tree that lacks the
/// key: the slot holding the node that has no child for the key's chunk,
/// that node, and its shift (above 0).
struct PathEnd<C: Config> {
    loc: NonNull<RefOf<C>>,
    node: NodePtr,
    shift: u32,
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

/// The node a stored reference names.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn resolve<M: Memory>(mem: &M, stored: M::Ref) -> NodePtr {
    NodePtr::from_tagged(mem.resolve(stored))
}

/// The node a stored reference of configuration `C` names, without the
/// skipped-bytes flag of a path-compressed tree (see [`crate::ptr`]): what
/// every use but the lookup's descent wants.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn follow<C: Config>(mem: &C::Memory, stored: RefOf<C>) -> NodePtr {
    unflagged::<C>(resolve(mem, stored))
}

/// `node` without the skipped-bytes flag, which only path-compressed trees
/// have (elsewhere bit 3 is part of the address).
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn unflagged<C: Config>(node: NodePtr) -> NodePtr {
    if C::COMPRESSION.path() {
        node.without_prefixed()
    } else {
        node
    }
}

/// Whether `node`, as a reference named it, carries the skipped-bytes flag.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn flagged<C: Config>(node: NodePtr) -> bool {
    C::COMPRESSION.path() && node.is_prefixed()
}

/// The stored reference to `node`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn stored<M: Memory>(mem: &M, node: NodePtr) -> M::Ref {
    mem.to_ref(node.tagged())
}

/// Finds `chunk` in any node.
///
/// # Safety
///
/// `node` is live and its slots are `S`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn find_slot<S>(node: NodePtr, chunk: u8) -> Option<NonNull<S>> {
    // SAFETY: forwarded contract.
    unsafe { dispatch!(node, K => K::find::<S>(node.addr_as(K::KIND), chunk)) }
}

/// The child of inner node `node` for `chunk`: [`find_slot`], a read and a
/// resolve, which node256 does in one load (see [`NodeKind::find_child`]).
///
/// # Safety
///
/// `node` is a live inner node of a tree on `mem`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn find_child<M: Memory>(mem: &M, node: NodePtr, chunk: u8) -> Option<NodePtr> {
    // The test for an absent child is inside each kind's arm, right after
    // its load: with one test after the arms meet, LLVM moves the loads
    // there too, and node256's one-instruction load becomes an address
    // computation, a jump and a load.
    // SAFETY: forwarded contract.
    unsafe {
        dispatch!(node, K => {
            let child = K::find_child::<M::Ref>(node.addr_as(K::KIND), chunk)?;
            Some(resolve(mem, child))
        })
    }
}

/// The last-level node on `key`'s path from `node`, if the path gets
/// there.
///
/// # Safety
///
/// `node` is a live node at `shift` of an uncompressed tree on `mem`
/// whose chunks above `shift` agree with `key`'s.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn descend_to_last_level<K: Key, M: Memory>(
    mem: &M,
    mut node: NodePtr,
    mut shift: u32,
    key: K,
) -> Option<NodePtr> {
    if shift > 0 {
        while shift > SPAN {
            // SAFETY: caller's contract: nodes reachable from `node` are
            // live, and above the last level their slots are child
            // references.
            node = unsafe { find_child(mem, node, key.chunk(shift))? };
            shift -= SPAN;
        }
        // SAFETY: as above.
        node = unsafe { find_child(mem, node, key.chunk(SPAN))? };
    }
    Some(node)
}

/// The value slot for `chunk` in last-level node `node`, with a single
/// kind dispatch: a node16 first prefetches its slot lines (the levels
/// above are few and stay cached, so only here do the prefetches pay), and
/// a node256 of a layout that never stores a null word reads its slot
/// alone (see [`NodeKind::find_nonnull`]).
///
/// # Safety
///
/// `node` is a live last-level node of a tree of configuration `C`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn find_value_slot<C: Config>(
    node: NodePtr,
    chunk: u8,
) -> Option<NonNull<SlotOf<C>>> {
    // SAFETY: forwarded contract.
    unsafe { search_value_slot::<C, true>(node, chunk) }
}

/// [`find_value_slot`], with the node16's slot prefetches where
/// `PREFETCH_SLOTS` (a caller whose node line is already cached prefetches
/// the one slot found instead).
///
/// # Safety
///
/// As for [`find_value_slot`].
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn search_value_slot<C: Config, const PREFETCH_SLOTS: bool>(
    node: NodePtr,
    chunk: u8,
) -> Option<NonNull<SlotOf<C>>> {
    // SAFETY: forwarded contract.
    unsafe {
        dispatch!(node, K => {
            let addr = node.addr_as(K::KIND);
            if PREFETCH_SLOTS {
                K::prefetch_slots::<SlotOf<C>>(addr);
            }
            if LayoutOf::<C>::NONNULL_SLOT {
                K::find_nonnull::<SlotOf<C>>(addr, chunk)
            } else {
                K::find::<SlotOf<C>>(addr, chunk)
            }
        })
    }
}

/// The first entry of `node` at or after walk position `pos`.
///
/// # Safety
///
/// `node` is live and its slots are `S`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn entry_at<S>(node: NodePtr, pos: u16) -> Option<Entry<S>> {
    // SAFETY: forwarded contract.
    unsafe { dispatch!(node, K => K::entry_at::<S>(node.addr_as(K::KIND), pos)) }
}

/// The walk position of the first entry of `node` with a chunk `>= chunk`.
///
/// # Safety
///
/// `node` is live.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn seek(node: NodePtr, chunk: u8) -> u16 {
    // SAFETY: forwarded contract.
    unsafe { dispatch!(node, K => K::seek(node.addr_as(K::KIND), chunk)) }
}

/// The last entry of `node` before walk position `end`.
///
/// # Safety
///
/// `node` is live and its slots are `S`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn entry_before<S>(node: NodePtr, end: u16) -> Option<Entry<S>> {
    // SAFETY: forwarded contract.
    unsafe { dispatch!(node, K => K::entry_before::<S>(node.addr_as(K::KIND), end)) }
}

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

/// The key bits fixed above `node`'s chunk, given those its path fixes:
/// with path compression all of them are in its prefix word.
///
/// # Safety
///
/// `node` is a live node of a tree of configuration `C`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn node_key<C: Config>(node: NodePtr, path_key: C::Key) -> C::Key {
    if C::COMPRESSION.path() {
        // SAFETY: the caller's contract; such nodes have a prefix word.
        let word = unsafe { node::prefix::prefix_word::<C::Key>(node.addr()) };
        word.clear_below(word.word_shift())
    } else {
        path_key
    }
}

/// The shift of the chunk `node` consumes, given the shift of the first
/// chunk below its parent's (`start`): the same without path compression,
/// the shift its prefix word records with it.
///
/// # Safety
///
/// `node` is live in a tree of configuration `C`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn node_shift<C: Config>(node: NodePtr, start: u32) -> u32 {
    if C::COMPRESSION.path() && !node.is_lazy() {
        // SAFETY: the caller's contract; path-compressed nodes have a
        // prefix word.
        unsafe { node::prefix::prefix_word::<C::Key>(node.addr()).word_shift() }
    } else {
        start
    }
}

/// The nodes one modification will allocate, per pool, so that they can be
/// reserved before the tree changes.
pub(crate) struct Needs {
    counts: [u8; MAX_POOLS],
}

impl Needs {
    pub(crate) const NONE: Self = Self {
        counts: [0; MAX_POOLS],
    };

    #[inline]
    pub(crate) fn add(&mut self, pool: usize, count: usize) {
        self.counts[pool] += count as u8;
    }

    /// Reserves every counted node.
    #[inline]
    pub(crate) fn reserve<M: Memory>(&self, mem: &mut M) -> Result<(), M::Error> {
        // Most inserts need no node at all: one compare says so.
        let (nodes, lazy) = self.counts.split_at(2 * MAX_CLASSES);
        if u128::from_ne_bytes(nodes.try_into().expect("16 node pools")) == 0 && lazy[0] == 0 {
            return Ok(());
        }
        for (pool, &count) in self.counts.iter().enumerate() {
            if count > 0 {
                mem.reserve_nodes(pool, count as usize)?;
            }
        }
        Ok(())
    }
}

impl<C: Config<Memory = LocalMemory>> RawTree<C> {
    /// An empty tree. It allocates nothing until the first insert.
    pub fn new() -> Self {
        Self::with_memory(LocalMemory::with_pools(&Self::pool_specs()))
    }

    /// An empty tree over a memory back end made by the caller from
    /// [`RawTree::pool_specs`], for example with a block limit or in
    /// insert-only mode.
    ///
    /// # Panics
    ///
    /// If the back end was built for other pools (another configuration's):
    /// its nodes could be too small. That is a bug in the caller.
    pub fn with_memory(mem: LocalMemory) -> Self {
        let (specs, count) = Pools::<C>::specs();
        assert!(
            mem.serves(&specs[..count]),
            "memory back end built for other node pools; build it from RawTree::pool_specs()"
        );
        // SAFETY: an empty tree over a fresh back end.
        unsafe { Self::from_parts(None, 0, 0, mem) }
    }
}

impl<C: Config<Memory = LocalMemory>> Default for RawTree<C> {
    fn default() -> Self {
        Self::new()
    }
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

    /// Removes `key`, returning its value (for [`Varlen`](crate::value::Varlen):
    /// whether it was present).
    ///
    /// Nodes left sparse shrink into smaller kinds at PostgreSQL's
    /// thresholds, empty nodes are freed, a root with a single child at
    /// chunk 0 gives way to that child, and removing the last key returns
    /// every slab block, so the tree is back to its empty size.
    #[inline]
    pub fn remove(&mut self, key: C::Key) -> OldOf<C> {
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

    /// A tree from its parts.
    ///
    /// # Safety
    ///
    /// `root` is `None` and `len` 0, or `root` refers to a live tree on
    /// `mem` of height `root_shift` holding `len` values.
    pub(crate) unsafe fn from_parts(
        root: Option<RefOf<C>>,
        root_shift: u32,
        len: usize,
        mem: C::Memory,
    ) -> Self {
        Self {
            root,
            root_shift,
            len,
            mem,
            hint: InsertHint::NONE,
            _owns: PhantomData,
        }
    }

    /// The root reference, its shift and the number of keys: what a shared
    /// tree publishes for other processes after each change.
    pub(crate) fn parts(&self) -> (Option<RefOf<C>>, u32, usize) {
        (self.root, self.root_shift, self.len)
    }

    /// The memory back end, mutably.
    pub(crate) fn memory_mut(&mut self) -> &mut C::Memory {
        &mut self.mem
    }

    /// The node pools this configuration needs, for building a back end.
    pub fn pool_specs() -> Vec<PoolSpec> {
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
    /// leaves (for a shared tree, its area's segments). An empty local tree
    /// holds none.
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

    /// The root node, as its stored reference names it (with a
    /// path-compressed tree's skipped-bytes flag), and its shift.
    pub(crate) fn root(&self) -> Option<(NodePtr, u32)> {
        self.root.map(|r| (resolve(&self.mem, r), self.root_shift))
    }

    /// The slot of `key`, if present.
    ///
    /// Each level reads its child with [`NodeKind::find_child`]: node256
    /// without a branch on whether it is there, so its one branch follows
    /// the load; node4 and node48 behind predicted branches, which cost
    /// fewer instructions and, for a present key, start the load as early
    /// (see the `node4` and `node48` modules); node16 at the index a run
    /// of consecutive chunks would give, behind a predicted compare, and
    /// else branch-free after its vector search (see `sorted::run_guess`).
    ///
    /// The level above the last is peeled out of the loop: its kind
    /// dispatch ([`dispatch!`], two bit tests) is a pair of branches of
    /// its own, which the CPU predicts apart from the levels above (the
    /// levels near the values are the ones whose kinds vary). Against the
    /// plain loop, when the dispatch was still one jump table, RT-5
    /// lookups took 0.67x (fanout 48: node4s above node48s) to 0.96x
    /// (fanout 16) the time, RT-1, RT-3 and RT-4 the same or less
    /// (`benches/RESULTS.md`), for 2 to 7 more instructions a lookup.
    /// Unrolling every level (a jump on the root's shift into
    /// straight-line code) measured the same on RT-5 but 1.10x on RT-1's
    /// three levels: entering the sequence costs more than a short loop.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn find(&self, key: C::Key) -> Option<NonNull<SlotOf<C>>> {
        if !C::COMPRESSION.is_none() {
            return self.find_compressed(key);
        }
        let node = self.last_level(key)?;
        // SAFETY: `node` is a live last-level node; its slots are the
        // layout's.
        unsafe { find_value_slot::<C>(node, key.chunk(0)) }
    }

    /// The last-level node on `key`'s path, if the path gets there.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn last_level(&self, key: C::Key) -> Option<NodePtr> {
        let node = follow::<C>(&self.mem, self.root?);
        if key.above(self.root_shift) {
            return None;
        }
        // SAFETY: `node` is the root, at the root's shift, and `key` is
        // not above it.
        unsafe { descend_to_last_level(&self.mem, node, self.root_shift, key) }
    }

    /// The value for `key`.
    #[inline]
    pub fn get(&self, key: C::Key) -> Option<&ValueOf<C>> {
        // SAFETY: the slot is live while `self` is borrowed.
        self.find(key)
            .map(|slot| unsafe { LayoutOf::<C>::get(slot, &self.mem) })
    }

    /// The value for `key`, mutably.
    #[inline]
    pub fn get_mut(&mut self, key: C::Key) -> Option<&mut ValueOf<C>>
    where
        C::Layout: MutableLayout,
    {
        // SAFETY: the slot is live and exclusively borrowed with `self`.
        self.find(key)
            .map(|slot| unsafe { LayoutOf::<C>::get_mut(slot, &self.mem) })
    }

    /// Whether `key` is present.
    #[inline]
    pub fn contains_key(&self, key: C::Key) -> bool {
        self.find(key).is_some()
    }

    /// Reserves `needs` and hands `slot_value` back, or drops it and
    /// reports why not. Callers only work out `needs` for a fallible back
    /// end, so that local trees do none of it.
    ///
    /// It borrows the memory field alone, so that locations held into the
    /// root field stay valid.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn reserve(
        mem: &mut C::Memory,
        needs: &Needs,
        slot_value: SlotOf<C>,
    ) -> Result<SlotOf<C>, MemError<C>> {
        if let Err(e) = needs.reserve(mem) {
            // SAFETY: the slot value was made by `into_slot` on this memory
            // and is consumed once.
            drop(unsafe { LayoutOf::<C>::take(slot_value, mem) });
            return Err(e);
        }
        Ok(slot_value)
    }

    /// Counts the nodes of a chain built by [`Self::chain`] from `shift`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn chain_needs(needs: &mut Needs, shift: u32) {
        needs.add(Pools::<C>::inner(0), (shift / SPAN) as usize);
        needs.add(Pools::<C>::leaf(0), 1);
    }

    /// Counts the node [`Self::add_child`] allocates if `node` is full.
    ///
    /// # Safety
    ///
    /// `node` is a live node at `shift`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) unsafe fn grow_needs(needs: &mut Needs, node: NodePtr, shift: u32) {
        // SAFETY: forwarded contract.
        let (count, class) = unsafe { (node::count(node.addr()), node::class(node.addr())) };
        if count == C::SIZE_CLASSES.capacity(class) {
            needs.add(Pools::<C>::at(class + 1, shift), 1);
        }
    }

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
    fn insert_first(
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
    fn raise_root(
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
    unsafe fn insert_below(
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
    unsafe fn insert_at_leaf(
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

    /// Reserves the node that removing one key below `path` shrinks into,
    /// if any: the lowest node on the path that keeps a child loses one,
    /// and every node below it is freed.
    ///
    /// # Safety
    ///
    /// `path` holds the live locations from the root to the last level.
    unsafe fn reserve_shrink(
        mem: &mut C::Memory,
        path: &[MaybeUninit<NonNull<RefOf<C>>>],
    ) -> Result<(), MemError<C>> {
        for (level, loc) in path.iter().enumerate().rev() {
            // SAFETY: caller's contract.
            let node = follow::<C>(mem, unsafe { loc.assume_init().read() });
            // SAFETY: as above.
            let (count, class) = unsafe { (node::count(node.addr()), node::class(node.addr())) };
            if count > 1 {
                let target = Self::shrink_target(count - 1, class);
                if target != class {
                    let shift = ((path.len() - 1 - level) as u32) * SPAN;
                    let mut needs = Needs::NONE;
                    needs.add(Pools::<C>::at(target, shift), 1);
                    return needs.reserve(mem);
                }
                return Ok(());
            }
        }
        Ok(())
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
        // Detach first: if a value's `Drop` panics, the rest leak rather
        // than being dropped twice, and the guard still returns every node
        // (the tree must not keep memory it can no longer reach).
        self.hint = InsertHint::NONE;
        let root = self.root.take();
        self.len = 0;
        let memory = ReleaseOnDrop(&mut self.mem);
        // Visit the slots only for values to drop or leaves the back end
        // would not free wholesale.
        let visit = LayoutOf::<C>::VISIT_ON_DROP
            && (LayoutOf::<C>::DROPS_VALUES || !memory.0.releases_leaves());
        if let (Some(root), true) = (root, visit) {
            let root = follow::<C>(memory.0, root);
            // SAFETY: the detached tree is live until the guard releases it;
            // each value slot is dropped exactly once.
            unsafe {
                walk_nodes::<C, _>(memory.0, root, self.root_shift, |mem, visit| {
                    let (node, shift) = (visit.node, visit.shift);
                    if node.is_lazy() {
                        LayoutOf::<C>::drop_slot(lazy::slot::<SlotOf<C>>(node.addr()), mem);
                    } else if shift == 0 {
                        let mut pos = 0;
                        while let Some(e) = entry_at::<SlotOf<C>>(node, pos) {
                            LayoutOf::<C>::drop_slot(e.slot, mem);
                            pos = e.next;
                        }
                    }
                });
            }
        }
    }

    /// Adds a level above the root: a new root whose chunk 0 is the old one.
    /// Its node is reserved.
    fn add_level(&mut self) {
        let old = self.root.expect("non-empty tree");
        let shift = self.root_shift + SPAN;
        let root = Self::new_node(&mut self.mem, 0, shift, C::Key::MIN);
        // SAFETY: the new root is empty and has room for one child.
        unsafe { insert_entry(root, 0, old) };
        self.root = Some(stored(&self.mem, root));
        self.root_shift = shift;
    }

    /// Removes root levels that only lead to chunk 0, so the height again
    /// matches the largest key.
    fn drop_levels(&mut self) {
        while self.root_shift > 0 {
            let root = follow::<C>(&self.mem, self.root.expect("non-empty tree"));
            // SAFETY: the root is live and inner; its only child is live.
            unsafe {
                if node::count(root.addr()) != 1 {
                    return;
                }
                match entry_at::<RefOf<C>>(root, 0) {
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

    /// A fresh, empty node of `class` for level `shift`, from a reserved
    /// pool. With path compression its prefix word is `key`'s at `shift`
    /// (`key` is any key on the node's path, or the prefix word itself).
    #[inline]
    pub(crate) fn new_node(mem: &mut C::Memory, class: usize, shift: u32, key: C::Key) -> NodePtr {
        let kind = C::SIZE_CLASSES.kind(class);
        let raw = mem.alloc_node(Pools::<C>::at(class, shift));
        // SAFETY: the pool's nodes have `PREFIX` bytes in front of the
        // node proper (none without path compression).
        let raw = unsafe { raw.byte_add(Pools::<C>::PREFIX) };
        // SAFETY: a fresh allocation of this class's size for this level;
        // an inner node's slots are child references, a last-level node's
        // are the layout's.
        unsafe {
            if C::COMPRESSION.path() {
                node::prefix::set_prefix_word(raw, key.prefix_word(shift));
            }
            dispatch_kind!(kind, K => K::init(raw, class));
            if kind == Kind::N256 {
                if shift > 0 {
                    Node256::clear_slots::<RefOf<C>>(raw);
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
    pub(crate) unsafe fn free_node(mem: &mut C::Memory, node: NodePtr, shift: u32) {
        // SAFETY: forwarded contract; the allocation starts `PREFIX` bytes
        // before the node.
        unsafe {
            let class = node::class(node.addr());
            let raw = node.addr().byte_sub(Pools::<C>::PREFIX);
            mem.free_node(Pools::<C>::at(class, shift), raw);
        }
    }

    /// The prefix word of `node` with path compression (any key otherwise):
    /// what [`Self::new_node`] takes to make a node in its place.
    ///
    /// # Safety
    ///
    /// `node` is a live node of this tree.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) unsafe fn word_of(node: NodePtr) -> C::Key {
        if C::COMPRESSION.path() {
            // SAFETY: the caller's contract.
            unsafe { node::prefix::prefix_word(node.addr()) }
        } else {
            C::Key::MIN
        }
    }

    /// A chain of single-child nodes from level `shift` down to the last
    /// level, holding `key`'s value; its nodes are reserved
    /// ([`Self::chain_needs`]).
    pub(crate) fn chain(mem: &mut C::Memory, key: C::Key, shift: u32, value: SlotOf<C>) -> NodePtr {
        let mut child = Self::new_node(mem, 0, 0, key);
        // SAFETY: fresh nodes are empty and have room for one entry.
        unsafe { insert_entry(child, key.chunk(0), value) };
        let mut level = SPAN;
        while level <= shift {
            let node = Self::new_node(mem, 0, level, key);
            // SAFETY: as above.
            unsafe { insert_entry(node, key.chunk(level), stored(mem, child)) };
            child = node;
            level += SPAN;
        }
        child
    }

    /// Adds `chunk` to the node at `loc`, growing it into the next size
    /// class first if it is full (from a reserved node).
    ///
    /// # Safety
    ///
    /// `loc` holds `node`, a live node at `shift` with slots `S` that lacks
    /// `chunk`.
    #[inline]
    pub(crate) unsafe fn add_child<S>(
        mem: &mut C::Memory,
        loc: NonNull<RefOf<C>>,
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
                Self::relink(mem, loc, node);
            }
            insert_entry(node, chunk, value);
        }
    }

    /// Writes `node` to `loc` in place of the node there (which it was
    /// converted from), keeping a path-compressed tree's skipped-bytes flag:
    /// same place, same shift.
    ///
    /// # Safety
    ///
    /// `loc` is a live location holding a node reference.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn relink(mem: &C::Memory, loc: NonNull<RefOf<C>>, node: NodePtr) {
        // SAFETY: the caller's contract.
        unsafe {
            let node = if C::COMPRESSION.path() {
                node.with_prefixed(resolve(mem, loc.read()).is_prefixed())
            } else {
                node
            };
            loc.write(stored(mem, node));
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

    /// Copies `old`'s entries into a new node of `class` and frees `old`.
    ///
    /// # Safety
    ///
    /// `old` is a live node at `shift` with slots `S` whose entries fit the
    /// new class; it is not used again.
    unsafe fn convert<S>(mem: &mut C::Memory, old: NodePtr, class: usize, shift: u32) -> NodePtr {
        // SAFETY: the caller's contract.
        let new = Self::new_node(mem, class, shift, unsafe { Self::word_of(old) });
        // One dispatch on each kind, not one per entry.
        // SAFETY: `new` is fresh with room for `old`'s entries (the caller's
        // contract); slots move bitwise, then `old` is freed without drops.
        unsafe {
            dispatch!(old, From => {
                let from = old.addr_as(From::KIND);
                dispatch!(new, To => {
                    node::move_entries::<From, To, S>(from, new.addr_as(To::KIND))
                })
            });
            Self::free_node(mem, old, shift);
        }
        new
    }
}

/// # Safety
///
/// `node` is live with slots `S`, lacks `chunk` and has room.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn insert_entry<S>(node: NodePtr, chunk: u8, value: S) {
    // SAFETY: forwarded contract.
    unsafe { dispatch!(node, K => K::insert::<S>(node.addr_as(K::KIND), chunk, value)) }
}

/// Removes `chunk` from `node`, returning its slot value (`None` if it was
/// absent).
///
/// # Safety
///
/// `node` is live with slots `S`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn remove_entry<S>(node: NodePtr, chunk: u8) -> Option<S> {
    // SAFETY: forwarded contract.
    unsafe { dispatch!(node, K => K::remove::<S>(node.addr_as(K::KIND), chunk)) }
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

impl<C: Config> Drop for RawTree<C> {
    fn drop(&mut self) {
        self.clear();
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
