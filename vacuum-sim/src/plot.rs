//! The chart of `--plot FILE.svg`: one SVG with two panels.
//!
//! 1. **Store memory during the heap scan**: each store's memory (from its
//!    [`MemoryTrace`](crate::MemoryTrace)) against the heap pages scanned, the memory limit as
//!    a dashed line, and a marker at each round of index passes: filled
//!    where the store filled, hollow for the final round after the scan.
//! 2. **Time per phase**: heap scan, index passes and heap vacuum, one bar
//!    per store, in ms on a log scale (the array's index passes can take
//!    a thousand times the TID store's heap scan), each bar labelled with
//!    its time.
//!
//! The chart is drawn with `plotters`' SVG backend alone: text is written
//! as `<text>` elements for the viewer's sans-serif font, so nothing reads
//! fonts here. Text widths are estimated, so the layout leaves room.
//!
//! ```
//! use vacuum_sim::{run, DeadPattern, IndexOrder, Progress, Scenario, StoreKind};
//!
//! let scenario = Scenario::custom(64, 8, DeadPattern::All, vec![IndexOrder::Random], 600);
//! let runs: Vec<_> = StoreKind::ALL
//!     .iter()
//!     .map(|&kind| run(&scenario, kind, &Progress::hidden()))
//!     .collect::<Result<_, _>>()?;
//! let svg = vacuum_sim::plot::render_svg(&scenario, &runs)?;
//! assert!(svg.starts_with("<svg") && svg.contains("heap pages scanned"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::scenario::{GIB, KIB, MIB, Scenario, format_size, group};
use crate::store::StoreKind;
use crate::vacuum::VacuumStats;

/// The chart's width, pixels.
pub const WIDTH: u32 = 1100;
/// The chart's height, pixels.
pub const HEIGHT: u32 = 1000;

/// The x-axis label of the memory panel.
pub const PAGES_AXIS: &str = "heap pages scanned";
/// The y-axis label of the time panel.
pub const TIME_AXIS: &str = "time (ms, log scale)";
/// The phases of the time panel, left to right.
pub const PHASES: [&str; 3] = ["heap scan", "index passes", "heap vacuum"];
/// The legend entry of a round that ran because the store filled.
pub const FULL_PASS_LEGEND: &str = "index pass (store full)";
/// The legend entry of the final round after the heap scan.
pub const FINAL_PASS_LEGEND: &str = "final index pass (end of scan)";

/// Why a chart could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// There were no runs to draw.
    #[error("nothing to plot: no store ran")]
    NoRuns,
    /// `plotters` failed to draw.
    #[error("cannot draw the chart: {0}")]
    Draw(String),
    /// The file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// What the drawing helpers return: `plotters`' errors, boxed.
type Drawn<T = ()> = Result<T, Box<dyn std::error::Error>>;

/// The root area of the SVG being drawn.
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// The colour of a store's series and bars, the same in both panels.
pub fn store_color(kind: StoreKind) -> RGBColor {
    match kind {
        StoreKind::TidStore => RGBColor(31, 119, 180),
        StoreKind::Array => RGBColor(230, 115, 0),
        StoreKind::Shared => RGBColor(44, 160, 44),
    }
}

/// The name of a run in the legends: the store, with its worker count for
/// the shared store (`shared ×4`).
pub fn run_label(stats: &VacuumStats) -> String {
    match &stats.workers {
        Some(w) => format!("{} ×{}", stats.store, w.count),
        None => stats.store.to_string(),
    }
}

/// The chart's title: the scenario's name.
pub fn title(scenario: &Scenario) -> String {
    format!(
        "vacuum-sim {}: dead-TID store memory and time per phase",
        scenario.name
    )
}

/// Renders the chart of `runs` (each store's run of `scenario`, the
/// shared store's included) as an SVG document.
pub fn render_svg(scenario: &Scenario, runs: &[VacuumStats]) -> Result<String, PlotError> {
    if runs.is_empty() {
        return Err(PlotError::NoRuns);
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&root, scenario, runs).map_err(|e| PlotError::Draw(e.to_string()))?;
        root.present().map_err(|e| PlotError::Draw(e.to_string()))?;
    }
    Ok(svg)
}

