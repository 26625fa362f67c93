//! The lazy-vacuum loop and its per-phase timing.
//!
//! 1. **Heap scan**: page by page, the page's dead offsets go into the
//!    store. Before a page, the array checks that the page's dead tuples
//!    fit (PostgreSQL 16); after a page, the store is asked
//!    [`is_full`](DeadTupleStore::is_full) (for the TID store: memory usage
//!    above the limit, PostgreSQL 17). Either way, the scan stops for a
//!    *round*:
//! 2. **Index passes**: for every index, one `is_member` per index entry,
//!    in that index's order (see [`crate::order`]).
//! 3. **Heap pass**: iterate the store in block order and extract each
//!    block's offsets (what `lazy_vacuum_heap_rel` does to mark them
//!    unused); then clear the store.
//!
//! The scan then resumes; when it ends, a store still holding TIDs gets a
//! final round. *Index passes* counts rounds (each round scans every
//! index once), as PostgreSQL's `index_scans` does.

use std::hint::black_box;
use std::ops::Range;
use std::time::{Duration, Instant};

use tidstore::{Tid, TidStore};

pub use crate::error::VacuumError;
use crate::heap::{Heap, splitmix64_at};
use crate::order::{IndexOrder, RandomOrder};
use crate::progress::{Phase, Progress};
use crate::scenario::{Scenario, group};
use crate::store::{DeadTupleStore, StoreKind, array_with_limit, offsets_buffer};
use crate::trace::MemoryTrace;

/// Index entries between two progress updates.
const CHUNK: u64 = 1 << 16;

/// A failed correctness check: the store lost or invented dead TIDs.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// The index passes' hits, summed over all passes and indexes, differ
    /// from dead TIDs × indexes.
    #[error(
        "{store}: the index passes found {found} dead TIDs, but {dead} were deleted \
         and there are {indexes} indexes, so {expected} were expected"
    )]
    Found {
        /// The store.
        store: StoreKind,
        /// Hits over all passes and indexes.
        found: u64,
        /// Dead TIDs in the heap.
        dead: u64,
        /// Number of indexes.
        indexes: usize,
        /// `dead × indexes`.
        expected: u64,
    },
    /// One index's hits, summed over all passes, differ from the dead TIDs.
    #[error("{store}: index {index} ({order}) found {found} dead TIDs, but {dead} were deleted")]
    PerIndex {
        /// The store.
        store: StoreKind,
        /// The index's position (from 1).
        index: usize,
        /// Its order.
        order: IndexOrder,
        /// Its hits over all passes.
        found: u64,
        /// Dead TIDs in the heap.
        dead: u64,
    },
    /// In one round, an index's hits differ from the TIDs the store held.
    #[error(
        "{store}: in index pass {pass}, index {index} found {found} dead TIDs, \
         but the store held {held}"
    )]
    Round {
        /// The store.
        store: StoreKind,
        /// The round (from 1).
        pass: u32,
        /// The index's position (from 1).
        index: usize,
        /// Hits in that round.
        found: u64,
        /// TIDs the store held.
        held: u64,
    },
    /// The heap scan collected a different number of dead TIDs than the
    /// pattern deletes.
    #[error("{store}: the heap scan collected {collected} dead TIDs, but {dead} were deleted")]
    Collected {
        /// The store.
        store: StoreKind,
        /// TIDs added to the store over the scan.
        collected: u64,
        /// Dead TIDs in the heap.
        dead: u64,
    },
    /// The heap passes extracted a different number of TIDs.
    #[error("{store}: the heap passes vacuumed {vacuumed} dead TIDs, but {dead} were deleted")]
    HeapPass {
        /// The store.
        store: StoreKind,
        /// Offsets extracted over all heap passes.
        vacuumed: u64,
        /// Dead TIDs in the heap.
        dead: u64,
    },
}

