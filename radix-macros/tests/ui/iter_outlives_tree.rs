// An iterator borrows its tree: the tree cannot be dropped while the
// iterator is still used.
radix_core::radix_tree! {
    pub struct Map {
        key: u32,
        value: u64,
    }
}

fn main() {
    let mut m = Map::new();
    m.insert(1, 2);
    let it = m.iter();
    drop(m);
    for (k, v) in it {
        println!("{k} {v}");
    }
}
