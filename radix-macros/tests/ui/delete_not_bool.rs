radix_core::radix_tree! {
    pub struct Map {
        key: u32,
        value: u64,
        delete: "no",
    }
}

fn main() {}
