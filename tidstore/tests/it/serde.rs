//! The `serde` feature: stores of every entry form written and read back
//! through JSON and CBOR, and refusals, each with an error naming the block
//! and the rule, of every input `set_block_offsets` would refuse or that
//! repeats a block.
//!
//! Runs with the `serde` feature: `cargo test --workspace --all-features`.

use tidstore::{MAX_OFFSET, TidStore};

/// A store's content.
fn contents(ts: &TidStore) -> Vec<(u32, Vec<u16>)> {
    ts.iter()
        .map(|b| (b.block(), b.offsets().collect()))
        .collect()
}

/// A store of `blocks`, replacing or insert-only.
fn store(max_bytes: usize, insert_only: bool, blocks: &[(u32, Vec<u16>)]) -> TidStore {
    let mut ts = if insert_only {
        TidStore::insert_only(max_bytes)
    } else {
        TidStore::new(max_bytes)
    };
    for (block, offsets) in blocks {
        ts.set_block_offsets(*block, offsets).unwrap();
    }
    ts.verify().unwrap();
    ts
}

/// Whether `back` holds what `ts` does, with its budget, and is sound.
fn assert_same(back: &TidStore, ts: &TidStore) {
    back.verify().unwrap();
    assert_eq!(contents(back), contents(ts));
    assert_eq!(back.max_bytes(), ts.max_bytes());
    assert_eq!(back.num_tids(), ts.num_tids());
    assert_eq!(back.num_blocks(), ts.num_blocks());
}

/// `ts` through JSON (both field orders) and CBOR.
fn round_trip(ts: &TidStore) {
    let json = serde_json::to_string(ts).unwrap();
    let back: TidStore = serde_json::from_str(&json).unwrap();
    assert_same(&back, ts);
    assert_eq!(serde_json::to_string(&back).unwrap(), json, "stable form");

    // `blocks` before `max_bytes`: read ahead, then stored.
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let swapped = format!(
        "{{\"blocks\":{},\"max_bytes\":{}}}",
        value["blocks"], value["max_bytes"]
    );
    let back: TidStore = serde_json::from_str(&swapped).unwrap();
    assert_same(&back, ts);

    let mut cbor = Vec::new();
    ciborium::into_writer(ts, &mut cbor).unwrap();
    let back: TidStore = ciborium::from_reader(cbor.as_slice()).unwrap();
    assert_same(&back, ts);
}

/// Blocks with every entry form: a few inline offsets, runs (short, long,
/// at both ends of the range), bitmaps (sparse, dense, wide), at the
/// smallest and largest block numbers.
fn every_form() -> Vec<(u32, Vec<u16>)> {
    vec![
        (0, vec![1]),
        (1, vec![1, 2048]),
        (2, vec![5, 9, 13]),
        (3, (1..=2048).collect()),
        (4, (100..=110).collect()),
        (5, (1..=2048).step_by(7).collect()),
        (6, vec![1, 2, 3, 4, 64, 65, 2000]),
        (1000, (2000..=2048).collect()),
        (1 << 20, vec![17]),
        (u32::MAX - 1, vec![3, 4]),
        (u32::MAX, vec![MAX_OFFSET]),
    ]
}

