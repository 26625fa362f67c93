//! Shared trees: one or two trees of different layouts in a heap-backed
//! area (the layout, offsets, allocator and locks of POSIX shared memory),
//! with or without a small size limit, written and read through their
//! locks and through second handles; refused inserts and removes must
//! change nothing, and destroying the trees must give the area back.

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_core::value::VarBytes;
use radix_fuzz::{check_shared, impl_shared_config, SharedInput};

radix_core::radix_tree! {
    /// The first configuration: `u64 -> u64` with values in the slot.
    struct Words {
        key: u64,
        value: u64,
        layout: embedded,
        memory: shared,
    }
}

radix_core::radix_tree! {
    /// The second configuration: `u32 -> VarBytes`, byte strings of 0 to
    /// 40 bytes, embedded up to 7 bytes and in leaves above.
    struct Strings {
        key: u32,
        value: VarBytes,
        layout: varlen,
        memory: shared,
    }
}

impl_shared_config!(WordsConfig, u64, sized);
impl_shared_config!(StringsConfig, VarBytes, varlen);

fuzz_target!(|input: SharedInput| {
    check_shared::<WordsConfig, StringsConfig>(&input);
});
