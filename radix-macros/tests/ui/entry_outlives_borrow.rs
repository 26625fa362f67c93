// An entry borrows its tree exclusively until it is used up: the tree
// cannot be read while an entry is alive.
radix_core::radix_tree! {
    pub struct Map {
        key: u32,
        value: u64,
    }
}

fn main() {
    let mut m = Map::new();
    m.insert(1, 2);
    let e = m.entry(3);
    let len = m.len();
    e.or_insert(4);
    println!("{len}");
}
