//! Concurrent trees in heap-backed areas: the model, threads through
//! separate handles, refused writes, attach checks, and dead processes
//! simulated by planting their pids. Small enough for Miri, whose race
//! detector checks the reads against the writes.

use std::collections::BTreeMap;

use super::*;
use crate::concurrent::space::Space;
use crate::config::Compression;
use crate::node::SizeClasses;
use crate::shm::{AreaOptions, Backing, SharedMemory};
use crate::value::Embedded;

macro_rules! configs {
    ($($name:ident: $compression:ident;)*) => {$(
        enum $name {}
        impl Config for $name {
            type Key = u64;
            type Layout = Embedded<u64>;
            type Memory = SharedMemory;
            const SIZE_CLASSES: SizeClasses = SizeClasses::DEFAULT;
            const DELETE: bool = true;
            const COMPRESSION: Compression = Compression::$compression;
        }
    )*};
}

configs! {
    RowexConfig: None;
    RowexFullConfig: Full;
}

/// The tree of these tests.
type Rowex = SharedConcurrentTree<RowexConfig>;
/// Cells and path compression.
type RowexFull = SharedConcurrentTree<RowexFullConfig>;
/// The same configuration, without concurrency.
type Plain = crate::shm::SharedTree<RowexConfig>;

fn n(normal: u64, miri: u64) -> u64 {
    if cfg!(miri) { miri } else { normal }
}

fn heap_area(limit: Option<usize>) -> Area {
    Area::create(
        AreaOptions::default()
            .backing(Backing::Heap)
            .init_segment_size(64 << 10)
            .max_segment_size(1 << 20)
            .max_segments(32)
            .size_limit(limit),
    )
    .unwrap()
}

/// A pid that belonged to a process which has exited and been reaped.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

fn scramble(i: u64) -> u64 {
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 24
}

fn model_run<C: Config<Key = u64>>(tree: &ConcurrentTree<C, SharedSpace>)
where
    C::Layout: for<'a> ConcurrentLayout<Value = u64, Input<'a> = u64, Old = Option<u64>>,
{
    let mut model = BTreeMap::new();
    for i in 0..n(3000, 60) {
        let key = scramble(i) % n(5000, 300);
        if i % 3 == 2 {
            assert_eq!(tree.remove(key).unwrap(), model.remove(&key));
        } else {
            assert_eq!(tree.insert(key, i).unwrap(), model.insert(key, i));
        }
    }
    assert!(tree.iter().eq(model.iter().map(|(&k, &v)| (k, v))));
    for key in 0..n(5000, 300) {
        assert_eq!(tree.get(key), model.get(&key).copied());
    }
}

#[test]
fn a_shared_concurrent_tree_matches_a_model() {
    let area = heap_area(None);
    let tree = Rowex::create_in(&area).unwrap();
    model_run(&tree);
    let full = RowexFull::create_in(&area).unwrap();
    model_run(&full);
    // A second handle sees the same tree.
    let other = Rowex::attach(&area, tree.handle()).unwrap();
    assert!(other.iter().eq(tree.iter()));
    drop(other);
    full.destroy().unwrap();
    tree.destroy().unwrap();
}

/// The shortcut past a chain (`concurrent/shortcut.rs`) is an area offset
/// here: set in one handle, it serves another handle's lookups, moves as
/// its node grows, and is cleared when the small keys go.
#[test]
fn a_second_handle_looks_up_through_the_shortcut() {
    let area = heap_area(None);
    let tree = Rowex::create_in(&area).unwrap();
    let small = n(1000, 20);
    // The chain's bottom node, one chunk above the old root.
    let at = if small > 256 { 16 } else { 8 };
    for key in 0..small {
        tree.insert(key, key + 1).unwrap();
    }
    tree.insert(1 << 40, 0).unwrap();
    let anchor = tree.space.anchor();
    assert!(!anchor.shortcut().load(Relaxed).is_null());
    let other = Rowex::attach(&area, tree.handle()).unwrap();
    // The chain's bottom grows to a node of 64 (16 under Miri) and back.
    let chunks = n(40, 6);
    for chunk in 1..chunks {
        tree.insert(chunk << at, chunk).unwrap();
    }
    for key in 0..small {
        assert_eq!(other.get(key), Some(key + 1));
    }
    for chunk in 1..chunks {
        assert_eq!(other.get(chunk << at), Some(chunk));
        assert_eq!(tree.remove(chunk << at).unwrap(), Some(chunk));
    }
    assert!(!anchor.shortcut().load(Relaxed).is_null());
    for key in 0..small {
        assert_eq!(other.get(key), Some(key + 1));
        assert_eq!(tree.remove(key).unwrap(), Some(key + 1));
        assert_eq!(other.get(key), None);
    }
    assert!(anchor.shortcut().load(Relaxed).is_null());
    assert_eq!(other.get(1 << 40), Some(0));
    drop(other);
    tree.destroy().unwrap();
}

