//! `u128 -> Counted` in the inline layout: sixteen levels, keys near 0,
//! near `u128::MAX` and around powers of two (the key generator favours
//! them), and 24-byte values with a checked `Drop` moved inside leaf nodes;
//! one tree per compression (none, lazy, path, full: up to 15 skipped
//! bytes in a prefix word), all on the same operations.

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_fuzz::{check_trees, impl_fuzz_map, Counted, Input};

/// Declares the tree under test once per compression, and `trees`, one of
/// each. The uncompressed one names its compression too, so that it stays
/// uncompressed whatever the macro's default.
macro_rules! trees {
    ($($name:ident: $compression:ident;)*) => {
        $(
            radix_core::radix_tree! {
                /// A tree under test.
                struct $name {
                    key: u128,
                    value: Counted,
                    layout: inline,
                    compression: $compression,
                }
            }
            impl_fuzz_map!($name, u128, Counted, sized);
        )*

        /// One tree of each compression.
        fn trees(
            insert_only: bool,
        ) -> Vec<radix_fuzz::DynMap<u128, <Counted as radix_fuzz::FuzzValue>::Model>> {
            vec![$(Box::new($name::create(insert_only))),*]
        }
    };
}

trees! {
    Tree: none;
    LazyTree: lazy;
    PathTree: path;
    FullTree: full;
}

fuzz_target!(|input: Input| check_trees(&input, trees(input.insert_only)));
