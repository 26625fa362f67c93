//! The shared TID store across real processes: PostgreSQL's TID store
//! cases written by the parent and read in children, children reading while
//! the parent fills the store, and a writer killed holding the lock.
//!
//! Its own harness (`harness = false`), as radix-core's
//! `tests/shared_processes.rs`: a child is this binary started with
//! `TIDSTORE_SHM_ROLE` set.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::panic::catch_unwind;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use radix_core::shm::ShmError;
use tidstore::{SharedTidStore, SharedTidStoreHandle, Tid, TidStoreError, MAX_OFFSET};

const ROLE: &str = "TIDSTORE_SHM_ROLE";
const BUDGET: usize = 64 << 20;

static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());

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

/// The offsets the filling test gives block `b`: every form in turn.
fn fill_offsets(b: u32) -> Vec<u16> {
    match b % 4 {
        0 => vec![1],
        1 => (1..=40).collect(),
        2 => vec![3, 64, 65, 700],
        _ => (1..=300).step_by(7).collect(),
    }
}

/// Everything a reader checks of the store against `model`.
fn check(r: &tidstore::SharedTidStoreReader<'_>, model: &Model) {
    r.verify().unwrap();
    assert_eq!(r.num_tids(), model.len() as u64);
    let blocks: BTreeSet<u32> = model.iter().map(|&(b, _)| b).collect();
    assert_eq!(r.num_blocks(), blocks.len());
    for &(b, o) in model {
        assert!(r.is_member(Tid::new(b, o)), "({b},{o}) missing");
        for n in [o - 1, o + 1] {
            assert_eq!(
                r.is_member(Tid::new(b, n)),
                model.contains(&(b, n)),
                "({b},{n})"
            );
        }
    }
    let iterated: Vec<(u32, u16)> = r
        .iter()
        .flat_map(|blk| blk.offsets().map(move |o| (blk.block(), o)))
        .collect();
    assert!(
        iterated.iter().eq(model.iter()),
        "iteration differs from the model"
    );
    for blk in r.iter() {
        let mut buf = vec![0u16; blk.len()];
        assert_eq!(blk.copy_offsets(&mut buf), blk.len());
        assert!(buf.iter().copied().eq(blk.offsets()));
    }
}

fn spawn(role: &str, args: &[String]) -> Child {
    let child = Command::new(std::env::current_exe().unwrap())
        .env(ROLE, role)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    CHILDREN.lock().unwrap().push(child.id());
    child
}

fn wait(mut child: Child, limit: Duration) -> (bool, String, String) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let (mut out, mut err) = (String::new(), String::new());
            child.stdout.take().unwrap().read_to_string(&mut out).ok();
            child.stderr.take().unwrap().read_to_string(&mut err).ok();
            return (status.success(), out, err);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("child {} did not finish within {limit:?}", child.id());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn child(role: &str, args: &[String]) -> ExitCode {
    let handle: SharedTidStoreHandle = args[0].parse().unwrap();
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
    let total = 60_000u32;
    let args = [store.handle().to_string(), total.to_string()];
    let children: Vec<Child> = (0..3).map(|_| spawn("fill-reader", &args)).collect();
    let start = Instant::now();
    for b in 0..total {
        // One write guard per block, as PostgreSQL locks around each
        // TidStoreSetBlockOffsets.
        store
            .write()
            .set_block_offsets(b, &fill_offsets(b))
            .unwrap();
        if b % 1000 == 999 {
            let due = Duration::from_secs(2).mul_f64(f64::from(b) / f64::from(total));
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
    let mut line = String::new();
    BufReader::new(writer.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "locked");
    assert!(matches!(store.try_read(), Err(ShmError::WouldBlock)));
    writer.kill().unwrap();
    writer.wait().unwrap();
    assert!(matches!(store.try_read(), Err(ShmError::OwnerDied { pid }) if pid == writer.id()));
    assert!(matches!(store.try_write(), Err(ShmError::OwnerDied { .. })));
    assert!(store.destroy().is_err(), "a poisoned store is not walked");
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Ok(role) = std::env::var(ROLE) {
        return child(&role, &args);
    }
    std::thread::spawn(|| {
        std::thread::sleep(Duration::from_secs(300));
        eprintln!("shared_processes: a test hung for 300 s; aborting");
        std::process::exit(2);
    });
    let tests: [(&str, fn()); 3] = [
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
    ];
    if args.iter().any(|a| a == "--list") {
        for (name, _) in &tests {
            println!("{name}: test");
        }
        return ExitCode::SUCCESS;
    }
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let mut failed = Vec::new();
    let mut ran = 0;
    for (name, test) in tests {
        if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        ran += 1;
        let start = Instant::now();
        let ok = catch_unwind(test).is_ok();
        println!(
            "test {name} ... {} ({:.1} s)",
            if ok { "ok" } else { "FAILED" },
            start.elapsed().as_secs_f64()
        );
        if !ok {
            failed.push(name);
        }
    }
    let mut pids = CHILDREN.lock().unwrap().clone();
    pids.push(std::process::id());
    let left: Vec<String> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| pids.iter().any(|p| n.starts_with(&format!("radix-{p}-"))))
        .collect();
    if left.is_empty() {
        println!("test no_shared_memory_left_behind ... ok");
    } else {
        println!("test no_shared_memory_left_behind ... FAILED: {left:?}");
        failed.push("no_shared_memory_left_behind");
    }
    println!(
        "\ntest result: {}. {} passed; {} failed",
        if failed.is_empty() { "ok" } else { "FAILED" },
        ran + 1 - failed.len(),
        failed.len()
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
