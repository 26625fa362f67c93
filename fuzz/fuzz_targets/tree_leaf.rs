//! `u32 -> Counted` in the leaf layout: one allocation per 24-byte value,
//! whose `Drop` checks that every value is dropped exactly once, in node
//! slots and in lazy leaves alike; one tree per compression (none, lazy,
//! path, full), all on the same operations.

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_fuzz::{check_trees, Counted, Input};

radix_fuzz::trees_per_compression!(key: u32, value: Counted, layout: leaf, sized);

fuzz_target!(|input: Input| check_trees(&input, trees(input.insert_only)));
