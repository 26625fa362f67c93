//! Tree-level unit tests, sized to run under Miri: every value layout,
//! every key width, grow and shrink through every class, iteration, ranges
//! and replacement between embedded and leaf forms.

use std::collections::BTreeMap;
use std::ops::Bound;

use crate::mem::LocalMemory;
use crate::raw::test_keys::test_config;
use crate::value::{Auto, Inline, Leaf, VarBytes, Varlen};
use crate::{Key, Kind, RawTree, SizeClasses};
use test_depth::pick;

test_config!(U64Auto, u64, Auto<u64>, SizeClasses::DEFAULT);
test_config!(U16Leaf, u16, Leaf<String>, SizeClasses::DEFAULT);
test_config!(
    U128Inline,
    u128,
    Inline<[u32; 5]>,
    SizeClasses::new(&[3, 8, 32, 40, 256])
);
test_config!(U32Varlen, u32, Varlen<VarBytes>, SizeClasses::DEFAULT);
test_config!(U8Auto, u8, Auto<u8>, SizeClasses::new(&[16, 256]));

/// Keys that make a node of every class at the last level and above it.
fn keys<K: Key + TryFrom<u128>>(n: usize, shift: u32) -> Vec<K> {
    (0..n as u128)
        .filter_map(|i| K::try_from(i << shift).ok())
        .collect()
}

#[test]
fn auto_u64_every_class_and_order() {
    let small: &[usize] = if cfg!(miri) {
        &[5, 33, 65]
    } else {
        &[2, 15, 30, 60, 256]
    };
    for &n in small {
        // Under Miri, the lowest and highest bytes only.
        for &shift in pick(&[0u32, 8, 56][..], &[0, 8, 56], &[0, 56]) {
            for descending in [false, true] {
                if cfg!(miri) && descending && shift > 0 {
                    // The insert positions a descending order takes are
                    // the last level's; above it, one order is enough.
                    continue;
                }
                let mut ks: Vec<u64> = keys(n, shift);
                if descending {
                    ks.reverse();
                }
                let mut t = RawTree::<U64Auto>::new();
                let mut model = BTreeMap::new();
                for &k in &ks {
                    assert_eq!(t.insert(k, k ^ 0xAB), None);
                    model.insert(k, k ^ 0xAB);
                }
                t.verify().unwrap();
                for &k in &ks {
                    assert_eq!(t.get(k), Some(&(k ^ 0xAB)));
                    assert_eq!(t.insert(k, k), Some(k ^ 0xAB));
                    model.insert(k, k);
                }
                assert!(
                    t.iter()
                        .map(|(k, v)| (k, *v))
                        .eq(model.iter().map(|(k, v)| (*k, *v)))
                );
                for (i, &k) in ks.iter().enumerate() {
                    assert_eq!(t.remove(k), Some(k));
                    assert_eq!(t.remove(k), None);
                    // Verifying is O(n); under Miri, at the class boundaries only.
                    if !cfg!(miri) || [4, 12, 16, 48, 64].contains(&(ks.len() - i - 1)) {
                        t.verify().unwrap();
                    }
                }
                assert!(t.is_empty());
                assert_eq!(t.memory_usage(), 0);
            }
        }
    }
}

#[test]
fn leaf_values_with_drop() {
    let mut t = RawTree::<U16Leaf>::new();
    for k in (0..300u16).rev() {
        assert_eq!(t.insert(k * 7, format!("v{k}")), None);
    }
    assert_eq!(t.stats().leaves, 300);
    assert_eq!(t.get(7).map(String::as_str), Some("v1"));
    *t.get_mut(7).unwrap() += "!";
    assert_eq!(t.insert(7, "x".into()).as_deref(), Some("v1!"));
    assert_eq!(t.remove(14).as_deref(), Some("v2"));
    t.verify().unwrap();
    assert_eq!(
        t.first_key_value().map(|(k, v)| (k, v.as_str())),
        Some((0, "v0"))
    );
    assert_eq!(
        t.last_key_value().map(|(k, v)| (k, v.as_str())),
        Some((299 * 7, "v299"))
    );
    t.clear();
    assert_eq!(t.memory_usage(), 0);
    assert!(t.get(7).is_none());
    t.insert(1, "again".into());
    assert_eq!(t.len(), 1);
}

