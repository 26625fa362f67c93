//! [`ObjectCache`]: the objects a process holds back from a concurrent
//! shared tree's pools, so that most allocations and frees take no
//! process-shared lock.
//!
//! A concurrent tree in an area allocates from pools kept in the area and
//! changed under the tree's allocation mutex (`space.rs`). Writers in
//! several processes each took that mutex once per node or leaf, and the
//! pools' list heads and counters moved between their cores with it: in a
//! parallel heap scan, where every page stores a leaf, that lock was the
//! one point every worker met. So each process keeps a magazine of free
//! objects per pool (`mem/magazine.rs`, the policy local concurrent trees
//! follow per thread), as offsets in the area, and goes to the pools only
//! to refill an empty magazine or to give back the oldest batch of a full
//! one.
//!
//! What it costs: a process holds back at most two batches per pool
//! (2 KiB, or two objects where one is larger) that no other process can
//! use, counted in the area's size all the while.
//! Dropping the tree's handle gives them back; a process that dies with
//! objects cached leaks them until the tree is destroyed, which frees
//! every span whoever holds its objects. An allocation that the area
//! refuses for a whole batch falls back to one object, so a full area
//! refuses a write only when the pools have no object left to give.

use super::control::POOLS;
use crate::mem::magazine::Magazine;

/// Bytes of objects a batch takes from a pool (one object when it is
/// larger); a cache keeps at most two batches of a pool.
const BATCH_BYTES: usize = 1 << 10;
/// The most objects of one pool a batch takes.
const MAX_BATCH: usize = 32;

/// Objects taken from a tree's pools and not yet handed out, or freed by
/// this process and not yet given back, by pool: as offsets in the area.
#[derive(Debug)]
pub(crate) struct ObjectCache {
    objects: [Magazine<usize>; POOLS],
}

impl ObjectCache {
    /// An empty cache.
    pub(crate) fn new() -> Self {
        Self {
            objects: core::array::from_fn(|_| Magazine::new()),
        }
    }

    /// How many objects of `size` bytes a refill takes.
    pub(crate) fn batch(size: usize) -> usize {
        (BATCH_BYTES / size.max(1)).clamp(1, MAX_BATCH)
    }

    /// An object of `pool`, if the cache has one.
    #[inline]
    pub(crate) fn take(&mut self, pool: usize) -> Option<usize> {
        self.objects[pool].pop()
    }

    /// Keeps `objects` of `pool`, taken from it in a batch.
    pub(crate) fn fill(&mut self, pool: usize, objects: impl IntoIterator<Item = usize>) {
        self.objects[pool].refill(objects);
    }

    /// Keeps freed object `offset` of `pool`, whose objects are `size`
    /// bytes; if that fills the cache, the objects to give back to the
    /// pool (the oldest half).
    #[inline]
    pub(crate) fn put(&mut self, pool: usize, offset: usize, size: usize) -> Option<Vec<usize>> {
        let oldest = self.objects[pool].push(offset, Self::batch(size))?;
        Some(oldest.collect())
    }

    /// Takes every object out of the cache, by pool.
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = (usize, Vec<usize>)> + '_ {
        self.objects
            .iter_mut()
            .enumerate()
            .filter(|(_, objects)| !objects.is_empty())
            .map(|(pool, objects)| (pool, objects.take_all()))
    }

    /// Forgets every object, for a tree whose memory went back whole.
    pub(crate) fn forget(&mut self) {
        self.objects.iter_mut().for_each(Magazine::clear);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_are_sized_by_bytes_and_a_full_cache_gives_back_half() {
        assert_eq!(ObjectCache::batch(32), MAX_BATCH);
        assert_eq!(ObjectCache::batch(256), 4);
        assert_eq!(ObjectCache::batch(4096), 1);
        let mut cache = ObjectCache::new();
        assert_eq!(cache.take(3), None);
        cache.fill(3, [64, 128, 192, 256]);
        assert_eq!(cache.take(3), Some(256));
        // 256-byte objects: batches of 4, at most 8 kept.
        let given: Vec<_> = (0..6).filter_map(|i| cache.put(3, 1000 + i, 256)).collect();
        assert_eq!(given, [vec![64, 128, 192, 1000]]);
        let drained: Vec<_> = cache.drain().collect();
        assert_eq!(drained, [(3, vec![1001, 1002, 1003, 1004, 1005])]);
        assert_eq!(cache.drain().count(), 0);
        cache.fill(0, [8]);
        cache.forget();
        assert_eq!(cache.take(0), None);
    }
}
