//! Iterators that borrow the tree exclusively and yield `&mut V`.
//!
//! The walk reads nodes only; values are reached through their slots,
//! which lie in node (or leaf) memory, not in the tree value. Each slot is
//! produced once, so the `&mut V` items never alias, and the exclusive
//! borrow of the tree keeps anything else from reading or moving them.

use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::ops::RangeBounds;

use super::adapter;
use super::walk::Walk;
use crate::config::Config;
use crate::raw::{LayoutOf, RawTree, ValueOf};
use crate::value::MutableLayout;

/// The value of a slot produced by a walk of the exclusively borrowed
/// `tree`.
macro_rules! mutable_item {
    ($tree:expr, $found:expr) => {
        $found.map(|(key, slot)| {
            // SAFETY: the tree is exclusively borrowed for 'a, and the walk
            // produces each slot once: nothing else refers to the value.
            (key, unsafe { LayoutOf::<C>::get_mut(slot, $tree.memory()) })
        })
    };
}

/// A mutable iterator over a tree's entries in ascending key order.
///
/// Made by `iter_mut()`; yields `(key, &mut value)` and runs from either
/// end.
///
/// ```
/// use radix_core::RadixMap;
///
/// let mut m: RadixMap<u64, u32> = [(1, 10), (2, 20), (3, 30)].into_iter().collect();
/// let mut it = m.iter_mut();
/// assert_eq!(it.len(), 3);
/// if let Some((_, last)) = it.next_back() {
///     *last = 0;
/// }
/// assert_eq!(m[3], 0);
/// ```
pub struct IterMut<'a, C: Config>
where
    C::Layout: MutableLayout,
{
    /// The walk of every key; `len` makes the iterator exact-size.
    entries: RangeMut<'a, C>,
    len: usize,
}

impl<'a, C: Config> Iterator for IterMut<'a, C>
where
    C::Layout: MutableLayout,
{
    type Item = (C::Key, &'a mut ValueOf<C>);

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

impl<C: Config> DoubleEndedIterator for IterMut<'_, C>
where
    C::Layout: MutableLayout,
{
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let item = self.entries.next_back()?;
        self.len -= 1;
        Some(item)
    }
}

impl<C: Config> ExactSizeIterator for IterMut<'_, C> where C::Layout: MutableLayout {}
impl<C: Config> FusedIterator for IterMut<'_, C> where C::Layout: MutableLayout {}

/// A mutable iterator over the entries whose keys lie in a range,
/// ascending.
///
/// Made by `range_mut()`; yields `(key, &mut value)` and runs from either
/// end.
///
/// ```
/// use radix_core::RadixMap;
///
/// let mut m: RadixMap<u64, u32> = (0..6).map(|k| (k, 0)).collect();
/// let mut r = m.range_mut(2..);
/// *r.next().unwrap().1 = 2;
/// *r.next_back().unwrap().1 = 5;
/// assert_eq!(m.values().copied().collect::<Vec<_>>(), [0, 0, 2, 0, 0, 5]);
/// ```
pub struct RangeMut<'a, C: Config>
where
    C::Layout: MutableLayout,
{
    /// Shared, because the walk only reads nodes; `_values` carries the
    /// exclusive borrow the items come from.
    tree: &'a RawTree<C>,
    walk: Walk<C>,
    _values: PhantomData<&'a mut ValueOf<C>>,
}

// SAFETY: the iterator stands for the exclusive borrow of the tree it
// was made from (`&mut RawTree` is `Send` when the tree is): it hands out
// `&mut V` and reads nodes, and no other thread reaches either while it
// lives. As std's `IterMut`, which needs `V: Send` only.
unsafe impl<C: Config> Send for RangeMut<'_, C>
where
    C::Layout: MutableLayout,
    RawTree<C>: Send,
{
}
// SAFETY: `&RangeMut` gives access to nothing.
unsafe impl<C: Config> Sync for RangeMut<'_, C>
where
    C::Layout: MutableLayout,
    ValueOf<C>: Sync,
    for<'x> &'x RawTree<C>: Sync,
{
}

impl<'a, C: Config> Iterator for RangeMut<'a, C>
where
    C::Layout: MutableLayout,
{
    type Item = (C::Key, &'a mut ValueOf<C>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let tree = self.tree;
        // SAFETY: the tree is borrowed for 'a: live, and its nodes unchanged.
        mutable_item!(tree, unsafe { self.walk.next(tree.memory()) })
    }

    fn last(mut self) -> Option<Self::Item> {
        self.next_back()
    }
}

impl<C: Config> DoubleEndedIterator for RangeMut<'_, C>
where
    C::Layout: MutableLayout,
{
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let tree = self.tree;
        // SAFETY: the tree is borrowed for 'a: live, and its nodes unchanged.
        mutable_item!(tree, unsafe { self.walk.next_back(tree.memory()) })
    }
}

