//! Iterators that borrow the tree shared and yield `&V`, and the ordered
//! lookups built on the same walk.

use core::iter::FusedIterator;
use core::ops::RangeBounds;

use super::adapter;
use super::walk::Walk;
use crate::config::Config;
use crate::raw::{LayoutOf, RawTree, ValueOf};
use crate::value::ValueLayout;

/// An iterator over a tree's entries in ascending key order.
///
/// Made by `iter()`; yields `(key, &value)` and runs from either end.
///
/// ```
/// use radix_core::RadixMap;
///
/// let m: RadixMap<u64, char> = [(1, 'a'), (2, 'b'), (3, 'c')].into_iter().collect();
/// let mut it = m.iter();
/// assert_eq!(it.len(), 3);
/// assert_eq!(it.next(), Some((1, &'a')));
/// assert_eq!(it.next_back(), Some((3, &'c')));
/// assert_eq!(it.collect::<Vec<_>>(), [(2, &'b')]);
/// ```
pub struct Iter<'a, C: Config> {
    /// The walk of every key, which a range over all of them is; `len`
    /// adds the count that makes the iterator exact-size.
    entries: Range<'a, C>,
    len: usize,
}

impl<'a, C: Config> Iterator for Iter<'a, C> {
    type Item = (C::Key, &'a ValueOf<C>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let item = self.entries.next()?;
        self.len -= 1;
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len, Some(self.len))
    }

    fn last(mut self) -> Option<Self::Item> {
        self.next_back()
    }
}

impl<C: Config> DoubleEndedIterator for Iter<'_, C> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let item = self.entries.next_back()?;
        self.len -= 1;
        Some(item)
    }
}

impl<C: Config> ExactSizeIterator for Iter<'_, C> {}
impl<C: Config> FusedIterator for Iter<'_, C> {}

impl<C: Config> Clone for Iter<'_, C> {
    fn clone(&self) -> Self {
        Self {
            entries: self.entries.clone(),
            len: self.len,
        }
    }
}

/// An iterator over the entries whose keys lie in a range, ascending.
///
/// Made by `range()`; yields `(key, &value)` and runs from either end.
///
/// ```
/// use radix_core::RadixMap;
///
/// let m: RadixMap<u64, u32> = (0..10).map(|k| (k, k as u32 * 10)).collect();
/// let mut r = m.range(3..6);
/// assert_eq!(r.next_back(), Some((5, &50)));
/// assert_eq!(r.collect::<Vec<_>>(), [(3, &30), (4, &40)]);
/// ```
pub struct Range<'a, C: Config> {
    tree: &'a RawTree<C>,
    walk: Walk<C>,
}

// SAFETY: the iterator hands out `&V` and reads nodes through a shared
// borrow of the tree, exactly what sending `&RawTree` allows.
unsafe impl<C: Config> Send for Range<'_, C> where for<'x> &'x RawTree<C>: Send {}
// SAFETY: as for `Send`; `&Range` can do nothing `&RawTree` cannot.
unsafe impl<C: Config> Sync for Range<'_, C> where for<'x> &'x RawTree<C>: Sync {}

/// The value of a slot produced by a walk of `tree`.
macro_rules! shared_item {
    ($tree:expr, $found:expr) => {
        $found.map(|(key, slot)| {
            // SAFETY: the tree is borrowed for 'a, so the slot is live and
            // nothing changes it while the reference lives.
            (key, unsafe { LayoutOf::<C>::get(slot, $tree.memory()) })
        })
    };
}

impl<'a, C: Config> Iterator for Range<'a, C> {
    type Item = (C::Key, &'a ValueOf<C>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let tree = self.tree;
        // SAFETY: the tree is borrowed for 'a: live and unchanged.
        shared_item!(tree, unsafe { self.walk.next(tree.memory()) })
    }

    fn last(mut self) -> Option<Self::Item> {
        self.next_back()
    }
}

impl<C: Config> DoubleEndedIterator for Range<'_, C> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let tree = self.tree;
        // SAFETY: the tree is borrowed for 'a: live and unchanged.
        shared_item!(tree, unsafe { self.walk.next_back(tree.memory()) })
    }
}

impl<C: Config> FusedIterator for Range<'_, C> {}

impl<C: Config> Clone for Range<'_, C> {
    fn clone(&self) -> Self {
        Self {
            tree: self.tree,
            walk: self.walk,
        }
    }
}

adapter! {
    /// An iterator over a tree's keys, ascending. Made by `keys()`.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, &str> = [(20, "b"), (10, "a"), (30, "c")].into_iter().collect();
    /// let mut keys = m.keys();
    /// assert_eq!(keys.len(), 3);
    /// assert_eq!(keys.next_back(), Some(30));
    /// assert_eq!(keys.collect::<Vec<_>>(), [10, 20]);
    /// ```
    pub struct Keys<'a, C>(Iter<'a, C>) -> C::Key, |(k, _)| k;
    where []
}

