//! Shared trees in one process, over heap-backed areas: the same layout,
//! offsets, allocator and locks as POSIX shared memory, small enough for
//! Miri. The cross-process behaviour (children attaching, dying holders)
//! is tested in `tests/shared_processes.rs`.

use std::collections::BTreeMap;

use super::*;
use crate::config::Removable;
use crate::value::{Auto, Inline, Leaf, VarBytes, Varlen};
use crate::{Config, SizeClasses};

macro_rules! config {
    ($name:ident, $key:ty, $layout:ty, $classes:expr) => {
        enum $name {}
        impl Config for $name {
            type Key = $key;
            type Layout = $layout;
            type Memory = SharedMemory;
            const SIZE_CLASSES: SizeClasses = $classes;
            const DELETE: bool = true;
        }
        impl Removable for $name {}
    };
}

config!(U64Auto, u64, Auto<u64>, SizeClasses::DEFAULT);
config!(U32Auto, u32, Auto<u64>, SizeClasses::DEFAULT);
config!(U16Big, u16, Leaf<[u64; 1500]>, SizeClasses::DEFAULT);
config!(U32Varlen, u32, Varlen<VarBytes>, SizeClasses::DEFAULT);
config!(
    U128Inline,
    u128,
    Inline<[u32; 5]>,
    SizeClasses::new(&[1, 8, 32, 40, 256])
);

/// A small heap-backed area.
fn area(limit: Option<usize>) -> Area {
    let options = AreaOptions::default()
        .backing(Backing::Heap)
        .init_segment_size(64 << 10)
        .max_segment_size(256 << 10)
        .max_segments(16)
        .max_trees(3)
        .size_limit(limit);
    Area::create(options).expect("a heap-backed area")
}

fn n(normal: usize, miri: usize) -> usize {
    if cfg!(miri) { miri } else { normal }
}

/// Keys spread over every level of a `u64` tree.
fn spread(i: u64) -> u64 {
    let h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    match i % 4 {
        0 => i,
        1 => i << 8,
        2 => h >> 40,
        _ => h,
    }
}

#[test]
fn insert_read_remove_and_destroy_return_every_byte() {
    let area = area(None);
    let empty = area.memory_usage();
    assert_eq!(empty, area.empty_size());
    let tree = SharedTree::<U64Auto>::create_in(&area).unwrap();
    let mut model = BTreeMap::new();
    {
        let mut w = tree.write();
        for i in 0..n(3000, 150) as u64 {
            let k = spread(i);
            assert_eq!(w.insert(k, i).unwrap(), model.insert(k, i));
        }
        w.verify().unwrap();
        assert!(w.memory_usage() > empty);
    }
    {
        let r = tree.read();
        assert_eq!(r.len(), model.len());
        assert!(
            r.iter()
                .map(|(k, &v)| (k, v))
                .eq(model.iter().map(|(&k, &v)| (k, v)))
        );
        assert!(
            r.iter()
                .rev()
                .map(|(k, _)| k)
                .eq(model.keys().rev().copied())
        );
        let (lo, hi) = (1u64 << 20, 1u64 << 50);
        assert!(
            r.range(lo..hi)
                .map(|(k, _)| k)
                .eq(model.range(lo..hi).map(|(&k, _)| k))
        );
        assert_eq!(
            r.first_key_value().map(|(k, _)| k),
            model.keys().next().copied()
        );
        assert_eq!(
            r.last_key_value().map(|(k, _)| k),
            model.keys().next_back().copied()
        );
        for (&k, &v) in &model {
            assert_eq!(r.get(k), Some(&v));
            assert!(!r.contains_key(k ^ (1 << 63)) || model.contains_key(&(k ^ (1 << 63))));
        }
        assert_eq!(r.stats().keys, model.len());
    }
    {
        let mut w = tree.write();
        let keys: Vec<u64> = model.keys().copied().collect();
        for (i, k) in keys.iter().enumerate() {
            if i % 3 != 0 {
                assert_eq!(w.remove(*k).unwrap(), model.remove(k));
            }
        }
        w.verify().unwrap();
        assert!(w.keys().eq(model.keys().copied()));
        *w.get_mut(keys[0]).unwrap() += 1;
        assert_eq!(w.get(keys[0]), Some(&(model[&keys[0]] + 1)));
        for k in keys.iter().step_by(3) {
            w.remove(*k).unwrap();
        }
        assert!(w.is_empty());
        w.verify().unwrap();
        assert_eq!(
            w.memory_usage(),
            empty,
            "removing the last key frees every span"
        );
        w.insert(1 << 40, 7).unwrap();
    }
    tree.destroy().unwrap();
    assert_eq!(area.memory_usage(), empty);
    assert_eq!(area.segments(), 0);
}

