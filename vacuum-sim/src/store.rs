//! The dead-tuple stores vacuum can use: the TID store and the classic
//! array, behind one trait.

use core::fmt;
use core::str::FromStr;

use tidstore::{ArrayError, DeadItemsArray, MAX_OFFSET, Tid, TidStore, TidStoreError};

/// Which store a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StoreKind {
    /// [`tidstore::TidStore`], insert-only, as PostgreSQL 17's vacuum uses
    /// it (`tidstore`).
    TidStore,
    /// [`DeadItemsArray`], PostgreSQL 16's sorted array of 6-byte TIDs
    /// (`array`).
    Array,
    /// The TID store in shared memory (`tidstore::SharedTidStore`, Linux),
    /// filled by this process and read by worker processes during the
    /// index passes (`shared`; `--workers`). Not in [`ALL`](Self::ALL): it
    /// runs through `shared::run_shared`, not [`run`](crate::run).
    Shared,
}

impl StoreKind {
    /// Both stores, in the order runs and reports use.
    pub const ALL: [StoreKind; 2] = [StoreKind::TidStore, StoreKind::Array];

    /// The name used in reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::TidStore => "tidstore",
            Self::Array => "array",
            Self::Shared => "shared",
        }
    }
}

impl fmt::Display for StoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown store name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown store `{0}`: expected tidstore, array or shared")]
pub struct UnknownStore(pub String);

impl FromStr for StoreKind {
    type Err = UnknownStore;

    fn from_str(text: &str) -> Result<Self, UnknownStore> {
        match text.trim().to_ascii_lowercase().as_str() {
            "tidstore" => Ok(Self::TidStore),
            "array" => Ok(Self::Array),
            "shared" => Ok(Self::Shared),
            _ => Err(UnknownStore(text.to_string())),
        }
    }
}

/// Why a store could not be built or filled.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The TID store refused a page's offsets.
    #[error("TID store: {0}")]
    TidStore(#[from] TidStoreError),
    /// The array's allocation cannot hold even one page of dead TIDs.
    #[error(
        "the dead-tuple array gets {bytes} bytes, room for {capacity} TIDs, \
         but a page can have {per_page} dead tuples: raise --mem to at least {needed} bytes"
    )]
    ArrayTooSmall {
        /// The allocation.
        bytes: u64,
        /// TIDs it holds.
        capacity: u64,
        /// Tuples per page.
        per_page: u16,
        /// The smallest limit that holds one page.
        needed: u64,
    },
    /// The array refused a page.
    #[error("dead-tuple array: {0}")]
    Array(#[from] ArrayError),
    /// The array's allocation failed.
    #[error("cannot allocate the dead-tuple array ({bytes} bytes)")]
    AllocationFailed {
        /// The size asked for.
        bytes: u64,
    },
}

/// Where vacuum keeps the dead TIDs of one batch.
///
/// The simulation is generic over this trait so that each store's
/// `is_member` is inlined into the index-pass loop.
pub trait DeadTupleStore {
    /// Which store this is.
    fn kind(&self) -> StoreKind;

    /// Whether a page with `n` dead tuples can be added before the next
    /// index pass. The array answers no when they do not fit in its
    /// allocation; the TID store always answers yes (it is checked with
    /// [`is_full`](Self::is_full) after the page instead).
    fn has_room_for(&self, n: usize) -> bool;

    /// Records the dead offsets of `block` (ascending, non-empty). Blocks
    /// arrive in ascending order between two [`clear`](Self::clear)s.
    fn add_page(&mut self, block: u32, offsets: &[u16]) -> Result<(), StoreError>;

    /// Whether the store has reached its limit: time for the index passes.
    fn is_full(&self) -> bool;

    /// Whether `tid` is dead: the index pass's question.
    fn is_member(&self, tid: Tid) -> bool;

    /// How many of `tids` are dead: the index pass's question for a batch
    /// of index entries, in the order given. The TID store answers it with
    /// [`TidStore::is_member_each`], which overlaps the cache misses of
    /// random probes.
    fn count_members(&self, tids: &[Tid]) -> u64 {
        tids.iter().map(|&tid| u64::from(self.is_member(tid))).sum()
    }

    /// The same question for TIDs asked in ascending order, as a
    /// correlated index asks them: the TID store answers them with an
    /// [`OrderedLookup`](tidstore::OrderedLookup), which remembers the
    /// last block and seeks forward from it.
    fn ordered_is_member(&self) -> impl FnMut(Tid) -> bool + '_ {
        move |tid| self.is_member(tid)
    }

    /// The heap pass: calls `f` for every block in ascending order with its
    /// dead offsets, extracted into `buf` (or a buffer of the store's own).
    fn for_each_block<F: FnMut(u32, &[u16])>(&self, buf: &mut [u16], f: F);

    /// Bytes the store holds now.
    fn memory_usage(&self) -> u64;

    /// TIDs held.
    fn num_tids(&self) -> u64;

    /// Empties the store for the next batch.
    fn clear(&mut self);
}

impl DeadTupleStore for TidStore {
    fn kind(&self) -> StoreKind {
        StoreKind::TidStore
    }

    fn has_room_for(&self, _n: usize) -> bool {
        true
    }

    fn add_page(&mut self, block: u32, offsets: &[u16]) -> Result<(), StoreError> {
        Ok(self.set_block_offsets(block, offsets)?)
    }

    fn is_full(&self) -> bool {
        TidStore::is_full(self)
    }

    #[inline]
    fn is_member(&self, tid: Tid) -> bool {
        TidStore::is_member(self, tid)
    }

    fn count_members(&self, tids: &[Tid]) -> u64 {
        let mut dead = 0;
        self.is_member_each(tids, |_, is_dead| dead += u64::from(is_dead));
        dead
    }