/// What one vacuum run with one store measured.
#[derive(Clone, Debug)]
pub struct VacuumStats {
    /// The store.
    pub store: StoreKind,
    /// The indexes, in pass order.
    pub indexes: Vec<IndexOrder>,
    /// Rounds of index passes (each scans every index once).
    pub index_passes: u32,
    /// The most memory the store held, sampled after every page; for the
    /// array, its allocation.
    pub peak_bytes: u64,
    /// Dead tuples in the heap: the number deleted, from the dead pattern.
    pub dead_tids: u64,
    /// Dead TIDs the heap scan put into the store.
    pub collected: u64,
    /// `is_member` hits for each index, summed over all passes.
    pub found_per_index: Vec<u64>,
    /// `is_member` hits over all passes of all indexes: must equal
    /// `dead_tids × indexes`.
    pub found: u64,
    /// Offsets the heap passes extracted: must equal `dead_tids`.
    pub heap_vacuumed: u64,
    /// The first round whose hits did not match the store's contents.
    pub round_error: Option<CheckError>,
    /// Time scanning the heap and filling the store.
    pub heap_scan: Duration,
    /// Time in index passes.
    pub index: Duration,
    /// Time in heap passes, including clearing the store.
    pub heap_vacuum: Duration,
    /// Wall time of the whole run, from creating the store.
    pub total: Duration,
    /// For the shared store, how its index passes ran in worker processes
    /// (`None` for the stores that run everything in this process).
    pub workers: Option<WorkerSummary>,
    /// The store's memory over the heap scan and where each round of index
    /// passes ran (for `--plot`).
    pub memory: MemoryTrace,
}

/// How the shared store's phases ran in worker processes: `count` per
/// heap-scan stretch and per index pass, each given a contiguous share of
/// the pages or of the index's entries.
///
/// The durations profile where [`VacuumStats::index`] went. For each index
/// pass they take the slowest worker's, and add those up over the passes;
/// the start-up and attach parts are measured with the system clock across
/// processes, so they are accurate to a few microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WorkerSummary {
    /// Worker processes per index pass.
    pub count: usize,
    /// Index-pass worker processes started over the whole run.
    pub launched: u64,
    /// Heap-scan worker processes started over the whole run (`count` per
    /// stretch of the scan between two rounds).
    pub scan_launched: u64,
    /// From asking the system for the process to the worker's `main`:
    /// `fork`, `exec`, loading the program.
    pub start: Duration,
    /// Parsing the arguments, attaching to the shared store and taking the
    /// read lock.
    pub attach: Duration,
    /// The lookups themselves (including computing the random order's
    /// positions).
    pub lookups: Duration,
    /// From the slowest worker's last lookup to the leader having reaped
    /// every worker and summed their counts.
    pub finish: Duration,
}

impl VacuumStats {
    /// `dead_tids × indexes`: what `found` must be.
    pub fn expected_found(&self) -> u64 {
        self.dead_tids * self.indexes.len() as u64
    }

    /// Peak bytes divided by dead TIDs (`None` when nothing is dead).
    pub fn bytes_per_dead_tid(&self) -> Option<f64> {
        (self.dead_tids > 0).then(|| self.peak_bytes as f64 / self.dead_tids as f64)
    }

    /// The correctness check: every index found every deleted TID exactly
    /// once over the run, each round's hits matched the store, and the
    /// heap scan and heap passes saw every deleted TID.
    pub fn check(&self) -> Result<(), CheckError> {
        let store = self.store;
        let dead = self.dead_tids;
        if self.found != self.expected_found() {
            return Err(CheckError::Found {
                store,
                found: self.found,
                dead,
                indexes: self.indexes.len(),
                expected: self.expected_found(),
            });
        }
        for (i, (&found, &order)) in self.found_per_index.iter().zip(&self.indexes).enumerate() {
            if found != dead {
                return Err(CheckError::PerIndex {
                    store,
                    index: i + 1,
                    order,
                    found,
                    dead,
                });
            }
        }
        if let Some(error) = &self.round_error {
            return Err(error.clone());
        }
        if self.collected != dead {
            return Err(CheckError::Collected {
                store,
                collected: self.collected,
                dead,
            });
        }
        if self.heap_vacuumed != dead {
            return Err(CheckError::HeapPass {
                store,
                vacuumed: self.heap_vacuumed,
                dead,
            });
        }
        Ok(())
    }
}

