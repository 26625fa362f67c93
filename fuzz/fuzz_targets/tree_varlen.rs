//! `u64 -> VarBytes` in the varlen layout: byte strings of 0 to 40 bytes,
//! embedded in the slot up to 7 bytes and in a leaf of their size above,
//! switching between the two when replaced, in node slots and in lazy
//! leaves alike; one tree per compression (none, lazy, path, full), all on
//! the same operations.

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_core::value::VarBytes;
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
                    value: VarBytes,
                    layout: varlen,
                    compression: $compression,
                }
            }
            impl_fuzz_map!($name, u64, VarBytes, varlen);
        )*

        /// One tree of each compression.
        fn trees(
            insert_only: bool,
        ) -> Vec<radix_fuzz::DynMap<u64, <VarBytes as radix_fuzz::FuzzValue>::Model>> {
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
