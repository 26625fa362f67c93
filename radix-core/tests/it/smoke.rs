//! A first end-to-end check of the raw engine.
use radix_core::{Config, RawTree, SizeClasses, mem::LocalMemory, value::Auto};

enum U64Map {}
impl Config for U64Map {
    type Key = u64;
    type Layout = Auto<u64>;
    type Memory = LocalMemory;
    const SIZE_CLASSES: SizeClasses = SizeClasses::DEFAULT;
    const DELETE: bool = true;
}

#[test]
fn insert_get_remove_iterate() {
    let mut t = RawTree::<U64Map>::new();
    let keys: Vec<u64> = (0..5000u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) & 0x07FF_00FF)
        .collect();
    let mut model = std::collections::BTreeMap::new();
    for &k in &keys {
        assert_eq!(t.insert(k, k + 1), model.insert(k, k + 1));
    }
    t.verify().unwrap();
    assert_eq!(t.len(), model.len());
    assert!(
        t.iter()
            .map(|(k, v)| (k, *v))
            .eq(model.iter().map(|(k, v)| (*k, *v)))
    );
    assert!(
        t.range(1000..2_000_000)
            .map(|(k, _)| k)
            .eq(model.range(1000..2_000_000).map(|(k, _)| *k))
    );
    for &k in &keys {
        assert_eq!(t.remove(k), model.remove(&k));
        if k % 7 == 0 {
            t.verify().unwrap();
        }
    }
    assert!(t.is_empty());
    assert_eq!(t.memory_usage(), 0);
}
