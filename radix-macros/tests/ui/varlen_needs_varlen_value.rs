radix_core::radix_tree! {
    pub struct Map {
        key: u32,
        value: String,
        layout: varlen,
    }
}

fn main() {}
