//! The `vacuum-sim` command line. Everything it runs lives in the library.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

use clap::{Parser, ValueEnum};

use vacuum_sim::order::parse_index_list;
use vacuum_sim::report::{header, json_line, table};
use vacuum_sim::scenario::{DEFAULT_SCENARIO, ScenarioError, parse_size};
use vacuum_sim::{DeadPattern, IndexOrder, Progress, Scenario, StoreKind, run};

const AFTER_HELP: &str = "\
Scenarios (WORKLOADS.md, \"Vacuum scenarios\"; see --list):
  VAC-1/10  636,943 pages x 157 tuples, all dead, indexes correlated+random,
            limit 1 GiB / 10 = 107,374,182 bytes. The default. VAC-1 at 1/10
            scale: the limit is scaled with the table, so both stores face the
            same memory pressure as at full size. The TID store takes seconds;
            the array takes minutes (6 passes, each with 100M lookups in a
            random index, a sixth of them binary searches that miss cache).
  VAC-1     6,369,427 pages x 157 tuples (1e9 rows), all dead, correlated+random,
            limit 1 GiB. Full size: the array allocates 1 GiB and needs 6
            passes of 2e9 lookups (tens of minutes); the TID store a few
            minutes and about 50 MB.
  VAC-2     270,271 pages x 185 tuples, all dead, one random index, limit 32 MiB.
  VAC-3     540,541 pages x 185 tuples, last 20% of pages dead,
            correlated+random, limit 64 MiB.

Vacuum: scan the heap page by page, putting each page's dead TIDs into the
store; when the store is full, run one index pass per index (one is_member
question per index entry, in index order; a random index asks 1,024 entries at
a time, which the TID store answers with is_member_each), then a heap pass
(iterate the store in block order, extracting offsets), clear the store, and
resume. A final round runs for whatever is left. 'index passes' counts rounds.

Stores: 'tidstore' is the TID store (insert-only), full when its memory usage
passes the limit. 'array' is PostgreSQL 16's sorted array of 6-byte TIDs,
allocated up front at min(limit, 1 GiB, 6 B x tuples); it is full when the
next page's dead TIDs do not fit; lookups check first <= TID <= last, then
binary-search. Its peak bytes are its allocation.

Correctness: 'found' is the number of is_member hits summed over every index
pass of every index. Each index has one entry per tuple and each dead TID is
in the store during exactly one round, so found must equal
dead TIDs x number of indexes (each index separately must find every dead
TID, and each round's hits must equal the TIDs the store held). A mismatch is
printed as an error and the exit status is 1.

--mem units: B (or none), KiB, MiB, GiB (powers of 1024; K, M, G alone mean
the same), KB, MB, GB (powers of 1000); case-insensitive; fractions allowed
(1.5GiB, rounded down to whole bytes); the result must be above 0.

Output: a table with the stores side by side, or with --json one JSON object
per store and line: store, scenario, index_passes, peak_bytes,
bytes_per_dead_tid, dead_tids, found, expected_found, check_ok, heap_scan_ms,
index_ms, heap_vacuum_ms, total_ms, blocks, tuples_per_page, dead, indexes,
limit_bytes, seed. Progress goes to standard error: bars on a terminal, plain
lines otherwise.

Chart (--plot FILE.svg): after the run, also an SVG picture with two panels:
each store's memory against the heap pages scanned (sampled every 256 pages or
more, at most about 2,048 samples, and at each index pass), with the memory
limit dashed and a marker where each round of index passes ran (filled: the
store was full; hollow: the final round after the scan); and the time of each
phase (heap scan, index passes, heap vacuum) per store, in ms on a log scale.
The shared store (--workers) is in both panels. The SVG's text uses the
viewer's sans-serif font; no fonts are needed to write it.

Parallel vacuum (--workers N, Linux): after the other stores, the run is
repeated with the TID store in shared memory ('shared'), in the concurrent
form that writers in many processes fill at once and readers read without a
lock. The heap scan runs in N worker processes (this program, in a hidden
worker mode) at once, each scanning a contiguous range of pages and adding
their dead TIDs to the store; a worker stops after the page that fills the
store, and after the round (index passes, heap pass, a fresh store) the
workers go on from there. Each index pass also starts N workers, which each
look up a contiguous share of the index's entries (heap positions for a
correlated index, positions in the random order for a random one), so even a
table with one index is vacuumed in parallel. This process waits for every
worker, sums their counts and checks them as above; a failed worker fails the
run (exit status 1) after the others are killed. The table gets a 'shared xN'
column and 'heap scan speed-up' and 'index speed-up' rows: the TID store's
heap scan ms and index ms in one process divided by the shared store's with N
workers (process start-up and attach included). With --json, the shared
store's line also has workers, heap_scan_speedup, index_speedup,
workers_launched, scan_workers_launched, worker_start_ms, worker_attach_ms,
worker_lookup_ms and worker_finish_ms.

