//! Reports: a table for people (stores side by side) and one JSON line per
//! store for machines.

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;

use crate::heap::DeadPattern;
use crate::order::format_index_list;
use crate::scenario::{Scenario, group};
use crate::store::StoreKind;
use crate::vacuum::VacuumStats;

/// What `found` means, for headers and help.
pub const FOUND_DEFINITION: &str = "found = is_member hits summed over every index pass of every \
     index; it must equal dead TIDs × number of indexes (each index has one entry per tuple, \
     and each dead TID is in the store during exactly one round)";

/// The header: the scenario, its note, and the correctness rule.
pub fn header(scenario: &Scenario) -> String {
    let mut out = format!("vacuum-sim {scenario}\n");
    if scenario.seed != 0 {
        let _ = writeln!(out, "  seed: {}", scenario.seed);
    }
    if let Some(note) = &scenario.note {
        let _ = writeln!(out, "  note: {note}");
    }
    let _ = writeln!(
        out,
        "  the array gets min(limit, 1 GiB, 6 B × tuples) up front; the TID store (insert-only) \
         is cleared when its memory passes the limit"
    );
    let _ = writeln!(out, "  {FOUND_DEFINITION}");
    out
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn ms_text(d: Duration) -> String {
    let tenths = (ms(d) * 10.0).round() as u64;
    format!("{}.{}", group(tenths / 10), tenths % 10)
}

/// The side-by-side table of the runs' results, with a ratio column when
/// both stores ran.
pub fn table(runs: &[VacuumStats]) -> String {
    render(&rows(runs))
}

/// The table's cells for one run, top to bottom (after the header cell).
fn cells(r: &VacuumStats) -> Vec<String> {
    vec![
        r.index_passes.to_string(),
        group(r.peak_bytes),
        r.bytes_per_dead_tid()
            .map_or("-".into(), |b| format!("{b:.4}")),
        group(r.dead_tids),
        group(r.found),
        group(r.expected_found()),
        if r.check().is_ok() { "ok" } else { "FAILED" }.into(),
        ms_text(r.heap_scan),
        ms_text(r.index),
        ms_text(r.heap_vacuum),
        ms_text(r.total),
    ]
}

/// The rows of [`table`]: a label and one cell per column.
fn rows(runs: &[VacuumStats]) -> Vec<(&'static str, Vec<String>)> {
    const LABELS: [&str; 11] = [
        "index passes",
        "peak bytes",
        "bytes per dead TID",
        "dead TIDs",
        "found",
        "expected found",
        "check",
        "heap scan ms",
        "index ms",
        "heap vacuum ms",
        "total ms",
    ];
    let columns: Vec<Vec<String>> = runs.iter().map(cells).collect();
    let mut rows: Vec<(&str, Vec<String>)> =
        vec![("", runs.iter().map(|r| r.store.to_string()).collect())];
    for (i, label) in LABELS.into_iter().enumerate() {
        rows.push((label, columns.iter().map(|c| c[i].clone()).collect()));
    }
    if let [ts, array] = runs {
        let extra = [
            format!("{} ÷ {}", array.store, ts.store),
            ratio(f64::from(array.index_passes), f64::from(ts.index_passes)),
            ratio(array.peak_bytes as f64, ts.peak_bytes as f64),
            ratio(array.peak_bytes as f64, ts.peak_bytes as f64),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            ratio(ms(array.heap_scan), ms(ts.heap_scan)),
            ratio(ms(array.index), ms(ts.index)),
            ratio(ms(array.heap_vacuum), ms(ts.heap_vacuum)),
            ratio(ms(array.total), ms(ts.total)),
        ];
        for (row, cell) in rows.iter_mut().zip(extra) {
            row.1.push(cell);
        }
    }
    rows
}

/// `a / b` as `1.23×`, or `-` when `b` is 0.
fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.2}×", a / b)
    } else {
        "-".into()
    }
}

/// Lays the rows out: labels left, cells right-aligned.
fn render(rows: &[(&str, Vec<String>)]) -> String {
    let label_width = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
    let columns = rows[0].1.len();
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .map(|(_, cells)| cells[c].chars().count())
                .max()
                .unwrap_or(0)
                .max(8)
        })
        .collect();
    let mut out = String::new();
    for (label, cells) in rows {
        let _ = write!(out, "{label:<label_width$}");
        for (cell, width) in cells.iter().zip(&widths) {
            let pad = width - cell.chars().count();
            let _ = write!(out, "  {}{cell}", " ".repeat(pad));
        }
        out.push('\n');
    }
    out
}

