//! Sets: [`TreeSet<C>`], a tree whose values are `()`, with `BTreeSet`'s
//! API.
//!
//! A set is the engine with unit values (which the `auto` and `embedded`
//! layouts store in no space at all: a slot holds nothing), wrapped so
//! that its methods speak of keys alone: `insert(key) -> bool`,
//! `contains`, `iter` over keys, and the set algebra of `BTreeSet`:
//! [`union`](TreeSet::union), [`intersection`](TreeSet::intersection),
//! [`difference`](TreeSet::difference) and
//! [`symmetric_difference`](TreeSet::symmetric_difference) as lazy
//! iterators merging two ascending walks, plus in-place
//! [`union_with`](TreeSet::union_with) and its siblings, and the subset
//! tests. [`RadixSet<K>`](crate::RadixSet) is a `TreeSet` in the default
//! configuration; `radix_set!` declares a named set type with a
//! configuration of its own.
//!
//! | file | what it holds |
//! |---|---|
//! | `mod.rs` | [`TreeSet`] and its methods |
//! | `iter.rs` | [`SetRange`] and the lazy [`Union`], [`Intersection`], [`Difference`], [`SymmetricDifference`] |
//! | `operators.rs` | `&a \| &b`, `&a & &b`, `&a - &b`, `&a ^ &b`, each a new set |
//! | `traits.rs` | `Clone`, `Debug`, comparisons, `Hash`, `Extend`, `From`, `FromIterator`, `IntoIterator` |

mod iter;
mod operators;
mod traits;

use alloc::string::String;
use alloc::vec::Vec;
use core::ops::RangeBounds;

use iter::Merge;
pub use iter::{Difference, Intersection, SetRange, SymmetricDifference, Union};

use crate::config::{Config, Removable};
use crate::iter::Keys;
use crate::mem::{InfallibleMemory, LocalMemory, PoolSpec};
use crate::value::MutableLayout;
use crate::{RawTree, Stats};

/// The configurations a [`TreeSet`] takes: unit values, in a layout of
/// sized values, on memory that cannot run out.
pub trait SetConfig: Config<Layout: MutableLayout<Value = ()>, Memory: InfallibleMemory> {}

impl<C> SetConfig for C where C: Config<Layout: MutableLayout<Value = ()>, Memory: InfallibleMemory> {}

/// An ordered set of integer keys stored as a radix tree with unit values.
///
/// ```
/// use radix_core::RadixSet;
///
/// let mut set = RadixSet::<u64>::new();
/// assert!(set.insert(42));
/// assert!(!set.insert(42));
/// assert!(set.contains(42));
/// let other: RadixSet<u64> = [41, 42, 43].into_iter().collect();
/// assert!(set.is_subset(&other));
/// assert_eq!(other.difference(&set).collect::<Vec<_>>(), [41, 43]);
/// ```
pub struct TreeSet<C: Config> {
    pub(super) tree: RawTree<C>,
}

