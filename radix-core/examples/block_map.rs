//! A user crate's view of `radix_tree!`: a map from block numbers to
//! visibility bits, declared in three lines and used like a `BTreeMap`.
//!
//! Run with `cargo run -p radix-core --example block_map`.

use radix_core::radix_tree;

radix_tree! {
    /// Visibility bits per block number, as a vacuum would keep them.
    pub struct BlockMap {
        key: u32,
        value: u64,
    }
}

fn main() {
    // Every third block of the first million has a dead tuple at offset 5.
    let mut map: BlockMap = (0..1_000_000u32)
        .step_by(3)
        .map(|block| (block, 1u64 << 5))
        .collect();
    println!("{} blocks in {} bytes", map.len(), map.memory_usage());

    // Update in place, look up, test membership.
    if let Some(bits) = map.get_mut(300) {
        *bits |= 1 << 9;
    }
    assert_eq!(map.get(300), Some(&((1 << 5) | (1 << 9))));
    assert!(!map.contains_key(301));

    // Ordered iteration and ranges.
    let first: Vec<u32> = map.keys().take(4).collect();
    assert_eq!(first, [0, 3, 6, 9]);
    let in_range = map.range(1000..2000).count();
    println!("{in_range} blocks between 1000 and 2000");
    for (block, bits) in map.range(..10) {
        println!("block {block}: {bits:#b}");
    }
    println!(
        "first {:?}, last {:?}",
        map.first_key_value(),
        map.last_key_value()
    );

    // Remove half the blocks; sparse nodes shrink back into smaller classes.
    for block in (0..1_000_000u32).step_by(6) {
        map.remove(block);
    }
    map.verify().expect("a consistent tree");
    println!("after removing half: {}", map.stats());

    map.clear();
    assert_eq!(map.memory_usage(), 0);
}
