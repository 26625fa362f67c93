//! loom models of the concurrent tree's node protocols: each runs a
//! writer beside a reader (or a second writer) on a tree of a few keys,
//! and loom explores their interleavings, preemptions bounded, with the
//! tree's atomics replaced by loom's (`src/concurrent/sync.rs`).
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p radix-core --release
//! --test loom` (`.ci/run` does); without `--cfg loom` the file is empty.
//! One model per protocol the issue names: an insert into a node with
//! room, a grow to the next kind, a shrink, a value replaced, a
//! compressed path split, the last key of a node removed; two writers
//! growing one node; and the shortcut past a chain, moved with its node
//! and cleared before its child leaves.
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;

radix_core::radix_tree! {
    /// Dense small keys: one or two levels.
    struct Plain { key: u16, value: u32, concurrency: rowex }
}

radix_core::radix_tree! {
    /// The same with lazy leaves and compressed paths.
    struct Compressed { key: u16, value: u32, compression: full, concurrency: rowex }
}

/// Runs `model` under loom with three preemptions: enough for every
/// protocol here to be interrupted between each pair of its stores. A
/// writer waiting for a node lock spins (yielding to loom), which takes
/// more branches than loom's default allows. Prints how many executions
/// loom explored, for the record.
fn explore(model: impl Fn() + Sync + Send + 'static) {
    static EXECUTIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let start = std::time::Instant::now();
    EXECUTIONS.store(0, std::sync::atomic::Ordering::Relaxed);
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.max_branches = 100_000;
    builder.check(move || {
        EXECUTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        model();
    });
    println!(
        "{} executions in {:.1} s",
        EXECUTIONS.load(std::sync::atomic::Ordering::Relaxed),
        start.elapsed().as_secs_f64()
    );
}

/// Runs `read` on `tree` in a second thread. (Readers go in the spawned
/// thread and writers in the model's own: loom explores from the spawned
/// thread's accesses backwards, and it is the reader's loads whose
/// interleavings with the writer's stores are in question.)
fn reader<T: Send + Sync + 'static>(
    tree: &Arc<T>,
    read: impl FnOnce(&T) + Send + 'static,
) -> thread::JoinHandle<()> {
    let tree = tree.clone();
    thread::spawn(move || read(&tree))
}

fn tree_with<T: Default>(fill: impl FnOnce(&T)) -> Arc<T> {
    let tree = T::default();
    fill(&tree);
    Arc::new(tree)
}

#[test]
fn insert_into_a_node_with_room() {
    explore(|| {
        let tree = tree_with::<Plain>(|t| {
            t.insert(1, 10);
        });
        let reader = reader(&tree, |tree| {
            assert_eq!(tree.get(1), Some(10));
            assert!(matches!(tree.get(2), None | Some(20)));
        });
        assert_eq!(tree.insert(2, 20), None);
        reader.join().unwrap();
        assert_eq!(tree.get(2), Some(20));
    });
}

#[test]
fn grow_to_the_next_kind() {
    explore(|| {
        let tree = tree_with::<Plain>(|t| {
            for k in 0..4 {
                t.insert(k, u32::from(k));
            }
        });
        let reader = reader(&tree, |tree| {
            assert_eq!(tree.get(0), Some(0));
            assert_eq!(tree.get(3), Some(3));
            assert!(matches!(tree.get(4), None | Some(4)));
        });
        tree.insert(4, 4);
        reader.join().unwrap();
        assert_eq!(tree.get(4), Some(4));
        assert_eq!(tree.len(), 5);
    });
}

#[test]
fn shrink() {
    explore(|| {
        let tree = tree_with::<Plain>(|t| {
            for k in 0..5 {
                t.insert(k, u32::from(k));
            }
            t.remove(3);
            t.remove(4);
        });
        let reader = reader(&tree, |tree| {
            assert_eq!(tree.get(0), Some(0));
            assert_eq!(tree.get(1), Some(1));
        });
        // Two children left of a node of 16: it shrinks to a node of 4.
        assert_eq!(tree.remove(2), Some(2));
        reader.join().unwrap();
        assert_eq!(tree.iter().collect::<Vec<_>>(), [(0, 0), (1, 1)]);
    });
}

