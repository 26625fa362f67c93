//! RT-C's structures: `u64 -> u64` maps that reader and writer threads
//! share, as [`ConcurrentMap`]s.
//!
//! - `project`: the project's concurrent tree ([`RtcTree`], declared with
//!   `concurrency: rowex`), whose readers take no lock and whose every
//!   call pins its own epoch;
//! - `project-shared`: the same tree in POSIX shared memory
//!   ([`RtcSharedTree`], declared `memory: shared`), in an [`Area`] of its
//!   own that the threads of this process share through one handle: the
//!   same lock-free reads, writes that can fail (`Result<_, ShmError>`);
//! - `project-full`: the same tree with full path compression
//!   ([`RtcTreeFull`]), whose readers' paths the writers' far keys
//!   lengthen by one node instead of three;
//! - `congee`: congee's ART with optimistic lock coupling, with one epoch
//!   guard per run of operations, as its documentation advises;
//! - `scc-treeindex`: `scc::TreeIndex`, a B+ tree with lock-free reads,
//!   lookups under one `scc::Guard` per run (its writes pin inside);
//! - `crossbeam-skipmap`: `crossbeam_skiplist::SkipMap`, which pins and
//!   counts a reference to the entry inside every call;
//! - `project-rwlock` and `btreemap-rwlock`: the project's plain tree and
//!   `BTreeMap` behind a `std::sync::RwLock`, taken once per operation:
//!   a lock held across a run would let a reader shut writers out for the
//!   run, which is not how a map behind a lock is shared.
//!
//! Memory is the project tree's own account (for `project-shared`, the
//! total size of its area's segments, [`Area::memory_usage`], as on the
//! RT and TS workloads), and the counting allocator's figure for the
//! others; the epoch-based maps settle their reclamation first (see
//! [`ConcurrentMap::quiesce`]).

use std::collections::BTreeMap;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

// congee and crossbeam-skiplist retire through crossbeam-epoch's default
// collector: the one this crate's `crossbeam_epoch::pin` flushes.
use ::congee::Congee;
use crossbeam_skiplist::SkipMap;
use radix_core::shm::{Area, AreaHandle, AreaOptions};
use scc::TreeIndex;

use super::project::ProjectTree;
use super::{ConcurrentMap, RtMap, shared};
use crate::alloc::settle;

radix_core::radix_tree! {
    /// RT-C's concurrent tree: `u64 -> u64`, the default layout and size
    /// classes of the RT workloads' `project` tree, shared by threads.
    pub struct RtcTree { key: u64, value: u64, concurrency: rowex }
}

/// [`RtcTree`] as an [`RtMap`]: the concurrent tree on the single-thread
/// RT workloads, `project-rowex`, to set its lookups and memory beside
/// the plain tree's.
pub struct ProjectRowex(RtcTree);

impl RtMap for ProjectRowex {
    const NAME: &'static str = "project-rowex";

    fn new() -> Self {
        Self(RtcTree::new())
    }

    #[inline]
    fn insert(&mut self, key: u64, value: u64) {
        self.0.insert(key, value);
    }

    #[inline(always)]
    fn get(&self, key: u64) -> Option<u64> {
        self.0.get(key)
    }

    #[inline(always)]
    fn get_each<T: Copy>(
        &self,
        items: &[T],
        key: impl Fn(T) -> u64,
        mut found: impl FnMut(T, Option<u64>),
    ) {
        self.0
            .get_each(items, |&item| key(item), |&item, value| found(item, value));
    }

    #[inline]
    fn remove(&mut self, key: u64) -> bool {
        self.0.remove(key).is_some()
    }

    fn own_memory(&self) -> Option<usize> {
        Some(self.0.memory_usage())
    }
}

radix_core::radix_tree! {
    /// [`RtcTree`] with full path compression: RT-C's writers add keys far
    /// above the readers' (bit 40), which without compression lengthens
    /// every reader's path from three nodes to six (single-child nodes at
    /// bits 40 to 24); with it, by one.
    pub struct RtcTreeFull { key: u64, value: u64, concurrency: rowex, compression: full }
}

