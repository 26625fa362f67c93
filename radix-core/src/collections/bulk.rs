//! Removal and moves in bulk: `pop_first`, `pop_last`, `retain`,
//! `split_off` and `append`.
//!
//! Costs, with `h` the height (at most one level per key byte):
//!
//! | method | cost |
//! |---|---|
//! | `pop_first`, `pop_last` | two descents: O(h) |
//! | `retain` | one walk, plus a removal per rejected entry: O(n + r·h) |
//! | `split_off` | uncompressed: one descent along the key; every subtree above the key's path moves whole (a copy and a free per node, no search, see `raw/graft/`), and the values of the one last-level node on the path one by one: O(h·256 + k), k the nodes moved. Compressed: a removal and an insert per moved entry, O(m·h). O(1) when everything or nothing moves |
//! | `append` | O(1) when `self` is empty (the trees swap). Uncompressed: one walk of both trees together, moving whole every subtree of `other` under a chunk `self` lacks, so O(k) for disjoint key ranges, O(m) at worst. Compressed: an insert per entry of `other` in key order, which the insert hint turns into one node search per entry that shares a last-level node with the previous one |
//!
//! None of them can leave the tree inconsistent when user code panics:
//! `retain` calls the predicate only while walking, and removes what it
//! rejected between walks.

use crate::config::{Config, Removable};
use crate::key::Key;
use crate::mem::{InfallibleMemory, LocalMemory};
use crate::raw::{LayoutOf, RawTree, ValueOf};
use crate::value::MutableLayout;
use alloc::vec::Vec;

/// Rejected keys `retain` collects before removing them: bounds its memory.
const RETAIN_BATCH: usize = 1024;

impl<C: Config> RawTree<C>
where
    C: Removable,
    C::Memory: InfallibleMemory,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    /// Removes and returns the entry with the smallest key.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m: RadixMap<u64, &str> = [(2, "b"), (1, "a")].into_iter().collect();
    /// assert_eq!(m.pop_first(), Some((1, "a")));
    /// assert_eq!(m.pop_first(), Some((2, "b")));
    /// assert_eq!(m.pop_first(), None);
    /// ```
    pub fn pop_first(&mut self) -> Option<(C::Key, ValueOf<C>)> {
        crate::raw::refuse_ranges!(C, "pop_first");
        let (key, _) = self.first_key_value()?;
        self.take_present(key)
    }

    /// Removes and returns the entry with the largest key.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m: RadixMap<u64, &str> = [(2, "b"), (1, "a")].into_iter().collect();
    /// assert_eq!(m.pop_last(), Some((2, "b")));
    /// assert_eq!(m.pop_last(), Some((1, "a")));
    /// assert_eq!(m.pop_last(), None);
    /// ```
    pub fn pop_last(&mut self) -> Option<(C::Key, ValueOf<C>)> {
        crate::raw::refuse_ranges!(C, "pop_last");
        let (key, _) = self.last_key_value()?;
        self.take_present(key)
    }

    /// Removes `key`, returning it with its value if it was present, as
    /// `BTreeMap::remove_entry` does.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m = RadixMap::<u64, &str>::from([(1, "a")]);
    /// assert_eq!(m.remove_entry(1), Some((1, "a")));
    /// assert_eq!(m.remove_entry(1), None);
    /// ```
    pub fn remove_entry(&mut self, key: C::Key) -> Option<(C::Key, ValueOf<C>)> {
        self.take_present(key)
    }

    fn take_present(&mut self, key: C::Key) -> Option<(C::Key, ValueOf<C>)> {
        LayoutOf::<C>::old_value(self.remove(key)).map(|value| (key, value))
    }

    /// Keeps only the entries for which `keep(key, &mut value)` is true,
    /// visiting them in ascending key order.
    ///
    /// The walk stops to remove what it rejected every 1024 rejections, so
    /// it needs no memory proportional to the tree. If `keep` panics, the
    /// entries it rejected since the last such stop stay in the tree.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m: RadixMap<u64, u32> = (0..10).map(|k| (k, k as u32 * 10)).collect();
    /// m.retain(|k, v| {
    ///     *v += 1; // the values kept may be changed too
    ///     k % 3 == 0
    /// });
    /// assert_eq!(m.iter().collect::<Vec<_>>(), [(0, &1), (3, &31), (6, &61), (9, &91)]);
    /// ```
    pub fn retain<F: FnMut(C::Key, &mut ValueOf<C>) -> bool>(&mut self, mut keep: F) {
        crate::raw::refuse_ranges!(C, "retain");
        let mut rejected = Vec::new();
        let mut from = Some(C::Key::MIN);
        while let Some(start) = from {
            from = None;
            for (key, value) in self.range_mut(start..) {
                if !keep(key, value) {
                    rejected.push(key);
                    if rejected.len() == RETAIN_BATCH {
                        from = key.checked_next();
                        break;
                    }
                }
            }
            for key in rejected.drain(..) {
                self.remove(key);
            }
        }
    }
}

