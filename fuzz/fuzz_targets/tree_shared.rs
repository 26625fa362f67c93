//! Shared trees: one or two trees of different layouts in a heap-backed
//! area (the layout, offsets, allocator and locks of POSIX shared memory),
//! with or without a small size limit, written and read through their
//! locks and through second handles; refused inserts and removes must
//! change nothing, and destroying the trees must give the area back. The
//! input picks the trees' compression (none, lazy, path or full): the pair
//! is declared once per choice.

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_core::value::VarBytes;
use radix_fuzz::{check_shared, impl_shared_config, SharedCompression, SharedInput};

/// Declares the target's two configurations for one compression: `u64 ->
/// u64` with values in the slot, and `u32 -> VarBytes`, byte strings of 0
/// to 40 bytes, embedded up to 7 bytes and in leaves above.
macro_rules! pair {
    (
        $compression:ident:
        $words:ident, $words_config:ident, $strings:ident, $strings_config:ident
    ) => {
        radix_core::radix_tree! {
            /// The first configuration.
            struct $words {
                key: u64,
                value: u64,
                layout: embedded,
                memory: shared,
                compression: $compression,
            }
        }

        radix_core::radix_tree! {
            /// The second configuration.
            struct $strings {
                key: u32,
                value: VarBytes,
                layout: varlen,
                memory: shared,
                compression: $compression,
            }
        }

        impl_shared_config!($words_config, u64, sized);
        impl_shared_config!($strings_config, VarBytes, varlen);
    };
}

pair!(none: Words, WordsConfig, Strings, StringsConfig);
pair!(lazy: LazyWords, LazyWordsConfig, LazyStrings, LazyStringsConfig);
pair!(path: PathWords, PathWordsConfig, PathStrings, PathStringsConfig);
pair!(full: FullWords, FullWordsConfig, FullStrings, FullStringsConfig);

fuzz_target!(|input: SharedInput| {
    match input.compression {
        SharedCompression::None => check_shared::<WordsConfig, StringsConfig>(&input),
        SharedCompression::Lazy => check_shared::<LazyWordsConfig, LazyStringsConfig>(&input),
        SharedCompression::Path => check_shared::<PathWordsConfig, PathStringsConfig>(&input),
        SharedCompression::Full => check_shared::<FullWordsConfig, FullStringsConfig>(&input),
    };
});
