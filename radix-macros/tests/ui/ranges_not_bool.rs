radix_core::radix_tree! {
    struct Pages { key: u32, value: u64, ranges: yes }
}

fn main() {}
