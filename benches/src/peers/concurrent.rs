//! RT-C's structures: `u64 -> u64` maps that reader and writer threads
//! share, as [`ConcurrentMap`]s.
//!
//! - `project`: the project's concurrent tree ([`RtcTree`], declared with
//!   `concurrency: rowex`), whose readers take no lock and whose every
//!   call pins its own epoch;
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
//! Memory is the project tree's own account, and the counting
//! allocator's figure for the others; the epoch-based maps settle their
//! reclamation first (see [`ConcurrentMap::quiesce`]).

use std::collections::BTreeMap;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

// congee and crossbeam-skiplist retire through crossbeam-epoch's default
// collector: the one this crate's `crossbeam_epoch::pin` flushes.
use ::congee::Congee;
use crossbeam_skiplist::SkipMap;
use scc::TreeIndex;

use super::project::ProjectTree;
use super::{ConcurrentMap, RtMap};
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
