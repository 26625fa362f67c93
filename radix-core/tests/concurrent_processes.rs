//! Concurrent shared trees (`memory: shared, concurrency: rowex`) across
//! real processes: readers without locks beside a writer, writers in two
//! processes at once, and processes killed while they write or read.
//!
//! Like `shared_processes.rs`, this binary is the parent when run
//! normally, and a child in a role when `processes/mod.rs` starts it again.

mod processes;

use std::collections::BTreeMap;
use std::process::{Child, ExitCode};
use std::time::{Duration, Instant};

use processes::{first_line, spawn, wait};

use radix_core::shm::{Area, AreaOptions, ShmError};

radix_core::radix_tree! {
    /// The tree every test shares: `u64 -> u64`, readers without locks.
    pub struct Shared {
        key: u64,
        value: u64,
        memory: shared,
        concurrency: rowex,
    }
}

/// The key the writer inserts last, to say it is done.
const DONE: u64 = u64::MAX;

/// The `i`-th key of the ascending sequence: three levels, so that inserts
/// add nodes at every height and grow the root.
fn key(i: u64) -> u64 {
    i * 0x0001_0001
}

fn value(key: u64) -> u64 {
    key ^ 0x5555_5555
}

/// Small segments, so that readers must map segments made after they
/// attached, on first contact.
fn area() -> Area {
    Area::create(
        AreaOptions::default()
            .init_segment_size(64 << 10)
            .max_segment_size(1 << 20)
            .max_segments(64),
    )
    .expect("creating an area")
}

// ---------------------------------------------------------------- children

