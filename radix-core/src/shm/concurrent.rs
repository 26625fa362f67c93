//! Concurrent trees in an area: the local concurrent tree's lock-free
//! reads and per-node write locks, across processes.
//!
//! A `radix_tree!` type declared with `memory: shared` and
//! `concurrency: rowex` is a [`ConcurrentTree`] in a [`SharedSpace`]. It
//! reads exactly as the local one does (`get`, `get_with`, `pin`, `iter`,
//! `range`, `first`, `last`, `get_each`, all through `&self`), and its
//! writes return `Result<_, ShmError>`, since an area can be full and a
//! writer in another process can die.
//!
//! - **Readers in any process take no lock and write nothing shared**
//!   but their own announcement (`epochs.rs`), and never wait: a segment
//!   they have not mapped yet is mapped on first contact, under a mutex of
//!   their own process.
//! - **Writers in several processes** lock only the nodes they change;
//!   allocation takes the tree's process-shared allocation mutex.
//! - **A writer killed while it holds a node lock poisons the tree.** A
//!   writer that waits on that lock finds its holder dead, marks the tree,
//!   and every later write fails with [`ShmError::OwnerDied`]. Reads go on
//!   and see a consistent tree: every store a writer makes leaves one.
//!   (Recovering the locks by pid is not safe: the dead writer may have
//!   published a replacement without marking the old node obsolete.)
//! - **A reader killed inside a read** leaves an announcement that would
//!   hold reclamation back; writers find its process gone and clear it.
//! - **Handles and destruction.** Each `create_in` or `attach` takes an
//!   entry in the tree's handle list, given back on drop. Dropping a
//!   handle frees what it retired once expired, and leaves the tree. Only
//!   [`destroy`](ConcurrentTree::destroy) removes it, and only when no
//!   other live process has it open.

use core::sync::atomic::AtomicU64;
use core::sync::atomic::Ordering::{Acquire, Relaxed, Release};

use super::buddy::{PAGE, ceil_log2};
use super::control::{TREE_FREE, TREE_LIVE, USER_WORDS};
use super::epochs::HEADER_BYTES;
use super::space::{SharedSpace, pool_specs};
use super::tree::{check_fingerprint, fingerprint, new_tree_slot};
use super::{Area, ShmError, TreeHandle};
use crate::concurrent::{ConcurrentLayout, ConcurrentTree, InputOf, OldOf, ValueOf};
use crate::config::Config;

/// A concurrent tree in a shared [`Area`]; see the module docs.
pub type SharedConcurrentTree<C> = ConcurrentTree<C, SharedSpace>;

