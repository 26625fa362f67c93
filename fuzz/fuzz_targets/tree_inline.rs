//! `u16 -> Pair` in the inline layout: 16-byte values in the slots of
//! last-level leaf nodes, moved whenever those nodes grow or shrink; one
//! tree per compression (none, lazy, path, full), all on the same
//! operations.

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_fuzz::{check_trees, impl_fuzz_map, Input, Pair};

/// Declares the tree under test once per compression, and `trees`, one of
/// each. The uncompressed one names its compression too, so that it stays
/// uncompressed whatever the macro's default.
macro_rules! trees {
    ($($name:ident: $compression:ident;)*) => {
        $(
            radix_core::radix_tree! {
                /// A tree under test.
                struct $name {
                    key: u16,
                    value: Pair,
                    layout: inline,
                    compression: $compression,
                }
            }
            impl_fuzz_map!($name, u16, Pair, sized);
        )*

        /// One tree of each compression.
        fn trees(
            insert_only: bool,
        ) -> Vec<radix_fuzz::DynMap<u16, <Pair as radix_fuzz::FuzzValue>::Model>> {
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
