//! `u32 -> Counted` in the leaf layout: one allocation per 24-byte value,
//! whose `Drop` checks that every value is dropped exactly once.

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_fuzz::{check_trees, impl_fuzz_map, Counted, Input};

radix_core::radix_tree! {
    /// The tree under test.
    struct Tree {
        key: u32,
        value: Counted,
        layout: leaf,
    }
}

impl_fuzz_map!(Tree, u32, Counted, sized);

fuzz_target!(|input: Input| {
    check_trees(&input, vec![Box::new(Tree::create(input.insert_only))]);
});
