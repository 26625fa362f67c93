//! [`SharedTidStore`]: the TID store in shared memory, for parallel
//! vacuum's worker processes.
//!
//! The leader creates the store (with an area of its own, sized from the
//! budget as PostgreSQL does), fills it during the heap scan under the
//! write lock, and passes [`SharedTidStore::handle`] to its workers, which
//! [`attach`](SharedTidStore::attach) and read under the read lock. The
//! entries are the local store's: one encoding, one `is_member`. So are
//! the block ranges: a run of blocks with the same dead offsets is stored
//! as range values in the area too (TS-2 and TS-4, every block alike, went
//! from 9.45 MB to the area's first segment, 1.06 MB). A write that would
//! split a range where the area has no room is refused with the store
//! unchanged.

use core::fmt;
use core::str::FromStr;

use radix_core::shm::{Area, AreaHandle, AreaOptions, ShmError, TreeHandle};

use crate::entry::EntryBuf;
use crate::error::TidStoreError;
use crate::ordered::OrderedLookup;
use crate::store::{DeadBlock, block_iter, validate, verify_entries};
use crate::table::{
    SharedBlockTable, SharedBlockTableIter, SharedBlockTableReadGuard, SharedBlockTableWriteGuard,
    TableCursor,
};
use crate::tid::Tid;

/// Where the store keeps its counters, beside its tree.
const NUM_TIDS: usize = 0;
const MAX_BYTES: usize = 1;

/// The smallest and largest segment a store's area uses.
const MIN_SEGMENT: usize = 256 << 10;
const MAX_SEGMENT: usize = 256 << 20;
/// The largest first segment.
const INIT_SEGMENT: usize = 1 << 20;

/// Dead TIDs in shared memory: a [`TidStore`](crate::TidStore) that worker
/// processes read while the leader writes.
///
/// ```
/// use radix_core::shm::AreaOptions;
/// use tidstore::{SharedTidStore, Tid};
///
/// // A heap-backed area for the example; `SharedTidStore::create` uses
/// // POSIX shared memory, which other processes attach to by handle.
/// let options = SharedTidStore::area_options(64 << 20)
///     .backing(radix_core::shm::Backing::Heap)
///     .max_segments(8);
/// let store = SharedTidStore::create_in(&radix_core::shm::Area::create(options)?, 64 << 20)?;
/// store.write().set_block_offsets(7, &[1, 2, 3, 100]).unwrap();
/// let handle = store.handle().to_string(); // what a worker is given
/// # let _ = handle;
/// let r = store.read();
/// assert!(r.is_member(Tid::new(7, 100)));
/// assert_eq!(r.num_tids(), 4);
/// assert!(!r.is_full());
/// # drop(r);
/// # store.destroy()?;
/// # Ok::<(), radix_core::shm::ShmError>(())
/// ```
pub struct SharedTidStore {
    table: SharedBlockTable,
}

impl SharedTidStore {
    /// The area a store with budget `max_bytes` creates: segments of at
    /// most `max_bytes / 8` (and at least 256 KiB), as PostgreSQL sizes its
    /// TID store's DSA, so that the budget is not overshot by one large
    /// segment, and one tree slot.
    pub fn area_options(max_bytes: usize) -> AreaOptions {
        let eighth = (max_bytes / 8).max(1);
        let max_segment =
            (1usize << (usize::BITS - 1 - eighth.leading_zeros())).clamp(MIN_SEGMENT, MAX_SEGMENT);
        AreaOptions::default()
            .init_segment_size(max_segment.min(INIT_SEGMENT))
            .max_segment_size(max_segment)
            .max_trees(1)
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
    /// The area has no free tree slot.
    pub fn create_in(area: &Area, max_bytes: usize) -> Result<Self, ShmError> {
        let table = SharedBlockTable::create_in(area)?;
        table.write().set_user_word(MAX_BYTES, max_bytes as u64);
        Ok(Self { table })
    }

    /// What a worker passes to [`attach`](Self::attach).
    pub fn handle(&self) -> SharedTidStoreHandle {
        SharedTidStoreHandle {
            area: self.table.area().handle(),
            tree: self.table.handle(),
        }
    }

    /// Opens a store another process created.
    ///
    /// # Errors
    ///
    /// As [`Area::attach`] and the tree's attach: no such area or tree, or
    /// not a TID store.
    pub fn attach(handle: &SharedTidStoreHandle) -> Result<Self, ShmError> {
        let area = Area::attach(&handle.area)?;
        Ok(Self {
            table: SharedBlockTable::attach(&area, handle.tree)?,
        })
    }

    /// The store's area.
    pub fn area(&self) -> &Area {
        self.table.area()
    }

    /// Takes the read lock, waiting while the writer holds it.
    ///
    /// # Panics
    ///
    /// If the store is poisoned (its writer died holding the lock) or gone.
    pub fn read(&self) -> SharedTidStoreReader<'_> {
        SharedTidStoreReader {
            guard: self.table.read(),
        }
    }

