//! The API `radix_tree!` generates, exercised for several configurations:
//! every method, the trait implementations and the iterator aliases.

use std::collections::BTreeMap;

use radix_core::mem::LocalMemory;
use radix_core::value::VarBytes;
use radix_core::{Config, SizeClasses, radix_tree};

radix_tree! {
    /// Block numbers to visibility bits: the default configuration.
    pub struct BlockMap {
        key: u32,
        value: u64,
    }
}

radix_tree! {
    /// Three-byte values embedded in the slot word.
    pub(crate) struct Tiny {
        key: u16,
        value: [u8; 3],
        layout: embedded,
    }
}

radix_tree! {
    /// Owned strings in leaves: values with `Drop`.
    struct Names {
        value: String,
        key: u64,
        layout: leaf,
    }
}

/// A 24-byte value stored inline in leaf nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Extent {
    start: u64,
    len: u64,
    flags: u64,
}

radix_tree! {
    /// Extents by 128-bit id, inline, with custom size classes.
    pub struct Extents {
        key: u128,
        value: Extent,
        layout: inline,
        size_classes: [3, 16, 48, 256],
    }
}

radix_tree! {
    /// Variable-length byte strings.
    pub struct Strings {
        key: u64,
        value: VarBytes,
        layout: varlen,
    }
}

radix_tree! {
    /// An insert-only tree.
    #[allow(dead_code)]
    pub struct Append {
        key: u64,
        value: u64,
        delete: false,
    }
}

radix_tree! {
    // No docs at all, a u8 key and every optional field spelled out.
    pub struct Bytes {
        key: u8,
        value: u16,
        layout: auto,
        memory: local,
        size_classes: [4, 16, 32, 64, 256],
        delete: true,
    }
}

static_assertions::assert_impl_all!(BlockMap: Default, core::fmt::Debug);

// Values that are Send + Sync make a Send + Sync tree (DESIGN.md, decision 6).
static_assertions::assert_impl_all!(BlockMap: Send, Sync);
static_assertions::assert_impl_all!(Append: Send, Sync);
static_assertions::assert_impl_all!(Strings: Send, Sync);
static_assertions::assert_impl_all!(Extents: Send, Sync);
// A value that is not Sync makes a tree that is not Sync.
radix_tree! {
    struct Cells {
        key: u32,
        value: std::cell::Cell<u32>,
    }
}
static_assertions::assert_impl_all!(Cells: Send);
static_assertions::assert_not_impl_any!(Cells: Sync);

/// Keys spread over several levels, some dense, some sparse.
fn keys(n: u64) -> Vec<u64> {
    (0..n)
        .map(|i| {
            if i % 3 == 0 {
                i
            } else {
                i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40
            }
        })
        .collect()
}

#[test]
fn default_configuration_u32_u64() {
    let mut m = BlockMap::new();
    let mut model = BTreeMap::new();
    assert!(m.is_empty());
    assert_eq!(m.len(), 0);
    assert_eq!(m.memory_usage(), 0);
    assert_eq!(m.first_key_value(), None);
    assert_eq!(m.last_key_value(), None);
    assert_eq!(format!("{m:?}"), "{}");
    m.verify().unwrap();

    for k in keys(3000) {
        let k = k as u32;
        assert_eq!(
            m.insert(k, u64::from(k) * 2),
            model.insert(k, u64::from(k) * 2)
        );
    }
    m.verify().unwrap();
    assert_eq!(m.len(), model.len());
    assert!(!m.is_empty());
    assert!(m.memory_usage() > 0);
    for (&k, &v) in &model {
        assert_eq!(m.get(k), Some(&v));
        assert!(m.contains_key(k));
    }
    assert_eq!(m.get(u32::MAX), None);
    assert!(!m.contains_key(u32::MAX));

    *m.get_mut(3).unwrap() += 1;
    *model.get_mut(&3).unwrap() += 1;
    assert_eq!(m.get_mut(u32::MAX), None);
    assert_eq!(m.get(3), Some(&7));

    assert!(
        m.iter()
            .map(|(k, &v)| (k, v))
            .eq(model.iter().map(|(&k, &v)| (k, v)))
    );
    assert_eq!(m.iter().len(), model.len());
    assert!(m.keys().eq(model.keys().copied()));
    assert!(m.values().eq(model.values()));
    assert!(
        m.range(100..5000)
            .map(|(k, _)| k)
            .eq(model.range(100..5000).map(|(&k, _)| k))
    );
    assert!(
        m.range(..=300)
            .map(|(k, _)| k)
            .eq(model.range(..=300).map(|(&k, _)| k))
    );
    let (start, end) = (10, 5);
    assert_eq!(m.range(start..end).count(), 0);
    assert_eq!(
        m.first_key_value().map(|(k, &v)| (k, v)),
        model.first_key_value().map(|(&k, &v)| (k, v))
    );
    assert_eq!(
        m.last_key_value().map(|(k, &v)| (k, v)),
        model.last_key_value().map(|(&k, &v)| (k, v))
    );

    let stats = m.stats();
    assert_eq!(stats.keys, model.len());
    assert_eq!(stats.layout, "embedded");
    assert_eq!(stats.leaves, 0);
    assert_eq!(stats.classes.len(), 5);
    assert_eq!(stats.memory_bytes, m.memory_usage());
    assert_eq!(m.as_raw().len(), m.len());

    for k in keys(3000).into_iter().step_by(2) {
        let k = k as u32;
        assert_eq!(m.remove(k), model.remove(&k));
    }
    assert_eq!(m.remove(u32::MAX), None);
    m.verify().unwrap();
    assert_eq!(m.len(), model.len());

    m.clear();
    assert!(m.is_empty());
    assert_eq!(m.memory_usage(), 0);
    m.verify().unwrap();
}

