//! `u16 -> Pair` in the inline layout: 16-byte values in the slots of
//! last-level leaf nodes, moved whenever those nodes grow or shrink.

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_fuzz::{check_trees, impl_fuzz_map, Input, Pair};

radix_core::radix_tree! {
    /// The tree under test.
    struct Tree {
        key: u16,
        value: Pair,
        layout: inline,
    }
}

impl_fuzz_map!(Tree, u16, Pair, sized);

fuzz_target!(|input: Input| {
    check_trees(&input, vec![Box::new(Tree::create(input.insert_only))]);
});
