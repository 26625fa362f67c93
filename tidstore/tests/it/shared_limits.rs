//! A shared store in a small area: runs of equal blocks merge into range
//! values and split again as in a local store, and a change the area
//! refuses (`TidStoreError::AreaFull`) leaves the store as it was, even
//! when it was refused half-way through splitting a range.
//!
//! The areas are heap-backed: the same layout, allocator and locks as
//! POSIX shared memory, without the file.

#![cfg(target_os = "linux")]

use std::collections::BTreeMap;

use radix_core::shm::{Area, Backing};
use test_depth::pick;
use tidstore::{SharedTidStore, SharedTidStoreWriter, Tid, TidStoreError};

use crate::common::{check, tids_of};

/// The store's budget, which sizes its area's segments.
const BUDGET: usize = 1 << 20;

/// The store's area: segments of 64 KiB growing to 256 KiB, at most
/// `room` bytes above its empty size.
fn area(room: usize) -> Area {
    let options = || {
        SharedTidStore::area_options(BUDGET)
            .backing(Backing::Heap)
            .init_segment_size(64 << 10)
            .max_segment_size(256 << 10)
            .max_segments(16)
    };
    let empty = Area::create(options()).unwrap().empty_size();
    Area::create(options().size_limit(Some(empty + room))).unwrap()
}

/// The offsets a pseudo-random draw picks: every entry form, and a few
/// lists that runs of blocks share.
fn offsets(draw: u64) -> Vec<u16> {
    match draw % 6 {
        0 => vec![1 + (draw >> 8) as u16 % 2000],
        1 => vec![3, 4, 5],
        2 => (10..=40).collect(),
        3 => (1..=2048).step_by(1 + (draw >> 16) as usize % 97).collect(),
        4 => vec![2, 64, 65, 300, 2048],
        _ => (1..=157).collect(),
    }
}

/// The store's contents as the model holds them.
fn contents(w: &SharedTidStoreWriter<'_>) -> BTreeMap<u32, Vec<u16>> {
    w.iter()
        .map(|b| (b.block(), b.offsets().collect()))
        .collect()
}

/// Random runs of equal blocks and single blocks in an area of 192 KiB
/// above its empty size, against a model. Each refusal is checked to have
/// changed nothing (the counts, the block's offsets, `verify()`, and every
/// 16th the whole store); the store is compared in full every 64 rounds.
#[test]
fn refused_changes_leave_ranges_and_blocks_as_they_were() {
    let area = area(192 << 10);
    let store = SharedTidStore::create_in(&area, BUDGET).unwrap();
    let rounds: u64 = pick(10_000, 2_000, 150);
    let mut model: BTreeMap<u32, Vec<u16>> = BTreeMap::new();
    let mut x = 0x5EED_5A4E_u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (mut refused, mut refused_in_runs, mut stored) = (0, 0, 0);
    let mut w = store.write();
    for round in 0..rounds {
        let draw = next();
        // Most calls land in the first 4,096 blocks, where runs of equal
        // blocks fill whole chunks of 256 and later calls split them.
        let (first, len) = if draw % 4 == 0 {
            ((next() % 4096) as u32, 1 + next() % 600)
        } else {
            ((next() % 6000) as u32, 1)
        };
        let list = offsets(next());
        for block in first..first + len as u32 {
            let before = (w.num_tids(), w.num_blocks(), w.memory_usage());
            match w.set_block_offsets(block, &list) {
                Ok(()) => {
                    model.insert(block, list.clone());
                    stored += 1;
                }
                Err(TidStoreError::AreaFull { .. }) => {
                    refused += 1;
                    if len > 1 {
                        refused_in_runs += 1;
                    }
                    let after = (w.num_tids(), w.num_blocks(), w.memory_usage());
                    assert_eq!((after.0, after.1), (before.0, before.1), "block {block}");
                    assert!(after.2 <= before.2, "a refusal grew the store");
                    let old = model.get(&block);
                    for o in [1, 2, 3, 64, 65, 157, 300, 2048] {
                        assert_eq!(
                            w.is_member(Tid::new(block, o)),
                            old.is_some_and(|offsets| offsets.contains(&o)),
                            "({block}, {o}) after a refused change"
                        );
                    }
                    w.verify().unwrap();
                    if refused % 16 == 1 {
                        assert_eq!(contents(&w), model, "after a refusal at block {block}");
                    }
                    break;
                }
                Err(e) => panic!("block {block}: {e}"),
            }
        }
        if round % 64 == 63 {
            assert_eq!(contents(&w), model, "round {round}");
            w.verify().unwrap();
        }
        // Now and then the vacuum's index pass ends: start again empty.
        if draw % 131 == 0 {
            w.clear();
            model.clear();
        }
    }
    check(&w, &tids_of(&model));
    assert!(
        stored > 0 && refused > 0,
        "stored {stored}, refused {refused}"
    );
    if rounds >= 2_000 {
        assert!(refused_in_runs > 0, "no run was refused half-way");
    }
    w.clear();
    drop(w);
    assert_eq!(area.memory_usage(), area.empty_size(), "a cleared store");
}
