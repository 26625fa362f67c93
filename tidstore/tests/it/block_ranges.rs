//! Block ranges: runs of blocks with equal dead offsets stored once, as
//! range values, and every query seeing the same TIDs as before.

use std::collections::BTreeSet;

use test_depth::pick;
use tidstore::{Tid, TidStore};

use crate::common::check;

/// A table whose every tuple is dead, as after `DELETE` of every row
/// (VAC-1's shape at a smaller size): one run entry per block, all equal.
#[test]
fn a_fully_dead_table_takes_a_few_nodes() {
    let blocks: u32 = pick(2_000_000, 300_000, 3_000);
    let dead: Vec<u16> = (1..=157).collect();
    let mut ts = TidStore::insert_only(64 << 20);
    for block in 0..blocks {
        ts.set_block_offsets(block, &dead).unwrap();
    }
    ts.verify().unwrap();
    assert_eq!(ts.num_blocks(), blocks as usize);
    assert_eq!(ts.num_tids(), u64::from(blocks) * 157);
    // Whole aligned blocks of 65,536 and 256 are one value each; the
    // store is a few nodes, whatever the table's size.
    assert!(ts.memory_usage() <= 64 << 10, "{}", ts.memory_usage());
    for tid in [
        Tid::new(0, 1),
        Tid::new(blocks / 2, 157),
        Tid::new(blocks - 1, 80),
    ] {
        assert!(ts.is_member(tid), "{tid:?}");
    }
    assert!(!ts.is_member(Tid::new(blocks / 3, 158)));
    assert!(!ts.is_member(Tid::new(blocks, 1)));
    // Batched and ordered lookups agree.
    let probes: Vec<Tid> = (0..2000u32)
        .map(|i| {
            Tid::new(
                i.wrapping_mul(2_654_435_761) % (blocks + 10),
                1 + (i % 160) as u16,
            )
        })
        .collect();
    let mut batched = Vec::new();
    ts.is_member_each(&probes, |tid, dead| batched.push((tid, dead)));
    let mut ordered = ts.ordered_lookup();
    let mut sorted = probes.clone();
    sorted.sort();
    for &tid in &sorted {
        assert_eq!(ordered.is_member(tid), ts.is_member(tid), "{tid:?}");
    }
    assert!(batched.iter().all(|&(tid, dead)| dead == ts.is_member(tid)));
    // The heap pass sees every block once, in order.
    let mut count = 0u32;
    for (i, block) in ts.iter().enumerate() {
        assert_eq!(block.block(), i as u32);
        assert_eq!(block.len(), 157);
        count += 1;
    }
    assert_eq!(count, blocks);
}

#[test]
fn a_run_that_changes_splits_and_merges_back() {
    let blocks = 1024u32;
    let dead: Vec<u16> = (1..=20).collect();
    let mut ts = TidStore::new(16 << 20);
    let mut model = BTreeSet::new();
    for block in 0..blocks {
        ts.set_block_offsets(block, &dead).unwrap();
        model.extend(dead.iter().map(|&o| (block, o)));
    }
    // One block in the middle of a run gets other offsets.
    ts.set_block_offsets(300, &[2, 9]).unwrap();
    model.retain(|&(b, _)| b != 300);
    model.extend([(300, 2), (300, 9)]);
    check(&ts, &model);
    assert!(!ts.is_member(Tid::new(300, 3)) && ts.is_member(Tid::new(301, 3)));
    // Back to the run's offsets: the node is one value again and merges
    // back into a range, with the same TIDs.
    ts.set_block_offsets(300, &dead).unwrap();
    model.retain(|&(b, _)| b != 300);
    model.extend(dead.iter().map(|&o| (300, o)));
    check(&ts, &model);
}

#[test]
fn set_operations_see_the_same_tids_through_ranges() {
    let dead: Vec<u16> = (1..=5).collect();
    let build = |every: u32, offsets: &[u16]| {
        let mut ts = TidStore::new(16 << 20);
        let mut model = BTreeSet::new();
        for block in (0..2048u32).step_by(every as usize) {
            ts.set_block_offsets(block, offsets).unwrap();
            model.extend(offsets.iter().map(|&o| (block, o)));
        }
        (ts, model)
    };
    let (b, mb) = build(3, &[5, 6]);
    let (mut union, ma) = build(1, &dead);
    union.union_with(&b).unwrap();
    check(&union, &ma.union(&mb).copied().collect());
    let (mut meet, _) = build(1, &dead);
    meet.intersect_with(&b).unwrap();
    check(&meet, &ma.intersection(&mb).copied().collect());
    let (mut minus, _) = build(1, &dead);
    minus.difference_with(&b).unwrap();
    check(&minus, &ma.difference(&mb).copied().collect());
    let (a, _) = build(1, &dead);
    assert!(a.is_subset(&union) && !union.is_subset(&a));
}
