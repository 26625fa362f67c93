//! Shared trees across real processes.
//!
//! Run normally, this binary is the *parent*: it creates areas and trees
//! and starts children, which are this same binary in a role (reader, lock
//! holder, ...) that attach by handle; `processes/mod.rs` is the harness
//! (deadlines, a watchdog, and the final check that nothing is left in
//! `/dev/shm`).

mod processes;

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::{Child, ExitCode};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use processes::{first_line, spawn, wait};

use radix_core::shm::{Area, AreaHandle, AreaOptions, ShmError, TreeHandle, remove_stale};

radix_core::radix_tree! {
    /// The tree every test shares: `u64 -> u64`.
    pub struct Shared {
        key: u64,
        value: u64,
        memory: shared,
    }
}

radix_core::radix_tree! {
    /// Another configuration, for attach checks.
    pub struct OtherKey {
        key: u32,
        value: u64,
        memory: shared,
    }
}

/// User word the parent sets once it has inserted everything.
const DONE: usize = 0;

/// The `i`-th key of the ascending insert sequence: spread over three
/// levels so that inserts add nodes at every height.
fn key(i: u64) -> u64 {
    i * 0x0001_0001
}

fn value(key: u64) -> u64 {
    key ^ 0x5555_5555
}

/// A small-segment area in POSIX shared memory, so that a test creates many
/// segments that children must map as they appear.
fn area(limit: Option<usize>) -> Area {
    Area::create(
        AreaOptions::default()
            .init_segment_size(64 << 10)
            .max_segment_size(1 << 20)
            .max_segments(64)
            .size_limit(limit),
    )
    .expect("creating an area")
}

fn kill(child: &mut Child) {
    child.kill().expect("killing a child");
}

// ---------------------------------------------------------------- children

