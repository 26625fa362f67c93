//! Concurrent trees: readers that never wait, beside writers that lock
//! only the nodes they change.
//!
//! [`ConcurrentTree`] is an ordered map that any number of threads read
//! and write through `&self`. It follows ROWEX ("read-optimised write
//! exclusion", Leis, Scheibner, Kemper and Neumann, *The ART of Practical
//! Synchronization*, DaMoN 2016), the scheme PostgreSQL's `radixtree.h`
//! names as its own next step:
//!
//! - **Readers take no lock and write nothing shared.** A lookup pins the
//!   current reclamation epoch (`reclaim/`: a store to the calling
//!   thread's own slot, and another to unpin) and walks down with plain atomic loads. No version
//!   is validated, so no read ever fails and retries. This is what sets it
//!   apart from optimistic lock coupling (`congee`), whose readers re-read
//!   node versions and whose unsynchronised reads of node memory are data
//!   races in Rust's memory model.
//! - **Writers change a live node only by single atomic stores** of words
//!   a reader can take in either state: a value replaced in its slot, a
//!   child appended to a node and then published by its live bit or index
//!   byte, a child's pointer swapped for its replacement. The layouts that
//!   make every such store safe are in `node.rs`.
//! - **Every structural change is a replacement.** Growing, shrinking or
//!   compacting a node, splitting a compressed path, and collapsing a node
//!   left with one child build the new node off to the side, publish it
//!   with one release store into the parent's slot, mark the old node
//!   obsolete, and retire it. A reader already inside the old node finishes
//!   on a consistent snapshot of it.
//! - **Writers lock what they change**, parent before child (`lock.rs`
//!   explains why this cannot deadlock). Adding a child to a node with
//!   room, replacing a value or removing a key locks one node; a
//!   replacement locks the node and its parent. Writers below different
//!   children of a node do not meet.
//!
//! - **Memory comes from a [`Space`]**, and only through it: nodes and
//!   cells are allocated and freed there, and every word loaded from a
//!   slot is resolved by it (`space.rs`). [`LocalSpace`], the process
//!   heap, stores addresses and cannot fail; a space in shared memory
//!   stores offsets and has a size limit. Since a write builds everything
//!   before its one publishing store, a refused allocation frees what was
//!   built and leaves the tree as it was.
//!
//! The tree keeps the plain engine's shape: 8-bit chunks, the default
//! configuration's node sizes, a root whose height follows the largest
//! key, and the configuration's compression (lazy leaves as immutable
//! cells, prefixes as immutable absolute prefix words, so that a path
//! split never changes the node below it). Values are embedded in slot
//! words or kept in cells (`layout.rs`). One addition: where a far key
//! lifted an uncompressed root over a chain of single-child nodes,
//! lookups of the keys below the chain start at its bottom slot, which
//! the tree's anchor keeps (`shortcut.rs`).
//!
//! # Guarantees
//!
//! Single-key operations (`get`, `insert`, `remove`,
//! `update_or_insert`, ...) are linearizable: each takes effect at one
//! instant between its call and its return (the unit tests check recorded
//! histories of threads against a sequential model, and catch a bug
//! planted in the engine; loom and shuttle check the node protocols and
//! whole-tree schedules, `tests/loom.rs` and `tests/shuttle.rs`). Iteration under
//! concurrent writes returns keys in ascending order (descending from the
//! back), each at most once, and every key that is present for the whole
//! iteration; a key inserted or removed meanwhile may or may not appear.
//! The iterator reads one last-level node at a time and seeks from the
//! last key it returned, so it never holds a pin between items.
//!
//! # Cost
//!
//! Pinning and unpinning are plain stores to the thread's own slot (which
//! a thread finds with one thread-local load while it keeps to one tree),
//! with the fence they need moved to writers (`membarrier`, once per thousand
//! retired nodes; see `reclaim/`). [`get`](ConcurrentTree::get) and
//! [`contains_key`](ConcurrentTree::contains_key), which run no caller code
//! while pinned, skip even the pin's nesting count: a single-call lookup
//! of RT-1's tree takes 110 instructions against the plain tree's 82
//! (6 of them the shortcut's test, `shortcut.rs`).
//! A lookup per call runs within about
//! 15 % of the same lookups under one [`ReadPin`] (random lookups in a
//! 10 MB tree, `benches/RESULTS.md`, "Concurrent trees"); a
//! [`get_each`](ConcurrentTree::get_each) batch is faster still, since it
//! overlaps its lookups' cache misses.

