//! The TID store in shared memory, with the heap scan and the index
//! passes in worker processes (`--workers N`; Linux).
//!
//! PostgreSQL's parallel vacuum keeps its dead TIDs in a TID store in
//! shared memory: the leader fills it during the heap scan, taking the
//! store's lock around each page's `TidStoreSetBlockOffsets`, and worker
//! processes attach to it and vacuum the indexes, one whole index per
//! worker. Its proposed parallel heap scan has workers add TIDs to that
//! store, each taking its lock exclusively.
//!
//! Here the store is a [`tidstore::SharedConcurrentTidStore`], whose
//! writers lock only the tree nodes they change and whose readers take no
//! lock at all, and this process is the leader of two kinds of phase,
//! each run by `N` worker processes (the same program, in its hidden
//! worker mode) at once:
//!
//! - **the heap scan**: the table's pages are split into `N` contiguous
//!   ranges; each worker scans its range in order and adds each page's
//!   dead TIDs to the store, at the same time as the others. After a page
//!   that fills the store, a worker stops and reports where; once every
//!   worker has, the leader runs a round (index passes, heap pass, a new
//!   store) and starts the workers again on what is left of their ranges;
//! - **each index pass**: the index's entries are split into `N`
//!   contiguous ranges of index positions, so that even a table with one
//!   index (VAC-2) is vacuumed in parallel. For a correlated index, entries
//!   `from..to` are heap positions, a run of pages; for a random index,
//!   they are positions in the [`RandomOrder`] permutation, which each
//!   worker computes itself, so nothing of size `n` is passed around.
//!
//! Each worker attaches, does its share, prints a one-line JSON
//! [`WorkerReport`] and exits. The leader waits for every worker, sums
//! their counts, and checks them as it checks a local store's (a phase's
//! time includes starting the processes and attaching: it is part of the
//! cost). If a worker fails, the leader kills and reaps the others and
//! reports the error. The heap pass walks the store in this process;
//! between rounds the leader destroys the store, which unlinks its shared
//! memory, and makes a new one, as PostgreSQL's vacuum does. A leader
//! that is killed leaves its shared-memory objects behind;
//! `vacuum-sim --remove-stale-shm` removes them.

use std::io::{self, Read};
use std::ops::Range;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tidstore::{SharedConcurrentTidStore, SharedTidStoreHandle, Tid};

pub use crate::error::{RangeError, SharedError, WorkerError};
use crate::heap::Heap;
use crate::order::{RandomOrder, format_index_list};
use crate::progress::{Phase, Progress};
use crate::scenario::Scenario;
use crate::store::{StoreError, StoreKind};
pub use crate::vacuum::shares;
use crate::vacuum::{
    VacuumError, VacuumStats, Vacuumable, WorkerSummary, correlated_pass, drive, index_order,
    random_pass,
};

/// The most worker processes per phase: a concurrent shared store takes
/// 64 handles, one per process that has it open, the leader's included.
pub const MAX_WORKERS: usize = 63;

/// The most of a failed worker's standard error kept in an error message.
const STDERR_KEPT: usize = 2_000;

/// Parses `FROM..TO` (whole numbers, `FROM <= TO`), a worker's share.
///
/// ```
/// use vacuum_sim::shared::parse_range;
/// assert_eq!(parse_range("5..10"), Ok(5..10));
/// assert!(parse_range("10..5").is_err());
/// assert!(parse_range("5-10").is_err());
/// ```
pub fn parse_range(text: &str) -> Result<Range<u64>, RangeError> {
    let bad = || RangeError(text.to_string());
    let (from, to) = text.trim().split_once("..").ok_or_else(bad)?;
    let from: u64 = from.parse().map_err(|_| bad())?;
    let to: u64 = to.parse().map_err(|_| bad())?;
    if from > to {
        return Err(bad());
    }
    Ok(from..to)
}