#[test]
fn threads_on_separate_handles_write_disjoint_ranges_and_read() {
    let area = heap_area(None);
    let tree = Rowex::create_in(&area).unwrap();
    let per = n(2000, 24);
    std::thread::scope(|s| {
        for writer in 0..2u64 {
            let area = &area;
            let handle = tree.handle();
            s.spawn(move || {
                let mine = Rowex::attach(area, handle).unwrap();
                for i in 0..per {
                    let key = writer << 40 | scramble(i);
                    mine.insert(key, key + 1).unwrap();
                    if i % 4 == 3 {
                        mine.remove(key).unwrap();
                    }
                }
            });
        }
        let reader = Rowex::attach(&area, tree.handle()).unwrap();
        s.spawn(move || {
            for _ in 0..n(20, 2) {
                // Every key seen has its right value, in order.
                let mut last = None;
                for (key, value) in reader.iter() {
                    assert_eq!(value, key + 1);
                    assert!(last < Some(key));
                    last = Some(key);
                }
            }
        });
    });
    let mut model = BTreeMap::new();
    for writer in 0..2u64 {
        for i in 0..per {
            let key = writer << 40 | scramble(i);
            if i % 4 != 3 {
                model.insert(key, key + 1);
            }
        }
    }
    assert!(tree.iter().eq(model.into_iter()));
    tree.destroy().unwrap();
}

#[test]
#[cfg_attr(
    miri,
    ignore = "fills a 256 KiB area key by key; the refused-insert test checks the same refusal under Miri"
)]
fn a_full_area_refuses_writes_and_keeps_every_key() {
    let area = heap_area(Some(256 << 10));
    let tree = Rowex::create_in(&area).unwrap();
    let mut stored = Vec::new();
    let (refused, error) = loop {
        let key = scramble(stored.len() as u64);
        match tree.insert(key, key) {
            Ok(_) => stored.push(key),
            Err(e) => break (key, e),
        }
        assert!(stored.len() < 1 << 20, "the limit never bit");
    };
    assert!(matches!(error, ShmError::AreaFull { .. }), "{error}");
    assert!(area.memory_usage() <= 256 << 10);
    for &key in &stored {
        assert_eq!(tree.get(key), Some(key));
    }
    assert_eq!(tree.len(), stored.len());
    // Another handle is refused the same insert alike, and replacing a
    // value in place needs no memory.
    let other = Rowex::attach(&area, tree.handle()).unwrap();
    assert!(matches!(
        other.insert(refused, 1),
        Err(ShmError::AreaFull { .. })
    ));
    assert_eq!(other.insert(stored[0], 7).unwrap(), Some(stored[0]));
    drop(other);
    tree.destroy().unwrap();
}

#[test]
fn a_refused_insert_frees_what_was_retired_so_a_retry_finds_room() {
    let area = heap_area(Some(if cfg!(miri) { 96 << 10 } else { 256 << 10 }));
    let tree = Rowex::create_in(&area).unwrap();
    let mut stored = Vec::new();
    while stored.len() < 1 << 20 {
        let key = scramble(stored.len() as u64);
        if tree.insert(key, key).is_err() {
            break;
        }
        stored.push(key);
    }
    // Emptied, the tree's nodes wait in this thread's retired lists,
    // which are not full enough to be freed on their own.
    for &key in &stored {
        assert_eq!(tree.remove(key).unwrap(), Some(key));
    }
    assert!(tree.is_empty());
    // Every key goes back in, each at the second attempt at most: the
    // first refusal frees what the removals retired.
    let mut refused = 0;
    for &key in &stored {
        if tree.insert(key, key + 1).is_err() {
            refused += 1;
            assert_eq!(
                tree.insert(key, key + 1).unwrap(),
                None,
                "the retry was refused"
            );
        }
    }
    assert!(refused <= 1, "{refused} inserts were refused once");
    assert_eq!(tree.len(), stored.len());
    tree.destroy().unwrap();
}

