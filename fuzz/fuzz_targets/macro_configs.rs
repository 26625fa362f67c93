//! Trees declared with `radix_tree!` under unusual size-class lists, every
//! value layout and every compression, driven through the same operations
//! and compared with one model per key width.
//!
//! `u64 -> u64` (the trees without a compression take the macro's default):
//!
//! | tree | size classes | layout | compression |
//! |---|---|---|---|
//! | `Pg` | default `[4, 16, 32, 64, 256]` | auto | default |
//! | `NoNode32` | `[4, 16, 48, 256]` | embedded | default |
//! | `Eight` | `[2, 4, 8, 16, 32, 48, 64, 256]` (the most classes) | leaf | default |
//! | `Sparse` | `[4, 32, 256]` | inline | default |
//! | `Node4s` | `[1, 2, 3, 4, 256]`: node4 classes, then node256 | auto | default |
//! | `Node16s` | `[8, 12, 16, 20, 24, 28, 32, 256]`: no node4 | leaf | default |
//! | `Node48First` | `[33, 48, 64, 256]`: no node4 or node16 | inline | default |
//! | `OnlyNode256` | `[256]`: one class | embedded | default |
//! | `OneThenAll` | `[1, 256]` | auto | default |
//! | `PgNone` | default | auto | none |
//! | `Node4sLazy` | `[1, 2, 3, 4, 256]`: two keys part in the second class | auto | lazy |
//! | `Node16sLazy` | `[8, 12, 16, 20, 24, 28, 32, 256]` | embedded | lazy |
//! | `EightPath` | `[2, 4, 8, 16, 32, 48, 64, 256]` | leaf | path |
//! | `OneThenAllPath` | `[1, 256]`: a lone key in a one-slot node | inline | path |
//! | `PgFull` | default | auto | full |
//! | `SparseFull` | `[4, 32, 256]` | inline | full |
//! | `OnlyNode256Full` | `[256]` | embedded | full |
//! | `Node48FirstFull` | `[33, 48, 64, 256]` | leaf | full |
//!
//! `u32 -> u64` and `u128 -> u64`, on the same operations (keys decoded at
//! their width):
//!
//! | tree | size classes | layout | compression |
//! |---|---|---|---|
//! | `Narrow` | default | embedded | none |
//! | `NarrowLazy` | `[2, 16, 256]` | leaf | lazy |
//! | `NarrowPath` | `[4, 16, 48, 256]` | inline | path |
//! | `NarrowFull` | `[1, 256]` | auto | full |
//! | `Wide` | default | auto | none |
//! | `WideLazy` | `[4, 32, 256]` | inline | lazy |
//! | `WidePath` | `[1, 2, 3, 4, 256]` | embedded | path |
//! | `WideFull` | `[8, 12, 16, 20, 24, 28, 32, 256]` | leaf | full |

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_fuzz::{check_trees, impl_fuzz_map, DynMap, Input};

radix_fuzz::under_test!();

/// Declares `KEY -> u64` trees, implements `FuzzMap` for them, and
/// `$all(insert_only)`, one tree of each.
macro_rules! trees {
    ($all:ident, $key:ty:
     $($name:ident: [$($class:literal),*], $layout:ident $(, $compression:ident)?;)*) => {
        $(
            radix_core::radix_tree! {
                /// A tree under test.
                struct $name {
                    key: $key,
                    value: u64,
                    layout: $layout,
                    size_classes: [$($class),*],
                    $(compression: $compression,)?
                }
            }
            impl_fuzz_map!($name, $key, u64, sized);
        )*

        /// One tree of each configuration.
        fn $all(insert_only: bool) -> Vec<DynMap<$key, u64>> {
            vec![$(Box::new(UnderTest::<$name>::create(insert_only))),*]
        }
    };
}

trees! {
    u64_trees, u64:
    Pg: [4, 16, 32, 64, 256], auto;
    NoNode32: [4, 16, 48, 256], embedded;
    Eight: [2, 4, 8, 16, 32, 48, 64, 256], leaf;
    Sparse: [4, 32, 256], inline;
    Node4s: [1, 2, 3, 4, 256], auto;
    Node16s: [8, 12, 16, 20, 24, 28, 32, 256], leaf;
    Node48First: [33, 48, 64, 256], inline;
    OnlyNode256: [256], embedded;
    OneThenAll: [1, 256], auto;
    PgNone: [4, 16, 32, 64, 256], auto, none;
    Node4sLazy: [1, 2, 3, 4, 256], auto, lazy;
    Node16sLazy: [8, 12, 16, 20, 24, 28, 32, 256], embedded, lazy;
    EightPath: [2, 4, 8, 16, 32, 48, 64, 256], leaf, path;
    OneThenAllPath: [1, 256], inline, path;
    PgFull: [4, 16, 32, 64, 256], auto, full;
    SparseFull: [4, 32, 256], inline, full;
    OnlyNode256Full: [256], embedded, full;
    Node48FirstFull: [33, 48, 64, 256], leaf, full;
}

trees! {
    u32_trees, u32:
    Narrow: [4, 16, 32, 64, 256], embedded, none;
    NarrowLazy: [2, 16, 256], leaf, lazy;
    NarrowPath: [4, 16, 48, 256], inline, path;
    NarrowFull: [1, 256], auto, full;
}

trees! {
    u128_trees, u128:
    Wide: [4, 16, 32, 64, 256], auto, none;
    WideLazy: [4, 32, 256], inline, lazy;
    WidePath: [1, 2, 3, 4, 256], embedded, path;
    WideFull: [8, 12, 16, 20, 24, 28, 32, 256], leaf, full;
}

fuzz_target!(|input: Input| {
    check_trees(&input, u64_trees(input.insert_only));
    check_trees(&input, u32_trees(input.insert_only));
    check_trees(&input, u128_trees(input.insert_only));
});