/// What a worker prints on standard output: one JSON line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerReport {
    /// Entries of its share whose TID is in the store (index passes).
    pub found: u64,
    /// Entries it looked up (the size of its share), or pages it scanned
    /// (its share, or fewer if the store filled).
    pub done: u64,
    /// Dead TIDs it added to the store (heap scans).
    pub collected: u64,
    /// When its `main` began (system clock, ns since the Unix epoch).
    pub started_ns: u64,
    /// When it had attached.
    pub attached_ns: u64,
    /// When its last lookup was done.
    pub done_ns: u64,
}

/// The system clock in nanoseconds since the Unix epoch (0 before it).
pub fn unix_ns(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// One worker's job: which store, which table, and which share of which
/// phase.
#[derive(Clone, Debug)]
pub struct WorkerTask {
    /// The store's handle, as [`SharedTidStoreHandle`] prints it.
    pub handle: String,
    /// The table: its shape, dead pattern, indexes and seed (the limit
    /// does not matter to a worker: the store holds it).
    pub scenario: Scenario,
    /// What to do.
    pub job: WorkerJob,
}

/// A worker's share of a heap scan or of an index pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkerJob {
    /// Scan heap pages `pages` in order, adding each page's dead TIDs to
    /// the store, and stop early after the page that fills it.
    HeapScan {
        /// The pages.
        pages: Range<u64>,
    },
    /// Look up the index's entries `entries` (in index order).
    Index {
        /// The index, counted from 0.
        index: usize,
        /// The share of its entries.
        entries: Range<u64>,
    },
}

impl WorkerJob {
    /// The job as an error message names it.
    fn describe(&self) -> String {
        match self {
            WorkerJob::HeapScan { pages } => {
                format!("heap scan, pages {}..{}", pages.start, pages.end)
            }
            WorkerJob::Index { index, entries } => format!(
                "index {}, entries {}..{}",
                index + 1,
                entries.start,
                entries.end
            ),
        }
    }
}

/// The worker: attaches to the store, does its job without taking any
/// lock, and returns what it did. `born` is when the process started (for
/// the leader's profile of start-up costs). `attached` runs once the store
/// is attached: the place to start the worker's threads, because a process
/// that attaches while it has one thread registers for the cross-process
/// barrier at once, and one with more waits for an RCU grace period
/// (15 to 70 ms on the project's machine).
pub fn run_worker(
    task: &WorkerTask,
    born: SystemTime,
    attached: impl FnOnce(),
) -> Result<WorkerReport, WorkerError> {
    let started_ns = unix_ns(born);
    let scenario = &task.scenario;
    let n = scenario.total_tuples();
    match &task.job {
        WorkerJob::Index { index, entries } => {
            if *index >= scenario.indexes.len() {
                return Err(WorkerError::NoSuchIndex {
                    index: *index,
                    indexes: scenario.indexes.len(),
                });
            }
            if entries.start > entries.end || entries.end > n {
                return Err(WorkerError::Range {
                    from: entries.start,
                    to: entries.end,
                    entries: n,
                });
            }
        }
        WorkerJob::HeapScan { pages } => {
            if pages.start > pages.end || pages.end > u64::from(scenario.blocks) {
                return Err(WorkerError::Pages {
                    from: pages.start,
                    to: pages.end,
                    blocks: scenario.blocks,
                });
            }
        }
    }
    let handle: SharedTidStoreHandle = task.handle.parse().map_err(WorkerError::Handle)?;
    let store =
        SharedConcurrentTidStore::attach(&handle).map_err(|source| WorkerError::Attach {
            handle: task.handle.clone(),
            source,
        })?;
    let attached_ns = unix_ns(SystemTime::now());
    attached();
    let mut report = WorkerReport {
        found: 0,
        done: 0,
        collected: 0,
        started_ns,
        attached_ns,
        done_ns: 0,
    };
    match &task.job {
        WorkerJob::Index { index, entries } => {
            let order = index_order(scenario, *index, n);
            let mut phase = Progress::hidden().phase(String::new(), "entries", n, 0);
            report.found = lookups(
                &store,
                scenario,
                order.as_ref(),
                entries.clone(),
                &mut phase,
            );
            report.done = entries.end - entries.start;
        }
        WorkerJob::HeapScan { pages } => {
            // Checked above: the pages are the table's, so they fit a u32.
            let pages = pages.start as u32..pages.end as u32;
            let (scanned, collected) = scan(&store, &scenario.heap(), pages)?;
            (report.done, report.collected) = (u64::from(scanned), collected);
        }
    }
    report.done_ns = unix_ns(SystemTime::now());
    Ok(report)
}

