//! `bench-report --plot DIR`: one SVG per workload family (RT, RT-C, TS,
//! SET, TB) that ran, `DIR/rt.svg`, `DIR/rt-c.svg`, `DIR/ts.svg`,
//! `DIR/set.svg`, `DIR/tb.svg`.
//!
//! Each chart has one panel per metric, side by side, and one row of bars
//! per workload case (and variant or RT-C row) and structure other than
//! the project: the structure's figure divided by the project's on the
//! same data, as a bar from 1× on a log₂ axis, labelled with the ratio.
//! Left of the black 1× line the structure is faster (or smaller) than
//! the project; right of it, slower (or larger).
//!
//! The metrics, per family (see [`Family::metrics`]):
//!
//! - RT: search time (RT-6, which has no search: its churn), memory after
//!   the load;
//! - TS: the ordered and the shuffled lookup passes' times, memory after
//!   the load;
//! - RT-C: time per read and per write (the project's operations per
//!   second divided by the structure's), memory after the load;
//! - SET: the union's and the intersection's times, the union's memory;
//! - TB: the build's, the operation's (TB-4's intersection, TB-5's
//!   unions) and the walk's times, memory after the build.
//!
//! Drawn with `plotters`' SVG backend alone: text is written as `<text>`
//! elements for the viewer's sans-serif font; nothing reads fonts here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::report::{CaseResult, Rows, group};
use crate::workloads::Case;

/// The impl every ratio is taken against.
pub const PROJECT: &str = "project";

/// The x-axis label of every panel.
pub const RATIO_AXIS: &str = "÷ project (log scale)";

/// A family of workloads: one chart each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// RT-1 to RT-7: the radix tree as a map.
    Rt,
    /// RT-C: concurrent readers beside writers.
    Rtc,
    /// TS-*: the TID store.
    Ts,
    /// SET-1, SET-2: set operations.
    Set,
    /// TB-1 to TB-6: TID bitmaps.
    Tb,
}

/// One panel of a chart: what its ratios measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metric {
    /// The panel's title.
    pub title: &'static str,
    /// Whether it is a time (the others are memory).
    pub time: bool,
}

impl Family {
    /// The family of `case`.
    pub fn of(case: &Case) -> Family {
        match case {
            Case::Rt(_) | Case::Rt128(_) => Family::Rt,
            Case::Rtc(_) => Family::Rtc,
            Case::Ts(_) => Family::Ts,
            Case::Set(_) => Family::Set,
            Case::Tb(_) => Family::Tb,
        }
    }

    /// Its name in titles: `RT`, `RT-C`, `TS`, `SET`, `TB`.
    pub fn name(self) -> &'static str {
        match self {
            Family::Rt => "RT",
            Family::Rtc => "RT-C",
            Family::Ts => "TS",
            Family::Set => "SET",
            Family::Tb => "TB",
        }
    }

    /// Its chart's file name: `rt.svg`, `rt-c.svg`, `ts.svg`, `set.svg`,
    /// `tb.svg`.
    pub fn file_name(self) -> String {
        format!("{}.svg", self.name().to_ascii_lowercase())
    }

    /// Its panels, left to right.
    pub fn metrics(self) -> &'static [Metric] {
        const MEMORY: Metric = Metric {
            title: "memory after the load",
            time: false,
        };
        match self {
            Family::Rt => &[
                Metric {
                    title: "search time (RT-6: churn)",
                    time: true,
                },
                MEMORY,
            ],
            Family::Rtc => &[
                Metric {
                    title: "time per read (1 / reads per s)",
                    time: true,
                },
                Metric {
                    title: "time per write (1 / writes per s)",
                    time: true,
                },
                MEMORY,
            ],
            Family::Ts => &[
                Metric {
                    title: "ordered lookups' time",
                    time: true,
                },
                Metric {
                    title: "shuffled lookups' time",
                    time: true,
                },
                MEMORY,
            ],
            Family::Set => &[
                Metric {
                    title: "union time (A ∪= B)",
                    time: true,
                },
                Metric {
                    title: "intersection time (A ∩= B)",
                    time: true,
                },
                Metric {
                    title: "memory of the union's result",
                    time: false,
                },
            ],
            Family::Tb => &[
                Metric {
                    title: "build time (every add)",
                    time: true,
                },
                Metric {
                    title: "operation time (TB-4: ∩, TB-5: ∪)",
                    time: true,
                },
                Metric {
                    title: "walk time",
                    time: true,
                },
                Metric {
                    title: "memory after the build",
                    time: false,
                },
            ],
        }
    }

    /// What the time panels measure, for the chart's subtitle.
    fn time_note(self) -> &'static str {
        match self {
            Family::Rt => {
                "Time: the search phase (RT-6 has none: its churn of deletes and inserts)."
            }
            Family::Rtc => {
                "Time: wall clock per operation, all threads of a kind together (a write panel \
                 only for rows with writers)."
            }
            Family::Ts => {
                "Time: each lookup pass over the index TIDs (ordered: in block order; shuffled: \
                 a random order, possibly a sample)."
            }
            Family::Set => "Time: each operation on a fresh copy of A.",
            Family::Tb => {
                "Time: every add call of every bitmap; the intersection or unions (TB-4, TB-5 \
                 only); the walk of the result (TB-6: its rounds with walks less without)."
            }
        }
    }
}