/// Writes the chart of [`render_svg`] to `path`.
pub fn write_svg(path: &Path, scenario: &Scenario, runs: &[VacuumStats]) -> Result<(), PlotError> {
    let svg = render_svg(scenario, runs)?;
    std::fs::write(path, svg).map_err(|source| PlotError::Write {
        path: path.display().to_string(),
        source,
    })
}

/// A sans-serif text style of `size` (plotters' units: the SVG font size
/// is `size / 1.24`).
fn font(size: f64) -> TextStyle<'static> {
    ("sans-serif", size).into_font().color(&BLACK)
}

/// A text style anchored at `h`, `v`.
fn anchored(size: f64, h: HPos, v: VPos) -> TextStyle<'static> {
    font(size).pos(Pos::new(h, v))
}

/// A bold text style anchored at its top left.
fn bold(size: f64) -> TextStyle<'static> {
    ("sans-serif", size, FontStyle::Bold)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Top))
}

fn draw(root: &Area<'_>, scenario: &Scenario, runs: &[VacuumStats]) -> Drawn {
    root.fill(&WHITE)?;
    let (head, rest) = root.split_vertically(96);
    head.draw_text(&title(scenario), &bold(24.0), (20, 14))?;
    let lines = [Some(scenario.to_string()), scenario.note.clone()];
    for (i, line) in lines.iter().flatten().enumerate() {
        head.draw_text(
            line,
            &anchored(16.0, HPos::Left, VPos::Top),
            (20, 46 + 20 * i as i32),
        )?;
    }
    let (top, bottom) = rest.split_vertically(490);
    memory_panel(&top, scenario, runs)?;
    time_panel(&bottom, runs)?;
    Ok(())
}

