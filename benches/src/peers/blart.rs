//! blart's `TreeMap<u64, u64>`: an adaptive radix tree with path
//! compression, packaged as a `BTreeMap` replacement.
//!
//! The key type is `u64` as WORKLOADS.md names it. blart turns a `u64` into
//! its native-endian bytes (little-endian here), so the tree branches on the
//! low byte first; its big-endian fixed-length alternative
//! (`Mapped<ToUBE, u64>`) would order keys numerically.

use ::blart::TreeMap;

use super::RtMap;

/// `blart::TreeMap<u64, u64>`.
pub struct BlartMap(TreeMap<u64, u64>);

impl RtMap for BlartMap {
    const NAME: &'static str = "blart";

    fn new() -> Self {
        Self(TreeMap::new())
    }

    #[inline]
    fn insert(&mut self, key: u64, value: u64) {
        self.0.insert(key, value);
    }

    #[inline(always)]
    fn get(&self, key: u64) -> Option<u64> {
        self.0.get(&key).copied()
    }

    #[inline]
    fn remove(&mut self, key: u64) -> bool {
        self.0.remove(&key).is_some()
    }
}
