//! The project's structures in shared memory (`project-shared`): a
//! `radix_tree!` map declared `memory: shared` (`u64 -> u64`, default
//! layout and size classes, in a POSIX shared-memory [`Area`] of default
//! options) and [`SharedTidStore`] with the local store's budget.
//!
//! A shared structure is only read or written under its process-shared
//! lock, through a guard. The adapters take the guard once per batch of
//! [`BATCH`] operations where the workload hands them a batch
//! ([`RtMap::get_each`], [`RtMap::insert_each`],
//! [`DeadTidSet::is_member_each`], [`DeadTidSet::set_blocks_each`]), and
//! once per call everywhere else (RT-6's churn, single lookups). Every operation of the workload is still made, in the same
//! order, and its result handed back as with any other structure.
//!
//! Memory is the area's [`Area::memory_usage`], the total size of its
//! segments (PostgreSQL's `dsa_get_total_size`). Dropping an adapter
//! destroys the tree or store and then the area, so no shared-memory
//! object outlives a measurement.

use radix_core::shm::{Area, AreaHandle, AreaOptions};
use tidstore::{SharedTidStore, Tid};

use super::project::STORE_MAX_BYTES;
use super::{DeadTidSet, RtMap};

/// Operations per guard: lookups per read guard (RT and TS), inserts per
/// write guard (RT loads) and blocks per write guard (TS loads).
///
/// A lookup batch models a worker process reading a run of index entries
/// (a few B-tree leaf pages' worth) under one share lock; a load batch
/// models the one writer filling the tree in runs. (PostgreSQL's vacuum
/// takes no lock around `TidStoreSetBlockOffsets` at all: only the leader
/// writes, and workers read only during index passes; its `test_tidstore`
/// locks around each call.) At 1024 operations per guard the guard's cost
/// is a fraction of a nanosecond per operation, while a guard still spans
/// only microseconds of work, short enough not to starve a writer.
pub const BATCH: usize = 1024;

/// The name of both shared structures in reports.
pub const NAME: &str = "project-shared";

radix_core::radix_tree! {
    /// The project's tree in shared memory for the RT workloads:
    /// `u64 -> u64`, default layout and size classes.
    pub struct SharedProjectTree {
        key: u64,
        value: u64,
        memory: shared,
    }
}

/// [`SharedProjectTree`] in an area of its own, as an [`RtMap`].
pub struct ProjectSharedMap {
    /// `None` only while dropping.
    tree: Option<SharedProjectTree>,
}

impl ProjectSharedMap {
    #[inline(always)]
    fn tree(&self) -> &SharedProjectTree {
        self.tree.as_ref().expect("the tree lives until drop")
    }

    /// The handle of the area the tree lives in; its shared-memory objects
    /// are named after it.
    pub fn area_handle(&self) -> AreaHandle {
        self.tree().area().handle()
    }
}

impl RtMap for ProjectSharedMap {
    const NAME: &'static str = NAME;
    const BATCHED: bool = true;

    fn new() -> Self {
        let area = Area::create(AreaOptions::default())
            .unwrap_or_else(|e| panic!("cannot create a shared-memory area: {e}"));
        let tree = SharedProjectTree::create_in(&area)
            .unwrap_or_else(|e| panic!("cannot create a shared tree: {e}"));
        Self { tree: Some(tree) }
    }

    #[inline]
    fn insert(&mut self, key: u64, value: u64) {
        if let Err(e) = self.tree().write().insert(key, value) {
            panic!("shared insert failed: {e}");
        }
    }

    /// One write guard per [`BATCH`] inserts.
    #[inline(always)]
    fn insert_each<I: IntoIterator<Item = (u64, u64)>>(&mut self, pairs: I) {
        let tree = self.tree();
        let mut pairs = pairs.into_iter();
        while let Some((key, value)) = pairs.next() {
            let mut guard = tree.write();
            for (key, value) in core::iter::once((key, value)).chain(pairs.by_ref().take(BATCH - 1))
            {
                if let Err(e) = guard.insert(key, value) {
                    panic!("shared insert failed: {e}");
                }
            }
        }
    }

    #[inline(always)]
    fn get(&self, key: u64) -> Option<u64> {
        self.tree().read().get(key).copied()
    }

    /// One read guard per [`BATCH`] lookups.
    #[inline(always)]
    fn get_each<T: Copy>(
        &self,
        items: &[T],
        key: impl Fn(T) -> u64,
        mut found: impl FnMut(T, Option<u64>),
    ) {
        let tree = self.tree();
        for batch in items.chunks(BATCH) {
            let guard = tree.read();
            let view: &radix_core::shm::TreeView<_> = &guard;
            view.get_each(
                batch,
                |&item| key(item),
                |&item, value| found(item, value.copied()),
            );
        }
    }