/// Runs the scenario with a fresh store of `kind` ([`StoreKind::TidStore`]
/// or [`StoreKind::Array`]; the shared store needs worker processes and
/// runs through `shared::run_shared`).
pub fn run(
    scenario: &Scenario,
    kind: StoreKind,
    progress: &Progress,
) -> Result<VacuumStats, VacuumError> {
    scenario.validate()?;
    let heap = scenario.heap();
    let dead = heap.count_dead();
    let limit = scenario.limit;
    let started = Instant::now();
    match kind {
        StoreKind::TidStore => {
            // validate() checked that the limit fits in a usize.
            let max_bytes = usize::try_from(limit).unwrap_or(usize::MAX);
            let mut store = TidStore::insert_only(max_bytes);
            simulate(scenario, &heap, dead, &mut store, started, progress)
        }
        StoreKind::Array => {
            let mut store = array_with_limit(limit, heap.num_tuples(), heap.tuples_per_page())?;
            simulate(scenario, &heap, dead, &mut store, started, progress)
        }
        StoreKind::Shared => Err(VacuumError::NeedsWorkers),
    }
}

/// The order of index `j` of `scenario` over its `n` entries: `None` for a
/// correlated index, the permutation for a random one. Random index `j`
/// gets its own seed derived from the scenario's, the same for every store
/// and in every process (the shared store's workers call this too).
pub fn index_order(scenario: &Scenario, j: usize, n: u64) -> Option<RandomOrder> {
    match scenario.indexes.get(j)? {
        IndexOrder::Correlated => None,
        IndexOrder::Random => Some(RandomOrder::new(
            n,
            splitmix64_at(scenario.seed, 1_000 + j as u64),
        )),
    }
}

/// The index orders of a run, by [`index_order`].
fn index_orders(scenario: &Scenario, n: u64) -> Vec<Option<RandomOrder>> {
    (0..scenario.indexes.len())
        .map(|j| index_order(scenario, j, n))
        .collect()
}

/// A store as the vacuum loop drives it. [`InProcess`] wraps a
/// [`DeadTupleStore`] and runs the index passes in this process; the shared
/// store runs them in worker processes, and may fail where a local store
/// cannot (its locks, its workers).
pub(crate) trait Vacuumable {
    /// Which store this is.
    fn kind(&self) -> StoreKind;

    /// As [`DeadTupleStore::has_room_for`].
    fn has_room_for(&self, n: usize) -> bool;

    /// As [`DeadTupleStore::add_page`].
    fn add_page(&mut self, block: u32, offsets: &[u16]) -> Result<(), VacuumError>;

    /// As [`DeadTupleStore::is_full`].
    fn is_full(&self) -> bool;

    /// How many worker processes scan the heap at once, or `None` if this
    /// process scans it, page by page through
    /// [`add_page`](Vacuumable::add_page).
    fn heap_scan_workers(&self) -> Option<usize>;

    /// Scans each of `ranges` of pages in a worker of its own, all at
    /// once: for each range, the pages its worker scanned (all of them, or
    /// up to the one that filled the store) and the dead TIDs it added.
    /// Called only when [`heap_scan_workers`](Vacuumable::heap_scan_workers)
    /// says there are workers.
    fn scan_pages(&mut self, ranges: &[Range<u32>]) -> Result<Vec<(u32, u64)>, VacuumError>;

    /// As [`DeadTupleStore::memory_usage`].
    fn memory_usage(&self) -> u64;

    /// As [`DeadTupleStore::num_tids`].
    fn num_tids(&self) -> u64;

    /// One index pass over index `j` (its order is `permutation`, `None`
    /// for a correlated index): the number of entries found dead.
    fn index_pass(
        &mut self,
        heap: &Heap,
        j: usize,
        permutation: Option<&RandomOrder>,
        phase: &mut Phase,
    ) -> Result<u64, VacuumError>;