impl<C: SetConfig<Memory = LocalMemory>> TreeSet<C> {
    /// An empty set. It allocates nothing until the first insert.
    ///
    /// ```
    /// radix_core::radix_set! {
    ///     /// Blocks with dead tuples.
    ///     pub struct DeadBlocks { key: u32 }
    /// }
    ///
    /// let mut dead = DeadBlocks::new();
    /// assert!(dead.is_empty());
    /// dead.insert(7);
    /// assert_eq!(dead.first(), Some(7));
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self {
            tree: RawTree::new(),
        }
    }

    /// An empty set whose back end is laid out as `options` say: a block
    /// limit, or bump arenas for an insert-only pass.
    ///
    /// ```
    /// use radix_core::RadixSet;
    /// use radix_core::mem::MemoryOptions;
    ///
    /// let mut s = RadixSet::<u32>::with_options(MemoryOptions::new().block_limit(4096));
    /// s.extend(0..1000);
    /// assert_eq!(s.len(), 1000);
    /// ```
    #[must_use]
    pub fn with_options(options: crate::mem::MemoryOptions) -> Self {
        Self {
            tree: RawTree::with_options(options),
        }
    }

    /// An empty set over a memory back end built from
    /// [`pool_specs`](Self::pool_specs).
    ///
    /// ```
    /// use radix_core::mem::LocalMemory;
    /// use radix_core::RadixSet;
    ///
    /// let memory = LocalMemory::with_block_limit(&RadixSet::<u32>::pool_specs(), 4096);
    /// let mut s = RadixSet::<u32>::with_memory(memory);
    /// s.extend(0..1000);
    /// assert_eq!(s.len(), 1000);
    /// ```
    #[must_use]
    pub fn with_memory(memory: LocalMemory) -> Self {
        Self {
            tree: RawTree::with_memory(memory),
        }
    }

    /// The node pools a memory back end for this set must serve.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let specs = RadixSet::<u32>::pool_specs();
    /// assert!(!specs.is_empty());
    /// assert!(specs.iter().all(|pool| pool.size > 0 && pool.align >= 8));
    /// ```
    #[must_use]
    pub fn pool_specs() -> Vec<PoolSpec> {
        RawTree::<C>::pool_specs()
    }

    /// Moves every key of `other` into this set, leaving `other` empty.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let mut a: RadixSet<u32> = [1, 2].into_iter().collect();
    /// let mut b: RadixSet<u32> = [2, 3].into_iter().collect();
    /// a.append(&mut b);
    /// assert!(b.is_empty());
    /// assert_eq!(a.iter().collect::<Vec<_>>(), [1, 2, 3]);
    /// ```
    pub fn append(&mut self, other: &mut Self) {
        self.tree.append(&mut other.tree);
    }

    /// Keeps only the keys also in `other`.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let mut a: RadixSet<u32> = (0..10).collect();
    /// let b: RadixSet<u32> = (5..15).collect();
    /// a.intersect_with(&b);
    /// assert_eq!(a.iter().collect::<Vec<_>>(), [5, 6, 7, 8, 9]);
    /// ```
    pub fn intersect_with(&mut self, other: &Self) {
        self.tree.intersect_with(&other.tree, |_, (), ()| {});
    }
}

impl<C: SetConfig<Memory = LocalMemory> + Removable> TreeSet<C> {
    /// Moves every key at or after `key` into a new set, which it returns.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let mut low: RadixSet<u32> = (0..10).collect();
    /// let high = low.split_off(7);
    /// assert_eq!(low.last(), Some(6));
    /// assert_eq!(high.iter().collect::<Vec<_>>(), [7, 8, 9]);
    /// ```
    #[must_use]
    pub fn split_off(&mut self, key: C::Key) -> Self {
        Self {
            tree: self.tree.split_off(key),
        }
    }
}

impl<C: SetConfig<Memory = LocalMemory>> Default for TreeSet<C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: SetConfig> TreeSet<C> {
    /// Adds `key`, returning whether it was absent.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let mut s = RadixSet::<u32>::new();
    /// assert!(s.insert(5));
    /// assert!(!s.insert(5));
    /// assert_eq!(s.len(), 1);
    /// ```
    #[inline]
    pub fn insert(&mut self, key: C::Key) -> bool {
        let old = self.tree.insert(key, C::Layout::input(()));
        C::Layout::old_value(old).is_none()
    }

    /// Whether `key` is in the set.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let s: RadixSet<u32> = [1, 2].into_iter().collect();
    /// assert!(s.contains(2));
    /// assert!(!s.contains(3));
    /// ```
    #[inline]
    pub fn contains(&self, key: C::Key) -> bool {
        self.tree.contains_key(key)
    }

    /// `key`, if it is in the set: `BTreeSet::get` with keys by value,
    /// for code written for it (an integer key equal to `key` is `key`).
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let s = RadixSet::<u32>::from([1, 2]);
    /// assert_eq!(s.get(2), Some(2));
    /// assert_eq!(s.get(3), None);
    /// ```
    #[inline]
    pub fn get(&self, key: C::Key) -> Option<C::Key> {
        self.contains(key).then_some(key)
    }

