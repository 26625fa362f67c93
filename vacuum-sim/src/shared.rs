//! The TID store in shared memory, with the index passes in worker
//! processes (`--workers N`; Linux).
//!
//! PostgreSQL's parallel vacuum keeps its dead TIDs in a TID store in
//! shared memory: the leader fills it during the heap scan, taking the
//! store's lock around each page's `TidStoreSetBlockOffsets`, and worker
//! processes attach to it and vacuum the indexes, one whole index per
//! worker. Here the leader is this process, with a
//! [`tidstore::SharedTidStore`], and each index pass starts `N` worker
//! processes (the same program, in its hidden worker mode) that split *each*
//! index's entries into `N` contiguous ranges of index positions, so that
//! even a table with one index (VAC-2) is vacuumed in parallel:
//!
//! - a correlated index: entries `from..to` are heap positions, so a
//!   worker looks up a run of pages;
//! - a random index: entries `from..to` are positions in the
//!   [`RandomOrder`] permutation, so each worker computes its share of the
//!   permutation itself and nothing of size `n` is passed around.
//!
//! Each worker attaches, takes one read lock, counts the entries it finds
//! in the store, prints a one-line JSON [`WorkerReport`] and exits. The
//! leader waits for every worker, sums their counts, and checks them as it
//! checks a local store's (the index pass's time includes starting the
//! processes and attaching: it is part of the cost). If a worker fails,
//! the leader kills and reaps the others and reports the error. The heap
//! pass reads the store under the read lock and clears it under the write
//! lock; after the run the leader destroys the store, which unlinks its
//! shared memory. A leader that is killed leaves its shared-memory objects
//! behind; `vacuum-sim --remove-stale-shm` removes them.

use std::io::{self, Read};
use std::ops::Range;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tidstore::shm::ShmError;
use tidstore::{SharedTidStore, SharedTidStoreHandle, SharedTidStoreReader, SharedTidStoreWriter};

pub use crate::error::{RangeError, SharedError, WorkerError};
use crate::heap::Heap;
use crate::order::{RandomOrder, format_index_list};
use crate::progress::{Phase, Progress};
use crate::scenario::Scenario;
use crate::store::{StoreError, StoreKind};
use crate::vacuum::{
    VacuumError, VacuumStats, Vacuumable, WorkerSummary, correlated_pass, drive, index_order,
    random_pass,
};

/// The most worker processes per index pass: a shared store's lock has 64
/// reader slots, and each worker holds one.
pub const MAX_WORKERS: usize = 64;

/// How long a process waits for a lock that another holds before giving
/// up. Nobody holds the write lock while workers run, and no worker runs
/// while the leader writes, so this is only reached when something is
/// badly wrong.
const LOCK_PATIENCE: Duration = Duration::from_secs(60);

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

/// Splits `n` entries into `count` contiguous shares of (nearly) equal
/// size, in order: share `k` is `n·k/count .. n·(k+1)/count`.
///
/// ```
/// use vacuum_sim::shared::shares;
/// assert_eq!(shares(10, 3), [0..3, 3..6, 6..10]);
/// assert_eq!(shares(1, 2), [0..0, 0..1]);
/// ```
pub fn shares(n: u64, count: usize) -> Vec<Range<u64>> {
    let count = count.max(1) as u128;
    let cut = |k: u128| (u128::from(n) * k / count) as u64;
    (0..count).map(|k| cut(k)..cut(k + 1)).collect()
}

/// What a worker prints on standard output: one JSON line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerReport {
    /// Entries of its share whose TID is in the store.
    pub found: u64,
    /// Entries it looked up: the size of its share.
    pub entries: u64,
    /// When its `main` began (system clock, ns since the Unix epoch).
    pub started_ns: u64,
    /// When it had attached and held the read lock.
    pub attached_ns: u64,
    /// When its last lookup was done.
    pub done_ns: u64,
}