/// A concurrent tree type as a [`ConcurrentMap`] named `$name`.
macro_rules! project_concurrent {
    ($(#[$doc:meta])* $map:ident($tree:ident), $name:literal) => {
        $(#[$doc])*
        pub struct $map($tree);

        impl ConcurrentMap for $map {
            const NAME: &'static str = $name;
            type Guard = ();

            fn new() -> Self {
                Self($tree::new())
            }

            #[inline]
            fn guard(&self) -> Self::Guard {}

            #[inline]
            fn insert(&self, key: u64, value: u64, _guard: &()) {
                self.0.insert(key, value);
            }

            #[inline(always)]
            fn get(&self, key: u64, _guard: &()) -> Option<u64> {
                self.0.get(key)
            }

            #[inline]
            fn remove(&self, key: u64, _guard: &()) -> bool {
                self.0.remove(key).is_some()
            }

            fn own_memory(&self) -> Option<usize> {
                Some(self.0.memory_usage())
            }
        }
    };
}

project_concurrent!(
    /// [`RtcTree`] as a [`ConcurrentMap`]: `project`.
    ProjectConcurrent(RtcTree),
    "project"
);
project_concurrent!(
    /// [`RtcTreeFull`] as a [`ConcurrentMap`]: `project-full`.
    ProjectConcurrentFull(RtcTreeFull),
    "project-full"
);

radix_core::radix_tree! {
    /// [`RtcTree`] in shared memory: `u64 -> u64`, the default layout and
    /// size classes, `concurrency: rowex`, `memory: shared`.
    pub struct RtcSharedTree { key: u64, value: u64, memory: shared, concurrency: rowex }
}

/// The first data segment of `project-shared`'s area in RT-C: room for
/// RT-2's tree (10 MB at full size) and two writers' churn (their 131,072
/// keys, and the nodes they retire until reclaimed) in one segment. The
/// area has no size limit: later segments double, up to 256 MiB each, for
/// a `--scale` above 1.
pub const RTC_SHARED_SEGMENT: usize = 16 << 20;

/// [`RtcSharedTree`] in a POSIX shared-memory area of its own, as a
/// [`ConcurrentMap`]: `project-shared`. Every thread uses the one handle
/// (the tree is `Sync`), as the threads of one attached process would.
/// Dropping it destroys the tree and unlinks the area, so no
/// `/dev/shm/radix-*` object outlives a measurement.
pub struct ProjectConcurrentShared {
    /// `None` only while dropping.
    tree: Option<RtcSharedTree>,
}

impl ProjectConcurrentShared {
    #[inline(always)]
    fn tree(&self) -> &RtcSharedTree {
        self.tree.as_ref().expect("the tree lives until drop")
    }

    /// The handle of the area the tree lives in; its shared-memory objects
    /// are named after it.
    pub fn area_handle(&self) -> AreaHandle {
        self.tree().area().handle()
    }
}

impl ConcurrentMap for ProjectConcurrentShared {
    const NAME: &'static str = shared::NAME;
    type Guard = ();

    fn new() -> Self {
        let options = AreaOptions::default().init_segment_size(RTC_SHARED_SEGMENT);
        let area = Area::create(options)
            .unwrap_or_else(|e| panic!("cannot create a shared-memory area: {e}"));
        let tree = RtcSharedTree::create_in(&area)
            .unwrap_or_else(|e| panic!("cannot create a shared concurrent tree: {e}"));
        Self { tree: Some(tree) }
    }

    #[inline]
    fn guard(&self) -> Self::Guard {}

    #[inline]
    fn insert(&self, key: u64, value: u64, _guard: &()) {
        if let Err(e) = self.tree().insert(key, value) {
            panic!("shared insert failed: {e}");
        }
    }

    #[inline(always)]
    fn get(&self, key: u64, _guard: &()) -> Option<u64> {
        self.tree().get(key)
    }

    #[inline]
    fn remove(&self, key: u64, _guard: &()) -> bool {
        match self.tree().remove(key) {
            Ok(old) => old.is_some(),
            Err(e) => panic!("shared remove failed: {e}"),
        }
    }

    /// The tree's `memory_usage()`, which for a shared tree is its area's
    /// [`Area::memory_usage`]: the total size of the area's segments.
    fn own_memory(&self) -> Option<usize> {
        Some(self.tree().memory_usage())
    }
}

impl Drop for ProjectConcurrentShared {
    /// Destroys the tree; its area (whose last handle the tree held) goes
    /// with it, unlinking every shared-memory object.
    fn drop(&mut self) {
        if let Some(tree) = self.tree.take()
            && let Err(e) = tree.destroy()
        {
            // Only a poisoned tree fails; its area is still unlinked when
            // the tree's handle drops here.
            eprintln!("project-shared: destroying the tree failed: {e}");
        }
    }
}

/// congee's `Congee<usize, usize>` (`u64` keys and values on 64-bit
/// targets).
pub struct CongeeConcurrent(Congee<usize, usize>);

impl ConcurrentMap for CongeeConcurrent {
    const NAME: &'static str = "congee";
    type Guard = ::congee::epoch::Guard;

    fn new() -> Self {
        Self(Congee::default())
    }

    #[inline]
    fn guard(&self) -> Self::Guard {
        self.0.pin()
    }

    #[inline]
    fn insert(&self, key: u64, value: u64, guard: &Self::Guard) {
        if let Err(e) = self.0.insert(key as usize, value as usize, guard) {
            panic!("congee insert failed: {e:?}");
        }
    }

    #[inline(always)]
    fn get(&self, key: u64, guard: &Self::Guard) -> Option<u64> {
        self.0.get(&(key as usize), guard).map(|v| v as u64)
    }

    #[inline]
    fn remove(&self, key: u64, guard: &Self::Guard) -> bool {
        self.0.remove(&(key as usize), guard).is_some()
    }

    fn quiesce() {
        settle(|| crossbeam_epoch::pin().flush());
    }
}

/// `scc::TreeIndex<u64, u64>`.
pub struct SccTreeIndex(TreeIndex<u64, u64>);

impl ConcurrentMap for SccTreeIndex {
    const NAME: &'static str = "scc-treeindex";
    type Guard = scc::Guard;

    fn new() -> Self {
        Self(TreeIndex::new())
    }

    #[inline]
    fn guard(&self) -> Self::Guard {
        scc::Guard::new()
    }

    #[inline]
    fn insert(&self, key: u64, value: u64, _guard: &Self::Guard) {
        // `insert_sync` refuses a present key; replacing is the rarer case
        // (RT-C never inserts a present key), so it is tried second.
        if let Err((key, value)) = self.0.insert_sync(key, value) {
            self.0.upsert_sync(key, value);
        }
    }

    #[inline(always)]
    fn get(&self, key: u64, guard: &Self::Guard) -> Option<u64> {
        self.0.peek(&key, guard).copied()
    }

    #[inline]
    fn remove(&self, key: u64, _guard: &Self::Guard) -> bool {
        self.0.remove_sync(&key)
    }

    fn quiesce() {
        settle(|| {
            // An accelerated guard tries to move the epoch on when dropped,
            // which is when sdd frees what has become unreachable.
            let guard = scc::Guard::new();
            guard.accelerate();
        });
    }
}

/// `crossbeam_skiplist::SkipMap<u64, u64>`.
pub struct CrossbeamSkipMap(SkipMap<u64, u64>);

impl ConcurrentMap for CrossbeamSkipMap {
    const NAME: &'static str = "crossbeam-skipmap";
    type Guard = ();

    fn new() -> Self {
        Self(SkipMap::new())
    }

    #[inline]
    fn guard(&self) -> Self::Guard {}

    #[inline]
    fn insert(&self, key: u64, value: u64, _guard: &()) {
        self.0.insert(key, value);
    }

    #[inline(always)]
    fn get(&self, key: u64, _guard: &()) -> Option<u64> {
        self.0.get(&key).map(|entry| *entry.value())
    }

    #[inline]
    fn remove(&self, key: u64, _guard: &()) -> bool {
        self.0.remove(&key).is_some()
    }

    fn quiesce() {
        settle(|| crossbeam_epoch::pin().flush());
    }
}

/// A map behind a `std::sync::RwLock`, locked once per operation.
pub struct Locked<T>(RwLock<T>);

impl<T> Locked<T> {
    #[inline(always)]
    fn read(&self) -> RwLockReadGuard<'_, T> {
        self.0.read().expect("no thread panics holding the lock")
    }

    #[inline(always)]
    fn write(&self) -> RwLockWriteGuard<'_, T> {
        self.0.write().expect("no thread panics holding the lock")
    }
}

