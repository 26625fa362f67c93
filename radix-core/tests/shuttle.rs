//! shuttle runs of the concurrent tree: three threads of random `get`,
//! `insert` and `remove` on a few keys (and a churned neighbourhood that
//! makes their node grow and shrink), under shuttle's random and PCT
//! schedulers, each history checked for linearizability by the WGL
//! checker (`tests/it/lincheck/check.rs`).
//!
//! Run with `RUSTFLAGS="--cfg shuttle" cargo test -p radix-core --release
//! --test shuttle` (`.ci/run` does); without `--cfg shuttle` the file is
//! empty. A failing schedule is saved under `tests/schedules/`, and
//! `shuttle::replay_from_file` replays it.
#![cfg(shuttle)]

#[path = "it/lincheck/check.rs"]
mod lincheck;

use lincheck::{Event, TestMap};
use shuttle::rand::RngCore;
use shuttle::scheduler::{PctScheduler, RandomScheduler, Scheduler};
use shuttle::sync::Arc;
use shuttle::sync::atomic::{AtomicU64, Ordering};
use shuttle::{Config, FailurePersistence, Runner, thread};

radix_core::radix_tree! {
    /// The tree under test.
    struct Tree { key: u64, value: u64, compression: full, concurrency: rowex }
}

impl TestMap for Tree {
    fn get(&self, key: u64) -> Option<u64> {
        Tree::get(self, key)
    }
    fn insert(&self, key: u64, value: u64) -> Option<u64> {
        Tree::insert(self, key, value)
    }
    fn remove(&self, key: u64) -> Option<u64> {
        Tree::remove(self, key)
    }
}

/// Three threads of four operations each on keys 0..3, beside a writer
/// that fills and empties keys 3..40 of the same node; the history is
/// checked when all have joined.
fn run_once() {
    let tree = Arc::new(Tree::new());
    let clock = Arc::new(AtomicU64::new(0));
    let churn = {
        let tree = tree.clone();
        thread::spawn(move || {
            for k in 3..40 {
                tree.insert(k, k);
            }
            for k in 3..40 {
                tree.remove(k);
            }
        })
    };
    let workers: Vec<_> = (0..3usize)
        .map(|thread| {
            let (tree, clock) = (tree.clone(), clock.clone());
            thread::spawn(move || {
                let mut events = Vec::new();
                let mut rng = shuttle::rand::thread_rng();
                for step in 0..4u64 {
                    let choice = rng.next_u64() % 9;
                    let key = choice % 3;
                    let value = (thread as u64) * 10 + step;
                    let tick = || clock.fetch_add(1, Ordering::SeqCst);
                    events.push(lincheck::perform(
                        &*tree,
                        thread,
                        key,
                        value,
                        choice / 3,
                        tick,
                    ));
                }
                events
            })
        })
        .collect();
    let history: Vec<Event> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    churn.join().unwrap();
    if let Err(e) = lincheck::check(&history) {
        panic!("not linearizable: {e}");
    }
}

/// Runs [`run_once`] under `scheduler`, saving a failing schedule.
fn run(scheduler: impl Scheduler + 'static) {
    let mut config = Config::new();
    config.stack_size = 1 << 20;
    // Shuttle runs every atomic as SeqCst, and says so on each run; the
    // weaker orderings are loom's to check (`tests/loom.rs`).
    config.silence_warnings = true;
    config.failure_persistence = FailurePersistence::File(Some(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/schedules").into(),
    ));
    Runner::new(scheduler, config).run(run_once);
}

/// Schedules per scheduler: 10,000 take about a second in a release build.
const SCHEDULES: usize = 10_000;

#[test]
fn random_schedules_are_linearizable() {
    run(RandomScheduler::new(SCHEDULES));
}

#[test]
fn pct_schedules_are_linearizable() {
    run(PctScheduler::new(3, SCHEDULES));
}
