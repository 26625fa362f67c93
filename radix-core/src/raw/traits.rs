//! The standard traits a map is expected to have, each defined by the
//! ascending sequence of entries, as `BTreeMap`'s are: two trees are equal
//! when they hold the same keys with equal values, whatever their shapes
//! or memory; they order lexicographically by `(key, value)`; they hash as
//! their length and then their entries.
//!
//! ```
//! use std::hash::{BuildHasher, RandomState};
//! use radix_core::RadixMap;
//!
//! let a: RadixMap<u64, u32> = [(1, 10), (2, 20)].into_iter().collect();
//! let mut b: RadixMap<u64, u32> = [(2, 20), (1 << 40, 0), (1, 10)].into_iter().collect();
//! b.remove(1 << 40); // b was built another way, through a taller tree
//! assert_eq!(a, b);
//! let hasher = RandomState::new();
//! assert_eq!(hasher.hash_one(&a), hasher.hash_one(&b));
//! let c: RadixMap<u64, u32> = [(1, 10), (2, 21)].into_iter().collect();
//! assert!(a < c); // ordered as the sequences of `(key, value)`
//! ```
//!
//! (`Clone` copies node by node and lives in its own module; `Debug` is
//! beside the tree. `Extend` over `(key, &value)` for `Copy` values is
//! the generated types', where the value type is concrete: here it would
//! overlap `Extend<(key, value)>` for a tree of references.)

use core::cmp::Ordering;
use core::hash::{Hash, Hasher};
use core::ops::Index;

use super::{LayoutOf, RawTree, ValueOf};
use crate::config::Config;
use crate::mem::{InfallibleMemory, LocalMemory};
use crate::value::MutableLayout;

impl<C: Config> PartialEq for RawTree<C>
where
    ValueOf<C>: PartialEq,
{
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<C: Config> Eq for RawTree<C> where ValueOf<C>: Eq {}

impl<C: Config> PartialOrd for RawTree<C>
where
    ValueOf<C>: PartialOrd,
{
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.iter().partial_cmp(other.iter())
    }
}

impl<C: Config> Ord for RawTree<C>
where
    ValueOf<C>: Ord,
{
    fn cmp(&self, other: &Self) -> Ordering {
        self.iter().cmp(other.iter())
    }
}

impl<C: Config> Hash for RawTree<C>
where
    ValueOf<C>: Hash,
{
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        for entry in self {
            entry.hash(state);
        }
    }
}

impl<C: Config> Index<C::Key> for RawTree<C> {
    type Output = ValueOf<C>;

    /// The value stored under `key`.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, &str> = [(1, "one"), (2, "two")].into_iter().collect();
    /// assert_eq!(m[2], "two");
    /// ```
    ///
    /// # Panics
    ///
    /// If `key` is absent, as `BTreeMap` does.
    ///
    /// ```should_panic
    /// let m = radix_core::RadixMap::<u64, &str>::new();
    /// let _ = m[1];
    /// ```
    fn index(&self, key: C::Key) -> &ValueOf<C> {
        match self.get(key) {
            Some(value) => value,
            None => panic!("no entry found for key {key:?}"),
        }
    }
}

impl<C: Config> Extend<(C::Key, ValueOf<C>)> for RawTree<C>
where
    C::Memory: InfallibleMemory,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    fn extend<I: IntoIterator<Item = (C::Key, ValueOf<C>)>>(&mut self, entries: I) {
        for (key, value) in entries {
            self.insert(key, LayoutOf::<C>::input(value));
        }
    }
}

/// A tree of the entries of an array, as `BTreeMap::from` makes one (a
/// key given twice keeps its last value).
///
/// ```
/// use radix_core::RadixMap;
///
/// let m = RadixMap::<u32, char>::from([(2, 'b'), (1, 'a'), (2, 'c')]);
/// assert_eq!(m.iter().collect::<Vec<_>>(), [(1, &'a'), (2, &'c')]);
/// ```
impl<C: Config<Memory = LocalMemory>, const N: usize> From<[(C::Key, ValueOf<C>); N]> for RawTree<C>
where
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    fn from(entries: [(C::Key, ValueOf<C>); N]) -> Self {
        entries.into_iter().collect()
    }
}

impl<C: Config<Memory = LocalMemory>> FromIterator<(C::Key, ValueOf<C>)> for RawTree<C>
where
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    fn from_iter<I: IntoIterator<Item = (C::Key, ValueOf<C>)>>(entries: I) -> Self {
        let mut tree = Self::new();
        tree.extend(entries);
        tree
    }
}