    /// Takes the read lock at once, or says why not.
    ///
    /// # Errors
    ///
    /// [`ShmError::WouldBlock`] while the writer holds it,
    /// [`ShmError::OwnerDied`] once a writer died holding it.
    pub fn try_read(&self) -> Result<SharedTidStoreReader<'_>, ShmError> {
        Ok(SharedTidStoreReader {
            guard: self.table.try_read()?,
        })
    }

    /// Takes the write lock, waiting for readers to leave.
    ///
    /// # Panics
    ///
    /// As [`read`](Self::read).
    pub fn write(&self) -> SharedTidStoreWriter<'_> {
        SharedTidStoreWriter {
            guard: self.table.write(),
        }
    }

    /// Takes the write lock at once, or says why not.
    ///
    /// # Errors
    ///
    /// As [`try_read`](Self::try_read).
    pub fn try_write(&self) -> Result<SharedTidStoreWriter<'_>, ShmError> {
        Ok(SharedTidStoreWriter {
            guard: self.table.try_write()?,
        })
    }

    /// Frees the store's memory back to its area; for the creator, once the
    /// workers are done. Attached processes detach by dropping their store.
    ///
    /// # Errors
    ///
    /// The store is poisoned.
    pub fn destroy(self) -> Result<(), ShmError> {
        self.table.destroy()
    }
}

impl fmt::Debug for SharedTidStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedTidStore")
            .field("handle", &self.handle().to_string())
            .field("memory_usage", &self.area().memory_usage())
            .finish()
    }
}

/// The read lock of a [`SharedTidStore`]: the lookups vacuum's index pass
/// makes. Released on drop.
pub struct SharedTidStoreReader<'a> {
    guard: SharedBlockTableReadGuard<'a>,
}

/// The write lock of a [`SharedTidStore`]: reads, plus the heap scan's
/// writes. Released on drop.
pub struct SharedTidStoreWriter<'a> {
    guard: SharedBlockTableWriteGuard<'a>,
}

block_iter!(
    /// The blocks of a [`SharedTidStore`] in ascending order, read under
    /// its lock: the guard they came from must outlive them.
    SharedIter,
    SharedBlockTableIter<'a>
);

