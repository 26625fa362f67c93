//! Concurrent trees (`concurrency: rowex`): `u64 -> u64` with values in
//! the slot word, uncompressed and fully compressed, and `u128 -> Vec<u8>`
//! in the leaf layout (values in immutable cells) with the compression the
//! input picks; each run sequentially against a model, then in threaded
//! steps by two writers on disjoint keys beside a reader (see
//! `radix_fuzz::concurrent`).

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_fuzz::{check_rowex, subject, RowexCompression, RowexInput};

radix_core::radix_tree! {
    /// Embedded values, no compression.
    struct Words { key: u64, value: u64, layout: embedded, compression: none, concurrency: rowex }
}

radix_core::radix_tree! {
    /// Embedded values, lazy leaves and path compression.
    struct FullWords { key: u64, value: u64, layout: embedded, compression: full, concurrency: rowex }
}

/// Declares the leaf-layout tree for each compression.
macro_rules! leaf_trees {
    ($($name:ident: $compression:ident;)*) => {$(
        radix_core::radix_tree! {
            /// Byte strings of 0 to 40 bytes in cells, sixteen levels.
            struct $name {
                key: u128,
                value: Vec<u8>,
                layout: leaf,
                compression: $compression,
                concurrency: rowex,
            }
        }
    )*};
}

leaf_trees! {
    Bytes: none;
    LazyBytes: lazy;
    PathBytes: path;
    FullBytes: full;
}

fuzz_target!(|input: RowexInput| {
    let leaf = match input.compression {
        RowexCompression::None => subject::<BytesConfig>("u128 leaf none"),
        RowexCompression::Lazy => subject::<LazyBytesConfig>("u128 leaf lazy"),
        RowexCompression::Path => subject::<PathBytesConfig>("u128 leaf path"),
        RowexCompression::Full => subject::<FullBytesConfig>("u128 leaf full"),
    };
    check_rowex(
        &input,
        vec![
            subject::<WordsConfig>("u64 none"),
            subject::<FullWordsConfig>("u64 full"),
            leaf,
        ],
    );
});
