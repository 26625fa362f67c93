//! The shared TID store across real processes: PostgreSQL's TID store
//! cases written by the parent and read in children, children reading while
//! the parent fills the store (chunks of equal blocks merging into block
//! ranges among them), and a writer killed holding the lock; and a shared
//! TID bitmap walked by three worker processes at once.
//!
//! Its own harness (`harness = false`), radix-core's
//! `tests/processes/mod.rs`, shared with radix-core's cross-process suite:
//! a child is this binary started in a role.

mod common;
#[path = "../../radix-core/tests/processes/mod.rs"]
mod processes;

use std::collections::BTreeSet;
use std::process::{Child, ExitCode};
use std::time::{Duration, Instant};

use common::check;
use processes::{first_line, spawn, wait};

use radix_core::shm::{Area, AreaOptions, ShmError};
use tidstore::{
    MAX_OFFSET, SharedTidBitmap, SharedTidStore, SharedTidStoreHandle, Tid, TidBitmap,
    TidStoreError,
};

const BUDGET: usize = 64 << 20;

type Model = BTreeSet<(u32, u16)>;

/// PostgreSQL's test_tidstore cases, as one sequence of writes: boundary
/// blocks with boundary offsets, header-embedded entries, random sorted
/// offsets, and the replacement transitions between entry forms.
fn postgres_cases() -> Vec<(u32, Vec<u16>)> {
    let mut writes = Vec::new();
    for block in [0u32, 1, (1 << 31) - 1, u32::MAX - 1, u32::MAX] {
        writes.push((block, vec![1, 2, 256, 511, 512]));
    }
    for b in 10..300u32 {
        writes.push((b, (0..(b % 3 + 1) as u16).map(|i| 1 + i * 700).collect()));
    }
    let mut rng = 0x1234_5678_9abc_def0u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for i in 0..100u32 {
        let block = (next() as u32 & 0x00FF_FFFF) | (i << 24) | 1000;
        let mut offsets: Vec<u16> = (0..next() % 300 + 1)
            .map(|_| (next() % u64::from(MAX_OFFSET)) as u16 + 1)
            .collect();
        offsets.sort_unstable();
        offsets.dedup();
        writes.push((block, offsets));
    }
    // Each transition between the forms, on one block, and back.
    let forms: [&[u16]; 7] = [
        &[1],
        &[1, 2],
        &[1, 2, 3],
        &[1, 2, 3, 4],
        &[1, 2, 3, 4, 5],
        &[1, 2, 3, 4, 100],
        &[2048],
    ];
    for form in forms.iter().chain(forms.iter().rev()) {
        writes.push((500, form.to_vec()));
    }
    writes
}

/// The contents after `writes`.
fn model_of(writes: &[(u32, Vec<u16>)]) -> Model {
    let mut model = Model::new();
    for (block, offsets) in writes {
        model.retain(|&(b, _)| b != *block);
        model.extend(offsets.iter().map(|&o| (*block, o)));
    }
    model
}

/// The offsets the filling test gives block `b`: in odd chunks of 256
/// blocks every form in turn, block by block; in even chunks one form for
/// the whole chunk, which the store merges into a block range as the
/// chunk's last block comes in, while the children read.
fn fill_offsets(b: u32) -> Vec<u16> {
    let form = if (b / 256).is_multiple_of(2) {
        b / 512
    } else {
        b
    };
    match form % 4 {
        0 => vec![1],
        1 => (1..=40).collect(),
        2 => vec![3, 64, 65, 700],
        _ => (1..=300).step_by(7).collect(),
    }
}