fn child(role: &str, args: &[String]) -> ExitCode {
    let area = Area::attach(&args[0].parse().unwrap()).unwrap();
    let tree = Shared::attach(&area, args[1].parse().unwrap()).unwrap();
    match role {
        // Reads until the writer is done: each pass must see a prefix of
        // the ascending keys, with their values.
        "reader" => {
            let (mut passes, mut partial, mut last) = (0u64, 0u64, 0u64);
            loop {
                let done = tree.get(DONE).is_some();
                let mut n = 0u64;
                for (k, v) in tree.range(..DONE) {
                    assert_eq!(k, key(n), "key {n} out of place: not a prefix");
                    assert_eq!(v, value(k), "value of key {k:#x}");
                    n += 1;
                }
                assert!(n >= last, "the tree shrank from {last} to {n}");
                // The writer may have added the next key since the pass.
                let next = tree.get(key(n));
                assert!(next.is_none() || next == Some(value(key(n))));
                if n > 0 {
                    let probe = key((passes * 7919) % n);
                    assert_eq!(tree.get(probe), Some(value(probe)));
                }
                passes += 1;
                partial += u64::from(!done && n > 0);
                last = n;
                if done {
                    break;
                }
            }
            println!("{passes} passes, {partial} while the parent was writing, {last} keys");
            ExitCode::SUCCESS
        }
        // Inserts keys `start..start + count` of the sequence, in steps.
        "writer" => {
            let start: u64 = args[2].parse().unwrap();
            let count: u64 = args[3].parse().unwrap();
            println!("ready");
            for i in start..start + count {
                tree.insert(key(i), value(key(i))).unwrap();
            }
            ExitCode::SUCCESS
        }
        // Inserts and removes in its own range until it is killed.
        "churn" => {
            println!("started");
            let base: u64 = args[2].parse().unwrap();
            for round in 0u64.. {
                for i in 0..1000 {
                    tree.insert(base + i * 64, round).unwrap();
                }
                for i in 0..1000 {
                    tree.remove(base + i * 64).unwrap();
                }
            }
            ExitCode::SUCCESS
        }
        // Holds a read pin and waits to be killed.
        "pin" => {
            let pin = tree.pin();
            assert!(pin.contains_key(key(1)));
            println!("pinned");
            loop {
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        other => {
            eprintln!("unknown role {other}");
            ExitCode::FAILURE
        }
    }
}

fn handles(area: &Area, tree: &Shared) -> Vec<String> {
    vec![area.handle().to_string(), tree.handle().to_string()]
}

// ------------------------------------------------------------------ tests

/// Three reader processes read without locks while the parent inserts
/// ascending keys; every pass sees a prefix.
fn readers_see_consistent_prefixes_without_locks() {
    let area = area();
    let tree = Shared::create_in(&area).unwrap();
    let total = 100_000u64;
    let children: Vec<Child> = (0..3)
        .map(|_| spawn("reader", &handles(&area, &tree)))
        .collect();
    let start = Instant::now();
    for i in 0..total {
        tree.insert(key(i), value(key(i))).unwrap();
        if i % 1000 == 999 {
            // Spread the writes over about a second.
            let due = Duration::from_secs(1).mul_f64(i as f64 / total as f64);
            if let Some(rest) = due.checked_sub(start.elapsed()) {
                std::thread::sleep(rest);
            }
        }
    }
    assert!(area.segments() > 1, "the test should make several segments");
    tree.insert(DONE, 0).unwrap();
    let mut reports = Vec::new();
    for child in children {
        let out = processes::wait_for_reader(child);
        reports.push(out.trim().to_string());
    }
    println!("    readers: {}", reports.join("; "));
    tree.destroy().unwrap();
}

/// Two writer processes insert disjoint ranges at once; the tree equals
/// the model.
fn two_writer_processes_fill_disjoint_ranges() {
    let area = area();
    let tree = Shared::create_in(&area).unwrap();
    let per = 60_000u64;
    let mut children = Vec::new();
    for writer in 0..2u64 {
        let mut args = handles(&area, &tree);
        args.extend([(writer * per).to_string(), per.to_string()]);
        let mut child = spawn("writer", &args);
        assert_eq!(first_line(&mut child), "ready");
        children.push(child);
    }
    for child in children {
        let (ok, _, err) = wait(child, Duration::from_secs(60));
        assert!(ok, "a writer failed:\n{err}");
    }
    let model: BTreeMap<u64, u64> = (0..2 * per).map(|i| (key(i), value(key(i)))).collect();
    assert!(tree.iter().eq(model));
    tree.destroy().unwrap();
}

/// A writer killed in the middle of its inserts: the others finish. If it
/// died holding a node lock, writes that need it fail with `OwnerDied`
/// (the tree is poisoned) rather than hang; reads go on either way.
fn a_killed_writer_leaves_the_others_running() {
    let area = area();
    let tree = Shared::create_in(&area).unwrap();
    for i in 0..10_000 {
        tree.insert(key(i), value(key(i))).unwrap();
    }
    let mut outcomes = (0, 0);
    for attempt in 0..4u64 {
        let mut args = handles(&area, &tree);
        args.push((1u64 << 40 | attempt << 32).to_string());
        let mut child = spawn("churn", &args);
        assert_eq!(first_line(&mut child), "started");
        std::thread::sleep(Duration::from_millis(50 + 37 * attempt));
        child.kill().unwrap();
        child.wait().unwrap();
        // Writes over the whole tree, the dead writer's subtree included.
        let mut poisoned = false;
        for i in 0..2000u64 {
            match tree.insert(1u64 << 40 | attempt << 32 | (i * 64), i) {
                Ok(_) => {}
                Err(ShmError::OwnerDied { .. }) => {
                    poisoned = true;
                    break;
                }
                Err(e) => panic!("{e}"),
            }
        }
        for i in 0..10_000 {
            assert_eq!(tree.get(key(i)), Some(value(key(i))));
        }
        assert!(tree.iter().count() >= 10_000);
        if poisoned {
            outcomes.1 += 1;
            break;
        }
        outcomes.0 += 1;
    }
    println!(
        "    kills that left the tree writable: {}, that poisoned it: {}",
        outcomes.0, outcomes.1
    );
    // A writer killed inside the allocation mutex leaves the pools to
    // nobody: writes served from a process's object cache go on, but the
    // tree's memory can no longer be handed back piecewise, and stays in
    // the area until the area goes (as `destroy` documents).
    match tree.destroy() {
        Ok(()) | Err(ShmError::OwnerDied { .. }) => {}
        Err(e) => panic!("destroy: {e}"),
    }
}

/// A reader killed inside a read (holding a pin) does not hold
/// reclamation back: the churn that follows reuses memory rather than
/// growing the area round after round.
fn a_killed_reader_does_not_hold_memory() {
    let area = area();
    let tree = Shared::create_in(&area).unwrap();
    tree.insert(key(1), 1).unwrap();
    let mut child = spawn("pin", &handles(&area, &tree));
    assert_eq!(first_line(&mut child), "pinned");
    child.kill().unwrap();
    child.wait().unwrap();
    let mut after_two = 0;
    for round in 0..12 {
        for i in 0..5000 {
            tree.insert(key(i) << 4, i).unwrap();
        }
        for i in 0..5000 {
            tree.remove(key(i) << 4).unwrap();
        }
        if round == 1 {
            after_two = area.memory_usage();
        }
    }
    // Each round retires 5,000 nodes: held back, ten more rounds would
    // grow the area several times over. Reused, it may still take a
    // segment or two of 64 KiB as the allocator's caches settle (areas
    // grow by an eighth, not by doubling, so there is little slack).
    assert!(
        area.memory_usage() <= after_two + after_two / 4,
        "the area grew from {after_two} to {}: the dead reader holds memory",
        area.memory_usage()
    );
    tree.destroy().unwrap();
}

fn main() -> ExitCode {
    if let Some((role, args)) = processes::child_role() {
        return child(&role, &args);
    }
    processes::run(&[
        (
            "readers_see_consistent_prefixes_without_locks",
            readers_see_consistent_prefixes_without_locks,
        ),
        (
            "two_writer_processes_fill_disjoint_ranges",
            two_writer_processes_fill_disjoint_ranges,
        ),
        (
            "a_killed_writer_leaves_the_others_running",
            a_killed_writer_leaves_the_others_running,
        ),
        (
            "a_killed_reader_does_not_hold_memory",
            a_killed_reader_does_not_hold_memory,
        ),
    ])
}
