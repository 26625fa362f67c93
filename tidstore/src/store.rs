//! The store: a radix tree from block number to [`BlockEntry`].

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use radix_core::Spans;
use radix_core::mem::MemoryOptions;

use crate::entry::{BlockEntry, EntryBuf, Offsets};
use crate::error::TidStoreError;
use crate::table::{BlockTable, BlockTableConfig, BlockTableIter};
use crate::tid::{MAX_OFFSET, Tid};

/// Dead tuple identifiers, grouped by block, in a memory-bounded radix tree.
///
/// This is the structure lazy vacuum fills while scanning the heap and then
/// asks, once per index entry, "is this TID dead?". It holds a block's dead
/// offsets in one entry: up to three offsets, or one contiguous run, inline
/// in the tree's slot; otherwise a bitmap. Its memory grows with the data
/// (a sorted array of 6-byte TIDs must be sized up front), and
/// [`is_full`](Self::is_full) tells the caller when it has passed its
/// budget.
///
/// ```
/// use tidstore::{Tid, TidStore, TidStoreError};
///
/// let mut ts = TidStore::insert_only(64 << 20);
/// ts.set_block_offsets(42, &[1, 7, 200])?;
/// assert!(ts.is_member(Tid::new(42, 7)));
/// assert!(!ts.is_member(Tid::new(42, 8)));
/// assert!(!ts.is_full());
/// for block in ts.iter() {
///     assert_eq!(block.block(), 42);
///     assert_eq!(block.offsets().collect::<Vec<_>>(), [1, 7, 200]);
/// }
/// assert_eq!(
///     ts.set_block_offsets(43, &[3, 2]),
///     Err(TidStoreError::NotAscending { block: 43, previous: 3, offset: 2 })
/// );
/// # Ok::<(), TidStoreError>(())
/// ```
pub struct TidStore {
    table: BlockTable,
    max_bytes: usize,
    num_tids: u64,
}

impl TidStore {
    /// An empty store with budget `max_bytes`, whose entries may be replaced
    /// and reclaimed.
    ///
    /// `max_bytes` is what [`is_full`](Self::is_full) compares with; it also
    /// caps the allocation block at `max_bytes / 16`, so that one large block
    /// cannot overshoot the budget.
    pub fn new(max_bytes: usize) -> Self {
        Self::with_options(MemoryOptions::new().block_limit(max_bytes / 16), max_bytes)
    }

    /// An empty store for an insert-only pass, as vacuum's: entries come
    /// from bump arenas with no per-entry allocator header. Replacing a
    /// block's entry is still correct; the old entry's space is simply not
    /// reused until [`clear`](Self::clear).
    pub fn insert_only(max_bytes: usize) -> Self {
        let options = MemoryOptions::new()
            .block_limit(max_bytes / 16)
            .insert_only();
        Self::with_options(options, max_bytes)
    }

    fn with_options(options: MemoryOptions, max_bytes: usize) -> Self {
        Self {
            table: BlockTable::with_options(options),
            max_bytes,
            num_tids: 0,
        }
    }

    /// Sets the dead offsets of `block`, replacing any it had.
    ///
    /// `offsets` must be non-empty, strictly ascending, and within
    /// `1..=2048`. Otherwise the call returns an error saying which rule
    /// was broken and the store is unchanged.
    pub fn set_block_offsets(&mut self, block: u32, offsets: &[u16]) -> Result<(), TidStoreError> {
        validate(block, offsets)?;
        let mut old = 0;
        let mut buf = EntryBuf::new();
        self.table
            .insert_with_old(block, buf.encode(offsets), |entry| old = entry.len());
        self.num_tids = self.num_tids - old as u64 + offsets.len() as u64;
        Ok(())
    }

    /// Whether `tid` is in the store.
    #[inline]
    pub fn is_member(&self, tid: Tid) -> bool {
        self.table
            .get(tid.block())
            .is_some_and(|entry| entry.contains(tid.offset()))
    }

