//! The `serde` feature: generated maps of several layouts and key widths
//! written and read back through JSON and CBOR, against `BTreeMap`'s form
//! of the same entries, sets against `BTreeSet`'s, and refusals of input
//! that would not give back a well-formed tree (duplicate keys, keys that
//! do not fit, wrong shapes).
//!
//! Runs with the `serde` feature: `cargo test --workspace --all-features`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

use radix_core::value::VarBytes;
use radix_core::{RadixSet, RawTree, radix_set, radix_tree};
use serde::Serialize;
use serde::de::DeserializeOwned;
use static_assertions::{assert_impl_all, assert_not_impl_any};

radix_tree! {
    /// u8 keys, values in the slot word.
    struct Embedded8 {
        key: u8,
        value: u64,
        layout: embedded,
    }
}

radix_tree! {
    /// u16 keys, the default layout, path-compressed and lazy.
    struct Auto16 {
        key: u16,
        value: u32,
        compression: full,
    }
}

radix_tree! {
    /// u32 keys with the default configuration.
    pub struct Default32 {
        key: u32,
        value: u64,
    }
}

radix_tree! {
    /// u64 keys, owned strings in leaves.
    struct Leaf64 {
        key: u64,
        value: String,
        layout: leaf,
        compression: lazy,
    }
}

radix_tree! {
    /// u32 keys, arrays inline in leaf nodes, few size classes.
    struct Inline32 {
        key: u32,
        value: [u16; 5],
        layout: inline,
        size_classes: [4, 48, 256],
        compression: path,
    }
}

radix_tree! {
    /// u128 keys, arrays inline (the default compression for u128: full).
    struct Inline128 {
        key: u128,
        value: [u64; 3],
        layout: inline,
    }
}

radix_tree! {
    /// Insert-only: no `remove`, still read back.
    struct NoDelete64 {
        key: u64,
        value: i64,
        delete: false,
    }
}

radix_tree! {
    /// Variable-length values: written, not read.
    struct Bytes64 {
        key: u64,
        value: VarBytes,
        layout: varlen,
    }
}

/// A value with no serde impls.
#[derive(Clone, Debug, PartialEq)]
struct Opaque(u32);

radix_tree! {
    /// A tree whose values do not serialize: it compiles, and is neither
    /// `Serialize` nor `Deserialize`.
    struct OpaqueMap {
        key: u32,
        value: Opaque,
    }
}

radix_tree! {
    /// Configured out: its impls must go with it (the forwarded `#[cfg]`
    /// reaches them), or this file would not compile.
    #[cfg(any())]
    struct Gone {
        key: u32,
        value: u64,
    }
}

radix_set! {
    /// A named set of u32 keys, path-compressed.
    struct Blocks32 {
        key: u32,
        compression: path,
    }
}

assert_impl_all!(Embedded8: Serialize, DeserializeOwned);
assert_impl_all!(Blocks32: Serialize, DeserializeOwned);
assert_impl_all!(RadixSet<u128>: Serialize, DeserializeOwned);
assert_impl_all!(Auto16: Serialize, DeserializeOwned);
assert_impl_all!(Default32: Serialize, DeserializeOwned);
assert_impl_all!(Leaf64: Serialize, DeserializeOwned);
assert_impl_all!(Inline32: Serialize, DeserializeOwned);
assert_impl_all!(Inline128: Serialize, DeserializeOwned);
assert_impl_all!(NoDelete64: Serialize, DeserializeOwned);
assert_impl_all!(Bytes64: Serialize);
assert_not_impl_any!(Bytes64: DeserializeOwned);
assert_not_impl_any!(OpaqueMap: Serialize, DeserializeOwned);

/// A deterministic pseudo-random sequence (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Keys of a `bits`-wide type: the extremes, powers of two and their
/// neighbours, a dense run, and `random` pseudo-random keys.
fn keys(bits: u32, random: usize, seed: u64) -> Vec<u128> {
    let max = if bits == 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    };
    let mut keys = vec![0, 1, max, max - 1];
    for shift in 1..bits {
        let p = 1u128 << shift;
        keys.extend([p - 1, p, p + 1]);
    }
    keys.extend(1000..1300u128);
    let mut rng = Rng(seed);
    for _ in 0..random {
        keys.push((u128::from(rng.next()) << 64 | u128::from(rng.next())) & max);
    }
    keys.retain(|&k| k <= max);
    keys
}