/// The system clock in nanoseconds since the Unix epoch (0 before it).
pub fn unix_ns(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// One worker's job: which store, which index of which table, which share.
#[derive(Clone, Debug)]
pub struct WorkerTask {
    /// The store's handle, as [`SharedTidStoreHandle`] prints it.
    pub handle: String,
    /// The table: its shape, indexes and seed (the dead pattern and limit
    /// do not matter to a worker).
    pub scenario: Scenario,
    /// The index, counted from 0.
    pub index: usize,
    /// The share of the index's entries, in index order.
    pub entries: Range<u64>,
}

/// Takes a lock with `take` (a `try_` lock), retrying while another holds
/// it, for at most [`LOCK_PATIENCE`].
fn patiently<T>(mut take: impl FnMut() -> Result<T, ShmError>) -> Result<T, ShmError> {
    let started = Instant::now();
    let mut tries = 0u32;
    loop {
        match take() {
            Err(ShmError::WouldBlock) if started.elapsed() < LOCK_PATIENCE => {
                tries += 1;
                if tries < 100 {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(Duration::from_micros(500));
                }
            }
            other => return other,
        }
    }
}

/// The worker: attaches to the store, takes one read lock, looks up its
/// share of the index's entries and returns what it found. `born` is when
/// the process started (for the leader's profile of start-up costs).
pub fn run_worker(task: &WorkerTask, born: SystemTime) -> Result<WorkerReport, WorkerError> {
    let started_ns = unix_ns(born);
    let scenario = &task.scenario;
    let n = scenario.total_tuples();
    if task.index >= scenario.indexes.len() {
        return Err(WorkerError::NoSuchIndex {
            index: task.index,
            indexes: scenario.indexes.len(),
        });
    }
    if task.entries.start > task.entries.end || task.entries.end > n {
        return Err(WorkerError::Range {
            from: task.entries.start,
            to: task.entries.end,
            entries: n,
        });
    }
    let handle: SharedTidStoreHandle = task.handle.parse().map_err(WorkerError::Handle)?;
    let store = SharedTidStore::attach(&handle).map_err(|source| WorkerError::Attach {
        handle: task.handle.clone(),
        source,
    })?;
    let reader = patiently(|| store.try_read()).map_err(|source| WorkerError::Lock {
        handle: task.handle.clone(),
        source,
    })?;
    let order = index_order(scenario, task.index, n);
    let attached_ns = unix_ns(SystemTime::now());
    let mut phase = Progress::hidden().phase(String::new(), "entries", n, 0);
    let found = lookups(
        &reader,
        scenario,
        order.as_ref(),
        task.entries.clone(),
        &mut phase,
    );
    let done_ns = unix_ns(SystemTime::now());
    drop(reader);
    drop(store);
    Ok(WorkerReport {
        found,
        entries: task.entries.end - task.entries.start,
        started_ns,
        attached_ns,
        done_ns,
    })
}

/// A worker's lookups: its share of one index pass.
fn lookups(
    reader: &SharedTidStoreReader<'_>,
    scenario: &Scenario,
    order: Option<&RandomOrder>,
    entries: Range<u64>,
    phase: &mut Phase,
) -> u64 {
    let tpp = scenario.tuples_per_page;
    match order {
        None => {
            // A correlated index probes in heap order: the ordered lookup
            // seeks on from the last block instead of from the root.
            let mut ascending = reader.ordered_lookup();
            correlated_pass(|tid| ascending.is_member(tid), tpp, entries, phase)
        }
        Some(permutation) => random_pass(
            |tids| {
                let mut dead = 0;
                reader.is_member_each(tids, |_, is_dead| dead += u64::from(is_dead));
                dead
            },
            tpp,
            permutation,
            entries,
            phase,
        ),
    }
}

/// How the shared store's index passes are run.
#[derive(Clone, Debug)]
pub struct Workers {
    /// Worker processes per index pass, 1 to [`MAX_WORKERS`].
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

/// Runs the scenario with a fresh [`SharedTidStore`] filled by this process
/// and index passes in worker processes. The store is destroyed (its shared
/// memory unlinked) before this returns, whether the run succeeded or not.
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
    // validate() checked that the limit fits in a usize.
    let max_bytes = usize::try_from(scenario.limit).unwrap_or(usize::MAX);
    let store = SharedTidStore::create(max_bytes).map_err(|source| SharedError::Create {
        bytes: scenario.limit,
        source,
    })?;
    let mut leader = Leader::new(store, scenario, workers, progress);
    let result = leader
        .refresh()
        .map_err(VacuumError::from)
        .and_then(|()| drive(scenario, &heap, dead, &mut leader, started, progress));
    let Leader { store, summary, .. } = leader;
    // Every worker has been reaped by now (a failed pass reaps its own
    // before returning), so nothing else holds the store.
    let destroyed = store.destroy().map_err(SharedError::Destroy);
    let mut stats = result?;
    destroyed?;
    stats.workers = Some(summary);
    Ok(stats)
}

/// The leader's side of the shared store.
struct Leader<'a> {
    store: SharedTidStore,
    workers: &'a Workers,
    progress: &'a Progress,
    /// The handle the workers get.
    handle: String,
    /// The arguments that tell a worker the table's shape.
    table_args: Vec<String>,
    /// What the store said when this process last held its lock (only this
    /// process writes, so it stays exact until the next write).
    memory: u64,
    tids: u64,
    full: bool,
    summary: WorkerSummary,
}