    /// Adds `key`, returning it if it was already present (the one it
    /// "replaces"), as `BTreeSet::replace` does.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let mut s = RadixSet::<u32>::new();
    /// assert_eq!(s.replace(7), None);
    /// assert_eq!(s.replace(7), Some(7));
    /// assert_eq!(s.len(), 1);
    /// ```
    #[inline]
    pub fn replace(&mut self, key: C::Key) -> Option<C::Key> {
        (!self.insert(key)).then_some(key)
    }

    /// The number of keys. O(1).
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let mut s = RadixSet::<u32>::new();
    /// s.extend([3, 1, 3]);
    /// assert_eq!(s.len(), 2);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.tree.len()
    }

    /// Whether the set is empty. O(1).
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let mut s = RadixSet::<u32>::new();
    /// assert!(s.is_empty());
    /// s.insert(1);
    /// assert!(!s.is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.tree.is_empty()
    }

    /// Removes every key and returns all memory.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let mut s: RadixSet<u32> = (0..1000).collect();
    /// assert!(s.memory_usage() > 0);
    /// s.clear();
    /// assert!(s.is_empty());
    /// assert_eq!(s.memory_usage(), 0);
    /// ```
    pub fn clear(&mut self) {
        self.tree.clear();
    }

    /// The keys in ascending order.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let s: RadixSet<u32> = [30, 10, 20].into_iter().collect();
    /// assert_eq!(s.iter().collect::<Vec<_>>(), [10, 20, 30]);
    /// assert_eq!(s.iter().next_back(), Some(30));
    /// // `&set` iterates the same way.
    /// assert_eq!((&s).into_iter().sum::<u32>(), 60);
    /// ```
    pub fn iter(&self) -> Keys<'_, C> {
        self.tree.keys()
    }

    /// The keys in `range`, ascending. A range whose start lies after its
    /// end is empty, and so is one whose bounds are equal and both excluded
    /// (`BTreeSet` panics on both).
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let s: RadixSet<u32> = (0..100).step_by(10).collect();
    /// assert_eq!(s.range(15..=40).collect::<Vec<_>>(), [20, 30, 40]);
    /// assert_eq!(s.range(..25).next_back(), Some(20));
    /// ```
    pub fn range<R: RangeBounds<C::Key>>(&self, range: R) -> SetRange<'_, C> {
        SetRange(self.tree.range(range))
    }

    /// The smallest key.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let mut s = RadixSet::<u32>::new();
    /// assert_eq!(s.first(), None);
    /// s.extend([7, 3, 9]);
    /// assert_eq!(s.first(), Some(3));
    /// ```
    pub fn first(&self) -> Option<C::Key> {
        self.tree.first_key_value().map(|(k, _)| k)
    }

    /// The largest key.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let mut s = RadixSet::<u32>::new();
    /// assert_eq!(s.last(), None);
    /// s.extend([7, 3, 9]);
    /// assert_eq!(s.last(), Some(9));
    /// ```
    pub fn last(&self) -> Option<C::Key> {
        self.tree.last_key_value().map(|(k, _)| k)
    }

    /// The smallest key at or after `key`.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let s: RadixSet<u32> = [10, 20].into_iter().collect();
    /// assert_eq!(s.first_at_or_after(10), Some(10));
    /// assert_eq!(s.first_at_or_after(11), Some(20));
    /// assert_eq!(s.first_at_or_after(21), None);
    /// ```
    pub fn first_at_or_after(&self, key: C::Key) -> Option<C::Key> {
        self.tree.first_at_or_after(key).map(|(k, _)| k)
    }

    /// The largest key at or before `key`.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let s: RadixSet<u32> = [10, 20].into_iter().collect();
    /// assert_eq!(s.last_at_or_before(20), Some(20));
    /// assert_eq!(s.last_at_or_before(19), Some(10));
    /// assert_eq!(s.last_at_or_before(9), None);
    /// ```
    pub fn last_at_or_before(&self, key: C::Key) -> Option<C::Key> {
        self.tree.last_at_or_before(key).map(|(k, _)| k)
    }

    /// The keys in `self` or `other` (or both), ascending, lazily.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let a: RadixSet<u32> = [1, 2, 3].into_iter().collect();
    /// let b: RadixSet<u32> = [3, 4].into_iter().collect();
    /// assert_eq!(a.union(&b).collect::<Vec<_>>(), [1, 2, 3, 4]);
    /// ```
    pub fn union<'a>(&'a self, other: &'a Self) -> Union<'a, C> {
        Union(Merge::new(self, other))
    }

    /// The keys in both `self` and `other`, ascending, lazily.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let a: RadixSet<u32> = [1, 2, 3].into_iter().collect();
    /// let b: RadixSet<u32> = [2, 3, 4].into_iter().collect();
    /// assert_eq!(a.intersection(&b).collect::<Vec<_>>(), [2, 3]);
    /// ```
    pub fn intersection<'a>(&'a self, other: &'a Self) -> Intersection<'a, C> {
        Intersection(Merge::new(self, other))
    }

    /// The keys in `self` but not in `other`, ascending, lazily.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let a: RadixSet<u32> = [1, 2, 3].into_iter().collect();
    /// let b: RadixSet<u32> = [2, 3, 4].into_iter().collect();
    /// assert_eq!(a.difference(&b).collect::<Vec<_>>(), [1]);
    /// assert_eq!(b.difference(&a).collect::<Vec<_>>(), [4]);
    /// ```
    pub fn difference<'a>(&'a self, other: &'a Self) -> Difference<'a, C> {
        Difference(Merge::new(self, other))
    }

    /// The keys in exactly one of `self` and `other`, ascending, lazily.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let a: RadixSet<u32> = [1, 2, 3].into_iter().collect();
    /// let b: RadixSet<u32> = [2, 3, 4].into_iter().collect();
    /// assert_eq!(a.symmetric_difference(&b).collect::<Vec<_>>(), [1, 4]);
    /// ```
    pub fn symmetric_difference<'a>(&'a self, other: &'a Self) -> SymmetricDifference<'a, C> {
        SymmetricDifference(Merge::new(self, other))
    }

    /// Whether every key of `self` is in `other`.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let small: RadixSet<u32> = [1, 3].into_iter().collect();
    /// let big: RadixSet<u32> = (0..5).collect();
    /// assert!(small.is_subset(&big));
    /// assert!(!big.is_subset(&small));
    /// ```
    pub fn is_subset(&self, other: &Self) -> bool {
        self.tree.is_subset(&other.tree)
    }

    /// Whether every key of `other` is in `self`.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let small: RadixSet<u32> = [1, 3].into_iter().collect();
    /// let big: RadixSet<u32> = (0..5).collect();
    /// assert!(big.is_superset(&small));
    /// assert!(!small.is_superset(&big));
    /// ```
    pub fn is_superset(&self, other: &Self) -> bool {
        self.tree.is_superset(&other.tree)
    }

    /// Whether `self` and `other` share no key.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let evens: RadixSet<u32> = (0..10).step_by(2).collect();
    /// let odds: RadixSet<u32> = (1..10).step_by(2).collect();
    /// assert!(evens.is_disjoint(&odds));
    /// assert!(!evens.is_disjoint(&evens));
    /// ```
    pub fn is_disjoint(&self, other: &Self) -> bool {
        self.tree.is_disjoint(&other.tree)
    }

    /// Adds every key of `other`, consuming it.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let mut a: RadixSet<u32> = [1, 2].into_iter().collect();
    /// let b: RadixSet<u32> = [2, 3].into_iter().collect();
    /// a.union_with(b);
    /// assert_eq!(a.iter().collect::<Vec<_>>(), [1, 2, 3]);
    /// ```
    pub fn union_with(&mut self, other: Self) {
        self.tree.union_with(other.tree, |_, _, ()| {});
    }

    /// Bytes held from the memory back end.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let mut s = RadixSet::<u32>::new();
    /// assert_eq!(s.memory_usage(), 0);
    /// s.extend(0..10_000);
    /// assert!(s.memory_usage() > 0);
    /// ```
    pub fn memory_usage(&self) -> usize {
        self.tree.memory_usage()
    }

    /// A snapshot of the tree's shape. Walks the whole set: O(n).
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let s: RadixSet<u32> = (0..1000).collect();
    /// let stats = s.stats();
    /// assert_eq!(stats.keys, 1000);
    /// assert_eq!(stats.height, 2); // one level per key byte in use
    /// assert_eq!(stats.memory_bytes, s.memory_usage());
    /// ```
    pub fn stats(&self) -> Stats {
        self.tree.stats()
    }

    /// Checks the tree's invariants (for tests and fuzzing). O(n).
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let mut s: RadixSet<u32> = (0..1000).collect();
    /// s.retain(|k| k % 7 != 0);
    /// assert_eq!(s.verify(), Ok(()));
    /// ```
    ///
    /// # Errors
    ///
    /// The first violation found.
    pub fn verify(&self) -> Result<(), String> {
        self.tree.verify()
    }

    /// The underlying tree, whose values are `()`.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let s: RadixSet<u32> = [4, 2].into_iter().collect();
    /// let raw = s.as_raw();
    /// assert_eq!(raw.first_key_value(), Some((2, &())));
    /// assert_eq!(raw.height(), 1);
    /// ```
    pub fn as_raw(&self) -> &RawTree<C> {
        &self.tree
    }
}

