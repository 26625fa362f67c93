//! Range values in a shared area (`ranges: true, memory: shared`): runs of
//! equal values merge into ranges and split again as in local memory, and
//! a split the area refuses changes nothing a reader can see.
//!
//! A split makes a node256, 255 range cells and 255 copies of the value
//! (out-of-line leaves for the long values used here), one level at a time
//! down to the key. The engine reserves the nodes and cells and makes the
//! copies before it changes anything; a level refused below levels already
//! split merges those back. The refusal test sweeps the room left in the
//! area so that refusals land at every point of that sequence.

use std::collections::BTreeMap;

use radix_core::shm::{Area, AreaOptions, Backing, ShmError};
use radix_core::value::VarBytes;
use test_depth::pick;

radix_core::radix_tree! {
    /// `u32` keys to byte strings, with range values, in a shared area.
    struct Runs { key: u32, value: VarBytes, layout: varlen, memory: shared, ranges: true }
}

/// A 40-byte value (stored out of line, so a split's copies allocate)
/// distinct for each `tag`.
fn value(tag: u8) -> Box<VarBytes> {
    VarBytes::new(&[tag; 40]).expect("40 bytes")
}

fn tag_of(v: &VarBytes) -> u8 {
    v.as_bytes()[0]
}

fn area(limit: Option<usize>) -> Area {
    let options = AreaOptions::default()
        .backing(Backing::Heap)
        .init_segment_size(64 << 10)
        .max_segment_size(256 << 10)
        .max_segments(32);
    let options = match limit {
        None => options,
        Some(extra) => {
            let empty = Area::create(options.clone())
                .expect("a heap-backed area")
                .empty_size();
            options.size_limit(Some(empty + extra))
        }
    };
    Area::create(options).expect("a heap-backed area")
}

/// Checks the tree against `model`: `verify()`, the length, every pair.
#[track_caller]
fn check(tree: &Runs, model: &BTreeMap<u32, u8>) {
    let view = tree.read();
    view.verify().unwrap();
    assert_eq!(view.len(), model.len());
    assert!(
        view.iter()
            .map(|(k, v)| (k, tag_of(v)))
            .eq(model.iter().map(|(&k, &t)| (k, t)))
    );
}

#[test]
fn runs_merge_into_ranges_and_split_as_in_local_memory() {
    let area = area(None);
    let tree = Runs::create_in(&area).unwrap();
    let mut model = BTreeMap::new();
    let mut w = tree.write();
    // Two whole last-level nodes of one value, and a third of another:
    // each merges into a range as its last key arrives.
    for key in 0..3 * 256u32 {
        let tag = if key < 512 { 1 } else { 2 };
        w.insert(key, &value(tag)).unwrap();
        model.insert(key, tag);
    }
    let nodes_merged = w.stats().nodes();
    drop(w);
    check(&tree, &model);
    // One key of another value splits its range, a removal another's.
    let mut w = tree.write();
    assert!(w.insert(300, &value(7)).unwrap());
    model.insert(300, 7);
    assert!(w.remove(600).unwrap());
    model.remove(&600);
    assert!(w.stats().nodes() > nodes_merged, "the ranges split");
    drop(w);
    check(&tree, &model);
    // Put back, the nodes merge again.
    let mut w = tree.write();
    assert!(w.insert(300, &value(1)).unwrap());
    model.insert(300, 1);
    assert!(!w.insert(600, &value(2)).unwrap());
    model.insert(600, 2);
    assert_eq!(w.stats().nodes(), nodes_merged, "merged again");
    drop(w);
    check(&tree, &model);
    tree.write().clear();
    check(&tree, &BTreeMap::new());
    tree.destroy().unwrap();
}

