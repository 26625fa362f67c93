//! [`SharedConcurrentTidStore`]: the TID store in shared memory for a
//! parallel heap scan, which worker processes fill at the same time while
//! others read without a lock.
//!
//! [`SharedTidStore`](crate::SharedTidStore) is PostgreSQL's shape: one
//! process-shared reader-writer lock, so one writer at a time, and every
//! reader waits for it. This store keeps the same entries (one encoding,
//! one `is_member`) in a concurrent tree in the area
//! (`radix_core::shm::SharedConcurrentTree`, `concurrency: rowex`):
//!
//! - **writers lock only the nodes they change**, so workers that call
//!   [`set_block_offsets`](SharedConcurrentTidStore::set_block_offsets) for
//!   disjoint ranges of blocks, as the workers of a parallel heap scan do,
//!   run side by side;
//! - **readers take no lock, write nothing shared and never wait**;
//! - **the TID count** is one word beside the tree, which each write
//!   changes atomically by what it added and replaced;
//! - **the budget** is the area's size, as PostgreSQL measures its shared
//!   store's (`dsa_get_total_size`). A concurrent tree's area keeps the
//!   segments it empties, so the store has no `clear`: a vacuum makes a
//!   new store for its next round, as PostgreSQL's `dead_items_reset`
//!   does.
//!
//! Unlike [`SharedTidStore`](crate::SharedTidStore), it keeps one entry
//! per block: a concurrent tree has no range values (`ranges: true` is not
//! offered with `concurrency: rowex`), so a run of blocks with the same
//! dead offsets is not stored once. After a bulk `DELETE` that costs
//! memory: 1,000,000 blocks with the same 10 dead offsets (TS-2) take
//! 10.5 MB here, 1.06 MB in a `SharedTidStore` (its area's first segment)
//! and 26 kB in a local [`TidStore`](crate::TidStore).
//!
//! A writer killed while it holds a node lock poisons the store, and later
//! writes fail with [`TidStoreError::SharedMemory`]; reads go on.

use core::fmt;
use core::ops::RangeBounds;
use core::sync::atomic::Ordering::Relaxed;

use radix_core::shm::{Area, AreaOptions, ShmError};

use crate::entry::EntryBuf;
use crate::error::TidStoreError;
use crate::shared::{SharedTidStore, SharedTidStoreHandle};
use crate::store::{DeadBlock, validate};
use crate::table::ConcurrentBlockTable;
use crate::tid::Tid;

/// Where the store keeps its counters, beside its tree.
const NUM_TIDS: usize = 0;
const MAX_BYTES: usize = 1;

/// Dead TIDs in shared memory that the threads of many processes write at
/// once and read without locks; see the module docs.
///
/// ```
/// use radix_core::shm::{Area, Backing};
/// use tidstore::{SharedConcurrentTidStore, Tid};
///
/// // A heap-backed area for the example; `create` uses POSIX shared
/// // memory, which other processes attach to by handle.
/// let options = SharedConcurrentTidStore::area_options(64 << 20)
///     .backing(Backing::Heap)
///     .max_segments(8);
/// let store = SharedConcurrentTidStore::create_in(&Area::create(options)?, 64 << 20)?;
/// std::thread::scope(|s| {
///     // Two workers of a heap scan, each with its own range of blocks.
///     for worker in 0..2u32 {
///         let store = &store;
///         s.spawn(move || {
///             for block in worker * 100..(worker + 1) * 100 {
///                 store.set_block_offsets(block, &[1, 5, 9]).unwrap();
///             }
///         });
///     }
/// });
/// assert!(store.is_member(Tid::new(150, 5)));
/// assert_eq!(store.num_tids(), 600);
/// let handle = store.handle().to_string(); // what a worker process is given
/// # let _ = handle;
/// store.destroy()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SharedConcurrentTidStore {
    table: ConcurrentBlockTable,
}

impl SharedConcurrentTidStore {
    /// The area a store with budget `max_bytes` creates: the segments of
    /// [`SharedTidStore::area_options`], and one tree slot.
    pub fn area_options(max_bytes: usize) -> AreaOptions {
        SharedTidStore::area_options(max_bytes)
    }

