//! [`SharedSpace`]: the [`Space`] of a concurrent tree in an area.
//!
//! A slot holds a tagged *offset* from the area's base, as the plain
//! shared tree's do (`memory.rs`), and resolving one is an add to the base
//! this process reserved, after a check that this process maps the
//! segment: one compare with the end of the segments it maps without a
//! gap ([`Resolver`]), and a look at the segment's flag only past it
//! (`AreaInner::ensure_mapped`). With the flag looked up at every node,
//! RT-C's reader-only rows read at 0.67-0.75x of the local tree's rate;
//! with the compare, at 0.81-0.90x (one session). Nodes and cells come from the tree's pools in its slot of
//! the control segment, one pool per node kind and one for cells, with the
//! plain tree's leaf classes for anything else; the pools are the plain
//! tree's, taken under the tree's allocation mutex ([`Header::alloc`]), a
//! process-shared lock that poisons the tree if its holder dies. Each
//! process takes pool objects in batches and keeps those it frees in an
//! [`ObjectCache`], so that writers in several processes seldom meet at
//! that mutex (`cache.rs` says what that costs).

use core::alloc::Layout;
use core::fmt;
use core::ptr::NonNull;
use core::sync::atomic::Ordering::Relaxed;

use std::sync::{Mutex, MutexGuard, PoisonError};

use super::area::Resolver;
use super::cache::ObjectCache;
use super::control::{LEAF_CLASSES, NODE_POOLS};
use super::epochs::{HANDLES, Header, SharedTable};
use super::lock::process_alive;
use super::memory::leaf_class;
use super::{Area, SharedMemory, ShmError};
use crate::concurrent::Padded;
use crate::concurrent::space::{Anchor, Space, sealed};
use crate::mem::{Memory, PoolSpec};

/// Where a concurrent tree in an [`Area`] keeps its nodes: the area, seen
/// from this process. Made by the tree's `create_in` and `attach`.
pub struct SharedSpace {
    area: Area,
    /// The tree's slot in the control segment, and the slot's generation.
    index: usize,
    generation: u32,
    header: NonNull<Header>,
    /// The header's area offset.
    header_offset: usize,
    /// This handle's entry in the header's handle list.
    handle: usize,
    /// The layouts the tree's node pools serve, by pool.
    pools: Vec<Layout>,
    /// This process's pid, as node locks record it.
    pid: u32,
    /// Objects this handle holds back from the pools, on lines of their
    /// own: writers lock the mutex on every allocation, and readers of
    /// the same handle load the fields around it on every node.
    cache: Padded<Mutex<ObjectCache>>,
    /// The area's base and segment flags, valid while `area` is held.
    resolver: Resolver,
}

// SAFETY: the header and the pools are atomics in shared memory, changed
// under the header's process-shared mutex; the area is kept mapped, and
// the resolver's flags alive, by the `Area` this value holds; the cache is
// behind a mutex.
unsafe impl Send for SharedSpace {}
// SAFETY: as for `Send`.
unsafe impl Sync for SharedSpace {}

impl SharedSpace {
    /// The space of the tree in slot `index`, whose header is at
    /// `header_offset`, registering a handle on it.
    ///
    /// # Safety
    ///
    /// The slot holds a live concurrent tree whose header is at
    /// `header_offset`, and whose node pools serve `pools` in order.
    pub(crate) unsafe fn open(
        area: &Area,
        index: usize,
        generation: u32,
        header_offset: usize,
        pools: Vec<Layout>,
    ) -> Result<Self, ShmError> {
        let inner = &area.inner;
        inner.ensure_mapped(header_offset);
        // SAFETY: the caller's contract; the area maps it (above).
        let header = unsafe { inner.base().byte_add(header_offset).cast::<Header>() };
        let pid = inner.pid();
        // SAFETY: as above.
        let handles = unsafe { &header.as_ref().handles };
        let handle = claim_handle(handles, pid).ok_or(ShmError::TooManyHandles { max: HANDLES })?;
        Ok(Self {
            area: area.clone(),
            index,
            generation,
            header,
            header_offset,
            handle,
            pools,
            pid,
            cache: Padded(Mutex::new(ObjectCache::new())),
            resolver: inner.resolver(),
        })
    }

