//! Range values against a key-by-key model: absorb, split, merge, spans,
//! iteration both ways, cursors, clone, drops, and the errors. Sized for
//! Miri.

use std::collections::BTreeMap;

use super::{Span, SpanError};
use crate::raw::test_keys::SplitMix64;
use crate::value::{Embedded, Leaf, VarBytes, Varlen};
use crate::{Config, RawTree, ValueOf};
use test_depth::pick;

use crate::raw::test_keys::ranged_config;

ranged_config!(U32Ranged, u32, Embedded<u64>);
ranged_config!(U64Ranged, u64, Embedded<u64>);
ranged_config!(U32Strings, u32, Leaf<String>);
ranged_config!(U32Bytes, u32, Varlen<VarBytes>);

type Tree = RawTree<U32Ranged>;

/// The tree's keys and values, each key of each range on its own.
fn expanded<C: Config>(t: &RawTree<C>) -> Vec<(C::Key, ValueOf<C>)>
where
    ValueOf<C>: Clone,
{
    t.iter().map(|(k, v)| (k, v.clone())).collect()
}

fn model_pairs(model: &BTreeMap<u32, u64>) -> Vec<(u32, u64)> {
    model.iter().map(|(&k, &v)| (k, v)).collect()
}

/// Checks everything a reader can see against the model.
fn check(t: &Tree, model: &BTreeMap<u32, u64>) {
    check_pairs(t, &model_pairs(model));
}

/// Checks everything a reader can see against the model's pairs, in key
/// order.
fn check_pairs(t: &Tree, model: &[(u32, u64)]) {
    t.verify().unwrap();
    assert_eq!(t.len(), model.len());
    assert_eq!(expanded(t), model);
    // The spans, expanded, are the same keys, each interval of one value.
    let mut from_spans = Vec::new();
    for (keys, &v) in t.spans() {
        for k in keys {
            from_spans.push((k, v));
        }
    }
    assert_eq!(from_spans, model);
    let backwards = t.iter().rev().map(|(k, &v)| (k, v));
    assert!(backwards.eq(model.iter().rev().copied()));
    // Range queries from both ends, with bounds inside ranges and between
    // them, seek as the model does.
    let from = |key: u32| model.partition_point(|&(k, _)| k < key);
    for i in (0..model.len()).step_by(model.len() / 7 + 1) {
        let (lo, hi) = (
            model[i].0.saturating_sub(3),
            model[(i + 40).min(model.len() - 1)].0 + 1,
        );
        let want = &model[from(lo)..from(hi)];
        let got: Vec<_> = t.range(lo..hi).map(|(k, &v)| (k, v)).collect();
        assert_eq!(got, want, "{lo}..{hi}");
        let back = t.range(lo..hi).rev().map(|(k, &v)| (k, v));
        assert!(back.eq(want.iter().rev().copied()), "{lo}..{hi} backwards");
        let mut c = t.cursor_at(lo);
        assert_eq!(c.next().map(|(k, &v)| (k, v)), model.get(from(lo)).copied());
    }
}

#[test]
fn spans_are_aligned_blocks() {
    let s = Span::<u32>::new(0x1_0000, 2).unwrap();
    assert_eq!((s.start(), s.last(), s.level()), (0x1_0000, 0x1_FFFF, 2));
    assert_eq!(s.key_count(), 65_536);
    assert_eq!(s.keys(), 0x1_0000..=0x1_FFFF);
    assert!(s.contains(0x1_8000) && !s.contains(0x2_0000));
    assert_eq!(Span::<u32>::containing(0x1_2345, 2).unwrap(), s);
    assert_eq!(
        Span::<u32>::new(0x1_0001, 2),
        Err(SpanError::Misaligned {
            start: 0x1_0001,
            level: 2
        })
    );
    assert_eq!(Span::<u32>::MAX_LEVEL, 3);
    assert_eq!(
        Span::<u32>::new(0, 4),
        Err(SpanError::TooWide { level: 4, bits: 32 })
    );
    assert_eq!(Span::<u32>::key(9).keys(), 9..=9);
    assert_eq!(format!("{s:?}"), "Span(65536..=131071)");
}