/// The project's plain tree (`project`'s [`ProjectTree`] of the RT
/// workloads) behind a `RwLock`.
pub type ProjectRwLock = Locked<ProjectTree>;

impl ConcurrentMap for ProjectRwLock {
    const NAME: &'static str = "project-rwlock";
    type Guard = ();

    fn new() -> Self {
        Locked(RwLock::new(ProjectTree::new()))
    }

    #[inline]
    fn guard(&self) -> Self::Guard {}

    #[inline]
    fn insert(&self, key: u64, value: u64, _guard: &()) {
        self.write().insert(key, value);
    }

    #[inline(always)]
    fn get(&self, key: u64, _guard: &()) -> Option<u64> {
        self.read().get(key).copied()
    }

    #[inline]
    fn remove(&self, key: u64, _guard: &()) -> bool {
        self.write().remove(key).is_some()
    }

    fn own_memory(&self) -> Option<usize> {
        Some(self.read().memory_usage())
    }
}

/// `std::collections::BTreeMap<u64, u64>` behind a `RwLock`.
pub type BTreeMapRwLock = Locked<BTreeMap<u64, u64>>;

impl ConcurrentMap for BTreeMapRwLock {
    const NAME: &'static str = "btreemap-rwlock";
    type Guard = ();

    fn new() -> Self {
        Locked(RwLock::new(BTreeMap::new()))
    }

    #[inline]
    fn guard(&self) -> Self::Guard {}

    #[inline]
    fn insert(&self, key: u64, value: u64, _guard: &()) {
        self.write().insert(key, value);
    }

    #[inline(always)]
    fn get(&self, key: u64, _guard: &()) -> Option<u64> {
        self.read().get(&key).copied()
    }

    #[inline]
    fn remove(&self, key: u64, _guard: &()) -> bool {
        self.write().remove(&key).is_some()
    }
}
