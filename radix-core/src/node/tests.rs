//! Node-level tests: every kind through insert, find, walk, remove, at every
//! class boundary, with chunks ascending and descending.

use core::alloc::Layout;
use core::ptr::NonNull;

use super::*;
use crate::ptr::LocalRef;

/// A node allocation big enough for any kind with `u64` slots.
struct Scratch {
    ptr: NonNull<u8>,
    layout: Layout,
}

impl Scratch {
    fn new() -> Self {
        let layout = Layout::from_size_align(node_size::<u64>(Kind::N256, 256), 8).unwrap();
        // SAFETY: non-zero size.
        let ptr = NonNull::new(unsafe { std::alloc::alloc(layout) }).unwrap();
        Self { ptr, layout }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

/// What a kind adds to [`exercise`]: set-up after `init` and its
/// invariant check, run after every change that leaves the node non-empty.
struct Hooks {
    after_init: unsafe fn(NonNull<u8>),
    check: unsafe fn(NonNull<u8>) -> Result<(), &'static str>,
}

impl Hooks {
    const N4: Hooks = Hooks {
        after_init: |_| {},
        check: Node4::check,
    };
    const N16: Hooks = Hooks {
        after_init: |_| {},
        check: Node16::check,
    };
    const N48: Hooks = Hooks {
        after_init: |_| {},
        check: Node48::check,
    };
    /// Slots cleared as the tree does for inner nodes and non-null layouts,
    /// so the one-load lookup is exercised too.
    const N256: Hooks = Hooks {
        after_init: Node256::clear_slots::<u64>,
        check: |node| {
            // SAFETY: as for every hook: a live, non-empty node of the kind.
            unsafe {
                Node256::check(node)?;
                Node256::check_null_slots::<u64>(node)
            }
        },
    };
}

/// Finds `c` in `node`, which may be empty (the tree never searches an
/// empty node).
///
/// # Safety
///
/// `node` is a live node of kind `K` with `u64` slots.
unsafe fn find_any<K: NodeKind>(node: NonNull<u8>, c: u8) -> Option<u64> {
    // SAFETY: caller's contract.
    unsafe {
        if count(node) == 0 {
            return None;
        }
        let slot = K::find::<u64>(node, c);
        assert_eq!(slot, K::find_nonnull::<u64>(node, c), "find_nonnull {c}");
        slot.map(|s| s.read())
    }
}

fn exercise<K: NodeKind>(capacity: usize, chunks: &[u8], hooks: &Hooks) {
    let scratch = Scratch::new();
    let node = scratch.ptr;
    // SAFETY: the scratch allocation is large enough for any kind.
    unsafe {
        K::init(node, 0);
        (hooks.after_init)(node);
        // Under Miri, check a sample of the states: node256's null-slot
        // check reads all 256 slots, which Miri makes slow.
        let mut changes = 0usize;
        let mut check = || {
            changes += 1;
            if count(node) > 0 && (!cfg!(miri) || changes % 32 == 1) {
                (hooks.check)(node).unwrap();
            }
        };
        for (i, &c) in chunks.iter().take(capacity).enumerate() {
            assert!(find_any::<K>(node, c).is_none());
            K::insert::<u64>(node, c, c as u64 * 3 + 1);
            assert_eq!(count(node), i + 1);
            check();
        }
        let inserted: Vec<u8> = chunks.iter().take(capacity).copied().collect();
        for &c in &inserted {
            assert_eq!(find_any::<K>(node, c), Some(c as u64 * 3 + 1));
        }
        // Every chunk; under Miri, each chunk present and its neighbours
        // (the absent chunks a search can confuse with a present one) and
        // both ends.
        let probes: Vec<u8> = if cfg!(miri) {
            let mut p: Vec<u8> = inserted
                .iter()
                .flat_map(|&c| [c.wrapping_sub(1), c, c.wrapping_add(1)])
                .chain([0, 255])
                .collect();
            p.sort_unstable();
            p.dedup();
            p
        } else {
            (0..=255).collect()
        };
        for &c in &probes {
            assert_eq!(find_any::<K>(node, c).is_some(), inserted.contains(&c));
        }
        // The walk is ascending and complete.
        let mut walked = Vec::new();
        let mut pos = 0;
        while let Some(e) = K::entry_at::<u64>(node, pos) {
            assert_eq!(e.slot.read(), e.chunk as u64 * 3 + 1);
            walked.push(e.chunk);
            pos = e.next;
        }
        let mut sorted = inserted.clone();
        sorted.sort_unstable();
        assert_eq!(walked, sorted);
        // The backward walk is the forward walk reversed.
        let mut backwards = Vec::new();
        let mut end = END;
        while let Some(e) = K::entry_before::<u64>(node, end) {
            backwards.push(e.chunk);
            end = e.next;
        }
        backwards.reverse();
        assert_eq!(backwards, sorted);
        // Seek finds the first chunk not below its argument.
        for &probe in &probes {
            let expect = sorted.iter().copied().find(|&c| c >= probe);
            let got = K::entry_at::<u64>(node, K::seek(node, probe)).map(|e| e.chunk);
            assert_eq!(got, expect, "seek {probe}");
        }
        // Delete and re-insert every chunk repeatedly (PostgreSQL's node48
        // bug looped forever here).
        // Under Miri, one round: every slot is freed and reused once.
        for round in 0..test_depth::pick(3, 3, 1) {
            for &c in &inserted {
                assert_eq!(K::remove::<u64>(node, c), Some(c as u64 * 3 + 1));
                if count(node) > 0 {
                    assert_eq!(K::remove::<u64>(node, c), None, "removed twice");
                }
                check();
                assert!(find_any::<K>(node, c).is_none(), "round {round}");
                K::insert::<u64>(node, c, c as u64 * 3 + 1);
                assert_eq!(count(node), inserted.len());
                check();
            }
        }
        for (i, &c) in inserted.iter().enumerate() {
            assert!(K::remove::<u64>(node, c).is_some());
            assert_eq!(count(node), inserted.len() - i - 1);
            check();
            assert!(find_any::<K>(node, c).is_none());
            if let Some(&next) = inserted.get(i + 1) {
                assert_eq!(find_any::<K>(node, next), Some(next as u64 * 3 + 1));
            }
        }
        assert!(K::entry_at::<u64>(node, 0).is_none());
    }
}

fn orders(n: usize) -> Vec<Vec<u8>> {
    let asc: Vec<u8> = (0..n).map(|i| (i * 255 / n.max(1)) as u8).collect();
    let desc: Vec<u8> = asc.iter().rev().copied().collect();
    let mixed: Vec<u8> = (0..n).map(|i| ((i * 97 + 13) % 256) as u8).collect();
    let mut mixed = mixed;
    mixed.dedup();
    vec![asc, desc, mixed]
}

#[test]
fn node4_every_boundary() {
    for cap in 1..=4 {
        for order in orders(cap) {
            exercise::<Node4>(cap, &order, &Hooks::N4);
        }
    }
}

#[test]
fn node16_every_boundary() {
    // Under Miri, each class's first, last and one past it.
    let caps: &[usize] = if cfg!(miri) {
        &[5, 16, 17, 32]
    } else {
        &[5, 15, 16, 17, 31, 32]
    };
    for &cap in caps {
        for order in orders(cap) {
            exercise::<Node16>(cap, &order, &Hooks::N16);
        }
    }
}

/// Node16 lookups first try the index a run of consecutive chunks would
/// give (`sorted::run_guess`). Runs, runs with gaps, runs across the top of
/// the byte, and nodes whose padding repeats a chunk at the guessed index
/// must all answer as a search does, through both `find` and `find_child`.
#[test]
fn node16_run_guess_answers_as_the_search() {
    let sets: Vec<Vec<u8>> = vec![
        (0..16).collect(),
        (1..=32).collect(),
        (240..=255).collect(),
        vec![1, 3],
        vec![1, 3, 5, 7, 9],
        vec![0, 1, 2, 200, 201],
        vec![7, 8, 9, 10, 40, 41, 42],
        vec![2, 3, 4, 5, 6, 6 + 31],
        (0..32).map(|i| i * 8).collect(),
    ];
    for set in sets {
        let scratch = Scratch::new();
        let node = scratch.ptr;
        let reference = |c: u8| {
            let addr = 8 * (usize::from(c) + 1);
            LocalRef(NonNull::new(core::ptr::without_provenance_mut(addr)).unwrap())
        };
        // SAFETY: the scratch allocation is large enough for any kind; the
        // node stays live and non-empty while it is searched, and its slots
        // are the `LocalRef`s inserted (never dereferenced).
        unsafe {
            Node16::init(node, 0);
            for &c in &set {
                Node16::insert::<LocalRef>(node, c, reference(c));
            }
            Node16::check(node).unwrap();
            for c in 0..=255u8 {
                let expect = set.contains(&c).then(|| reference(c));
                let found = Node16::find::<LocalRef>(node, c).map(|slot| slot.read());
                assert_eq!(found, expect, "find {c} in {set:?}");
                assert_eq!(
                    Node16::find_child::<LocalRef>(node, c),
                    expect,
                    "find_child {c} in {set:?}"
                );
            }
        }
    }
}

#[test]
fn node48_every_boundary() {
    let caps: &[usize] = if cfg!(miri) {
        &[33, 48, 64]
    } else {
        &[33, 47, 48, 63, 64]
    };
    for &cap in caps {
        for order in orders(cap) {
            exercise::<Node48>(cap, &order, &Hooks::N48);
        }
    }
}

#[test]
fn node256_every_boundary() {
    let all: Vec<u8> = (0..=255).collect();
    exercise::<Node256>(256, &all, &Hooks::N256);
    let rev: Vec<u8> = (0..=255).rev().collect();
    exercise::<Node256>(256, &rev, &Hooks::N256);
    exercise::<Node256>(100, &orders(100)[2], &Hooks::N256);
}

#[test]
fn node_sizes_match_postgres() {
    assert_eq!(node_size::<u64>(Kind::N4, 4), 40);
    assert_eq!(node_size::<u64>(Kind::N16, 16), 168);
    assert_eq!(node_size::<u64>(Kind::N16, 32), 296);
    assert_eq!(node_size::<u64>(Kind::N48, 64), 784);
    assert_eq!(node_size::<u64>(Kind::N256, 256), 2088);
}