/// The reads, on either guard's tree view.
macro_rules! reads {
    ($guard:ty) => {
        impl<'a> $guard {
            /// Whether `tid` is in the store.
            #[inline]
            pub fn is_member(&self, tid: Tid) -> bool {
                self.guard
                    .get(tid.block())
                    .is_some_and(|entry| entry.contains(tid.offset()))
            }

            /// [`is_member`](Self::is_member) for every TID of `tids`, in
            /// order, giving `found` each TID with its answer; faster than
            /// one call per TID on a large store (see
            /// [`TidStore::is_member_each`](crate::TidStore::is_member_each)).
            pub fn is_member_each(&self, tids: &[Tid], mut found: impl FnMut(Tid, bool)) {
                self.guard.get_each(
                    tids,
                    |tid| tid.block(),
                    |&tid, entry| {
                        found(tid, entry.is_some_and(|entry| entry.contains(tid.offset())));
                    },
                );
            }

            /// A lookup for TIDs probed in ascending order, as
            /// [`TidStore::ordered_lookup`](crate::TidStore::ordered_lookup)
            /// makes for a local store: it holds this lock's borrow.
            pub fn ordered_lookup(&self) -> OrderedLookup<'_> {
                OrderedLookup::new(TableCursor::Shared(self.guard.cursor_at(0)))
            }

            /// The blocks in ascending order, each with its offsets: the
            /// same [`DeadBlock`] items as a local store's.
            pub fn iter(&self) -> SharedIter<'_> {
                SharedIter {
                    inner: self.guard.iter(),
                }
            }

            /// The area's total segment size: what the budget is compared
            /// with.
            pub fn memory_usage(&self) -> usize {
                self.guard.memory_usage()
            }

            /// The budget given at creation.
            pub fn max_bytes(&self) -> usize {
                self.guard.user_word(MAX_BYTES) as usize
            }

            /// Whether [`memory_usage`](Self::memory_usage) has passed the
            /// budget: time for an index pass.
            pub fn is_full(&self) -> bool {
                self.memory_usage() > self.max_bytes()
            }

            /// Number of blocks with dead offsets.
            pub fn num_blocks(&self) -> usize {
                self.guard.len()
            }

            /// Number of TIDs in the store.
            pub fn num_tids(&self) -> u64 {
                self.guard.user_word(NUM_TIDS)
            }

            /// Checks the tree, every entry's form and the TID count, as
            /// [`TidStore::verify`](crate::TidStore::verify) does.
            ///
            /// # Errors
            ///
            /// The first broken invariant.
            pub fn verify(&self) -> Result<(), String> {
                self.guard.verify()?;
                verify_entries(self.guard.iter(), self.num_tids())
            }
        }
    };
}

reads!(SharedTidStoreReader<'a>);
reads!(SharedTidStoreWriter<'a>);

impl SharedTidStoreWriter<'_> {
    /// Sets the dead offsets of `block`, replacing any it had.
    ///
    /// # Errors
    ///
    /// As [`TidStore::set_block_offsets`](crate::TidStore::set_block_offsets),
    /// plus [`TidStoreError::AreaFull`] when the area cannot grow. Either way
    /// the store is unchanged.
    pub fn set_block_offsets(&mut self, block: u32, offsets: &[u16]) -> Result<(), TidStoreError> {
        validate(block, offsets)?;
        let mut old = 0;
        let mut buf = EntryBuf::new();
        self.guard
            .insert_with_old(block, buf.encode(offsets), |entry| old = entry.len())
            .map_err(|e| TidStoreError::from_shm(block, e))?;
        let tids = self.num_tids() - old as u64 + offsets.len() as u64;
        self.guard.set_user_word(NUM_TIDS, tids);
        Ok(())
    }

    /// Removes every TID, returning the memory to the area.
    pub fn clear(&mut self) {
        self.guard.clear();
        self.guard.set_user_word(NUM_TIDS, 0);
    }
}

impl fmt::Debug for SharedTidStoreReader<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedTidStoreReader")
            .field("blocks", &self.num_blocks())
            .field("tids", &self.num_tids())
            .field("memory_usage", &self.memory_usage())
            .finish()
    }
}

impl fmt::Debug for SharedTidStoreWriter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedTidStoreWriter")
            .field("blocks", &self.num_blocks())
            .field("tids", &self.num_tids())
            .field("memory_usage", &self.memory_usage())
            .finish()
    }
}

/// What a worker needs to attach to a [`SharedTidStore`] (or a
/// [`SharedConcurrentTidStore`](crate::SharedConcurrentTidStore), or a
/// [`SharedTidBitmap`](crate::SharedTidBitmap)): the area's handle and the
/// tree's, printed as `<area>/<tree>`.
///
/// ```
/// use tidstore::SharedTidStoreHandle;
/// let handle: SharedTidStoreHandle = "radix-12-00000000000000ff/tree-0-1".parse()?;
/// assert_eq!(handle.to_string(), "radix-12-00000000000000ff/tree-0-1");
/// assert!("radix-12-00000000000000ff".parse::<SharedTidStoreHandle>().is_err());
/// # Ok::<(), radix_core::shm::ShmError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SharedTidStoreHandle {
    area: AreaHandle,
    tree: TreeHandle,
}

