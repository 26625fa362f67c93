//! `u64 -> VarBytes` in the varlen layout: byte strings of 0 to 40 bytes,
//! embedded in the slot up to 7 bytes and in a leaf of their size above,
//! switching between the two when replaced, in node slots and in lazy
//! leaves alike; one tree per compression (none, lazy, path, full), all on
//! the same operations.

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_core::value::VarBytes;
use radix_fuzz::{check_trees, Input};

radix_fuzz::trees_per_compression!(key: u64, value: VarBytes, layout: varlen, varlen);

fuzz_target!(|input: Input| check_trees(&input, trees(input.insert_only)));
