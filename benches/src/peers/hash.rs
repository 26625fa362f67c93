//! hashbrown's hash table with foldhash's fast (non-DoS-resistant) hasher:
//! `HashMap<u64, u64>` for RT (and `HashMap<u128, u64>` for RT-7) and
//! `HashSet<u64>` over `(blk << 16) | off` for TS.
//!
//! A hash set has no block order, so its TS iteration collects the values,
//! sorts them and then groups them: that is what vacuum's heap pass would
//! have to do with it, and the time includes it.

use std::hash::Hash;

use foldhash::fast::FixedState;
use hashbrown::{HashMap, HashSet};
use tidstore::Tid;

use super::{DeadTidSet, RtMap, group_by_block, tid_to_u64};

/// `hashbrown::HashMap<K, u64>` with foldhash's fixed-seed fast hasher, `K`
/// being `u64` or `u128`.
#[derive(Debug, Default)]
pub struct HashbrownMap<K = u64>(HashMap<K, u64, FixedState>);

impl<K: Copy + Eq + Hash> RtMap<K> for HashbrownMap<K> {
    const NAME: &'static str = "hashbrown";

    fn new() -> Self {
        Self(HashMap::with_hasher(FixedState::default()))
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

/// `hashbrown::HashSet<u64>` of `(blk << 16) | off`, foldhash fast hasher.
#[derive(Debug, Default)]
pub struct HashSetPeer(HashSet<u64, FixedState>);

impl DeadTidSet for HashSetPeer {
    const NAME: &'static str = "hashset";

    fn with_capacity(_ndead: u64) -> Self {
        Self(HashSet::with_hasher(FixedState::default()))
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
        let mut sorted: Vec<u64> = self.0.iter().copied().collect();
        sorted.sort_unstable();
        group_by_block(sorted, f);
    }
}