    /// The heap pass: as [`DeadTupleStore::for_each_block`].
    fn heap_pass<F: FnMut(u32, &[u16])>(
        &mut self,
        buf: &mut [u16],
        f: F,
    ) -> Result<(), VacuumError>;

    /// As [`DeadTupleStore::clear`].
    fn clear(&mut self) -> Result<(), VacuumError>;
}

/// A local store, its index passes run in this process.
struct InProcess<'s, S>(&'s mut S);

impl<S: DeadTupleStore> Vacuumable for InProcess<'_, S> {
    fn kind(&self) -> StoreKind {
        self.0.kind()
    }

    fn has_room_for(&self, n: usize) -> bool {
        self.0.has_room_for(n)
    }

    fn add_page(&mut self, block: u32, offsets: &[u16]) -> Result<(), VacuumError> {
        Ok(self.0.add_page(block, offsets)?)
    }

    fn is_full(&self) -> bool {
        self.0.is_full()
    }

    fn memory_usage(&self) -> u64 {
        self.0.memory_usage()
    }

    fn num_tids(&self) -> u64 {
        self.0.num_tids()
    }

    fn index_pass(
        &mut self,
        heap: &Heap,
        _j: usize,
        permutation: Option<&RandomOrder>,
        phase: &mut Phase,
    ) -> Result<u64, VacuumError> {
        let store = &*self.0;
        let entries = 0..heap.num_tuples();
        let tpp = heap.tuples_per_page();
        Ok(match permutation {
            None => correlated_pass(store.ordered_is_member(), tpp, entries, phase),
            Some(permutation) => random_pass(
                |tids| store.count_members(tids),
                tpp,
                permutation,
                entries,
                phase,
            ),
        })
    }

    fn heap_pass<F: FnMut(u32, &[u16])>(
        &mut self,
        buf: &mut [u16],
        f: F,
    ) -> Result<(), VacuumError> {
        self.0.for_each_block(buf, f);
        Ok(())
    }

    fn clear(&mut self) -> Result<(), VacuumError> {
        self.0.clear();
        Ok(())
    }

    fn heap_scan_workers(&self) -> Option<usize> {
        None
    }

    fn scan_pages(&mut self, _: &[Range<u32>]) -> Result<Vec<(u32, u64)>, VacuumError> {
        unreachable!("a store in this process is filled by this process")
    }
}

/// Splits `n` entries into `count` contiguous shares of (nearly) equal
/// size, in order: share `k` is `n·k/count .. n·(k+1)/count`.
///
/// ```
/// use vacuum_sim::vacuum::shares;
/// assert_eq!(shares(10, 3), [0..3, 3..6, 6..10]);
/// assert_eq!(shares(1, 2), [0..0, 0..1]);
/// ```
pub fn shares(n: u64, count: usize) -> Vec<Range<u64>> {
    let count = count.max(1) as u128;
    let cut = |k: u128| (u128::from(n) * k / count) as u64;
    (0..count).map(|k| cut(k)..cut(k + 1)).collect()
}

/// The mutable state of one run.
struct Run<'a> {
    heap: &'a Heap,
    orders: Vec<Option<RandomOrder>>,
    progress: &'a Progress,
    buf: Vec<u16>,
    stats: VacuumStats,
}

/// Runs the vacuum loop over `heap` with `store`. `dead` is the number of
/// dead tuples the pattern deletes; `started` is when the store was
/// created.
pub fn simulate<S: DeadTupleStore>(
    scenario: &Scenario,
    heap: &Heap,
    dead: u64,
    store: &mut S,
    started: Instant,
    progress: &Progress,
) -> Result<VacuumStats, VacuumError> {
    drive(
        scenario,
        heap,
        dead,
        &mut InProcess(store),
        started,
        progress,
    )
}

