//! blart's `TreeMap<u64, u64>` (and `TreeMap<u128, u64>` for RT-7): an
//! adaptive radix tree with path compression, packaged as a `BTreeMap`
//! replacement.
//!
//! The key types are `u64` and `u128` as WORKLOADS.md names them. blart
//! turns an integer into its native-endian bytes (little-endian here), so
//! the tree branches on the low byte first; its big-endian fixed-length
//! alternative (`Mapped<ToUBE, u64>`) would order keys numerically.

use ::blart::{AsBytes, NoPrefixesBytes, TreeMap};

use super::RtMap;

/// `blart::TreeMap<K, u64>`, `K` being `u64` or `u128`.
pub struct BlartMap<K: AsBytes = u64>(TreeMap<K, u64>);

impl<K: Copy + AsBytes + NoPrefixesBytes> RtMap<K> for BlartMap<K> {
    const NAME: &'static str = "blart";

    fn new() -> Self {
        Self(TreeMap::new())
    }

    #[inline]
    fn insert(&mut self, key: K, value: u64) {
        self.0.insert(key, value);
    }

    #[inline(always)]
    fn get(&self, key: K) -> Option<u64> {
        self.0.get(&key).copied()
    }

    #[inline]
    fn remove(&mut self, key: K) -> bool {
        self.0.remove(&key).is_some()
    }
}
