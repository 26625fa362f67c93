//! The `serde` features on untrusted input: arbitrary bytes read as JSON
//! into a `TidStore`, into three generated tree maps (`u64 -> u64`
//! compressed, `u8 -> String` in leaves, `u16 -> [u8; 3]` inline) and into
//! a generated set (`u16`).
//!
//! Reading must never panic. Whatever is accepted must pass `verify()`,
//! write out and read back to an equal value, and write the same bytes
//! again. A tree must also agree with a `BTreeMap` reading the same bytes:
//! where the tree accepts, the map accepts the same entries (and both write
//! the same JSON); where only the map accepts, the input repeats a key,
//! which the map keeps the last of and the tree refuses by name.

#![no_main]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeOwned;
use serde::Serialize;
use tidstore::TidStore;

radix_core::radix_tree! {
    /// Wide keys, path-compressed and lazy.
    struct Wide {
        key: u64,
        value: u64,
        compression: full,
    }
}

radix_core::radix_tree! {
    /// Narrow keys (most numbers do not fit), values with `Drop` in leaves.
    struct Narrow {
        key: u8,
        value: String,
        layout: leaf,
    }
}

radix_core::radix_tree! {
    /// Arrays inline in leaf nodes.
    struct Arrays {
        key: u16,
        value: [u8; 3],
        layout: inline,
        compression: lazy,
    }
}

radix_core::radix_set! {
    /// A set of narrow keys.
    struct Ports {
        key: u16,
    }
}

/// A store's content.
fn contents(ts: &TidStore) -> Vec<(u32, Vec<u16>)> {
    ts.iter()
        .map(|b| (b.block(), b.offsets().collect()))
        .collect()
}

/// `data` as a TID store.
fn check_store(data: &[u8]) {
    let Ok(ts) = serde_json::from_slice::<TidStore>(data) else {
        return;
    };
    if let Err(e) = ts.verify() {
        panic!("accepted store fails verify: {e}");
    }
    let json = serde_json::to_vec(&ts).expect("a store writes");
    let back: TidStore = match serde_json::from_slice(&json) {
        Ok(back) => back,
        Err(e) => panic!("a store's own JSON is refused: {e}"),
    };
    if let Err(e) = back.verify() {
        panic!("re-read store fails verify: {e}");
    }
    assert_eq!(contents(&back), contents(&ts));
    assert_eq!(back.max_bytes(), ts.max_bytes());
    assert_eq!(back.num_tids(), ts.num_tids());
    assert_eq!(serde_json::to_vec(&back).unwrap(), json, "unstable form");
}

/// `data` as a tree (or set) `T` and as its std model `M`.
fn check_tree<T, M>(data: &[u8], verify: fn(&T) -> Result<(), String>)
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
    M: Serialize + DeserializeOwned,
{
    let model = serde_json::from_slice::<M>(data);
    let tree = match serde_json::from_slice::<T>(data) {
        Ok(tree) => tree,
        Err(e) => {
            if model.is_ok() {
                let e = e.to_string();
                assert!(
                    e.contains("duplicate key"),
                    "tree refused what its model accepted: {e}"
                );
            }
            return;
        }
    };
    if let Err(e) = verify(&tree) {
        panic!("accepted tree fails verify: {e}");
    }
    let model = match model {
        Ok(model) => model,
        Err(e) => panic!("the model refused what the tree accepted: {e}"),
    };
    let json = serde_json::to_vec(&tree).expect("a tree writes");
    assert_eq!(
        json,
        serde_json::to_vec(&model).unwrap(),
        "tree and model differ"
    );
    let back: T = match serde_json::from_slice(&json) {
        Ok(back) => back,
        Err(e) => panic!("a tree's own JSON is refused: {e}"),
    };
    if let Err(e) = verify(&back) {
        panic!("re-read tree fails verify: {e}");
    }
    assert_eq!(back, tree);
    assert_eq!(serde_json::to_vec(&back).unwrap(), json, "unstable form");
}

fuzz_target!(|data: &[u8]| {
    check_store(data);
    check_tree::<Wide, BTreeMap<u64, u64>>(data, Wide::verify);
    check_tree::<Narrow, BTreeMap<u8, String>>(data, Narrow::verify);
    check_tree::<Arrays, BTreeMap<u16, [u8; 3]>>(data, Arrays::verify);
    check_tree::<Ports, BTreeSet<u16>>(data, Ports::verify);
});