/// `map` through JSON and CBOR: its JSON is `BTreeMap`'s, it reads back
/// equal and verified from both formats and from `BTreeMap`'s output, and
/// `BTreeMap` reads its output back.
fn round_trip<T, K, V>(model: &BTreeMap<K, V>, verify: impl Fn(&T) -> Result<(), String>)
where
    T: Serialize + DeserializeOwned + FromIterator<(K, V)> + PartialEq + Debug,
    K: Serialize + DeserializeOwned + Ord + Copy + Debug,
    V: Serialize + DeserializeOwned + Clone + PartialEq + Debug,
{
    let tree: T = model.iter().map(|(&k, v)| (k, v.clone())).collect();
    verify(&tree).unwrap();

    let json = serde_json::to_string(&tree).unwrap();
    assert_eq!(json, serde_json::to_string(model).unwrap(), "JSON form");
    let back: T = serde_json::from_str(&json).unwrap();
    verify(&back).unwrap();
    assert_eq!(back, tree, "JSON round trip");
    let as_model: BTreeMap<K, V> = serde_json::from_str(&json).unwrap();
    assert_eq!(&as_model, model, "BTreeMap reads a tree's JSON");

    let mut cbor = Vec::new();
    ciborium::into_writer(&tree, &mut cbor).unwrap();
    let mut model_cbor = Vec::new();
    ciborium::into_writer(model, &mut model_cbor).unwrap();
    assert_eq!(cbor, model_cbor, "CBOR form");
    let back: T = ciborium::from_reader(cbor.as_slice()).unwrap();
    verify(&back).unwrap();
    assert_eq!(back, tree, "CBOR round trip");

    // Keys in descending order read back the same tree.
    let mut reversed = String::from("{");
    for (i, (k, v)) in model.iter().rev().enumerate() {
        if i > 0 {
            reversed.push(',');
        }
        // `{"key":value}` of a one-entry map, without its braces.
        let entry = serde_json::to_string(&BTreeMap::from([(*k, v)])).unwrap();
        reversed += &entry[1..entry.len() - 1];
    }
    reversed.push('}');
    let back: T = serde_json::from_str(&reversed).unwrap();
    verify(&back).unwrap();
    assert_eq!(back, tree, "descending keys");
}

/// Models of sizes 0, 1, a few and many over `keys`.
fn models<K: Ord + Copy, V>(keys: &[K], value: impl Fn(K) -> V) -> Vec<BTreeMap<K, V>> {
    [0, 1, 5, keys.len()]
        .into_iter()
        .map(|n| {
            keys[..n.min(keys.len())]
                .iter()
                .map(|&k| (k, value(k)))
                .collect()
        })
        .collect()
}

#[test]
fn embedded_u8() {
    let keys: Vec<u8> = (0..=255).collect();
    for model in models(&keys, |k| u64::from(k) * 0x0101_0101_0101) {
        round_trip::<Embedded8, _, _>(&model, Embedded8::verify);
    }
}

#[test]
fn auto_u16_compressed() {
    let keys: Vec<u16> = keys(16, 2000, 1).into_iter().map(|k| k as u16).collect();
    for model in models(&keys, |k| u32::from(k).wrapping_mul(2_654_435_761)) {
        round_trip::<Auto16, _, _>(&model, Auto16::verify);
    }
}

#[test]
fn default_u32() {
    let keys: Vec<u32> = keys(32, 3000, 2).into_iter().map(|k| k as u32).collect();
    for model in models(&keys, |k| u64::from(k) << 7) {
        round_trip::<Default32, _, _>(&model, Default32::verify);
    }
}

#[test]
fn leaf_strings_u64() {
    let keys: Vec<u64> = keys(64, 1500, 3).into_iter().map(|k| k as u64).collect();
    for model in models(&keys, |k| format!("v{k:x}\u{e9}\"\n")) {
        round_trip::<Leaf64, _, _>(&model, Leaf64::verify);
    }
}

#[test]
fn inline_arrays_u32() {
    let keys: Vec<u32> = keys(32, 1500, 4).into_iter().map(|k| k as u32).collect();
    for model in models(&keys, |k| [k as u16, (k >> 16) as u16, 0, u16::MAX, 7]) {
        round_trip::<Inline32, _, _>(&model, Inline32::verify);
    }
}

#[test]
fn inline_arrays_u128() {
    let keys = keys(128, 1500, 5);
    for model in models(&keys, |k| [k as u64, (k >> 64) as u64, u64::MAX]) {
        round_trip::<Inline128, _, _>(&model, Inline128::verify);
    }
}