#[test]
fn the_form() {
    let ts = store(1 << 20, false, &[(7, vec![1, 2, 3]), (9, vec![5])]);
    let json = serde_json::to_string(&ts).unwrap();
    assert_eq!(
        json,
        r#"{"max_bytes":1048576,"blocks":[[7,[1,2,3]],[9,[5]]]}"#
    );
    let empty = serde_json::to_string(&TidStore::new(64)).unwrap();
    assert_eq!(empty, r#"{"max_bytes":64,"blocks":[]}"#);
}

#[test]
fn round_trips() {
    round_trip(&TidStore::new(0));
    round_trip(&TidStore::new(usize::MAX));
    for insert_only in [false, true] {
        round_trip(&store(64 << 20, insert_only, &every_form()));
        // Many blocks: a deep tree of dense block numbers, each form.
        let many: Vec<(u32, Vec<u16>)> = (0..5000u32)
            .map(|b| {
                let offsets = match b % 4 {
                    0 => vec![(b % 2048 + 1) as u16],
                    1 => (1..=(b % 300 + 2) as u16).collect(),
                    2 => (1..=2048).step_by((b % 50 + 2) as usize).collect(),
                    _ => vec![1, 3, 2048],
                };
                (b * 3 + b / 7 * 1000, offsets)
            })
            .collect();
        round_trip(&store(usize::MAX, insert_only, &many));
    }
}

/// A replacing store after replacements reads back with what it holds now.
#[test]
fn replaced_blocks() {
    let mut ts = store(1 << 20, true, &every_form());
    ts.set_block_offsets(3, &[1]).unwrap();
    ts.set_block_offsets(2, &(1..=500).collect::<Vec<_>>())
        .unwrap();
    round_trip(&ts);
}

/// A store past its budget reads back past it: the budget is kept, not
/// enforced.
#[test]
fn full_store() {
    let blocks: Vec<(u32, Vec<u16>)> = (0..2000u32).map(|b| (b * 5, vec![1, 9, 17, 400])).collect();
    let ts = store(1024, false, &blocks);
    assert!(ts.is_full());
    let back: TidStore = serde_json::from_str(&serde_json::to_string(&ts).unwrap()).unwrap();
    assert_same(&back, &ts);
    assert!(back.is_full());
}

/// The error from reading a store of `blocks`, which must be refused, in
/// both field orders (the stored and the read-ahead paths).
fn refused(blocks: &str) -> String {
    let first = format!(r#"{{"max_bytes":1000000,"blocks":{blocks}}}"#);
    let last = format!(r#"{{"blocks":{blocks},"max_bytes":1000000}}"#);
    let e = match serde_json::from_str::<TidStore>(&first) {
        Ok(ts) => panic!("{first} was accepted: {:?}", contents(&ts)),
        Err(e) => e.to_string(),
    };
    match serde_json::from_str::<TidStore>(&last) {
        Ok(ts) => panic!("{last} was accepted: {:?}", contents(&ts)),
        Err(e2) => {
            // The store's own refusals differ only in where they were
            // seen (a shape error may name the read-ahead list instead).
            if e.contains("invalid TID store") {
                let strip = |s: &str| s.split(" at line").next().unwrap().to_string();
                assert_eq!(strip(&e), strip(&e2.to_string()));
            }
        }
    }
    e
}

#[test]
fn offset_zero() {
    let e = refused("[[7,[0,1]]]");
    assert!(e.contains("block 7: offset 0 is outside 1..=2048"), "{e}");
}

#[test]
fn offset_above_the_maximum() {
    let e = refused("[[1,[1]],[8,[5,2049]]]");
    assert!(
        e.contains("block 8: offset 2049 is outside 1..=2048"),
        "{e}"
    );
    // Not even a u16: the format's integer error.
    let e = refused("[[8,[70000]]]");
    assert!(e.contains("expected u16"), "{e}");
    refused("[[8,[-1]]]");
}

#[test]
fn unsorted_offsets() {
    let e = refused("[[9,[3,2]]]");
    assert!(
        e.contains("block 9: offsets must be strictly ascending, but 2 follows 3"),
        "{e}"
    );
}

#[test]
fn duplicate_offsets() {
    let e = refused("[[9,[1,4,4,5]]]");
    assert!(
        e.contains("block 9: offsets must be strictly ascending, but 4 follows 4"),
        "{e}"
    );
}

#[test]
fn no_offsets() {
    let e = refused("[[12,[]]]");
    assert!(e.contains("block 12: no offsets given"), "{e}");
}

#[test]
fn duplicate_blocks() {
    let e = refused("[[3,[1]],[7,[1,2]],[7,[3]]]");
    assert!(e.contains("block 7 appears twice"), "{e}");
}

#[test]
fn descending_blocks() {
    let e = refused("[[3,[1]],[7,[1,2]],[5,[3]]]");
    assert!(
        e.contains("block 5 follows block 7 (blocks must be strictly ascending)"),
        "{e}"
    );
}

#[test]
fn block_numbers_that_do_not_fit() {
    let e = refused("[[4294967296,[1]]]");
    assert!(e.contains("expected u32"), "{e}");
    refused("[[-1,[1]]]");
}

#[test]
fn wrong_shapes() {
    for blocks in [
        "[[7]]",
        "[[7,[1],3]]",
        "[7]",
        "{}",
        "null",
        "[[7,1]]",
        r#"[["7",[1]]]"#,
    ] {
        refused(blocks);
    }
    for json in [
        r#"{"max_bytes":10}"#,
        r#"{"blocks":[]}"#,
        r#"{"max_bytes":10,"blocks":[],"max_bytes":10}"#,
        r#"{"max_bytes":10,"blocks":[],"blocks":[]}"#,
        r#"{"blocks":[],"blocks":[],"max_bytes":10}"#,
        r#"{"max_bytes":10,"blocks":[],"extra":1}"#,
        r#"{"max_bytes":-1,"blocks":[]}"#,
        "[10]",
        "[]",
        "7",
    ] {
        assert!(
            serde_json::from_str::<TidStore>(json).is_err(),
            "{json} was accepted"
        );
    }
    // The sequence form (what compact formats write) is accepted.
    let ts: TidStore = serde_json::from_str("[10,[[1,[2]]]]").unwrap();
    ts.verify().unwrap();
    assert_eq!(contents(&ts), [(1, vec![2])]);
}

/// Refusals through CBOR too, where the error arrives as a custom message.
#[test]
fn cbor_refusals() {
    use ciborium::Value;
    let store = |blocks: Vec<(u32, Vec<u16>)>| {
        let blocks = blocks
            .into_iter()
            .map(|(b, o)| {
                Value::Array(vec![
                    b.into(),
                    Value::Array(o.into_iter().map(Value::from).collect()),
                ])
            })
            .collect();
        let map = Value::Map(vec![
            ("max_bytes".into(), 4096.into()),
            ("blocks".into(), Value::Array(blocks)),
        ]);
        let mut cbor = Vec::new();
        ciborium::into_writer(&map, &mut cbor).unwrap();
        ciborium::from_reader::<TidStore, _>(cbor.as_slice()).map(|ts| contents(&ts))
    };
    assert_eq!(store(vec![(2, vec![1, 5])]).unwrap(), [(2, vec![1, 5])]);
    for (blocks, message) in [
        (vec![(2, vec![0])], "block 2: offset 0"),
        (
            vec![(2, vec![3, 1])],
            "block 2: offsets must be strictly ascending",
        ),
        (vec![(2, vec![1]), (2, vec![3])], "block 2 appears twice"),
        (vec![(2, vec![3000])], "block 2: offset 3000"),
    ] {
        let e = store(blocks).unwrap_err().to_string();
        assert!(e.contains(message), "{e}");
    }
}
