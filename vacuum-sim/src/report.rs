//! Reports: a table for people (stores side by side) and one JSON line per
//! store for machines.

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;

use crate::heap::DeadPattern;
use crate::order::format_index_list;
use crate::scenario::{group, Scenario};
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
    let mut rows: Vec<(&str, Vec<String>)> = vec![
        ("", runs.iter().map(|r| r.store.to_string()).collect()),
        (
            "index passes",
            runs.iter().map(|r| r.index_passes.to_string()).collect(),
        ),
        (
            "peak bytes",
            runs.iter().map(|r| group(r.peak_bytes)).collect(),
        ),
        (
            "bytes per dead TID",
            runs.iter()
                .map(|r| {
                    r.bytes_per_dead_tid()
                        .map_or("-".into(), |b| format!("{b:.4}"))
                })
                .collect(),
        ),
        (
            "dead TIDs",
            runs.iter().map(|r| group(r.dead_tids)).collect(),
        ),
        ("found", runs.iter().map(|r| group(r.found)).collect()),
        (
            "expected found",
            runs.iter().map(|r| group(r.expected_found())).collect(),
        ),
        (
            "check",
            runs.iter()
                .map(|r| if r.check().is_ok() { "ok" } else { "FAILED" }.into())
                .collect(),
        ),
        (
            "heap scan ms",
            runs.iter().map(|r| ms_text(r.heap_scan)).collect(),
        ),
        ("index ms", runs.iter().map(|r| ms_text(r.index)).collect()),
        (
            "heap vacuum ms",
            runs.iter().map(|r| ms_text(r.heap_vacuum)).collect(),
        ),
        ("total ms", runs.iter().map(|r| ms_text(r.total)).collect()),
    ];
    if let [ts, array] = runs {
        let ratio = |a: f64, b: f64| {
            if b > 0.0 {
                format!("{:.2}×", a / b)
            } else {
                "-".into()
            }
        };
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
    for (label, cells) in &rows {
        let _ = write!(out, "{label:<label_width$}");
        for (cell, width) in cells.iter().zip(&widths) {
            let pad = width - cell.chars().count();
            let _ = write!(out, "  {}{cell}", " ".repeat(pad));
        }
        out.push('\n');
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
        }
    }
}

/// One JSON object (one line, no newline) for `stats`.
pub fn json_line(scenario: &Scenario, stats: &VacuumStats) -> String {
    serde_json::to_string(&JsonRecord::new(scenario, stats))
        .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::order::IndexOrder;
    use crate::progress::Progress;
    use crate::store::StoreKind;
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
        assert!(lines
            .iter()
            .any(|l| l.starts_with("found") && l.contains("800")));
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
}