#[test]
fn insert_only_tree() {
    let keys: Vec<u64> = keys(64, 500, 6).into_iter().map(|k| k as u64).collect();
    for model in models(&keys, |k| (k as i64).wrapping_neg()) {
        round_trip::<NoDelete64, _, _>(&model, NoDelete64::verify);
    }
}

/// The engine tree itself, without a generated wrapper, has the same form.
#[test]
fn raw_tree() {
    let model: BTreeMap<u32, u64> = (0..600u32).map(|k| (k * 7, u64::from(k))).collect();
    let tree: Default32 = model.iter().map(|(&k, &v)| (k, v)).collect();
    let json = serde_json::to_string(tree.as_raw()).unwrap();
    assert_eq!(json, serde_json::to_string(&model).unwrap());
    let raw: RawTree<Default32Config> = serde_json::from_str(&json).unwrap();
    raw.verify().unwrap();
    assert_eq!(&raw, tree.as_raw());
}

/// A varlen tree writes each value as a byte string.
#[test]
fn varlen_serializes() {
    let mut tree = Bytes64::new();
    let mut model = BTreeMap::new();
    for (i, len) in [0usize, 1, 7, 8, 40, 127].into_iter().enumerate() {
        let bytes: Vec<u8> = (0..len as u8).collect();
        tree.insert(i as u64 * 1000, &VarBytes::new(&bytes).unwrap());
        model.insert(i as u64 * 1000, bytes);
    }
    assert_eq!(
        serde_json::to_string(&tree).unwrap(),
        serde_json::to_string(&model).unwrap()
    );
    let mut cbor = Vec::new();
    ciborium::into_writer(&tree, &mut cbor).unwrap();
    let back: BTreeMap<u64, ciborium::Value> = ciborium::from_reader(cbor.as_slice()).unwrap();
    let back: BTreeMap<u64, Vec<u8>> = back
        .into_iter()
        .map(|(k, v)| (k, v.into_bytes().unwrap()))
        .collect();
    assert_eq!(back, model);
}

