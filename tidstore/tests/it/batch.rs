//! `is_member_each` gives `is_member`'s answers, on stores large enough to
//! be pipelined (over 1 MiB) and small ones, local and shared, for probes
//! in random order, in ascending order, and beyond the last block.

use radix_core::shm::{Area, Backing};
use tidstore::{SharedTidStore, Tid, TidStore};

/// Blocks `0..blocks` in runs of 1,000 present and 1,000 absent (so that
/// walks end above the last level about half the time), each with a
/// block-dependent form: inline offsets, a run, or a bitmap.
fn dead_offsets(blocks: u32) -> impl Iterator<Item = (u32, Vec<u16>)> {
    (0..blocks).filter(|b| b / 1000 % 2 == 0).map(|b| {
        let offsets = match b % 3 {
            0 => vec![1 + (b % 50) as u16, 100],
            1 => (5..=(5 + (b % 20) as u16)).collect(),
            _ => (1..=40).map(|i| i * 7 + (b % 5) as u16).collect(),
        };
        (b, offsets)
    })
}

/// Probes: every block's likely and unlikely offsets in ascending order,
/// then the same TIDs scrambled, then blocks past the end.
fn probes(blocks: u32) -> Vec<Tid> {
    let ascending: Vec<Tid> = (0..blocks)
        .flat_map(|b| [1, 5, 8, 100, 287].map(|o| Tid::new(b, o)))
        .collect();
    let mut scrambled = ascending.clone();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    for i in (1..scrambled.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        scrambled.swap(i, (state % (i as u64 + 1)) as usize);
    }
    let beyond = [blocks, blocks + 1, 1 << 24, u32::MAX].map(|b| Tid::new(b, 100));
    ascending
        .into_iter()
        .chain(scrambled)
        .chain(beyond)
        .collect()
}

fn check(store: &TidStore, probes: &[Tid]) {
    let mut answers = Vec::with_capacity(probes.len());
    store.is_member_each(probes, |tid, member| answers.push((tid, member)));
    let expected: Vec<(Tid, bool)> = probes.iter().map(|&t| (t, store.is_member(t))).collect();
    assert_eq!(answers, expected);
}

/// Whether the probes found members and non-members both.
fn mixed(store: &TidStore, probes: &[Tid]) -> bool {
    probes.iter().any(|&t| store.is_member(t)) && probes.iter().any(|&t| !store.is_member(t))
}

#[test]
fn a_large_store_answers_as_is_member() {
    let mut store = TidStore::insert_only(1 << 30);
    for (block, offsets) in dead_offsets(400_000) {
        store.set_block_offsets(block, &offsets).unwrap();
    }
    assert!(store.memory_usage() > 1 << 20, "pipelined only over 1 MiB");
    let probes = probes(400_000);
    assert!(mixed(&store, &probes));
    check(&store, &probes);
}

#[test]
fn a_small_store_answers_as_is_member() {
    let mut store = TidStore::new(1 << 30);
    for (block, offsets) in dead_offsets(5_000) {
        store.set_block_offsets(block, &offsets).unwrap();
    }
    let probes = probes(5_000);
    assert!(mixed(&store, &probes));
    check(&store, &probes);
    store.is_member_each(&[], |_, _| panic!("no TIDs, no answers"));
    check(&TidStore::new(1 << 20), &[Tid::new(0, 1), Tid::new(7, 7)]);
}

#[test]
fn a_shared_store_answers_as_is_member() {
    let options = SharedTidStore::area_options(256 << 20)
        .backing(Backing::Heap)
        .max_segments(8);
    let area = Area::create(options).unwrap();
    let store = SharedTidStore::create_in(&area, 256 << 20).unwrap();
    {
        let mut writer = store.write();
        for (block, offsets) in dead_offsets(300_000) {
            writer.set_block_offsets(block, &offsets).unwrap();
        }
    }
    let reader = store.read();
    assert!(reader.memory_usage() > 1 << 20);
    let probes = probes(300_000);
    let mut answers = Vec::with_capacity(probes.len());
    reader.is_member_each(&probes, |tid, member| answers.push((tid, member)));
    let expected: Vec<(Tid, bool)> = probes.iter().map(|&t| (t, reader.is_member(t))).collect();
    assert_eq!(answers, expected);
    drop(reader);
    store.destroy().unwrap();
}