#[test]
#[cfg_attr(
    miri,
    ignore = "65,536-key spans; the random operations cover ranges at Miri size"
)]
fn a_range_answers_for_every_key_and_splits_for_another_value() {
    let mut t = Tree::new();
    let mut model = BTreeMap::new();
    assert_eq!(t.insert_span(Span::new(512, 1).unwrap(), 7), Ok(0));
    model.extend((512..768).map(|k| (k, 7)));
    check(&t, &model);
    assert_eq!(t.stats().ranges, 1);
    assert_eq!(t.get(600), Some(&7));
    assert_eq!(t.get(511), None);
    assert_eq!(t.get_span(767), Some((Span::new(512, 1).unwrap(), &7)));
    // The same value is absorbed: nothing is built.
    assert_eq!(t.insert(700, 7), Some(7));
    assert_eq!(t.stats().ranges, 1);
    // Another value splits the range down to the key.
    assert_eq!(t.insert(700, 9), Some(7));
    model.insert(700, 9);
    check(&t, &model);
    assert_eq!(t.stats().ranges, 0);
    assert_eq!(t.get_span(701), Some((Span::key(701), &7)));
    // Removing a key of a range splits it too.
    t.insert_span(Span::new(0, 2).unwrap(), 1).unwrap();
    model = (0..65_536).map(|k| (k, 1)).collect();
    assert_eq!(t.remove(300), Some(1));
    model.remove(&300);
    check(&t, &model);
    assert_eq!(t.remove(300), None);
    // 255 ranges of level 1 and one split node at the last level.
    assert_eq!(t.stats().ranges, 255);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "65,536-key spans; the random operations cover ranges at Miri size"
)]
fn a_wider_range_replaces_what_it_covers_and_shows_it() {
    let mut t = Tree::new();
    for k in [3u32, 5, 300, 70_000] {
        t.insert(k, u64::from(k));
    }
    t.insert_span(Span::new(256, 1).unwrap(), 4).unwrap();
    let mut seen = Vec::new();
    let had = t
        .insert_span_with_old(Span::new(0, 2).unwrap(), 2, |span, &v| seen.push((span, v)))
        .unwrap();
    // Keys 3 and 5 and the range at 256 (256 keys) had values.
    assert_eq!(had, 258);
    assert_eq!(
        seen,
        [
            (Span::key(3), 3),
            (Span::key(5), 5),
            (Span::new(256, 1).unwrap(), 4)
        ]
    );
    let mut model: BTreeMap<u32, u64> = (0..65_536).map(|k| (k, 2)).collect();
    model.insert(70_000, 70_000);
    check(&t, &model);
    // A narrower range inside it with the same value is absorbed.
    let mut seen = Vec::new();
    let had = t
        .insert_span_with_old(Span::new(512, 1).unwrap(), 2, |span, &v| {
            seen.push((span, v))
        })
        .unwrap();
    assert_eq!((had, seen), (256, vec![(Span::new(512, 1).unwrap(), 2)]));
    check(&t, &model);
    // With another value, the wider range splits around it.
    t.insert_span(Span::new(512, 1).unwrap(), 8).unwrap();
    model.extend((512..768).map(|k| (k, 8)));
    check(&t, &model);
    assert_eq!(t.stats().ranges, 256);
    // A level-0 span is one key.
    assert_eq!(t.insert_span(Span::key(1), 6), Ok(1));
    model.insert(1, 6);
    check(&t, &model);
}