Shared memory after a crash: the shared store lives in POSIX shared-memory
objects named /dev/shm/radix-<pid of the creating process>-..., unlinked when
the run ends, also when it fails. A run that is killed (kill -9, a crash)
leaves them behind, holding memory until reboot. Clean up with
  vacuum-sim --remove-stale-shm
which removes the objects of every creator that is no longer running (never
those of a running process), prints their names, and exits.";

/// Which stores to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum StoreChoice {
    /// The TID store, then the array.
    Both,
    /// The TID store only.
    Tidstore,
    /// The classic dead-tuple array only.
    Array,
}

/// Simulates PostgreSQL's lazy vacuum with the TID store and with the
/// classic dead-tuple array, on the same table.
#[derive(Debug, Parser)]
#[command(name = "vacuum-sim", version, after_help = AFTER_HELP)]
struct Cli {
    /// The scenario: VAC-1/10 (default), VAC-1, VAC-2 or VAC-3. The flags
    /// below change its shape (the run is then called `custom`).
    #[arg(long, short = 's', default_value = DEFAULT_SCENARIO, value_parser = parse_scenario)]
    scenario: Scenario,

    /// Which stores to run.
    #[arg(long, value_enum, default_value_t = StoreChoice::Both)]
    store: StoreChoice,

    /// Print one JSON object per store and line instead of the table.
    #[arg(long)]
    json: bool,

    /// List the named scenarios and exit.
    #[arg(long)]
    list: bool,

    /// No progress output on standard error.
    #[arg(long, short = 'q')]
    quiet: bool,

    /// Heap pages.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    blocks: Option<u32>,

    /// Tuples per page (1 to 2048).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=2048))]
    tuples_per_page: Option<u16>,

    /// Dead tuples: all; tail:FRACTION (the last round(FRACTION x blocks)
    /// pages); random:FRACTION (each tuple with that probability, from a
    /// seeded hash); every:N (offsets divisible by N on every page).
    #[arg(long, value_parser = parse_dead)]
    dead: Option<DeadPattern>,

    /// The indexes, comma-separated, each correlated (heap order) or random
    /// (a uuid column: a seeded random order), e.g. correlated,random.
    #[arg(long, value_parser = parse_indexes)]
    indexes: Option<IndexList>,

    /// Memory limit for dead TIDs (maintenance_work_mem), e.g. 64MiB, 1GiB.
    #[arg(long, value_parser = parse_mem)]
    mem: Option<u64>,

    /// Seed for the random index orders and the random: dead pattern.
    #[arg(long, default_value_t = 0)]
    seed: u64,

    /// Also run the TID store in shared memory with the heap scan and each
    /// index pass split between N worker processes (1 to 63; Linux), and
    /// report the speed-up of both phases over one process.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=63))]
    workers: Option<u16>,

    /// After the run, write an SVG chart to FILE: each store's memory
    /// against the heap pages scanned, with the limit and the index passes
    /// marked, and the time of each phase per store (see below).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,

    /// Remove the shared-memory objects left in /dev/shm by runs that were
    /// killed or crashed, print their names, and exit.
    #[arg(long)]
    remove_stale_shm: bool,

    /// Worker mode (internal): attach to the shared store with this handle
    /// and look up a share of one index pass.
    #[arg(long, hide = true, value_name = "HANDLE")]
    worker: Option<String>,

    /// Worker mode (internal): the index, from 0.
    #[arg(long, hide = true, requires = "worker", default_value_t = 0)]
    worker_index: usize,

    /// Worker mode (internal): the share of the index's entries, FROM..TO.
    #[arg(long, hide = true, requires = "worker", value_name = "FROM..TO")]
    worker_range: Option<String>,

    /// Worker mode (internal): scan these heap pages, FROM..TO, instead of
    /// looking up index entries.
    #[arg(
        long,
        hide = true,
        requires = "worker",
        conflicts_with = "worker_range",
        value_name = "FROM..TO"
    )]
    worker_pages: Option<String>,

    /// Testing (internal): give the workers this handle instead of the
    /// shared store's.
    #[arg(long, hide = true, requires = "workers", value_name = "HANDLE")]
    worker_handle_override: Option<String>,
}

/// A parsed `--indexes` list (a newtype, so clap takes it as one value).
#[derive(Clone, Debug)]
struct IndexList(Vec<IndexOrder>);

fn parse_scenario(text: &str) -> Result<Scenario, ScenarioError> {
    Scenario::named(text)
}

