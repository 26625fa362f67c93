radix_core::radix_tree! {
    pub struct Names {
        key: u32,
        value: String,
        layout: leaf,
        memory: shared,
    }
}

fn main() {}
