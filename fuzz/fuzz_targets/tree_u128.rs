//! `u128 -> Counted` in the inline layout: sixteen levels, keys near 0,
//! near `u128::MAX` and around powers of two (the key generator favours
//! them), and 24-byte values with a checked `Drop` moved inside leaf nodes;
//! one tree per compression (none, lazy, path, full: up to 15 skipped
//! bytes in a prefix word), all on the same operations.

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_fuzz::{check_trees, Counted, Input};

radix_fuzz::trees_per_compression!(key: u128, value: Counted, layout: inline, sized);

fuzz_target!(|input: Input| check_trees(&input, trees(input.insert_only)));