/// One row of bars: a structure's ratios to the project on one case, one
/// per [`Family::metrics`] (`None` where either figure is missing or 0).
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// The structure's `impl` name.
    pub impl_name: String,
    /// Its figure ÷ the project's, per metric.
    pub ratios: Vec<Option<f64>>,
}

/// The bars of one case.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseBars {
    /// The case: its id and name, and the parameters that tell it from
    /// other cases of the same id (`RT-1 seq_search (random_block=1)`);
    /// without the name when that would be too long for the left column
    /// (`RT-C (readers=2, writers=0)`).
    pub label: String,
    /// One per structure other than the project, in the report's order.
    pub bars: Vec<Bar>,
}

/// Everything one chart shows.
#[derive(Clone, Debug, PartialEq)]
pub struct FamilyChart {
    /// The family.
    pub family: Family,
    /// Its cases, in the order they ran.
    pub cases: Vec<CaseBars>,
    /// A line on how the figures were measured (size, runs), or empty.
    pub note: String,
}

impl FamilyChart {
    /// The chart's title.
    pub fn title(&self) -> String {
        format!(
            "bench-report {}: each structure's time and memory ÷ the project's",
            self.family.name()
        )
    }

    /// The structures with bars, in order of first appearance: each keeps
    /// its colour across cases.
    pub fn impls(&self) -> Vec<&str> {
        let mut seen: Vec<&str> = Vec::new();
        for bar in self.cases.iter().flat_map(|c| &c.bars) {
            if !seen.contains(&bar.impl_name.as_str()) {
                seen.push(&bar.impl_name);
            }
        }
        seen
    }
}

/// The raw figures of one structure on one case, per metric of its family
/// (times in ms, or ms per operation; memory in bytes).
fn figures(rows: &Rows) -> Vec<(&'static str, Vec<Option<f64>>)> {
    let bytes = |b: u64| Some(b as f64);
    let per_op = |rate: f64| (rate > 0.0).then(|| 1e3 / rate);
    match rows {
        Rows::Rt(rows) => rows
            .iter()
            .map(|r| {
                (
                    r.impl_name,
                    vec![r.search_ms.or(r.churn_ms), bytes(r.mem_bytes)],
                )
            })
            .collect(),
        Rows::Rtc(rows) => rows
            .iter()
            .map(|r| {
                (
                    r.impl_name,
                    vec![
                        per_op(r.reads_per_s),
                        per_op(r.writes_per_s),
                        bytes(r.mem_bytes),
                    ],
                )
            })
            .collect(),
        Rows::Ts(rows) => rows
            .iter()
            .map(|r| {
                (
                    r.impl_name,
                    vec![
                        Some(r.lookup_ms[0]),
                        Some(r.lookup_ms[1]),
                        bytes(r.mem_bytes),
                    ],
                )
            })
            .collect(),
        Rows::Set(rows) => rows
            .iter()
            .map(|r| {
                (
                    r.impl_name,
                    vec![
                        Some(r.union_ms),
                        Some(r.intersect_ms),
                        bytes(r.union_mem_bytes),
                    ],
                )
            })
            .collect(),
        Rows::Tb(rows) => rows
            .iter()
            .map(|r| {
                (
                    r.impl_name,
                    vec![
                        Some(r.build_ms),
                        r.op_ms,
                        Some(r.iterate_ms),
                        bytes(r.mem_bytes),
                    ],
                )
            })
            .collect(),
    }
}

/// `value ÷ project`, when both are positive and finite.
fn ratio(value: Option<f64>, project: Option<f64>) -> Option<f64> {
    let (v, p) = (value?, project?);
    let r = v / p;
    (v > 0.0 && p > 0.0 && r.is_finite()).then_some(r)
}

