//! PostgreSQL's TID store tests (test_tidstore), ported, for both
//! constructors.

use std::collections::BTreeSet;

use crate::common::check;
use tidstore::{MAX_OFFSET, Tid, TidStore, TidStoreError};

fn stores() -> [(&'static str, TidStore); 2] {
    [
        ("new", TidStore::new(64 << 20)),
        ("insert_only", TidStore::insert_only(64 << 20)),
    ]
}

#[test]
fn empty_store() {
    for (name, ts) in stores() {
        assert!(ts.is_empty(), "{name}");
        assert_eq!(ts.num_tids(), 0);
        assert_eq!(ts.iter().count(), 0);
        assert!(!ts.is_member(Tid::new(0, 1)));
        assert!(!ts.is_member(Tid::new(u32::MAX, MAX_OFFSET)));
        assert!(!ts.is_full());
        assert_eq!(ts.memory_usage(), 0);
    }
    // An empty store is never full for a budget of 1 MiB or more.
    for max in [1 << 20, (1 << 20) + 1, 8 << 20, 1 << 30] {
        assert!(!TidStore::new(max).is_full());
        assert!(!TidStore::insert_only(max).is_full());
    }
}

#[test]
fn boundary_blocks_with_boundary_offsets() {
    let blocks = [0u32, 1, (1 << 31) - 1, u32::MAX - 1, u32::MAX];
    let offsets = [1u16, 2, 256, 511, 512];
    for (name, mut ts) in stores() {
        let mut model = BTreeSet::new();
        for &b in &blocks {
            ts.set_block_offsets(b, &offsets).unwrap();
            model.extend(offsets.iter().map(|&o| (b, o)));
            check(&ts, &model);
        }
        assert_eq!(ts.num_blocks(), 5, "{name}");
        assert!(!ts.is_member(Tid::new(2, 1)));
        assert!(!ts.is_member(Tid::new(1 << 31, 1)));
    }
}

#[test]
fn header_embedded_entries_cost_no_allocation() {
    for (name, mut ts) in stores() {
        let mut model = BTreeSet::new();
        for b in 0..1000u32 {
            let offs: Vec<u16> = (0..(b % 3 + 1) as u16).map(|i| 1 + i * 700).collect();
            ts.set_block_offsets(b, &offs).unwrap();
            model.extend(offs.iter().map(|&o| (b, o)));
        }
        check(&ts, &model);
        // Inline entries allocate nothing: the store holds only node slab
        // blocks (one per size class the tree has used), exactly as much as
        // a store of one offset per block. (Neighbours' offsets differ, so
        // that no run of equal entries becomes a range.)
        let mut single = TidStore::new(64 << 20);
        for b in 0..1000u32 {
            single.set_block_offsets(b, &[1 + (b % 2) as u16]).unwrap();
        }
        assert_eq!(ts.memory_usage(), single.memory_usage(), "{name}");
        assert!(
            ts.memory_usage() <= 256 << 10,
            "{name}: {}",
            ts.memory_usage()
        );
    }
}

#[test]
fn random_sorted_offsets_on_100_blocks() {
    let mut rng = 0x1234_5678_9abc_def0u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for (_, mut ts) in stores() {
        let mut model = BTreeSet::new();
        for i in 0..100u32 {
            let block = (next() as u32) | (i << 24);
            let mut offs: Vec<u16> = (0..next() % 300 + 1)
                .map(|_| (next() % MAX_OFFSET as u64) as u16 + 1)
                .collect();
            offs.sort_unstable();
            offs.dedup();
            model.retain(|&(b, _)| b != block);
            ts.set_block_offsets(block, &offs).unwrap();
            model.extend(offs.iter().map(|&o| (block, o)));
        }
        check(&ts, &model);
    }
}

#[test]
fn invalid_offsets_are_rejected_and_change_nothing() {
    for (_, mut ts) in stores() {
        ts.set_block_offsets(5, &[1, 2, 3, 4, 100]).unwrap();
        let before: Vec<u16> = ts.iter().next().unwrap().offsets().collect();
        let usage = ts.memory_usage();
        assert_eq!(
            ts.set_block_offsets(5, &[0]),
            Err(TidStoreError::OffsetOutOfRange {
                block: 5,
                offset: 0
            })
        );
        assert_eq!(
            ts.set_block_offsets(5, &[1, 2049]),
            Err(TidStoreError::OffsetOutOfRange {
                block: 5,
                offset: 2049
            })
        );
        assert_eq!(
            ts.set_block_offsets(5, &[3, 3]),
            Err(TidStoreError::NotAscending {
                block: 5,
                previous: 3,
                offset: 3
            })
        );
        assert_eq!(
            ts.set_block_offsets(6, &[9, 4]),
            Err(TidStoreError::NotAscending {
                block: 6,
                previous: 9,
                offset: 4
            })
        );
        assert_eq!(
            ts.set_block_offsets(7, &[]),
            Err(TidStoreError::NoOffsets { block: 7 })
        );
        assert_eq!(
            ts.iter().next().unwrap().offsets().collect::<Vec<_>>(),
            before
        );
        assert_eq!(ts.num_blocks(), 1);
        assert_eq!(ts.num_tids(), 5);
        assert_eq!(ts.memory_usage(), usage);
        let message = ts.set_block_offsets(1, &[0]).unwrap_err().to_string();
        assert!(
            message.contains("offset 0") && message.contains("1..=2048"),
            "{message}"
        );
    }
}

#[test]
fn replacement_chain_up_and_down() {
    let chain: [&[u16]; 5] = [&[1], &[1, 2], &[1, 2, 3], &[1, 2, 3, 4], &[1, 2, 3, 4, 100]];
    for (_, mut ts) in stores() {
        let steps = chain.iter().chain(chain.iter().rev().skip(1));
        for (i, &offs) in steps.enumerate() {
            for block in [0u32, 77, u32::MAX] {
                ts.set_block_offsets(block, offs).unwrap();
            }
            let model: BTreeSet<(u32, u16)> = [0u32, 77, u32::MAX]
                .iter()
                .flat_map(|&b| offs.iter().map(move |&o| (b, o)))
                .collect();
            check(&ts, &model);
            assert_eq!(ts.num_tids(), 3 * offs.len() as u64, "step {i}");
        }
    }
}

#[test]
fn memory_limit_is_reported_once_passed() {
    for max in [1usize << 20, 4 << 20] {
        for mut ts in [TidStore::new(max), TidStore::insert_only(max)] {
            // A bitmap entry, different on neighbouring blocks (equal
            // ones would merge into ranges and never fill the store).
            let offs =
                |block: u32| -> Vec<u16> { (1 + (block % 2) as u16..=300).step_by(3).collect() };
            let mut block = 0u32;
            while !ts.is_full() {
                assert!(ts.memory_usage() <= max);
                ts.set_block_offsets(block, &offs(block)).unwrap();
                block += 1;
                assert!(block < 10_000_000, "never became full");
            }
            assert!(ts.memory_usage() > max);
            // No single allocation overshoots the budget by more than 1/16.
            assert!(
                ts.memory_usage() <= max + max / 16 + 8192,
                "{}",
                ts.memory_usage()
            );
            ts.clear();
            assert_eq!(ts.memory_usage(), 0);
            assert!(!ts.is_full());
        }
    }
}

#[test]
fn collect_groups_by_block() {
    let tids = [
        Tid::new(9, 3),
        Tid::new(2, 1),
        Tid::new(9, 1),
        Tid::new(2, 1),
        Tid::new(9, 2),
    ];
    let ts: TidStore = tids.into_iter().collect();
    assert_eq!(ts.num_blocks(), 2);
    assert_eq!(ts.num_tids(), 4);
    let blocks: Vec<(u32, Vec<u16>)> = ts
        .iter()
        .map(|b| (b.block(), b.offsets().collect()))
        .collect();
    assert_eq!(blocks, [(2, vec![1]), (9, vec![1, 2, 3])]);
    assert!(format!("{ts:?}").contains("tids: 4"));
}

#[test]
fn contiguous_runs_are_stored_inline() {
    for (name, mut ts) in stores() {
        for b in 0..10_000u32 {
            ts.set_block_offsets(b, &(1..=157).collect::<Vec<_>>())
                .unwrap();
        }
        assert_eq!(ts.num_tids(), 1_570_000);
        // Tree nodes only (8-byte slots in dense node256s, about 8.2 bytes
        // per block) plus partly used slab blocks; no entry allocations.
        assert!(
            ts.memory_usage() < 10 * 10_000 + (256 << 10),
            "{name}: {}",
            ts.memory_usage()
        );
        assert_eq!(ts.iter().next().map(|b| b.len()), Some(157));
        assert!(ts.is_member(Tid::new(9_999, 157)));
        assert!(!ts.is_member(Tid::new(9_999, 158)));
    }
}
