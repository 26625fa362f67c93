radix_core::radix_tree! {
    pub struct Map {
        key: u32,
        value: u64,
        size_classes: [4, 16, 70000],
    }
}

fn main() {}