/// The bars of `result`: `None` when the project did not run on it.
pub fn case_bars(result: &CaseResult, label: String) -> Option<CaseBars> {
    let figures = figures(&result.rows);
    let (_, project) = figures.iter().find(|(name, _)| *name == PROJECT)?;
    let bars = figures
        .iter()
        .filter(|(name, _)| *name != PROJECT)
        .map(|(name, values)| Bar {
            impl_name: name.to_string(),
            ratios: values
                .iter()
                .zip(project)
                .map(|(&v, &p)| ratio(v, p))
                .collect(),
        })
        .collect();
    Some(CaseBars { label, bars })
}

/// The case's label: its id and name, and the parameters in which it
/// differs from `others` of the same id (RT-C: its readers and writers,
/// always).
fn case_label(case: &Case, others: &[&Case]) -> String {
    let name = match case {
        Case::Rt(c) => c.name(),
        Case::Rt128(c) => c.name(),
        Case::Rtc(c) => c.name(),
        Case::Ts(_) => "",
        Case::Set(c) => c.name(),
        Case::Tb(c) => c.name(),
    };
    let params = case.params();
    let same_id: Vec<String> = others
        .iter()
        .filter(|o| o.id() == case.id())
        .map(|o| o.params())
        .collect();
    // An RT-C row always names its threads: they are what the row is.
    if same_id.len() > 1 || matches!(case, Case::Rtc(_)) {
        let differing: Vec<&str> = params
            .split(',')
            .filter(|pair| {
                matches!(case, Case::Rtc(_))
                    || !same_id.iter().all(|p| p.split(',').any(|q| q == *pair))
            })
            .collect();
        if !differing.is_empty() {
            let params = format!("({})", differing.join(", "));
            let long = format!("{} {name} {params}", case.id());
            // The name goes when the label would not fit its column.
            return if long.chars().count() <= MAX_LABEL_CHARS {
                long
            } else {
                format!("{} {params}", case.id())
            };
        }
    }
    if name.is_empty() {
        case.id().to_string()
    } else {
        format!("{} {name}", case.id())
    }
}

/// The longest case label that fits the left column.
const MAX_LABEL_CHARS: usize = 36;

/// The charts of `results`, one per family that ran, in family order;
/// `note` goes under each title. A family whose cases all lack the
/// project has no chart.
pub fn family_charts(results: &[CaseResult], note: &str) -> Vec<FamilyChart> {
    let mut by_family: BTreeMap<Family, Vec<&CaseResult>> = BTreeMap::new();
    for result in results {
        by_family
            .entry(Family::of(&result.case))
            .or_default()
            .push(result);
    }
    by_family
        .into_iter()
        .filter_map(|(family, results)| {
            let cases: Vec<&Case> = results.iter().map(|r| &r.case).collect();
            let bars: Vec<CaseBars> = results
                .iter()
                .filter_map(|r| case_bars(r, case_label(&r.case, &cases)))
                .filter(|c| !c.bars.is_empty())
                .collect();
            (!bars.is_empty()).then(|| FamilyChart {
                family,
                cases: bars,
                note: note.to_string(),
            })
        })
        .collect()
}

/// Writes the charts of `results` into `dir` (created if missing), one
/// file per family ([`Family::file_name`]); returns the files written.
pub fn write_charts(
    dir: &Path,
    results: &[CaseResult],
    note: &str,
) -> Result<Vec<PathBuf>, PlotError> {
    std::fs::create_dir_all(dir).map_err(|source| PlotError::Write {
        path: dir.display().to_string(),
        source,
    })?;
    let mut written = Vec::new();
    for chart in family_charts(results, note) {
        let path = dir.join(chart.family.file_name());
        let svg = render_svg(&chart)?;
        std::fs::write(&path, svg).map_err(|source| PlotError::Write {
            path: path.display().to_string(),
            source,
        })?;
        written.push(path);
    }
    Ok(written)
}

/// Why a chart could not be made.
#[derive(Debug)]
pub enum PlotError {
    /// `plotters` failed to draw.
    Draw(String),
    /// A file or the directory could not be written.
    Write {
        /// The file or directory.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

impl std::fmt::Display for PlotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlotError::Draw(e) => write!(f, "cannot draw the chart: {e}"),
            PlotError::Write { path, source } => write!(f, "cannot write {path}: {source}"),
        }
    }
}

impl std::error::Error for PlotError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PlotError::Draw(_) => None,
            PlotError::Write { source, .. } => Some(source),
        }
    }
}

