//! Trees declared with `radix_tree!` under unusual size-class lists and
//! every value layout, all driven through the same operations and compared
//! with one model.
//!
//! | tree | size classes | layout |
//! |---|---|---|
//! | `Pg` | default `[4, 16, 32, 64, 256]` | auto |
//! | `NoNode32` | `[4, 16, 48, 256]` | embedded |
//! | `Eight` | `[2, 4, 8, 16, 32, 48, 64, 256]` (the most classes) | leaf |
//! | `Sparse` | `[4, 32, 256]` | inline |
//! | `Node4s` | `[1, 2, 3, 4, 256]`: node4 classes, then node256 | auto |
//! | `Node16s` | `[8, 12, 16, 20, 24, 28, 32, 256]`: no node4 | leaf |
//! | `Node48First` | `[33, 48, 64, 256]`: no node4 or node16 | inline |
//! | `OnlyNode256` | `[256]`: one class | embedded |
//! | `OneThenAll` | `[1, 256]` | auto |

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_fuzz::{check_trees, impl_fuzz_map, DynMap, Input};

/// Declares a `u64 -> u64` tree and implements `FuzzMap` for it.
macro_rules! trees {
    ($($name:ident: [$($class:literal),*], $layout:ident;)*) => {$(
        radix_core::radix_tree! {
            /// A tree under test.
            struct $name {
                key: u64,
                value: u64,
                layout: $layout,
                size_classes: [$($class),*],
            }
        }
        impl_fuzz_map!($name, u64, u64, sized);
    )*

        /// One tree of each configuration.
        fn all_trees(insert_only: bool) -> Vec<DynMap<u64, u64>> {
            vec![$(Box::new($name::create(insert_only))),*]
        }
    };
}

trees! {
    Pg: [4, 16, 32, 64, 256], auto;
    NoNode32: [4, 16, 48, 256], embedded;
    Eight: [2, 4, 8, 16, 32, 48, 64, 256], leaf;
    Sparse: [4, 32, 256], inline;
    Node4s: [1, 2, 3, 4, 256], auto;
    Node16s: [8, 12, 16, 20, 24, 28, 32, 256], leaf;
    Node48First: [33, 48, 64, 256], inline;
    OnlyNode256: [256], embedded;
    OneThenAll: [1, 256], auto;
}

fuzz_target!(|input: Input| check_trees(&input, all_trees(input.insert_only)));