impl<C: SetConfig + Removable> TreeSet<C> {
    /// Removes `key`, returning whether it was present.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let mut s: RadixSet<u32> = [1, 2].into_iter().collect();
    /// assert!(s.remove(1));
    /// assert!(!s.remove(1));
    /// assert_eq!(s.len(), 1);
    /// ```
    #[inline]
    pub fn remove(&mut self, key: C::Key) -> bool {
        C::Layout::old_value(self.tree.remove(key)).is_some()
    }

    /// Removes `key`, returning it if it was present, as `BTreeSet::take`
    /// does.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let mut s = RadixSet::<u32>::from([1, 2]);
    /// assert_eq!(s.take(1), Some(1));
    /// assert_eq!(s.take(1), None);
    /// ```
    #[inline]
    pub fn take(&mut self, key: C::Key) -> Option<C::Key> {
        self.remove(key).then_some(key)
    }

    /// Removes and returns the smallest key.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let mut s: RadixSet<u32> = [2, 1].into_iter().collect();
    /// assert_eq!(s.pop_first(), Some(1));
    /// assert_eq!(s.pop_first(), Some(2));
    /// assert_eq!(s.pop_first(), None);
    /// ```
    pub fn pop_first(&mut self) -> Option<C::Key> {
        self.tree.pop_first().map(|(k, ())| k)
    }