    /// [`is_member`](Self::is_member) for every TID of `tids`, in order,
    /// giving `found` each TID with its answer.
    ///
    /// The answers are `is_member`'s; the batch is faster. On a store of
    /// over 1 MiB it walks each block's path a few TIDs ahead and
    /// prefetches its entry, so that the cache misses of random probes
    /// overlap (a third to a half less time on the shuffled TS workloads,
    /// `benches/RESULTS.md`), and TIDs of neighbouring blocks share the
    /// walk. A smaller store, given at least 144 TIDs, reads its tree's
    /// root from a table built for the call (0.6 to 0.75 of the time on
    /// the sparse TS-1, TS-7 and TS-S shapes). An index pass that reads a
    /// page of index tuples at a time asks for the page's TIDs in one
    /// call.
    ///
    /// ```
    /// use tidstore::{Tid, TidStore};
    ///
    /// let mut ts = TidStore::insert_only(64 << 20);
    /// ts.set_block_offsets(7, &[2, 3])?;
    /// let index_page = [Tid::new(7, 1), Tid::new(7, 3), Tid::new(900, 3)];
    /// let mut dead = Vec::new();
    /// ts.is_member_each(&index_page, |tid, is_dead| {
    ///     if is_dead {
    ///         dead.push(tid);
    ///     }
    /// });
    /// assert_eq!(dead, [Tid::new(7, 3)]);
    /// # Ok::<(), tidstore::TidStoreError>(())
    /// ```
    pub fn is_member_each(&self, tids: &[Tid], mut found: impl FnMut(Tid, bool)) {
        self.table.get_each(
            tids,
            |tid| tid.block(),
            |&tid, entry| found(tid, entry.is_some_and(|entry| entry.contains(tid.offset()))),
        );
    }