#[test]
fn attach_and_destroy_check_what_they_are_given() {
    let area = heap_area(None);
    let plain = Plain::create_in(&area).unwrap();
    let error = Rowex::attach(&area, plain.handle()).unwrap_err();
    assert!(
        matches!(
            error,
            ShmError::ConfigMismatch {
                part: "concurrency",
                ..
            }
        ),
        "{error}"
    );
    assert!(Plain::attach(&area, plain.handle()).is_ok());
    let tree = Rowex::create_in(&area).unwrap();
    let error = RowexFull::attach(&area, tree.handle()).unwrap_err();
    assert!(matches!(
        error,
        ShmError::ConfigMismatch {
            part: "compression",
            ..
        }
    ));
    tree.insert(1, 2).unwrap();
    let handle = tree.handle();
    let other = Rowex::attach(&area, handle).unwrap();
    let tree = match tree.destroy() {
        Err(ShmError::TreeInUse { pids }) => {
            assert_eq!(pids, [std::process::id()]);
            Rowex::attach(&area, handle).unwrap()
        }
        other => panic!("destroyed under another handle: {other:?}"),
    };
    assert_eq!(other.get(1), Some(2), "a refused destroy changes nothing");
    drop(other);
    tree.destroy().unwrap();
    assert!(matches!(
        Rowex::attach(&area, handle),
        Err(ShmError::NoSuchTree { .. })
    ));
    // The slot and the area's memory serve the next tree.
    let before = area.memory_usage();
    let again = Rowex::create_in(&area).unwrap();
    again.insert(1, 2).unwrap();
    assert_eq!(area.memory_usage(), before);
    again.destroy().unwrap();
    plain.destroy().unwrap();
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot ask the system whether a process runs")]
fn a_dead_lock_holder_poisons_writes_and_reads_go_on() {
    let area = heap_area(None);
    let tree = Rowex::create_in(&area).unwrap();
    for key in 0..100 {
        tree.insert(key, key).unwrap();
    }
    let dead = dead_pid();
    tree.space.anchor().root_lock.plant_holder(dead);
    // A write that must replace the root waits on the root lock.
    let error = tree.insert(1 << 40, 0).unwrap_err();
    assert!(
        matches!(error, ShmError::OwnerDied { pid } if pid == dead),
        "{error}"
    );
    let error = tree.insert(5, 0).unwrap_err();
    assert!(matches!(error, ShmError::OwnerDied { .. }), "poison sticks");
    assert!(tree.remove(5).is_err());
    assert_eq!(tree.get(5), Some(5));
    assert_eq!(tree.iter().count(), 100);
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot ask the system whether a process runs")]
fn a_dead_reader_does_not_hold_memory_back() {
    let area = heap_area(None);
    let tree = Rowex::create_in(&area).unwrap();
    let table = tree.space.table();
    // A reader of a dead process, pinned at the current epoch.
    let dead = dead_pid();
    table.plant(dead);
    // Churn: every round retires nodes; if the dead announcement held
    // the epoch, none would be freed and the area would grow each round.
    let keys = n(3000, 200);
    let mut peak = 0;
    for round in 0..n(12, 4) {
        for key in 0..keys {
            tree.insert(key << 8, key).unwrap();
        }
        for key in 0..keys {
            tree.remove(key << 8).unwrap();
        }
        if round == 1 {
            peak = area.memory_usage();
        }
    }
    if !cfg!(miri) {
        assert!(
            area.memory_usage() <= peak,
            "{} > {peak}",
            area.memory_usage()
        );
        assert!(!table.planted(dead), "the dead reader's announcement stays");
    }
}