#[test]
fn inline_values_in_custom_classes() {
    let mut t = RawTree::<U128Inline>::new();
    let big = u128::MAX - 3000;
    for i in 0..if cfg!(miri) { 80 } else { 600 } {
        let k = big + i * 3;
        t.insert(k, [i as u32; 5]);
    }
    t.insert(5, [9; 5]);
    t.verify().unwrap();
    assert_eq!(t.height(), 16);
    assert_eq!(t.get(big + 3), Some(&[1; 5]));
    t.get_mut(5).unwrap()[0] = 1;
    assert_eq!(t.get(5), Some(&[1, 9, 9, 9, 9]));
    assert_eq!(t.remove(5), Some([1, 9, 9, 9, 9]));
    assert_eq!(t.height(), 16);
    let stats = t.stats();
    assert!(stats.nodes_of_kind(Kind::N48) + stats.nodes_of_kind(Kind::N256) > 0);
    while let Some((k, _)) = t.first_key_value() {
        t.remove(k);
    }
    t.verify().unwrap();
    assert_eq!(t.memory_usage(), 0);
}

#[test]
fn varlen_moves_between_embedded_and_leaf() {
    let mut t = RawTree::<U32Varlen>::new();
    let lens: Vec<usize> = (0..=20).chain((0..20).rev()).collect();
    for (step, &len) in lens.iter().enumerate() {
        let bytes: Vec<u8> = (0..len as u8)
            .map(|b| b.wrapping_mul(31).wrapping_add(step as u8))
            .collect();
        let v = VarBytes::new(&bytes).unwrap();
        assert_eq!(t.insert(u32::MAX, &v), step > 0);
        t.insert(step as u32, &v);
        assert_eq!(t.get(u32::MAX).unwrap().as_bytes(), &bytes[..]);
        let leaf = 1 + len > core::mem::size_of::<usize>();
        let expected_leaves = lens[..=step]
            .iter()
            .filter(|&&l| 1 + l > core::mem::size_of::<usize>())
            .count();
        assert_eq!(t.stats().leaves, expected_leaves + leaf as usize);
        t.verify().unwrap();
    }
    assert!(t.remove(u32::MAX));
    assert!(!t.remove(u32::MAX));
    t.clear();
    assert_eq!(t.memory_usage(), 0);
}

#[test]
fn insert_with_old_shows_the_replaced_value() {
    let mut t = RawTree::<U32Varlen>::new();
    let long = VarBytes::new(&[3; 20]).unwrap();
    let short = VarBytes::new(b"ab").unwrap();
    let mut seen = Vec::new();
    // Absent: nothing shown. Then every transition between leaf and
    // embedded forms shows the value being replaced.
    for (key, value) in [
        (9, &long),
        (9, &short),
        (9, &long),
        (9, &long),
        (700, &short),
    ] {
        t.insert_with_old(key, value, |old| seen.push(old.as_bytes().to_vec()));
    }
    assert_eq!(seen, [vec![3; 20], b"ab".to_vec(), vec![3; 20]]);
    assert_eq!(t.len(), 2);
    t.verify().unwrap();
    let mut words = RawTree::<U64Auto>::new();
    for (i, k) in [5u64, 5, 1 << 40, 5].into_iter().enumerate() {
        let mut old = None;
        let returned = words.insert_with_old(k, i as u64, |v| old = Some(*v));
        assert_eq!(old, returned);
    }
    assert_eq!(words.get(5), Some(&3));
}

