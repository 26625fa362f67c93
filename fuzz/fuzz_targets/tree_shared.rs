//! Shared trees: one or two trees of different layouts in a heap-backed
//! area (the layout, offsets, allocator and locks of POSIX shared memory),
//! with or without a small size limit, written and read through their
//! locks and through second handles; refused inserts and removes must
//! change nothing, and destroying the trees must give the area back. The
//! input picks how the trees hold keys: compression none, lazy, path or
//! full, or range values, whose splits a limited area may refuse half-way
//! (`radix_fuzz::shared_pairs!` declares a pair of trees for each).

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_fuzz::SharedInput;

radix_fuzz::shared_pairs!();

fuzz_target!(|input: SharedInput| {
    check_shared_input(&input);
});
