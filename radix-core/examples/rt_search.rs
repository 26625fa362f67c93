//! WORKLOADS.md RT-1 and RT-2 (1M blocks by default): load a tree of TID
//! bitmaps in key order, then look up every TID in generation order (RT-1)
//! and shuffled (RT-2), next to `BTreeMap` and `hashbrown` on the same data.
//!
//! ```text
//! cargo run --release -p radix-core --example rt_search [-- --blocks N] [--json]
//! ```
//!
//! Memory is what each structure holds from the allocator: the tree's slab
//! blocks (its own accounting), and for the peers the bytes a counting
//! global allocator saw them keep.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

radix_core::radix_tree! {
    /// TID bitmap words keyed by `tid >> 6`, as in WORKLOADS.md.
    pub struct TidBits {
        key: u64,
        value: u64,
    }
}

/// Counts live heap bytes, to measure peers without their own accounting.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to `System`, only adding bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// WORKLOADS.md's splitmix64.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The map operations the workload needs.
trait BitmapMap: Default {
    const NAME: &'static str;
    fn put(&mut self, key: u64, bits: u64);
    fn lookup(&self, key: u64) -> Option<u64>;
    /// Bytes held, when the structure accounts for itself.
    fn own_bytes(&self) -> Option<usize> {
        None
    }
}

impl BitmapMap for TidBits {
    const NAME: &'static str = "project";
    fn put(&mut self, key: u64, bits: u64) {
        self.insert(key, bits);
    }
    #[inline]
    fn lookup(&self, key: u64) -> Option<u64> {
        self.get(key).copied()
    }
    fn own_bytes(&self) -> Option<usize> {
        Some(self.memory_usage())
    }
}

impl BitmapMap for BTreeMap<u64, u64> {
    const NAME: &'static str = "btreemap";
    fn put(&mut self, key: u64, bits: u64) {
        self.insert(key, bits);
    }
    #[inline]
    fn lookup(&self, key: u64) -> Option<u64> {
        self.get(&key).copied()
    }
}

type FastHashMap = hashbrown::HashMap<u64, u64, foldhash::fast::FixedState>;

impl BitmapMap for FastHashMap {
    const NAME: &'static str = "hashbrown";
    fn put(&mut self, key: u64, bits: u64) {
        self.insert(key, bits);
    }
    #[inline]
    fn lookup(&self, key: u64) -> Option<u64> {
        self.get(&key).copied()
    }
}

struct Row {
    workload: &'static str,
    name: &'static str,
    nkeys: usize,
    mem_bytes: usize,
    load_ms: f64,
    search_ms: f64,
    hits: u64,
}

fn run<M: BitmapMap>(workload: &'static str, blocks: u64, lookups: &[u64]) -> Row {
    let before = LIVE.load(Ordering::Relaxed);
    let start = Instant::now();
    let mut map = M::default();
    let (mut key, mut bits, mut nkeys) = (u64::MAX, 0u64, 0usize);
    for block in 0..blocks {
        for offset in 1..=30u64 {
            let tid = (block << 9) | offset;
            if tid >> 6 != key {
                if key != u64::MAX {
                    map.put(key, bits);
                    nkeys += 1;
                }
                key = tid >> 6;
                bits = 0;
            }
            bits |= 1 << (tid & 63);
        }
    }
    map.put(key, bits);
    nkeys += 1;
    let load_ms = start.elapsed().as_secs_f64() * 1e3;
    let mem_bytes = map
        .own_bytes()
        .unwrap_or_else(|| LIVE.load(Ordering::Relaxed) - before);

    let start = Instant::now();
    let mut hits = 0u64;
    for &tid in lookups {
        if let Some(bits) = map.lookup(tid >> 6) {
            hits += (bits >> (tid & 63)) & 1;
        }
    }
    let search_ms = start.elapsed().as_secs_f64() * 1e3;
    black_box(&map);
    Row {
        workload,
        name: M::NAME,
        nkeys,
        mem_bytes,
        load_ms,
        search_ms,
        hits,
    }
}

fn main() {
    let mut blocks = 1_000_000u64;
    let mut json = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--blocks" => {
                blocks = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| usage("--blocks needs a number"))
            }
            "--json" => json = true,
            "-h" | "--help" => usage(""),
            other => usage(&format!("unknown argument {other}")),
        }
    }

    let ordered: Vec<u64> = (0..blocks)
        .flat_map(|b| (1..=30u64).map(move |o| (b << 9) | o))
        .collect();
    let mut shuffled = ordered.clone();
    let mut rng = SplitMix64(0);
    let n = shuffled.len();
    for i in 0..n.saturating_sub(1) {
        let j = i + (rng.next() % (n - i) as u64) as usize;
        shuffled.swap(i, j);
    }

    let mut rows = Vec::new();
    for (workload, lookups) in [("RT-1", &ordered), ("RT-2", &shuffled)] {
        rows.push(run::<TidBits>(workload, blocks, lookups));
        rows.push(run::<BTreeMap<u64, u64>>(workload, blocks, lookups));
        rows.push(run::<FastHashMap>(workload, blocks, lookups));
    }

    let expected = ordered.len() as u64;
    if json {
        for r in &rows {
            println!(
                "{{\"workload\":\"{}\",\"impl\":\"{}\",\"params\":\"blocks={}\",\"nkeys\":{},\"mem_bytes\":{},\"load_ms\":{:.3},\"search_ms\":{:.3},\"hits\":{}}}",
                r.workload, r.name, blocks, r.nkeys, r.mem_bytes, r.load_ms, r.search_ms, r.hits
            );
        }
    } else {
        println!("RT-1/RT-2: {blocks} blocks, {expected} TIDs; times in ms, memory in bytes");
        println!();
        println!("| workload | impl | keys | memory | load | search | search vs project | hits |");
        println!("|---|---|---:|---:|---:|---:|---:|---:|");
        for r in &rows {
            let project = rows
                .iter()
                .find(|p| p.workload == r.workload && p.name == "project")
                .expect("project row");
            println!(
                "| {} | {} | {} | {} | {:.1} | {:.1} | {:.2}x | {} |",
                r.workload,
                r.name,
                r.nkeys,
                r.mem_bytes,
                r.load_ms,
                r.search_ms,
                r.search_ms / project.search_ms,
                r.hits
            );
        }
    }
    if let Some(bad) = rows.iter().find(|r| r.hits != expected) {
        eprintln!(
            "{} {}: {} hits, expected {expected}",
            bad.workload, bad.name, bad.hits
        );
        std::process::exit(1);
    }
}

fn usage(problem: &str) -> ! {
    if !problem.is_empty() {
        eprintln!("error: {problem}");
    }
    eprintln!("usage: rt_search [--blocks N] [--json]");
    std::process::exit(if problem.is_empty() { 0 } else { 2 })
}
