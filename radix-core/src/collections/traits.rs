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
//! beside the tree. `Extend` and `FromIterator` take what the layout's
//! `insert` can be made from ([`ExtendFrom`](crate::value::ExtendFrom) and
//! [`CollectFrom`](crate::value::CollectFrom), which explain why the choice
//! sits on the layout).)

use core::cmp::Ordering;
use core::hash::{Hash, Hasher};
use core::ops::Index;

use crate::config::Config;
use crate::mem::{InfallibleMemory, LocalMemory};
use crate::raw::{LayoutOf, RawTree, ValueOf};
use crate::value::{CollectFrom, ExtendFrom};

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

/// Inserts each entry in turn, a key given twice keeping its last value.
/// The items are what the layout's `insert` takes
/// ([`ExtendFrom`](crate::value::ExtendFrom)): `(key, value)`, or
/// `(key, &value)` for `Copy` values as `BTreeMap`'s
/// `Extend<(&K, &V)>`, and `(key, &value)` for a
/// [`Varlen`](crate::value::Varlen) tree.
///
/// ```
/// use radix_core::RadixMap;
///
/// let mut m: RadixMap<u32, u8> = RadixMap::new();
/// m.extend([(1, 10), (2, 20)]);
/// m.extend([(2, &21), (3, &30)]);
/// assert_eq!(m.iter().collect::<Vec<_>>(), [(1, &10), (2, &21), (3, &30)]);
/// ```
impl<C: Config, X> Extend<(C::Key, X)> for RawTree<C>
where
    C::Memory: InfallibleMemory,
    C::Layout: ExtendFrom<X>,
{
    fn extend<I: IntoIterator<Item = (C::Key, X)>>(&mut self, entries: I) {
        for (key, item) in entries {
            self.insert(key, LayoutOf::<C>::input_from(item));
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
impl<C: Config<Memory = LocalMemory>, X, const N: usize> From<[(C::Key, X); N]> for RawTree<C>
where
    C::Layout: CollectFrom<X>,
{
    fn from(entries: [(C::Key, X); N]) -> Self {
        entries.into_iter().collect()
    }
}

/// A tree of the entries of an iterator, each what `insert` takes: as
/// `BTreeMap`'s, `FromIterator` takes values (for a
/// [`Varlen`](crate::value::Varlen) tree, references to them), where
/// `Extend` also takes references to `Copy` values.
impl<C: Config<Memory = LocalMemory>, X> FromIterator<(C::Key, X)> for RawTree<C>
where
    C::Layout: CollectFrom<X>,
{
    fn from_iter<I: IntoIterator<Item = (C::Key, X)>>(entries: I) -> Self {
        let mut tree = Self::new();
        tree.extend(entries);
        tree
    }
}