/// A unit for a byte axis whose largest value is `max`: the largest of
/// GiB, MiB, KiB at most `max`, or bytes.
pub fn byte_unit(max: u64) -> (f64, &'static str) {
    [(GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")]
        .into_iter()
        .find(|&(unit, _)| max >= unit)
        .map_or((1.0, "bytes"), |(unit, name)| (unit as f64, name))
}

/// `bytes` in `unit` with a few significant digits (`2.25 MiB`).
fn size_text(bytes: u64) -> String {
    let (unit, name) = byte_unit(bytes);
    let value = bytes as f64 / unit;
    if unit == 1.0 {
        format!("{} bytes", group(bytes))
    } else if value >= 100.0 {
        format!("{value:.0} {name}")
    } else if value >= 10.0 {
        format!("{value:.1} {name}")
    } else {
        format!("{value:.2} {name}")
    }
}

/// One entry of a legend: its text and the swatch drawn before it.
enum Swatch {
    /// A solid line.
    Line(RGBColor),
    /// A dashed line.
    Dashed(RGBColor),
    /// A circle, filled or hollow.
    Dot(RGBColor, bool),
    /// A filled square.
    Square(RGBColor),
}

/// Draws a legend box on `area` with its top-left corner at `at`, one entry
/// per line.
fn legend(area: &Area<'_>, at: (i32, i32), heading: &str, entries: &[(String, Swatch)]) -> Drawn {
    let (x, mut y) = at;
    area.draw_text(heading, &bold(17.0), (x, y))?;
    y += 30;
    for (text, swatch) in entries {
        let mid = y + 8;
        match swatch {
            Swatch::Line(c) => {
                area.draw(&PathElement::new(
                    vec![(x, mid), (x + 26, mid)],
                    c.stroke_width(3),
                ))?;
            }
            Swatch::Dashed(c) => {
                for k in 0..3 {
                    let x0 = x + k * 10;
                    area.draw(&PathElement::new(
                        vec![(x0, mid), (x0 + 6, mid)],
                        c.stroke_width(2),
                    ))?;
                }
            }
            Swatch::Dot(c, filled) => {
                let style = if *filled {
                    c.filled()
                } else {
                    c.stroke_width(2)
                };
                area.draw(&Circle::new((x + 13, mid), 5, style))?;
            }
            Swatch::Square(c) => {
                area.draw(&Rectangle::new(
                    [(x + 5, mid - 7), (x + 21, mid + 7)],
                    c.filled(),
                ))?;
            }
        }
        area.draw_text(
            text,
            &anchored(15.0, HPos::Left, VPos::Center),
            (x + 36, mid),
        )?;
        y += 24;
    }
    Ok(())
}

/// Panel one: memory against pages scanned.
fn memory_panel(area: &Area<'_>, scenario: &Scenario, runs: &[VacuumStats]) -> Drawn {
    let (plot_area, side) = area.split_horizontally(780);
    let blocks = f64::from(scenario.blocks.max(1));
    let max = runs
        .iter()
        .map(|r| r.memory.max_bytes())
        .chain([scenario.limit])
        .max()
        .unwrap_or(1);
    let (unit, unit_name) = byte_unit(max);
    let top = max as f64 / unit * 1.12;
    let mut chart = ChartBuilder::on(&plot_area)
        .caption("Store memory during the heap scan", font(20.0))
        .margin(12)
        .margin_left(20)
        .x_label_area_size(56)
        .y_label_area_size(84)
        // A little room right of the last page for its index pass's marker.
        .build_cartesian_2d(0f64..blocks * 1.02, 0f64..top)?;
    let pages_label = |v: &f64| group(v.round() as u64);
    let bytes_label = |v: &f64| trim_number(*v);
    let y_desc = format!("store memory ({unit_name})");
    chart
        .configure_mesh()
        .x_desc(PAGES_AXIS)
        .y_desc(y_desc)
        .x_labels(7)
        .y_labels(8)
        .x_label_formatter(&pages_label)
        .y_label_formatter(&bytes_label)
        .label_style(font(14.0))
        .axis_desc_style(font(16.0))
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()?;
    for r in runs {
        let color = store_color(r.store);
        chart.draw_series(LineSeries::new(
            r.memory
                .samples
                .iter()
                .map(|s| (f64::from(s.pages), s.bytes as f64 / unit)),
            color.stroke_width(2),
        ))?;
    }
    // The limit over the series, so its dashes show on the array's line
    // (the array is allocated at the limit).
    let limit = scenario.limit as f64 / unit;
    chart.draw_series(DashedLineSeries::new(
        [(0.0, limit), (blocks, limit)],
        8,
        6,
        BLACK.stroke_width(1),
    ))?;
    for r in runs {
        let color = store_color(r.store);
        chart.draw_series(r.memory.passes.iter().map(|p| {
            let at = (f64::from(p.pages), p.bytes as f64 / unit);
            if p.end_of_scan {
                Circle::new(at, 6, color.stroke_width(2))
            } else {
                Circle::new(at, 5, color.filled())
            }
        }))?;
    }
    let mut entries: Vec<(String, Swatch)> = runs
        .iter()
        .map(|r| {
            (
                format!(
                    "{}: peak {}, {} index pass{}",
                    run_label(r),
                    size_text(r.peak_bytes),
                    r.index_passes,
                    if r.index_passes == 1 { "" } else { "es" }
                ),
                Swatch::Line(store_color(r.store)),
            )
        })
        .collect();
    let limit_text = match format_size(scenario.limit) {
        exact if exact.contains('(') => exact,
        bytes => format!("{} ({bytes})", size_text(scenario.limit)),
    };
    entries.push((format!("memory limit: {limit_text}"), Swatch::Dashed(BLACK)));
    entries.push((
        FULL_PASS_LEGEND.to_string(),
        Swatch::Dot(RGBColor(90, 90, 90), true),
    ));
    entries.push((
        FINAL_PASS_LEGEND.to_string(),
        Swatch::Dot(RGBColor(90, 90, 90), false),
    ));
    legend(&side, (0, 50), "Legend", &entries)?;
    if runs.iter().any(|r| r.workers.is_some()) {
        side.draw_text(
            "shared: its workers scan page ranges",
            &anchored(13.0, HPos::Left, VPos::Top),
            (0, 80 + 24 * entries.len() as i32),
        )?;
        side.draw_text(
            "at once, sampled when they stop",
            &anchored(13.0, HPos::Left, VPos::Top),
            (0, 98 + 24 * entries.len() as i32),
        )?;
    }
    Ok(())
}

/// `v` with at most three significant decimals and no trailing zeros
/// (`0.5`, `12`, `1.25`); thousands grouped from 1,000.
fn trim_number(v: f64) -> String {
    if v >= 1_000.0 {
        return group(v.round() as u64);
    }
    let text = if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// The phases' times of a run, ms, in [`PHASES`] order.
pub fn phase_ms(r: &VacuumStats) -> [f64; 3] {
    [r.heap_scan, r.index, r.heap_vacuum].map(|d| d.as_secs_f64() * 1e3)
}

/// Panel two: grouped bars, one group per phase, one bar per store.
fn time_panel(area: &Area<'_>, runs: &[VacuumStats]) -> Drawn {
    let (plot_area, side) = area.split_horizontally(780);
    let times: Vec<[f64; 3]> = runs.iter().map(phase_ms).collect();
    let positive = times.iter().flatten().copied().filter(|&t| t > 0.0);
    let min = positive.clone().fold(f64::INFINITY, f64::min);
    let max = positive.fold(0.0, f64::max);
    let (lo, hi) = if max > 0.0 {
        // A power of ten below the shortest bar, and room above the
        // longest for its label.
        // (Just below the power, so that it is a tick of the axis.)
        let lo = 10f64.powf(min.log10().floor()).min(max / 10.0) * 0.999;
        (lo, max * 4.0)
    } else {
        (0.001, 1.0)
    };
    let mut chart = ChartBuilder::on(&plot_area)
        .caption("Time per phase, summed over all rounds", font(20.0))
        .margin(12)
        .margin_left(20)
        .x_label_area_size(40)
        .y_label_area_size(84)
        .build_cartesian_2d(-0.5f64..2.5f64, (lo..hi).log_scale())?;
    let ms_label = |v: &f64| trim_number(*v);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(8)
        .y_desc(TIME_AXIS)
        .y_label_formatter(&ms_label)
        .label_style(font(14.0))
        .axis_desc_style(font(16.0))
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()?;
    let n = runs.len() as f64;
    let group_width = 0.8;
    let bar = group_width / n;
    for (i, (r, t)) in runs.iter().zip(&times).enumerate() {
        let color = store_color(r.store);
        for (phase, &ms) in t.iter().enumerate() {
            let x0 = phase as f64 - group_width / 2.0 + bar * i as f64;
            let x1 = x0 + bar;
            let y = ms.max(lo);
            chart.draw_series([Rectangle::new(
                [(x0 + bar * 0.06, lo), (x1 - bar * 0.06, y)],
                color.filled(),
            )])?;
            let label_at = chart.backend_coord(&((x0 + x1) / 2.0, y));
            area.draw_text(
                &trim_number(ms),
                &anchored(13.0, HPos::Center, VPos::Bottom),
                on_area(area, label_at, -3),
            )?;
        }
    }
    for (phase, name) in PHASES.iter().enumerate() {
        let at = chart.backend_coord(&(phase as f64, lo));
        area.draw_text(
            name,
            &anchored(16.0, HPos::Center, VPos::Top),
            on_area(area, at, 10),
        )?;
    }
    let entries: Vec<(String, Swatch)> = runs
        .iter()
        .map(|r| {
            (
                format!(
                    "{}: {} ms in all",
                    run_label(r),
                    trim_number(r.total.as_secs_f64() * 1e3)
                ),
                Swatch::Square(store_color(r.store)),
            )
        })
        .collect();
    legend(&side, (0, 50), "Stores", &entries)?;
    side.draw_text(
        "each bar's label: its ms",
        &anchored(13.0, HPos::Left, VPos::Top),
        (0, 90 + 24 * entries.len() as i32),
    )?;
    Ok(())
}

/// A chart's backend coordinate `at`, moved to draw on `area`, and by
/// `dy` pixels down.
fn on_area(area: &Area<'_>, at: (i32, i32), dy: i32) -> (i32, i32) {
    let (x, y) = area.get_base_pixel();
    (at.0 - x, at.1 - y + dy)
}