/// The vacuum loop, for any [`Vacuumable`] store.
pub(crate) fn drive<V: Vacuumable>(
    scenario: &Scenario,
    heap: &Heap,
    dead: u64,
    store: &mut V,
    started: Instant,
    progress: &Progress,
) -> Result<VacuumStats, VacuumError> {
    let kind = store.kind();
    let mut run = Run {
        heap,
        orders: index_orders(scenario, heap.num_tuples()),
        progress,
        buf: offsets_buffer(),
        stats: VacuumStats {
            store: kind,
            indexes: scenario.indexes.clone(),
            index_passes: 0,
            peak_bytes: store.memory_usage(),
            dead_tids: dead,
            collected: 0,
            found_per_index: vec![0; scenario.indexes.len()],
            found: 0,
            heap_vacuumed: 0,
            round_error: None,
            heap_scan: Duration::ZERO,
            index: Duration::ZERO,
            heap_vacuum: Duration::ZERO,
            total: Duration::ZERO,
            workers: None,
            memory: MemoryTrace::new(heap.blocks()),
        },
    };
    run.stats.memory.sample(0, store.memory_usage());
    let blocks = heap.blocks();
    if let Some(workers) = store.heap_scan_workers() {
        run.scan_in_workers(store, workers)?;
        run.stats.total = started.elapsed();
        return Ok(run.stats);
    }
    let mut offsets = Vec::with_capacity(usize::from(heap.tuples_per_page()));
    let mut scan = run.start_scan(0);
    let mut scan_started = Instant::now();
    let mut scan_first = 0u32;
    for block in 0..blocks {
        heap.dead_offsets(block, &mut offsets);
        if !offsets.is_empty() {
            if !store.has_room_for(offsets.len()) {
                run.stats.heap_scan += scan_started.elapsed();
                run.end_scan(scan, scan_first, block, &*store);
                run.round(store, block, false)?;
                scan = run.start_scan(block);
                scan_first = block;
                scan_started = Instant::now();
            }
            store.add_page(block, &offsets)?;
            run.stats.collected += offsets.len() as u64;
        }
        let bytes = store.memory_usage();
        run.stats.peak_bytes = run.stats.peak_bytes.max(bytes);
        if run.stats.memory.due(block + 1) {
            run.stats.memory.sample(block + 1, bytes);
        }
        if store.is_full() {
            run.stats.heap_scan += scan_started.elapsed();
            run.end_scan(scan, scan_first, block + 1, &*store);
            run.round(store, block + 1, false)?;
            scan = run.start_scan(block + 1);
            scan_first = block + 1;
            scan_started = Instant::now();
        }
        if block % 4096 == 0 {
            scan.set_position(u64::from(block));
        }
    }
    run.stats.heap_scan += scan_started.elapsed();
    run.end_scan(scan, scan_first, blocks, &*store);
    run.finish_scan(store)?;
    run.stats.total = started.elapsed();
    Ok(run.stats)
}