adapter! {
    /// An iterator over a tree's values, in ascending key order. Made by
    /// `values()`.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, &str> = [(20, "b"), (10, "a")].into_iter().collect();
    /// let mut values = m.values();
    /// assert_eq!(values.len(), 2);
    /// assert_eq!(values.next_back(), Some(&"b"));
    /// assert_eq!(values.next(), Some(&"a"));
    /// ```
    pub struct Values<'a, C>(Iter<'a, C>) -> &'a ValueOf<C>, |(_, v)| v;
    where []
}

impl<C: Config> Clone for Keys<'_, C> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<C: Config> Clone for Values<'_, C> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<C: Config> RawTree<C> {
    /// The entries in ascending key order.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m = RadixMap::<u64, &str>::new();
    /// m.insert(3, "c");
    /// m.insert(1, "a");
    /// m.insert(2, "b");
    /// assert_eq!(m.iter().collect::<Vec<_>>(), [(1, &"a"), (2, &"b"), (3, &"c")]);
    /// // `&tree` iterates the same way.
    /// assert_eq!((&m).into_iter().rev().next(), Some((3, &"c")));
    /// ```
    pub fn iter(&self) -> Iter<'_, C> {
        Iter {
            entries: Range {
                tree: self,
                walk: Walk::all(self),
            },
            len: self.len(),
        }
    }

    /// The entries whose keys lie in `range`, in ascending key order. A
    /// range whose start lies after its end is empty, and so is one whose
    /// bounds are equal and both excluded (`(Excluded(2), Excluded(2))`):
    /// `BTreeMap` panics on both.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, u32> = (0..10).map(|k| (k * 10, k as u32)).collect();
    /// let keys: Vec<u64> = m.range(15..=40).map(|(k, _)| k).collect();
    /// assert_eq!(keys, [20, 30, 40]);
    /// assert_eq!(m.range(..20).next_back(), Some((10, &1)));
    /// let (start, end) = (50, 40);
    /// assert_eq!(m.range(start..end).count(), 0); // no panic
    /// use std::ops::Bound::Excluded;
    /// assert_eq!(m.range((Excluded(20), Excluded(20))).count(), 0); // no panic
    /// ```
    pub fn range<R: RangeBounds<C::Key>>(&self, range: R) -> Range<'_, C> {
        Range {
            tree: self,
            walk: Walk::range(self, range),
        }
    }

    /// The keys in ascending order.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, &str> = [(2, "b"), (1, "a"), (3, "c")].into_iter().collect();
    /// assert_eq!(m.keys().collect::<Vec<_>>(), [1, 2, 3]);
    /// ```
    pub fn keys(&self) -> Keys<'_, C> {
        Keys(self.iter())
    }

    /// The values in ascending key order.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, &str> = [(2, "b"), (1, "a"), (3, "c")].into_iter().collect();
    /// assert_eq!(m.values().copied().collect::<String>(), "abc");
    /// ```
    pub fn values(&self) -> Values<'_, C> {
        Values(self.iter())
    }

    /// The entry with the smallest key.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m = RadixMap::<u64, &str>::new();
    /// assert_eq!(m.first_key_value(), None);
    /// m.insert(7, "seven");
    /// m.insert(3, "three");
    /// assert_eq!(m.first_key_value(), Some((3, &"three")));
    /// ```
    pub fn first_key_value(&self) -> Option<(C::Key, &ValueOf<C>)> {
        self.iter().next()
    }

    /// The entry with the largest key.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m = RadixMap::<u64, &str>::new();
    /// assert_eq!(m.last_key_value(), None);
    /// m.insert(7, "seven");
    /// m.insert(3, "three");
    /// assert_eq!(m.last_key_value(), Some((7, &"seven")));
    /// ```
    pub fn last_key_value(&self) -> Option<(C::Key, &ValueOf<C>)> {
        self.iter().next_back()
    }

    /// The entry with the smallest key at or after `key`: one descent
    /// along `key`'s path, then at most one step to the next entry.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, &str> = [(10, "ten"), (20, "twenty")].into_iter().collect();
    /// assert_eq!(m.first_at_or_after(10), Some((10, &"ten")));
    /// assert_eq!(m.first_at_or_after(11), Some((20, &"twenty")));
    /// assert_eq!(m.first_at_or_after(21), None);
    /// ```
    pub fn first_at_or_after(&self, key: C::Key) -> Option<(C::Key, &ValueOf<C>)> {
        self.range(key..).next()
    }

    /// The entry with the largest key at or before `key`: the mirror image
    /// of [`first_at_or_after`](Self::first_at_or_after).
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, &str> = [(10, "ten"), (20, "twenty")].into_iter().collect();
    /// assert_eq!(m.last_at_or_before(20), Some((20, &"twenty")));
    /// assert_eq!(m.last_at_or_before(19), Some((10, &"ten")));
    /// assert_eq!(m.last_at_or_before(9), None);
    /// ```
    pub fn last_at_or_before(&self, key: C::Key) -> Option<(C::Key, &ValueOf<C>)> {
        self.range(..=key).next_back()
    }
}

impl<'a, C: Config> IntoIterator for &'a RawTree<C> {
    type Item = (C::Key, &'a ValueOf<C>);
    type IntoIter = Iter<'a, C>;

    fn into_iter(self) -> Iter<'a, C> {
        self.iter()
    }
}