/// A heap-scan worker's share: adds the dead TIDs of `pages` to the store,
/// in order, at the same time as the other workers add theirs, and stops
/// after the page that fills the store. Returns the pages scanned and the
/// TIDs added.
fn scan(
    store: &SharedConcurrentTidStore,
    heap: &Heap,
    pages: Range<u32>,
) -> Result<(u32, u64), WorkerError> {
    let mut offsets = Vec::with_capacity(usize::from(heap.tuples_per_page()));
    let mut collected = 0u64;
    for block in pages.clone() {
        heap.dead_offsets(block, &mut offsets);
        if !offsets.is_empty() {
            store
                .set_block_offsets(block, &offsets)
                .map_err(|source| WorkerError::Write { block, source })?;
            collected += offsets.len() as u64;
        }
        if store.is_full() {
            return Ok((block + 1 - pages.start, collected));
        }
    }
    Ok((pages.end - pages.start, collected))
}

/// A worker's lookups: its share of one index pass, without a lock.
fn lookups(
    store: &SharedConcurrentTidStore,
    scenario: &Scenario,
    order: Option<&RandomOrder>,
    entries: Range<u64>,
    phase: &mut Phase,
) -> u64 {
    let tpp = scenario.tuples_per_page;
    match order {
        None => {
            // A correlated index probes in heap order, a page's TIDs in a
            // row: one lookup per page copies its offsets, and each TID is
            // a bit test.
            let mut page = PageBits::default();
            correlated_pass(|tid| page.is_member(store, tid), tpp, entries, phase)
        }
        Some(permutation) => random_pass(
            |tids| {
                let mut dead = 0;
                store.is_member_each(tids, |_, is_dead| dead += u64::from(is_dead));
                dead
            },
            tpp,
            permutation,
            entries,
            phase,
        ),
    }
}

/// The dead offsets of the page a correlated index pass is on, copied
/// out of the store as bits.
#[derive(Default)]
struct PageBits {
    block: Option<u32>,
    bits: Vec<u64>,
}

impl PageBits {
    fn is_member(&mut self, store: &SharedConcurrentTidStore, tid: Tid) -> bool {
        if self.block != Some(tid.block()) {
            self.block = Some(tid.block());
            self.bits.clear();
            store.with_block(tid.block(), |page| {
                for offset in page.offsets() {
                    let word = usize::from(offset / 64);
                    if self.bits.len() <= word {
                        self.bits.resize(word + 1, 0);
                    }
                    self.bits[word] |= 1 << (offset % 64);
                }
            });
        }
        let offset = tid.offset();
        self.bits
            .get(usize::from(offset / 64))
            .is_some_and(|word| word >> (offset % 64) & 1 != 0)
    }
}

/// How the shared store's phases are run.
#[derive(Clone, Debug)]
pub struct Workers {
    /// Worker processes per phase, 1 to [`MAX_WORKERS`].
    pub count: usize,
    /// The program the workers run: the `vacuum-sim` binary, which has the
    /// hidden worker mode (`--worker HANDLE ...`).
    pub program: PathBuf,
    /// Give the workers this handle instead of the store's: a test hook,
    /// to check that a worker that cannot attach fails the run cleanly.
    pub handle_override: Option<String>,
}

