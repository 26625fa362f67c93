//! Set operations on whole stores against `BTreeSet<(u32, u16)>` models:
//! union, intersection, difference and the subset test, for every pair of
//! entry forms (inline, run, bitmap) meeting on a block, with `verify()`
//! (which checks each entry is in its smallest form) on every result.

use std::collections::{BTreeMap, BTreeSet};

use quickcheck::{Arbitrary, Gen, QuickCheck};
use tidstore::{TidStore, TidStoreError};

use crate::common::tids_of;

/// A store's contents: blocks drawn from a small range so that the two
/// sides of an operation meet often, each with offsets of one form.
#[derive(Clone, Debug)]
struct Blocks(BTreeMap<u32, Vec<u16>>);

fn offsets(g: &mut Gen) -> Vec<u16> {
    let mut offs: Vec<u16> = match u8::arbitrary(g) % 4 {
        // A run (a run or inline form).
        0 => {
            let a = u16::arbitrary(g) % 2048 + 1;
            let len = u16::arbitrary(g) % 150;
            (a..=(a + len).min(2048)).collect()
        }
        // A few offsets (inline form).
        1 => (0..1 + u8::arbitrary(g) % 3)
            .map(|_| u16::arbitrary(g) % 2048 + 1)
            .collect(),
        // Small offsets, often overlapping the other side's.
        2 => (0..u8::arbitrary(g) % 40)
            .map(|_| u16::arbitrary(g) % 130 + 1)
            .collect(),
        // Anything (bitmap form).
        _ => (0..u8::arbitrary(g) % 60)
            .map(|_| u16::arbitrary(g) % 2048 + 1)
            .collect(),
    };
    offs.sort_unstable();
    offs.dedup();
    if offs.is_empty() {
        offs.push(1);
    }
    offs
}

impl Arbitrary for Blocks {
    fn arbitrary(g: &mut Gen) -> Self {
        let n = usize::arbitrary(g) % 40;
        let base = if bool::arbitrary(g) { 0 } else { u32::MAX - 64 };
        // Blocks in one last-level node, or spread over one, two or three
        // levels, so that the operations' seeks skip whole subtrees.
        let spread = [0, 5, 11, 19][usize::arbitrary(g) % 4];
        Blocks(
            (0..n)
                .map(|_| {
                    (
                        base.wrapping_add((u32::arbitrary(g) % 64) << spread),
                        offsets(g),
                    )
                })
                .collect(),
        )
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        let blocks: Vec<_> = self.0.clone().into_iter().collect();
        Box::new(blocks.shrink().map(|b| Blocks(b.into_iter().collect())))
    }
}

fn store(blocks: &Blocks, max_bytes: usize) -> TidStore {
    let mut ts = TidStore::new(max_bytes);
    for (&block, offs) in &blocks.0 {
        ts.set_block_offsets(block, offs).unwrap();
    }
    ts
}

fn model(blocks: &Blocks) -> BTreeSet<(u32, u16)> {
    tids_of(&blocks.0)
}

fn contents(ts: &TidStore) -> BTreeSet<(u32, u16)> {
    ts.iter()
        .flat_map(|b| {
            let block = b.block();
            b.offsets().map(move |o| (block, o))
        })
        .collect()
}

fn check(a: Blocks, b: Blocks) -> bool {
    let (ma, mb) = (model(&a), model(&b));
    let (sa, sb) = (store(&a, 1 << 30), store(&b, 1 << 30));
    type Apply = fn(&mut TidStore, &TidStore) -> Result<(), TidStoreError>;
    let cases: [(Apply, BTreeSet<(u32, u16)>); 3] = [
        (TidStore::union_with, ma.union(&mb).copied().collect()),
        (
            TidStore::intersect_with,
            ma.intersection(&mb).copied().collect(),
        ),
        (
            TidStore::difference_with,
            ma.difference(&mb).copied().collect(),
        ),
    ];
    for (apply, expected) in cases {
        let mut result = store(&a, 1 << 30);
        apply(&mut result, &sb).unwrap();
        result.verify().unwrap();
        assert_eq!(contents(&result), expected);
        assert_eq!(result.num_tids(), expected.len() as u64);
    }
    assert_eq!(sa.is_subset(&sb), ma.is_subset(&mb));
    assert_eq!(sb.is_subset(&sa), mb.is_subset(&ma));
    // Against itself, and against the empty store.
    let empty = TidStore::new(1 << 20);
    assert!(sa.is_subset(&sa) && empty.is_subset(&sa));
    let mut same = store(&a, 1 << 30);
    same.intersect_with(&sa).unwrap();
    assert_eq!(contents(&same), ma);
    same.difference_with(&sa).unwrap();
    assert!(same.is_empty() && same.memory_usage() == 0);
    true
}

#[test]
fn set_operations_match_the_model() {
    QuickCheck::new()
        .tests(300)
        .quickcheck(check as fn(Blocks, Blocks) -> bool);
}

#[test]
fn an_operation_over_budget_changes_nothing() {
    let mut a = TidStore::new(64 << 10);
    let mut b = TidStore::new(64 << 20);
    for block in 0..4_000u32 {
        a.set_block_offsets(block * 2, &[1, 5, 9, 700]).unwrap();
        b.set_block_offsets(block * 2 + 1, &[2, 6, 10, 900])
            .unwrap();
    }
    let before = contents(&a);
    let (usage, tids) = (a.memory_usage(), a.num_tids());
    let err = a.union_with(&b).unwrap_err();
    assert!(matches!(
        err,
        TidStoreError::OverBudget { operation: "union", max_bytes, needed }
            if max_bytes == 64 << 10 && needed > max_bytes
    ));
    assert!(err.to_string().contains("union"));
    a.verify().unwrap();
    assert_eq!(contents(&a), before);
    assert_eq!((a.memory_usage(), a.num_tids()), (usage, tids));
}

#[test]
fn runs_combine_as_runs_and_results_take_their_smallest_form() {
    let mut a = TidStore::new(1 << 20);
    a.set_block_offsets(0, &(10..=20).collect::<Vec<_>>())
        .unwrap();
    a.set_block_offsets(1, &(10..=20).collect::<Vec<_>>())
        .unwrap();
    a.set_block_offsets(2, &[1, 3, 5, 7, 9]).unwrap();
    let mut b = TidStore::new(1 << 20);
    b.set_block_offsets(0, &(21..=40).collect::<Vec<_>>())
        .unwrap();
    b.set_block_offsets(1, &(12..=19).collect::<Vec<_>>())
        .unwrap();
    b.set_block_offsets(2, &[3, 5, 7]).unwrap();
    let mut u = TidStore::new(1 << 20);
    u.union_with(&a).unwrap();
    u.union_with(&b).unwrap();
    u.verify().unwrap();
    let mut d = TidStore::new(1 << 20);
    d.union_with(&a).unwrap();
    d.difference_with(&b).unwrap();
    d.verify().unwrap();
    // Block 1 leaves the two pieces 10..=11 and 20: a bitmap of 3 offsets
    // must become inline; block 2 leaves 1 and 9: inline.
    let blocks: Vec<(u32, Vec<u16>)> = d
        .iter()
        .map(|b| (b.block(), b.offsets().collect()))
        .collect();
    assert_eq!(
        blocks,
        [
            (0, (10..=20).collect()),
            (1, vec![10, 11, 20]),
            (2, vec![1, 9])
        ]
    );
}
