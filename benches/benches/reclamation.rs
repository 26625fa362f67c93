//! Epoch-based reclamation for the concurrent tree (issue 35), measured
//! before it is chosen: `crossbeam-epoch` against `seize`, on the two paths
//! the tree would put them on.
//!
//! - `pin/E`: entering and leaving a critical section, nothing else: what
//!   every `get` of a concurrent tree pays on top of its descent.
//! - `read/E`, `read-beside-reader/E`: a lookup's shape. Enter, follow a
//!   chain of four `AtomicPtr`s (a descent of a `u32`-keyed tree) with
//!   acquire loads, read the value, leave. `read/none` is the chain alone,
//!   the floor. The `-beside-reader` rows run with a second thread doing
//!   the same reads in a loop on the other core, so that shared epoch
//!   state (a global epoch, per-thread slots) shows the cost of its cache
//!   lines moving between cores.
//! - `retire/E`: a writer's replacement of a node. Allocate a 64-byte
//!   node, swap it into a slot, and retire the old one, which is freed
//!   once no reader can see it. The allocation and free are in every row.
//!
//! seize loads protected pointers through `Guard::protect` (it asks for
//! `SeqCst` ordering, a plain load on x86-64); crossbeam-epoch through
//! `Atomic::load` with `Acquire`.

mod common;

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::thread;

use criterion::{Criterion, criterion_group, criterion_main};
use crossbeam_epoch as epoch;
use seize::{Collector, Guard as _};

/// The depth of the pointer chain: the levels of a `u32`-keyed tree.
const LEVELS: usize = 4;

/// A node of the chain: its child, and a value (the last node's).
struct Node {
    child: AtomicPtr<Node>,
    value: u64,
    /// Brings the node to 64 bytes, a cache line, as small tree nodes are.
    _pad: [u64; 6],
}

impl Node {
    fn new(child: *mut Node, value: u64) -> Self {
        Self {
            child: AtomicPtr::new(child),
            value,
            _pad: [0; 6],
        }
    }
}

/// A chain of `LEVELS` nodes, freed on drop.
struct Chain {
    root: AtomicPtr<Node>,
}

impl Chain {
    fn new() -> Self {
        let mut below = std::ptr::null_mut();
        for level in 0..LEVELS {
            below = Box::into_raw(Box::new(Node::new(below, level as u64 + 1)));
        }
        Self {
            root: AtomicPtr::new(below),
        }
    }

    /// Follows the chain to its last node and reads its value; `load` is
    /// how each pointer is read.
    #[inline]
    fn read(&self, load: impl Fn(&AtomicPtr<Node>) -> *mut Node) -> u64 {
        let mut node = load(&self.root);
        loop {
            // SAFETY: every pointer in the chain comes from `Box::into_raw`
            // in `new` and lives until the chain is dropped.
            let current = unsafe { &*node };
            let child = load(&current.child);
            if child.is_null() {
                return current.value;
            }
            node = child;
        }
    }
}

impl Drop for Chain {
    fn drop(&mut self) {
        let mut node = *self.root.get_mut();
        while !node.is_null() {
            // SAFETY: as in `read`; each node is freed once, here.
            let mut boxed = unsafe { Box::from_raw(node) };
            node = *boxed.child.get_mut();
        }
    }
}

/// Runs `work` in a loop on another thread until the returned guard drops.
fn beside(work: impl Fn() + Send + 'static) -> impl Drop {
    struct Stop(Arc<AtomicBool>, Option<thread::JoinHandle<()>>);
    impl Drop for Stop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
            if let Some(handle) = self.1.take() {
                handle.join().expect("the reader beside did not panic");
            }
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let handle = thread::spawn(move || {
        while !flag.load(Ordering::Relaxed) {
            work();
        }
    });
    Stop(stop, Some(handle))
}

