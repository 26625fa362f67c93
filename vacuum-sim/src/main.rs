//! The `vacuum-sim` command line. Everything it runs lives in the library.

use std::process::ExitCode;

use clap::{Parser, ValueEnum};

use vacuum_sim::order::parse_index_list;
use vacuum_sim::report::{header, json_line, table};
use vacuum_sim::scenario::{parse_size, ScenarioError, DEFAULT_SCENARIO};
use vacuum_sim::{run, DeadPattern, IndexOrder, Progress, Scenario, StoreKind};

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
store; when the store is full, run one index pass per index (one is_member per
index entry, in index order), then a heap pass (iterate the store in block
order, extracting offsets), clear the store, and resume. A final round runs
for whatever is left. 'index passes' counts rounds.

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
lines otherwise.";

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
    let cli = Cli::parse();
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
    if !cli.json {
        print!("{}", table(&runs));
    }
    let mut failed = false;
    for stats in &runs {
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
