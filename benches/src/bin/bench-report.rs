//! `bench-report`: runs WORKLOADS.md workloads for the project and each
//! peer, one structure after another on the same data, and prints a
//! markdown table per workload (or JSON lines with `--json`).
//!
//! ```text
//! cargo run --release -p benches --bin bench-report -- [WORKLOAD...] \
//!     [--size default|large] [--json] [--repeat N] [--impls a,b,...] \
//!     [--shuffled-lookups N|all] [--random-block] [--plot DIR]
//! ```
//!
//! Exits with status 1 when any structure gave a wrong count or a chart
//! of `--plot` could not be written, 2 on a usage error.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use benches::alloc::{self, CountingAlloc};
use benches::runner::{Event, RunOptions, run_case};
use benches::workloads::{self, Case, DEFAULT_WORKLOADS, Size, Sizing, Variant};
use clap::{Parser, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// WORKLOADS.md sizes.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum SizeArg {
    /// The default parameters.
    Default,
    /// The large parameters (RT-1 to RT-4, RT-7, TS-S, SET-2).
    Large,
}

/// Runs WORKLOADS.md workloads for the project and its peers.
#[derive(Debug, Parser)]
#[command(name = "bench-report", version)]
struct Args {
    /// Workload ids (RT-1..RT-7, RT-C, TS-1..TS-8, TS-D, TS-S, SET-1,
    /// SET-2, TB-1..TB-6); a variant may follow a colon: RT-4:0xFFFFFF,
    /// RT-5:16, RT-6:15, RT-4:all, RT-C:1,1 (one row: readers,writers).
    /// Default: every workload.
    workloads: Vec<String>,
    /// The size column of WORKLOADS.md.
    #[arg(long, value_enum, default_value = "default")]
    size: SizeArg,
    /// One JSON object per line instead of tables.
    #[arg(long)]
    json: bool,
    /// Runs per structure; the report gives the median.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Only these structures (comma-separated `impl` names).
    #[arg(long, value_delimiter = ',')]
    impls: Option<Vec<String>>,
    /// TS workloads: how many index TIDs the shuffled pass looks up, a
    /// uniform random sample (the first N of WORKLOADS.md's shuffle), or
    /// `all`. A shuffled lookup costs the same on a sample as on the whole
    /// index, and the full passes of the slow peers over TS-3 to TS-S's
    /// 100-200 M index TIDs take over half an hour together. The ordered
    /// pass always looks up every index TID.
    #[arg(long, default_value = "20000000", value_parser = parse_sample)]
    shuffled_lookups: Sample,
    /// RT-1/RT-2's random_block variant.
    #[arg(long)]
    random_block: bool,
    /// Also write one SVG chart per workload family that ran into DIR
    /// (created if missing): DIR/rt.svg, DIR/rt-c.svg, DIR/ts.svg,
    /// DIR/set.svg, DIR/tb.svg. Each shows, for every case and structure,
    /// its time and memory divided by the project's, on a log scale.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Factor on workload sizes, for quick checks (1 = as written); it
    /// also scales RT-C's 2 s of wall clock per row, TB-6's rounds and
    /// TB-3's budget.
    #[arg(long, default_value_t = 1.0, hide = true)]
    scale: f64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if !(args.scale > 0.0 && args.scale.is_finite()) {
        eprintln!("error: --scale must be a positive number");
        return ExitCode::from(2);
    }
    let size = match args.size {
        SizeArg::Default => Size::Default,
        SizeArg::Large => Size::Large,
    };
    let sizing = Sizing::scaled(size, args.scale);
    let variant = Variant {
        random_block: args.random_block,
    };
    let specs: Vec<String> = if args.workloads.is_empty() {
        DEFAULT_WORKLOADS.iter().map(|s| s.to_string()).collect()
    } else {
        args.workloads.clone()
    };
    let mut cases: Vec<Case> = Vec::new();
    for spec in &specs {
        match workloads::parse(spec, sizing, variant) {
            Ok(c) => cases.extend(c),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let opts = RunOptions {
        impls: args.impls.clone(),
        repeat: args.repeat as usize,
        shuffled_sample: args.shuffled_lookups.0,
    };
    let unknown = opts.unknown_impls();
    if !unknown.is_empty() {
        eprintln!("error: unknown impl {}", unknown.join(", "));
        return ExitCode::from(2);
    }
    if !alloc::is_installed() {
        eprintln!("warning: the counting allocator is not installed; peer memory reads 0");
    }

    let total: usize = cases.iter().map(|c| opts.steps(c)).sum();
    let bar = progress_bar(total as u64);
    let mut out = std::io::stdout().lock();
    if !args.json {
        let _ = writeln!(
            out,
            "# bench-report: size {:?}{}, {} run(s) per structure{}, shuffled TS lookups: {}\n\n\
             Times in ms (median of runs); RT-C's rates in millions of operations per second; \
             memory in decimal MB (kB below 1 MB); \"vs project\" is the structure's figure divided \
             by the project's.\n",
            args.size,
            if args.scale == 1.0 {
                String::new()
            } else {
                format!(" scaled by {}", args.scale)
            },
            args.repeat,
            if args.repeat > 1 { ", medians" } else { "" },
            match args.shuffled_lookups.0 {
                Some(n) => format!("a random sample of at most {n} per workload"),
                None => "every index TID".to_string(),
            },
        );
    }

    let mut failures = Vec::new();
    let mut results = Vec::new();
    for case in &cases {
        let result = run_case(case, &opts, &mut |event| match event {
            Event::Generating(c) => bar.set_message(format!("{} generating data", c.id())),
            Event::Measuring {
                case,
                impl_name,
                run,
            } => bar.set_message(format!("{} {impl_name} (run {})", case.id(), run + 1)),
            Event::Measured => bar.inc(1),
        });
        let text = if args.json {
            result.json_lines()
        } else {
            result.markdown() + "\n"
        };
        bar.suspend(|| {
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        });
        failures.extend(result.failures.iter().cloned());
        if args.plot.is_some() {
            results.push(result);
        }
    }
    bar.finish_and_clear();

    let mut plot_failed = false;
    if let Some(dir) = &args.plot {
        let ts_ran = cases.iter().any(|c| matches!(c, Case::Ts(_)));
        let note = format!(
            "bench-report {}: size {:?}{}, {} run(s) per structure{}{}.",
            specs.join(" "),
            args.size,
            if args.scale == 1.0 {
                String::new()
            } else {
                format!(" scaled by {}", args.scale)
            },
            args.repeat,
            if args.repeat > 1 { " (medians)" } else { "" },
            match args.shuffled_lookups.0 {
                _ if !ts_ran => String::new(),
                Some(n) => format!(
                    ", shuffled TS lookups: a random sample of at most {}",
                    benches::report::group(n)
                ),
                None => ", shuffled TS lookups: every index TID".to_string(),
            },
        );
        match benches::plot::write_charts(dir, &results, &note) {
            Ok(written) if written.is_empty() => {
                eprintln!("warning: --plot: no chart: the project ran on none of the workloads");
            }
            Ok(written) => {
                for path in written {
                    eprintln!("wrote {}", path.display());
                }
            }
            Err(e) => {
                eprintln!("error: --plot: {e}");
                plot_failed = true;
            }
        }
    }

    if failures.is_empty() {
        if plot_failed {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    } else {
        for failure in &failures {
            eprintln!("WRONG: {failure}");
        }
        eprintln!("{} structure(s) gave wrong answers", failures.len());
        ExitCode::from(1)
    }
}

/// `--shuffled-lookups`: a count, or `None` for every index TID.
#[derive(Debug, Clone, Copy)]
struct Sample(Option<u64>);

fn parse_sample(text: &str) -> Result<Sample, String> {
    if text.eq_ignore_ascii_case("all") {
        return Ok(Sample(None));
    }
    match text.replace('_', "").parse::<u64>() {
        Ok(0) => Err("must be at least 1 (or `all`)".to_string()),
        Ok(n) => Ok(Sample(Some(n))),
        Err(_) => Err(format!("`{text}` is neither a count nor `all`")),
    }
}

/// A progress bar on a terminal; hidden otherwise. It never ticks on its
/// own: a drawing thread would allocate while memory is being counted.
fn progress_bar(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {wide_msg}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}