    /// The blocks in ascending order, each with its offsets.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            inner: self.table.iter(),
        }
    }

    /// The blocks in ascending order, grouped into runs of consecutive
    /// blocks with the same dead offsets, as the store keeps them: a heap
    /// pass extracts a run's offsets once for all its blocks. Each aligned
    /// block of 256 (65,536, ...) equal entries is one run; a run may be
    /// followed by another with the same offsets, and a block on its own
    /// is a run of one.
    ///
    /// ```
    /// use tidstore::TidStore;
    ///
    /// let mut ts = TidStore::insert_only(64 << 20);
    /// for block in 0..300 {
    ///     ts.set_block_offsets(block, &[1, 2, 3, 4])?;
    /// }
    /// ts.set_block_offsets(300, &[9])?;
    /// let mut buf = [0u16; tidstore::MAX_OFFSET as usize];
    /// let mut dead = 0;
    /// for run in ts.runs() {
    ///     let n = run.copy_offsets(&mut buf);
    ///     for block in run.blocks() {
    ///         dead += n; // vacuum `block`'s offsets `buf[..n]`
    ///     }
    /// }
    /// assert_eq!(dead, 1201);
    /// assert_eq!(ts.runs().next().unwrap().blocks(), 0..=255);
    /// # Ok::<(), tidstore::TidStoreError>(())
    /// ```
    pub fn runs(&self) -> Runs<'_> {
        Runs {
            inner: self.table.spans(),
        }
    }

    /// Calls `f` with each block, ascending, and its dead offsets,
    /// ascending: the heap pass of a vacuum. The offsets are extracted
    /// once for each run of blocks (see [`runs`](Self::runs)), and not
    /// again while the next runs hold the same ones (every page of a table
    /// with the same dead tuples, not only consecutive ones).
    ///
    /// ```
    /// use tidstore::TidStore;
    ///
    /// let mut ts = TidStore::insert_only(64 << 20);
    /// ts.set_block_offsets(3, &[1, 2])?;
    /// ts.set_block_offsets(9, &[1, 2])?;
    /// ts.set_block_offsets(12, &[5])?;
    /// let mut seen = Vec::new();
    /// ts.for_each_block_offsets(|block, offsets| seen.push((block, offsets.to_vec())));
    /// assert_eq!(seen, [(3, vec![1, 2]), (9, vec![1, 2]), (12, vec![5])]);
    /// # Ok::<(), tidstore::TidStoreError>(())
    /// ```
    pub fn for_each_block_offsets(&self, mut f: impl FnMut(u32, &[u16])) {
        let mut buf = [0u16; MAX_OFFSET as usize];
        let mut extracted: Option<(&BlockEntry, usize)> = None;
        for (blocks, entry) in self.table.spans() {
            let n = match extracted {
                Some((last, n)) if last.same_offsets(entry) => n,
                _ => {
                    let n = entry.copy_into(&mut buf);
                    extracted = Some((entry, n));
                    n
                }
            };
            for block in blocks {
                f(block, &buf[..n]);
            }
        }
    }

    /// Bytes the store holds from the allocator: tree nodes and entries.
    pub fn memory_usage(&self) -> usize {
        self.table.memory_usage()
    }

    /// The budget given at construction.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Whether [`memory_usage`](Self::memory_usage) has passed
    /// [`max_bytes`](Self::max_bytes): for vacuum, time for an index pass.
    pub fn is_full(&self) -> bool {
        self.memory_usage() > self.max_bytes
    }

    /// Number of blocks with dead offsets.
    pub fn num_blocks(&self) -> usize {
        self.table.len()
    }

    /// Number of TIDs in the store.
    pub fn num_tids(&self) -> u64 {
        self.num_tids
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Checks the store's invariants: the tree's (see
    /// [`radix_core::RawTree::verify`]), every entry in the smallest form
    /// for its offsets, and [`num_tids`](Self::num_tids) equal to the
    /// offsets stored. It walks everything, so it is for tests and fuzzing.
    ///
    /// # Errors
    ///
    /// A description of the first broken invariant found.
    pub fn verify(&self) -> Result<(), String> {
        self.table.verify()?;
        verify_entries(self.table.iter(), self.num_tids)
    }

    /// The tree of entries.
    pub(crate) fn table(&self) -> &BlockTable {
        &self.table
    }

    /// Replaces every entry with `table`'s, which hold `num_tids` offsets.
    pub(crate) fn replace_contents(&mut self, table: BlockTable, num_tids: u64) {
        self.table = table;
        self.num_tids = num_tids;
    }

    /// Removes everything and returns all memory.
    pub fn clear(&mut self) {
        self.table.clear();
        self.num_tids = 0;
    }
}

/// Checks every entry's form and that they hold `num_tids` offsets: the
/// store-level half of `verify`, for local and shared stores.
pub(crate) fn verify_entries<'a>(
    entries: impl Iterator<Item = (u32, &'a BlockEntry)>,
    num_tids: u64,
) -> Result<(), String> {
    let mut tids = 0u64;
    for (block, entry) in entries {
        entry.check().map_err(|e| format!("block {block}: {e}"))?;
        tids += entry.len() as u64;
    }
    if tids != num_tids {
        return Err(format!(
            "num_tids is {num_tids} but the entries hold {tids}"
        ));
    }
    Ok(())
}

/// Checks the `set_block_offsets` contract.
pub(crate) fn validate(block: u32, offsets: &[u16]) -> Result<(), TidStoreError> {
    // Strictly ascending from at least 1 up to at most `MAX_OFFSET` puts
    // every offset in range, so only the order needs every pair. Past
    // three offsets (the inline entries' lengths, compared directly), a
    // fold with no early exit, which the compiler turns into vector
    // compares: the loop below took 12 instructions an offset, most of a
    // TS-4 load's time. That loop finds the first fault for the error.
    if let (Some(&first), Some(&last)) = (offsets.first(), offsets.last()) {
        let ascending = match *offsets {
            [_] => true,
            [a, b] => a < b,
            [a, b, c] => (a < b) & (b < c),
            _ => {
                let pairs = offsets.iter().zip(&offsets[1..]);
                pairs.fold(true, |ascending, (a, b)| ascending & (a < b))
            }
        };
        if first != 0 && last <= MAX_OFFSET && ascending {
            return Ok(());
        }
    }
    first_fault(block, offsets)
}

/// What is wrong with `offsets`, which [`validate`] found at fault: the
/// first offset out of range or out of order, or their absence.
#[cold]
fn first_fault(block: u32, offsets: &[u16]) -> Result<(), TidStoreError> {
    let mut previous = None;
    for &offset in offsets {
        if offset == 0 || offset > MAX_OFFSET {
            return Err(TidStoreError::OffsetOutOfRange { block, offset });
        }
        if let Some(previous) = previous.filter(|&p| p >= offset) {
            return Err(TidStoreError::NotAscending {
                block,
                previous,
                offset,
            });
        }
        previous = Some(offset);
    }
    if previous.is_none() {
        return Err(TidStoreError::NoOffsets { block });
    }
    Ok(())
}

impl fmt::Debug for TidStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TidStore")
            .field("blocks", &self.num_blocks())
            .field("tids", &self.num_tids)
            .field("memory_usage", &self.memory_usage())
            .field("max_bytes", &self.max_bytes)
            .field(
                "insert_only",
                &self.table.as_raw().memory().is_insert_only(),
            )
            .finish()
    }
}

