//! `u128 -> Counted` in the inline layout: sixteen levels, keys near 0,
//! near `u128::MAX` and around powers of two (the key generator favours
//! them), and 24-byte values with a checked `Drop` moved inside leaf nodes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_fuzz::{check_trees, impl_fuzz_map, Counted, Input};

radix_core::radix_tree! {
    /// The tree under test.
    struct Tree {
        key: u128,
        value: Counted,
        layout: inline,
    }
}

impl_fuzz_map!(Tree, u128, Counted, sized);

fuzz_target!(|input: Input| {
    check_trees(&input, vec![Box::new(Tree::create(input.insert_only))]);
});
