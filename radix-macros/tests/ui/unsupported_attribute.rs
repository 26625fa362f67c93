radix_core::radix_tree! {
    #[derive(Clone)]
    pub struct Map {
        key: u32,
        value: u64,
    }
}

fn main() {}
