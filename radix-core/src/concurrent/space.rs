//! Where a concurrent tree's nodes and cells live, and what the words in
//! its slots are.
//!
//! The engine never calls the allocator, and never dereferences a word it
//! loaded from a slot, except through its [`Space`]:
//!
//! - [`Space::alloc`] and [`Space::free`] give and take the memory of
//!   nodes and cells. Allocation may fail (a shared area has a size
//!   limit), so every write builds what it needs before it publishes
//!   anything, and frees what it built when an allocation fails: a
//!   refused insert leaves the tree as it was.
//! - [`Space::word`] turns an address the space handed out into the word a
//!   slot stores, and [`Space::resolve`] turns a loaded word back into an
//!   address. Both keep the low tag bits (a node's kind).
//!
//! [`LocalSpace`] is the process heap, carved into slabs: words are the
//! addresses themselves, so both conversions are the identity and compile
//! to nothing, and allocation cannot fail. A space in shared memory stores
//! offsets instead, since every process maps an area at its own address
//! (`crate::shm`, "Pointers are offsets"); a slot then holds a
//! provenance-free word, as an embedded value already does, and resolving
//! it is one add to the base of this process's mapping.

use core::alloc::Layout;
use core::convert::Infallible;
use core::fmt;
use core::ptr::NonNull;

use std::sync::Mutex;

use super::Padded;
use super::lock::NodeLock;
use super::node_cache::BATCH;
#[cfg(not(any(loom, shuttle)))]
use super::node_cache::NodeCache;
#[cfg(not(any(loom, shuttle)))]
use super::reclaim::slots::PerThread;
use super::reclaim::{LocalTable, Table};
use super::sync::{AtomicPtr, AtomicU32};
use crate::mem::PoolSpec;
use crate::mem::magazine::Magazine;
use crate::mem::slab::Slab;

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// Where a concurrent tree keeps its nodes and cells. Sealed; the
/// engine's use of it is described in the `concurrent::space` module.
///
/// # Safety
///
/// [`alloc`](Space::alloc) returns memory valid for reads and writes of
/// the layout until it is given to [`free`](Space::free), never handed out
/// twice while live. [`resolve`](Space::resolve) inverts
/// [`word`](Space::word) on every address the space handed out, with the
/// three low tag bits kept, and the address it returns carries the
/// provenance of the allocation.
pub unsafe trait Space: sealed::Sealed + Send + Sync + 'static {
    /// Why an allocation failed; uninhabited when it cannot.
    type Error: fmt::Debug + fmt::Display;

    #[doc(hidden)]
    /// Where the tree's threads announce their epochs.
    type Table: Table;

    #[doc(hidden)]
    /// Whether the tree belongs to this handle, and goes when it drops.
    /// A tree in shared memory outlives the handles of the processes that
    /// use it, and goes only when it is destroyed.
    const OWNS_TREE: bool;

    #[doc(hidden)]
    /// The tree's root slot and root lock, which live with the nodes.
    fn anchor(&self) -> &Anchor;

    #[doc(hidden)]
    /// The reclamation table of the tree; called once per handle.
    fn table(&self) -> Self::Table;

    #[doc(hidden)]
    /// The pid node locks record for this process's writers, 0 where
    /// no holder can die without the whole tree going with it.
    #[inline(always)]
    fn holder(&self) -> u32 {
        0
    }

    #[doc(hidden)]
    /// Whether a recorded lock holder still runs.
    fn alive(&self, pid: u32) -> bool {
        let _ = pid;
        true
    }

    #[doc(hidden)]
    /// The error every write returns once process `pid` died holding a
    /// node lock. Only asked where [`holder`](Space::holder) is not 0.
    fn owner_died(&self, pid: u32) -> Self::Error;

    /// The address a node or cell word names, tag bits kept.
    fn resolve(&self, word: *mut u8) -> *mut u8;

    /// The word a slot stores for `addr`, an address (possibly tagged)
    /// this space handed out.
    fn word(&self, addr: *mut u8) -> *mut u8;

    /// Memory for one node or cell.
    ///
    /// # Errors
    ///
    /// The space has no room for it.
    fn alloc(&self, layout: Layout) -> Result<NonNull<u8>, Self::Error>;

    /// Gives back what [`alloc`](Space::alloc) returned.
    ///
    /// # Safety
    ///
    /// `addr` came from `alloc(layout)` on this space, no thread can
    /// reach it any more, and it is freed once.
    unsafe fn free(&self, addr: NonNull<u8>, layout: Layout);

    /// Bytes the space holds from the system for its tree: what
    /// `memory_usage` reports.
    fn bytes(&self) -> usize;
}