fn pin(c: &mut Criterion) {
    let mut group = c.benchmark_group("pin");
    common::configure(&mut group);
    group.bench_function("crossbeam-epoch", |b| {
        b.iter(|| drop(black_box(epoch::pin())))
    });
    let collector = Collector::new();
    group.bench_function("seize", |b| b.iter(|| drop(black_box(collector.enter()))));
    group.finish();
}

/// Reads along the chain under each scheme, `beside` a second reader or
/// alone.
fn reads(c: &mut Criterion, name: &str, with_reader_beside: bool) {
    let mut group = c.benchmark_group(name);
    common::configure(&mut group);

    let chain = Arc::new(Chain::new());
    {
        let other = Arc::clone(&chain);
        let _beside = with_reader_beside.then(|| {
            beside(move || {
                black_box(other.read(|p| p.load(Ordering::Acquire)));
            })
        });
        group.bench_function("none", |b| {
            b.iter(|| chain.read(|p| p.load(Ordering::Acquire)))
        });
    }
    {
        let other = Arc::clone(&chain);
        let _beside = with_reader_beside.then(|| {
            beside(move || {
                let _guard = epoch::pin();
                black_box(other.read(|p| p.load(Ordering::Acquire)));
            })
        });
        group.bench_function("crossbeam-epoch", |b| {
            b.iter(|| {
                let _guard = epoch::pin();
                chain.read(|p| p.load(Ordering::Acquire))
            })
        });
    }
    {
        let collector = Arc::new(Collector::new());
        let other = Arc::clone(&chain);
        let theirs = Arc::clone(&collector);
        let _beside = with_reader_beside.then(|| {
            beside(move || {
                let guard = theirs.enter();
                black_box(other.read(|p| guard.protect(p, Ordering::Acquire)));
            })
        });
        group.bench_function("seize", |b| {
            b.iter(|| {
                let guard = collector.enter();
                chain.read(|p| guard.protect(p, Ordering::Acquire))
            })
        });
    }
    group.finish();
}

fn read(c: &mut Criterion) {
    reads(c, "read", false);
}

fn read_beside_reader(c: &mut Criterion) {
    reads(c, "read-beside-reader", true);
}

fn retire(c: &mut Criterion) {
    let mut group = c.benchmark_group("retire");
    common::configure(&mut group);

    let slot = epoch::Atomic::new(Node::new(std::ptr::null_mut(), 0));
    group.bench_function("crossbeam-epoch", |b| {
        b.iter(|| {
            let guard = epoch::pin();
            let new = epoch::Owned::new(Node::new(std::ptr::null_mut(), 1));
            let old = slot.swap(new, Ordering::AcqRel, &guard);
            // SAFETY: `old` left the slot in this swap, so no thread that
            // pins from now on can reach it; it is destroyed once every
            // thread pinned before has unpinned.
            unsafe { guard.defer_destroy(old) };
        })
    });
    // SAFETY: the benchmark is over and no other thread uses the slot.
    drop(unsafe { slot.into_owned() });

    let collector = Collector::new();
    let slot = AtomicPtr::new(Box::into_raw(Box::new(Node::new(std::ptr::null_mut(), 0))));
    group.bench_function("seize", |b| {
        b.iter(|| {
            let guard = collector.enter();
            let new = Box::into_raw(Box::new(Node::new(std::ptr::null_mut(), 1)));
            let old = guard.swap(&slot, new, Ordering::AcqRel);
            // SAFETY: `old` came from `Box::into_raw` and left the slot in
            // this swap, so no thread that enters from now on can reach it.
            unsafe { guard.defer_retire(old, seize::reclaim::boxed) };
        })
    });
    // SAFETY: the benchmark is over, the collector is dropped after the
    // slot's last value is freed here, and no other thread uses either.
    drop(unsafe { Box::from_raw(slot.into_inner()) });
    drop(collector);
    group.finish();
}

criterion_group!(reclamation, pin, read, read_beside_reader, retire);
criterion_main!(reclamation);
