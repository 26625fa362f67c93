//! A harness for test suites that run real child processes: the test
//! binary is started again with [`ROLE`] set, and the child plays that role
//! (attach by handle, read, hold a lock, ...).
//!
//! Such a suite is its own harness (`harness = false` in Cargo.toml): its
//! `main` asks [`child_role`] whether it is a child, and otherwise hands
//! its tests to [`run`], which runs them with a watchdog (a hang fails the
//! suite instead of stalling CI), honours `cargo test`'s name filters and
//! `--list`, and finally checks that no shared-memory object of this
//! process or of any child it started is left in `/dev/shm`.
//!
//! radix-core's and tidstore's `tests/shared_processes.rs` both include
//! this file.

#![allow(dead_code)] // each suite uses what it needs

use std::io::{BufRead, BufReader, Read};
use std::panic::catch_unwind;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The environment variable that makes this binary a child, naming its role.
pub const ROLE: &str = "RADIX_TEST_ROLE";

/// How long the whole suite may run before the watchdog fails it.
const WATCHDOG: Duration = Duration::from_secs(300);

/// Pids of every child started, for the final `/dev/shm` check.
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// The role and arguments when this process is a child.
pub fn child_role() -> Option<(String, Vec<String>)> {
    let role = std::env::var(ROLE).ok()?;
    Some((role, std::env::args().skip(1).collect()))
}

/// Starts this binary as a child in `role` with `args`, its output piped.
pub fn spawn(role: &str, args: &[String]) -> Child {
    let child = Command::new(std::env::current_exe().expect("current exe"))
        .env(ROLE, role)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning a child");
    CHILDREN.lock().unwrap().push(child.id());
    child
}

/// Reads the child's first stdout line.
pub fn first_line(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().expect("piped stdout"))
        .read_line(&mut line)
        .expect("reading a child's stdout");
    line.trim().to_string()
}

/// Waits for `child` at most `limit`; kills it and panics on timeout.
/// Returns whether it succeeded, its stdout and its stderr.
pub fn wait(mut child: Child, limit: Duration) -> (bool, String, String) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("waiting") {
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

/// Shared-memory objects of this process or its children left in
/// `/dev/shm` (this crate names every object `radix-<creator pid>-…`).
pub fn leftovers() -> Vec<String> {
    let mut pids = CHILDREN.lock().unwrap().clone();
    pids.push(std::process::id());
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| {
            pids.iter()
                .any(|pid| name.starts_with(&format!("radix-{pid}-")))
        })
        .collect()
}

/// Runs `tests` as `cargo test` would, then the leftover check; the exit
/// code says whether all passed.
pub fn run(tests: &[(&str, fn())]) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        for (name, _) in tests {
            println!("{name}: test");
        }
        return ExitCode::SUCCESS;
    }
    std::thread::spawn(|| {
        std::thread::sleep(WATCHDOG);
        eprintln!("a test hung for {WATCHDOG:?}; aborting the suite");
        std::process::exit(2);
    });
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let mut failed = Vec::new();
    let mut ran = 0;
    for &(name, test) in tests {
        if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        ran += 1;
        let start = Instant::now();
        let ok = catch_unwind(test).is_ok();
        let verdict = if ok { "ok" } else { "FAILED" };
        println!(
            "test {name} ... {verdict} ({:.1} s)",
            start.elapsed().as_secs_f64()
        );
        if !ok {
            failed.push(name);
        }
    }
    let left = leftovers();
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

/// Waits for a reader child, which reports "N reads (or passes), M while
/// the parent was writing, ...", and checks that it succeeded and that
/// some of its reads overlapped the writer. Its report.
pub fn wait_for_reader(child: Child) -> String {
    let (ok, out, err) = wait(child, Duration::from_secs(60));
    assert!(ok, "a reader failed:\n{err}");
    let partial: u64 = out
        .split(", ")
        .nth(1)
        .and_then(|p| p.split(' ').next()?.parse().ok())
        .expect("the reader's report");
    assert!(partial > 0, "a reader never overlapped the writer: {out}");
    out
}
