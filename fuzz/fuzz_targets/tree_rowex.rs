//! Concurrent trees (`concurrency: rowex`): `u64 -> u64` with values in
//! the slot word, uncompressed and fully compressed, and `u128 -> Vec<u8>`
//! in the leaf layout (values in immutable cells) with the compression the
//! input picks; and with that compression two trees in shared memory
//! (`memory: shared`), each in a heap-backed area of its own: `u64 ->
//! u64` in an area too large to fill, and `u128 -> [u64; 2]` leaves in an
//! area limited to 128 KiB, whose refused writes must change nothing.
//! Each is run sequentially against a model, then in threaded steps by
//! two writers on disjoint keys beside a reader (see
//! `radix_fuzz::concurrent`), and a shared tree is destroyed at the end.

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_fuzz::{
    check_rowex, shared_subject, subject, RowexCompression, RowexConfig, RowexInput, RowexSubject,
    SMALL_AREA,
};

radix_core::radix_tree! {
    /// Embedded values, no compression.
    struct Words { key: u64, value: u64, layout: embedded, compression: none, concurrency: rowex }
}

radix_core::radix_tree! {
    /// Embedded values, lazy leaves and path compression.
    struct FullWords { key: u64, value: u64, layout: embedded, compression: full, concurrency: rowex }
}

/// Declares, for one compression, the local leaf-layout tree and the two
/// shared trees.
macro_rules! trees {
    ($($compression:ident: $bytes:ident, $shared_words:ident, $shared_pairs:ident;)*) => {$(
        radix_core::radix_tree! {
            /// Byte strings of 0 to 40 bytes in cells, sixteen levels.
            struct $bytes {
                key: u128,
                value: Vec<u8>,
                layout: leaf,
                compression: $compression,
                concurrency: rowex,
            }
        }

        radix_core::radix_tree! {
            /// Embedded values in an area.
            struct $shared_words {
                key: u64,
                value: u64,
                layout: embedded,
                memory: shared,
                compression: $compression,
                concurrency: rowex,
            }
        }

        radix_core::radix_tree! {
            /// 16-byte values in cells in an area, sixteen levels.
            struct $shared_pairs {
                key: u128,
                value: [u64; 2],
                layout: leaf,
                memory: shared,
                compression: $compression,
                concurrency: rowex,
            }
        }
    )*};
}

trees! {
    none: Bytes, SharedWords, SharedPairs;
    lazy: LazyBytes, LazySharedWords, LazySharedPairs;
    path: PathBytes, PathSharedWords, PathSharedPairs;
    full: FullBytes, FullSharedWords, FullSharedPairs;
}

/// The trees of one compression: the local leaf tree, the shared `u64`
/// tree in an unlimited area and the shared leaf tree in a small one.
fn with<Leaf, Words, Pairs>(names: [&'static str; 3]) -> [Box<dyn RowexSubject>; 3]
where
    Leaf: RowexConfig,
    Words: RowexConfig,
    Pairs: RowexConfig,
{
    [
        subject::<Leaf>(names[0]),
        shared_subject::<Words>(names[1], None),
        shared_subject::<Pairs>(names[2], Some(SMALL_AREA)),
    ]
}

fuzz_target!(|input: RowexInput| {
    let [leaf, shared_words, shared_pairs] = match input.compression {
        RowexCompression::None => with::<BytesConfig, SharedWordsConfig, SharedPairsConfig>([
            "u128 leaf none",
            "shared u64 none",
            "shared u128 leaf none (limited)",
        ]),
        RowexCompression::Lazy => {
            with::<LazyBytesConfig, LazySharedWordsConfig, LazySharedPairsConfig>([
                "u128 leaf lazy",
                "shared u64 lazy",
                "shared u128 leaf lazy (limited)",
            ])
        }
        RowexCompression::Path => {
            with::<PathBytesConfig, PathSharedWordsConfig, PathSharedPairsConfig>([
                "u128 leaf path",
                "shared u64 path",
                "shared u128 leaf path (limited)",
            ])
        }
        RowexCompression::Full => {
            with::<FullBytesConfig, FullSharedWordsConfig, FullSharedPairsConfig>([
                "u128 leaf full",
                "shared u64 full",
                "shared u128 leaf full (limited)",
            ])
        }
    };
    check_rowex(
        &input,
        vec![
            subject::<WordsConfig>("u64 none"),
            subject::<FullWordsConfig>("u64 full"),
            leaf,
            shared_words,
            shared_pairs,
        ],
    );
});