/// The index phase's speed-up of the shared store's worker processes over
/// one process: the local TID store's index time divided by the shared
/// store's (`None` when the shared store's is zero).
pub fn index_speedup(one_process: &VacuumStats, shared: &VacuumStats) -> Option<f64> {
    let workers = ms(shared.index);
    (workers > 0.0).then(|| ms(one_process.index) / workers)
}

/// The heap scan's speed-up of the shared store's worker processes over
/// one process: the local TID store's heap-scan time divided by the shared
/// store's (`None` when the shared store's is zero).
pub fn heap_scan_speedup(one_process: &VacuumStats, shared: &VacuumStats) -> Option<f64> {
    let workers = ms(shared.heap_scan);
    (workers > 0.0).then(|| ms(one_process.heap_scan) / workers)
}

/// The run of the local TID store among `runs`, which the shared store is
/// compared with.
pub fn one_process_run(runs: &[VacuumStats]) -> Option<&VacuumStats> {
    runs.iter().find(|r| r.store == StoreKind::TidStore)
}

/// The column header of the shared store's run: `shared ×2`.
fn shared_label(shared: &VacuumStats) -> String {
    match &shared.workers {
        Some(w) => format!("{} ×{}", shared.store, w.count),
        None => shared.store.to_string(),
    }
}

/// [`table`] with a column for the shared store's run (`--workers`), an
/// `index speed-up` row (the TID store's index ms in one process divided
/// by the shared store's with its worker processes, from the same
/// invocation), and notes on what the shared store's index time was spent
/// on.
pub fn table_with_shared(runs: &[VacuumStats], shared: &VacuumStats) -> String {
    let mut rows = rows(runs);
    rows[0].1.push(shared_label(shared));
    for (row, cell) in rows.iter_mut().skip(1).zip(cells(shared)) {
        row.1.push(cell);
    }
    let columns = rows[0].1.len();
    let speedup_row = |speedup: fn(&VacuumStats, &VacuumStats) -> Option<f64>| {
        let mut cells = vec![String::new(); columns];
        cells[columns - 1] = one_process_run(runs)
            .and_then(|ts| speedup(ts, shared))
            .map_or("-".into(), |x| format!("{x:.2}×"));
        cells
    };
    rows.push(("heap scan speed-up", speedup_row(heap_scan_speedup)));
    rows.push(("index speed-up", speedup_row(index_speedup)));
    let mut out = render(&rows);
    if let Some(w) = &shared.workers {
        let _ = writeln!(
            out,
            "\n{}: the concurrent TID store in shared memory; the heap scan ran in {} worker \
             process{es} at once, each with a contiguous range of pages ({} started in all), and \
             each index pass in {} worker process{es}, each with a contiguous share of the \
             index's entries ({} started in all); the times include starting them and attaching",
            shared_label(shared),
            w.count,
            group(w.scan_launched),
            w.count,
            group(w.launched),
            es = if w.count == 1 { "" } else { "es" },
        );
        let _ = writeln!(
            out,
            "  index ms, summed over the index passes, slowest worker of each: start {} (spawn to \
             main), attach {} (attach and read lock), lookups {}, finish {} (to every worker \
             reaped)",
            ms_text(w.start),
            ms_text(w.attach),
            ms_text(w.lookups),
            ms_text(w.finish)
        );
        if let Some(ts) = one_process_run(runs) {
            let _ = writeln!(
                out,
                "  heap scan speed-up = {} heap scan ms {} ÷ {} heap scan ms {}",
                ts.store,
                ms_text(ts.heap_scan),
                shared_label(shared),
                ms_text(shared.heap_scan)
            );
            let _ = writeln!(
                out,
                "  index speed-up = {} index ms {} ÷ {} index ms {}",
                ts.store,
                ms_text(ts.index),
                shared_label(shared),
                ms_text(shared.index)
            );
        }
    }
    out
}