/// The left column, with the case and structure names, pixels.
const LABEL_WIDTH: u32 = 270;
/// One panel's width, pixels.
const PANEL_WIDTH: u32 = 420;
/// The title and subtitle lines, pixels.
const HEADER_HEIGHT: u32 = 118;
/// Above the bars: the panel's caption, pixels.
const CAPTION_HEIGHT: u32 = 40;
/// Below the bars: the axis' labels and description, pixels.
const AXIS_HEIGHT: u32 = 62;
/// One bar's row, pixels.
const ROW_HEIGHT: u32 = 15;

/// Colours for the structures, in order of first appearance (Tableau's
/// ten, then two more).
const PALETTE: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(40, 40, 40),
    RGBColor(0, 90, 50),
];

/// The root area of the SVG being drawn.
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// What the drawing helpers return: `plotters`' errors, boxed.
type Drawn<T = ()> = Result<T, Box<dyn std::error::Error>>;

/// Where each row goes, in slots of [`ROW_HEIGHT`] from the top: a
/// heading slot per case, then one per bar.
struct Slots {
    /// Per case: its heading's slot, then each bar's.
    cases: Vec<(usize, Vec<usize>)>,
    /// All slots.
    total: usize,
}

impl Slots {
    fn of(chart: &FamilyChart) -> Self {
        let mut next = 0;
        let cases = chart
            .cases
            .iter()
            .map(|c| {
                let heading = next;
                let bars: Vec<usize> = (0..c.bars.len()).map(|i| heading + 1 + i).collect();
                next = heading + 1 + c.bars.len() + 1;
                (heading, bars)
            })
            .collect();
        Self {
            cases,
            total: next.saturating_sub(1).max(1),
        }
    }

    /// The y coordinate of slot `s`'s middle (the chart's y grows up).
    fn y(&self, s: usize) -> f64 {
        self.total as f64 - s as f64 - 0.5
    }
}

/// The chart's size in pixels.
pub fn size(chart: &FamilyChart) -> (u32, u32) {
    let panels = chart.family.metrics().len() as u32;
    let slots = Slots::of(chart).total as u32;
    (
        LABEL_WIDTH + panels * PANEL_WIDTH + 20,
        HEADER_HEIGHT + CAPTION_HEIGHT + slots * ROW_HEIGHT + AXIS_HEIGHT + 10,
    )
}

/// Renders `chart` as an SVG document.
pub fn render_svg(chart: &FamilyChart) -> Result<String, PlotError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size(chart)).into_drawing_area();
        draw(&root, chart).map_err(|e| PlotError::Draw(e.to_string()))?;
        root.present().map_err(|e| PlotError::Draw(e.to_string()))?;
    }
    Ok(svg)
}

fn font(size: f64) -> TextStyle<'static> {
    ("sans-serif", size).into_font().color(&BLACK)
}

fn anchored(size: f64, h: HPos, v: VPos) -> TextStyle<'static> {
    font(size).pos(Pos::new(h, v))
}

fn bold(size: f64, h: HPos, v: VPos) -> TextStyle<'static> {
    ("sans-serif", size, FontStyle::Bold)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(h, v))
}

/// A ratio as its label: `0.52×`, `3.1×`, `12×`, `1/4×` for an axis
/// tick below 1 that is a power of 2.
pub fn ratio_text(r: f64, tick: bool) -> String {
    if tick && r < 1.0 {
        let inverse = (1.0 / r).round();
        if (inverse * r - 1.0).abs() < 1e-9 {
            return format!("1/{inverse}×");
        }
    }
    let text = if r >= 100.0 {
        group(r.round() as u64)
    } else if r >= 10.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.2}")
    };
    let text = if tick && text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    format!("{text}×")
}

/// The ticks of a log₂ axis over `lo..hi`: the powers of 2 in it whose
/// exponent is a multiple of the smallest step (in octaves) that keeps
/// them to at most 7, so 1× is always one.
pub fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (first, last) = (lo.log2().ceil() as i32, hi.log2().floor() as i32);
    let count = |step: i32| (first..=last).filter(|e| e.rem_euclid(step) == 0).count();
    let step = (1..).find(|&step| count(step) <= 7).unwrap_or(1);
    (first..=last)
        .filter(|e| e.rem_euclid(step) == 0)
        .map(|e| 2f64.powi(e))
        .collect()
}