#[test]
fn random_runs_and_keys_match_a_model() {
    let rounds = pick(12, 4, 1);
    let steps = pick(400, 150, 20);
    let mut rng = 0x5EED_5A4Eu64;
    let mut next = move || {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        rng >> 33
    };
    for _ in 0..rounds {
        let area = area(None);
        let tree = Runs::create_in(&area).unwrap();
        let mut model = BTreeMap::new();
        for _ in 0..steps {
            let mut w = tree.write();
            // Keys below 2^12: sixteen last-level nodes, one level above.
            let key = (next() as u32) & 0xFFF;
            let tag = (next() % 3) as u8;
            match next() % 8 {
                // A whole run of one value: it merges into a range.
                0 | 1 => {
                    let start = key & !0xFF;
                    for k in start..start + 256 {
                        w.insert(k, &value(tag)).unwrap();
                        model.insert(k, tag);
                    }
                }
                2..=4 => {
                    w.insert(key, &value(tag)).unwrap();
                    model.insert(key, tag);
                }
                _ => {
                    assert_eq!(w.remove(key).unwrap(), model.remove(&key).is_some());
                }
            }
            drop(w);
            check(&tree, &model);
        }
        tree.destroy().unwrap();
    }
}

/// A range of 65,536 keys (level 2) in an area with little room: an
/// insert of another value and a removal inside it need two levels of
/// splits. With the room swept from nothing up to enough, every refusal
/// must leave the same keys and values, `verify()` passing, and a later
/// attempt with more room must succeed.
#[test]
fn refused_splits_change_nothing() {
    const LEVEL2: u32 = 1 << 16;
    // Room after the range, in filler keys: each holds a value out of
    // line, so removing fillers frees room a leaf at a time.
    let step = pick(8, 64, 64);
    let area = area(Some(512 << 10));
    let tree = Runs::create_in(&area).unwrap();
    let mut model = BTreeMap::new();
    {
        let mut w = tree.write();
        for k in 0..LEVEL2 {
            w.insert(k, &value(1)).unwrap();
        }
        let stats = w.stats();
        assert_eq!(
            (stats.nodes(), stats.ranges),
            (1, 1),
            "a root holding one range"
        );
        // Filler keys far above the range until the area refuses one;
        // neighbours differ, so that no run of them merges.
        let mut filler = 1 << 24;
        while w.insert(filler, &value(3 + (filler & 1) as u8)).is_ok() {
            filler += 1;
        }
    }
    model.extend((0..LEVEL2).map(|k| (k, 1)));
    model.extend(
        tree.read()
            .range(1 << 24..)
            .map(|(k, v)| (k, tag_of(v)))
            .collect::<Vec<_>>(),
    );
    check(&tree, &model);
    let mut fillers: Vec<u32> = model.range(1 << 24..).map(|(&k, _)| k).collect();
    let (mut refused, mut inserted, mut removed) = (0, false, false);
    while !(inserted && removed) {
        let mut w = tree.write();
        if !inserted {
            match w.insert(0x1234, &value(9)) {
                Ok(had) => {
                    assert!(had);
                    model.insert(0x1234, 9);
                    inserted = true;
                }
                Err(ShmError::AreaFull { .. }) => refused += 1,
                Err(e) => panic!("{e}"),
            }
        } else {
            match w.remove(0x8765) {
                Ok(had) => {
                    assert!(had);
                    model.remove(&0x8765);
                    removed = true;
                }
                Err(ShmError::AreaFull { .. }) => refused += 1,
                Err(e) => panic!("{e}"),
            }
        }
        assert!(area.memory_usage() <= area.size_limit().unwrap());
        drop(w);
        check(&tree, &model);
        // More room: drop a few fillers (a removal that needs a smaller
        // node may be refused too; that filler stays).
        assert!(
            !fillers.is_empty(),
            "every filler went and the splits still do not fit"
        );
        let tail = fillers.split_off(fillers.len().saturating_sub(step));
        let mut w = tree.write();
        for k in tail {
            match w.remove(k) {
                Ok(had) => {
                    assert!(had);
                    model.remove(&k);
                }
                Err(ShmError::AreaFull { .. }) => fillers.insert(0, k),
                Err(e) => panic!("{e}"),
            }
        }
    }
    assert!(inserted && removed, "the splits fit once the fillers went");
    assert!(refused > 0, "the full area refused a split first");
    check(&tree, &model);
    tree.destroy().unwrap();
}
