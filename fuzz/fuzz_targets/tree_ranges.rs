//! Trees with range values (`ranges: true`): `u32 -> u64` with values in
//! the slot word, then, as the input picks, `u32 -> Counted` in leaves
//! (copied on every split, dropped on every merge, each exactly once),
//! `u32 -> VarBytes` (byte strings embedded or in leaves) or `u32 -> Pair`
//! (16-byte values inside last-level nodes); each against a key-by-key
//! model (see `radix_fuzz::ranges`).

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_core::value::VarBytes;
use radix_fuzz::{check_ranges, Counted, Pair, RangesInput, SecondTree};

radix_fuzz::under_test!();

radix_core::radix_tree! {
    /// Embedded values.
    struct Words { key: u32, value: u64, layout: embedded, compression: none, ranges: true }
}

radix_core::radix_tree! {
    /// Values in leaves, with a checked `Drop`.
    struct Leaves { key: u32, value: Counted, layout: leaf, compression: none, ranges: true }
}

radix_core::radix_tree! {
    /// Byte strings of 0 to 40 bytes.
    struct Bytes { key: u32, value: VarBytes, layout: varlen, compression: none, ranges: true }
}

radix_core::radix_tree! {
    /// 16-byte values in last-level nodes.
    struct Pairs { key: u32, value: Pair, layout: inline, compression: none, ranges: true }
}

radix_fuzz::impl_range_map!(Words, u64, sized);
radix_fuzz::impl_range_map!(Leaves, Counted, sized);
radix_fuzz::impl_range_map!(Bytes, VarBytes, varlen);
radix_fuzz::impl_range_map!(Pairs, Pair, sized);

fuzz_target!(|input: RangesInput| {
    let io = input.insert_only;
    check_ranges(&input, UnderTest::<Words>::create(io));
    match input.second {
        SecondTree::Leaf => check_ranges(&input, UnderTest::<Leaves>::create(io)),
        SecondTree::Varlen => check_ranges(&input, UnderTest::<Bytes>::create(io)),
        SecondTree::Inline => check_ranges(&input, UnderTest::<Pairs>::create(io)),
    }
});