#[test]
fn keys_in_order_of_one_value_merge_into_few_ranges() {
    let n: u32 = pick(1 << 18, 1 << 17, 1 << 10);
    let mut t = Tree::new();
    for k in 0..n {
        t.insert(k, 5);
    }
    t.verify().unwrap();
    assert_eq!(t.len(), n as usize);
    let spans: Vec<_> = t.spans().map(|(keys, &v)| (keys, v)).collect();
    // Every aligned block merged as far up as it goes.
    let want: Vec<_> = if n >= 1 << 16 {
        (0..n >> 16)
            .map(|i| (i << 16..=(i << 16) + 0xFFFF, 5))
            .collect()
    } else {
        (0..n >> 8).map(|i| (i << 8..=(i << 8) + 0xFF, 5)).collect()
    };
    assert_eq!(spans, want);
    let stats = t.stats();
    assert_eq!(stats.ranges, want.len());
    assert!(stats.nodes() <= 3, "{stats}");
    // One key of another value in the middle: only its path splits.
    t.insert(n / 2 + 3, 6);
    t.verify().unwrap();
    assert_eq!(t.get(n / 2 + 3), Some(&6));
    assert_eq!(t.get(n / 2 + 2), Some(&5));
    assert_eq!(t.len(), n as usize);
    // Removing every key in order takes the tree back to nothing.
    for k in 0..n {
        assert!(t.remove(k).is_some(), "{k}");
    }
    t.verify().unwrap();
    assert!(t.is_empty());
    assert_eq!(t.memory_usage(), 0);
}

#[test]
fn a_root_of_one_value_becomes_a_range_under_a_new_root() {
    let mut t = Tree::new();
    for k in 0..256 {
        t.insert(k, 1);
    }
    t.verify().unwrap();
    assert_eq!(t.height(), 2);
    assert_eq!(t.spans().count(), 1);
    // Splitting it again lowers the root back.
    t.insert(7, 2);
    t.verify().unwrap();
    assert_eq!(t.height(), 1);
    assert_eq!(t.stats().ranges, 0);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "65,536-key spans; the random operations cover ranges at Miri size"
)]
fn ranges_under_seeks_bounds_and_cursors() {
    let mut t = Tree::new();
    let mut model = BTreeMap::new();
    t.insert(10, 1);
    t.insert_span(Span::new(256, 1).unwrap(), 2).unwrap();
    t.insert_span(Span::new(0x3_0000, 2).unwrap(), 3).unwrap();
    t.insert(0x5_0000, 4);
    model.insert(10, 1);
    model.extend((256..512).map(|k| (k, 2)));
    model.extend((0x3_0000..0x4_0000).map(|k| (k, 3)));
    model.insert(0x5_0000, 4);
    check(&t, &model);
    for (lo, hi) in [
        (300u32, 400u32),
        (0, 300),
        (400, 0x3_0010),
        (0x3_FFF0, 0x6_0000),
        (511, 512),
    ] {
        let got: Vec<_> = t.range(lo..=hi).map(|(k, &v)| (k, v)).collect();
        let want: Vec<_> = model.range(lo..=hi).map(|(&k, &v)| (k, v)).collect();
        assert_eq!(got, want, "{lo}..={hi}");
        let back: Vec<_> = t.range(lo..hi).rev().map(|(k, &v)| (k, v)).collect();
        let want: Vec<_> = model.range(lo..hi).rev().map(|(&k, &v)| (k, v)).collect();
        assert_eq!(back, want, "{lo}..{hi} backwards");
        let spans: Vec<_> = t.spans_range(lo..=hi).map(|(keys, &v)| (keys, v)).collect();
        assert!(
            spans
                .iter()
                .all(|(keys, _)| lo <= *keys.start() && *keys.end() <= hi)
        );
        let from_spans: Vec<_> = spans
            .iter()
            .flat_map(|(keys, v)| keys.clone().map(move |k| (k, *v)))
            .collect();
        let want: Vec<_> = model.range(lo..=hi).map(|(&k, &v)| (k, v)).collect();
        assert_eq!(from_spans, want, "spans {lo}..={hi}");
    }
    let mut c = t.cursor_at(300);
    assert_eq!(c.next(), Some((300, &2)));
    c.seek(0x3_1234);
    assert_eq!(c.next(), Some((0x3_1234, &3)));
    assert_eq!(c.prev(), Some((0x3_1234, &3)));
    assert_eq!(c.prev(), Some((0x3_1233, &3)));
    c.seek(512);
    assert_eq!(c.next(), Some((0x3_0000, &3)));
    assert_eq!(t.first_key_value(), Some((10, &1)));
    assert_eq!(t.last_key_value(), Some((0x5_0000, &4)));
    let mut wide = RawTree::<U64Ranged>::new();
    wide.insert_span(Span::new(1 << 40, 5).unwrap(), 9).unwrap();
    assert_eq!(wide.last_key_value(), Some(((1 << 40) + (1 << 40) - 1, &9)));
    assert_eq!(wide.len(), 1 << 40);
    assert_eq!(wide.spans().count(), 1);
    wide.verify().unwrap();
}

