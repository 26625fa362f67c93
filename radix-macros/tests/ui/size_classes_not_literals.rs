const FOUR: u16 = 4;

radix_core::radix_tree! {
    pub struct Map {
        key: u32,
        value: u64,
        size_classes: [FOUR, 256],
    }
}

fn main() {}