    fn ordered_is_member(&self) -> impl FnMut(Tid) -> bool + '_ {
        let mut lookup = self.ordered_lookup();
        move |tid| lookup.is_member(tid)
    }

    fn for_each_block<F: FnMut(u32, &[u16])>(&self, _buf: &mut [u16], f: F) {
        // The store's own walk: it extracts offsets once for a run of
        // equal entries, into a buffer of its own.
        TidStore::for_each_block_offsets(self, f);
    }

    fn memory_usage(&self) -> u64 {
        TidStore::memory_usage(self) as u64
    }

    fn num_tids(&self) -> u64 {
        TidStore::num_tids(self)
    }

    fn clear(&mut self) {
        TidStore::clear(self);
    }
}

/// Allocates PostgreSQL 16's dead-tuple array for a memory `limit` on a
/// table of `total_tuples` with `tuples_per_page` tuples per page:
/// `min(limit, 1 GiB, 6 B x total_tuples)`, rounded down to whole TIDs.
/// Fails when the array cannot hold one full page, or the allocation fails.
pub fn array_with_limit(
    limit: u64,
    total_tuples: u64,
    tuples_per_page: u16,
) -> Result<DeadItemsArray, StoreError> {
    let capacity = DeadItemsArray::capacity_for(limit, total_tuples);
    let per_page = u64::from(tuples_per_page);
    if capacity < per_page.min(total_tuples) {
        return Err(StoreError::ArrayTooSmall {
            bytes: capacity * DeadItemsArray::ITEM_BYTES,
            capacity,
            per_page: tuples_per_page,
            needed: per_page * DeadItemsArray::ITEM_BYTES,
        });
    }
    let bytes = capacity * DeadItemsArray::ITEM_BYTES;
    usize::try_from(capacity)
        .ok()
        .and_then(|max_items| DeadItemsArray::with_max_items(max_items).ok())
        .ok_or(StoreError::AllocationFailed { bytes })
}

impl DeadTupleStore for DeadItemsArray {
    fn kind(&self) -> StoreKind {
        StoreKind::Array
    }

    fn has_room_for(&self, n: usize) -> bool {
        self.remaining() >= n
    }

    fn add_page(&mut self, block: u32, offsets: &[u16]) -> Result<(), StoreError> {
        Ok(self.push_block(block, offsets)?)
    }

    fn is_full(&self) -> bool {
        self.remaining() == 0
    }

    #[inline]
    fn is_member(&self, tid: Tid) -> bool {
        DeadItemsArray::is_member(self, tid)
    }

    fn for_each_block<F: FnMut(u32, &[u16])>(&self, buf: &mut [u16], mut f: F) {
        for (block, run) in self.blocks() {
            for (slot, item) in buf.iter_mut().zip(run) {
                *slot = item.tid().offset();
            }
            f(block, &buf[..run.len().min(buf.len())]);
        }
    }

    fn memory_usage(&self) -> u64 {
        self.allocated_bytes()
    }

    fn num_tids(&self) -> u64 {
        self.len() as u64
    }

    fn clear(&mut self) {
        DeadItemsArray::clear(self);
    }
}

/// A buffer large enough for any block's offsets.
pub fn offsets_buffer() -> Vec<u16> {
    vec![0; usize::from(MAX_OFFSET)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill<S: DeadTupleStore>(store: &mut S) {
        store.add_page(0, &[1, 2, 3]).unwrap();
        store.add_page(70_000, &[5]).unwrap();
        store.add_page(70_001, &[1, 9]).unwrap();
    }

    fn check<S: DeadTupleStore>(store: &S) {
        assert!(store.is_member(Tid::new(0, 2)));
        assert!(store.is_member(Tid::new(70_000, 5)));
        assert!(store.is_member(Tid::new(70_001, 9)));
        assert!(!store.is_member(Tid::new(0, 4)));
        assert!(!store.is_member(Tid::new(5, 1)));
        assert!(!store.is_member(Tid::new(70_001, 10)));
        assert!(!store.is_member(Tid::new(u32::MAX, 1)));
        assert_eq!(store.num_tids(), 6);
        let mut buf = offsets_buffer();
        let mut seen = Vec::new();
        store.for_each_block(&mut buf, |block, offsets| {
            seen.push((block, offsets.to_vec()))
        });
        assert_eq!(
            seen,
            [(0, vec![1, 2, 3]), (70_000, vec![5]), (70_001, vec![1, 9])]
        );
    }

    #[test]
    fn both_stores_agree() {
        let mut ts = TidStore::insert_only(1 << 20);
        fill(&mut ts);
        check(&ts);
        let mut array = array_with_limit(1 << 20, 1 << 30, 10).unwrap();
        fill(&mut array);
        check(&array);
        array.clear();
        assert!(!array.is_member(Tid::new(0, 2)));
        assert_eq!(array.num_tids(), 0);
    }

    #[test]
    fn array_capacity_and_fullness() {
        let mut array = array_with_limit(60, 1_000, 4).unwrap();
        assert_eq!(array.allocated_bytes(), 60);
        assert_eq!(array.memory_usage(), 60);
        array.add_page(0, &[1, 2, 3, 4]).unwrap();
        array.add_page(1, &[1, 2, 3, 4]).unwrap();
        assert!(array.has_room_for(2));
        assert!(!array.has_room_for(3));
        assert!(!array.is_full());
        array.add_page(2, &[1, 2]).unwrap();
        assert!(array.is_full());
        assert!(matches!(
            array_with_limit(30, 1_000, 6),
            Err(StoreError::ArrayTooSmall { needed: 36, .. })
        ));
        assert_eq!("array".parse::<StoreKind>(), Ok(StoreKind::Array));
        assert!("btree".parse::<StoreKind>().is_err());
    }
}
