//! The command line: flags, errors, and the JSON output's fields.

use std::process::{Command, Output};

use vacuum_sim::parse_size;
use vacuum_sim::scenario::SizeError;

fn vacuum_sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vacuum-sim"))
        .args(args)
        .output()
        .expect("run vacuum-sim")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

const SMALL: [&str; 9] = [
    "--blocks",
    "300",
    "--tuples-per-page",
    "60",
    "--dead",
    "every:2",
    "--mem",
    "3600B",
    "--quiet",
];

#[test]
fn mem_sizes() {
    assert_eq!(parse_size("64MiB"), Ok(64 << 20));
    assert_eq!(parse_size("64 mib"), Ok(64 << 20));
    assert_eq!(parse_size("32MB"), Ok(32_000_000));
    assert_eq!(parse_size("1GiB"), Ok(1 << 30));
    assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
    assert_eq!(parse_size("512KiB"), Ok(512 << 10));
    assert_eq!(parse_size("512KB"), Ok(512_000));
    assert_eq!(parse_size("100B"), Ok(100));
    assert_eq!(parse_size("100"), Ok(100));
    assert_eq!(parse_size("0.25GiB"), Ok(1 << 28));
    assert!(matches!(parse_size("64XB"), Err(SizeError::BadUnit { .. })));
    assert!(matches!(parse_size("lots"), Err(SizeError::BadNumber(_))));
    assert!(matches!(parse_size("0"), Err(SizeError::Zero(_))));
    assert_eq!(parse_size("  "), Err(SizeError::Empty));

    let out = vacuum_sim(&["--mem", "64 furlongs"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("unknown unit `furlongs`"), "{err}");
    assert!(err.contains("--mem"), "{err}");
}

#[test]
fn json_lines_have_the_documented_fields() {
    let mut args = SMALL.to_vec();
    args.extend(["--indexes", "correlated,random", "--json"]);
    let out = vacuum_sim(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    for (line, store) in lines.iter().zip(["tidstore", "array"]) {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        let object = value.as_object().unwrap();
        for field in [
            "store",
            "scenario",
            "index_passes",
            "peak_bytes",
            "bytes_per_dead_tid",
            "dead_tids",
            "found",
            "heap_scan_ms",
            "index_ms",
            "heap_vacuum_ms",
            "total_ms",
        ] {
            assert!(object.contains_key(field), "{field} missing in {line}");
        }
        assert_eq!(object["store"], store);
        assert_eq!(object["scenario"], "custom");
        assert_eq!(object["dead_tids"], 9_000);
        assert_eq!(object["found"], 18_000);
        assert!(object["total_ms"].is_f64());
        assert!(object["bytes_per_dead_tid"].is_f64());
    }
    // 3,600 bytes = 600 TIDs = 20 pages of 30: ceil(9,000 × 6 / 3,600).
    let array: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(array["index_passes"], 15);
    assert_eq!(array["peak_bytes"], 3_600);
}

#[test]
fn store_flag_picks_the_stores() {
    let mut args = SMALL.to_vec();
    args.extend(["--store", "array", "--json"]);
    let out = vacuum_sim(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1);
    assert!(text.contains("\"store\":\"array\""), "{text}");

    let out = vacuum_sim(&["--store", "btree"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn table_shows_both_stores_and_the_check() {
    let out = vacuum_sim(&SMALL);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("tidstore"), "{text}");
    assert!(text.contains("array"), "{text}");
    assert!(text.contains("index passes"), "{text}");
    assert!(text.contains("found"), "{text}");
    assert!(text.contains("custom shape: VAC-1/10 with"), "{text}");
    let check = text.lines().find(|l| l.starts_with("check")).unwrap();
    assert_eq!(check.matches("ok").count(), 2, "{check}");
}

#[test]
fn plain_progress_lines_when_not_a_terminal() {
    let args: Vec<&str> = SMALL.iter().copied().filter(|a| *a != "--quiet").collect();
    let out = vacuum_sim(&args);
    assert!(out.status.success());
    let err = stderr(&out);
    assert!(err.contains("[array] pass 1 heap scan"), "{err}");
    assert!(err.contains("index 1/2 (correlated)"), "{err}");
}

#[test]
fn list_and_bad_input() {
    let out = vacuum_sim(&["--list"]);
    assert!(out.status.success());
    let text = stdout(&out);
    for id in ["VAC-1/10:", "VAC-1:", "VAC-2:", "VAC-3:"] {
        assert!(text.contains(id), "{text}");
    }
    assert!(text.contains("6,369,427 pages"), "{text}");

    for args in [
        &["--scenario", "VAC-9"][..],
        &["--dead", "some"],
        &["--indexes", "hash"],
        &["--tuples-per-page", "0"],
        &["--tuples-per-page", "4000"],
        &["--blocks", "0"],
    ] {
        let out = vacuum_sim(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains("error"), "{args:?}");
        assert!(!stderr(&out).contains("panicked"), "{args:?}");
    }
    let out = vacuum_sim(&["--blocks", "10", "--mem", "100B", "--store", "array"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("raise --mem"), "{}", stderr(&out));
}
