//! A sorted `Vec<(u64, u64)>` searched by binary search.
//!
//! A load appends and sorts once at the end ([`RtMap::seal`], timed as part
//! of the load): inserting each key in place would cost a quadratic amount
//! of copying for random keys. Once sealed, the vector stays sorted: an
//! insert or remove finds its place by binary search and shifts the tail,
//! which is the price RT-6's churn shows.

use super::RtMap;

/// `Vec<(u64, u64)>`, sorted by key after [`RtMap::seal`].
#[derive(Debug, Default)]
pub struct SortedVecMap {
    entries: Vec<(u64, u64)>,
    /// Whether `entries` is sorted with unique keys.
    sorted: bool,
}

impl SortedVecMap {
    /// The entries, sorted by key once sealed.
    pub fn entries(&self) -> &[(u64, u64)] {
        &self.entries
    }

    #[inline]
    fn search(&self, key: u64) -> Result<usize, usize> {
        debug_assert!(self.sorted, "a sorted-vec map used before seal()");
        self.entries.binary_search_by(|&(k, _)| k.cmp(&key))
    }
}

impl RtMap for SortedVecMap {
    const NAME: &'static str = "sorted-vec";

    fn new() -> Self {
        Self {
            entries: Vec::new(),
            sorted: false,
        }
    }

    #[inline]
    fn insert(&mut self, key: u64, value: u64) {
        if !self.sorted {
            // Loading: append now, sort at seal().
            self.entries.push((key, value));
            return;
        }
        match self.search(key) {
            Ok(i) => self.entries[i].1 = value,
            Err(i) => self.entries.insert(i, (key, value)),
        }
    }

    fn seal(&mut self) {
        // Stable, so the last insert of a duplicated key wins.
        self.entries.sort_by_key(|&(k, _)| k);
        self.entries.dedup_by(|later, earlier| {
            if later.0 == earlier.0 {
                earlier.1 = later.1;
                true
            } else {
                false
            }
        });
        self.entries.shrink_to_fit();
        self.sorted = true;
    }

    #[inline(always)]
    fn get(&self, key: u64) -> Option<u64> {
        self.search(key).ok().map(|i| self.entries[i].1)
    }

    #[inline]
    fn remove(&mut self, key: u64) -> bool {
        match self.search(key) {
            Ok(i) => {
                self.entries.remove(i);
                true
            }
            Err(_) => false,
        }
    }
}