/// Runs the child `role`; returns its exit code.
fn child(role: &str, args: &[String]) -> ExitCode {
    let area_of = |i: usize| Area::attach(&args[i].parse().unwrap()).unwrap();
    let tree_of = |area: &Area, i: usize| Shared::attach(area, args[i].parse().unwrap()).unwrap();
    match role {
        // Reads in a loop until the parent is done; every read must see a
        // prefix of the inserted keys with their values, sorted.
        "reader" => {
            let area = area_of(0);
            let tree = tree_of(&area, 1);
            let total: usize = args[2].parse().unwrap();
            let (mut reads, mut last_len, mut partial) = (0u64, 0usize, 0u64);
            loop {
                let r = tree.read();
                let len = r.len();
                assert!(len >= last_len, "the tree shrank from {last_len} to {len}");
                let mut n = 0u64;
                for (k, &v) in r.iter() {
                    assert_eq!(k, key(n), "key {n} out of place: not a sorted prefix");
                    assert_eq!(v, value(k), "value of key {k:#x}");
                    n += 1;
                }
                assert_eq!(n as usize, len, "iteration and len disagree");
                assert_eq!(r.get(key(len as u64)), None, "a key past the prefix");
                if len > 0 {
                    let probe = (reads * 7919) % len as u64;
                    assert_eq!(r.get(key(probe)), Some(&value(key(probe))));
                    assert_eq!(
                        r.last_key_value().map(|(k, _)| k),
                        Some(key(len as u64 - 1))
                    );
                }
                let done = r.user_word(DONE) == 1;
                drop(r);
                reads += 1;
                partial += u64::from(len > 0 && len < total);
                last_len = len;
                if done {
                    assert_eq!(len, total, "the final tree");
                    break;
                }
            }
            println!(
                "{reads} reads, {partial} while the parent was writing, up to {last_len} keys"
            );
            ExitCode::SUCCESS
        }
        // Takes the write lock (or a read lock), says so, and waits to be
        // killed.
        "hold-write" | "hold-read" => {
            let area = area_of(0);
            let tree = tree_of(&area, 1);
            let _write;
            let _read;
            if role == "hold-write" {
                let mut w = tree.write();
                w.insert(u64::MAX, 1).unwrap();
                _write = w;
            } else {
                _read = tree.read();
            }
            println!("locked");
            loop {
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        // Blocks in `read()` until the parent kills the writer; the read
        // then panics with the poison.
        "blocked-read" => {
            let area = area_of(0);
            let tree = tree_of(&area, 1);
            println!("waiting");
            let r = tree.read();
            println!("read {} keys", r.len());
            ExitCode::SUCCESS
        }
        // Attaches with a value given by the parent and prints the error.
        "attach" => {
            let result = args[0]
                .parse::<AreaHandle>()
                .and_then(|handle| Area::attach(&handle))
                .and_then(|area| OtherKey::attach(&area, args[1].parse()?).map(|_| ()));
            match result {
                Ok(()) => println!("attached"),
                Err(e) => println!("{e}"),
            }
            ExitCode::SUCCESS
        }
        // Creates an area with a tree and data, prints its handle, and is
        // killed before it can clean up.
        "create-and-die" => {
            let area = area(None);
            let tree = Shared::create_in(&area).unwrap();
            let mut w = tree.write();
            for i in 0..20_000 {
                w.insert(key(i), value(key(i))).unwrap();
            }
            drop(w);
            println!("{}", area.handle());
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

// ------------------------------------------------------------------ tests

/// The parent inserts keys in ascending order under write guards while
/// three children read in a loop under read guards.
fn readers_see_consistent_prefixes() {
    let area = area(None);
    let tree = Shared::create_in(&area).unwrap();
    let total = 200_000u64;
    let args = [
        area.handle().to_string(),
        tree.handle().to_string(),
        total.to_string(),
    ];
    let children: Vec<Child> = (0..3).map(|_| spawn("reader", &args)).collect();
    let start = Instant::now();
    let mut i = 0;
    while i < total {
        let mut w = tree.write();
        for _ in 0..500 {
            if i < total {
                w.insert(key(i), value(key(i))).unwrap();
                i += 1;
            }
        }
        drop(w);
        // Spread the writes over about three seconds (one by default).
        let spread = Duration::from_secs(test_depth::pick(3, 1, 1));
        let due = spread.mul_f64(i as f64 / total as f64);
        if let Some(rest) = due.checked_sub(start.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    assert!(
        area.segments() > 1,
        "the test should grow the area by several segments"
    );
    tree.write().set_user_word(DONE, 1);
    let mut reads = Vec::new();
    for child in children {
        let out = processes::wait_for_reader(child);
        reads.push(out.trim().to_string());
    }
    tree.read().verify().unwrap();
    println!("    readers: {}", reads.join("; "));
    tree.destroy().unwrap();
    assert_eq!(area.memory_usage(), area.empty_size());
}

/// A writer killed while holding the lock poisons the tree: a blocked
/// reader panics with `OwnerDied`, later `try_*` return it, and nobody
/// hangs. (The writer is left a zombie until the end: liveness must not
/// trust `kill(pid, 0)` alone.)
fn a_killed_writer_poisons_the_tree() {
    let area = area(None);
    let tree = Shared::create_in(&area).unwrap();
    tree.write().insert(1, 1).unwrap();
    let args = [area.handle().to_string(), tree.handle().to_string()];
    let mut writer = spawn("hold-write", &args);
    assert_eq!(first_line(&mut writer), "locked");
    let mut blocked = spawn("blocked-read", &args);
    assert_eq!(first_line(&mut blocked), "waiting");
    assert!(matches!(tree.try_read(), Err(ShmError::WouldBlock)));
    std::thread::sleep(Duration::from_millis(100));
    kill(&mut writer);
    let pid = writer.id();
    let (ok, _, err) = wait(blocked, Duration::from_secs(10));
    assert!(!ok, "the blocked reader should panic");
    assert!(
        err.contains(&format!("process {pid} died holding the write lock")),
        "{err}"
    );
    match tree.try_read() {
        Err(ShmError::OwnerDied { pid: dead }) => assert_eq!(dead, pid),
        other => panic!("{other:?}"),
    }
    assert!(matches!(tree.try_write(), Err(ShmError::OwnerDied { .. })));
    // The panic is expected; keep it off the test output.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let panic = catch_unwind(AssertUnwindSafe(|| drop(tree.read())));
    std::panic::set_hook(hook);
    let panic = panic.unwrap_err();
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("poisoned"), "{message}");
    assert!(matches!(tree.destroy(), Err(ShmError::OwnerDied { .. })));
    writer.wait().unwrap();
}

/// A reader killed while holding a read slot does not block writers.
fn a_killed_reader_does_not_block_writers() {
    let area = area(None);
    let tree = Shared::create_in(&area).unwrap();
    tree.write().insert(1, 1).unwrap();
    let args = [area.handle().to_string(), tree.handle().to_string()];
    let mut reader = spawn("hold-read", &args);
    assert_eq!(first_line(&mut reader), "locked");
    assert!(matches!(tree.try_write(), Err(ShmError::WouldBlock)));
    kill(&mut reader);
    let (sent, received) = mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut w = tree.write();
            w.insert(2, 2).unwrap();
            sent.send(w.len()).unwrap();
        });
        let len = received
            .recv_timeout(Duration::from_secs(10))
            .expect("the writer reclaims the dead reader's slot");
        assert_eq!(len, 2);
    });
    assert_eq!(tree.try_read().unwrap().get(2), Some(&2));
    reader.wait().unwrap();
    tree.destroy().unwrap();
}

/// Every way to attach wrongly is a typed error.
fn attach_errors_are_typed() {
    let pid = std::process::id();
    // A garbage handle, and a well-formed one naming nothing.
    assert!(matches!(
        "not a handle".parse::<AreaHandle>(),
        Err(ShmError::BadHandle { .. })
    ));
    let nothing: AreaHandle = format!("radix-{pid}-0123456789abcdef").parse().unwrap();
    assert!(matches!(
        Area::attach(&nothing),
        Err(ShmError::NotFound { .. })
    ));
    // Wrong magic: an object with our name pattern but other contents.
    let impostor = format!("radix-{pid}-fedcba9876543210");
    std::fs::write(format!("/dev/shm/{impostor}"), vec![7u8; 64 << 10]).unwrap();
    let err = Area::attach(&impostor.parse().unwrap()).unwrap_err();
    std::fs::remove_file(format!("/dev/shm/{impostor}")).unwrap();
    assert!(matches!(err, ShmError::NotAnArea { .. }), "{err}");
    assert!(err.to_string().contains("magic"), "{err}");
    // Wrong version: patch the version word (bytes 8..12) of a real area.
    let area = area(None);
    let path = format!("/dev/shm/{}", area.handle());
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "segments are private to their owner");
        assert!(
            area.handle()
                .to_string()
                .starts_with(&format!("radix-{pid}-"))
        );
    }
    let mut bytes = std::fs::read(&path).unwrap();
    let original = bytes[8..12].to_vec();
    bytes[8..12].copy_from_slice(&99u32.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    match Area::attach(&area.handle()) {
        Err(ShmError::VersionMismatch {
            found: 99,
            expected: 4,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    bytes[8..12].copy_from_slice(&original);
    std::fs::write(&path, &bytes).unwrap();
    // Another configuration, from another process.
    let tree = Shared::create_in(&area).unwrap();
    let child = spawn(
        "attach",
        &[area.handle().to_string(), tree.handle().to_string()],
    );
    let (ok, out, _) = wait(child, Duration::from_secs(10));
    assert!(ok);
    assert!(out.contains("differs in key width"), "{out}");
    assert!(out.contains("u32") && out.contains("u64"), "{out}");
    // A garbage tree handle from another process.
    let child = spawn("attach", &[area.handle().to_string(), "tree-x".into()]);
    let (ok, out, _) = wait(child, Duration::from_secs(10));
    assert!(ok && out.contains("invalid handle"), "{out}");
    // A missing segment: unlink one, then attach.
    {
        let mut w = tree.write();
        for i in 0..5000 {
            w.insert(key(i), 0).unwrap();
        }
    }
    let segment = std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find(|name| name.starts_with(&format!("{}-", area.handle())))
        .expect("a data segment");
    std::fs::remove_file(format!("/dev/shm/{segment}")).unwrap();
    match Area::attach(&area.handle()) {
        Err(ShmError::SegmentMissing { name, .. }) => assert_eq!(name, format!("/{segment}")),
        other => panic!("{other:?}"),
    }
    tree.destroy().unwrap();
    assert!(matches!(
        Shared::attach(&area, "tree-0-1".parse::<TreeHandle>().unwrap()),
        Err(ShmError::NoSuchTree { .. })
    ));
}

/// Past its size limit an area refuses inserts and keeps every key.
fn the_area_limit_keeps_every_key() {
    let area = area(Some(256 << 10));
    let tree = Shared::create_in(&area).unwrap();
    let mut w = tree.write();
    let mut inserted = 0u64;
    let err = loop {
        let k = inserted.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        match w.insert(k, inserted) {
            Ok(_) => inserted += 1,
            Err(e) => break e,
        }
    };
    assert!(matches!(err, ShmError::AreaFull { .. }), "{err}");
    assert!(area.memory_usage() <= 256 << 10);
    assert_eq!(w.len() as u64, inserted);
    for i in 0..inserted {
        assert_eq!(w.get(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)), Some(&i));
    }
    w.verify().unwrap();
    drop(w);
    tree.destroy().unwrap();
    assert_eq!(area.memory_usage(), area.empty_size());
}

/// A creator killed before it cleaned up leaves objects, which
/// `remove_stale` removes (and only those).
fn remove_stale_cleans_up_after_a_killed_creator() {
    let mut creator = spawn("create-and-die", &[]);
    let handle = first_line(&mut creator);
    let prefix = handle.clone();
    let listed = || -> BTreeSet<String> {
        std::fs::read_dir("/dev/shm")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|name| name.starts_with(&prefix))
            .collect()
    };
    let ours = area(None);
    assert!(listed().len() >= 2, "control and data segments");
    assert!(
        remove_stale()
            .unwrap()
            .iter()
            .all(|n| !n.starts_with(&prefix))
    );
    kill(&mut creator);
    creator.wait().unwrap();
    let removed: BTreeSet<String> = remove_stale().unwrap().into_iter().collect();
    assert!(listed().is_empty(), "left: {:?}", listed());
    assert!(listed().is_empty() && !removed.is_empty());
    assert!(
        removed.iter().all(|n| n.starts_with(&prefix)),
        "{removed:?}"
    );
    // A live creator's area is untouched.
    assert!(std::fs::metadata(format!("/dev/shm/{}", ours.handle())).is_ok());
}

fn main() -> ExitCode {
    if let Some((role, args)) = processes::child_role() {
        return child(&role, &args);
    }
    processes::run(&[
        (
            "readers_see_consistent_prefixes",
            readers_see_consistent_prefixes,
        ),
        (
            "a_killed_writer_poisons_the_tree",
            a_killed_writer_poisons_the_tree,
        ),
        (
            "a_killed_reader_does_not_block_writers",
            a_killed_reader_does_not_block_writers,
        ),
        ("attach_errors_are_typed", attach_errors_are_typed),
        (
            "the_area_limit_keeps_every_key",
            the_area_limit_keeps_every_key,
        ),
        (
            "remove_stale_cleans_up_after_a_killed_creator",
            remove_stale_cleans_up_after_a_killed_creator,
        ),
    ])
}