/// The process heap, carved into slabs: the space of every concurrent
/// tree with `memory: local`.
///
/// Each node kind (and the cell, for trees that have them) gets a slab of
/// its own, as in the plain engine (`mem/slab.rs`): nodes of one size sit
/// together in blocks, in the order the tree made them, whatever else
/// the program allocates meanwhile. From the global allocator directly,
/// the nodes of a tree loaded beside other allocations were scattered
/// among them: RT-2's random lookups took 39 to 45 ns against 20 to 23
/// from slabs (`benches/RESULTS.md`, "A space of slabs").
///
/// One mutex serves every slab. Readers never take it, and writers once
/// per 16 nodes they build or free: each thread keeps free nodes of the
/// space in a cache of its own (`node_cache.rs`), so that writers on
/// different cores do not meet at the mutex.
#[derive(Default)]
pub struct LocalSpace {
    anchor: Anchor,
    /// One slab per node layout, made on first use: at most six.
    slabs: Mutex<Vec<Slab>>,
    /// Each thread's free nodes of this space.
    #[cfg(not(any(loom, shuttle)))]
    caches: PerThread<NodeCache>,
}

/// A tree's root slot, its shortcut, its root lock, and its poison mark:
/// where every operation starts. All zero is an empty tree's anchor, so a
/// space in shared memory can place one in zeroed memory.
#[repr(C)]
pub struct Anchor {
    /// The root's word and the shortcut's, which every lookup loads, on a
    /// cache line of their own: stored to only when the root is replaced
    /// or the shortcut moves.
    entry: Padded<Entry>,
    /// The root slot's lock: the "parent lock" of the root node.
    pub(crate) root_lock: NodeLock,
    /// The pid of a writer that died holding a node lock; 0 while none
    /// has (`lock.rs`, "Holders that die").
    pub(crate) poisoned: AtomicU32,
}

/// The words a lookup starts from.
#[repr(C)]
struct Entry {
    /// The root's word, null when empty.
    root: AtomicPtr<u8>,
    /// Null, or the slot below a chain of single-child nodes where
    /// lookups of small keys start (`shortcut.rs`).
    shortcut: AtomicPtr<u8>,
}

impl Anchor {
    /// The root slot.
    #[inline(always)]
    pub(crate) fn root(&self) -> &AtomicPtr<u8> {
        &self.entry.0.root
    }

    /// The shortcut's word (`shortcut.rs`).
    #[inline(always)]
    pub(crate) fn shortcut(&self) -> &AtomicPtr<u8> {
        &self.entry.0.shortcut
    }
}

impl fmt::Debug for Anchor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Anchor").finish_non_exhaustive()
    }
}

impl Default for Anchor {
    fn default() -> Self {
        Self {
            entry: Padded(Entry {
                root: AtomicPtr::new(core::ptr::null_mut()),
                shortcut: AtomicPtr::new(core::ptr::null_mut()),
            }),
            root_lock: NodeLock::new(),
            poisoned: AtomicU32::new(0),
        }
    }
}

