//! rart's `AdaptiveRadixTree` with 8-byte array keys (`ArrayKey<8>`, the
//! key's big-endian bytes) and `u64` values.

use ::rart::{AdaptiveRadixTree, ArrayKey};

use super::RtMap;

/// `rart::AdaptiveRadixTree<ArrayKey<8>, u64>`.
pub struct RartMap(AdaptiveRadixTree<ArrayKey<8>, u64>);

impl RtMap for RartMap {
    const NAME: &'static str = "rart";

    fn new() -> Self {
        Self(AdaptiveRadixTree::new())
    }

    #[inline]
    fn insert(&mut self, key: u64, value: u64) {
        self.0.insert(key, value);
    }

    #[inline(always)]
    fn get(&self, key: u64) -> Option<u64> {
        self.0.get_bytes(&key.to_be_bytes()).copied()
    }

    #[inline]
    fn remove(&mut self, key: u64) -> bool {
        self.0.remove(key).is_some()
    }
}
