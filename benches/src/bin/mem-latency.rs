//! The memory's limit on this machine, in the units issue 39 asks lookups
//! to be judged by: the time of a *dependent* random 8-byte read (each
//! address comes from the read before it, as a tree descent's does) in a
//! working set of a given size, and the time per read when 8 or 16 such
//! chains run side by side (what a batched lookup can overlap).
//!
//! The working set is an array of 64-byte lines, each holding the index of
//! the next line of one random cycle through all of them (Sattolo's
//! algorithm, seeded, so that every line is visited once per lap and the
//! hardware prefetchers have no pattern to follow). A chain starts at a
//! line and follows the indices; `C` chains start `len / C` lines apart on
//! the cycle and advance in lockstep, so their reads are independent of
//! each other. Pages are the system's default (no huge pages), as the
//! trees' are.
//!
//! ```sh
//! cargo run --release -p benches --bin mem-latency -- --sizes 10MB,1GB --chains 1,8,16
//! ```

use std::hint::black_box;
use std::time::Instant;

use benches::rng::SplitMix64;
use clap::Parser;

/// One cache line of the working set: the index of the next line.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line {
    next: u64,
    _pad: [u64; 7],
}

#[derive(Parser, Debug)]
#[command(about = "Times dependent random reads: one chain, and several chains side by side")]
struct Args {
    /// Working-set sizes, comma-separated, with a unit: B, KB, MB, GB
    /// (powers of 1000) or KiB, MiB, GiB (powers of 1024).
    #[arg(long, value_delimiter = ',', default_value = "10MB,1GB")]
    sizes: Vec<String>,

    /// Numbers of independent chains to run side by side.
    #[arg(long, value_delimiter = ',', default_value = "1,8,16")]
    chains: Vec<usize>,

    /// Reads per measurement, over all chains.
    #[arg(long, default_value_t = 20_000_000)]
    reads: u64,

    /// Measurements per (size, chains); the report gives the median.
    #[arg(long, default_value_t = 5)]
    repeat: usize,
}

/// Bytes in `text`, e.g. `10MB` or `1GiB`.
fn parse_bytes(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: usize = number
        .parse()
        .map_err(|_| format!("{text:?}: expected a whole number before the unit"))?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        other => return Err(format!("{text:?}: unknown unit {other:?}")),
    };
    number
        .checked_mul(scale)
        .filter(|&bytes| bytes >= 2 * size_of::<Line>())
        .ok_or_else(|| format!("{text:?}: must be at least two lines and fit in memory"))
}

/// `lines` lines linked into one random cycle.
fn cycle(lines: usize, seed: u64) -> Vec<Line> {
    let mut order: Vec<u64> = (0..lines as u64).collect();
    let mut rng = SplitMix64::new(seed);
    // Sattolo's algorithm: a uniformly random single cycle.
    for i in (1..lines).rev() {
        let j = (rng.next_u64() % i as u64) as usize;
        order.swap(i, j);
    }
    let mut set = vec![
        Line {
            next: 0,
            _pad: [0; 7]
        };
        lines
    ];
    for (i, &from) in order.iter().enumerate() {
        set[from as usize].next = order[(i + 1) % lines];
    }
    set
}

/// Nanoseconds per read of `reads` reads spread over `chains` chains that
/// advance side by side through `set`.
fn time_chains(set: &[Line], chains: usize, reads: u64) -> f64 {
    // Starting points `len / chains` apart on the cycle.
    let mut cursors = Vec::with_capacity(chains);
    let mut at = 0u64;
    let stride = set.len() / chains;
    for _ in 0..chains {
        cursors.push(at);
        for _ in 0..stride {
            at = set[at as usize].next;
        }
    }
    let steps = reads / chains as u64;
    let start = Instant::now();
    for _ in 0..steps {
        for cursor in cursors.iter_mut() {
            *cursor = set[*cursor as usize].next;
        }
    }
    let elapsed = start.elapsed();
    black_box(&cursors);
    elapsed.as_nanos() as f64 / (steps * chains as u64) as f64
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() -> Result<(), String> {
    let args = Args::parse();
    if args.chains.contains(&0) || args.repeat == 0 {
        return Err("--chains and --repeat must be at least 1".into());
    }
    println!(
        "| working set | chains | ns per read (median of {}) |",
        args.repeat
    );
    println!("|---|---:|---:|");
    for size in &args.sizes {
        let bytes = parse_bytes(size)?;
        let set = cycle(bytes / size_of::<Line>(), 1);
        for &chains in &args.chains {
            // One untimed pass over the reads to fault the pages in and warm
            // the caches and TLB to their steady state.
            time_chains(&set, chains, args.reads.min(set.len() as u64));
            let times = (0..args.repeat)
                .map(|_| time_chains(&set, chains, args.reads))
                .collect();
            println!("| {size} | {chains} | {:.2} |", median(times));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_their_units() {
        assert_eq!(parse_bytes("10MB"), Ok(10_000_000));
        assert_eq!(parse_bytes("1GiB"), Ok(1 << 30));
        assert!(parse_bytes("64").is_err(), "one line is too few");
        assert!(parse_bytes("3 furlongs").is_err());
    }

    #[test]
    fn the_cycle_visits_every_line_once() {
        let set = cycle(1000, 7);
        let mut seen = vec![false; set.len()];
        let mut at = 0usize;
        for _ in 0..set.len() {
            assert!(!seen[at], "line {at} visited twice in one lap");
            seen[at] = true;
            at = set[at].next as usize;
        }
        assert_eq!(at, 0, "a lap ends where it began");
        assert!(seen.iter().all(|&s| s));
    }
}