/// One machine-readable line of a run.
#[derive(Clone, Debug, Serialize)]
pub struct JsonRecord {
    /// `tidstore` or `array`.
    pub store: String,
    /// The scenario id, or `custom`.
    pub scenario: String,
    /// Rounds of index passes.
    pub index_passes: u32,
    /// Peak store memory in bytes.
    pub peak_bytes: u64,
    /// `peak_bytes / dead_tids` (`null` when nothing is dead).
    pub bytes_per_dead_tid: Option<f64>,
    /// Dead TIDs in the heap.
    pub dead_tids: u64,
    /// `is_member` hits over every pass of every index.
    pub found: u64,
    /// `dead_tids × indexes`: what `found` must be.
    pub expected_found: u64,
    /// Whether all correctness checks passed.
    pub check_ok: bool,
    /// Heap scan time, ms.
    pub heap_scan_ms: f64,
    /// Index pass time, ms.
    pub index_ms: f64,
    /// Heap pass time (including clearing the store), ms.
    pub heap_vacuum_ms: f64,
    /// Whole run, ms.
    pub total_ms: f64,
    /// Heap pages.
    pub blocks: u32,
    /// Tuples per page.
    pub tuples_per_page: u16,
    /// The dead pattern (`all`, `tail:0.2`, …).
    pub dead: String,
    /// The indexes, comma-separated (`correlated,random`).
    pub indexes: String,
    /// The memory limit, bytes.
    pub limit_bytes: u64,
    /// The seed.
    pub seed: u64,
    /// The shared store's run only (`--workers`): its worker processes and
    /// speed-up. Absent from the other stores' lines.
    #[serde(flatten)]
    pub shared: Option<SharedRecord>,
}

/// The fields only the shared store's JSON line has.
#[derive(Clone, Debug, Serialize)]
pub struct SharedRecord {
    /// Worker processes per heap-scan stretch and per index pass.
    pub workers: usize,
    /// The local TID store's `heap_scan_ms` (one process) divided by this
    /// run's, from the same invocation; `null` when the TID store did not
    /// run.
    pub heap_scan_speedup: Option<f64>,
    /// The local TID store's `index_ms` (one process) divided by this
    /// run's, as `heap_scan_speedup`.
    pub index_speedup: Option<f64>,
    /// Index-pass worker processes started over the run.
    pub workers_launched: u64,
    /// Heap-scan worker processes started over the run.
    pub scan_workers_launched: u64,
    /// Of `index_ms`, summed over the passes, slowest worker of each:
    /// process start-up (spawn to `main`), ms.
    pub worker_start_ms: f64,
    /// Attaching and taking the read lock, ms.
    pub worker_attach_ms: f64,
    /// The lookups, ms.
    pub worker_lookup_ms: f64,
    /// From the last lookup to every worker reaped, ms.
    pub worker_finish_ms: f64,
}

impl JsonRecord {
    /// The record of `stats`, a run of `scenario`.
    pub fn new(scenario: &Scenario, stats: &VacuumStats) -> Self {
        let dead: DeadPattern = scenario.dead;
        Self {
            store: stats.store.to_string(),
            scenario: scenario.name.clone(),
            index_passes: stats.index_passes,
            peak_bytes: stats.peak_bytes,
            bytes_per_dead_tid: stats.bytes_per_dead_tid(),
            dead_tids: stats.dead_tids,
            found: stats.found,
            expected_found: stats.expected_found(),
            check_ok: stats.check().is_ok(),
            heap_scan_ms: ms(stats.heap_scan),
            index_ms: ms(stats.index),
            heap_vacuum_ms: ms(stats.heap_vacuum),
            total_ms: ms(stats.total),
            blocks: scenario.blocks,
            tuples_per_page: scenario.tuples_per_page,
            dead: dead.to_string(),
            indexes: format_index_list(&scenario.indexes).replace(", ", ","),
            limit_bytes: scenario.limit,
            seed: scenario.seed,
            shared: stats.workers.map(|w| SharedRecord {
                workers: w.count,
                heap_scan_speedup: None,
                index_speedup: None,
                workers_launched: w.launched,
                scan_workers_launched: w.scan_launched,
                worker_start_ms: ms(w.start),
                worker_attach_ms: ms(w.attach),
                worker_lookup_ms: ms(w.lookups),
                worker_finish_ms: ms(w.finish),
            }),
        }
    }
}

/// One JSON object (one line, no newline) for `stats`.
pub fn json_line(scenario: &Scenario, stats: &VacuumStats) -> String {
    to_line(&JsonRecord::new(scenario, stats))
}

/// The JSON line of the shared store's run, with its speed-ups over
/// `one_process` (the local TID store's run in the same invocation).
pub fn shared_json_line(
    scenario: &Scenario,
    stats: &VacuumStats,
    one_process: Option<&VacuumStats>,
) -> String {
    let mut record = JsonRecord::new(scenario, stats);
    if let Some(shared) = &mut record.shared {
        shared.heap_scan_speedup = one_process.and_then(|ts| heap_scan_speedup(ts, stats));
        shared.index_speedup = one_process.and_then(|ts| index_speedup(ts, stats));
    }
    to_line(&record)
}

