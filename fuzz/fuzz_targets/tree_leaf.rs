//! `u32 -> Counted` in the leaf layout: one allocation per 24-byte value,
//! whose `Drop` checks that every value is dropped exactly once, in node
//! slots and in lazy leaves alike; one tree per compression (none, lazy,
//! path, full), all on the same operations.

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
                    key: u32,
                    value: Counted,
                    layout: leaf,
                    compression: $compression,
                }
            }
            impl_fuzz_map!($name, u32, Counted, sized);
        )*

        /// One tree of each compression.
        fn trees(
            insert_only: bool,
        ) -> Vec<radix_fuzz::DynMap<u32, <Counted as radix_fuzz::FuzzValue>::Model>> {
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