impl Run<'_> {
    /// The heap scan in `workers` worker processes at once, each scanning
    /// a contiguous range of pages; a round whenever the store fills, and
    /// the last one at the end.
    fn scan_in_workers<V: Vacuumable>(
        &mut self,
        store: &mut V,
        workers: usize,
    ) -> Result<(), VacuumError> {
        let blocks = self.heap.blocks();
        // Shares of a u32 count are u32s.
        let mut left: Vec<Range<u32>> = shares(u64::from(blocks), workers)
            .into_iter()
            .map(|r| r.start as u32..r.end as u32)
            .collect();
        loop {
            let from = left.first().map_or(blocks, |r| r.start);
            let scan = self.start_scan(from);
            let started = Instant::now();
            let scanned = store.scan_pages(&left)?;
            self.stats.heap_scan += started.elapsed();
            for (range, &(pages, collected)) in left.iter_mut().zip(&scanned) {
                range.start += pages;
                self.stats.collected += collected;
            }
            self.stats.peak_bytes = self.stats.peak_bytes.max(store.memory_usage());
            left.retain(|r| !r.is_empty());
            let reached = left.first().map_or(blocks, |r| r.start);
            self.end_scan(scan, from, reached, &*store);
            if left.is_empty() {
                break;
            }
            // The pages every worker scanned so far, whatever their ranges.
            let unscanned: u32 = left.iter().map(|r| r.end - r.start).sum();
            self.round(store, blocks - unscanned, false)?;
        }
        self.finish_scan(store)
    }

    /// After the heap scan: the final round for whatever the store holds,
    /// or the trace's last sample when it holds nothing.
    fn finish_scan<V: Vacuumable>(&mut self, store: &mut V) -> Result<(), VacuumError> {
        let blocks = self.heap.blocks();
        if store.num_tids() > 0 {
            self.round(store, blocks, true)
        } else {
            if self.stats.memory.samples.last().map(|s| s.pages) != Some(blocks) {
                self.stats.memory.sample(blocks, store.memory_usage());
            }
            Ok(())
        }
    }

    fn label(&self, what: &str) -> String {
        format!(
            "[{}] pass {} {what}",
            self.stats.store,
            self.stats.index_passes + 1
        )
    }

    fn start_scan(&self, from: u32) -> Phase {
        self.progress.phase(
            self.label("heap scan"),
            "pages",
            u64::from(self.heap.blocks()),
            u64::from(from),
        )
    }

    fn end_scan<V: Vacuumable>(&self, scan: Phase, from: u32, to: u32, store: &V) {
        scan.finish(&format!(
            "pages {}..{}, {} dead TIDs held, {} bytes",
            group(u64::from(from)),
            group(u64::from(to)),
            group(store.num_tids()),
            group(store.memory_usage()),
        ));
    }

    /// One round, after `pages` heap pages (`end_of_scan` for the final
    /// one): every index once, then the heap pass, then clear.
    fn round<V: Vacuumable>(
        &mut self,
        store: &mut V,
        pages: u32,
        end_of_scan: bool,
    ) -> Result<(), VacuumError> {
        let held = store.num_tids();
        self.stats
            .memory
            .index_pass(pages, store.memory_usage(), held, end_of_scan);
        let pass = self.stats.index_passes + 1;
        let count = self.orders.len();
        for j in 0..count {
            let order = self.stats.indexes[j];
            let mut phase = self.progress.phase(
                self.label(&format!("index {}/{count} ({order})", j + 1)),
                "entries",
                self.heap.num_tuples(),
                0,
            );
            let started = Instant::now();
            let found = store.index_pass(self.heap, j, self.orders[j].as_ref(), &mut phase)?;
            self.stats.index += started.elapsed();
            phase.finish(&format!(
                "{} of {} dead TIDs found",
                group(found),
                group(held)
            ));
            self.stats.found_per_index[j] += found;
            self.stats.found += found;
            if found != held && self.stats.round_error.is_none() {
                self.stats.round_error = Some(CheckError::Round {
                    store: self.stats.store,
                    pass,
                    index: j + 1,
                    found,
                    held,
                });
            }
        }
        let mut phase = self
            .progress
            .phase(self.label("heap vacuum"), "TIDs", held, 0);
        let started = Instant::now();
        let mut vacuumed = 0u64;
        let mut checksum = 0u64;
        store.heap_pass(&mut self.buf, |block, offsets| {
            vacuumed += offsets.len() as u64;
            let sum: u64 = offsets.iter().map(|&o| u64::from(o)).sum();
            checksum = checksum.wrapping_add(u64::from(block) ^ sum);
        })?;
        black_box(checksum);
        store.clear()?;
        self.stats.heap_vacuum += started.elapsed();
        self.stats.memory.cleared(store.memory_usage());
        phase.set_position(vacuumed);
        phase.finish(&format!("{} dead TIDs vacuumed", group(vacuumed)));
        self.stats.heap_vacuumed += vacuumed;
        self.stats.index_passes = pass;
        Ok(())
    }
}