impl LocalSpace {
    /// The slabs; a panic while they were held left them consistent (no
    /// slab operation unwinds midway).
    fn slabs(&self) -> std::sync::MutexGuard<'_, Vec<Slab>> {
        self.slabs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The calling thread's free list of `layout` (padded), if its cache
    /// has one for it. Under the model checkers, whose threads share the
    /// OS thread that thread numbers go by, there are no caches.
    #[allow(clippy::mut_from_ref)]
    #[inline]
    fn cached(&self, layout: Layout) -> Option<&mut Magazine<NonNull<u8>>> {
        #[cfg(not(any(loom, shuttle)))]
        {
            // SAFETY: `mine` is the calling thread's own cache, and each
            // caller below drops the list before it asks again.
            unsafe { self.caches.mine().list(layout) }
        }
        #[cfg(any(loom, shuttle))]
        {
            let _ = layout;
            None
        }
    }
}

/// The slab of `layout` (padded), made on first use.
fn slab_of(slabs: &mut Vec<Slab>, layout: Layout) -> &mut Slab {
    let at = match slabs.iter().position(|slab| slab.node_layout() == layout) {
        Some(at) => at,
        None => {
            let spec = PoolSpec {
                size: layout.size(),
                align: layout.align(),
            };
            slabs.push(Slab::new(spec, usize::MAX / 2));
            slabs.len() - 1
        }
    };
    &mut slabs[at]
}

impl fmt::Debug for LocalSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalSpace")
            .field("bytes", &self.bytes())
            .finish()
    }
}

impl sealed::Sealed for LocalSpace {}

// SAFETY: the slabs own their blocks outright and keep no thread-bound
// state; they are reached only through the mutex.
unsafe impl Send for LocalSpace {}
// SAFETY: as for `Send`: `&LocalSpace` reaches the slabs only by locking.
unsafe impl Sync for LocalSpace {}

// SAFETY: each slab hands out distinct nodes of its layout until they are
// freed back to it; words are the addresses, with their provenance, so
// `resolve` and `word` are the identity.
unsafe impl Space for LocalSpace {
    type Error = Infallible;
    type Table = LocalTable;
    const OWNS_TREE: bool = true;

    #[inline(always)]
    fn anchor(&self) -> &Anchor {
        &self.anchor
    }

    fn table(&self) -> LocalTable {
        LocalTable::default()
    }

    fn owner_died(&self, pid: u32) -> Infallible {
        unreachable!("a local tree records no lock holder, yet pid {pid} died holding one")
    }

    #[inline(always)]
    fn resolve(&self, word: *mut u8) -> *mut u8 {
        word
    }

    #[inline(always)]
    fn word(&self, addr: *mut u8) -> *mut u8 {
        addr
    }

    fn alloc(&self, layout: Layout) -> Result<NonNull<u8>, Infallible> {
        let layout = layout.pad_to_align();
        let Some(list) = self.cached(layout) else {
            return Ok(slab_of(&mut self.slabs(), layout).alloc());
        };
        if let Some(node) = list.pop() {
            return Ok(node);
        }
        let mut slabs = self.slabs();
        let slab = slab_of(&mut slabs, layout);
        list.refill((1..BATCH).map(|_| slab.alloc()));
        Ok(slab.alloc())
    }

    unsafe fn free(&self, addr: NonNull<u8>, layout: Layout) {
        let layout = layout.pad_to_align();
        let Some(list) = self.cached(layout) else {
            // SAFETY: the caller's contract: this space's slab of `layout`
            // handed it out.
            unsafe { slab_of(&mut self.slabs(), layout).free(addr) };
            return;
        };
        if let Some(oldest) = list.push(addr, BATCH) {
            let mut slabs = self.slabs();
            let slab = slab_of(&mut slabs, layout);
            for node in oldest {
                // SAFETY: the cache holds only nodes this space's slab of
                // `layout` handed out, free.
                unsafe { slab.free(node) };
            }
        }
    }

    fn bytes(&self) -> usize {
        self.slabs().iter().map(Slab::bytes).sum()
    }
}

