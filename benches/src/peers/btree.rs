//! The standard library's B-trees: `BTreeMap<u64, u64>` for RT (and
//! `BTreeMap<u128, u64>` for RT-7) and `BTreeSet<u64>` over
//! `(blk << 16) | off` for TS; the same two for the set-operation
//! workloads (SET-1: the `BTreeSet`, SET-2: the `BTreeMap`), combined by
//! `append` and `retain`.

use std::collections::{BTreeMap, BTreeSet};

use tidstore::Tid;

use crate::structures::TidSide;

use super::{DeadTidSet, RtMap, SetOps, element_checksum, group_by_block, tid_to_u64};

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

/// SET-1: `BTreeSet<u64>` of `(blk << 16) | off`, one `insert` per TID as
/// the TS load does.
#[derive(Debug, Clone)]
pub struct BTreeSetTids(BTreeSet<u64>);

impl SetOps for BTreeSetTids {
    const NAME: &'static str = "btreeset";
    type Input = TidSide;

    fn build(side: &TidSide) -> Self {
        let mut set = BTreeSet::new();
        for &block in &side.blocks {
            for &offset in &side.offsets {
                set.insert(tid_to_u64(Tid::new(block, offset)));
            }
        }
        Self(set)
    }

    fn copy(&self) -> Self {
        self.clone()
    }

    /// `append`: one merge of the two sets' elements into a new tree.
    fn union_with(&mut self, mut other: Self) -> Option<Self> {
        self.0.append(&mut other.0);
        Some(other)
    }

    fn intersect_with(&mut self, other: &Self) {
        self.0.retain(|key| other.0.contains(key));
    }

    fn count(&self) -> u64 {
        self.0.len() as u64
    }

    fn checksum(&self) -> u64 {
        self.0
            .iter()
            .fold(0, |sum, &key| sum.wrapping_add(element_checksum(key, key)))
    }
}

/// SET-2: `BTreeMap<u64, u64>`, one `insert(key, key)` per key in stream
/// order.
#[derive(Debug, Clone)]
pub struct BTreeMapKeys(BTreeMap<u64, u64>);

impl SetOps for BTreeMapKeys {
    const NAME: &'static str = "btreemap";
    type Input = [u64];

    fn build(keys: &[u64]) -> Self {
        let mut map = BTreeMap::new();
        for &key in keys {
            map.insert(key, key);
        }
        Self(map)
    }

    fn copy(&self) -> Self {
        self.clone()
    }

    /// `append`, one merge of both maps into a new tree. `append` lets the
    /// argument's value win on a shared key, so B takes in A (A's values
    /// win) and the result becomes A.
    fn union_with(&mut self, mut other: Self) -> Option<Self> {
        other.0.append(&mut self.0);
        std::mem::swap(&mut self.0, &mut other.0);
        Some(other)
    }

    fn intersect_with(&mut self, other: &Self) {
        self.0.retain(|key, _| other.0.contains_key(key));
    }

    fn count(&self) -> u64 {
        self.0.len() as u64
    }

    fn checksum(&self) -> u64 {
        self.0.iter().fold(0, |sum, (&key, &value)| {
            sum.wrapping_add(element_checksum(key, value))
        })
    }
}