mod iter;
mod layout;
mod lock;
mod node;
mod node_cache;
mod read;
mod reclaim;
mod remove;
mod shortcut;
pub(crate) mod space;
mod sync;
mod write;

use core::fmt;
use core::marker::PhantomData;

pub use iter::Iter;
pub use layout::{AtomicWord, ConcurrentLayout};
pub use read::ReadPin;
#[cfg(test)]
pub(crate) use reclaim::ACTIVE;
// What the shared-memory epoch table and space build on.
#[cfg(all(feature = "shm", target_os = "linux"))]
pub(crate) use reclaim::{Slot, Slots, Table, lags};
#[cfg(all(feature = "shm", target_os = "linux"))]
pub(crate) use space::Anchor;
pub use space::{LocalSpace, Space};

use crate::config::Config;
use crate::key::Key;
use layout::{CellReclaim, SlotReclaim};
use lock::{LockGuard, Locked, NodeLock};
use node::{Entries, Kind, NodeReclaim, NodeRef};
use reclaim::{Pin, Reclaimer};
use sync::{AtomicPtr, Ordering};

/// The value type of configuration `C`: what lookups lend.
pub type ValueOf<C> = <<C as Config>::Layout as ConcurrentLayout>::Value;
/// What `insert` takes in configuration `C`: the value, or a reference to
/// a varlen value.
pub type InputOf<'a, C> = <<C as Config>::Layout as ConcurrentLayout>::Input<'a>;
/// What `insert` and `remove` return in configuration `C` for the value
/// they replaced: `Option<V>`, or whether there was one for varlen values.
pub type OldOf<C> = <<C as Config>::Layout as ConcurrentLayout>::Old;

/// An ordered map that threads share: lock-free reads, per-node write
/// locks. Declare one with `concurrency: rowex` in
/// [`radix_tree!`](crate::radix_tree):
///
/// ```
/// use std::thread;
///
/// radix_core::radix_tree! {
///     /// Row ids to versions, shared by the worker threads.
///     pub struct Versions { key: u64, value: u64, concurrency: rowex }
/// }
///
/// let versions = Versions::new();
/// thread::scope(|s| {
///     for worker in 0..4u64 {
///         let versions = &versions;
///         s.spawn(move || {
///             for row in 0..1000 {
///                 versions.insert(worker << 32 | row, row);
///             }
///         });
///     }
///     s.spawn(|| {
///         // Readers never wait, whatever the writers are doing.
///         let _ = versions.get(7);
///     });
/// });
/// assert_eq!(versions.get(3 << 32 | 999), Some(999));
/// assert_eq!(versions.iter().count(), 4000);
/// ```
///
/// Values come back by value (`get` copies an embedded value; `get_with`
/// lends any value to a closure), never by a reference that could outlive
/// the memory it points into. The module docs describe the protocol and
/// what iteration promises under concurrent writes.
///
/// `S` is the [`Space`] its nodes live in: the process heap
/// ([`LocalSpace`]) unless said otherwise.
pub struct ConcurrentTree<C: Config, S: Space = LocalSpace>
where
    C::Layout: ConcurrentLayout,
{
    pub(crate) reclaimer: Reclaimer<S::Table>,
    /// Where the root, the nodes and the cells live.
    pub(crate) space: S,
    marker: PhantomData<fn() -> C>,
}

/// A value alone on its cache line (two lines, for the adjacent-line
/// prefetcher of x86), so that stores to its neighbours do not evict it
/// from readers' caches.
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct Padded<T>(pub(crate) T);

impl<T> core::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