impl FromIterator<Tid> for TidStore {
    /// Collects TIDs in any order, grouping them by block. Duplicates are
    /// kept once. The store's budget is unlimited.
    ///
    /// # Panics
    ///
    /// If a TID's offset is 0 or above 2048; use
    /// [`TidStore::set_block_offsets`] to get an error instead.
    fn from_iter<I: IntoIterator<Item = Tid>>(tids: I) -> Self {
        let mut tids: Vec<Tid> = tids.into_iter().collect();
        tids.sort_unstable();
        tids.dedup();
        let mut store = TidStore::new(usize::MAX);
        let mut offsets = Vec::new();
        for group in tids.chunk_by(|a, b| a.block() == b.block()) {
            offsets.clear();
            offsets.extend(group.iter().map(|t| t.offset()));
            if let Err(e) = store.set_block_offsets(group[0].block(), &offsets) {
                panic!("cannot collect TIDs: {e}");
            }
        }
        store
    }
}

impl<'a> IntoIterator for &'a TidStore {
    type Item = DeadBlock<'a>;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// Defines an iterator over a store's blocks: a thin wrapper around a tree
/// iterator, one type per kind of store so that each compiles to its own
/// loop.
macro_rules! block_iter {
    ($(#[$doc:meta])* $name:ident, $tree_iter:ty) => {
        $(#[$doc])*
        pub struct $name<'a> {
            pub(crate) inner: $tree_iter,
        }

        impl<'a> Iterator for $name<'a> {
            type Item = DeadBlock<'a>;

            #[inline]
            fn next(&mut self) -> Option<DeadBlock<'a>> {
                self.inner
                    .next()
                    .map(|(block, entry)| DeadBlock { block, entry })
            }

            fn size_hint(&self) -> (usize, Option<usize>) {
                self.inner.size_hint()
            }
        }

        impl ExactSizeIterator for $name<'_> {}
    };
}
#[cfg(all(feature = "shm", target_os = "linux"))]
pub(crate) use block_iter;

block_iter!(
    /// The blocks of a [`TidStore`] in ascending order.
    Iter,
    BlockTableIter<'a>
);

/// One block of a [`TidStore`] and its dead offsets.
#[derive(Clone, Copy)]
pub struct DeadBlock<'a> {
    pub(crate) block: u32,
    pub(crate) entry: &'a BlockEntry,
}

impl<'a> DeadBlock<'a> {
    /// The block number.
    pub fn block(&self) -> u32 {
        self.block
    }

    /// The dead offsets, ascending.
    pub fn offsets(&self) -> BlockOffsets<'a> {
        BlockOffsets(self.entry.offsets())
    }

    /// Number of dead offsets.
    pub fn len(&self) -> usize {
        self.entry.len()
    }

    /// Always false: a stored block has at least one offset.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Copies the offsets, ascending, into `buf` and returns how many the
    /// block has. When that is more than `buf.len()`, only the first
    /// `buf.len()` were copied, and the caller may retry with a buffer of
    /// the returned size (as PostgreSQL's `TidStoreGetBlockOffsets` does).
    #[inline]
    pub fn copy_offsets(&self, buf: &mut [u16]) -> usize {
        self.entry.copy_into(buf)
    }
}

impl fmt::Debug for DeadBlock<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeadBlock")
            .field("block", &self.block)
            .field("form", &self.entry.form())
            .field("offsets", &self.offsets().collect::<Vec<_>>())
            .finish()
    }
}

/// The runs of a [`TidStore`]'s blocks in ascending order: see
/// [`TidStore::runs`].
pub struct Runs<'a> {
    inner: Spans<'a, BlockTableConfig>,
}

impl<'a> Iterator for Runs<'a> {
    type Item = DeadRun<'a>;

    #[inline]
    fn next(&mut self) -> Option<DeadRun<'a>> {
        self.inner.next().map(|(blocks, entry)| DeadRun {
            first: *blocks.start(),
            last: *blocks.end(),
            entry,
        })
    }
}

impl core::iter::FusedIterator for Runs<'_> {}

impl fmt::Debug for Runs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runs").finish_non_exhaustive()
    }
}

/// Consecutive blocks of a [`TidStore`] with the same dead offsets.
#[derive(Clone, Copy)]
pub struct DeadRun<'a> {
    first: u32,
    last: u32,
    entry: &'a BlockEntry,
}

impl<'a> DeadRun<'a> {
    /// The blocks, ascending.
    pub fn blocks(&self) -> core::ops::RangeInclusive<u32> {
        self.first..=self.last
    }