    /// An empty store with budget `max_bytes`, in a shared area of its own.
    ///
    /// # Errors
    ///
    /// The system refused the shared memory.
    pub fn create(max_bytes: usize) -> Result<Self, ShmError> {
        Self::create_in(&Area::create(Self::area_options(max_bytes))?, max_bytes)
    }

    /// An empty store with budget `max_bytes` in `area`.
    ///
    /// # Errors
    ///
    /// The area has no free tree slot, or no room for the tree's header.
    pub fn create_in(area: &Area, max_bytes: usize) -> Result<Self, ShmError> {
        let table = ConcurrentBlockTable::create_in(area)?;
        table.user_word(MAX_BYTES).store(max_bytes as u64, Relaxed);
        Ok(Self { table })
    }

    /// What a worker passes to [`attach`](Self::attach).
    pub fn handle(&self) -> SharedTidStoreHandle {
        SharedTidStoreHandle::new(self.table.area().handle(), self.table.handle())
    }

    /// Opens a store another process created.
    ///
    /// # Errors
    ///
    /// As [`Area::attach`] and the tree's attach: no such area or tree,
    /// not a concurrent TID store ([`ShmError::ConfigMismatch`]), or no
    /// free handle entry.
    pub fn attach(handle: &SharedTidStoreHandle) -> Result<Self, ShmError> {
        let area = Area::attach(&handle.area())?;
        Ok(Self {
            table: ConcurrentBlockTable::attach(&area, handle.tree())?,
        })
    }

    /// The store's area.
    pub fn area(&self) -> &Area {
        self.table.area()
    }

    /// Sets the dead offsets of `block`, replacing any it had. Writers of
    /// different blocks run at the same time; readers meanwhile see the
    /// block's old offsets or its new ones.
    ///
    /// # Errors
    ///
    /// As [`TidStore::set_block_offsets`](crate::TidStore::set_block_offsets),
    /// plus [`TidStoreError::AreaFull`] when the area cannot grow (after
    /// a second try, once what this thread's earlier writes retired is
    /// freed), and [`TidStoreError::SharedMemory`] once a writer died
    /// holding a lock. Either way the store is unchanged.
    pub fn set_block_offsets(&self, block: u32, offsets: &[u16]) -> Result<(), TidStoreError> {
        validate(block, offsets)?;
        let mut buf = EntryBuf::new();
        let entry = buf.encode(offsets);
        let mut old = 0;
        let mut write = || {
            self.table.update_or_insert(block, |present| {
                old = present.map_or(0, |entry| entry.len());
                entry
            })
        };
        // A refusal frees what this thread's writes retired (entries
        // replaced, nodes grown), so once is worth a retry.
        let written = match write() {
            Err(ShmError::AreaFull { .. }) => write(),
            other => other,
        };
        written.map_err(|e| TidStoreError::from_shm(block, e))?;
        let tids = self.table.user_word(NUM_TIDS);
        if old == 0 {
            tids.fetch_add(offsets.len() as u64, Relaxed);
        } else {
            // Two updates of one word: a reader between them sees a count
            // that is off by the replaced block's, as it would see either
            // count of a block being replaced.
            tids.fetch_add(offsets.len() as u64, Relaxed);
            tids.fetch_sub(old as u64, Relaxed);
        }
        Ok(())
    }

    /// Whether `tid` is in the store.
    #[inline]
    pub fn is_member(&self, tid: Tid) -> bool {
        self.table
            .get_with(tid.block(), |entry| entry.contains(tid.offset()))
            .unwrap_or(false)
    }

    /// [`is_member`](Self::is_member) for every TID of `tids`, in order,
    /// giving `found` each TID with its answer, under one epoch pin.
    pub fn is_member_each(&self, tids: &[Tid], mut found: impl FnMut(Tid, bool)) {
        self.table.get_each_with(
            tids,
            |tid| tid.block(),
            |&tid, entry| found(tid, entry.is_some_and(|entry| entry.contains(tid.offset()))),
        );
    }

