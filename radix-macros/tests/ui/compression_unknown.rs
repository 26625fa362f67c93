radix_core::radix_tree! {
    pub struct Map {
        key: u128,
        value: u64,
        compression: zip,
    }
}

fn main() {}