impl<'a> Leader<'a> {
    fn new(
        store: SharedTidStore,
        scenario: &Scenario,
        workers: &'a Workers,
        progress: &'a Progress,
    ) -> Self {
        let handle = workers
            .handle_override
            .clone()
            .unwrap_or_else(|| store.handle().to_string());
        let table_args = vec![
            "--blocks".to_string(),
            scenario.blocks.to_string(),
            "--tuples-per-page".to_string(),
            scenario.tuples_per_page.to_string(),
            "--indexes".to_string(),
            format_index_list(&scenario.indexes).replace(", ", ","),
            "--seed".to_string(),
            scenario.seed.to_string(),
            "--quiet".to_string(),
        ];
        Self {
            store,
            workers,
            progress,
            handle,
            table_args,
            memory: 0,
            tids: 0,
            full: false,
            summary: WorkerSummary {
                count: workers.count,
                ..WorkerSummary::default()
            },
        }
    }

    fn write(&self) -> Result<SharedTidStoreWriter<'_>, SharedError> {
        patiently(|| self.store.try_write()).map_err(|source| SharedError::Lock {
            lock: "write",
            source,
        })
    }

    fn read(&self) -> Result<SharedTidStoreReader<'_>, SharedError> {
        patiently(|| self.store.try_read()).map_err(|source| SharedError::Lock {
            lock: "read",
            source,
        })
    }

    /// Reads the store's size, TID count and fullness under the read lock.
    fn refresh(&mut self) -> Result<(), SharedError> {
        let r = self.read()?;
        let (memory, tids, full) = (r.memory_usage() as u64, r.num_tids(), r.is_full());
        drop(r);
        (self.memory, self.tids, self.full) = (memory, tids, full);
        Ok(())
    }

    /// Starts one worker on `share` of index `j`.
    fn spawn(&self, j: usize, worker: usize, share: &Range<u64>) -> Result<Child, SharedError> {
        Command::new(&self.workers.program)
            .arg("--worker")
            .arg(&self.handle)
            .args(&self.table_args)
            .arg("--worker-index")
            .arg(j.to_string())
            .arg("--worker-range")
            .arg(format!("{}..{}", share.start, share.end))
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
}

