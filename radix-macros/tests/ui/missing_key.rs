radix_core::radix_tree! {
    pub struct Map {
        value: u32,
    }
}

fn main() {}