    /// Calls `f` on `block`'s dead offsets, if it has any, and returns
    /// what it returns: one lookup for all of a block's TIDs, as an index
    /// pass in heap order asks for them.
    ///
    /// ```
    /// use radix_core::shm::{Area, Backing};
    /// use tidstore::SharedConcurrentTidStore;
    ///
    /// let options = SharedConcurrentTidStore::area_options(1 << 20).backing(Backing::Heap);
    /// let store = SharedConcurrentTidStore::create_in(&Area::create(options)?, 1 << 20)?;
    /// store.set_block_offsets(9, &[4, 5])?;
    /// assert_eq!(store.with_block(9, |b| b.len()), Some(2));
    /// assert_eq!(store.with_block(10, |b| b.len()), None);
    /// # store.destroy()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn with_block<R>(&self, block: u32, f: impl FnOnce(DeadBlock<'_>) -> R) -> Option<R> {
        self.table
            .get_with(block, |entry| f(DeadBlock { block, entry }))
    }

    /// Calls `f` on every block in `blocks` that has dead offsets, in
    /// ascending order: the heap pass's walk. Blocks written meanwhile may
    /// or may not be seen; a block present throughout is seen once.
    ///
    /// ```
    /// use radix_core::shm::{Area, Backing};
    /// use tidstore::SharedConcurrentTidStore;
    ///
    /// let options = SharedConcurrentTidStore::area_options(1 << 20).backing(Backing::Heap);
    /// let store = SharedConcurrentTidStore::create_in(&Area::create(options)?, 1 << 20)?;
    /// store.set_block_offsets(9, &[4, 5])?;
    /// store.set_block_offsets(2, &[7])?;
    /// let mut walked = Vec::new();
    /// store.for_each_block(.., |block| walked.push((block.block(), block.offsets().collect::<Vec<_>>())));
    /// assert_eq!(walked, [(2, vec![7]), (9, vec![4, 5])]);
    /// # store.destroy()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_each_block(&self, blocks: impl RangeBounds<u32>, mut f: impl FnMut(DeadBlock<'_>)) {
        self.table
            .for_each_in(blocks, |block, entry| f(DeadBlock { block, entry }));
    }

    /// The area's total segment size: what the budget is compared with.
    pub fn memory_usage(&self) -> usize {
        self.area().memory_usage()
    }

    /// The budget given at creation.
    pub fn max_bytes(&self) -> usize {
        self.table.user_word(MAX_BYTES).load(Relaxed) as usize
    }

    /// Whether [`memory_usage`](Self::memory_usage) has passed the
    /// budget: time for an index pass.
    pub fn is_full(&self) -> bool {
        self.memory_usage() > self.max_bytes()
    }

    /// Number of blocks with dead offsets, counted by a walk.
    pub fn num_blocks(&self) -> usize {
        self.table.len()
    }

    /// Number of TIDs in the store.
    pub fn num_tids(&self) -> u64 {
        self.table.user_word(NUM_TIDS).load(Relaxed)
    }

    /// Whether the store holds no TID.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Checks every entry's form and the TID count, as
    /// [`TidStore::verify`](crate::TidStore::verify) does; with no writer
    /// running.
    ///
    /// # Errors
    ///
    /// The first broken invariant.
    pub fn verify(&self) -> Result<(), String> {
        let mut first_error = None;
        let mut tids = 0u64;
        self.table.for_each_in(.., |block, entry| {
            if first_error.is_none()
                && let Err(e) = entry.check()
            {
                first_error = Some(format!("block {block}: {e}"));
            }
            tids += entry.len() as u64;
        });
        if let Some(error) = first_error {
            return Err(error);
        }
        let num_tids = self.num_tids();
        if tids != num_tids {
            return Err(format!(
                "num_tids is {num_tids} but the entries hold {tids}"
            ));
        }
        Ok(())
    }

    /// Frees the store's memory back to its area; for the creator, once the
    /// workers are done. Attached processes detach by dropping their store.
    ///
    /// # Errors
    ///
    /// [`ShmError::TreeInUse`] while another live process has the store
    /// open.
    pub fn destroy(self) -> Result<(), ShmError> {
        self.table.destroy()
    }
}