/// Takes the value out of a result that cannot fail.
#[inline(always)]
pub(crate) fn infallible<T>(result: Result<T, Infallible>) -> T {
    match result {
        Ok(value) => value,
        Err(never) => match never {},
    }
}

/// A heap space with a budget of allocations, for the tests of refused
/// writes: it fails once the budget is spent, and counts what is live.
#[cfg(test)]
pub(crate) mod budget {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The space; see the module docs. Its counts outlive the tree.
    #[derive(Debug, Default, Clone)]
    pub(crate) struct BudgetSpace(pub(crate) Arc<Counts>);

    /// A [`BudgetSpace`]'s counts.
    #[derive(Debug, Default)]
    pub(crate) struct Counts {
        /// Allocations still allowed.
        pub(crate) left: AtomicUsize,
        /// Allocations not yet freed.
        pub(crate) live: AtomicUsize,
        /// Their bytes.
        bytes: AtomicUsize,
        anchor: Anchor,
    }

    impl core::ops::Deref for BudgetSpace {
        type Target = Counts;
        fn deref(&self) -> &Counts {
            &self.0
        }
    }

    /// The refusal.
    #[derive(Debug)]
    pub(crate) struct Spent;

    impl fmt::Display for Spent {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("allocation budget spent")
        }
    }

    impl sealed::Sealed for BudgetSpace {}

    // SAFETY: the global allocator's contract; words are addresses.
    unsafe impl Space for BudgetSpace {
        type Error = Spent;
        type Table = LocalTable;
        const OWNS_TREE: bool = true;

        fn anchor(&self) -> &Anchor {
            &self.0.anchor
        }

        fn table(&self) -> LocalTable {
            LocalTable::default()
        }

        fn owner_died(&self, pid: u32) -> Spent {
            unreachable!("no holder recorded, yet {pid} died")
        }

        fn resolve(&self, word: *mut u8) -> *mut u8 {
            word
        }

        fn word(&self, addr: *mut u8) -> *mut u8 {
            addr
        }

        fn alloc(&self, layout: Layout) -> Result<NonNull<u8>, Spent> {
            // The tests drive a budgeted tree from one thread.
            let left = self.left.load(Ordering::Relaxed);
            if left == 0 {
                return Err(Spent);
            }
            self.left.store(left - 1, Ordering::Relaxed);
            self.live.fetch_add(1, Ordering::Relaxed);
            self.bytes.fetch_add(layout.size(), Ordering::Relaxed);
            // SAFETY: nodes and cells are never empty.
            let addr = unsafe { std::alloc::alloc(layout) };
            Ok(NonNull::new(addr).unwrap_or_else(|| std::alloc::handle_alloc_error(layout)))
        }

        unsafe fn free(&self, addr: NonNull<u8>, layout: Layout) {
            self.live.fetch_sub(1, Ordering::Relaxed);
            self.bytes.fetch_sub(layout.size(), Ordering::Relaxed);
            // SAFETY: the caller's contract, and `alloc` took it from the
            // global allocator with this layout.
            unsafe { std::alloc::dealloc(addr.as_ptr(), layout) }
        }

        fn bytes(&self) -> usize {
            self.bytes.load(Ordering::Relaxed)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_words_are_addresses_and_bytes_are_the_slabs() {
        let space = LocalSpace::default();
        let layout = Layout::new::<[u64; 4]>();
        let addr = infallible(space.alloc(layout));
        let tagged = addr.as_ptr().map_addr(|a| a | 0b101);
        let word = space.word(tagged);
        assert_eq!(word, tagged);
        assert_eq!(space.resolve(word), tagged);
        let held = space.bytes();
        assert!(held >= layout.size(), "{held}");
        let other = infallible(space.alloc(Layout::new::<[u64; 9]>()));
        assert!(space.bytes() > held, "a second layout gets its own slab");
        // SAFETY: allocated above with these layouts, never shared.
        unsafe {
            space.free(addr, layout);
            space.free(other, Layout::new::<[u64; 9]>());
        }
    }
}
