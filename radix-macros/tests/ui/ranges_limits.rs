radix_core::radix_tree! {
    struct Compressed { key: u64, value: u64, ranges: true, compression: full }
}

radix_core::radix_tree! {
    struct Bytes { key: u8, value: u64, ranges: true }
}

radix_core::radix_tree! {
    struct Concurrent { key: u64, value: u64, ranges: true, concurrency: rowex }
}

fn main() {}
