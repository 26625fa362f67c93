radix_core::radix_tree! {
    pub struct Map {
        key: i32,
        value: u64,
    }
}

fn main() {}