impl<C: Config> FusedIterator for RangeMut<'_, C> where C::Layout: MutableLayout {}

adapter! {
    /// A mutable iterator over a tree's values, in ascending key order.
    /// Made by `values_mut()`.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m: RadixMap<u64, u32> = [(1, 10), (2, 20)].into_iter().collect();
    /// let mut values = m.values_mut();
    /// assert_eq!(values.len(), 2);
    /// *values.next_back().unwrap() += 1;
    /// assert_eq!(m[2], 21);
    /// ```
    pub struct ValuesMut<'a, C>(IterMut<'a, C>) -> &'a mut ValueOf<C>, |(_, v)| v;
    where [C::Layout: MutableLayout]
}

impl<C: Config> RawTree<C>
where
    C::Layout: MutableLayout,
{
    /// The entries in ascending key order, with mutable values.
    ///
    /// ```
    /// radix_core::radix_tree! {
    ///     /// Prices by item id.
    ///     pub struct Prices { key: u32, value: u64 }
    /// }
    ///
    /// let mut prices: Prices = [(1, 100), (2, 250)].into_iter().collect();
    /// for (id, price) in prices.iter_mut() {
    ///     *price += u64::from(id);
    /// }
    /// assert_eq!(prices.iter().collect::<Vec<_>>(), [(1, &101), (2, &252)]);
    /// ```
    pub fn iter_mut(&mut self) -> IterMut<'_, C> {
        crate::raw::refuse_ranges!(C, "iter_mut");
        let tree = &*self;
        IterMut {
            entries: RangeMut {
                tree,
                walk: Walk::all(tree),
                _values: PhantomData,
            },
            len: tree.len(),
        }
    }

    /// The entries whose keys lie in `range`, in ascending key order, with
    /// mutable values. A range whose start lies after its end is empty, and
    /// so is one whose bounds are equal and both excluded (`BTreeMap`
    /// panics on both).
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m: RadixMap<u64, u32> = (1..=5).map(|k| (k, 1)).collect();
    /// for (_, v) in m.range_mut(2..4) {
    ///     *v = 0;
    /// }
    /// assert_eq!(m.values().copied().collect::<Vec<_>>(), [1, 0, 0, 1, 1]);
    /// ```
    pub fn range_mut<R: RangeBounds<C::Key>>(&mut self, range: R) -> RangeMut<'_, C> {
        crate::raw::refuse_ranges!(C, "range_mut");
        let tree = &*self;
        RangeMut {
            tree,
            walk: Walk::range(tree, range),
            _values: PhantomData,
        }
    }

    /// The values in ascending key order, mutably.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m: RadixMap<u64, String> = RadixMap::new();
    /// m.insert(1, "a".to_string());
    /// m.insert(2, "b".to_string());
    /// for v in m.values_mut() {
    ///     v.push('!');
    /// }
    /// assert_eq!(m.values().collect::<Vec<_>>(), ["a!", "b!"]);
    /// ```
    pub fn values_mut(&mut self) -> ValuesMut<'_, C> {
        crate::raw::refuse_ranges!(C, "values_mut");
        ValuesMut(self.iter_mut())
    }
}

impl<'a, C: Config> IntoIterator for &'a mut RawTree<C>
where
    C::Layout: MutableLayout,
{
    type Item = (C::Key, &'a mut ValueOf<C>);
    type IntoIter = IterMut<'a, C>;

    fn into_iter(self) -> IterMut<'a, C> {
        self.iter_mut()
    }
}
