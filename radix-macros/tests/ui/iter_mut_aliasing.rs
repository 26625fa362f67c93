// A `&mut V` from `iter_mut` borrows the tree exclusively: reading the
// tree while it is alive would alias it.
radix_core::radix_tree! {
    pub struct Map {
        key: u32,
        value: u64,
    }
}

fn main() {
    let mut m = Map::new();
    m.insert(1, 2);
    let (_, v) = m.iter_mut().next().unwrap();
    let other = m.get(1);
    *v += 1;
    println!("{other:?}");
}