#[test]
fn a_seeking_walk_of_spans_equals_a_fresh_one() {
    // Keys, a lossy-chunk-like range of level 1, one of level 2 and keys
    // around them; seeks forwards, backwards, into ranges, between keys,
    // past the interval's ends.
    let mut t = Tree::new();
    for k in [3u32, 4, 200, 600, 0x2_0005, 0x2_00FF, 0x4_0000] {
        t.insert(k, u64::from(k));
    }
    t.insert_span(Span::new(256, 1).unwrap(), 7).unwrap();
    t.insert_span(Span::new(0x3_0000, 2).unwrap(), 8).unwrap();
    let probes = [
        0u32, 4, 5, 256, 300, 511, 512, 600, 0x2_0000, 0x2_00FF, 0x3_0000, 0x3_8000, 0x3_FFFF,
        0x4_0000, 0x4_0001, 2, 400,
    ];
    for (lo, hi) in [(0u32, u32::MAX), (4, 0x3_8000), (300, 300)] {
        let mut walk = t.spans_range(lo..=hi);
        for &key in &probes {
            walk.seek(key);
            let got: Vec<_> = walk.clone().map(|(keys, &v)| (keys, v)).collect();
            let want: Vec<_> = if key > hi {
                Vec::new()
            } else {
                t.spans_range(key.max(lo)..=hi)
                    .map(|(keys, &v)| (keys, v))
                    .collect()
            };
            assert_eq!(got, want, "{lo}..={hi}, seek {key}");
            // A step after the seek, then the next seek starts from there.
            walk.next();
        }
    }
    let empty = Tree::new();
    let mut walk = empty.spans();
    walk.seek(5);
    assert_eq!(walk.next(), None);
}

#[test]
fn get_span_mut_changes_the_whole_range() {
    let mut t = Tree::new();
    t.insert_span(Span::new(0, 1).unwrap(), 1).unwrap();
    let (span, v) = t.get_span_mut(42).unwrap();
    assert_eq!(span, Span::new(0, 1).unwrap());
    *v = 3;
    assert!(t.iter().all(|(_, &v)| v == 3));
    assert_eq!(t.len(), 256);
}

#[test]
fn leaf_values_are_copied_on_split_and_dropped_on_merge() {
    let mut t = RawTree::<U32Strings>::new();
    t.insert_span(Span::new(0, 1).unwrap(), "a".to_string())
        .unwrap();
    t.insert(9, "b".to_string());
    t.verify().unwrap();
    assert_eq!(t.get(8).map(String::as_str), Some("a"));
    assert_eq!(t.get(9).map(String::as_str), Some("b"));
    // Back to one value: the node merges, dropping 255 copies.
    t.insert(9, "a".to_string());
    t.verify().unwrap();
    assert_eq!(t.stats().ranges, 1);
    for k in 0..256 {
        t.insert(k, "a".to_string());
    }
    let _ = t.insert(300, "c".to_string());
    t.verify().unwrap();
    let c = t.clone();
    c.verify().unwrap();
    assert!(c.iter().eq(t.iter()));
    assert_eq!(c.stats().ranges, t.stats().ranges);
    drop(t);
    c.verify().unwrap();
}

#[test]
fn varlen_values_range_as_their_bytes() {
    let mut t = RawTree::<U32Bytes>::new();
    let long = VarBytes::new(&[7; 40]).unwrap();
    let short = VarBytes::new(&[1, 2]).unwrap();
    for k in 0..512u32 {
        t.insert(k, if k < 256 { &*long } else { &*short });
    }
    t.verify().unwrap();
    assert_eq!(t.stats().ranges, 2);
    assert_eq!(t.get(17), Some(&*long));
    t.insert(17, &*short);
    t.verify().unwrap();
    assert_eq!(t.get(16), Some(&*long));
    assert_eq!(t.get(17), Some(&*short));
    assert_eq!(t.len(), 512);
}