/// The x range of a panel holding `ratios`: 1 and every ratio, with room
/// for the labels beside the bars' ends.
fn x_range(ratios: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = ratios.fold((1.0f64, 1.0f64), |(lo, hi), r| (lo.min(r), hi.max(r)));
    ((lo / 2.4).min(0.5), (hi * 2.4).max(2.0))
}

fn draw(root: &Area<'_>, chart: &FamilyChart) -> Drawn {
    root.fill(&WHITE)?;
    let (head, body) = root.split_vertically(HEADER_HEIGHT);
    head.draw_text(&chart.title(), &bold(24.0, HPos::Left, VPos::Top), (20, 12))?;
    let lines = [
        "Each bar: a structure's figure divided by the project's (impl `project`) on the same \
         data; the black line at 1× is the project."
            .to_string(),
        format!(
            "Left of 1×: faster or smaller than the project; right of it: slower or larger. {}",
            chart.family.time_note()
        ),
        chart.note.clone(),
    ];
    for (i, line) in lines.iter().filter(|l| !l.is_empty()).enumerate() {
        head.draw_text(
            line,
            &anchored(15.0, HPos::Left, VPos::Top),
            (20, 46 + 20 * i as i32),
        )?;
    }
    let slots = Slots::of(chart);
    let impls = chart.impls();
    let color = |name: &str| {
        let i = impls.iter().position(|n| *n == name).unwrap_or(0);
        PALETTE[i % PALETTE.len()]
    };
    let (labels, mut rest) = body.split_horizontally(LABEL_WIDTH);
    let metrics = chart.family.metrics();
    let mut row_y: Option<Vec<i32>> = None;
    for (m, metric) in metrics.iter().enumerate() {
        let (panel, right) = rest.split_horizontally(PANEL_WIDTH);
        rest = right;
        let ratios = chart
            .cases
            .iter()
            .flat_map(|c| &c.bars)
            .filter_map(|b| b.ratios.get(m).copied().flatten());
        let (lo, hi) = x_range(ratios);
        let mut plot = ChartBuilder::on(&panel)
            .caption(
                format!(
                    "{}{}",
                    metric.title,
                    if metric.time { "" } else { " (bytes)" }
                ),
                font(17.0),
            )
            .margin_left(12)
            .margin_right(16)
            .margin_top(8)
            .x_label_area_size(AXIS_HEIGHT - 8)
            .build_cartesian_2d((lo..hi).log_scale().base(2.0), 0f64..slots.total as f64)?;
        let blank = |_: &f64| String::new();
        plot.configure_mesh()
            .disable_mesh()
            .y_labels(0)
            .x_labels(0)
            .x_label_formatter(&blank)
            .set_all_tick_mark_size(0)
            .x_desc(RATIO_AXIS)
            .axis_desc_style(font(14.0))
            .draw()?;
        // The ticks, drawn here so that 1× is always among them.
        for t in ticks(lo, hi) {
            plot.draw_series(LineSeries::new(
                [(t, 0.0), (t, slots.total as f64)],
                RGBColor(220, 220, 220).stroke_width(1),
            ))?;
            let at = on_area(&panel, plot.backend_coord(&(t, 0.0)), 0);
            panel.draw(&PathElement::new(
                vec![(at.0, at.1), (at.0, at.1 + 5)],
                BLACK.stroke_width(1),
            ))?;
            panel.draw_text(
                &ratio_text(t, true),
                &anchored(13.0, HPos::Center, VPos::Top),
                (at.0, at.1 + 8),
            )?;
        }
        // A light band behind every other case, to follow it across panels.
        for (k, (heading, bars)) in slots.cases.iter().enumerate() {
            if k % 2 == 1 {
                let last = bars.last().copied().unwrap_or(*heading);
                plot.draw_series([Rectangle::new(
                    [(lo, slots.y(*heading) + 0.5), (hi, slots.y(last) - 0.5)],
                    RGBColor(244, 244, 248).filled(),
                )])?;
            }
        }
        plot.draw_series(LineSeries::new(
            [(1.0, 0.0), (1.0, slots.total as f64)],
            BLACK.stroke_width(2),
        ))?;
        if row_y.is_none() {
            row_y = Some(
                (0..slots.total)
                    .map(|s| plot.backend_coord(&(1.0, slots.y(s))).1)
                    .collect(),
            );
        }
        for (case, (_, bar_slots)) in chart.cases.iter().zip(&slots.cases) {
            for (bar, &s) in case.bars.iter().zip(bar_slots) {
                let y = slots.y(s);
                let at = plot.backend_coord(&(1.0, y));
                let Some(r) = bar.ratios.get(m).copied().flatten() else {
                    panel.draw_text(
                        "n/a",
                        &anchored(12.0, HPos::Left, VPos::Center).color(&RGBColor(120, 120, 120)),
                        on_area(&panel, at, 5),
                    )?;
                    continue;
                };
                plot.draw_series([Rectangle::new(
                    [(1.0, y - 0.36), (r, y + 0.36)],
                    color(&bar.impl_name).filled(),
                )])?;
                let end = on_area(&panel, plot.backend_coord(&(r, y)), 0);
                let (h, dx) = if r >= 1.0 {
                    (HPos::Left, 4)
                } else {
                    (HPos::Right, -4)
                };
                panel.draw_text(
                    &ratio_text(r, false),
                    &anchored(12.0, h, VPos::Center),
                    (end.0 + dx, end.1),
                )?;
            }
        }
    }
    // The left column: each case's label, then its structures' names with
    // their colours, level with their bars.
    let row_y = row_y.unwrap_or_default();
    let base = labels.get_base_pixel().1;
    for (case, (heading, bar_slots)) in chart.cases.iter().zip(&slots.cases) {
        if let Some(&y) = row_y.get(*heading) {
            labels.draw_text(
                &case.label,
                &bold(14.0, HPos::Left, VPos::Center),
                (12, y - base),
            )?;
        }
        for (bar, &s) in case.bars.iter().zip(bar_slots) {
            let Some(&y) = row_y.get(s) else { continue };
            let y = y - base;
            let x = LABEL_WIDTH as i32 - 30;
            labels.draw(&Rectangle::new(
                [(x + 6, y - 5), (x + 16, y + 5)],
                color(&bar.impl_name).filled(),
            ))?;
            labels.draw_text(
                &bar.impl_name,
                &anchored(13.0, HPos::Right, VPos::Center),
                (x, y),
            )?;
        }
    }
    Ok(())
}