#[test]
fn caller_built_memory() {
    let specs = BlockMap::pool_specs();
    assert_eq!(specs, radix_core::RawTree::<BlockMapConfig>::pool_specs());
    let mut m = BlockMap::with_memory(LocalMemory::with_pools(&specs));
    m.extend((0..5000u32).map(|k| (k * 7, u64::from(k))));
    m.verify().unwrap();
    assert_eq!(m.len(), 5000);
    assert_eq!(m.get(7 * 4999), Some(&4999));
}

#[test]
fn iterator_aliases_name_the_iterators() {
    let m: BlockMap = [(1, 10), (2, 20), (300, 3000)].into_iter().collect();
    let it: BlockMapIter<'_> = m.iter();
    let range: BlockMapRange<'_> = m.range(2..);
    let keys: BlockMapKeys<'_> = m.keys();
    let values: BlockMapValues<'_> = m.values();
    assert_eq!(it.count(), 3);
    assert_eq!(range.count(), 2);
    assert_eq!(keys.collect::<Vec<_>>(), [1, 2, 300]);
    assert_eq!(values.copied().collect::<Vec<_>>(), [10, 20, 3000]);
}

#[test]
fn traits_default_debug_extend_from_iter_into_iter() {
    let mut m = BlockMap::default();
    assert!(m.is_empty());
    m.extend([(5, 50), (1, 10)]);
    m.extend(vec![(300, 3), (1, 11)]);
    assert_eq!(format!("{m:?}"), "{1: 11, 5: 50, 300: 3}");

    let mut seen = Vec::new();
    for (k, v) in &m {
        seen.push((k, *v));
    }
    assert_eq!(seen, [(1, 11), (5, 50), (300, 3)]);

    let collected: BlockMap = (0..1000u32).map(|k| (k, u64::from(k))).collect();
    assert_eq!(collected.len(), 1000);
    collected.verify().unwrap();
}

#[test]
fn config_constants_follow_the_declaration() {
    assert_eq!(BlockMapConfig::SIZE_CLASSES, SizeClasses::DEFAULT);
    const { assert!(BlockMapConfig::DELETE) };
    const { assert!(!AppendConfig::DELETE) };
    assert_eq!(
        ExtentsConfig::SIZE_CLASSES.capacities(),
        &[3, 16, 48, 256][..]
    );
    assert_eq!(BytesConfig::SIZE_CLASSES, SizeClasses::DEFAULT);
}

