radix_core::radix_tree! {
    pub struct Map {
        key: String,
        value: u64,
    }
}

fn main() {}