    #[inline]
    fn remove(&mut self, key: u64) -> bool {
        match self.tree().write().remove(key) {
            Ok(old) => old.is_some(),
            Err(e) => panic!("shared remove failed: {e}"),
        }
    }

    fn own_memory(&self) -> Option<usize> {
        Some(self.tree().area().memory_usage())
    }
}

impl Drop for ProjectSharedMap {
    /// Destroys the tree; its area (whose last handle the tree held) goes
    /// with it, unlinking every shared-memory object.
    fn drop(&mut self) {
        if let Some(tree) = self.tree.take()
            && let Err(e) = tree.destroy()
        {
            // Only a poisoned tree fails; its area is still unlinked
            // when the tree's handle drops here.
            eprintln!("project-shared: destroying the tree failed: {e}");
        }
    }
}

/// [`SharedTidStore::create`] with [`STORE_MAX_BYTES`] as a
/// [`DeadTidSet`].
pub struct ProjectSharedStore {
    /// `None` only while dropping.
    store: Option<SharedTidStore>,
}

impl ProjectSharedStore {
    #[inline(always)]
    fn store(&self) -> &SharedTidStore {
        self.store.as_ref().expect("the store lives until drop")
    }

    /// The handle of the store's area; its shared-memory objects are named
    /// after it.
    pub fn area_handle(&self) -> AreaHandle {
        self.store().area().handle()
    }
}

impl DeadTidSet for ProjectSharedStore {
    const NAME: &'static str = NAME;
    const BATCHED: bool = true;

    fn with_capacity(_ndead: u64) -> Self {
        let store = SharedTidStore::create(STORE_MAX_BYTES)
            .unwrap_or_else(|e| panic!("cannot create a shared TID store: {e}"));
        Self { store: Some(store) }
    }

    /// One write guard per call.
    #[inline]
    fn set_block_offsets(&mut self, block: u32, offsets: &[u16]) {
        if let Err(e) = self.store().write().set_block_offsets(block, offsets) {
            panic!("the shared store refused the workload's offsets: {e}");
        }
    }

    /// One write guard per [`BATCH`] blocks.
    #[inline(always)]
    fn set_blocks_each(&mut self, blocks: &[u32], offsets: &[u16]) {
        let store = self.store();
        for batch in blocks.chunks(BATCH) {
            let mut writer = store.write();
            for &block in batch {
                if let Err(e) = writer.set_block_offsets(block, offsets) {
                    panic!("the shared store refused the workload's offsets: {e}");
                }
            }
        }
    }

    #[inline(always)]
    fn is_member(&self, tid: Tid) -> bool {
        self.store().read().is_member(tid)
    }

    /// One read guard per [`BATCH`] lookups.
    #[inline(always)]
    fn is_member_each(&self, tids: &[Tid], mut found: impl FnMut(Tid, bool)) {
        let store = self.store();
        for batch in tids.chunks(BATCH) {
            store.read().is_member_each(batch, &mut found);
        }
    }

    /// One read guard and one ordered lookup per [`BATCH`] lookups, as a
    /// worker of vacuum's index pass probes a correlated index.
    fn count_members_ascending(&self, tids: &[Tid]) -> u64 {
        let store = self.store();
        let mut matched = 0;
        for batch in tids.chunks(BATCH) {
            let reader = store.read();
            let mut dead = reader.ordered_lookup();
            matched += batch.iter().filter(|&&tid| dead.is_member(tid)).count() as u64;
        }
        matched
    }

    /// The whole walk under one read guard, as vacuum's heap pass reads
    /// the store.
    fn for_each_block<F: FnMut(u32, &[u16])>(&self, mut f: F) {
        let mut buf = [0u16; tidstore::MAX_OFFSET as usize];
        let reader = self.store().read();
        for block in reader.iter() {
            let n = block.copy_offsets(&mut buf);
            f(block.block(), &buf[..n]);
        }
    }

    fn own_memory(&self) -> Option<usize> {
        Some(self.store().area().memory_usage())
    }
}

impl Drop for ProjectSharedStore {
    /// Destroys the store; its area goes with it, unlinking every
    /// shared-memory object.
    fn drop(&mut self) {
        if let Some(store) = self.store.take()
            && let Err(e) = store.destroy()
        {
            eprintln!("project-shared: destroying the store failed: {e}");
        }
    }
}