#[test]
fn embedded_u16_three_bytes() {
    let mut m = Tiny::new();
    let mut model = BTreeMap::new();
    for k in 0..2000u16 {
        let k = k.wrapping_mul(37);
        let v = [k as u8, (k >> 8) as u8, 7];
        assert_eq!(m.insert(k, v), model.insert(k, v));
    }
    m.verify().unwrap();
    assert_eq!(m.len(), model.len());
    assert_eq!(m.get(37), Some(&[37, 0, 7]));
    m.get_mut(37).unwrap()[2] = 9;
    assert_eq!(m.get(37), Some(&[37, 0, 9]));
    model.insert(37, [37, 0, 9]);
    assert!(m.contains_key(74));
    assert!(
        m.iter()
            .map(|(k, v)| (k, *v))
            .eq(model.iter().map(|(&k, &v)| (k, v)))
    );
    assert!(m.keys().eq(model.keys().copied()));
    assert!(m.values().eq(model.values()));
    assert!(
        m.range(1000..=u16::MAX)
            .map(|(k, _)| k)
            .eq(model.range(1000..).map(|(&k, _)| k))
    );
    assert_eq!(m.first_key_value(), Some((0, &[0, 0, 7])));
    let (&last, last_v) = model.last_key_value().unwrap();
    assert_eq!(m.last_key_value(), Some((last, last_v)));
    let stats = m.stats();
    assert_eq!(stats.layout, "embedded");
    assert_eq!(stats.leaves, 0);
    assert_eq!(m.as_raw().len(), model.len());
    assert!(format!("{m:?}").starts_with("{0: [0, 0, 7], "));
    for k in model.keys().copied().collect::<Vec<_>>() {
        assert_eq!(m.remove(k), model.remove(&k));
    }
    assert!(m.is_empty());
    assert_eq!(m.memory_usage(), 0);
    m.extend([(1, [1, 2, 3])]);
    let m2: Tiny = [(2, [0; 3])].into_iter().collect();
    assert_eq!(m.len() + m2.len(), 2);
    m.clear();
    m.verify().unwrap();
    let _: Tiny = Tiny::default();
}

