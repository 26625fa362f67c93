//! `--plot`: the chart of a tiny run, parsed as XML, holds one line per
//! store with every memory sample, a marker per index pass, three bars per
//! store, the axis labels with their units, the legend and the title.

use std::process::Command;

use roxmltree::{Document, Node};
use vacuum_sim::plot::{
    FINAL_PASS_LEGEND, FULL_PASS_LEGEND, PAGES_AXIS, PHASES, TIME_AXIS, byte_unit, render_svg,
    store_color, title,
};
use vacuum_sim::{
    DeadPattern, IndexOrder, Progress, Scenario, StoreKind, VacuumStats, WorkerSummary, run,
};

/// 64 pages of 8 dead tuples, two indexes, 600 bytes: the array holds 100
/// TIDs, 12 pages, so it needs 6 rounds (5 full, then the final one).
fn tiny() -> (Scenario, Vec<VacuumStats>) {
    let scenario = Scenario::custom(
        64,
        8,
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

fn hex(kind: StoreKind) -> String {
    let c = store_color(kind);
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// Every `<text>` element's content, whitespace trimmed.
fn texts(doc: &Document<'_>) -> Vec<String> {
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect()
}

fn elements<'a>(doc: &'a Document<'a>, tag: &str) -> Vec<Node<'a, 'a>> {
    doc.descendants().filter(|n| n.has_tag_name(tag)).collect()
}

/// The polyline drawn in `color` with the most points: a store's series
/// (its legend swatch has two).
fn series_points(doc: &Document<'_>, color: &str) -> usize {
    elements(doc, "polyline")
        .iter()
        .filter(|n| n.attribute("stroke") == Some(color))
        .map(|n| {
            n.attribute("points")
                .unwrap_or("")
                .split_whitespace()
                .count()
        })
        .max()
        .unwrap_or(0)
}

fn check_chart(scenario: &Scenario, runs: &[VacuumStats], svg: &str) {
    let doc = Document::parse(svg).expect("the chart is well-formed XML");
    assert!(doc.root_element().has_tag_name("svg"));
    let texts = texts(&doc);
    let has = |wanted: &str| texts.iter().any(|t| t == wanted);
    assert!(has(&title(scenario)), "{texts:?}");
    assert!(has(&scenario.to_string()), "{texts:?}");
    // The axis labels, with units.
    let max = runs
        .iter()
        .map(|r| r.memory.max_bytes())
        .chain([scenario.limit])
        .max()
        .unwrap();
    let (_, unit) = byte_unit(max);
    assert!(has(&format!("store memory ({unit})")), "{texts:?}");
    assert!(has(PAGES_AXIS) && has(TIME_AXIS), "{texts:?}");
    for phase in PHASES {
        assert!(has(phase), "{phase}: {texts:?}");
    }
    // The legends: one memory entry and one time entry per store, the
    // limit and the two kinds of index pass.
    assert!(has(FULL_PASS_LEGEND) && has(FINAL_PASS_LEGEND), "{texts:?}");
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("memory limit: 600 bytes")),
        "{texts:?}"
    );
    for r in runs {
        let name = match &r.workers {
            Some(w) => format!("{} ×{}", r.store, w.count),
            None => r.store.to_string(),
        };
        let passes = format!(
            "{} index pass{}",
            r.index_passes,
            if r.index_passes == 1 { "" } else { "es" }
        );
        assert!(
            texts
                .iter()
                .any(|t| t.starts_with(&format!("{name}: peak")) && t.ends_with(&passes)),
            "{name}, {passes}: {texts:?}"
        );
        assert!(
            texts
                .iter()
                .any(|t| t.starts_with(&format!("{name}: ")) && t.ends_with(" ms in all")),
            "{name}: {texts:?}"
        );
        let color = hex(r.store);
        // The series: every sample of the trace.
        assert_eq!(
            series_points(&doc, &color),
            r.memory.samples.len(),
            "{name}"
        );
        // A filled marker per round in which the store filled, a hollow one
        // for the final round.
        let circles = elements(&doc, "circle");
        let filled = circles
            .iter()
            .filter(|c| c.attribute("fill") == Some(color.as_str()))
            .count();
        let hollow = circles
            .iter()
            .filter(|c| c.attribute("stroke") == Some(color.as_str()))
            .count();
        let full = r.memory.passes.iter().filter(|p| !p.end_of_scan).count();
        assert_eq!(filled, full, "{name}");
        assert_eq!(hollow, r.memory.passes.len() - full, "{name}");
        assert_eq!(r.memory.passes.len(), r.index_passes as usize, "{name}");
        // Three bars and the legend's square.
        let rects = elements(&doc, "rect")
            .into_iter()
            .filter(|n| n.attribute("fill") == Some(color.as_str()))
            .count();
        assert_eq!(rects, PHASES.len() + 1, "{name}");
    }
}