#[test]
fn ranges_follow_btreemap() {
    let mut t = RawTree::<U64Auto>::new();
    let mut model = BTreeMap::new();
    for i in 0..if cfg!(miri) { 60u64 } else { 2000 } {
        let k = i * i * 37 % 100_003;
        t.insert(k, i);
        model.insert(k, i);
    }
    let probes: &[u64] = if cfg!(miri) {
        &[0, 37, 5000, 100_003, u64::MAX]
    } else {
        &[0, 1, 36, 37, 5000, 99_999, 100_002, 100_003, u64::MAX]
    };
    for &a in probes {
        for &b in probes {
            let bounds = [
                (Bound::Included(a), Bound::Included(b)),
                (Bound::Included(a), Bound::Excluded(b)),
                (Bound::Excluded(a), Bound::Included(b)),
                (Bound::Excluded(a), Bound::Unbounded),
                (Bound::Unbounded, Bound::Excluded(b)),
            ];
            for (lo, hi) in bounds {
                let empty = match (lo, hi) {
                    (
                        Bound::Included(x) | Bound::Excluded(x),
                        Bound::Included(y) | Bound::Excluded(y),
                    ) => {
                        x > y
                            || (x == y
                                && !(matches!(lo, Bound::Included(_))
                                    && matches!(hi, Bound::Included(_))))
                    }
                    _ => false,
                };
                let got: Vec<u64> = t.range((lo, hi)).map(|(k, _)| k).collect();
                let got_rev: Vec<u64> = t.range((lo, hi)).rev().map(|(k, _)| k).collect();
                if empty {
                    assert!(got.is_empty() && got_rev.is_empty());
                } else {
                    let want: Vec<u64> = model.range((lo, hi)).map(|(k, _)| *k).collect();
                    let want_rev: Vec<u64> = want.iter().rev().copied().collect();
                    assert_eq!(got, want, "{lo:?}..{hi:?}");
                    assert_eq!(got_rev, want_rev, "rev {lo:?}..{hi:?}");
                }
            }
        }
    }
}

#[test]
fn one_level_tree_of_u8() {
    let mut t = RawTree::<U8Auto>::new();
    for k in 0..=255u8 {
        t.insert(k, !k);
    }
    assert_eq!(t.height(), 1);
    assert_eq!(t.len(), 256);
    assert_eq!(t.stats().nodes_of_kind(Kind::N256), 1);
    for k in 0..=250u8 {
        t.remove(k);
    }
    t.verify().unwrap();
    assert_eq!(t.stats().nodes_of_kind(Kind::N16), 1);
    assert_eq!(t.keys().collect::<Vec<_>>(), [251, 252, 253, 254, 255]);
    assert_eq!(t.values().copied().collect::<Vec<_>>(), [4, 3, 2, 1, 0]);
}

#[test]
fn debug_lists_entries_in_order() {
    let mut t = RawTree::<U64Auto>::new();
    t.insert(300, 3);
    t.insert(2, 1);
    assert_eq!(format!("{t:?}"), "{2: 1, 300: 3}");
}

#[test]
fn trees_are_send_and_sync_when_values_are() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<RawTree<U64Auto>>();
    assert_send_sync::<RawTree<U16Leaf>>();
    assert_send_sync::<RawTree<U32Varlen>>();
}

#[test]
fn both_ends_meet_without_crossing() {
    let mut t = RawTree::<U64Auto>::new();
    let keys: Vec<u64> = (0..if cfg!(miri) { 150 } else { 3000 })
        .map(|i| i * 977 % 70_001)
        .collect();
    let mut model = BTreeMap::new();
    for &k in &keys {
        t.insert(k, k);
        model.insert(k, k);
    }
    // Alternate ends in a fixed pattern; the union must be every key once.
    let mut it = t.iter();
    let mut want = model.keys().copied();
    let (mut front, mut back) = (Vec::new(), Vec::new());
    for step in 0.. {
        let take_back = step % 3 == 1;
        let (got, expected) = if take_back {
            (it.next_back().map(|(k, _)| k), want.next_back())
        } else {
            (it.next().map(|(k, _)| k), want.next())
        };
        assert_eq!(got, expected, "step {step}");
        assert_eq!(it.len(), want.len());
        match (got, take_back) {
            (None, _) => break,
            (Some(k), true) => back.push(k),
            (Some(k), false) => front.push(k),
        }
    }
    assert_eq!(front.len() + back.len(), model.len());
    assert_eq!(
        t.last_key_value(),
        model.last_key_value().map(|(k, v)| (*k, v))
    );
    let mut r = t.range(100..=60_000);
    let mut m = model.range(100..=60_000);
    loop {
        let (a, b) = (r.next_back(), m.next_back());
        assert_eq!(a.map(|(k, _)| k), b.map(|(k, _)| *k));
        let (c, d) = (r.next(), m.next());
        assert_eq!(c.map(|(k, _)| k), d.map(|(k, _)| *k));
        if a.is_none() && c.is_none() {
            break;
        }
    }
}