#[test]
fn replace_a_value() {
    explore(|| {
        let tree = tree_with::<Plain>(|t| {
            t.insert(7, 1);
        });
        let reader = reader(&tree, |tree| {
            let first = tree.get(7).unwrap();
            let second = tree.get(7).unwrap();
            // Either value, and never the old one after the new.
            assert!(first <= second, "{first} then {second}");
        });
        assert_eq!(tree.insert(7, 2), Some(1));
        reader.join().unwrap();
        assert_eq!(tree.get(7), Some(2));
    });
}

#[test]
fn split_a_compressed_path() {
    explore(|| {
        let tree = tree_with::<Compressed>(|t| {
            t.insert(0x0101, 1);
            t.insert(0x0102, 2);
        });
        let reader = reader(&tree, |tree| {
            assert_eq!(tree.get(0x0101), Some(1));
            assert_eq!(tree.get(0x0102), Some(2));
        });
        // Diverges above the node holding both: a new node over it.
        tree.insert(0x0201, 3);
        reader.join().unwrap();
        assert_eq!(tree.get(0x0201), Some(3));
        assert_eq!(tree.len(), 3);
    });
}

#[test]
fn remove_the_last_key_of_a_node() {
    explore(|| {
        let tree = tree_with::<Plain>(|t| {
            t.insert(0x0101, 1);
            t.insert(0x0201, 2);
        });
        let reader = reader(&tree, |tree| {
            assert_eq!(tree.get(0x0101), Some(1));
            assert!(matches!(tree.get(0x0201), None | Some(2)));
        });
        // Its node empties and leaves the root.
        assert_eq!(tree.remove(0x0201), Some(2));
        reader.join().unwrap();
        assert_eq!(tree.get(0x0201), None);
        assert_eq!(tree.iter().collect::<Vec<_>>(), [(0x0101, 1)]);
    });
}

#[test]
fn two_writers_grow_one_node() {
    explore(|| {
        let tree = tree_with::<Plain>(|t| {
            for k in 0..4 {
                t.insert(k, u32::from(k));
            }
        });
        let other = {
            let tree = tree.clone();
            thread::spawn(move || tree.insert(5, 5))
        };
        tree.insert(4, 4);
        other.join().unwrap();
        assert_eq!(tree.len(), 6);
        assert_eq!(tree.get(5), Some(5));
    });
}

radix_core::radix_tree! {
    /// Wider keys, so that one far key lifts the root over a chain and
    /// leaves a shortcut (`src/concurrent/shortcut.rs`).
    struct Tall { key: u32, value: u32, concurrency: rowex }
}

/// A tree of `small` keys below bit 8 under a root lifted to bit 24:
/// lookups of the small keys start at the shortcut, the chain's bottom
/// node at bit 8, which also holds `chunks` children at bit 8.
fn tall(small: &[u32], chunks: u32) -> Arc<Tall> {
    tree_with::<Tall>(|t| {
        for &k in small {
            t.insert(k, k);
        }
        t.insert(1 << 24, 0);
        for c in 1..=chunks {
            t.insert(c << 8, c);
        }
    })
}

#[test]
fn move_the_shortcut_with_its_node() {
    explore(|| {
        // The chain's bottom node of 4 is full: the next child grows it,
        // and the shortcut moves to the grown node's slot.
        let tree = tall(&[1], 3);
        let reader = reader(&tree, |tree| {
            assert_eq!(tree.get(1), Some(1));
            assert_eq!(tree.get(2), None);
        });
        tree.insert(4 << 8, 4);
        reader.join().unwrap();
        assert_eq!(tree.get(1), Some(1));
        assert_eq!(tree.get(4 << 8), Some(4));
    });
}

#[test]
fn clear_the_shortcut_before_its_child_leaves() {
    explore(|| {
        let tree = tall(&[1], 0);
        let reader = reader(&tree, |tree| {
            assert!(matches!(tree.get(1), None | Some(1)));
        });
        // The old root empties and leaves the chain's bottom node.
        assert_eq!(tree.remove(1), Some(1));
        reader.join().unwrap();
        assert_eq!(tree.get(1), None);
        assert_eq!(tree.iter().collect::<Vec<_>>(), [(1 << 24, 0)]);
    });
}