/// A chart's backend coordinate `at`, moved to draw on `area`, and `dx`
/// pixels right.
fn on_area(area: &Area<'_>, at: (i32, i32), dx: i32) -> (i32, i32) {
    let (x, y) = area.get_base_pixel();
    (at.0 - x + dx, at.1 - y)
}

#[cfg(test)]
mod tests {
    use roxmltree::Document;

    use super::*;
    use crate::report::{RtRow, RtcRow};
    use crate::runner::{RunOptions, run_case};
    use crate::workloads::{self, Size, Sizing, Variant};

    fn cases(spec: &str, scale: f64) -> Vec<Case> {
        workloads::parse(
            spec,
            Sizing::scaled(Size::Default, scale),
            Variant::default(),
        )
        .unwrap()
    }

    fn rt(name: &'static str, mem_bytes: u64, search_ms: f64) -> RtRow {
        RtRow {
            impl_name: name,
            nkeys: 10,
            mem_bytes,
            load_ms: 1.0,
            search_ms: Some(search_ms),
            churn_ms: None,
            hits: 10,
            value_sum: 0,
            present: None,
        }
    }

    fn rtc(name: &'static str, reads_per_s: f64, writes_per_s: f64) -> RtcRow {
        RtcRow {
            impl_name: name,
            nkeys: 10,
            mem_bytes: 1_000,
            lookups: 10,
            hits: 10,
            writes: 0,
            removes: 0,
            removed: 0,
            reads_per_s,
            writes_per_s,
        }
    }

    fn result(case: Case, rows: Rows) -> CaseResult {
        CaseResult {
            case,
            lookups: 10,
            shuffled_lookups: None,
            dead: None,
            index: None,
            set_model: None,
            tb_model: None,
            rows,
            failures: Vec::new(),
        }
    }

    /// RT-1 with the project and two peers, and two RT-C rows.
    fn results() -> Vec<CaseResult> {
        let rt1 = cases("RT-1", 0.001).remove(0);
        let rtc_cases = cases("RT-C", 0.001);
        let (one, many) = (rtc_cases[0].clone(), rtc_cases[rtc_cases.len() - 1].clone());
        vec![
            result(
                rt1,
                Rows::Rt(vec![
                    rt("project", 1_000, 2.0),
                    rt("blart", 3_000, 1.0),
                    rt("hashbrown", 500, 8.0),
                ]),
            ),
            result(
                one,
                Rows::Rtc(vec![rtc("project", 4e6, 0.0), rtc("congee", 2e6, 0.0)]),
            ),
            result(
                many,
                Rows::Rtc(vec![rtc("project", 4e6, 1e6), rtc("congee", 8e6, 4e6)]),
            ),
        ]
    }

