//! The standard traits of a set, each defined by its ascending keys, as
//! `BTreeSet`'s are.

use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};

use super::{SetConfig, TreeSet};
use crate::RawTree;
use crate::config::Config;
use crate::iter::{IntoKeys, Keys};
use crate::key::KeyItem;
use crate::mem::LocalMemory;

impl<C: Config> Clone for TreeSet<C>
where
    RawTree<C>: Clone,
{
    /// A structural copy, node by node.
    fn clone(&self) -> Self {
        Self {
            tree: self.tree.clone(),
        }
    }
}

impl<C: Config> fmt::Debug for TreeSet<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.tree.keys()).finish()
    }
}

impl<C: Config> PartialEq for TreeSet<C> {
    fn eq(&self, other: &Self) -> bool {
        self.tree.len() == other.tree.len() && self.tree.keys().eq(other.tree.keys())
    }
}

impl<C: Config> Eq for TreeSet<C> {}

impl<C: Config> PartialOrd for TreeSet<C> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<C: Config> Ord for TreeSet<C> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.tree.keys().cmp(other.tree.keys())
    }
}

impl<C: Config> Hash for TreeSet<C> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.tree.len());
        for key in self.tree.keys() {
            key.hash(state);
        }
    }
}

/// Adds each key, given by value or by reference ([`KeyItem`]), as
/// `BTreeSet` extends from `T` and `&T`.
///
/// ```
/// use radix_core::RadixSet;
///
/// let mut s = RadixSet::<u32>::new();
/// s.extend([3, 1]);
/// s.extend(&[2, 3]);
/// assert_eq!(s.iter().collect::<Vec<_>>(), [1, 2, 3]);
/// ```
impl<C: SetConfig, X: KeyItem<C::Key>> Extend<X> for TreeSet<C> {
    fn extend<I: IntoIterator<Item = X>>(&mut self, keys: I) {
        for key in keys {
            self.insert(key.key());
        }
    }
}

/// A set of the keys of an array, as `BTreeSet::from` makes one.
///
/// ```
/// use radix_core::RadixSet;
///
/// let s = RadixSet::<u16>::from([3, 1, 3]);
/// assert_eq!(s.iter().collect::<Vec<_>>(), [1, 3]);
/// ```
impl<C: SetConfig<Memory = LocalMemory>, const N: usize> From<[C::Key; N]> for TreeSet<C> {
    fn from(keys: [C::Key; N]) -> Self {
        keys.into_iter().collect()
    }
}

impl<C: SetConfig<Memory = LocalMemory>> FromIterator<C::Key> for TreeSet<C> {
    fn from_iter<I: IntoIterator<Item = C::Key>>(keys: I) -> Self {
        let mut set = Self::new();
        set.extend(keys);
        set
    }
}

impl<'a, C: Config> IntoIterator for &'a TreeSet<C> {
    type Item = C::Key;
    type IntoIter = Keys<'a, C>;

    fn into_iter(self) -> Keys<'a, C> {
        self.tree.keys()
    }
}

impl<C: SetConfig> IntoIterator for TreeSet<C> {
    type Item = C::Key;
    type IntoIter = IntoKeys<C>;

    fn into_iter(self) -> IntoKeys<C> {
        self.tree.into_keys()
    }
}