/// The error from reading `json` as a `T`, which must be refused.
fn refused<T: DeserializeOwned + Debug>(json: &str) -> String {
    match serde_json::from_str::<T>(json) {
        Ok(t) => panic!("{json} was accepted as {t:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn duplicate_keys_are_refused() {
    let e = refused::<Embedded8>(r#"{"1":5,"2":6,"1":7}"#);
    assert!(e.contains("duplicate key 1"), "{e}");
    let e = refused::<Leaf64>(r#"{"18446744073709551615":"a","0":"b","18446744073709551615":"c"}"#);
    assert!(e.contains("duplicate key 18446744073709551615"), "{e}");
    // The same key spelled the same way after many others.
    let mut json = String::from("{");
    for k in 0..1000u32 {
        json += &format!("\"{k}\":[{k},0,0,0,0],");
    }
    json += r#""500":[1,2,3,4,5]}"#;
    let e = refused::<Inline32>(&json);
    assert!(e.contains("duplicate key 500"), "{e}");
    let e = refused::<Inline128>(
        r#"{"340282366920938463463374607431768211455":[1,2,3],"340282366920938463463374607431768211455":[1,2,3]}"#,
    );
    assert!(
        e.contains("duplicate key 340282366920938463463374607431768211455"),
        "{e}"
    );

    // CBOR, whose map keys are integers.
    let duplicate = ciborium::Value::Map(vec![
        (3.into(), 1.into()),
        (4.into(), 1.into()),
        (3.into(), 2.into()),
    ]);
    let mut cbor = Vec::new();
    ciborium::into_writer(&duplicate, &mut cbor).unwrap();
    let e = ciborium::from_reader::<Default32, _>(cbor.as_slice()).unwrap_err();
    assert!(e.to_string().contains("duplicate key 3"), "{e}");
}

#[test]
fn keys_that_do_not_fit_are_refused() {
    // serde's own integer error, naming the type.
    let e = refused::<Embedded8>(r#"{"256":1}"#);
    assert!(e.contains("integer `256`, expected u8"), "{e}");
    for json in [
        r#"{"256":1}"#,
        r#"{"-1":1}"#,
        r#"{"1.5":1}"#,
        r#"{"x":1}"#,
        r#"{"":1}"#,
        r#"{"0":1,"1000":2}"#,
    ] {
        refused::<Embedded8>(json);
    }
    refused::<Auto16>(r#"{"65536":1}"#);
    refused::<Default32>(r#"{"4294967296":1}"#);
    refused::<Leaf64>(r#"{"18446744073709551616":"a"}"#);
    refused::<Inline128>(r#"{"340282366920938463463374607431768211456":[1,2,3]}"#);

    // CBOR integer keys out of range, and a negative one.
    for key in [ciborium::Value::from(300), ciborium::Value::from(-1)] {
        let map = ciborium::Value::Map(vec![(key, 1.into())]);
        let mut cbor = Vec::new();
        ciborium::into_writer(&map, &mut cbor).unwrap();
        assert!(ciborium::from_reader::<Embedded8, _>(cbor.as_slice()).is_err());
    }
}

#[test]
fn wrong_shapes_are_refused() {
    refused::<Default32>("[1,2,3]");
    refused::<Default32>("null");
    refused::<Default32>("7");
    refused::<Default32>(r#"{"1":"x"}"#);
    refused::<Default32>(r#"{"1":-1}"#);
    refused::<Default32>(r#"{"1":1"#);
    refused::<Inline32>(r#"{"1":[1,2,3,4]}"#);
    refused::<Inline32>(r#"{"1":[1,2,3,4,5,6]}"#);
    refused::<Leaf64>(r#"{"1":7}"#);
    // An empty map is an empty tree.
    let empty: Default32 = serde_json::from_str("{}").unwrap();
    assert!(empty.is_empty());
    empty.verify().unwrap();
}

/// `model` as a set of type `T` through JSON and CBOR: the same bytes as
/// `BTreeSet`'s, read back equal and verified, and read from keys in
/// descending order.
fn set_round_trip<T, K>(model: &BTreeSet<K>, verify: impl Fn(&T) -> Result<(), String>)
where
    T: Serialize + DeserializeOwned + FromIterator<K> + PartialEq + Debug,
    K: Serialize + DeserializeOwned + Ord + Copy + Debug,
{
    let set: T = model.iter().copied().collect();
    verify(&set).unwrap();
    let json = serde_json::to_string(&set).unwrap();
    assert_eq!(json, serde_json::to_string(model).unwrap(), "JSON form");
    let back: T = serde_json::from_str(&json).unwrap();
    verify(&back).unwrap();
    assert_eq!(back, set, "JSON round trip");

    let mut cbor = Vec::new();
    ciborium::into_writer(&set, &mut cbor).unwrap();
    let mut model_cbor = Vec::new();
    ciborium::into_writer(model, &mut model_cbor).unwrap();
    assert_eq!(cbor, model_cbor, "CBOR form");
    let back: T = ciborium::from_reader(cbor.as_slice()).unwrap();
    assert_eq!(back, set, "CBOR round trip");

    let descending: Vec<K> = model.iter().rev().copied().collect();
    let back: T = serde_json::from_str(&serde_json::to_string(&descending).unwrap()).unwrap();
    verify(&back).unwrap();
    assert_eq!(back, set, "descending keys");
}

#[test]
fn sets_as_sequences() {
    let keys32: Vec<u32> = keys(32, 2000, 7).into_iter().map(|k| k as u32).collect();
    for model in models(&keys32, |_| ()) {
        let model: BTreeSet<u32> = model.into_keys().collect();
        set_round_trip::<Blocks32, _>(&model, Blocks32::verify);
    }
    let keys128 = keys(128, 1000, 8);
    for model in models(&keys128, |_| ()) {
        let model: BTreeSet<u128> = model.into_keys().collect();
        set_round_trip::<RadixSet<u128>, _>(&model, RadixSet::verify);
    }
}

#[test]
fn sets_refuse_duplicates_bad_keys_and_maps() {
    let e = refused::<Blocks32>("[3,1,2,1]");
    assert!(e.contains("duplicate key 1 in radix tree set"), "{e}");
    let e = refused::<Blocks32>("[4294967296]");
    assert!(e.contains("expected u32"), "{e}");
    refused::<Blocks32>("[-1]");
    refused::<Blocks32>(r#"["1"]"#);
    refused::<Blocks32>(r#"{"1":null}"#);
    refused::<Blocks32>("[1,2");
    refused::<RadixSet<u128>>("[340282366920938463463374607431768211456]");
    let empty: Blocks32 = serde_json::from_str("[]").unwrap();
    assert!(empty.is_empty());
}