#[test]
fn leaf_u64_strings_drop_values() {
    let mut m = Names::new();
    let mut model = BTreeMap::new();
    for k in keys(1500) {
        let v = format!("value {k}");
        assert_eq!(m.insert(k, v.clone()), model.insert(k, v));
    }
    m.verify().unwrap();
    assert_eq!(m.len(), model.len());
    assert_eq!(m.get(3).map(String::as_str), Some("value 3"));
    m.get_mut(3).unwrap().push('!');
    model.get_mut(&3).unwrap().push('!');
    assert_eq!(m.insert(3, "three".into()), Some("value 3!".into()));
    model.insert(3, "three".into());
    assert!(m.contains_key(3));
    assert!(m.iter().eq(model.iter().map(|(&k, v)| (k, v))));
    assert!(m.keys().eq(model.keys().copied()));
    assert!(m.values().eq(model.values()));
    assert!(
        m.range(50..1_000_000)
            .map(|(k, _)| k)
            .eq(model.range(50..1_000_000).map(|(&k, _)| k))
    );
    assert_eq!(
        m.first_key_value(),
        model.first_key_value().map(|(&k, v)| (k, v))
    );
    assert_eq!(
        m.last_key_value(),
        model.last_key_value().map(|(&k, v)| (k, v))
    );
    let stats = m.stats();
    assert_eq!(stats.layout, "leaf");
    assert_eq!(stats.leaves, model.len());
    assert!(m.memory_usage() > 0);
    assert_eq!(m.as_raw().len(), model.len());
    for k in keys(1500).into_iter().step_by(3) {
        assert_eq!(m.remove(k), model.remove(&k));
    }
    m.verify().unwrap();

    let mut small: Names = [(2, "b".to_string()), (1, "a".to_string())]
        .into_iter()
        .collect();
    small.extend([(3, "c".to_string())]);
    assert_eq!(format!("{small:?}"), r#"{1: "a", 2: "b", 3: "c"}"#);
    assert_eq!((&small).into_iter().count(), 3);
    small.clear();
    assert_eq!(small.memory_usage(), 0);
    // Dropping `m` with values still in it frees them (checked by Miri and
    // the allocation-accounting tests; here it must simply not crash).
    drop(m);
    let _ = Names::default();
}

#[test]
fn inline_u128_struct_custom_classes() {
    let mut m = Extents::new();
    let mut model = BTreeMap::new();
    let extent = |i: u64| Extent {
        start: i,
        len: i * 2,
        flags: !i,
    };
    for i in 0..2500u64 {
        let k = (u128::from(i) << 64) | u128::from(i % 300);
        assert_eq!(m.insert(k, extent(i)), model.insert(k, extent(i)));
    }
    for i in 0..100u64 {
        let k = u128::from(i * 7);
        assert_eq!(m.insert(k, extent(i)), model.insert(k, extent(i)));
    }
    m.verify().unwrap();
    assert_eq!(m.len(), model.len());
    let k = (5u128 << 64) | 5;
    assert_eq!(m.get(k), Some(&extent(5)));
    m.get_mut(k).unwrap().flags = 0;
    model.get_mut(&k).unwrap().flags = 0;
    assert!(m.contains_key(k));
    assert!(!m.contains_key(u128::MAX));
    assert!(m.iter().eq(model.iter().map(|(&k, v)| (k, v))));
    assert!(m.keys().eq(model.keys().copied()));
    assert!(m.values().eq(model.values()));
    let lo = 3u128 << 64;
    let hi = 900u128 << 64;
    assert!(
        m.range(lo..hi)
            .eq(model.range(lo..hi).map(|(&k, v)| (k, v)))
    );
    assert_eq!(
        m.first_key_value(),
        model.first_key_value().map(|(&k, v)| (k, v))
    );
    assert_eq!(
        m.last_key_value(),
        model.last_key_value().map(|(&k, v)| (k, v))
    );

    let stats = m.stats();
    assert_eq!(stats.layout, "inline");
    assert_eq!(stats.leaves, 0);
    assert_eq!(
        stats.classes.iter().map(|c| c.capacity).collect::<Vec<_>>(),
        [3, 16, 48, 256]
    );
    assert_eq!(m.as_raw().len(), model.len());

    for i in (0..2500u64).step_by(2) {
        let k = (u128::from(i) << 64) | u128::from(i % 300);
        assert_eq!(m.remove(k), model.remove(&k));
    }
    m.verify().unwrap();
    assert_eq!(m.len(), model.len());

    let mut small: Extents = [(1, extent(1))].into_iter().collect();
    small.extend([(u128::MAX, extent(2))]);
    assert_eq!(
        format!("{small:?}"),
        format!("{{1: {:?}, {}: {:?}}}", extent(1), u128::MAX, extent(2))
    );
    for (k, v) in &small {
        assert_eq!(small.get(k), Some(v));
    }
    m.clear();
    assert!(m.is_empty());
    assert_eq!(m.memory_usage(), 0);
    let _ = Extents::default();
}

#[test]
fn varlen_u64_var_bytes() {
    let bytes = |k: u64| -> Vec<u8> { (0..(k % 20) as u8).collect() };
    let mut m = Strings::new();
    let mut model = BTreeMap::new();
    for k in keys(2000) {
        let v = VarBytes::new(&bytes(k)).unwrap();
        assert_eq!(m.insert(k, &v), model.insert(k, bytes(k)).is_some());
    }
    m.verify().unwrap();
    assert_eq!(m.len(), model.len());
    for (&k, v) in &model {
        assert_eq!(m.get(k).unwrap().as_bytes(), &v[..]);
    }
    // Replacing moves a value between embedded and leaf in both directions.
    let long = VarBytes::new(b"a long value, stored in a leaf").unwrap();
    let short = VarBytes::new(b"ab").unwrap();
    assert!(m.contains_key(0));
    assert!(m.insert(0, &long));
    assert_eq!(m.get(0).unwrap().as_bytes(), long.as_bytes());
    assert!(m.insert(0, &short));
    assert_eq!(m.get(0), Some(&*short));
    assert!(m.insert(0, &long));
    assert_eq!(m.get(0), Some(&*long));
    model.insert(0, long.as_bytes().to_vec());
    m.verify().unwrap();
    assert!(
        m.iter()
            .map(|(k, v)| (k, v.as_bytes()))
            .eq(model.iter().map(|(&k, v)| (k, &v[..])))
    );
    assert!(m.keys().eq(model.keys().copied()));
    assert!(
        m.values()
            .map(VarBytes::as_bytes)
            .eq(model.values().map(|v| &v[..]))
    );
    assert!(
        m.range(10..=10_000)
            .map(|(k, _)| k)
            .eq(model.range(10..=10_000).map(|(&k, _)| k))
    );
    let (fk, fv) = m.first_key_value().unwrap();
    assert_eq!(
        (fk, fv.as_bytes()),
        model.first_key_value().map(|(&k, v)| (k, &v[..])).unwrap()
    );
    let (lk, lv) = m.last_key_value().unwrap();
    assert_eq!(
        (lk, lv.as_bytes()),
        model.last_key_value().map(|(&k, v)| (k, &v[..])).unwrap()
    );
    let stats = m.stats();
    assert_eq!(stats.layout, "varlen");
    assert!(stats.leaves > 0 && stats.leaves < model.len());
    assert_eq!(m.as_raw().len(), model.len());

    for k in keys(2000).into_iter().step_by(2) {
        assert_eq!(m.remove(k), model.remove(&k).is_some());
    }
    assert!(!m.remove(u64::MAX));
    m.verify().unwrap();

    let a = VarBytes::new(b"a").unwrap();
    let b = VarBytes::new(b"bbbbbbbbbbbb").unwrap();
    let mut small: Strings = [(2, &*b), (1, &*a)].into_iter().collect();
    small.extend([(3, &*a)]);
    assert_eq!(
        format!("{small:?}"),
        "{1: VarBytes([97]), 2: VarBytes([98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98]), 3: VarBytes([97])}"
    );
    let mut n = 0;
    for (_, v) in &small {
        n += v.as_bytes().len();
    }
    assert_eq!(n, 14);
    m.clear();
    assert_eq!(m.memory_usage(), 0);
    let _ = Strings::default();
}

#[test]
fn insert_only_tree() {
    let mut m = Append::new();
    for k in keys(1000) {
        m.insert(k, k);
    }
    m.verify().unwrap();
    assert_eq!(m.get(3), Some(&3));
    *m.get_mut(3).unwrap() = 4;
    assert_eq!(m.get(3), Some(&4));
    assert!(m.contains_key(3));
    assert_eq!(m.iter().count(), m.len());
    assert_eq!(m.keys().count(), m.len());
    assert_eq!(m.values().count(), m.len());
    assert_eq!(m.range(..10).count(), 4);
    assert_eq!(m.first_key_value(), Some((0, &0)));
    assert!(m.last_key_value().is_some());
    assert!(m.stats().nodes() > 0);
    assert!(m.memory_usage() > 0);
    assert!(!m.as_raw().is_empty());
    m.extend([(u64::MAX, 1)]);
    assert_eq!(format!("{:?}", Append::from_iter([(1, 2)])), "{1: 2}");
    assert_eq!((&m).into_iter().count(), m.len());
    m.clear();
    assert!(m.is_empty());
    let _ = Append::default();
}

#[test]
fn u8_keys_and_explicit_defaults() {
    let mut m: Bytes = (0..=255u8).map(|k| (k, u16::from(k) * 3)).collect();
    m.verify().unwrap();
    assert_eq!(m.len(), 256);
    assert_eq!(m.stats().height, 1);
    assert_eq!(m.get(255), Some(&765));
    assert_eq!(m.range(250..).count(), 6);
    for k in 0..=255u8 {
        assert_eq!(m.remove(k), Some(u16::from(k) * 3));
    }
    assert_eq!(m.memory_usage(), 0);
}

/// A value without `Debug`: the tree is simply not `Debug`.
struct Opaque(#[allow(dead_code)] u32);

radix_tree! {
    /// A tree of non-`Debug` values still compiles.
    struct OpaqueMap {
        key: u32,
        value: Opaque,
    }
}

static_assertions::assert_not_impl_any!(OpaqueMap: core::fmt::Debug);

#[test]
fn non_debug_values() {
    let mut m = OpaqueMap::new();
    m.insert(1, Opaque(2));
    assert_eq!(m.get(1).map(|o| o.0), Some(2));
}

#[test]
fn declared_inside_a_function() {
    radix_tree! {
        struct Local {
            key: u64,
            value: u8,
            layout: inline,
        }
    }
    let mut m = Local::new();
    m.insert(1 << 40, 1);
    assert_eq!(m.get(1 << 40), Some(&1));
    assert_eq!(m.stats().layout, "inline");
}

// ------------------------------------------------------------ compression

radix_tree! {
    /// Sparse `u64` ids, uncompressed: the baseline the others save on.
    struct Plain64 { key: u64, value: u64, compression: none }
}

radix_tree! {
    /// Sparse `u64` ids with lazy leaves.
    struct Lazy64 { key: u64, value: u64, compression: lazy }
}

radix_tree! {
    /// Sparse `u64` ids with path compression.
    struct Path64 { key: u64, value: u64, compression: path }
}

radix_tree! {
    /// Sparse `u64` ids with both.
    struct Full64 { key: u64, value: u64, compression: full }
}

radix_tree! {
    /// UUID-like keys, uncompressed.
    struct Plain128 { key: u128, value: u64, compression: none }
}

radix_tree! {
    /// UUID-like keys with lazy leaves, in leaf nodes of their own.
    struct Lazy128 { key: u128, value: u64, layout: inline, compression: lazy }
}

radix_tree! {
    /// UUID-like keys with path compression, each value in a leaf.
    struct Path128 { key: u128, value: u64, layout: leaf, compression: path }
}

radix_tree! {
    /// UUID-like keys with both, and few size classes.
    struct Full128 {
        compression: full,
        key: u128,
        value: u64,
        size_classes: [2, 16, 256],
    }
}

radix_tree! {
    /// Owned strings in a fully compressed tree: lazy leaves must drop them.
    struct FullNames { key: u64, value: String, layout: leaf, compression: full }
}

radix_tree! {
    /// Variable-length values in lazy leaves and path-compressed nodes.
    struct FullStrings { key: u32, value: VarBytes, layout: varlen, compression: full }
}

radix_tree! {
    /// A fully compressed insert-only tree.
    struct FullAppend { key: u64, value: u64, delete: false, compression: full }
}

radix_tree! {
    /// A fully compressed tree in a shared area.
    struct SharedFull { key: u64, value: u64, memory: shared, compression: full }
}

radix_tree! {
    /// Shaped as `SharedFull` but for its compression, so it must not
    /// attach to a `SharedFull` tree.
    struct SharedPlain { key: u64, value: u64, memory: shared, compression: none }
}

/// A `u64` hash of `i`, so that keys share few leading bytes.
fn mix(i: u64) -> u64 {
    let x = i.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^ (x >> 29)
}

/// Sparse `u64` keys: hashed ids (lazy leaves and long skipped prefixes),
/// a dense run (full nodes at the last level), a pair that parts only in
/// the lowest byte and the extremes.
fn sparse_u64(n: u64) -> Vec<u64> {
    let mut keys: Vec<u64> = (0..n).map(mix).collect();
    keys.extend(0..200);
    keys.extend([0xABCD_0000_0000_0100, 0xABCD_0000_0000_0101, u64::MAX]);
    keys
}

/// UUID-like `u128` keys, with small keys, a shared 15-byte prefix and the
/// extremes.
fn sparse_u128(n: u64) -> Vec<u128> {
    let mut keys: Vec<u128> = (0..n)
        .map(|i| (u128::from(mix(i)) << 64) | u128::from(mix(i + n)))
        .collect();
    keys.extend((0..100u32).map(|i| u128::from(i) * 3));
    keys.extend((0..20u128).map(|i| (0x1234 << 112) | i));
    keys.push(u128::MAX);
    keys
}

/// Declares `fn $name(keys) -> Stats` that drives a `u64`-valued tree type
/// through the whole generated API against a `BTreeMap` and returns the
/// statistics of the full tree: the types have no common trait, and each
/// compression mode needs the same checks.
macro_rules! exercise_fn {
    ($name:ident, $tree:ident, $key:ty) => {
        fn $name(keys: &[$key]) -> radix_core::Stats {
            let mut m = $tree::new();
            let mut model = BTreeMap::new();
            for (i, &k) in keys.iter().enumerate() {
                assert_eq!(m.insert(k, i as u64), model.insert(k, i as u64));
            }
            m.verify().unwrap();
            assert_eq!(m.len(), model.len());
            for (&k, &v) in &model {
                assert_eq!(m.get(k), Some(&v), "get({k})");
                assert!(m.contains_key(k));
                // Neighbours mostly miss, often inside a skipped prefix or
                // against a lazy leaf's key.
                let near = k ^ 0x100;
                assert_eq!(m.get(near), model.get(&near));
            }
            let k = keys[0];
            *m.get_mut(k).unwrap() += 1;
            *model.get_mut(&k).unwrap() += 1;
            assert!(
                m.iter()
                    .map(|(k, &v)| (k, v))
                    .eq(model.iter().map(|(&k, &v)| (k, v)))
            );
            assert!(m.keys().eq(model.keys().copied()));
            assert!(m.values().eq(model.values()));
            let sorted: Vec<$key> = model.keys().copied().collect();
            let (lo, hi) = (sorted[sorted.len() / 4], sorted[3 * sorted.len() / 4]);
            for (a, b) in [(lo, hi), (lo + 1, hi - 1), (lo ^ 0xFF, hi ^ 0xFF)] {
                let (a, b) = (a.min(b), a.max(b));
                assert!(
                    m.range(a..b)
                        .map(|(k, _)| k)
                        .eq(model.range(a..b).map(|(&k, _)| k))
                );
                assert!(
                    m.range(a..)
                        .map(|(k, _)| k)
                        .eq(model.range(a..).map(|(&k, _)| k))
                );
                assert!(
                    m.range(..=b)
                        .map(|(k, _)| k)
                        .eq(model.range(..=b).map(|(&k, _)| k))
                );
            }
            assert_eq!(
                m.first_key_value().map(|(k, &v)| (k, v)),
                model.first_key_value().map(|(&k, &v)| (k, v))
            );
            assert_eq!(
                m.last_key_value().map(|(k, &v)| (k, v)),
                model.last_key_value().map(|(&k, &v)| (k, v))
            );
            let stats = m.stats();
            assert_eq!(stats.keys, model.len());
            assert_eq!(stats.memory_bytes, m.memory_usage());

            for &k in keys.iter().step_by(2) {
                assert_eq!(m.remove(k), model.remove(&k));
            }
            m.verify().unwrap();
            assert!(m.iter().map(|(k, _)| k).eq(model.keys().copied()));
            let mut n = 0;
            for (k, &v) in &m {
                assert_eq!(model.get(&k), Some(&v));
                n += 1;
            }
            assert_eq!(n, model.len());
            for k in model.keys().copied().collect::<Vec<_>>() {
                assert_eq!(m.remove(k), model.remove(&k));
                if model.len() % 64 == 0 {
                    m.verify().unwrap();
                }
            }
            assert!(m.is_empty());
            assert_eq!(m.memory_usage(), 0);
            m.extend(keys.iter().map(|&k| (k, 1)));
            assert_eq!(m.len(), sorted.len());
            m.clear();
            m.verify().unwrap();
            stats
        }
    };
}

exercise_fn!(exercise_plain64, Plain64, u64);
exercise_fn!(exercise_lazy64, Lazy64, u64);
exercise_fn!(exercise_path64, Path64, u64);
exercise_fn!(exercise_full64, Full64, u64);
exercise_fn!(exercise_plain128, Plain128, u128);
exercise_fn!(exercise_lazy128, Lazy128, u128);
exercise_fn!(exercise_path128, Path128, u128);
exercise_fn!(exercise_full128, Full128, u128);

#[test]
fn compression_reaches_the_config() {
    use radix_core::Compression;
    assert_eq!(Plain64Config::COMPRESSION, Compression::None);
    assert_eq!(Lazy64Config::COMPRESSION, Compression::Lazy);
    assert_eq!(Path64Config::COMPRESSION, Compression::Path);
    assert_eq!(Full64Config::COMPRESSION, Compression::Full);
    assert_eq!(Plain128Config::COMPRESSION, Compression::None);
    assert_eq!(Lazy128Config::COMPRESSION, Compression::Lazy);
    assert_eq!(Path128Config::COMPRESSION, Compression::Path);
    assert_eq!(Full128Config::COMPRESSION, Compression::Full);
    assert_eq!(FullStringsConfig::COMPRESSION, Compression::Full);
    assert_eq!(SharedFullConfig::COMPRESSION, Compression::Full);
    // Trees that leave the key out get their key type's default: none,
    // but full for u128 keys (UUIDs and hashes are sparse).
    for c in [
        BlockMapConfig::COMPRESSION,
        TinyConfig::COMPRESSION,
        NamesConfig::COMPRESSION,
        StringsConfig::COMPRESSION,
        AppendConfig::COMPRESSION,
        BytesConfig::COMPRESSION,
    ] {
        assert_eq!(c, Compression::None);
    }
    assert_eq!(ExtentsConfig::COMPRESSION, Compression::Full);
    // The other declared choices are untouched by the compression.
    assert_eq!(Full128Config::SIZE_CLASSES.capacities(), &[2, 16, 256][..]);
    const { assert!(!FullAppendConfig::DELETE) };
}

#[test]
fn every_compression_u64() {
    let keys = sparse_u64(3000);
    let plain = exercise_plain64(&keys);
    let lazy = exercise_lazy64(&keys);
    let path = exercise_path64(&keys);
    let full = exercise_full64(&keys);
    assert_compression_effects(&plain, &lazy, &path, &full);
}

/// Each compression choice has its effect: lazy leaves only where chosen,
/// fewer nodes than the uncompressed tree's single-child chains, and less
/// memory with both.
#[track_caller]
fn assert_compression_effects(
    plain: &radix_core::Stats,
    lazy: &radix_core::Stats,
    path: &radix_core::Stats,
    full: &radix_core::Stats,
) {
    assert_eq!(plain.lazy_leaves, 0);
    assert_eq!(path.lazy_leaves, 0);
    assert!(lazy.lazy_leaves > 0 && full.lazy_leaves > 0);
    for (name, stats) in [("lazy", lazy), ("path", path), ("full", full)] {
        assert!(
            stats.nodes() < plain.nodes(),
            "{name}: {stats} against none: {plain}"
        );
    }
    assert!(
        full.memory_bytes < plain.memory_bytes,
        "{full} against {plain}"
    );
}

#[test]
fn every_compression_u128() {
    let keys = sparse_u128(2000);
    let plain = exercise_plain128(&keys);
    let lazy = exercise_lazy128(&keys);
    let path = exercise_path128(&keys);
    let full = exercise_full128(&keys);
    assert_compression_effects(&plain, &lazy, &path, &full);
    assert_eq!(lazy.layout, "inline");
    assert_eq!(path.layout, "leaf");
    assert_eq!(path.leaves, keys.len());
}

#[test]
fn full_compression_with_other_layouts() {
    let keys = sparse_u64(1500);

    let mut names = FullNames::new();
    let mut model = BTreeMap::new();
    for &k in &keys {
        let v = format!("value {k}");
        assert_eq!(names.insert(k, v.clone()), model.insert(k, v));
    }
    names.verify().unwrap();
    assert!(names.stats().lazy_leaves > 0);
    names.get_mut(keys[0]).unwrap().push('!');
    model.get_mut(&keys[0]).unwrap().push('!');
    assert!(names.iter().eq(model.iter().map(|(&k, v)| (k, v))));
    for &k in keys.iter().step_by(3) {
        assert_eq!(names.remove(k), model.remove(&k));
    }
    names.verify().unwrap();
    assert!(names.iter().eq(model.iter().map(|(&k, v)| (k, v))));
    // Dropped with values in lazy leaves and in nodes.
    drop(names);

    let bytes = |k: u32| -> Vec<u8> { (0..(k % 20) as u8).collect() };
    let mut strings = FullStrings::new();
    let mut model = BTreeMap::new();
    for &k in &keys {
        let k = k as u32;
        let v = VarBytes::new(&bytes(k)).unwrap();
        assert_eq!(strings.insert(k, &v), model.insert(k, bytes(k)).is_some());
    }
    strings.verify().unwrap();
    assert!(
        strings
            .range(1000..)
            .map(|(k, v)| (k, v.as_bytes()))
            .eq(model.range(1000..).map(|(&k, v)| (k, &v[..])))
    );
    for &k in keys.iter().step_by(2) {
        let k = k as u32;
        assert_eq!(strings.remove(k), model.remove(&k).is_some());
    }
    strings.verify().unwrap();
    assert!(
        strings
            .iter()
            .map(|(k, v)| (k, v.as_bytes()))
            .eq(model.iter().map(|(&k, v)| (k, &v[..])))
    );

    let append: FullAppend = keys.iter().map(|&k| (k, k)).collect();
    append.verify().unwrap();
    assert!(
        append.keys().eq(keys
            .iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>())
    );
}

#[test]
fn shared_tree_with_compression() {
    use radix_core::shm::{Area, AreaOptions, Backing};
    let area = Area::create(
        AreaOptions::default()
            .backing(Backing::Heap)
            .init_segment_size(64 << 10)
            .max_segment_size(256 << 10)
            .max_segments(8)
            .max_trees(2),
    )
    .unwrap();
    let tree = SharedFull::create_in(&area).unwrap();
    let keys = sparse_u64(2000);
    let mut model = BTreeMap::new();
    {
        let mut w = tree.write();
        for &k in &keys {
            assert_eq!(w.insert(k, !k).unwrap(), model.insert(k, !k));
        }
        for &k in keys.iter().step_by(4) {
            assert_eq!(w.remove(k).unwrap(), model.remove(&k));
        }
    }
    {
        let r = tree.read();
        r.verify().unwrap();
        assert!(r.stats().lazy_leaves > 0);
        assert!(
            r.iter()
                .map(|(k, &v)| (k, v))
                .eq(model.iter().map(|(&k, &v)| (k, v)))
        );
        let (lo, hi) = (1 << 40, 1 << 62);
        assert!(
            r.range(lo..hi)
                .map(|(k, _)| k)
                .eq(model.range(lo..hi).map(|(&k, _)| k))
        );
    }
    let again = SharedFull::attach(&area, tree.handle()).unwrap();
    assert_eq!(again.read().len(), model.len());
    // The compression is part of the configuration a handle must match.
    let err = SharedPlain::attach(&area, tree.handle()).unwrap_err();
    assert!(err.to_string().contains("compression"), "{err}");
    drop(again);
    tree.destroy().unwrap();
}

/// std's `get_key_value` and `From<[(K, V); N]>`, on a generated type as on
/// `RadixMap`.
#[test]
fn get_key_value_and_from_an_array() {
    let m = BlockMap::from([(9, 90), (3, 30), (9, 91)]);
    assert_eq!(m.len(), 2);
    assert_eq!(m.get_key_value(9), Some((9, &91)));
    assert_eq!(m.get_key_value(4), None);
    let empty = BlockMap::from([]);
    assert!(empty.is_empty());
}
