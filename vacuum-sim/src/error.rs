//! Why a run fails: the simulation's own errors ([`VacuumError`]), and,
//! on Linux, those of the shared store's leader ([`SharedError`]) and of
//! its worker processes ([`WorkerError`], [`RangeError`]).
//!
//! They live here, below both `vacuum` and `shared`, so that the local
//! run can carry the shared run's error without the two modules
//! depending on each other.

#[cfg(target_os = "linux")]
use std::io;

#[cfg(target_os = "linux")]
use tidstore::shm::ShmError;

use crate::scenario::ScenarioError;
use crate::store::StoreError;

/// Why a run could not happen.
#[derive(Debug, thiserror::Error)]
pub enum VacuumError {
    /// The scenario's shape is invalid.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The store could not be built or filled.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// [`run`](crate::run) was asked for the shared store, which needs worker
    /// processes: `shared::run_shared` (or `vacuum-sim --workers N`) runs it.
    #[error(
        "the shared store runs its index passes in worker processes: use --workers N (shared::run_shared)"
    )]
    NeedsWorkers,
    /// The shared store, or one of its worker processes, failed.
    #[cfg(target_os = "linux")]
    #[error(transparent)]
    Shared(#[from] SharedError),
}

/// Why the shared store's run failed.
#[cfg(target_os = "linux")]
#[derive(Debug, thiserror::Error)]
pub enum SharedError {
    /// The shared memory could not be had.
    #[error("cannot create the shared TID store (budget {bytes} bytes): {source}")]
    Create {
        /// The budget.
        bytes: u64,
        /// What the system said.
        source: ShmError,
    },
    /// The store could not be destroyed after the run.
    #[error("cannot destroy the shared TID store: {0}")]
    Destroy(ShmError),
    /// A worker count outside 1..=`max`
    /// ([`MAX_WORKERS`](crate::shared::MAX_WORKERS)).
    #[error("--workers must be from 1 to {max}, not {workers}")]
    WorkerCount {
        /// The count asked for.
        workers: usize,
        /// The most there may be.
        max: usize,
    },
    /// A worker process could not be started.
    #[error("cannot start worker {worker} ({program}): {source}")]
    Spawn {
        /// The worker (from 1).
        worker: usize,
        /// The program.
        program: String,
        /// What the system said.
        source: io::Error,
    },
    /// Waiting for a worker process failed.
    #[error("waiting for worker {worker}: {source}")]
    Wait {
        /// The worker (from 1).
        worker: usize,
        /// What the system said.
        source: io::Error,
    },
    /// A worker exited with an error (or was killed).
    #[error("worker {worker} of {count} ({task}) failed ({status}){}", stderr_suffix(.stderr))]
    WorkerFailed {
        /// The worker (from 1).
        worker: usize,
        /// Workers in the phase.
        count: usize,
        /// Its task: `index 1, entries 0..500` or `heap scan, pages 0..80`.
        task: String,
        /// How it ended.
        status: String,
        /// What it printed on standard error.
        stderr: String,
    },
    /// A worker exited successfully but its output is not a report.
    #[error("worker {worker} ({task}) printed {output:?}, which is not a worker report: {reason}")]
    BadReport {
        /// The worker (from 1).
        worker: usize,
        /// Its task.
        task: String,
        /// What it printed (at most 200 characters).
        output: String,
        /// Why it did not parse.
        reason: String,
    },
    /// A worker's report covers more or fewer entries (or pages) than its
    /// share.
    #[error("worker {worker} ({task}) reported {done} done, but its share was {expected}")]
    WrongShare {
        /// The worker (from 1).
        worker: usize,
        /// Its task.
        task: String,
        /// Entries (pages) it reported.
        done: u64,
        /// Entries (pages) in its share: exactly these for an index pass,
        /// at most these for a heap scan.
        expected: u64,
    },
}

#[cfg(target_os = "linux")]
fn stderr_suffix(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!(": {stderr}")
    }
}

/// Why a worker process failed.
#[cfg(target_os = "linux")]
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The handle did not parse.
    #[error("bad shared store handle: {0}")]
    Handle(ShmError),
    /// Attaching failed: no such store, or not a TID store.
    #[error("cannot attach to the shared TID store {handle}: {source}")]
    Attach {
        /// The handle.
        handle: String,
        /// Why.
        source: ShmError,
    },
    /// A heap-scan worker could not add a page's dead TIDs to the store.
    #[error("cannot add the dead TIDs of page {block} to the shared TID store: {source}")]
    Write {
        /// The page.
        block: u32,
        /// Why.
        source: tidstore::TidStoreError,
    },
    /// The pages are not a range of the table's.
    #[error("--worker-pages {from}..{to}: the table has {blocks} pages")]
    Pages {
        /// First page.
        from: u64,
        /// Page after the last.
        to: u64,
        /// Pages in the table.
        blocks: u32,
    },
    /// The index is not one of the scenario's.
    #[error("--worker-index {index}: the table has {indexes} indexes (counted from 0)")]
    NoSuchIndex {
        /// The index asked for.
        index: usize,
        /// How many there are.
        indexes: usize,
    },
    /// The share is not a range of the index's entries.
    #[error("--worker-range {from}..{to}: the index has {entries} entries")]
    Range {
        /// First entry.
        from: u64,
        /// Entry after the last.
        to: u64,
        /// Entries in the index.
        entries: u64,
    },
    /// The report could not be written.
    #[error("cannot write the worker report: {0}")]
    Output(#[from] io::Error),
}

/// A `FROM..TO` range that did not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad range `{0}`: expected FROM..TO, two whole numbers with FROM <= TO, such as 0..1000")]
pub struct RangeError(pub String);
