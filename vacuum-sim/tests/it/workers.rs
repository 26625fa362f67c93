//! `--workers`: the shared TID store with index passes in worker processes,
//! through the real binary; `--remove-stale-shm`; and no shared memory
//! left behind. Linux only (`main.rs`).

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// `--remove-stale-shm` removes the objects of every creator that is no
/// longer running, including a leader of these tests that has just exited:
/// it would hide the leak the other tests look for. The tests take turns.
static SHM: Mutex<()> = Mutex::new(());

/// The longest any run here may take before the test calls it a hang.
const PATIENCE: Duration = Duration::from_secs(120);

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SHM.lock().unwrap_or_else(|e| e.into_inner())
}

fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_vacuum-sim"));
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Waits for `child` for at most [`PATIENCE`]; a child still running then
/// is killed and the test fails (a hang is a failure, not a stuck test).
fn finish(mut child: Child) -> Output {
    let started = Instant::now();
    loop {
        match child.try_wait().expect("wait for vacuum-sim") {
            Some(_) => return child.wait_with_output().expect("collect vacuum-sim"),
            None if started.elapsed() > PATIENCE => {
                let _ = child.kill();
                let output = child.wait_with_output().expect("collect vacuum-sim");
                panic!(
                    "vacuum-sim still running after {PATIENCE:?}: {}",
                    stderr(&output)
                );
            }
            None => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Runs vacuum-sim; returns its output and its pid (the creator pid in the
/// names of the shared-memory objects it made).
fn vacuum_sim(args: &[&str]) -> (Output, u32) {
    let child = command(args).spawn().expect("start vacuum-sim");
    let pid = child.id();
    (finish(child), pid)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The shared-memory objects created by process `pid`.
fn objects_of(pid: u32) -> Vec<String> {
    let prefix = format!("radix-{pid}-");
    let mut names: Vec<String> = std::fs::read_dir("/dev/shm")
        .map(|dir| {
            dir.filter_map(|entry| entry.ok()?.file_name().into_string().ok())
                .filter(|name| name.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn assert_no_objects_left(pid: u32) {
    let left = objects_of(pid);
    assert!(
        left.is_empty(),
        "shared memory left behind by vacuum-sim (pid {pid}): {left:?}"
    );
}

/// A small table whose shared store needs several rounds: 30,000 pages, 10
/// dead tuples on each, a correlated and a random index, 512 KiB (the
/// shared store's area grows by 256 KiB segments).
const SMALL: [&str; 13] = [
    "--blocks",
    "30000",
    "--tuples-per-page",
    "20",
    "--dead",
    "every:2",
    "--indexes",
    "correlated,random",
    "--mem",
    "512KiB",
    "--store",
    "tidstore",
    "--quiet",
];

#[test]
fn two_workers_find_every_dead_tid() {
    let _turn = serial();
    let mut args = SMALL.to_vec();
    args.extend(["--workers", "2", "--json"]);
    let (out, pid) = vacuum_sim(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_no_objects_left(pid);
    let text = stdout(&out);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    let (local, shared) = (&lines[0], &lines[1]);
    assert_eq!(local["store"], "tidstore");
    assert!(local.get("workers").is_none(), "{text}");
    assert_eq!(shared["store"], "shared");
    assert_eq!(shared["workers"], 2);
    let dead = 30_000 * 10;
    for line in [local, shared] {
        assert_eq!(line["dead_tids"], dead, "{line}");
        assert_eq!(line["found"], 2 * dead, "{line}");
        assert_eq!(line["expected_found"], 2 * dead, "{line}");
        assert_eq!(line["check_ok"], true, "{line}");
        assert!(
            line["index_ms"].as_f64().is_some_and(|ms| ms > 0.0),
            "{line}"
        );
    }
    let passes = shared["index_passes"].as_u64().unwrap();
    assert!(passes >= 2, "the test wants several rounds: {shared}");
    // Two workers per index pass, two indexes per round.
    assert_eq!(shared["workers_launched"], passes * 2 * 2, "{shared}");
    assert!(shared["index_speedup"].as_f64().is_some_and(|x| x > 0.0));
    assert!(
        shared["heap_scan_speedup"]
            .as_f64()
            .is_some_and(|x| x > 0.0)
    );
    // Two heap-scan workers per stretch of the scan: the store filled
    // `passes - 1` times, and each time the workers went on after the
    // round (a worker whose range was done by then is not restarted).
    let scans = shared["scan_workers_launched"].as_u64().unwrap();
    assert!(
        (passes + 1..=passes * 2).contains(&scans),
        "{passes} rounds, {scans} scan workers: {shared}"
    );
    assert_eq!(shared["dead_tids"], local["dead_tids"]);
    for field in [
        "worker_start_ms",
        "worker_attach_ms",
        "worker_lookup_ms",
        "worker_finish_ms",
    ] {
        assert!(
            shared[field].as_f64().is_some_and(|ms| ms >= 0.0),
            "{field}"
        );
    }
}

#[test]
fn the_table_shows_the_shared_column_and_the_speedup() {
    let _turn = serial();
    let mut args = SMALL.to_vec();
    args[7] = "random";
    args.extend(["--workers", "3"]);
    let (out, pid) = vacuum_sim(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_no_objects_left(pid);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    let head = lines.iter().find(|l| l.contains("tidstore")).unwrap();
    assert!(head.trim_end().ends_with("shared ×3"), "{text}");
    let check = lines.iter().find(|l| l.starts_with("check")).unwrap();
    assert_eq!(check.matches("ok").count(), 2, "{check}");
    let found = lines.iter().find(|l| l.starts_with("found")).unwrap();
    assert_eq!(found.matches("300,000").count(), 2, "{found}");
    for row in ["heap scan speed-up", "index speed-up"] {
        assert!(lines.iter().any(|l| l.starts_with(row)), "{row}: {text}");
    }
    assert!(text.contains("3 worker processes"), "{text}");
}

#[test]
fn one_worker_on_a_single_random_index() {
    let _turn = serial();
    let args = [
        "--blocks",
        "3000",
        "--tuples-per-page",
        "7",
        "--dead",
        "random:0.3",
        "--indexes",
        "random",
        "--mem",
        "4MiB",
        "--store",
        "tidstore",
        "--workers",
        "1",
        "--seed",
        "9",
        "--json",
        "--quiet",
    ];
    let (out, pid) = vacuum_sim(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_no_objects_left(pid);
    let text = stdout(&out);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines[0]["dead_tids"], lines[1]["dead_tids"]);
    assert_eq!(lines[1]["found"], lines[1]["dead_tids"]);
    assert_eq!(lines[1]["check_ok"], true);
}

#[test]
fn a_worker_with_a_bad_handle_fails_the_run_cleanly() {
    let _turn = serial();
    for handle in [
        // Well formed, but no such area (pid 1 never made one).
        "radix-1-00c0ffee00c0ffee/tree-0-1",
        // Not a handle at all.
        "not-a-handle",
    ] {
        let mut args = SMALL.to_vec();
        args.extend(["--workers", "2", "--worker-handle-override", handle]);
        let started = Instant::now();
        let (out, pid) = vacuum_sim(&args);
        assert!(started.elapsed() < PATIENCE);
        assert_eq!(out.status.code(), Some(1), "{handle}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("error: shared: worker"), "{handle}: {err}");
        assert!(err.contains("failed"), "{handle}: {err}");
        assert!(!err.contains("panicked"), "{handle}: {err}");
        assert_no_objects_left(pid);
    }
}

#[test]
fn worker_mode_rejects_bad_tasks() {
    let table = ["--blocks", "10", "--tuples-per-page", "10", "--quiet"];
    for extra in [
        &["--worker", "radix-1-00c0ffee00c0ffee/tree-0-1"][..],
        &["--worker", "garbage"],
        &[
            "--worker",
            "radix-1-00c0ffee00c0ffee/tree-0-1",
            "--worker-range",
            "0..101",
        ],
        &[
            "--worker",
            "radix-1-00c0ffee00c0ffee/tree-0-1",
            "--worker-range",
            "5..1",
        ],
        &[
            "--worker",
            "radix-1-00c0ffee00c0ffee/tree-0-1",
            "--worker-index",
            "7",
        ],
    ] {
        let mut args = table.to_vec();
        args.extend(extra);
        let (out, _) = vacuum_sim(&args);
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.starts_with("error: worker:"), "{extra:?}: {err}");
        assert!(!err.contains("panicked"), "{extra:?}: {err}");
        assert!(stdout(&out).is_empty(), "{extra:?}");
    }
    let (out, _) = vacuum_sim(&["--workers", "0"]);
    assert_eq!(out.status.code(), Some(2));
    let (out, _) = vacuum_sim(&["--workers", "65"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn remove_stale_shm_exits_0() {
    let _turn = serial();
    let (out, _) = vacuum_sim(&["--remove-stale-shm"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("no stale shared-memory objects") || text.contains("removed"),
        "{text}"
    );
}

/// A leader killed mid-run leaves its shared memory behind;
/// `--remove-stale-shm` removes it, and its orphaned workers stop.
#[test]
fn remove_stale_shm_cleans_up_after_a_killed_leader() {
    let _turn = serial();
    // The leader runs the local store first, then the shared one, which is
    // killed once its objects appear: long enough at 50,000 pages to be
    // caught, and four times quicker to reach than at full depth.
    let blocks = test_depth::pick("200000", "50000", "50000");
    let args = [
        "--blocks",
        blocks,
        "--tuples-per-page",
        "50",
        "--dead",
        "all",
        "--indexes",
        "random",
        "--mem",
        "64MiB",
        "--store",
        "tidstore",
        "--workers",
        "2",
        "--quiet",
    ];
    let mut leader = command(&args).spawn().expect("start vacuum-sim");
    let pid = leader.id();
    let started = Instant::now();
    let left = loop {
        let objects = objects_of(pid);
        if !objects.is_empty() {
            break objects;
        }
        if let Some(status) = leader.try_wait().unwrap() {
            panic!("the leader ended ({status}) before its shared store appeared");
        }
        assert!(started.elapsed() < PATIENCE, "no shared store appeared");
        std::thread::sleep(Duration::from_millis(2));
    };
    leader.kill().unwrap();
    leader.wait().unwrap();
    // Its objects are still there: nobody unlinked them.
    for name in &left {
        assert!(Path::new("/dev/shm").join(name).exists(), "{name}");
    }
    let (out, _) = vacuum_sim(&["--remove-stale-shm"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(&left[0]), "{text}");
    assert_no_objects_left(pid);
}