fn parse_dead(text: &str) -> Result<DeadPattern, String> {
    text.parse().map_err(|e| format!("{e}"))
}

fn parse_indexes(text: &str) -> Result<IndexList, String> {
    parse_index_list(text)
        .map(IndexList)
        .map_err(|e| e.to_string())
}

fn parse_mem(text: &str) -> Result<u64, String> {
    parse_size(text).map_err(|e| e.to_string())
}

impl Cli {
    /// The scenario with the flags applied.
    fn scenario(&self) -> Scenario {
        let mut scenario = self.scenario.clone();
        let mut changed = Vec::new();
        if let Some(blocks) = self.blocks {
            scenario.blocks = blocks;
            changed.push("--blocks");
        }
        if let Some(tpp) = self.tuples_per_page {
            scenario.tuples_per_page = tpp;
            changed.push("--tuples-per-page");
        }
        if let Some(dead) = self.dead {
            scenario.dead = dead;
            changed.push("--dead");
        }
        if let Some(IndexList(indexes)) = &self.indexes {
            scenario.indexes = indexes.clone();
            changed.push("--indexes");
        }
        if let Some(mem) = self.mem {
            scenario.limit = mem;
            changed.push("--mem");
        }
        if !changed.is_empty() {
            scenario.note = Some(format!(
                "custom shape: {} with {}",
                scenario.name,
                changed.join(", ")
            ));
            scenario.name = "custom".to_string();
        }
        scenario.seed = self.seed;
        scenario
    }

    fn stores(&self) -> &'static [StoreKind] {
        match self.store {
            StoreChoice::Both => &StoreKind::ALL,
            StoreChoice::Tidstore => &[StoreKind::TidStore],
            StoreChoice::Array => &[StoreKind::Array],
        }
    }
}

