//! `u16 -> Pair` in the inline layout: 16-byte values in the slots of
//! last-level leaf nodes, moved whenever those nodes grow or shrink; one
//! tree per compression (none, lazy, path, full), all on the same
//! operations.

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_fuzz::{check_trees, Input, Pair};

radix_fuzz::trees_per_compression!(key: u16, value: Pair, layout: inline, sized);

fuzz_target!(|input: Input| check_trees(&input, trees(input.insert_only)));