impl SharedTidStoreHandle {
    /// The handle of tree `tree` in area `area`.
    pub(crate) fn new(area: AreaHandle, tree: TreeHandle) -> Self {
        Self { area, tree }
    }

    /// The area's handle.
    pub(crate) fn area(&self) -> AreaHandle {
        self.area
    }

    /// The tree's handle.
    pub(crate) fn tree(&self) -> TreeHandle {
        self.tree
    }
}

impl fmt::Display for SharedTidStoreHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.area, self.tree)
    }
}

impl FromStr for SharedTidStoreHandle {
    type Err = ShmError;

    fn from_str(text: &str) -> Result<Self, ShmError> {
        let (area, tree) = text.split_once('/').ok_or_else(|| ShmError::BadHandle {
            text: text.chars().take(200).collect(),
            reason: "expected <area handle>/<tree handle>",
        })?;
        Ok(Self {
            area: area.parse()?,
            tree: tree.parse()?,
        })
    }
}

#[cfg(test)]
mod tests {
    //! Small enough for Miri: a heap-backed area with the same layout,
    //! allocator and locks as shared memory. The cross-process behaviour is
    //! in `tests/shared_processes.rs`.

    use radix_core::shm::Backing;

    use super::*;

    fn store() -> SharedTidStore {
        let options = SharedTidStore::area_options(1 << 20)
            .backing(Backing::Heap)
            .max_segments(4);
        SharedTidStore::create_in(&Area::create(options).unwrap(), 1 << 20).unwrap()
    }

    #[test]
    fn every_form_is_stored_replaced_and_found() {
        let store = store();
        let empty = store.area().memory_usage();
        assert!(
            !store.read().is_full(),
            "an empty store is not full at 1 MiB"
        );
        let run: Vec<u16> = (100..=300).collect();
        let forms: [&[u16]; 5] = [&[1], &[1, 2, 3], &[5, 6, 7, 8], &run, &[2, 64, 65, 2048]];
        {
            let mut w = store.write();
            for (i, offsets) in forms.iter().enumerate() {
                w.set_block_offsets(i as u32 * 300, offsets).unwrap();
            }
            for (i, _) in forms.iter().enumerate() {
                w.set_block_offsets(i as u32 * 300, forms[(i + 1) % forms.len()])
                    .unwrap();
            }
            assert_eq!(
                w.set_block_offsets(7, &[3, 3]),
                Err(TidStoreError::NotAscending {
                    block: 7,
                    previous: 3,
                    offset: 3
                })
            );
            w.verify().unwrap();
        }
        let r = store.read();
        let contents: Vec<(u32, Vec<u16>)> = r
            .iter()
            .map(|b| (b.block(), b.offsets().collect()))
            .collect();
        let expected: Vec<(u32, Vec<u16>)> = (0..forms.len())
            .map(|i| (i as u32 * 300, forms[(i + 1) % forms.len()].to_vec()))
            .collect();
        assert_eq!(contents, expected);
        let total: usize = expected.iter().map(|(_, o)| o.len()).sum();
        assert_eq!(r.num_tids(), total as u64);
        assert_eq!(r.num_blocks(), forms.len());
        let mut ascending = r.ordered_lookup();
        for (block, offsets) in &expected {
            for o in [0, 1, 2, 3, 4, 5, 64, 65, 99, 100, 300, 301, 2048] {
                let tid = Tid::new(*block, o);
                assert_eq!(r.is_member(tid), offsets.contains(&o), "({block},{o})");
                assert_eq!(
                    ascending.is_member(tid),
                    offsets.contains(&o),
                    "in order ({block},{o})"
                );
            }
            assert!(
                !ascending.is_member(Tid::new(block + 1, 1)),
                "a block between"
            );
        }
        // Out of order is still answered.
        assert!(ascending.is_member(Tid::new(0, forms[1][0])));
        assert_eq!(r.max_bytes(), 1 << 20);
        drop(r);
        store.write().clear();
        assert_eq!(store.read().num_tids(), 0);
        assert_eq!(store.area().memory_usage(), empty);
        let handle = store.handle();
        assert_eq!(
            handle.to_string().parse::<SharedTidStoreHandle>().unwrap(),
            handle
        );
        store.destroy().unwrap();
    }
}