fn main() -> ExitCode {
    // Before anything else: a worker reports its start-up cost from here.
    let born = SystemTime::now();
    let cli = Cli::parse();
    if cli.remove_stale_shm {
        return remove_stale_shm();
    }
    if let Some(handle) = &cli.worker {
        return worker(&cli, handle, born);
    }
    if cli.list {
        for scenario in Scenario::all() {
            println!("{scenario}");
            if let Some(note) = &scenario.note {
                println!("    {note}");
            }
        }
        return ExitCode::SUCCESS;
    }
    let scenario = cli.scenario();
    if let Err(e) = scenario.validate() {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    if let Some(path) = &cli.plot {
        // Before a run of minutes, not after it.
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        if dir.is_some_and(|d| !d.is_dir()) {
            eprintln!(
                "error: --plot {}: the directory {} does not exist",
                path.display(),
                dir.map_or(String::new(), |d| d.display().to_string())
            );
            return ExitCode::from(2);
        }
    }
    let progress = if cli.quiet {
        Progress::hidden()
    } else {
        Progress::auto()
    };
    if !cli.json {
        print!("{}", header(&scenario));
        println!();
    }
    let mut runs = Vec::new();
    for &kind in cli.stores() {
        match run(&scenario, kind, &progress) {
            Ok(stats) => {
                if cli.json {
                    println!("{}", json_line(&scenario, &stats));
                }
                runs.push(stats);
            }
            Err(e) => {
                eprintln!("error: {kind}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let shared = match cli.workers {
        None => None,
        Some(count) => match shared_run(&cli, &scenario, usize::from(count), &progress) {
            Ok(stats) => {
                if cli.json {
                    println!("{}", shared_line(&scenario, &stats, &runs));
                }
                Some(stats)
            }
            Err(e) => {
                eprintln!("error: {}: {e}", StoreKind::Shared);
                return ExitCode::FAILURE;
            }
        },
    };
    if !cli.json {
        match &shared {
            None => print!("{}", table(&runs)),
            Some(shared) => print!("{}", shared_table(&runs, shared)),
        }
    }
    let mut failed = false;
    if let Some(path) = &cli.plot {
        let all: Vec<_> = runs.iter().chain(&shared).cloned().collect();
        match vacuum_sim::plot::write_svg(path, &scenario, &all) {
            Ok(()) => progress.line(&format!("wrote the chart to {}", path.display())),
            Err(e) => {
                eprintln!("error: --plot: {e}");
                failed = true;
            }
        }
    }
    for stats in runs.iter().chain(&shared) {
        if let Err(e) = stats.check() {
            eprintln!("error: correctness check failed: {e}");
            failed = true;
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// `--remove-stale-shm`.
#[cfg(target_os = "linux")]
fn remove_stale_shm() -> ExitCode {
    match tidstore::shm::remove_stale() {
        Ok(removed) if removed.is_empty() => {
            println!("no stale shared-memory objects in /dev/shm");
            ExitCode::SUCCESS
        }
        Ok(removed) => {
            println!(
                "removed {} stale shared-memory object{} from /dev/shm:",
                removed.len(),
                if removed.len() == 1 { "" } else { "s" }
            );
            for name in removed {
                println!("  {name}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: cannot remove stale shared-memory objects: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn remove_stale_shm() -> ExitCode {
    eprintln!("error: --remove-stale-shm: shared memory is supported on Linux only");
    ExitCode::FAILURE
}

/// The shared store's run, `--workers count`, with this program as the
/// workers' program.
#[cfg(target_os = "linux")]
fn shared_run(
    cli: &Cli,
    scenario: &Scenario,
    count: usize,
    progress: &Progress,
) -> Result<vacuum_sim::VacuumStats, String> {
    use vacuum_sim::shared::{Workers, run_shared};
    let program = std::env::current_exe()
        .map_err(|e| format!("cannot find this program to start workers: {e}"))?;
    let mut workers = Workers::new(count, program);
    workers.handle_override = cli.worker_handle_override.clone();
    run_shared(scenario, &workers, progress).map_err(|e| e.to_string())
}

#[cfg(not(target_os = "linux"))]
fn shared_run(
    _cli: &Cli,
    _scenario: &Scenario,
    _count: usize,
    _progress: &Progress,
) -> Result<vacuum_sim::VacuumStats, String> {
    Err("--workers: the shared TID store is supported on Linux only".into())
}

#[cfg(target_os = "linux")]
fn shared_line(
    scenario: &Scenario,
    stats: &vacuum_sim::VacuumStats,
    runs: &[vacuum_sim::VacuumStats],
) -> String {
    use vacuum_sim::report::{one_process_run, shared_json_line};
    shared_json_line(scenario, stats, one_process_run(runs))
}

#[cfg(not(target_os = "linux"))]
fn shared_line(
    scenario: &Scenario,
    stats: &vacuum_sim::VacuumStats,
    _runs: &[vacuum_sim::VacuumStats],
) -> String {
    json_line(scenario, stats)
}

fn shared_table(runs: &[vacuum_sim::VacuumStats], shared: &vacuum_sim::VacuumStats) -> String {
    vacuum_sim::report::table_with_shared(runs, shared)
}

/// The hidden worker mode: one share of one index pass over the shared
/// store `handle`; prints a one-line JSON report, or an error and exit
/// status 1.
#[cfg(target_os = "linux")]
fn worker(cli: &Cli, handle: &str, born: SystemTime) -> ExitCode {
    use std::io::Write as _;
    use vacuum_sim::shared::{WorkerJob, WorkerTask, parse_range, run_worker};

    let scenario = cli.scenario();
    if let Err(e) = scenario.validate() {
        eprintln!("error: worker: {e}");
        return ExitCode::FAILURE;
    }
    let job = if let Some(pages) = cli.worker_pages.as_deref() {
        match parse_range(pages) {
            Ok(pages) => WorkerJob::HeapScan { pages },
            Err(e) => {
                eprintln!("error: worker: --worker-pages: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        let entries = match cli.worker_range.as_deref().map(parse_range) {
            None => 0..scenario.total_tuples(),
            Some(Ok(range)) => range,
            Some(Err(e)) => {
                eprintln!("error: worker: --worker-range: {e}");
                return ExitCode::FAILURE;
            }
        };
        WorkerJob::Index {
            index: cli.worker_index,
            entries,
        }
    };
    let task = WorkerTask {
        handle: handle.to_string(),
        scenario,
        job,
    };
    let report = match run_worker(&task, born, watch_leader) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("error: worker: {e}");
            return ExitCode::FAILURE;
        }
    };
    let line = match serde_json::to_string(&report) {
        Ok(line) => line,
        Err(e) => {
            eprintln!("error: worker: cannot encode the report: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "{line}").and_then(|()| out.flush()) {
        eprintln!("error: worker: cannot write the report: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

#[cfg(not(target_os = "linux"))]
fn worker(_cli: &Cli, _handle: &str, _born: SystemTime) -> ExitCode {
    eprintln!("error: worker mode: the shared TID store is supported on Linux only");
    ExitCode::FAILURE
}

/// A worker whose leader is gone has nobody to report to: a thread checks
/// every 50 ms that the parent is still the same process, and ends the
/// worker when it is not (its read lock's slot is reclaimed by the next
/// writer, as any dead reader's).
#[cfg(target_os = "linux")]
fn watch_leader() {
    use std::os::unix::process::parent_id;
    let leader = parent_id();
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(std::time::Duration::from_millis(50));
            if parent_id() != leader {
                eprintln!("error: worker: the leader (process {leader}) exited");
                std::process::exit(1);
            }
        }
    });
}