fn to_line(record: &JsonRecord) -> String {
    serde_json::to_string(record).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::order::IndexOrder;
    use crate::progress::Progress;
    use crate::vacuum::run;

    fn runs() -> (Scenario, Vec<VacuumStats>) {
        let scenario = Scenario::custom(
            40,
            10,
            DeadPattern::All,
            vec![IndexOrder::Correlated, IndexOrder::Random],
            600,
        );
        let runs = StoreKind::ALL
            .iter()
            .map(|&kind| run(&scenario, kind, &Progress::hidden()).unwrap())
            .collect();
        (scenario, runs)
    }

    #[test]
    fn table_puts_stores_side_by_side() {
        let (scenario, runs) = runs();
        let text = table(&runs);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains("tidstore") && lines[0].contains("array ÷ tidstore"));
        let passes = lines
            .iter()
            .find(|l| l.starts_with("index passes"))
            .unwrap();
        // 600 bytes = 100 TIDs = 10 pages per array pass: 4 passes.
        let cells: Vec<&str> = passes.split_whitespace().collect();
        assert_eq!(cells[3], "4", "{passes}");
        assert_eq!(
            cells[4],
            format!("{:.2}×", 4.0 / cells[2].parse::<f64>().unwrap())
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("found") && l.contains("800"))
        );
        assert!(header(&scenario).contains(FOUND_DEFINITION));
        let single = table(&runs[..1]);
        assert!(!single.contains('÷'));
    }

    #[test]
    fn json_line_fields() {
        let (scenario, runs) = runs();
        let value: serde_json::Value =
            serde_json::from_str(&json_line(&scenario, &runs[1])).unwrap();
        assert_eq!(value["store"], "array");
        assert_eq!(value["scenario"], "custom");
        assert_eq!(value["index_passes"], 4);
        assert_eq!(value["peak_bytes"], 600);
        assert_eq!(value["bytes_per_dead_tid"], 1.5);
        assert_eq!(value["dead_tids"], 400);
        assert_eq!(value["found"], 800);
        assert_eq!(value["indexes"], "correlated,random");
        for field in ["heap_scan_ms", "index_ms", "heap_vacuum_ms", "total_ms"] {
            assert!(value[field].as_f64().is_some_and(|ms| ms >= 0.0), "{field}");
        }
    }

    /// A shared store's run, made from the TID store's (its index time
    /// halved), for the report's layout.
    fn shared_from(ts: &VacuumStats) -> VacuumStats {
        let mut shared = ts.clone();
        shared.store = StoreKind::Shared;
        shared.index = ts.index / 2;
        shared.workers = Some(crate::vacuum::WorkerSummary {
            count: 2,
            launched: 4,
            ..Default::default()
        });
        shared
    }

    #[test]
    fn shared_column_and_speedup() {
        let (scenario, mut runs) = runs();
        runs[0].index = Duration::from_millis(10);
        let shared = shared_from(&runs[0]);
        let text = table_with_shared(&runs, &shared);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].ends_with("shared ×2"), "{text}");
        assert!(lines[0].contains("array ÷ tidstore"), "{text}");
        let speedup = lines
            .iter()
            .find(|l| l.starts_with("index speed-up"))
            .unwrap();
        assert!(speedup.trim_end().ends_with("2.00×"), "{text}");
        assert!(text.contains("2 worker processes"), "{text}");
        // The table without --workers is unchanged by the shared column's
        // code.
        assert!(!table(&runs).contains("speed-up"));

        let value: serde_json::Value =
            serde_json::from_str(&shared_json_line(&scenario, &shared, Some(&runs[0]))).unwrap();
        assert_eq!(value["store"], "shared");
        assert_eq!(value["workers"], 2);
        assert_eq!(value["index_speedup"], 2.0);
        assert!(value["index_ms"].is_f64());
        let alone: serde_json::Value =
            serde_json::from_str(&shared_json_line(&scenario, &shared, None)).unwrap();
        assert!(alone["index_speedup"].is_null());
        assert_eq!(alone["workers"], 2);
        let local = json_line(&scenario, &runs[0]);
        assert!(!local.contains("workers"), "{local}");
    }
}
