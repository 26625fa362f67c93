//! `u64 -> u64` in the embedded layout: values in the slot word.

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_fuzz::{check_trees, impl_fuzz_map, Input};

radix_core::radix_tree! {
    /// The tree under test.
    struct Tree {
        key: u64,
        value: u64,
        layout: embedded,
    }
}

impl_fuzz_map!(Tree, u64, u64, sized);

fuzz_target!(|input: Input| {
    check_trees(&input, vec![Box::new(Tree::create(input.insert_only))]);
});