impl Workers {
    /// `count` workers running `program`.
    pub fn new(count: usize, program: PathBuf) -> Self {
        Self {
            count,
            program,
            handle_override: None,
        }
    }
}

/// Runs the scenario with the TID store in shared memory, its heap scan
/// and its index passes each in `workers.count` worker processes at once.
/// Each round's store is destroyed (its shared memory unlinked) before
/// the next is made and before this returns, whether the run succeeded or
/// not.
pub fn run_shared(
    scenario: &Scenario,
    workers: &Workers,
    progress: &Progress,
) -> Result<VacuumStats, VacuumError> {
    scenario.validate()?;
    if !(1..=MAX_WORKERS).contains(&workers.count) {
        return Err(SharedError::WorkerCount {
            workers: workers.count,
            max: MAX_WORKERS,
        }
        .into());
    }
    let heap = scenario.heap();
    let dead = heap.count_dead();
    let started = Instant::now();
    let mut leader = Leader::new(scenario, workers, progress)?;
    let result = drive(scenario, &heap, dead, &mut leader, started, progress);
    let Leader { store, summary, .. } = leader;
    // Every worker has been reaped by now (a failed phase reaps its own
    // before returning), so nothing else holds the store.
    let destroyed = store.destroy().map_err(SharedError::Destroy);
    let mut stats = result?;
    destroyed?;
    stats.workers = Some(summary);
    Ok(stats)
}

/// The leader's side of the shared store.
struct Leader<'a> {
    /// This round's store.
    store: SharedConcurrentTidStore,
    /// Its budget.
    max_bytes: usize,
    workers: &'a Workers,
    progress: &'a Progress,
    /// The arguments that tell a worker the table's shape.
    table_args: Vec<String>,
    summary: WorkerSummary,
}

impl<'a> Leader<'a> {
    fn new(
        scenario: &Scenario,
        workers: &'a Workers,
        progress: &'a Progress,
    ) -> Result<Self, SharedError> {
        // validate() checked that the limit fits in a usize.
        let max_bytes = usize::try_from(scenario.limit).unwrap_or(usize::MAX);
        let table_args = vec![
            "--blocks".to_string(),
            scenario.blocks.to_string(),
            "--tuples-per-page".to_string(),
            scenario.tuples_per_page.to_string(),
            "--dead".to_string(),
            scenario.dead.to_string(),
            "--indexes".to_string(),
            format_index_list(&scenario.indexes).replace(", ", ","),
            "--seed".to_string(),
            scenario.seed.to_string(),
            "--quiet".to_string(),
        ];
        Ok(Self {
            store: Self::create(max_bytes)?,
            max_bytes,
            workers,
            progress,
            table_args,
            summary: WorkerSummary {
                count: workers.count,
                ..WorkerSummary::default()
            },
        })
    }

    fn create(max_bytes: usize) -> Result<SharedConcurrentTidStore, SharedError> {
        SharedConcurrentTidStore::create(max_bytes).map_err(|source| SharedError::Create {
            bytes: max_bytes as u64,
            source,
        })
    }

    /// The handle the workers get.
    fn handle(&self) -> String {
        self.workers
            .handle_override
            .clone()
            .unwrap_or_else(|| self.store.handle().to_string())
    }