    /// The dead offsets of each of the blocks, ascending.
    pub fn offsets(&self) -> BlockOffsets<'a> {
        BlockOffsets(self.entry.offsets())
    }

    /// Number of dead offsets on each of the blocks.
    pub fn len(&self) -> usize {
        self.entry.len()
    }

    /// Always false: a stored block has at least one offset.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Copies each block's offsets, ascending, into `buf`, as
    /// [`DeadBlock::copy_offsets`] does.
    #[inline]
    pub fn copy_offsets(&self, buf: &mut [u16]) -> usize {
        self.entry.copy_into(buf)
    }
}

impl fmt::Debug for DeadRun<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeadRun")
            .field("blocks", &self.blocks())
            .field("form", &self.entry.form())
            .field("offsets", &self.offsets().collect::<Vec<_>>())
            .finish()
    }
}

/// The dead offsets of one block, ascending.
pub struct BlockOffsets<'a>(Offsets<'a>);

impl Iterator for BlockOffsets<'_> {
    type Item = u16;

    #[inline]
    fn next(&mut self) -> Option<u16> {
        self.0.next()
    }
}

#[cfg(test)]
mod tests {
    //! Small enough for Miri, which checks the entries' raw encoding and
    //! the tree underneath.

    use super::*;

    #[test]
    fn validate_finds_the_same_first_fault_as_the_plain_loop() {
        // Every slice of up to four offsets over values around both
        // ends of the range, then longer runs with one fault placed
        // anywhere: the fast check must agree with `first_fault`, the
        // plain loop, on what it accepts and on the error it names.
        let values = [0, 1, 2, 3, MAX_OFFSET - 1, MAX_OFFSET, MAX_OFFSET + 1];
        let mut slices: Vec<Vec<u16>> = vec![vec![]];
        for len in 1..=4 {
            let mut next = Vec::new();
            for s in slices.iter().filter(|s| s.len() == len - 1) {
                for &v in &values {
                    let mut longer = s.clone();
                    longer.push(v);
                    next.push(longer);
                }
            }
            slices.extend(next);
        }
        for len in [5, 9, 17, 40] {
            let run: Vec<u16> = (1..=len).collect();
            slices.push(run.clone());
            for at in 0..run.len() {
                for bad in [0, run[at], run[at] - 1, MAX_OFFSET + 1] {
                    let mut faulty = run.clone();
                    faulty[at] = bad;
                    slices.push(faulty);
                }
            }
        }
        for offsets in &slices {
            assert_eq!(validate(7, offsets), first_fault(7, offsets), "{offsets:?}");
        }
    }

    fn stores() -> [TidStore; 2] {
        [TidStore::new(1 << 20), TidStore::insert_only(1 << 20)]
    }

    fn contents(ts: &TidStore) -> Vec<(u32, Vec<u16>)> {
        ts.iter()
            .map(|b| (b.block(), b.offsets().collect()))
            .collect()
    }

    #[test]
    fn every_form_is_stored_replaced_and_found() {
        let run: Vec<u16> = (100..=300).collect();
        let forms: [&[u16]; 5] = [&[1], &[1, 2, 3], &[5, 6, 7, 8], &run, &[2, 64, 65, 2048]];
        for mut ts in stores() {
            for (i, offsets) in forms.iter().enumerate() {
                ts.set_block_offsets(i as u32 * 300, offsets).unwrap();
            }
            ts.set_block_offsets(u32::MAX, &[2048]).unwrap();
            ts.verify().unwrap();
            // Replace every block with the next form: each transition.
            for (i, _) in forms.iter().enumerate() {
                let next = forms[(i + 1) % forms.len()];
                ts.set_block_offsets(i as u32 * 300, next).unwrap();
            }
            ts.verify().unwrap();
            let mut expected: Vec<(u32, Vec<u16>)> = (0..forms.len())
                .map(|i| (i as u32 * 300, forms[(i + 1) % forms.len()].to_vec()))
                .collect();
            expected.push((u32::MAX, vec![2048]));
            assert_eq!(contents(&ts), expected);
            let total: usize = expected.iter().map(|(_, o)| o.len()).sum();
            assert_eq!(ts.num_tids(), total as u64);
            for (block, offsets) in &expected {
                // Every offset and its neighbours, and both ends (the entry
                // tests probe every offset; this is sized for Miri).
                let probes = offsets.iter().flat_map(|&o| [o - 1, o, o + 1]);
                for o in probes.chain([0, MAX_OFFSET, MAX_OFFSET + 1]) {
                    let member = offsets.binary_search(&o).is_ok();
                    assert_eq!(ts.is_member(Tid::new(*block, o)), member);
                }
                assert!(!ts.is_member(Tid::new(block ^ 1, offsets[0])));
            }
            ts.clear();
            assert_eq!((ts.num_tids(), ts.memory_usage()), (0, 0));
            ts.verify().unwrap();
        }
    }

