radix_core::radix_tree! {
    pub struct Map {
        key: u32,
        value: [u8; 16],
        layout: embedded,
    }
}

fn main() {}