#[test]
fn too_many_keys_is_refused_and_changes_nothing() {
    let mut t = RawTree::<U64Ranged>::new();
    for i in 0..255u64 {
        t.insert_span(Span::new(i << 56, 7).unwrap(), i).unwrap();
    }
    let before = t.len();
    assert_eq!(
        t.insert_span(Span::new(255 << 56, 7).unwrap(), 0),
        Err(SpanError::TooManyKeys)
    );
    assert_eq!(t.len(), before);
    t.verify().unwrap();
}

#[test]
fn random_operations_match_a_key_by_key_model() {
    let rounds = pick(60, 20, 1);
    let steps = pick(400, 200, 30);
    // Keys below 2^9 under Miri (levels 1 only), 2^18 otherwise.
    let bits: u32 = pick(18, 18, 9);
    let mut rng = SplitMix64(0x5EED_0001);
    for _ in 0..rounds {
        let mut t = Tree::new();
        // The model is one slot per key: a level-2 range is 65,536 keys,
        // which a `BTreeMap` model took most of this test's time to insert,
        // count and walk.
        let mut model: Vec<Option<u64>> = vec![None; 1 << bits];
        let pairs = |model: &[Option<u64>]| -> Vec<(u32, u64)> {
            (0u32..)
                .zip(model)
                .filter_map(|(k, v)| v.map(|v| (k, v)))
                .collect()
        };
        for step in 0..steps {
            let key = (rng.next() as u32) & ((1 << bits) - 1);
            let value = rng.next() % 3;
            match rng.next() % 10 {
                0..=3 => {
                    assert_eq!(t.insert(key, value), model[key as usize].replace(value));
                }
                4..=5 => {
                    assert_eq!(t.remove(key), model[key as usize].take());
                }
                6..=7 => {
                    let level = 1 + (rng.next() % u64::from((bits - 1) / 8).max(1)) as u32;
                    let span = Span::containing(key, level).unwrap();
                    let slots = &mut model[span.start() as usize..=span.last() as usize];
                    let had = slots.iter().filter(|v| v.is_some()).count();
                    assert_eq!(t.insert_span(span, value), Ok(had));
                    slots.fill(Some(value));
                }
                _ => {
                    assert_eq!(t.get(key), model[key as usize].as_ref());
                    if let Some((span, v)) = t.get_span(key) {
                        assert!(span.contains(key));
                        assert!(span.keys().all(|k| model[k as usize] == Some(*v)));
                    }
                }
            }
            if step % pick(50, 50, 15) == 0 {
                check_pairs(&t, &pairs(&model));
            }
        }
        check_pairs(&t, &pairs(&model));
    }
}

/// A tree of random keys and ranges (levels 1 and 2 where `bits` allows),
/// and its key-by-key model.
fn random_ranged_tree(rng: &mut SplitMix64, bits: u32, ops: usize) -> (Tree, DenseModel) {
    let mut t = Tree::new();
    let mut model = vec![None; 1 << bits];
    for _ in 0..ops {
        let key = (rng.next() as u32) & ((1 << bits) - 1);
        let value = rng.next() % 3;
        if rng.next().is_multiple_of(4) {
            // Level 2 (65,536 keys for the model) one time in eight.
            let level = if bits > 16 && rng.next().is_multiple_of(8) {
                2
            } else {
                1
            };
            let span = Span::containing(key, level).unwrap();
            t.insert_span(span, value).unwrap();
            model[span.start() as usize..=span.last() as usize].fill(Some(value));
        } else {
            t.insert(key, value);
            model[key as usize] = Some(value);
        }
    }
    (t, model)
}

/// A model of a tree of small keys: the value of each key, by key. A span
/// is a slice fill, where a `BTreeMap` took one insert a key (most of the
/// test's time under Miri).
type DenseModel = Vec<Option<u64>>;

/// The keys both models hold, with both values.
fn common_keys(a: &DenseModel, b: &DenseModel) -> Vec<(u32, u64, u64)> {
    let keys = 0u32..;
    keys.zip(a.iter().zip(b))
        .filter_map(|(k, pair)| match pair {
            (Some(x), Some(y)) => Some((k, *x, *y)),
            _ => None,
        })
        .collect()
}