fn child(role: &str, args: &[String]) -> ExitCode {
    let handle: SharedTidStoreHandle = args[0].parse().unwrap();
    if role == "bitmap-walker" {
        // A worker of a parallel bitmap heap scan: its share of the pages,
        // one line each.
        let bitmap = SharedTidBitmap::attach(&handle).unwrap();
        let walk = bitmap.walk();
        for page in walk.pages() {
            let offsets: Vec<String> = page
                .offsets()
                .map(|o| o.map(|o| o.to_string()).collect())
                .unwrap_or_default();
            println!(
                "{} {} {} {}",
                page.block(),
                page.is_lossy(),
                page.recheck(),
                offsets.join(",")
            );
        }
        println!("done");
        return ExitCode::SUCCESS;
    }
    let store = SharedTidStore::attach(&handle).unwrap();
    match role {
        "postgres" => {
            check(&store.read(), &model_of(&postgres_cases()));
            println!("checked");
        }
        // Reads while the parent fills blocks 0.. in order: every read is a
        // prefix of blocks with exactly their offsets.
        "fill-reader" => {
            let total: usize = args[1].parse().unwrap();
            let (mut reads, mut partial) = (0u64, 0u64);
            loop {
                let r = store.read();
                let n = r.num_blocks();
                let mut tids = 0u64;
                for (i, blk) in r.iter().enumerate() {
                    assert_eq!(blk.block(), i as u32, "blocks are a prefix");
                    assert!(blk.offsets().eq(fill_offsets(i as u32)), "block {i}");
                    tids += blk.len() as u64;
                }
                assert_eq!(tids, r.num_tids(), "num_tids agrees with the entries");
                if n > 0 {
                    let b = (reads % n as u64) as u32;
                    for &o in &fill_offsets(b) {
                        assert!(r.is_member(Tid::new(b, o)));
                    }
                }
                assert!(!r.is_member(Tid::new(n as u32, 1)));
                reads += 1;
                partial += u64::from(n > 0 && n < total);
                if n == total {
                    r.verify().unwrap();
                    break;
                }
            }
            println!("{reads} reads, {partial} while the parent was writing");
        }
        "hold-write" => {
            let _w = store.write();
            println!("locked");
            loop {
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        other => panic!("unknown role {other}"),
    }
    ExitCode::SUCCESS
}

fn postgres_cases_read_in_a_child() {
    let store = SharedTidStore::create(BUDGET).unwrap();
    let empty = store.area().memory_usage();
    assert!(!store.read().is_full(), "an empty store is not full");
    assert!(
        !SharedTidStore::create(1 << 20).unwrap().read().is_full(),
        "not even under a 1 MiB budget"
    );
    {
        let mut w = store.write();
        for (block, offsets) in postgres_cases() {
            w.set_block_offsets(block, &offsets).unwrap();
        }
        assert_eq!(
            w.set_block_offsets(9, &[0]),
            Err(TidStoreError::OffsetOutOfRange {
                block: 9,
                offset: 0
            })
        );
        assert_eq!(
            w.set_block_offsets(9, &[5, 3]),
            Err(TidStoreError::NotAscending {
                block: 9,
                previous: 5,
                offset: 3
            })
        );
    }
    check(&store.read(), &model_of(&postgres_cases()));
    let children: Vec<Child> = (0..2)
        .map(|_| spawn("postgres", &[store.handle().to_string()]))
        .collect();
    for child in children {
        let (ok, out, err) = wait(child, Duration::from_secs(30));
        assert!(ok && out.contains("checked"), "{out}{err}");
    }
    store.write().clear();
    assert_eq!(store.read().num_tids(), 0);
    assert_eq!(store.area().memory_usage(), empty);
    store.destroy().unwrap();
}

fn readers_see_a_prefix_while_the_store_fills() {
    let store = SharedTidStore::create(BUDGET).unwrap();
    // Each reader walks the whole store again and again: the test's time
    // grows with the square of the blocks.
    let total: u32 = test_depth::pick(60_000, 15_000, 15_000);
    let args = [store.handle().to_string(), total.to_string()];
    let children: Vec<Child> = (0..3).map(|_| spawn("fill-reader", &args)).collect();
    let start = Instant::now();
    // A write guard per 20 blocks: a guard per block would spend the test
    // waiting for the readers' whole walks, one per block.
    for first in (0..total).step_by(20) {
        let mut w = store.write();
        for b in first..(first + 20).min(total) {
            w.set_block_offsets(b, &fill_offsets(b)).unwrap();
        }
        drop(w);
        if first % 1000 == 980 {
            // Over about two seconds (one by default).
            let spread = Duration::from_secs(test_depth::pick(2, 1, 1));
            let due = spread.mul_f64(f64::from(first) / f64::from(total));
            if let Some(rest) = due.checked_sub(start.elapsed()) {
                std::thread::sleep(rest);
            }
        }
    }
    for child in children {
        let (ok, out, err) = wait(child, Duration::from_secs(60));
        assert!(ok, "a reader failed:\n{err}");
        println!("    {}", out.trim());
    }
    store.destroy().unwrap();
}

fn a_killed_writer_poisons_the_store() {
    let store = SharedTidStore::create(BUDGET).unwrap();
    store.write().set_block_offsets(1, &[1]).unwrap();
    let mut writer = spawn("hold-write", &[store.handle().to_string()]);
    assert_eq!(first_line(&mut writer), "locked");
    assert!(matches!(store.try_read(), Err(ShmError::WouldBlock)));
    writer.kill().unwrap();
    writer.wait().unwrap();
    assert!(matches!(store.try_read(), Err(ShmError::OwnerDied { pid }) if pid == writer.id()));
    assert!(matches!(store.try_write(), Err(ShmError::OwnerDied { .. })));
    assert!(store.destroy().is_err(), "a poisoned store is not walked");
}

/// The pages of a bitmap as the walkers print them.
fn page_lines(bitmap: &TidBitmap) -> Vec<String> {
    bitmap
        .iter()
        .map(|page| {
            let offsets: Vec<String> = page
                .offsets()
                .map(|o| o.map(|o| o.to_string()).collect())
                .unwrap_or_default();
            format!(
                "{} {} {} {}",
                page.block(),
                page.is_lossy(),
                page.recheck(),
                offsets.join(",")
            )
        })
        .collect()
}

fn three_workers_walk_a_shared_bitmap_each_page_once() {
    // Exact pages (some to recheck, some past offset 112), lossy chunks
    // the budget made, and a lossy run. The budget leaves about 2,000
    // pages exact: twice the bound below, so that a change of a few bytes
    // in an entry's size does not fail the test (at twice the minimum
    // budget it kept 833 to 1,024).
    let mut bitmap = TidBitmap::new(TidBitmap::MIN_BUDGET * 4).unwrap();
    let pages: u32 = test_depth::pick(40_000, 12_000, 12_000);
    for block in 0..pages {
        let offsets = [1 + (block % 7) as u16, 100 + (block % 50) as u16];
        bitmap.add_tids(block, &offsets, block % 11 == 0).unwrap();
    }
    bitmap.add_tids(pages + 5, &[300, 2048], false).unwrap();
    bitmap.add_pages(pages + 1000..pages + 3000);
    assert!(
        bitmap.lossy_pages() > 2000 && bitmap.exact_pages() > 1000,
        "{bitmap:?}"
    );
    let area = Area::create(AreaOptions::default().max_trees(1)).unwrap();
    let shared = SharedTidBitmap::create_in(&area, &bitmap).unwrap();
    let handle = shared.handle().to_string();
    let mut workers: Vec<Child> = (0..3)
        .map(|_| spawn("bitmap-walker", std::slice::from_ref(&handle)))
        .collect();
    // Each walker prints a line per page, more than a pipe holds: read
    // their output while they run.
    let readers: Vec<_> = workers
        .iter_mut()
        .map(|w| {
            let mut stdout = w.stdout.take().expect("piped stdout");
            std::thread::spawn(move || {
                let mut out = String::new();
                std::io::Read::read_to_string(&mut stdout, &mut out).map(|_| out)
            })
        })
        .collect();
    let start = Instant::now();
    for worker in &mut workers {
        while worker.try_wait().expect("waiting").is_none() {
            if start.elapsed() > Duration::from_secs(60) {
                let _ = worker.kill();
                panic!("walker {} did not finish within 60 s", worker.id());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(worker.wait().unwrap().success(), "a walker failed");
    }
    let mut seen = Vec::new();
    let mut shares = Vec::new();
    for reader in readers {
        let out = reader.join().unwrap().expect("a walker's output");
        assert!(out.trim_end().ends_with("done"), "a walker stopped early");
        let lines: Vec<String> = out
            .lines()
            .filter(|l| *l != "done")
            .map(String::from)
            .collect();
        shares.push(lines.len());
        seen.extend(lines);
    }
    seen.sort();
    let mut want = page_lines(&bitmap);
    want.sort();
    assert_eq!(seen.len(), want.len(), "every page once: shares {shares:?}");
    assert_eq!(seen, want);
    println!("    {} pages, walked as {shares:?}", want.len());
    shared.destroy().unwrap();
    area.destroy().unwrap();
}

fn main() -> ExitCode {
    if let Some((role, args)) = processes::child_role() {
        return child(&role, &args);
    }
    processes::run(&[
        (
            "postgres_cases_read_in_a_child",
            postgres_cases_read_in_a_child,
        ),
        (
            "readers_see_a_prefix_while_the_store_fills",
            readers_see_a_prefix_while_the_store_fills,
        ),
        (
            "a_killed_writer_poisons_the_store",
            a_killed_writer_poisons_the_store,
        ),
        (
            "three_workers_walk_a_shared_bitmap_each_page_once",
            three_workers_walk_a_shared_bitmap_each_page_once,
        ),
    ])
}