#[test]
fn a_full_area_refuses_inserts_and_keeps_every_key() {
    // Under Miri, one segment's worth: the second segment is refused.
    let area = area(Some(area(None).empty_size() + n(192 << 10, 64 << 10)));
    let tree = SharedTree::<U64Auto>::create_in(&area).unwrap();
    let mut w = tree.write();
    let mut stored = Vec::new();
    let mut refused = None;
    for i in 0..200_000u64 {
        let k = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        match w.insert(k, i) {
            Ok(_) => stored.push((k, i)),
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
    }
    let refused = refused.expect("the limit is reached");
    assert!(matches!(refused, ShmError::AreaFull { .. }), "{refused}");
    assert!(refused.to_string().contains("full"));
    assert!(area.memory_usage() <= area.size_limit().unwrap());
    assert_eq!(w.len(), stored.len());
    w.verify().unwrap();
    let step = n(1, 97);
    for &(k, v) in stored.iter().step_by(step) {
        assert_eq!(w.get(k), Some(&v));
    }
    // Removing makes room again.
    for &(k, _) in stored.iter().take(stored.len() / 2) {
        w.remove(k).unwrap();
    }
    w.insert(42, 42).unwrap();
    w.verify().unwrap();
    drop(w);
    tree.destroy().unwrap();
    assert_eq!(area.memory_usage(), area.empty_size());
}

#[test]
fn attach_checks_the_handle_and_the_configuration() {
    let area = area(None);
    let tree = SharedTree::<U64Auto>::create_in(&area).unwrap();
    tree.write().insert(5, 50).unwrap();
    let same = SharedTree::<U64Auto>::attach(&area, tree.handle()).unwrap();
    assert_eq!(same.read().get(5), Some(&50));
    match SharedTree::<U32Auto>::attach(&area, tree.handle()) {
        Err(ShmError::ConfigMismatch {
            part,
            expected,
            found,
        }) => {
            assert_eq!(part, "key width");
            assert_eq!((expected.as_str(), found.as_str()), ("u32", "u64"));
        }
        other => panic!("{other:?}"),
    }
    let err = SharedTree::<U32Varlen>::attach(&area, tree.handle()).unwrap_err();
    assert!(err.to_string().contains("key width"), "{err}");
    let stale = TreeHandle {
        slot: tree.handle().slot,
        generation: tree.handle().generation + 1,
    };
    assert!(matches!(
        SharedTree::<U64Auto>::attach(&area, stale),
        Err(ShmError::NoSuchTree { .. })
    ));
    let handle = tree.handle();
    tree.destroy().unwrap();
    assert!(matches!(
        SharedTree::<U64Auto>::attach(&area, handle),
        Err(ShmError::NoSuchTree { .. })
    ));
    assert!(matches!(same.try_read(), Err(ShmError::NoSuchTree { .. })));
    let far = TreeHandle {
        slot: 99,
        generation: 1,
    };
    assert!(matches!(
        SharedTree::<U64Auto>::attach(&area, far),
        Err(ShmError::NoSuchTree { .. })
    ));
}

#[test]
fn trees_share_an_area_up_to_its_slots() {
    let area = area(None);
    let a = SharedTree::<U64Auto>::create_in(&area).unwrap();
    let b = SharedTree::<U32Varlen>::create_in(&area).unwrap();
    let c = SharedTree::<U128Inline>::create_in(&area).unwrap();
    assert!(matches!(
        SharedTree::<U64Auto>::create_in(&area),
        Err(ShmError::TooManyTrees { max: 3 })
    ));
    let long = VarBytes::new(&[9; 40]).unwrap();
    let short = VarBytes::new(b"hi").unwrap();
    for i in 0..n(500, 40) as u64 {
        a.write().insert(i * 7, i).unwrap();
        let value = if i % 2 == 0 { &*long } else { &*short };
        b.write().insert(i as u32, value).unwrap();
        c.write()
            .insert(u128::from(i) << 64, [i as u32; 5])
            .unwrap();
    }
    for (tree_len, verify) in [
        (a.read().len(), a.read().verify()),
        (b.read().len(), b.read().verify()),
        (c.read().len(), c.read().verify()),
    ] {
        assert_eq!(tree_len, n(500, 40));
        verify.unwrap();
    }
    assert_eq!(b.read().get(3).unwrap().as_bytes(), b"hi");
    assert_eq!(b.read().get(4).unwrap().as_bytes(), &[9; 40]);
    assert_eq!(c.read().get(5u128 << 64), Some(&[5; 5]));
    assert!(b.read().stats().leaves > 0);
    b.write().clear();
    assert!(b.read().is_empty());
    for tree in [a.handle(), b.handle(), c.handle()] {
        assert!(tree.to_string().starts_with("tree-"));
    }
    a.destroy().unwrap();
    b.destroy().unwrap();
    c.destroy().unwrap();
    assert_eq!(area.memory_usage(), area.empty_size());
    // The slots are free again.
    SharedTree::<U64Auto>::create_in(&area).unwrap();
}

#[test]
fn large_leaves_get_blocks_of_their_own() {
    let area = area(None);
    let tree = SharedTree::<U16Big>::create_in(&area).unwrap();
    let mut w = tree.write();
    for i in 0..n(20, 4) as u16 {
        w.insert(i * 300, [u64::from(i); 1500]).unwrap();
    }
    assert_eq!(w.get(300).map(|v| v[1499]), Some(1));
    assert_eq!(w.stats().leaves, n(20, 4));
    w.verify().unwrap();
    assert_eq!(w.remove(300).unwrap().map(|v| v[0]), Some(1));
    w.clear();
    drop(w);
    assert_eq!(area.memory_usage(), area.empty_size());
    // Larger than any allocation can be: half the largest segment. The value
    // is 160 kB, and an unoptimised build keeps a copy of it in each of the
    // frames it passes by value, more than a test thread's 2 MiB stack.
    std::thread::Builder::new()
        .stack_size(32 << 20)
        .spawn(|| {
            let huge = AreaOptions::default()
                .backing(Backing::Heap)
                .max_segment_size(256 << 10)
                .init_segment_size(64 << 10)
                .max_segments(2);
            let area = Area::create(huge).unwrap();
            enum Huge {}
            impl Config for Huge {
                type Key = u8;
                type Layout = Leaf<[u64; 20_000]>;
                type Memory = SharedMemory;
                const SIZE_CLASSES: SizeClasses = SizeClasses::DEFAULT;
                const DELETE: bool = false;
            }
            let tree = SharedTree::<Huge>::create_in(&area).unwrap();
            let err = tree.write().insert(1, [0; 20_000]).unwrap_err();
            assert!(matches!(err, ShmError::TooLarge { .. }), "{err}");
            assert!(tree.read().is_empty());
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn locks_exclude_within_a_process() {
    let area = area(None);
    let tree = SharedTree::<U64Auto>::create_in(&area).unwrap();
    {
        let r1 = tree.read();
        let r2 = tree.try_read().expect("readers share");
        assert!(matches!(tree.try_write(), Err(ShmError::WouldBlock)));
        drop((r1, r2));
    }
    {
        let mut w = tree.try_write().unwrap();
        w.set_user_word(2, 99);
        assert!(matches!(tree.try_read(), Err(ShmError::WouldBlock)));
        assert!(matches!(tree.try_write(), Err(ShmError::WouldBlock)));
    }
    assert_eq!(tree.read().user_word(2), 99);
    assert_eq!(tree.read().user_word(0), 0);
    // Unwinding releases the lock.
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut w = tree.write();
        w.insert(1, 1).unwrap();
        panic!("while writing");
    }));
    assert!(caught.is_err());
    assert_eq!(tree.try_read().unwrap().get(1), Some(&1));
}

#[test]
fn segments_grow_then_go_back() {
    let area = area(None);
    let tree = SharedTree::<U64Auto>::create_in(&area).unwrap();
    let mut w = tree.write();
    for i in 0..n(2000, 300) as u64 {
        w.insert(i.wrapping_mul(0x9E37_79B9_7F4A_7C15), i).unwrap();
    }
    let grown = area.segments();
    assert!(grown >= 1);
    assert!(area.memory_usage() > area.empty_size());
    w.clear();
    assert_eq!(area.segments(), 0);
    assert_eq!(area.memory_usage(), area.empty_size());
    drop(w);
    assert!(format!("{area:?}").contains("memory_usage"));
    assert!(format!("{tree:?}").contains("tree-0-1"));
}

#[test]
fn views_seek_compare_and_write_through_mutable_iterators() {
    let area = area(None);
    let evens = SharedTree::<U64Auto>::create_in(&area).unwrap();
    let all = SharedTree::<U64Auto>::create_in(&area).unwrap();
    let count = n(2000, 120) as u64;
    let model: BTreeMap<u64, u64> = (0..count).map(|i| (spread(i) & !1, i)).collect();
    {
        let (mut e, mut a) = (evens.write(), all.write());
        for (&k, &v) in &model {
            e.insert(k, v).unwrap();
            a.insert(k, v).unwrap();
            a.insert(k | 1, v).unwrap();
        }
        for (k, v) in e.iter_mut() {
            *v = k.wrapping_add(*v);
        }
        for v in a.values_mut() {
            *v += 1;
        }
        for (_, v) in a.range_mut(..1 << 20) {
            *v = 0;
        }
        e.verify().unwrap();
        a.verify().unwrap();
    }
    let (e, a) = (evens.read(), all.read());
    assert!(
        e.iter()
            .map(|(k, &v)| (k, v))
            .eq(model.iter().map(|(&k, &v)| (k, k.wrapping_add(v))))
    );
    for (&k, &v) in &model {
        let expected = if k < 1 << 20 { 0 } else { v + 1 };
        assert_eq!(a.get(k | 1), Some(&expected));
    }
    let mut cursor = a.cursor_front();
    for (&k, _) in model.iter().step_by(7) {
        assert_eq!(e.first_at_or_after(k).map(|(k, _)| k), Some(k));
        assert_eq!(
            e.first_at_or_after(k + 1),
            model
                .range(k + 1..)
                .next()
                .map(|(&k, _)| (k, e.get(k).unwrap()))
        );
        assert_eq!(e.last_at_or_before(k | 1).map(|(k, _)| k), Some(k));
        assert!(cursor.seek_get(k | 1).is_some());
        assert!(
            cursor.seek_get(k | 1).is_some(),
            "a repeated probe finds it again"
        );
    }
    assert_eq!(
        e.cursor_at(1).next().map(|(k, _)| k),
        model.range(1..).next().map(|(&k, _)| k)
    );
    assert!(e.is_subset(&a) && a.is_superset(&e) && !a.is_subset(&e));
    assert!(!e.is_disjoint(&a) && e.is_subset(&e));
    drop((e, a));
    evens.destroy().unwrap();
    all.destroy().unwrap();
}

#[test]
fn segments_grow_by_an_eighth_of_the_area() {
    use super::area::next_segment_size;
    let (init, max) = (1 << 20, 256 << 20);
    assert_eq!(next_segment_size(64 << 10, init, max), init);
    assert_eq!(next_segment_size(16 << 20, init, max), 2 << 20);
    assert_eq!(next_segment_size((16 << 20) - 1, init, max), 1 << 20);
    assert_eq!(next_segment_size(100 << 30, init, max), max);
    // From the control segment alone, however far it grows, an area
    // never holds more than an eighth over what it had when it grew.
    let mut used = 64 << 10;
    for _ in 0..128 {
        let size = next_segment_size(used, init, max);
        assert!(size.is_power_of_two());
        assert!(size <= init.max(used / 8), "{size} after {used}");
        used += size;
    }
    assert!(used >= 16 << 30, "the default 128 segments reach {used}");
}

crate::raw::test_keys::ranged_config!(U32Ranges, u32, Varlen<VarBytes>, SharedMemory);

/// A split in a full area: the node256, 255 copies of the value (leaves
/// of their own) and nothing else; refused until fillers make room, and
/// each refusal leaves the range and every filler as they were.
#[test]
fn a_split_the_area_refuses_changes_nothing() {
    let bytes = |tag: u8| VarBytes::new(&[tag; 40]).expect("40 bytes");
    let area = area(Some(area(None).empty_size() + (192 << 10)));
    let tree = SharedTree::<U32Ranges>::create_in(&area).unwrap();
    let mut fillers = Vec::new();
    {
        let mut w = tree.write();
        for k in 0..256 {
            w.insert(k, &bytes(1)).unwrap();
        }
        assert_eq!((w.stats().nodes(), w.stats().ranges), (1, 1));
        // The range's merge gave back 255 leaves and a node256. Without
        // these 300 spread keys the fill below ended at one pool's refusal
        // while the split still found its room.
        for k in (1 << 19..).step_by(2).take(300) {
            w.insert(k, &bytes(2)).unwrap();
        }
        // Neighbours differ, so that no run of fillers merges. A refusal
        // may be one pool's; the fill goes on until 64 in a row.
        let (mut k, mut in_a_row) = (1 << 20, 0);
        while in_a_row < 64 {
            if w.insert(k, &bytes(2 + (k & 1) as u8)).is_ok() {
                fillers.push(k);
                in_a_row = 0;
            } else {
                in_a_row += 1;
            }
            k += 1;
        }
    }
    // Under Miri `verify` runs at the first refusal and at the end only.
    let same = |w: &TreeView<U32Ranges>, changed: bool, verify: bool| {
        if verify || !cfg!(miri) {
            w.verify().unwrap();
        }
        assert_eq!(w.len(), 256 + 300 + fillers_left(w));
        for k in (0..256).step_by(n(1, 17)) {
            let want = if changed && k == 77 { 9 } else { 1 };
            assert_eq!(w.get(k).map(|v| v.as_bytes()[0]), Some(want), "key {k}");
        }
    };
    fn fillers_left(w: &TreeView<U32Ranges>) -> usize {
        w.range(1 << 20..).count()
    }
    let mut refused = 0;
    loop {
        let mut w = tree.write();
        match w.insert(77, &bytes(9)) {
            Ok(had) => {
                assert!(had);
                same(&w, true, true);
                break;
            }
            Err(ShmError::AreaFull { .. }) => refused += 1,
            Err(e) => panic!("{e}"),
        }
        same(&w, false, refused == 1);
        // Room for a few more leaves and, now and then, a node.
        for _ in 0..n(8, 256) {
            let k = fillers.pop().expect("the split fits once the fillers go");
            if w.remove(k).is_err() {
                fillers.insert(0, k);
            }
        }
    }
    assert!(refused > 0, "the full area refused the split first");
    tree.destroy().unwrap();
}
