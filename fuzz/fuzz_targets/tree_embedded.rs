//! `u64 -> u64` in the embedded layout: values in the slot word; one tree
//! per compression (none, lazy, path, full), all on the same operations.

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_fuzz::{check_trees, impl_fuzz_map, Input};

/// Declares the tree under test once per compression, and `trees`, one of
/// each. The uncompressed one names its compression too, so that it stays
/// uncompressed whatever the macro's default.
macro_rules! trees {
    ($($name:ident: $compression:ident;)*) => {
        $(
            radix_core::radix_tree! {
                /// A tree under test.
                struct $name {
                    key: u64,
                    value: u64,
                    layout: embedded,
                    compression: $compression,
                }
            }
            impl_fuzz_map!($name, u64, u64, sized);
        )*

        /// One tree of each compression.
        fn trees(
            insert_only: bool,
        ) -> Vec<radix_fuzz::DynMap<u64, <u64 as radix_fuzz::FuzzValue>::Model>> {
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
