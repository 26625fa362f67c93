//! `u64 -> u64` in the embedded layout: values in the slot word; one tree
//! per compression (none, lazy, path, full), all on the same operations.

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_fuzz::{check_trees, Input};

radix_fuzz::trees_per_compression!(key: u64, value: u64, layout: embedded, sized);

fuzz_target!(|input: Input| check_trees(&input, trees(input.insert_only)));