    pub(crate) fn header(&self) -> &Header {
        // SAFETY: a live tree's header, mapped while `area` is held.
        unsafe { self.header.as_ref() }
    }

    pub(crate) fn area(&self) -> &Area {
        &self.area
    }

    pub(crate) fn index(&self) -> usize {
        self.index
    }

    pub(crate) fn generation(&self) -> u32 {
        self.generation
    }

    /// The pids of the other live processes with a handle on the tree
    /// (a process may appear once per handle).
    pub(crate) fn others(&self) -> Vec<u32> {
        self.header()
            .handles
            .iter()
            .enumerate()
            .filter(|&(at, _)| at != self.handle)
            .map(|(_, pid)| pid.load(Relaxed))
            .filter(|&pid| pid != 0 && process_alive(pid))
            .collect()
    }

    /// The tree's pools, with its allocation mutex held; `f`'s result.
    fn with_memory<R>(&self, f: impl FnOnce(&mut SharedMemory) -> R) -> Result<R, ShmError> {
        let _lock = self.header().alloc.lock(self.pid)?;
        let inner = &self.area.inner;
        // The pools' spans may lie in segments another process made since
        // this one last looked; their headers are written below.
        inner.sync()?;
        // SAFETY: the slot is this live tree's, the area outlives the
        // value, and the allocation mutex is the tree's write lock for
        // its pools.
        let mut memory = unsafe { SharedMemory::new(inner, inner.tree_slot(self.index)) };
        Ok(f(&mut memory))
    }

    fn pool_of(&self, layout: Layout) -> Option<usize> {
        self.pools.iter().position(|&l| l == layout)
    }

    /// The pool that serves `layout` and the size of its objects: a node
    /// pool, or a leaf class; `None` for a large or empty leaf.
    fn cached_pool(&self, layout: Layout) -> Option<(usize, usize)> {
        if let Some(pool) = self.pool_of(layout) {
            return Some((pool, layout.size()));
        }
        if layout.size() == 0 {
            return None;
        }
        leaf_class(layout).map(|class| (NODE_POOLS + class, LEAF_CLASSES[class]))
    }

    fn cache(&self) -> MutexGuard<'_, ObjectCache> {
        // The cache's state is whole between calls: a panic cannot leave
        // it half-changed.
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn at(&self, offset: usize) -> NonNull<u8> {
        let inner = &self.area.inner;
        // SAFETY: a pool object's offset, inside a segment this process
        // mapped when it took or freed the object.
        unsafe { inner.base().byte_add(offset) }
    }

    fn offset_of(&self, object: NonNull<u8>) -> usize {
        object.addr().get() - self.area.inner.base().addr().get()
    }

    /// Gives `objects` back to `pool`.
    fn give_back(&self, pool: usize, objects: &[usize]) {
        // A poisoned mutex leaves them allocated: a leak until the tree is
        // destroyed, never a fault.
        let _ = self.with_memory(|memory| {
            for &offset in objects {
                // SAFETY: the pool handed the object out, and the tree
                // holds it no more.
                unsafe { memory.free_node(pool, self.at(offset)) };
            }
        });
    }

    /// Gives back every span and block of the tree, the header included.
    ///
    /// # Safety
    ///
    /// No process will reach the tree again.
    pub(crate) unsafe fn release_all(&self) -> Result<(), ShmError> {
        // The spans go back whole, cached objects with them.
        self.cache().forget();
        self.with_memory(|memory| {
            // SAFETY: the caller's contract.
            unsafe { memory.release_all() }
        })?;
        self.area.inner.free_blocks([self.header_offset])
    }

    /// Forgets this handle's entry, for a destroyed tree.
    pub(crate) fn forget_handle(&mut self) {
        self.handle = usize::MAX;
    }
}

/// Claims a free entry of `handles` for `pid`, taking back those of dead
/// processes if none is free.
fn claim_handle(handles: &[core::sync::atomic::AtomicU32], pid: u32) -> Option<usize> {
    for pass in 0..2 {
        for (at, entry) in handles.iter().enumerate() {
            let holder = entry.load(Relaxed);
            let free = holder == 0 || (pass == 1 && !process_alive(holder));
            if free
                && entry
                    .compare_exchange(holder, pid, Relaxed, Relaxed)
                    .is_ok()
            {
                return Some(at);
            }
        }
    }
    None
}