/// What `for_each_overlap` gave, key by key, checking as it goes that the
/// intervals ascend without overlapping and lie in both sides' spans, and
/// that each span is the one `get_span` names.
fn overlaps_by_key(a: &Tree, b: &Tree) -> Vec<(u32, u64, u64)> {
    let mut out = Vec::new();
    let mut next: Option<u32> = Some(0);
    a.for_each_overlap(b, |keys, (our_span, ours), (their_span, theirs)| {
        let (low, high) = (*keys.start(), *keys.end());
        assert!(next.is_some_and(|n| low >= n), "{keys:?} after {next:?}");
        next = high.checked_add(1);
        for (span, tree) in [(our_span, a), (their_span, b)] {
            assert!(
                span.contains(low) && span.contains(high),
                "{keys:?} in {span:?}"
            );
            assert_eq!(tree.get_span(low).map(|(s, _)| s), Some(span));
        }
        out.extend(keys.map(|k| (k, *ours, *theirs)));
    });
    out
}

#[test]
fn overlaps_of_two_trees_equal_the_models_common_keys() {
    let rounds = pick(40, 6, 2);
    let ops = pick(300, 200, 25);
    // Keys below 2^9 under Miri (ranges of level 1 only), 2^18 otherwise;
    // trees of different heights too.
    let mut rng = SplitMix64(0x5EED_0771);
    for round in 0..rounds {
        let (bits_a, bits_b) = match round % 3 {
            0 => (pick(18, 18, 9), pick(18, 18, 9)),
            1 => (pick(18, 18, 9), pick(10, 10, 9)),
            _ => (9, pick(18, 18, 10)),
        };
        let (a, ma) = random_ranged_tree(&mut rng, bits_a, ops);
        let (b, mb) = random_ranged_tree(&mut rng, bits_b, ops);
        let want = common_keys(&ma, &mb);
        assert_eq!(overlaps_by_key(&a, &b), want, "round {round}");
        let flipped: Vec<(u32, u64, u64)> = want.iter().map(|&(k, x, y)| (k, y, x)).collect();
        assert_eq!(overlaps_by_key(&b, &a), flipped, "round {round}, flipped");
    }
    // A range at the root's level of one tree against the whole of the
    // other; an empty tree against anything.
    let mut wide = Tree::new();
    wide.insert_span(Span::new(0, 2).unwrap(), 9).unwrap();
    let (b, mb) = random_ranged_tree(&mut rng, 9, ops);
    let want = common_keys(&vec![Some(9); mb.len()], &mb);
    assert_eq!(overlaps_by_key(&wide, &b), want);
    assert!(overlaps_by_key(&Tree::new(), &b).is_empty());
    assert!(overlaps_by_key(&b, &Tree::new()).is_empty());
}

#[test]
fn overlaps_of_compressed_trees_seek_their_way() {
    crate::raw::test_keys::test_config!(
        PathU64,
        u64,
        Embedded<u64>,
        crate::SizeClasses::DEFAULT,
        Path
    );
    let mut rng = SplitMix64(0x5EED_0772);
    let n = pick(2000, 2000, 40);
    let mut a = RawTree::<PathU64>::new();
    let mut b = RawTree::<PathU64>::new();
    let mut want = Vec::new();
    for i in 0..n {
        // Dense runs, far keys, and keys on one side only.
        let k = if i % 3 == 0 { rng.next() } else { i * 7 };
        a.insert(k, i);
        if i % 2 == 0 {
            b.insert(k, i + 1);
        }
    }
    for (k, &va) in a.iter() {
        if let Some(&vb) = b.get(k) {
            want.push((k, va, vb));
        }
    }
    let mut got = Vec::new();
    a.for_each_overlap(&b, |keys, (s, ours), (t, theirs)| {
        assert_eq!((s, t), (Span::key(*keys.start()), Span::key(*keys.end())));
        got.push((*keys.start(), *ours, *theirs));
    });
    assert_eq!(got, want);
}

