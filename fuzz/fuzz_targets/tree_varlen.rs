//! `u64 -> VarBytes` in the varlen layout: byte strings of 0 to 40 bytes,
//! embedded in the slot up to 7 bytes and in a leaf of their size above,
//! switching between the two when replaced.

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_core::value::VarBytes;
use radix_fuzz::{check_trees, impl_fuzz_map, Input};

radix_core::radix_tree! {
    /// The tree under test.
    struct Tree {
        key: u64,
        value: VarBytes,
        layout: varlen,
    }
}

impl_fuzz_map!(Tree, u64, VarBytes, varlen);

fuzz_target!(|input: Input| {
    check_trees(&input, vec![Box::new(Tree::create(input.insert_only))]);
});
