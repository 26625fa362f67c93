use radix_core::value::VarBytes;

radix_core::radix_tree! {
    pub struct Map {
        key: u32,
        value: VarBytes,
        layout: varlen,
    }
}

fn main() {
    let mut m = Map::new();
    m.insert(1, &VarBytes::new(b"x").unwrap());
    let _ = m.get_mut(1);
}