impl<C: Config<Memory = LocalMemory>> RawTree<C>
where
    C: Removable,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    /// Splits the tree at `key`: everything at or after `key` moves to the
    /// returned tree (built on a back end with the same options), the rest
    /// stays.
    ///
    /// An uncompressed tree moves whole subtrees: only the nodes on the
    /// path to `key` are searched, and every subtree to the right of that
    /// path is copied node by node into the new tree's memory, without
    /// looking at its keys (see the module docs for the costs).
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut low: RadixMap<u64, char> = [(1, 'a'), (5, 'e'), (9, 'i')].into_iter().collect();
    /// let high = low.split_off(5);
    /// assert_eq!(low.keys().collect::<Vec<_>>(), [1]);
    /// assert_eq!(high.keys().collect::<Vec<_>>(), [5, 9]);
    /// ```
    pub fn split_off(&mut self, key: C::Key) -> Self {
        crate::raw::refuse_ranges!(C, "split_off");
        if C::COMPRESSION.is_none() {
            let empty = Self::with_memory(self.mem.empty_like());
            return match self.first_key_value() {
                None => empty,
                Some((first, _)) if first >= key => core::mem::replace(self, empty),
                Some(_) if key.above(self.root_shift) => empty,
                Some(_) => self.split_moving(key),
            };
        }
        let mut upper = Self::with_memory(self.mem.empty_like());
        // From the top down: each removal leaves the rest of the range in
        // place, and the inserts into `upper` meet its nodes in key order
        // (descending), so consecutive keys share the hinted node.
        while let Some((last, _)) = self.last_key_value() {
            if last < key {
                break;
            }
            if let Some((k, v)) = self.pop_last() {
                upper.insert(k, LayoutOf::<C>::input(v));
            }
        }
        upper
    }
}

impl<C: Config<Memory = LocalMemory>> RawTree<C>
where
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    /// Moves every entry of `other` into `self`, leaving `other` empty; a
    /// key in both takes `other`'s value.
    ///
    /// An uncompressed tree walks both trees together and moves every
    /// subtree of `other` whose place `self` does not have yet in one piece,
    /// so appending a tree of larger (or smaller) keys costs about one node
    /// copy per node moved, not one insert per entry.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut a: RadixMap<u64, &str> = [(1, "a"), (2, "b")].into_iter().collect();
    /// let mut b: RadixMap<u64, &str> = [(2, "B"), (3, "C")].into_iter().collect();
    /// a.append(&mut b);
    /// assert!(b.is_empty());
    /// assert_eq!(a.into_iter().collect::<Vec<_>>(), [(1, "a"), (2, "B"), (3, "C")]);
    /// ```
    pub fn append(&mut self, other: &mut Self) {
        crate::raw::refuse_ranges!(C, "append");
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            core::mem::swap(self, other);
            return;
        }
        let empty = Self::with_memory(other.mem.empty_like());
        let other = core::mem::replace(other, empty);
        if C::COMPRESSION.is_none() {
            self.merge_from(other, |_, ours, theirs| *ours = theirs);
            return;
        }
        for (key, value) in other {
            self.insert(key, LayoutOf::<C>::input(value));
        }
    }
}