/// An index pass over the entries `entries` (positions in heap order) of a
/// correlated index: TIDs in heap order. Returns how many `is_member`
/// answered yes. A whole pass is `0..heap.num_tuples()`; a worker process
/// takes a contiguous share.
pub fn correlated_pass<F: FnMut(Tid) -> bool>(
    mut is_member: F,
    tuples_per_page: u16,
    entries: Range<u64>,
    phase: &mut Phase,
) -> u64 {
    let tpp = u64::from(tuples_per_page);
    let mut found = 0u64;
    let mut p = entries.start;
    while p < entries.end {
        let block = p / tpp;
        let first = (p - block * tpp) as u16 + 1;
        let last = (entries.end - block * tpp).min(tpp) as u16;
        // Blocks are below 2^32: positions are below blocks × tpp.
        let block = block as u32;
        for offset in first..=last {
            found += u64::from(is_member(Tid::new(block, offset)));
        }
        if block.is_multiple_of(1024) {
            phase.set_position(p - entries.start);
        }
        p = u64::from(block) * tpp + u64::from(last);
    }
    found
}

/// An index pass over the entries `entries` (positions in index order) of
/// a random index: entry `i` is heap position `permutation.get(i)`. Returns
/// how many `is_member` answered yes. A whole pass is
/// `0..permutation.len()`; a worker process takes a contiguous share.
///
/// The entries are generated a batch at a time into a reused buffer, then
/// counted by `count_members` in one call (the TID store's
/// `is_member_each`, which prefetches ahead): the cycle walk's
/// unpredictable branch stays out of the lookup loop, so the lookups'
/// cache misses overlap.
pub fn random_pass<F: Fn(&[Tid]) -> u64>(
    count_members: F,
    tuples_per_page: u16,
    permutation: &RandomOrder,
    entries: Range<u64>,
    phase: &mut Phase,
) -> u64 {
    const BATCH: u64 = 1 << 10;
    let n = permutation.len();
    let tpp = tuples_per_page;
    let end_all = entries.end.min(n);
    let mut batch: Vec<Tid> = Vec::with_capacity(BATCH as usize);
    let mut found = 0u64;
    let mut start = entries.start;
    // 32-bit division is much cheaper than 64-bit; every table up to 4
    // billion tuples (VAC-1 has 1 billion) takes this path.
    let narrow = u32::try_from(n).is_ok();
    while start < end_all {
        let end = (start + BATCH).min(end_all);
        batch.clear();
        if narrow {
            let tpp = u32::from(tpp);
            batch.extend((start..end).map(|i| {
                let p = permutation.get(i) as u32;
                Tid::new(p / tpp, (p % tpp) as u16 + 1)
            }));
        } else {
            let tpp = u64::from(tpp);
            batch.extend((start..end).map(|i| {
                let p = permutation.get(i);
                Tid::new((p / tpp) as u32, (p % tpp) as u16 + 1)
            }));
        }
        found += count_members(&batch);
        if end.is_multiple_of(CHUNK) || end == end_all {
            phase.set_position(end - entries.start);
        }
        start = end;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::heap::DeadPattern;

    #[test]
    fn tiny_run_with_both_stores() {
        let scenario = Scenario::custom(
            50,
            10,
            DeadPattern::Every(2),
            vec![IndexOrder::Correlated, IndexOrder::Random],
            120,
        );
        for kind in StoreKind::ALL {
            let stats = run(&scenario, kind, &Progress::hidden()).unwrap();
            assert_eq!(stats.dead_tids, 250);
            assert_eq!(stats.found, 500);
            assert_eq!(stats.check(), Ok(()));
            if kind == StoreKind::Array {
                // 120 bytes = 20 TIDs = 4 pages of 5 dead per pass.
                assert_eq!(stats.index_passes, 13);
                assert_eq!(stats.peak_bytes, 120);
            }
        }
    }

    #[test]
    fn a_lying_store_fails_the_check() {
        let scenario = Scenario::custom(4, 4, DeadPattern::All, vec![IndexOrder::Random], 1 << 20);
        let mut stats = run(&scenario, StoreKind::TidStore, &Progress::hidden()).unwrap();
        assert_eq!(stats.check(), Ok(()));
        stats.found -= 1;
        assert!(matches!(
            stats.check(),
            Err(CheckError::Found { expected: 16, .. })
        ));
    }
}