#[test]
fn batches_answer_as_get_does_under_ranges() {
    // A small tree (one key at a time, tables, selects) and one over
    // 1 MiB (pipelined walks), each with ranges at every level.
    for n in [pick(3_000u32, 3_000, 300), pick(300_000, 300_000, 600)] {
        let mut t = Tree::new();
        for k in 0..n {
            t.insert(k * 3, u64::from(k % 7));
        }
        t.insert_span(Span::new(0x10_0000, 1).unwrap(), 8).unwrap();
        t.insert_span(Span::new(0x20_0000, 2).unwrap(), 9).unwrap();
        t.insert_span(Span::new(0x100_0000, 3).unwrap(), 10)
            .unwrap();
        t.verify().unwrap();
        let mut rng = SplitMix64(n.into());
        let mut probes: Vec<u32> = (0..pick(20_000, 20_000, 200))
            .map(|i| match i % 4 {
                0 => rng.next() as u32 % (3 * n),
                1 => 0x10_0000 + rng.next() as u32 % 0x400,
                2 => 0x20_0000 + rng.next() as u32 % 0x2_0000,
                _ => rng.next() as u32 % 0x200_0000,
            })
            .collect();
        let ascending: Vec<u32> = (0x1F_FFF0..pick(0x20_0100, 0x20_0100, 0x20_0010)).collect();
        probes.extend(ascending);
        let mut got = Vec::new();
        t.get_each(&probes, |&k| k, |&k, v| got.push((k, v.copied())));
        let want: Vec<_> = probes.iter().map(|&k| (k, t.get(k).copied())).collect();
        assert_eq!(got, want, "n = {n}");
    }
}

/// A regression test, from the `tree_ranges` fuzz harness: replacing a
/// subtree under a slot below a non-zero chunk showed its old keys without
/// the chunks above the slot (key `0x6506_0DF4` under the span
/// `0x6500_0000..=0x65FF_FFFF` was shown as `0x0006_0DF4`), because the
/// walk of the subtree starts its keys at zero.
#[test]
fn old_values_are_shown_with_their_whole_keys() {
    let mut t = Tree::new();
    t.insert(25_347, 20); // far below the span: kept, not shown
    t.insert(0x6506_0DF4, 1);
    t.insert(0x65FF_FFFF, 2);
    t.insert_span(Span::new(0x6512_3400, 1).unwrap(), 3)
        .unwrap();
    let span = Span::new(0x6500_0000, 3).unwrap();
    let mut shown = Vec::new();
    let had = t
        .insert_span_with_old(span, 5, |s, v| shown.push((s, *v)))
        .unwrap();
    assert_eq!(had, 2 + 256);
    shown.sort_by_key(|(s, _)| s.start());
    assert_eq!(
        shown,
        [
            (Span::key(0x6506_0DF4), 1),
            (Span::new(0x6512_3400, 1).unwrap(), 3),
            (Span::key(0x65FF_FFFF), 2),
        ]
    );
    assert_eq!(t.get(25_347), Some(&20));
    t.verify().unwrap();
}

/// `last_level_keys` reads each node kind's chunks (4, 32, 64 and 256
/// children), and answers `None` where a range value holds the keys or no
/// node does.
#[test]
fn last_level_keys_of_each_kind_and_of_a_range() {
    let mut t = RawTree::<U32Ranged>::new();
    let mut expected = Vec::new();
    for (node, count) in [3u32, 20, 50, 200].into_iter().enumerate() {
        let first = node as u32 * 256;
        let mut held = [0u64; 4];
        for i in 0..count {
            let chunk = (i * 97 + node as u32) % 256;
            t.insert(first + chunk, u64::from(chunk));
            held[chunk as usize / 64] |= 1 << (chunk % 64);
        }
        expected.push((first, held));
    }
    for &(first, held) in &expected {
        assert_eq!(t.last_level_keys(first), Some(held), "node at {first}");
    }
    assert_eq!(t.last_level_keys(4 * 256), None, "no node there");
    assert_eq!(t.last_level_keys(1 << 24), None, "above the root");
    t.insert_span(Span::new(256, 1).unwrap(), 9).unwrap();
    assert_eq!(t.last_level_keys(256), None, "a range holds them");
    assert_eq!(t.last_level_keys(0), Some(expected[0].1));
}
