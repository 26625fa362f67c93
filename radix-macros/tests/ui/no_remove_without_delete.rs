radix_core::radix_tree! {
    /// Insert-only.
    pub struct Map {
        key: u32,
        value: u64,
        delete: false,
    }
}

fn main() {
    let mut m = Map::new();
    m.insert(1, 2);
    m.remove(1);
}