    #[test]
    fn rejected_offsets_change_nothing() {
        for mut ts in stores() {
            ts.set_block_offsets(9, &[1, 2, 200]).unwrap();
            let before = (contents(&ts), ts.num_tids(), ts.memory_usage());
            for bad in [
                &[][..],
                &[0],
                &[2049],
                &[3, 3],
                &[5, 4],
                &[1, 2, 3, 4, 5, 0],
            ] {
                assert!(ts.set_block_offsets(9, bad).is_err(), "{bad:?}");
                assert!(ts.set_block_offsets(10, bad).is_err(), "{bad:?}");
            }
            assert_eq!((contents(&ts), ts.num_tids(), ts.memory_usage()), before);
            ts.verify().unwrap();
        }
    }

    #[test]
    fn copy_offsets_reports_the_size_needed() {
        let ts: TidStore = [
            Tid::new(3, 10),
            Tid::new(3, 1),
            Tid::new(3, 500),
            Tid::new(3, 7),
        ]
        .into_iter()
        .collect();
        let block = ts.iter().next().unwrap();
        let mut small = [0u16; 2];
        assert_eq!(block.copy_offsets(&mut small), 4);
        assert_eq!(small, [1, 7]);
        let mut exact = [0u16; 4];
        assert_eq!(block.copy_offsets(&mut exact), 4);
        assert_eq!(exact, [1, 7, 10, 500]);
    }

    #[test]
    fn every_form_copies_what_its_offsets_yield_into_any_buffer() {
        let run: Vec<u16> = (100..=300).collect();
        let forms: [&[u16]; 6] = [
            &[1],
            &[1, 2, 3],
            &[7, 900, 2048],
            &[5, 6, 7, 8],
            &run,
            &[2, 64, 65, 2048],
        ];
        for (i, offsets) in forms.iter().enumerate() {
            let mut ts = TidStore::insert_only(1 << 20);
            ts.set_block_offsets(i as u32, offsets).unwrap();
            let block = ts.iter().next().unwrap();
            for size in [0, 1, 3, offsets.len(), MAX_OFFSET as usize] {
                let mut buf = vec![0u16; size];
                assert_eq!(block.copy_offsets(&mut buf), offsets.len());
                let fits = size.min(offsets.len());
                assert_eq!(buf[..fits], offsets[..fits], "{offsets:?} into {size}");
                assert!(
                    buf[fits..].iter().all(|&o| o == 0),
                    "written past the offsets"
                );
            }
        }
    }

    #[test]
    fn runs_and_the_heap_pass_see_every_block_as_iter_does() {
        // Runs of equal entries (ranges of 256 and 65,536 blocks once
        // aligned), equal entries apart, and each form between them.
        let bitmap: &[u16] = &[2, 64, 65, 2048];
        let spans: [(u32, u32, &[u16]); 6] = [
            (0, 300, &[1, 2, 3, 4]),
            (301, 301, &[9]),
            (305, 305, &[1, 2, 3, 4]),
            (512, 1023, bitmap),
            (1024, 1030, &[7, 900, 2048]),
            (1031, 1031, bitmap),
        ];
        let mut ts = TidStore::insert_only(1 << 20);
        for &(first, last, offsets) in &spans {
            for block in first..=last {
                ts.set_block_offsets(block, offsets).unwrap();
            }
        }
        let expected = contents(&ts);
        let mut from_runs = Vec::new();
        let mut buf = [0u16; MAX_OFFSET as usize];
        for run in ts.runs() {
            let n = run.copy_offsets(&mut buf);
            assert_eq!(n, run.len());
            assert_eq!(buf[..n], run.offsets().collect::<Vec<_>>());
            for block in run.blocks() {
                from_runs.push((block, buf[..n].to_vec()));
            }
        }
        assert_eq!(from_runs, expected);
        assert_eq!(ts.runs().next().unwrap().blocks(), 0..=255);
        assert!(ts.runs().any(|r| r.blocks() == (512..=767)));
        let mut from_pass = Vec::new();
        ts.for_each_block_offsets(|block, offsets| from_pass.push((block, offsets.to_vec())));
        assert_eq!(from_pass, expected);
    }
}