// SAFETY: the tree owns its nodes and values; every shared word is an
// atomic, writers serialise through node locks, and retired memory is
// freed only after every reader has left (`reclaim`). Values cross
// threads by clone, so they must be `Send + Sync`, which
// `ConcurrentLayout::Value` requires; so is every `Space`.
unsafe impl<C: Config, S: Space> Send for ConcurrentTree<C, S> where C::Layout: ConcurrentLayout {}
// SAFETY: as for `Send`.
unsafe impl<C: Config, S: Space> Sync for ConcurrentTree<C, S> where C::Layout: ConcurrentLayout {}

/// The outcome of one attempt at a write: done, or start over from the
/// root because a node changed under it.
enum Attempt<T> {
    Done(T),
    Restart,
}

/// Where a node's pointer lives: the root slot, or a parent's slot for a
/// chunk.
#[derive(Clone, Copy)]
enum Parent<'a, K> {
    Root,
    Node(NodeRef<'a, K>, u8),
}

impl<C: Config, S: Space> ConcurrentTree<C, S>
where
    C::Layout: ConcurrentLayout,
{
    const LAZY: bool = C::COMPRESSION.lazy();
    const PATH: bool = C::COMPRESSION.path();
    const EMBEDS: bool = <C::Layout as ConcurrentLayout>::EMBEDS;

    /// An empty tree in `space`.
    pub(crate) fn in_space(space: S) -> Self {
        const {
            assert!(
                !Self::LAZY || <C::Layout as ConcurrentLayout>::LAZY_LEAVES,
                "this value layout has no lazy leaves: compress paths only"
            )
        };
        Self {
            reclaimer: Reclaimer::new(space.table()),
            space,
            marker: PhantomData,
        }
    }

    /// The layouts of the objects the tree allocates most: its node
    /// kinds, and its cells if it has any (lazy leaves, or leaf-layout
    /// values). Varlen values' leaves vary in size.
    #[cfg(all(feature = "shm", target_os = "linux"))]
    pub(crate) fn object_layouts() -> Vec<core::alloc::Layout> {
        let mut layouts = node::layouts::<C::Key>().to_vec();
        if Self::LAZY || !Self::EMBEDS {
            layouts.extend(<C::Layout as ConcurrentLayout>::cell_layout::<C::Key>());
        }
        layouts
    }

    /// The root slot.
    #[inline(always)]
    fn root(&self) -> &AtomicPtr<u8> {
        self.space.anchor().root()
    }

    /// Waits for `lock`, as this process's writer. `None` if its node
    /// left the tree; an error if a holder died, which poisons the tree.
    fn lock_node<'a>(&self, lock: &'a NodeLock) -> Result<Option<LockGuard<'a>>, S::Error> {
        match lock.lock(self.space.holder(), |pid| self.space.alive(pid)) {
            Locked::Held(guard) => Ok(Some(guard)),
            Locked::Obsolete => Ok(None),
            Locked::OwnerDied(pid) => {
                self.space.anchor().poisoned.store(pid, Ordering::Relaxed);
                Err(self.space.owner_died(pid))
            }
        }
    }

    /// Fails if a writer died holding a lock of this tree.
    #[inline(always)]
    fn check_poison(&self) -> Result<(), S::Error> {
        match self.space.anchor().poisoned.load(Ordering::Relaxed) {
            0 => Ok(()),
            pid => Err(self.space.owner_died(pid)),
        }
    }

    /// Bytes the tree holds from the system for its nodes and value
    /// cells: its space's slab blocks, as the plain tree counts them
    /// (nodes retired and not yet freed included, since they are held).
    pub fn memory_usage(&self) -> usize {
        self.space.bytes()
    }

    /// Whether the tree holds no key.
    pub fn is_empty(&self) -> bool {
        let (mut lo, mut hi) = (core::ops::Bound::Unbounded, core::ops::Bound::Unbounded);
        !iter::step(self, &mut lo, &mut hi, iter::End::Front, |_, _| {})
    }

    /// The number of keys, counted by a walk: linear in the tree's size,
    /// and under concurrent writes a count of what [`iter`](Self::iter)
    /// returns. (A shared counter would be one cache line every writer
    /// stores to, which the writers of disjoint subtrees would fight over.)
    pub fn len(&self) -> usize {
        let mut len = 0;
        self.for_each_in(.., |_, _| len += 1);
        len
    }

    /// Whether the last-level slots of a node at `shift` hold embedded
    /// values, whose presence the node records apart from the slot.
    #[inline(always)]
    fn values_at(shift: u32) -> bool {
        Self::EMBEDS && shift == 0
    }

    /// What a write returns when it replaced nothing.
    #[inline(always)]
    fn absent() -> OldOf<C> {
        <C::Layout as ConcurrentLayout>::absent()
    }

    /// What a write returns for the value it replaced.
    #[inline(always)]
    fn old_of(value: &ValueOf<C>) -> OldOf<C> {
        <C::Layout as ConcurrentLayout>::old(value)
    }

    /// The slot a parent holds a child in.
    fn parent_slot<'a>(&'a self, parent: Parent<'a, C::Key>) -> Option<&'a AtomicPtr<u8>> {
        match parent {
            Parent::Root => Some(self.root()),
            Parent::Node(node, chunk) => node.slot(chunk),
        }
    }

    /// Locks `parent` and checks that its slot still holds `child`.
    /// `None` if it does not, or the parent left the tree.
    #[allow(clippy::type_complexity)]
    fn lock_parent<'a>(
        &'a self,
        parent: Parent<'a, C::Key>,
        child: *mut u8,
    ) -> Result<Option<(LockGuard<'a>, &'a AtomicPtr<u8>)>, S::Error> {
        let lock = match parent {
            Parent::Root => &self.space.anchor().root_lock,
            Parent::Node(node, _) => &node.header().lock,
        };
        let Some(guard) = self.lock_node(lock)? else {
            return Ok(None);
        };
        let Some(slot) = self.parent_slot(parent) else {
            return Ok(None);
        };
        Ok((slot.load(Ordering::Relaxed) == child).then_some((guard, slot)))
    }

    /// The node a word loaded under a pin names.
    ///
    /// # Safety
    ///
    /// `word` is a node of this tree of `kind`, loaded under a pin that
    /// outlives `'p` (or owned by the caller).
    #[inline(always)]
    unsafe fn node_at<'p>(&self, word: *mut u8, kind: Kind) -> NodeRef<'p, C::Key> {
        // SAFETY: the caller's contract; the space resolves its own words.
        unsafe { NodeRef::new(self.space.resolve(word), kind) }
    }

    /// The key of a lazy leaf loaded under a pin.
    ///
    /// # Safety
    ///
    /// As [`node_at`](Self::node_at), for a lazy leaf.
    #[inline(always)]
    unsafe fn cell_key(&self, word: *mut u8) -> C::Key {
        // SAFETY: the caller's contract.
        unsafe { <C::Layout as ConcurrentLayout>::cell_key::<C::Key, S>(&self.space, word) }
    }

    /// Calls `f` on the value of a lazy leaf loaded under a pin.
    ///
    /// # Safety
    ///
    /// As [`cell_key`](Self::cell_key).
    #[inline(always)]
    unsafe fn with_cell<R>(&self, word: *mut u8, f: impl FnOnce(&ValueOf<C>) -> R) -> R {
        // SAFETY: the caller's contract.
        unsafe { <C::Layout as ConcurrentLayout>::with_cell::<C::Key, S, R>(&self.space, word, f) }
    }

    /// Calls `f` on the value in a last-level slot word.
    ///
    /// # Safety
    ///
    /// `word` is a last-level slot word of this tree, loaded under a pin
    /// (or under the node's lock, or owned).
    #[inline(always)]
    unsafe fn with_value<R>(&self, word: *mut u8, f: impl FnOnce(&ValueOf<C>) -> R) -> R {
        // SAFETY: the caller's contract.
        unsafe { <C::Layout as ConcurrentLayout>::with_slot::<C::Key, S, R>(&self.space, word, f) }
    }

    /// A new node of `kind` holding `entries`.
    fn new_node(
        &self,
        kind: Kind,
        prefix: C::Key,
        entries: &Entries,
        shift: u32,
    ) -> Result<*mut u8, S::Error> {
        node::build(&self.space, kind, prefix, entries, Self::values_at(shift))
    }

    /// A node of one child.
    fn new_node1(&self, key: C::Key, shift: u32, child: *mut u8) -> Result<*mut u8, S::Error> {
        let mut entries = Entries::new();
        entries.push(key.chunk(shift), child);
        self.new_node(Kind::N4, key.prefix_word(shift), &entries, shift)
    }

    /// A new lazy leaf.
    fn new_cell(&self, key: C::Key, value: InputOf<'_, C>) -> Result<*mut u8, S::Error> {
        <C::Layout as ConcurrentLayout>::new_cell(&self.space, key, value)
    }

    /// A last-level slot word for `value`.
    fn new_slot(&self, key: C::Key, value: InputOf<'_, C>) -> Result<*mut u8, S::Error> {
        <C::Layout as ConcurrentLayout>::into_slot(&self.space, key, value)
    }

    /// The reclaimer's handle on this tree's space, for freeing what it
    /// retired.
    fn space_context(&self) -> *const () {
        core::ptr::from_ref(&self.space).cast()
    }

    /// After a write the space refused: frees what this thread retired
    /// that no reader can still see, so that a retry may find the room.
    /// Writes run inside no other write of the thread, so its list of
    /// retired objects is free to take.
    #[cfg(all(feature = "shm", target_os = "linux"))]
    pub(crate) fn collect_retired(&self) {
        // SAFETY: every object this tree's reclaimer holds was retired
        // with this context; the caller's write has returned, so no
        // reference to the thread's open list is live.
        unsafe { self.reclaimer.collect(self.space_context()) }
    }

    /// Retires an unlinked node.
    ///
    /// # Safety
    ///
    /// `word` is a node this tree built, now unreachable from the root,
    /// retired once.
    unsafe fn retire_node(&self, pin: &Pin<'_, S::Table>, word: *mut u8) {
        // SAFETY: the caller's contract; every object this reclaimer holds
        // is this tree's, freed through this tree's space.
        unsafe { pin.retire::<NodeReclaim<C::Key, S>>(word, self.space_context()) };
    }

    /// Retires an unlinked lazy leaf.
    ///
    /// # Safety
    ///
    /// As [`retire_node`](Self::retire_node), for a lazy leaf.
    unsafe fn retire_cell(&self, pin: &Pin<'_, S::Table>, word: *mut u8) {
        // SAFETY: as in `retire_node`.
        unsafe { pin.retire::<CellReclaim<C::Layout, C::Key, S>>(word, self.space_context()) };
    }

    /// Retires a last-level slot word a write unlinked, if it holds
    /// memory.
    ///
    /// # Safety
    ///
    /// As [`retire_node`](Self::retire_node), for a slot word.
    unsafe fn retire_slot(&self, pin: &Pin<'_, S::Table>, word: *mut u8) {
        if !Self::EMBEDS {
            // SAFETY: as in `retire_node`.
            unsafe { pin.retire::<SlotReclaim<C::Layout, C::Key, S>>(word, self.space_context()) };
        }
    }

    /// Frees a subtree no thread can reach: one that was never published
    /// (a write that failed part way), or the whole tree as it drops.
    /// `word` is a child of a node (or the root), or null.
    fn discard(&self, pin: &Pin<'_, S::Table>, word: *mut u8) {
        if word.is_null() {
            return;
        }
        let Some(kind) = Kind::of(word) else {
            // SAFETY: a lazy leaf of this tree, reachable once, owned.
            unsafe { self.free_cell(word) };
            return;
        };
        // SAFETY: a node of this tree, owned by the caller.
        let node = unsafe { self.node_at(word, kind) };
        let shift = node.header().shift();
        let mut entries = Entries::new();
        node.entries(pin, &mut entries, Self::values_at(shift));
        for (_, child) in entries.iter() {
            if shift > 0 {
                self.discard(pin, child);
            } else {
                // SAFETY: a last-level slot word, owned.
                unsafe { self.free_slot(child) };
            }
        }
        // SAFETY: reachable once, owned, its children freed above.
        unsafe { self.free_node(word) };
    }

    /// Frees an unpublished child of a node at `parent_shift`: a value's
    /// slot word at the last level, else a subtree.
    fn discard_child(&self, word: *mut u8, parent_shift: u32) {
        if parent_shift > 0 {
            self.discard(&self.reclaimer.pin(), word);
        } else {
            // SAFETY: a last-level slot word, never published.
            unsafe { self.free_slot(word) };
        }
    }

    /// Frees one node no thread can reach (not its children).
    ///
    /// # Safety
    ///
    /// `word` is a node this tree built, unreachable, freed once.
    unsafe fn free_node(&self, word: *mut u8) {
        // SAFETY: the caller's contract.
        unsafe { node::free::<C::Key, S>(&self.space, word) };
    }

    /// Frees one lazy leaf no thread can reach.
    ///
    /// # Safety
    ///
    /// `word` is a lazy leaf this tree made, unreachable, freed once.
    unsafe fn free_cell(&self, word: *mut u8) {
        // SAFETY: the caller's contract.
        unsafe { <C::Layout as ConcurrentLayout>::free_cell::<C::Key, S>(&self.space, word) };
    }

    /// Frees what a last-level slot word no thread can reach holds.
    ///
    /// # Safety
    ///
    /// `word` is a last-level slot word this tree made, unreachable,
    /// freed once.
    unsafe fn free_slot(&self, word: *mut u8) {
        // SAFETY: the caller's contract.
        unsafe { <C::Layout as ConcurrentLayout>::free_slot::<C::Key, S>(&self.space, word) };
    }
}

