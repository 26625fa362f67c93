struct Opaque(u32);

radix_core::radix_tree! {
    struct Pages { key: u32, value: Opaque, ranges: true }
}

fn main() {}