/// The worker processes of one index pass. Dropping it kills and reaps
/// every worker not yet reaped, so none outlives a failed pass.
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

    /// One page under the write lock, as PostgreSQL takes its lock around
    /// each `TidStoreSetBlockOffsets`.
    fn add_page(&mut self, block: u32, offsets: &[u16]) -> Result<(), VacuumError> {
        let mut w = self.write()?;
        w.set_block_offsets(block, offsets)
            .map_err(StoreError::from)?;
        let (memory, tids, full) = (w.memory_usage() as u64, w.num_tids(), w.is_full());
        drop(w);
        (self.memory, self.tids, self.full) = (memory, tids, full);
        Ok(())
    }

    fn is_full(&self) -> bool {
        self.full
    }

    fn memory_usage(&self) -> u64 {
        self.memory
    }

    fn num_tids(&self) -> u64 {
        self.tids
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
        let shares = shares(n, count);
        let mut crew = Crew {
            children: Vec::with_capacity(count),
        };
        let mut spawned_ns = Vec::with_capacity(count);
        let (done, outputs) = mpsc::channel();
        for (k, share) in shares.iter().enumerate() {
            spawned_ns.push(unix_ns(SystemTime::now()));
            let mut child = self.spawn(j, k, share)?;
            collect(k, &mut child, done.clone());
            crew.children.push(Some(child));
        }
        drop(done);
        let mut found = 0u64;
        let (mut start, mut attach, mut lookups, mut last_done) = (0u64, 0u64, 0u64, 0u64);
        let mut each = vec![String::new(); count];
        for _ in 0..count {
            // Every reader thread sends once; the channel closes only after.
            let output = outputs.recv().map_err(|_| SharedError::Wait {
                worker: 0,
                source: io::Error::other("a worker's output reader stopped"),
            })?;
            let k = output.worker;
            let share = &shares[k];
            let status = crew.reap(k).map_err(|source| SharedError::Wait {
                worker: k + 1,
                source,
            })?;
            let stdout = String::from_utf8_lossy(&output.stdout);
            if !status.success() {
                return Err(SharedError::WorkerFailed {
                    worker: k + 1,
                    count,
                    index: j + 1,
                    from: share.start,
                    to: share.end,
                    status: status.to_string(),
                    stderr: clip(&String::from_utf8_lossy(&output.stderr), STDERR_KEPT),
                }
                .into());
            }
            let report: WorkerReport =
                serde_json::from_str(stdout.trim()).map_err(|e| SharedError::BadReport {
                    worker: k + 1,
                    index: j + 1,
                    output: clip(&stdout, 200),
                    reason: e.to_string(),
                })?;
            let expected = share.end - share.start;
            if report.entries != expected {
                return Err(SharedError::WrongShare {
                    worker: k + 1,
                    index: j + 1,
                    entries: report.entries,
                    expected,
                }
                .into());
            }
            found += report.found;
            each[k] = format!(
                "{:.1}+{:.1}+{:.1}",
                report.started_ns.saturating_sub(spawned_ns[k]) as f64 / 1e6,
                report.attached_ns.saturating_sub(report.started_ns) as f64 / 1e6,
                report.done_ns.saturating_sub(report.attached_ns) as f64 / 1e6
            );
            start = start.max(report.started_ns.saturating_sub(spawned_ns[k]));
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

    /// Reads every block's offsets under the read lock.
    fn heap_pass<F: FnMut(u32, &[u16])>(
        &mut self,
        buf: &mut [u16],
        mut f: F,
    ) -> Result<(), VacuumError> {
        let r = self.read()?;
        for block in r.iter() {
            let n = block.copy_offsets(buf);
            f(block.block(), &buf[..n]);
        }
        Ok(())
    }

    /// Empties the store under the write lock.
    fn clear(&mut self) -> Result<(), VacuumError> {
        let mut w = self.write()?;
        w.clear();
        let (memory, tids, full) = (w.memory_usage() as u64, w.num_tids(), w.is_full());
        drop(w);
        (self.memory, self.tids, self.full) = (memory, tids, full);
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
