//! Iterators that consume the tree and move each value out of its slot.
//!
//! An [`IntoIter`] detaches the tree's root as it starts: from then on the
//! tree it holds owns the node memory but no entries, so dropping it frees
//! every slab block without visiting a slot. The iterator moves each value
//! out as it produces it, and on drop drops the values it did not produce.
//! If one of those drops panics, the rest leak and the memory is still
//! returned: no value is ever dropped twice.

use core::iter::FusedIterator;

use super::adapter;
use super::walk::Walk;
use crate::config::Config;
use crate::mem::Memory;
use crate::raw::{LayoutOf, RawTree, ValueOf};
use crate::value::{DropsAll, MutableLayout, ValueLayout};

/// An owning iterator over a tree's entries in ascending key order.
///
/// Made by `into_iter()`; yields `(key, value)` and runs from either end.
///
/// ```
/// use radix_core::RadixMap;
///
/// let m: RadixMap<u64, String> = (1..=3).map(|k| (k, k.to_string())).collect();
/// let mut it = m.into_iter();
/// assert_eq!(it.len(), 3);
/// assert_eq!(it.next_back(), Some((3, "3".to_string())));
/// assert_eq!(it.next(), Some((1, "1".to_string())));
/// drop(it); // drops the value left, "2"
/// ```
pub struct IntoIter<C: Config> {
    /// The tree, its root detached: it owns the memory, not the entries.
    tree: RawTree<C>,
    walk: Walk<C>,
    len: usize,
}

// SAFETY: the iterator owns the values and the memory exactly as the tree
// did, and its walk points only into that memory.
unsafe impl<C: Config> Send for IntoIter<C> where RawTree<C>: Send {}
// SAFETY: `&IntoIter` gives access to nothing.
unsafe impl<C: Config> Sync for IntoIter<C> where RawTree<C>: Sync {}

impl<C: Config> IntoIter<C> {
    fn new(mut tree: RawTree<C>) -> Self {
        let walk = Walk::all(&tree);
        let len = tree.len();
        tree.detach_entries();
        Self { tree, walk, len }
    }
}

impl<C: Config> Iterator for IntoIter<C>
where
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    type Item = (C::Key, ValueOf<C>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        // SAFETY: the detached tree is live in `self.tree`'s memory and
        // unchanged; slots already produced are not produced again.
        let (key, slot) = unsafe { self.walk.next(self.tree.memory()) }?;
        self.len -= 1;
        // SAFETY: the slot holds a live value, moved out here once; the
        // detached tree will not drop it.
        Some((key, unsafe {
            LayoutOf::<C>::into_value(slot.read(), self.tree.memory_mut())
        }))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len, Some(self.len))
    }

    fn last(mut self) -> Option<Self::Item> {
        self.next_back()
    }
}

impl<C: Config> DoubleEndedIterator for IntoIter<C>
where
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        // SAFETY: as in `next`.
        let (key, slot) = unsafe { self.walk.next_back(self.tree.memory()) }?;
        self.len -= 1;
        // SAFETY: as in `next`.
        Some((key, unsafe {
            LayoutOf::<C>::into_value(slot.read(), self.tree.memory_mut())
        }))
    }
}

impl<C: Config> ExactSizeIterator for IntoIter<C>
where
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
}

impl<C: Config> FusedIterator for IntoIter<C>
where
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
}

impl<C: Config> Drop for IntoIter<C> {
    fn drop(&mut self) {
        // As `RawTree::clear`: visit only values to drop and leaves the
        // back end would not free wholesale.
        let visit = LayoutOf::<C>::VISIT_ON_DROP
            && (LayoutOf::<C>::DROPS_VALUES || !self.tree.memory().releases_leaves());
        if !visit {
            return;
        }
        // A value whose `Drop` panics does not stop the rest, as std's
        // `IntoIter` (`DropsAll`); the detached tree never drops them again.
        let mut drops = DropsAll::new();
        // SAFETY: as in `next`; each remaining value is dropped once.
        while let Some((_, slot)) = unsafe { self.walk.next(self.tree.memory()) } {
            let mem = self.tree.memory_mut();
            // SAFETY: as above.
            drops.drop_one(|| unsafe { LayoutOf::<C>::drop_slot(slot, mem) });
        }
        drops.finish();
    }
}

adapter! {
    /// An owning iterator over a tree's keys, ascending; the values are
    /// dropped. Made by `into_keys()`.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, String> = (1..=3).map(|k| (k, k.to_string())).collect();
    /// let mut keys = m.into_keys();
    /// assert_eq!(keys.next_back(), Some(3));
    /// assert_eq!(keys.collect::<Vec<_>>(), [1, 2]);
    /// ```
    pub struct IntoKeys<C>(IntoIter<C>) -> C::Key, |(k, _)| k;
    where [C::Layout: MutableLayout, ValueOf<C>: Sized]
}

adapter! {
    /// An owning iterator over a tree's values, in ascending key order.
    /// Made by `into_values()`.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, String> = (1..=3).map(|k| (k, k.to_string())).collect();
    /// let mut values = m.into_values();
    /// assert_eq!(values.next_back(), Some("3".to_string()));
    /// assert_eq!(values.collect::<Vec<_>>(), ["1", "2"]);
    /// ```
    pub struct IntoValues<C>(IntoIter<C>) -> ValueOf<C>, |(_, v)| v;
    where [C::Layout: MutableLayout, ValueOf<C>: Sized]
}

impl<C: Config> RawTree<C>
where
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    /// The keys in ascending order, consuming the tree.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, &str> = [(2, "b"), (1, "a")].into_iter().collect();
    /// let keys: Vec<u64> = m.into_keys().collect();
    /// assert_eq!(keys, [1, 2]);
    /// ```
    pub fn into_keys(self) -> IntoKeys<C> {
        crate::raw::refuse_ranges!(C, "into_keys");
        IntoKeys(IntoIter::new(self))
    }

    /// The values in ascending key order, consuming the tree.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, String> = [(2, "b".to_string()), (1, "a".to_string())].into_iter().collect();
    /// let values: Vec<String> = m.into_values().collect();
    /// assert_eq!(values, ["a", "b"]);
    /// ```
    pub fn into_values(self) -> IntoValues<C> {
        crate::raw::refuse_ranges!(C, "into_values");
        IntoValues(IntoIter::new(self))
    }
}

impl<C: Config> IntoIterator for RawTree<C>
where
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    type Item = (C::Key, ValueOf<C>);
    type IntoIter = IntoIter<C>;

    /// The entries in ascending key order, consuming the tree.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, &str> = [(3, "c"), (1, "a")].into_iter().collect();
    /// let mut entries = Vec::new();
    /// for (key, value) in m {
    ///     entries.push((key, value));
    /// }
    /// assert_eq!(entries, [(1, "a"), (3, "c")]);
    /// ```
    fn into_iter(self) -> IntoIter<C> {
        crate::raw::refuse_ranges!(C, "into_iter");
        IntoIter::new(self)
    }
}