impl Drop for SharedSpace {
    fn drop(&mut self) {
        let cached: Vec<_> = self.cache().drain().collect();
        for (pool, objects) in cached {
            self.give_back(pool, &objects);
        }
        if let Some(entry) = self.header_handles_entry() {
            entry.store(0, Relaxed);
        }
    }
}

impl SharedSpace {
    fn header_handles_entry(&self) -> Option<&core::sync::atomic::AtomicU32> {
        self.header().handles.get(self.handle)
    }
}

impl fmt::Debug for SharedSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedSpace")
            .field("area", &self.area.handle().to_string())
            .field("tree_slot", &self.index)
            .finish_non_exhaustive()
    }
}

impl sealed::Sealed for SharedSpace {}

// SAFETY: nodes and cells are disjoint objects of the tree's pools (or
// leaf classes), handed out once until freed, in segments every process
// maps at their offset; `word` subtracts and `resolve` adds the same
// page-aligned base, so the tag bits pass through, and the address
// `resolve` returns is derived from the reservation's base pointer.
unsafe impl Space for SharedSpace {
    type Error = ShmError;
    type Table = SharedTable;
    const OWNS_TREE: bool = false;

    #[inline(always)]
    fn anchor(&self) -> &Anchor {
        &self.header().anchor
    }

    fn table(&self) -> SharedTable {
        // SAFETY: the header is this live tree's, inside the area.
        unsafe { SharedTable::new(self.area.clone(), self.header) }
    }

    #[inline(always)]
    fn holder(&self) -> u32 {
        self.pid
    }

    fn alive(&self, pid: u32) -> bool {
        process_alive(pid)
    }

    fn owner_died(&self, pid: u32) -> ShmError {
        ShmError::OwnerDied { pid }
    }

    #[inline(always)]
    fn resolve(&self, word: *mut u8) -> *mut u8 {
        self.resolver.resolve(&self.area.inner, word)
    }

    #[inline(always)]
    fn word(&self, addr: *mut u8) -> *mut u8 {
        self.resolver.offset(addr)
    }

    fn alloc(&self, layout: Layout) -> Result<NonNull<u8>, ShmError> {
        let Some((pool, size)) = self.cached_pool(layout) else {
            return self.with_memory(|memory| memory.alloc_leaf(layout))?;
        };
        let mut cache = self.cache();
        if let Some(offset) = cache.take(pool) {
            return Ok(self.at(offset));
        }
        let batch = ObjectCache::batch(size);
        let taken = self.with_memory(|memory| {
            // A full area may still have one object.
            let count = match memory.reserve_nodes(pool, batch) {
                Ok(()) => batch,
                Err(_) => memory.reserve_nodes(pool, 1).map(|()| 1)?,
            };
            Ok::<_, ShmError>(
                (0..count)
                    .map(|_| self.offset_of(memory.alloc_node(pool)))
                    .collect::<Vec<_>>(),
            )
        })??;
        let (&first, rest) = taken
            .split_first()
            .expect("a batch takes one object or more");
        cache.fill(pool, rest.iter().rev().copied());
        Ok(self.at(first))
    }

    unsafe fn free(&self, addr: NonNull<u8>, layout: Layout) {
        let Some((pool, size)) = self.cached_pool(layout) else {
            // A poisoned mutex leaves the leaf allocated: a leak until the
            // tree is destroyed, never a fault.
            // SAFETY: the caller's contract: a large leaf of `layout`.
            let _ = self.with_memory(|memory| unsafe { memory.free_leaf(addr, layout) });
            return;
        };
        let full = self.cache().put(pool, self.offset_of(addr), size);
        if let Some(objects) = full {
            self.give_back(pool, &objects);
        }
    }

    fn bytes(&self) -> usize {
        self.area.memory_usage()
    }
}

/// The pool specs of a concurrent tree whose objects have `layouts`.
pub(crate) fn pool_specs(layouts: &[Layout]) -> Vec<PoolSpec> {
    layouts
        .iter()
        .map(|l| PoolSpec {
            size: l.size(),
            align: l.align(),
        })
        .collect()
}