impl<C: Config> ConcurrentTree<C>
where
    C::Layout: ConcurrentLayout,
{
    /// An empty tree.
    pub fn new() -> Self {
        Self::in_space(LocalSpace::default())
    }
}

impl<C: Config> Default for ConcurrentTree<C>
where
    C::Layout: ConcurrentLayout,
{
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Config, S: Space> Drop for ConcurrentTree<C, S>
where
    C::Layout: ConcurrentLayout,
{
    fn drop(&mut self) {
        let context = self.space_context();
        if !S::OWNS_TREE {
            // Other processes may still read the tree: free only what
            // has expired, and leave the rest to the tree's destruction.
            // SAFETY: every object the reclaimer holds is this tree's,
            // retired with this context.
            unsafe { self.reclaimer.flush(context) };
            return;
        }
        // `&mut self`: no thread can pin the tree any more, so what is
        // reachable and what was retired can both go.
        {
            let pin = self.reclaimer.pin();
            let root = self.root().load(Ordering::Relaxed);
            self.discard(&pin, root);
        }
        // SAFETY: every object the reclaimer holds is this tree's, freed
        // through this space, and unreachable (above).
        unsafe { self.reclaimer.free_all(context) };
    }
}

impl<C: Config, S: Space> fmt::Debug for ConcurrentTree<C, S>
where
    C::Layout: ConcurrentLayout,
    ValueOf<C>: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        self.for_each_in(.., |key, value| {
            map.entry(&key, &value);
        });
        map.finish()
    }
}

impl<'i, C: Config> Extend<(C::Key, InputOf<'i, C>)> for ConcurrentTree<C>
where
    C::Layout: ConcurrentLayout,
{
    fn extend<I: IntoIterator<Item = (C::Key, InputOf<'i, C>)>>(&mut self, items: I) {
        for (key, value) in items {
            self.insert(key, value);
        }
    }
}

impl<'i, C: Config> FromIterator<(C::Key, InputOf<'i, C>)> for ConcurrentTree<C>
where
    C::Layout: ConcurrentLayout,
{
    fn from_iter<I: IntoIterator<Item = (C::Key, InputOf<'i, C>)>>(items: I) -> Self {
        let mut tree = Self::new();
        tree.extend(items);
        tree
    }
}

#[cfg(test)]
mod tests;