impl fmt::Debug for SharedConcurrentTidStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedConcurrentTidStore")
            .field("handle", &self.handle().to_string())
            .field("tids", &self.num_tids())
            .field("memory_usage", &self.memory_usage())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    //! Small enough for Miri: a heap-backed area with the same layout,
    //! allocator and atomics as shared memory.

    use radix_core::shm::Backing;

    use super::*;

    fn store() -> SharedConcurrentTidStore {
        let options = SharedConcurrentTidStore::area_options(1 << 20)
            .backing(Backing::Heap)
            .max_segments(4);
        SharedConcurrentTidStore::create_in(&Area::create(options).unwrap(), 1 << 20).unwrap()
    }

    #[test]
    fn every_form_is_stored_replaced_and_found() {
        let store = store();
        assert!(!store.is_full(), "an empty store is not full at 1 MiB");
        assert!(store.is_empty());
        let run: Vec<u16> = (100..=300).collect();
        let forms: [&[u16]; 5] = [&[1], &[1, 2, 3], &[5, 6, 7, 8], &run, &[2, 64, 65, 2048]];
        for (i, offsets) in forms.iter().enumerate() {
            store.set_block_offsets(i as u32 * 300, offsets).unwrap();
        }
        for (i, _) in forms.iter().enumerate() {
            store
                .set_block_offsets(i as u32 * 300, forms[(i + 1) % forms.len()])
                .unwrap();
        }
        assert_eq!(
            store.set_block_offsets(7, &[3, 3]),
            Err(TidStoreError::NotAscending {
                block: 7,
                previous: 3,
                offset: 3
            })
        );
        store.verify().unwrap();
        let mut contents = Vec::new();
        store.for_each_block(.., |b| {
            contents.push((b.block(), b.offsets().collect::<Vec<_>>()))
        });
        let expected: Vec<(u32, Vec<u16>)> = (0..forms.len())
            .map(|i| (i as u32 * 300, forms[(i + 1) % forms.len()].to_vec()))
            .collect();
        assert_eq!(contents, expected);
        let total: usize = expected.iter().map(|(_, o)| o.len()).sum();
        assert_eq!(store.num_tids(), total as u64);
        assert_eq!(store.num_blocks(), forms.len());
        let mut probes = Vec::new();
        for (block, offsets) in &expected {
            for o in [0, 1, 2, 3, 4, 5, 64, 65, 99, 100, 300, 301, 2048] {
                let tid = Tid::new(*block, o);
                assert_eq!(store.is_member(tid), offsets.contains(&o), "({block},{o})");
                probes.push((tid, offsets.contains(&o)));
            }
            assert!(!store.is_member(Tid::new(block + 1, 1)), "a block between");
        }
        let tids: Vec<Tid> = probes.iter().map(|&(t, _)| t).collect();
        let mut answers = Vec::new();
        store.is_member_each(&tids, |tid, dead| answers.push((tid, dead)));
        assert_eq!(answers, probes);
        let mut middle = Vec::new();
        store.for_each_block(300..=900, |b| middle.push(b.block()));
        assert_eq!(middle, [300, 600, 900]);
        assert_eq!(store.max_bytes(), 1 << 20);
        let handle = store.handle();
        assert_eq!(
            handle.to_string().parse::<SharedTidStoreHandle>().unwrap(),
            handle
        );
        store.destroy().unwrap();
    }

    #[test]
    fn workers_fill_disjoint_blocks_at_once() {
        let store = store();
        let per = if cfg!(miri) { 6 } else { 3000 };
        // Offsets that give every form, by block.
        let offsets = |block: u32| -> Vec<u16> {
            match block % 4 {
                0 => vec![1],
                1 => (1..=40).collect(),
                2 => (1..=60).step_by(3).collect(),
                _ => vec![2, 70, 200, 291],
            }
        };
        std::thread::scope(|s| {
            for worker in 0..2u32 {
                let store = &store;
                s.spawn(move || {
                    for block in worker * per..(worker + 1) * per {
                        store.set_block_offsets(block, &offsets(block)).unwrap();
                    }
                });
            }
            s.spawn(|| {
                // A reader beside them sees each block whole or not at all.
                for block in 0..2 * per {
                    let want = offsets(block);
                    let mut seen = Vec::new();
                    store.for_each_block(block..=block, |b| seen.extend(b.offsets()));
                    assert!(seen.is_empty() || seen == want, "block {block}: {seen:?}");
                }
            });
        });
        store.verify().unwrap();
        let expected: u64 = (0..2 * per).map(|b| offsets(b).len() as u64).sum();
        assert_eq!(store.num_tids(), expected);
        assert_eq!(store.num_blocks(), 2 * per as usize);
        store.destroy().unwrap();
    }
}
