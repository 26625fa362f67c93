//! Several `radix_tree!` configurations side by side: each declaration is
//! specialised at compile time, so the trees share one engine but carry no
//! run-time configuration.
//!
//! Run with `cargo run -p radix-core --example configurations`.

use radix_core::radix_tree;
use radix_core::value::VarBytes;

/// A 24-byte value: too big to embed in a slot word, small enough to store
/// inline in leaf nodes instead of one allocation each.
#[derive(Debug, Clone, PartialEq)]
pub struct Extent {
    /// First block.
    pub start: u64,
    /// Number of blocks.
    pub len: u64,
    /// Flags.
    pub flags: u64,
}

radix_tree! {
    /// Extents by 128-bit file id, stored inline, with size classes tuned
    /// for nodes of very few or very many children.
    pub struct ExtentMap {
        key: u128,
        value: Extent,
        layout: inline,
        size_classes: [3, 16, 48, 256],
    }
}

radix_tree! {
    /// Short byte strings: embedded in the slot when they fit, otherwise
    /// copied into a leaf of their own size.
    pub struct Labels {
        key: u64,
        value: VarBytes,
        layout: varlen,
    }
}

radix_tree! {
    /// An insert-only log index: no `remove` method is generated.
    pub struct LogIndex {
        key: u64,
        value: u32,
        layout: embedded,
        delete: false,
    }
}

radix_tree! {
    /// Owned strings, one leaf allocation per value.
    pub(crate) struct Names {
        key: u16,
        value: String,
        layout: leaf,
    }
}

fn main() {
    let mut extents = ExtentMap::new();
    for id in 0..10_000u64 {
        let key = (u128::from(id % 7) << 100) | u128::from(id);
        let extent = Extent {
            start: id * 8,
            len: 8,
            flags: 0,
        };
        extents.insert(key, extent);
    }
    extents.verify().expect("a consistent tree");
    println!("ExtentMap: {}", extents.stats());

    let mut labels = Labels::new();
    let short = VarBytes::new(b"hot").expect("short label");
    let long = VarBytes::new(b"a label too long for a slot word").expect("long label");
    labels.insert(1, &short);
    labels.insert(2, &long);
    // Replacing a value may move it between the slot and a leaf.
    labels.insert(1, &long);
    labels.insert(2, &short);
    println!("Labels: {labels:?}");
    println!("Labels: {}", labels.stats());

    let mut log: LogIndex = (0..5000u64).map(|lsn| (lsn * 64, lsn as u32)).collect();
    log.extend([(u64::MAX, 0)]);
    println!(
        "LogIndex: {} entries in {} bytes",
        log.len(),
        log.memory_usage()
    );

    let mut names = Names::default();
    names.insert(7, "seven".to_string());
    names.insert(300, "three hundred".to_string());
    if let Some(name) = names.get_mut(7) {
        name.make_ascii_uppercase();
    }
    for (key, name) in &names {
        println!("Names: {key} -> {name}");
    }
    assert_eq!(names.remove(300).as_deref(), Some("three hundred"));
}