    /// Removes and returns the largest key.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let mut s: RadixSet<u32> = [2, 1].into_iter().collect();
    /// assert_eq!(s.pop_last(), Some(2));
    /// assert_eq!(s.pop_last(), Some(1));
    /// assert_eq!(s.pop_last(), None);
    /// ```
    pub fn pop_last(&mut self) -> Option<C::Key> {
        self.tree.pop_last().map(|(k, ())| k)
    }

    /// Keeps only the keys for which `keep` returns true, in ascending
    /// order.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let mut s: RadixSet<u32> = (0..10).collect();
    /// s.retain(|k| k % 3 == 0);
    /// assert_eq!(s.iter().collect::<Vec<_>>(), [0, 3, 6, 9]);
    /// ```
    pub fn retain<F: FnMut(C::Key) -> bool>(&mut self, mut keep: F) {
        self.tree.retain(|k, ()| keep(k));
    }

    /// Removes every key that is in `other`.
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let mut a: RadixSet<u32> = (0..6).collect();
    /// let b: RadixSet<u32> = [1, 3, 5, 7].into_iter().collect();
    /// a.difference_with(&b);
    /// assert_eq!(a.iter().collect::<Vec<_>>(), [0, 2, 4]);
    /// ```
    pub fn difference_with(&mut self, other: &Self) {
        self.tree.difference_with(&other.tree);
    }
}