#[test]
fn the_chart_of_a_tiny_run() {
    let (scenario, runs) = tiny();
    let array = &runs[1];
    assert_eq!(array.index_passes, 6);
    let passes: Vec<(u32, bool)> = array
        .memory
        .passes
        .iter()
        .map(|p| (p.pages, p.end_of_scan))
        .collect();
    assert_eq!(
        passes,
        [
            (12, false),
            (24, false),
            (36, false),
            (48, false),
            (60, false),
            (64, true)
        ]
    );
    // The trace: the empty store first, the page count never falls, and
    // each round leaves a cleared sample behind.
    for r in &runs {
        let samples = &r.memory.samples;
        assert_eq!(samples[0].pages, 0);
        assert!(samples.windows(2).all(|w| w[0].pages <= w[1].pages));
        assert_eq!(samples.last().unwrap().pages, 64);
        assert_eq!(samples.len(), 1 + 2 * r.memory.passes.len(), "{}", r.store);
        assert_eq!(r.memory.max_bytes(), r.peak_bytes, "{}", r.store);
    }
    let svg = render_svg(&scenario, &runs).unwrap();
    check_chart(&scenario, &runs, &svg);
}

#[test]
fn the_shared_store_gets_its_own_series() {
    let (scenario, mut runs) = tiny();
    let mut shared = runs[0].clone();
    shared.store = StoreKind::Shared;
    shared.workers = Some(WorkerSummary {
        count: 3,
        ..WorkerSummary::default()
    });
    runs.push(shared);
    let svg = render_svg(&scenario, &runs).unwrap();
    check_chart(&scenario, &runs, &svg);
    assert!(svg.contains("shared ×3: peak"));
}

#[test]
fn no_runs_no_chart() {
    let (scenario, _) = tiny();
    assert!(render_svg(&scenario, &[]).is_err());
}

#[test]
fn the_plot_flag_writes_the_chart() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("plot-flag");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tiny.svg");
    let _ = std::fs::remove_file(&path);
    let out = Command::new(env!("CARGO_BIN_EXE_vacuum-sim"))
        .args([
            "--blocks",
            "64",
            "--tuples-per-page",
            "8",
            "--mem",
            "600",
            "--quiet",
            "--plot",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = std::fs::read_to_string(&path).unwrap();
    let doc = Document::parse(&svg).unwrap();
    let texts = texts(&doc);
    assert!(
        texts
            .iter()
            .any(|t| t == "vacuum-sim custom: dead-TID store memory and time per phase"),
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t.starts_with("tidstore: peak")));
    assert!(texts.iter().any(|t| t.starts_with("array: peak")));

    // A directory that does not exist is refused before the run.
    let out = Command::new(env!("CARGO_BIN_EXE_vacuum-sim"))
        .args(["--quiet", "--plot", "/nonexistent/dir/chart.svg"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/dir does not exist"), "{err}");
    assert!(out.stdout.is_empty());
}