    /// Starts one worker on `job`.
    fn spawn(&self, worker: usize, job: &WorkerJob) -> Result<Child, SharedError> {
        let mut command = Command::new(&self.workers.program);
        command
            .arg("--worker")
            .arg(self.handle())
            .args(&self.table_args);
        match job {
            WorkerJob::HeapScan { pages } => {
                command
                    .arg("--worker-pages")
                    .arg(format!("{}..{}", pages.start, pages.end));
            }
            WorkerJob::Index { index, entries } => {
                command
                    .arg("--worker-index")
                    .arg(index.to_string())
                    .arg("--worker-range")
                    .arg(format!("{}..{}", entries.start, entries.end));
            }
        }
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| SharedError::Spawn {
                worker: worker + 1,
                program: self.workers.program.display().to_string(),
                source,
            })
    }

    /// Runs one worker per job, all at once, and waits for every one:
    /// their reports, in job order, each with when its worker was
    /// spawned. A worker that fails fails the phase, after the others are
    /// killed and reaped.
    fn run_crew(&self, jobs: &[WorkerJob]) -> Result<Vec<(WorkerReport, u64)>, VacuumError> {
        let count = jobs.len();
        let mut crew = Crew {
            children: Vec::with_capacity(count),
        };
        let mut spawned_ns = Vec::with_capacity(count);
        let (done, outputs) = mpsc::channel();
        for (k, job) in jobs.iter().enumerate() {
            spawned_ns.push(unix_ns(SystemTime::now()));
            let mut child = self.spawn(k, job)?;
            collect(k, &mut child, done.clone());
            crew.children.push(Some(child));
        }
        drop(done);
        let mut reports = vec![None; count];
        for _ in 0..count {
            // Every reader thread sends once; the channel closes only after.
            let output = outputs.recv().map_err(|_| SharedError::Wait {
                worker: 0,
                source: io::Error::other("a worker's output reader stopped"),
            })?;
            let k = output.worker;
            let status = crew.reap(k).map_err(|source| SharedError::Wait {
                worker: k + 1,
                source,
            })?;
            let stdout = String::from_utf8_lossy(&output.stdout);
            if !status.success() {
                return Err(SharedError::WorkerFailed {
                    worker: k + 1,
                    count,
                    task: jobs[k].describe(),
                    status: status.to_string(),
                    stderr: clip(&String::from_utf8_lossy(&output.stderr), STDERR_KEPT),
                }
                .into());
            }
            let report: WorkerReport =
                serde_json::from_str(stdout.trim()).map_err(|e| SharedError::BadReport {
                    worker: k + 1,
                    task: jobs[k].describe(),
                    output: clip(&stdout, 200),
                    reason: e.to_string(),
                })?;
            let (expected, exact) = match &jobs[k] {
                WorkerJob::HeapScan { pages } => (pages.end - pages.start, false),
                WorkerJob::Index { entries, .. } => (entries.end - entries.start, true),
            };
            if report.done > expected || (exact && report.done != expected) {
                return Err(SharedError::WrongShare {
                    worker: k + 1,
                    task: jobs[k].describe(),
                    done: report.done,
                    expected,
                }
                .into());
            }
            reports[k] = Some((report, spawned_ns[k]));
        }
        Ok(reports.into_iter().flatten().collect())
    }
}

/// The worker processes of one phase. Dropping it kills and reaps every
/// worker not yet reaped, so none outlives a failed phase.
struct Crew {
    children: Vec<Option<Child>>,
}

impl Crew {
    /// Reaps worker `k`, whose output has ended.
    fn reap(&mut self, k: usize) -> io::Result<ExitStatus> {
        match self.children.get_mut(k).and_then(Option::take) {
            Some(mut child) => child.wait(),
            None => Err(io::Error::other("reaped twice")),
        }
    }
}