#[test]
#[should_panic(expected = "built for other node pools")]
fn memory_for_another_configuration_is_refused() {
    let other = LocalMemory::with_pools(&RawTree::<U128Inline>::pool_specs());
    let _ = RawTree::<U64Auto>::with_memory(other);
}

#[test]
fn varlen_slot_check_names_bad_encodings() {
    use core::mem::MaybeUninit;
    use core::ptr::NonNull;

    use crate::mem::Memory;
    use crate::value::{SlotWord, ValueLayout};

    type Layout = Varlen<VarBytes>;
    let mut mem = LocalMemory::with_pools(&[]);
    let long = VarBytes::new(&[7; 20]).unwrap();
    let short = VarBytes::new(b"abc").unwrap();
    for value in [long, short] {
        let Ok(mut slot) = Layout::into_slot(&*value, &mut mem);
        let ptr = NonNull::from(&mut slot);
        // SAFETY: a live slot built just above, dropped once below.
        unsafe {
            assert_eq!(Layout::check_slot(ptr, &mem), Ok(()));
            Layout::drop_slot(ptr, &mut mem);
        }
    }
    // An untagged null word.
    let mut slot = SlotWord(MaybeUninit::new(core::ptr::null_mut()));
    // SAFETY: the check reads the word and rejects it before using it.
    let err = unsafe { Layout::check_slot(NonNull::from(&mut slot), &mem) };
    assert!(err.unwrap_err().contains("neither tagged"));
    // A leaf holding a value that fits the slot.
    let Ok(leaf) = mem.alloc_leaf(std::alloc::Layout::from_size_align(8, 8).unwrap());
    // SAFETY: a fresh 8-byte leaf; a VarBytes of 3 bytes is a length byte
    // (shifted past the tag bit) and the bytes.
    unsafe {
        leaf.write(3 << 1);
        leaf.add(1)
            .copy_from_nonoverlapping(NonNull::from(b"abc").cast(), 3);
        let mut slot = SlotWord(MaybeUninit::new(leaf.as_ptr()));
        let err = Layout::check_slot(NonNull::from(&mut slot), &mem);
        assert!(err.unwrap_err().contains("fits the slot"));
        mem.free_leaf(leaf, std::alloc::Layout::from_size_align(8, 8).unwrap());
    }
}

/// The insert hint (the slot of the last insert's last-level node) must not
/// outlive a change to the levels above: a removal that frees a node makes
/// its parent shrink, which moves the slot the hint points into.
#[test]
fn insert_hint_is_dropped_when_the_levels_above_change() {
    let mut t = RawTree::<U64Auto>::new();
    let mut model = BTreeMap::new();
    fn insert(t: &mut RawTree<U64Auto>, model: &mut BTreeMap<u64, u64>, k: u64) {
        t.insert(k, k);
        model.insert(k, k);
    }
    // Seventeen last-level nodes under one parent (a node48 class), then
    // keys in order under the last one: the hint now points into the
    // parent.
    for leaf in 0..17u64 {
        insert(&mut t, &mut model, leaf << 8);
    }
    insert(&mut t, &mut model, (16 << 8) | 1);
    // Free leaves until the parent shrinks to a smaller class and moves.
    for leaf in 0..14u64 {
        assert_eq!(t.remove(leaf << 8), Some(leaf << 8));
        model.remove(&(leaf << 8));
    }
    t.verify().unwrap();
    // Keys under the hinted node again: they must land in the live tree.
    for k in 2..40u64 {
        insert(&mut t, &mut model, (16 << 8) | k);
    }
    // A removal inside the hinted node keeps the hint valid.
    assert_eq!(t.remove((16 << 8) | 2), Some((16 << 8) | 2));
    model.remove(&((16 << 8) | 2));
    insert(&mut t, &mut model, (16 << 8) | 41);
    t.verify().unwrap();
    assert!(t.iter().map(|(k, v)| (k, *v)).eq(model.into_iter()));
}