    fn texts(doc: &Document<'_>) -> Vec<String> {
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or("").trim().to_string())
            .collect()
    }

    fn hex(c: RGBColor) -> String {
        format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
    }

    #[test]
    fn ticks_keep_1x() {
        assert_eq!(ticks(0.3, 5.0), [0.5, 1.0, 2.0, 4.0]);
        let wide = ticks(1.0 / 300.0, 3000.0);
        assert!(wide.len() <= 7 && wide.contains(&1.0), "{wide:?}");
        assert_eq!(wide, [1.0 / 64.0, 1.0 / 8.0, 1.0, 8.0, 64.0, 512.0]);
        assert_eq!(ratio_text(0.25, true), "1/4×");
        assert_eq!(ratio_text(4.0, true), "4×");
        assert_eq!(ratio_text(0.3, false), "0.30×");
        assert_eq!(ratio_text(1234.0, false), "1,234×");
    }

    #[test]
    fn ratios_to_the_project() {
        let charts = family_charts(&results(), "");
        assert_eq!(charts.len(), 2);
        let rt = &charts[0];
        assert_eq!(rt.family, Family::Rt);
        assert_eq!(rt.cases.len(), 1);
        assert_eq!(rt.cases[0].label, "RT-1 seq_search");
        assert_eq!(
            rt.cases[0].bars,
            [
                Bar {
                    impl_name: "blart".into(),
                    ratios: vec![Some(0.5), Some(3.0)],
                },
                Bar {
                    impl_name: "hashbrown".into(),
                    ratios: vec![Some(4.0), Some(0.5)],
                },
            ]
        );
        let rtc = &charts[1];
        assert_eq!(rtc.family, Family::Rtc);
        assert_eq!(rtc.family.file_name(), "rt-c.svg");
        // The rows differ in readers and writers, so their labels say so.
        let labels: Vec<&str> = rtc.cases.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels.len(), 2);
        assert_ne!(labels[0], labels[1]);
        assert!(
            labels.iter().all(|l| l.starts_with("RT-C (readers=")),
            "{labels:?}"
        );
        // Time per operation: half the project's reads per second is twice
        // its time; no writes, no write ratio.
        assert_eq!(rtc.cases[0].bars[0].ratios, [Some(2.0), None, Some(1.0)]);
        assert_eq!(
            rtc.cases[1].bars[0].ratios,
            [Some(0.5), Some(0.25), Some(1.0)]
        );
        // A single RT-C row still names its readers and writers.
        let alone = family_charts(&results()[1..2], "");
        assert_eq!(alone[0].cases[0].label, "RT-C (readers=1, writers=0)");
    }

    #[test]
    fn the_rt_chart_holds_its_panels_bars_and_labels() {
        let chart = family_charts(&results(), "a note").remove(0);
        let svg = render_svg(&chart).unwrap();
        let doc = Document::parse(&svg).expect("the chart is well-formed XML");
        let root = doc.root_element();
        assert!(root.has_tag_name("svg"));
        let (width, height) = size(&chart);
        assert_eq!(root.attribute("width"), Some(width.to_string().as_str()));
        assert_eq!(root.attribute("height"), Some(height.to_string().as_str()));
        let texts = texts(&doc);
        let count = |wanted: &str| texts.iter().filter(|t| *t == wanted).count();
        assert_eq!(count(&chart.title()), 1, "{texts:?}");
        assert_eq!(count("a note"), 1, "{texts:?}");
        assert_eq!(count("search time (RT-6: churn)"), 1, "{texts:?}");
        assert_eq!(count("memory after the load (bytes)"), 1, "{texts:?}");
        // An x axis per panel, with 1× among its ticks.
        assert_eq!(count(RATIO_AXIS), 2, "{texts:?}");
        assert_eq!(count("1×"), 2, "{texts:?}");
        assert_eq!(count("RT-1 seq_search"), 1, "{texts:?}");
        assert_eq!(count("blart"), 1, "{texts:?}");
        assert_eq!(count("hashbrown"), 1, "{texts:?}");
        assert!(!texts.iter().any(|t| t == "project"), "{texts:?}");
        // Each bar's ratio beside it.
        assert_eq!(count("0.50×"), 2, "{texts:?}");
        assert_eq!(count("3.00×"), 1, "{texts:?}");
        assert_eq!(count("4.00×"), 1, "{texts:?}");
        // Per structure, a bar in each panel and its swatch.
        for (i, name) in ["blart", "hashbrown"].into_iter().enumerate() {
            let color = hex(PALETTE[i]);
            let rects = doc
                .descendants()
                .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some(&color))
                .count();
            assert_eq!(rects, 3, "{name}");
        }
        // The project's line at 1×, once per panel.
        let lines = doc
            .descendants()
            .filter(|n| {
                n.has_tag_name("polyline")
                    && n.attribute("stroke") == Some("#000000")
                    && n.attribute("stroke-width") == Some("2")
            })
            .count();
        assert_eq!(lines, 2);
    }

    #[test]
    fn a_missing_ratio_says_so() {
        let chart = family_charts(&results(), "").remove(1);
        let svg = render_svg(&chart).unwrap();
        let doc = Document::parse(&svg).unwrap();
        let texts = texts(&doc);
        // The row without writers has no write ratio.
        assert_eq!(texts.iter().filter(|t| *t == "n/a").count(), 1, "{texts:?}");
        assert_eq!(
            texts.iter().filter(|t| *t == RATIO_AXIS).count(),
            Family::Rtc.metrics().len()
        );
    }

    #[test]
    fn charts_are_written_per_family() {
        let dir = std::env::temp_dir()
            .join(format!("bench-plot-{}", std::process::id()))
            .join("nested");
        let mut results = results();
        // A TS case without the project: no chart for TS.
        let ts = cases("TS-1", 0.001).remove(0);
        results.push(result(ts, Rows::Ts(Vec::new())));
        let written = write_charts(&dir, &results, "").unwrap();
        assert_eq!(written, [dir.join("rt.svg"), dir.join("rt-c.svg")]);
        for path in &written {
            let svg = std::fs::read_to_string(path).unwrap();
            assert!(Document::parse(&svg).is_ok(), "{}", path.display());
        }
        assert!(!dir.join("ts.svg").exists());
        std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }

    #[test]
    fn the_tb_chart_has_a_panel_per_phase_and_memory() {
        let case = cases("TB-4", 0.002).remove(0);
        let opts = RunOptions {
            impls: Some(vec!["project".into(), "tbm-hash".into()]),
            repeat: 1,
            shuffled_sample: None,
        };
        let result = run_case(&case, &opts, &mut |_| {});
        assert!(result.failures.is_empty(), "{:?}", result.failures);
        let chart = family_charts(std::slice::from_ref(&result), "").remove(0);
        assert_eq!(chart.family, Family::Tb);
        assert_eq!(chart.family.file_name(), "tb.svg");
        assert_eq!(chart.cases[0].label, "TB-4 1% AND 10%");
        let bars = &chart.cases[0].bars;
        assert_eq!(bars.len(), 1);
        assert_eq!(bars[0].impl_name, "tbm-hash");
        assert_eq!(bars[0].ratios.len(), Family::Tb.metrics().len());
        assert!(bars[0].ratios.iter().all(Option::is_some), "{bars:?}");
        let svg = render_svg(&chart).unwrap();
        let doc = Document::parse(&svg).unwrap();
        let texts = texts(&doc);
        assert_eq!(
            texts.iter().filter(|t| *t == RATIO_AXIS).count(),
            4,
            "{texts:?}"
        );
        assert!(texts.iter().any(|t| t == "tbm-hash"), "{texts:?}");
    }

    #[test]
    fn the_chart_of_a_tiny_real_run() {
        let case = cases("RT-2", 0.0005).remove(0);
        let opts = RunOptions {
            impls: Some(vec!["project".into(), "btreemap".into()]),
            repeat: 1,
            shuffled_sample: None,
        };
        let result = run_case(&case, &opts, &mut |_| {});
        assert!(result.failures.is_empty(), "{:?}", result.failures);
        let chart = family_charts(std::slice::from_ref(&result), "").remove(0);
        let bars = &chart.cases[0].bars;
        assert_eq!(bars.len(), 1);
        assert_eq!(bars[0].impl_name, "btreemap");
        assert!(
            bars[0].ratios.iter().all(|r| r.is_some_and(|r| r > 0.0)),
            "{bars:?}"
        );
        let svg = render_svg(&chart).unwrap();
        let doc = Document::parse(&svg).unwrap();
        let texts = texts(&doc);
        assert!(
            texts.iter().any(|t| t == "RT-2 shuffle_search"),
            "{texts:?}"
        );
        assert!(texts.iter().any(|t| t == "btreemap"), "{texts:?}");
    }
}
