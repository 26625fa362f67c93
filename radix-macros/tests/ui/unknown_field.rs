radix_core::radix_tree! {
    pub struct Map {
        key: u32,
        value: u64,
        colour: red,
    }
}

fn main() {}