impl Drop for Crew {
    fn drop(&mut self) {
        for child in self.children.iter_mut().filter_map(Option::take) {
            let mut child = child;
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// What a worker's pipes carried once it closed them.
struct Output {
    worker: usize,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Reads a worker's standard output and error to their ends on a thread of
/// its own, then sends them: so the leader learns of each worker's end as
/// it happens, in whatever order, without polling.
fn collect(worker: usize, child: &mut Child, done: mpsc::Sender<Output>) {
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    std::thread::spawn(move || {
        let mut output = Output {
            worker,
            stdout: Vec::new(),
            stderr: Vec::new(),
        };
        if let Some(mut pipe) = stdout {
            let _ = pipe.read_to_end(&mut output.stdout);
        }
        if let Some(mut pipe) = stderr {
            let _ = pipe.read_to_end(&mut output.stderr);
        }
        let _ = done.send(output);
    });
}

fn clip(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

impl Vacuumable for Leader<'_> {
    fn kind(&self) -> StoreKind {
        StoreKind::Shared
    }

    fn has_room_for(&self, _n: usize) -> bool {
        true
    }

    /// One page, from this process: the store takes writers at any time.
    fn add_page(&mut self, block: u32, offsets: &[u16]) -> Result<(), VacuumError> {
        self.store
            .set_block_offsets(block, offsets)
            .map_err(StoreError::from)?;
        Ok(())
    }

    fn heap_scan_workers(&self) -> Option<usize> {
        Some(self.workers.count)
    }

    /// Starts one worker per range, all at once, and waits for every one.
    fn scan_pages(&mut self, ranges: &[Range<u32>]) -> Result<Vec<(u32, u64)>, VacuumError> {
        let jobs: Vec<WorkerJob> = ranges
            .iter()
            .map(|r| WorkerJob::HeapScan {
                pages: u64::from(r.start)..u64::from(r.end),
            })
            .collect();
        let reports = self.run_crew(&jobs)?;
        let mut slowest = 0u64;
        let mut scanned = Vec::with_capacity(reports.len());
        for (report, spawned_ns) in &reports {
            slowest = slowest.max(report.done_ns.saturating_sub(*spawned_ns));
            // At most the range's length (checked by `run_crew`), so it
            // fits a u32.
            scanned.push((report.done as u32, report.collected));
        }
        self.summary.scan_launched += reports.len() as u64;
        self.progress.line(&format!(
            "[shared] heap scan: {} workers, slowest {:.1} ms from spawn to its last page",
            reports.len(),
            slowest as f64 / 1e6
        ));
        Ok(scanned)
    }

    fn is_full(&self) -> bool {
        self.store.is_full()
    }

    fn memory_usage(&self) -> u64 {
        self.store.memory_usage() as u64
    }

    fn num_tids(&self) -> u64 {
        self.store.num_tids()
    }

    /// Starts the workers on their shares, waits for every one, and sums
    /// their counts.
    fn index_pass(
        &mut self,
        heap: &Heap,
        j: usize,
        _permutation: Option<&RandomOrder>,
        phase: &mut Phase,
    ) -> Result<u64, VacuumError> {
        let n = heap.num_tuples();
        let count = self.workers.count;
        let jobs: Vec<WorkerJob> = shares(n, count)
            .into_iter()
            .map(|entries| WorkerJob::Index { index: j, entries })
            .collect();
        let reports = self.run_crew(&jobs)?;
        let mut found = 0u64;
        let (mut start, mut attach, mut lookups, mut last_done) = (0u64, 0u64, 0u64, 0u64);
        let mut each = Vec::with_capacity(count);
        for (report, spawned_ns) in &reports {
            found += report.found;
            each.push(format!(
                "{:.1}+{:.1}+{:.1}",
                report.started_ns.saturating_sub(*spawned_ns) as f64 / 1e6,
                report.attached_ns.saturating_sub(report.started_ns) as f64 / 1e6,
                report.done_ns.saturating_sub(report.attached_ns) as f64 / 1e6
            ));
            start = start.max(report.started_ns.saturating_sub(*spawned_ns));
            attach = attach.max(report.attached_ns.saturating_sub(report.started_ns));
            lookups = lookups.max(report.done_ns.saturating_sub(report.attached_ns));
            last_done = last_done.max(report.done_ns);
        }
        let finished_ns = unix_ns(SystemTime::now());
        let summary = &mut self.summary;
        summary.launched += count as u64;
        summary.start += Duration::from_nanos(start);
        summary.attach += Duration::from_nanos(attach);
        summary.lookups += Duration::from_nanos(lookups);
        summary.finish += Duration::from_nanos(finished_ns.saturating_sub(last_done));
        self.progress.line(&format!(
            "[shared] index {}: {count} workers, ms start+attach+lookups each: {}",
            j + 1,
            each.join(", ")
        ));
        phase.set_position(n);
        Ok(found)
    }

    /// Walks every block's offsets, without a lock.
    fn heap_pass<F: FnMut(u32, &[u16])>(
        &mut self,
        buf: &mut [u16],
        mut f: F,
    ) -> Result<(), VacuumError> {
        self.store.for_each_block(.., |block| {
            let n = block.copy_offsets(buf);
            f(block.block(), &buf[..n]);
        });
        Ok(())
    }

    /// Replaces the store with a new, empty one, as PostgreSQL's vacuum
    /// does between rounds (`dead_items_reset`): the old one's shared
    /// memory goes back to the system.
    fn clear(&mut self) -> Result<(), VacuumError> {
        let fresh = Self::create(self.max_bytes)?;
        let old = std::mem::replace(&mut self.store, fresh);
        old.destroy().map_err(SharedError::Destroy)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_the_entries_in_order() {
        for n in [0u64, 1, 2, 7, 100, 50_000_135] {
            for count in 1..=9 {
                let s = shares(n, count);
                assert_eq!(s.len(), count);
                assert_eq!(s[0].start, 0);
                assert_eq!(s[count - 1].end, n);
                assert!(s.windows(2).all(|w| w[0].end == w[1].start));
                let sizes: Vec<u64> = s.iter().map(|r| r.end - r.start).collect();
                let (min, max) = (sizes.iter().min(), sizes.iter().max());
                assert!(max.unwrap() - min.unwrap() <= 1, "{n} {count}: {sizes:?}");
            }
        }
    }

    #[test]
    fn ranges_parse() {
        assert_eq!(parse_range("0..0"), Ok(0..0));
        assert_eq!(parse_range(" 3..25000067 "), Ok(3..25_000_067));
        for bad in ["", "..", "1..", "..2", "2..1", "a..b", "1...2", "-1..2"] {
            assert!(parse_range(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_share_of_each_order_finds_its_part() {
        // Split passes add up to the whole pass, for both orders.
        use crate::heap::DeadPattern;
        use crate::order::IndexOrder;
        use tidstore::{Tid, TidStore};
        let s = Scenario::custom(
            97,
            13,
            DeadPattern::Random(0.3),
            vec![IndexOrder::Correlated, IndexOrder::Random],
            1 << 20,
        );
        let heap = s.heap();
        let mut store = TidStore::new(1 << 20);
        let mut offsets = Vec::new();
        for block in 0..heap.blocks() {
            heap.dead_offsets(block, &mut offsets);
            if !offsets.is_empty() {
                store.set_block_offsets(block, &offsets).unwrap();
            }
        }
        let n = heap.num_tuples();
        let is_member = |tid: Tid| store.is_member(tid);
        let count_members = |tids: &[Tid]| {
            let mut dead = 0;
            store.is_member_each(tids, |_, is_dead| dead += u64::from(is_dead));
            dead
        };
        for j in 0..2 {
            let order = index_order(&s, j, n);
            let mut phase = Progress::hidden().phase(String::new(), "", n, 0);
            let mut pass = |range: Range<u64>| match &order {
                None => correlated_pass(is_member, 13, range, &mut phase),
                Some(p) => random_pass(count_members, 13, p, range, &mut phase),
            };
            let whole = pass(0..n);
            assert_eq!(whole, heap.count_dead());
            for count in [2, 3, 7] {
                let parts: u64 = shares(n, count).into_iter().map(&mut pass).sum();
                assert_eq!(parts, whole, "index {j}, {count} shares");
            }
        }
    }
}
