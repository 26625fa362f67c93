//! The standard library's B-trees: `BTreeMap<u64, u64>` for RT (and
//! `BTreeMap<u128, u64>` for RT-7) and `BTreeSet<u64>` over
//! `(blk << 16) | off` for TS.

use std::collections::{BTreeMap, BTreeSet};

use tidstore::Tid;

use super::{group_by_block, tid_to_u64, DeadTidSet, RtMap};

/// `std::collections::BTreeMap<K, u64>`, `K` being `u64` or `u128`.
#[derive(Debug, Default)]
pub struct BTreeMapPeer<K = u64>(BTreeMap<K, u64>);

impl<K: Copy + Ord> RtMap<K> for BTreeMapPeer<K> {
    const NAME: &'static str = "btreemap";

    fn new() -> Self {
        Self(BTreeMap::new())
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

/// `std::collections::BTreeSet<u64>` of `(blk << 16) | off`.
#[derive(Debug, Default)]
pub struct BTreeSetPeer(BTreeSet<u64>);

impl DeadTidSet for BTreeSetPeer {
    const NAME: &'static str = "btreeset";

    fn with_capacity(_ndead: u64) -> Self {
        Self(BTreeSet::new())
    }

    #[inline]
    fn set_block_offsets(&mut self, block: u32, offsets: &[u16]) {
        for &offset in offsets {
            self.0.insert(tid_to_u64(Tid::new(block, offset)));
        }
    }

    #[inline(always)]
    fn is_member(&self, tid: Tid) -> bool {
        self.0.contains(&tid_to_u64(tid))
    }

    fn for_each_block<F: FnMut(u32, &[u16])>(&self, f: F) {
        group_by_block(self.0.iter().copied(), f);
    }
}
