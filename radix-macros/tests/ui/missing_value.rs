radix_core::radix_tree! {
    pub struct Map {
        key: u32,
    }
}

fn main() {}