impl<C: Config> ConcurrentTree<C, SharedSpace>
where
    C::Layout: ConcurrentLayout,
{
    /// Creates an empty concurrent tree in `area`.
    ///
    /// From then on the area keeps segments that empty out, for reuse,
    /// rather than destroying them (readers of other processes map
    /// segments lazily, and a segment slot must never name two segments
    /// in turn).
    ///
    /// # Errors
    ///
    /// [`ShmError::TooManyTrees`], [`ShmError::AreaFull`] for the tree's
    /// header block, [`ShmError::AreaDestroyed`], or the area lock's
    /// poison.
    pub fn create_in(area: &Area) -> Result<Self, ShmError> {
        let inner = &area.inner;
        let order = ceil_log2(HEADER_BYTES.div_ceil(PAGE));
        let header = inner.alloc_block(order)?;
        // SAFETY: a block of the area this process maps, taken above and
        // not yet shared: all zero is a fresh header.
        unsafe {
            inner.base().byte_add(header).write_bytes(0, PAGE << order);
        }
        let layouts = Self::object_layouts();
        let made = (|| {
            let lock = inner.lock()?;
            inner.control().keeps_segments.store(1, Relaxed);
            new_tree_slot(
                inner,
                &lock,
                fingerprint::<C>(true),
                &pool_specs(&layouts),
                header as u64,
            )
        })();
        let (index, generation) = match made {
            Ok(made) => made,
            Err(e) => {
                let _ = inner.free_blocks([header]);
                return Err(e);
            }
        };
        // SAFETY: slot `index` now holds this tree, with its header at
        // `header` and pools for `layouts`.
        let space = unsafe { SharedSpace::open(area, index, generation, header, layouts) }?;
        Ok(Self::in_space(space))
    }

    /// Opens the concurrent tree `handle` names in `area`, which another
    /// process (or this one) created.
    ///
    /// The first concurrent tree a process opens (by `attach` or
    /// `create_in`) registers the process for Linux's global expedited
    /// `membarrier`, so that its readers need no fence. In a process of
    /// one thread that is immediate; with more, the kernel waits for an
    /// RCU grace period, 15 to 70 ms on a 2-core machine. A worker process
    /// that opens a tree and then starts threads pays nothing.
    ///
    /// # Errors
    ///
    /// [`ShmError::NoSuchTree`] when the handle names no live tree,
    /// [`ShmError::ConfigMismatch`] naming the part of the configuration
    /// that differs (a plain tree's `concurrency` is `none`), and
    /// [`ShmError::TooManyHandles`].
    pub fn attach(area: &Area, handle: TreeHandle) -> Result<Self, ShmError> {
        let inner = &area.inner;
        let index = handle.slot as usize;
        // Under the area lock, so that the tree cannot be destroyed
        // between the checks and the handle's registration.
        let _lock = inner.lock()?;
        if index >= inner.max_trees() {
            return Err(ShmError::NoSuchTree { handle });
        }
        let slot = inner.tree_slot(index);
        if slot.state.load(Acquire) != TREE_LIVE
            || slot.generation.load(Acquire) != handle.generation
        {
            return Err(ShmError::NoSuchTree { handle });
        }
        check_fingerprint(slot, fingerprint::<C>(true))?;
        let header = slot.root.load(Relaxed) as usize;
        inner.sync_locked(&_lock)?;
        // SAFETY: a live concurrent tree of this configuration (checked
        // above), whose pools serve this type's layouts.
        let space = unsafe {
            SharedSpace::open(
                area,
                index,
                handle.generation,
                header,
                Self::object_layouts(),
            )
        }?;
        Ok(Self::in_space(space))
    }

    /// The handle another process attaches with, beside the area's.
    pub fn handle(&self) -> TreeHandle {
        TreeHandle {
            slot: self.space.index() as u32,
            generation: self.space.generation(),
        }
    }

    /// The area the tree lives in.
    pub fn area(&self) -> &Area {
        self.space.area()
    }

    /// Caller-defined word `index` (0 to 3) stored beside the tree in
    /// shared memory, 0 in a new tree: for state kept with the tree, which
    /// the threads of every process that has it open change atomically
    /// (the concurrent shared TID store counts its TIDs there).
    ///
    /// ```
    /// # #[cfg(target_os = "linux")] {
    /// use std::sync::atomic::Ordering::Relaxed;
    /// use radix_core::shm::{Area, AreaOptions, Backing};
    ///
    /// radix_core::radix_tree! {
    ///     pub struct Tree { key: u64, value: u64, memory: shared, concurrency: rowex }
    /// }
    /// let options = AreaOptions::default().size_limit(Some(1 << 20));
    /// let area = Area::create(options.backing(Backing::Heap))?;
    /// let tree = Tree::create_in(&area)?;
    /// tree.insert(1, 10)?;
    /// tree.user_word(0).fetch_add(1, Relaxed);
    /// assert_eq!(tree.user_word(0).load(Relaxed), 1);
    /// tree.destroy()?;
    /// # }
    /// # Ok::<(), radix_core::shm::ShmError>(())
    /// ```
    ///
    /// # Panics
    ///
    /// If `index` is 4 or more.
    pub fn user_word(&self, index: usize) -> &AtomicU64 {
        assert!(index < USER_WORDS, "user word {index} of {USER_WORDS}");
        &self.space.area().inner.tree_slot(self.space.index()).user[index]
    }

    /// Inserts `value` under `key` and returns the value it replaced.
    ///
    /// # Errors
    ///
    /// [`ShmError::AreaFull`] or [`ShmError::TooLarge`] when the area has
    /// no room for what the insert must build (nothing changed), and
    /// [`ShmError::OwnerDied`] once a writer died holding a lock. Before
    /// it returns `AreaFull`, the insert frees what this thread's earlier
    /// writes retired and no reader can still see (nodes replaced, values
    /// removed), which otherwise waits until more is retired: in a tree
    /// that was emptied, a retry may then succeed.
    pub fn insert(&self, key: C::Key, value: InputOf<'_, C>) -> Result<OldOf<C>, ShmError> {
        self.refused(self.upsert(key, |_| value))
    }

    /// `result`, after freeing what this thread retired if it is an
    /// `AreaFull` refusal.
    fn refused<T>(&self, result: Result<T, ShmError>) -> Result<T, ShmError> {
        if let Err(ShmError::AreaFull { .. }) = result {
            self.collect_retired();
        }
        result
    }

    /// Stores `f(old)` under `key`, as the local tree's
    /// [`update_or_insert`](ConcurrentTree::update_or_insert).
    ///
    /// # Errors
    ///
    /// As [`insert`](Self::insert); `f` may have run.
    pub fn update_or_insert<'i>(
        &self,
        key: C::Key,
        f: impl FnOnce(Option<&ValueOf<C>>) -> InputOf<'i, C>,
    ) -> Result<OldOf<C>, ShmError> {
        self.refused(self.upsert(key, f))
    }

    /// Removes `key` and returns its value.
    ///
    /// # Errors
    ///
    /// [`ShmError::OwnerDied`] once a writer died holding a lock.
    pub fn remove(&self, key: C::Key) -> Result<OldOf<C>, ShmError> {
        self.remove_in(key)
    }

    /// Destroys the tree and gives all of its memory back to the area.
    ///
    /// # Errors
    ///
    /// [`ShmError::TreeInUse`] while another live process has it open
    /// (the tree is left as it was), and [`ShmError::OwnerDied`] if a
    /// writer died holding the allocation mutex: the tree is gone, and its
    /// memory stays in the area until the area goes.
    pub fn destroy(mut self) -> Result<(), ShmError> {
        let inner = &self.space.area().inner;
        {
            let _lock = inner.lock()?;
            let others = self.space.others();
            if !others.is_empty() {
                return Err(ShmError::TreeInUse { pids: others });
            }
            inner
                .tree_slot(self.space.index())
                .state
                .store(TREE_FREE, Release);
        }
        self.reclaimer.abandon();
        self.space.forget_handle();
        // SAFETY: the tree left the directory under the area lock, and no
        // other live process has a handle: none can reach it again.
        unsafe { self.space.release_all() }
    }
}

#[cfg(test)]
mod tests;
