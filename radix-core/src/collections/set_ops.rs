//! Set operations on whole trees: `union_with`, `intersect_with` and
//! `difference_with`, in place, each taking a second tree of the same
//! configuration.
//!
//! Uncompressed trees (the default) are walked together, node by node
//! (`raw/graft/`): a subtree on one side only is moved whole, or passed
//! over, without a visit to its keys. A compressed tree's subtree changes
//! form with its place (lazy leaves, merged chains), so there `self` is
//! walked in key order, and `other` followed by a cursor that seeks to
//! each key of `self`: a seek searches again only the levels below the
//! lowest node the two keys share, so the subtrees of `other` between two
//! keys of `self` are still passed over without visiting their entries.
//! With `s` the cost of such a seek (one node search between neighbouring
//! keys, at most `h`, the height):
//!
//! | operation | cost (`n = self.len()`, `m = other.len()`) |
//! |---|---|
//! | `union_with` | uncompressed: one walk of both trees together, moving whole every subtree of `other` under a chunk `self` lacks (see `raw/graft/`): O(k) for disjoint key ranges, k the nodes moved, O(m) at worst. Compressed: a lookup and an insert or merge per entry of `other`: O(m·h); inserts in key order reuse the lookup's path |
//! | `intersect_with` | uncompressed: one walk of both trees together, going down only where both have a child, and a move per kept value into a fresh tree built in key order (see `raw/graft/`): O(k + r), k the node pairs met and r the entries kept. Compressed: one walk of `self`, a seek per entry, and an insert per kept entry: O(n·s + r·h) |
//! | `difference_with` | uncompressed: one walk of `other` and of the matching part of `self` together, node by node, removing each common key where the walk is (see `raw/graft/`): O(k), k the nodes of `other` whose place `self` has. Compressed: the cheaper of one walk of `self` with a seek per entry plus a removal per common entry, and a removal per entry of `other`: O(min(n·s, m·h) + r·h) |
//! | `is_subset`, `is_superset`, `is_disjoint` | a lookup per key of the smaller tree when it is much smaller, otherwise one walk of it with a seek per key |
//!
//! Only `union_with` moves whole subtrees of `other`, since only it owns
//! that tree; the others read `other`'s nodes. The old entries an
//! intersection does not keep go with `self`'s old tree, released whole
//! (visited only for values to drop or leaves to free).
//!
//! `union_with` takes `other` by value and moves its values; the others
//! borrow it. A panic in a merge function leaves both trees consistent
//! (user code runs only between changes), though an intersection then
//! keeps only the entries merged before the panic.

use crate::collections::entry::Entry;
use crate::config::{Config, Removable};
use crate::key::SPAN;
use crate::mem::{InfallibleMemory, LocalMemory};
use crate::raw::{LayoutOf, RawTree, ValueOf};
use crate::value::MutableLayout;

impl<C: Config> RawTree<C>
where
    C::Memory: InfallibleMemory,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    /// Adds every entry of `other` to `self`. Where a key is in both,
    /// `merge(key, &mut ours, theirs)` decides the value that stays; it is
    /// called in ascending key order.
    ///
    /// An uncompressed tree walks both trees together and moves each
    /// subtree of `other` that `self` has no counterpart for in one piece,
    /// without looking at its keys. If `merge` panics, `self` keeps what
    /// was merged or moved before, and the rest of `other` is leaked.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut a: RadixMap<u64, u32> = [(1, 10), (2, 20)].into_iter().collect();
    /// let b: RadixMap<u64, u32> = [(2, 5), (3, 30)].into_iter().collect();
    /// a.union_with(b, |_key, ours, theirs| *ours += theirs);
    /// assert_eq!(a.into_iter().collect::<Vec<_>>(), [(1, 10), (2, 25), (3, 30)]);
    /// ```
    pub fn union_with<F>(&mut self, other: Self, mut merge: F)
    where
        F: FnMut(C::Key, &mut ValueOf<C>, ValueOf<C>),
    {
        crate::raw::refuse_ranges!(C, "union_with");
        if self.is_empty() {
            *self = other;
            return;
        }
        if C::COMPRESSION.is_none() {
            self.merge_from(other, merge);
            return;
        }
        for (key, value) in other {
            match self.entry(key) {
                Entry::Occupied(ours) => merge(key, ours.into_mut(), value),
                Entry::Vacant(slot) => {
                    slot.insert(value);
                }
            }
        }
    }
}

impl<C: Config<Memory = LocalMemory>> RawTree<C>
where
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    /// Keeps only the keys that are also in `other`, calling
    /// `merge(key, &mut ours, &theirs)` on each.
    ///
    /// The kept entries move into a fresh tree, built in key order, which
    /// then replaces this one, so the result holds only the memory its
    /// entries need (removing the dropped keys one by one would leave slab
    /// blocks part full). An uncompressed tree walks both trees together,
    /// node by node, going down only where both have a child: a subtree on
    /// one side only is passed over without a visit. A compressed tree
    /// walks its entries, with a cursor over `other` seeking each key.
    /// If `merge` panics, the tree keeps the entries merged before.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut stock: RadixMap<u64, u32> = [(1, 10), (2, 20), (3, 30)].into_iter().collect();
    /// let sold: RadixMap<u64, u32> = [(2, 5), (3, 30), (4, 1)].into_iter().collect();
    /// stock.intersect_with(&sold, |_key, ours, theirs| *ours -= *theirs);
    /// assert_eq!(stock.into_iter().collect::<Vec<_>>(), [(2, 15), (3, 0)]);
    /// ```
    pub fn intersect_with<F>(&mut self, other: &Self, mut merge: F)
    where
        F: FnMut(C::Key, &mut ValueOf<C>, &ValueOf<C>),
    {
        crate::raw::refuse_ranges!(C, "intersect_with");
        if C::COMPRESSION.is_none() {
            self.intersect_paired(other, &mut merge);
            return;
        }
        let empty = Self::with_memory(self.memory().empty_like());
        let ours = core::mem::replace(self, empty);
        if other.is_empty() {
            return;
        }
        let mut theirs = other.cursor_front();
        for (key, mut value) in ours {
            theirs.seek(key);
            match theirs.peek_next() {
                Some((k, other_value)) if k == key => {
                    merge(key, &mut value, other_value);
                    self.insert(key, LayoutOf::<C>::input(value));
                }
                Some(_) => {}
                None => break,
            }
        }
    }
}

impl<C: Config> RawTree<C>
where
    C: Removable,
    C::Memory: InfallibleMemory,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    /// Removes every key that is in `other`.
    ///
    /// An uncompressed tree walks both trees together, node by node:
    /// subtrees on one side only are passed over without a visit, and a
    /// common key is removed where the walk finds it, without a descent.
    /// The removed values are dropped after the walk (a value's `Drop`
    /// that panics then leaves the tree without any of the keys). A
    /// compressed tree removes the keys one by one.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut a: RadixMap<u64, char> = [(1, 'a'), (2, 'b'), (3, 'c')].into_iter().collect();
    /// let b: RadixMap<u64, char> = [(2, 'x'), (9, 'y')].into_iter().collect();
    /// a.difference_with(&b);
    /// assert_eq!(a.keys().collect::<Vec<_>>(), [1, 3]);
    /// ```
    pub fn difference_with(&mut self, other: &Self) {
        crate::raw::refuse_ranges!(C, "difference_with");
        if self.is_empty() || other.is_empty() {
            return;
        }
        if C::COMPRESSION.is_none() {
            self.difference_paired(other);
            return;
        }
        // A removal per key of `other` costs a descent each; one walk of
        // `self` costs a node visit per entry. Removing directly wins when
        // `other` is smaller than `self` by more than the height.
        let height = (self.root_shift / SPAN + 1) as usize;
        if other.len().saturating_mul(height) < self.len() {
            for key in other.keys() {
                self.remove(key);
            }
            return;
        }
        let mut theirs = other.cursor_front();
        self.retain(|key, _| {
            theirs.seek(key);
            theirs.peek_next().map(|(k, _)| k) != Some(key)
        });
    }
}

/// For each key of `small`, in order, whether `large` has it: a lookup per
/// key when `small` is much smaller, otherwise a seek of a cursor over
/// `large` to each key (the one branch between the two is the same for
/// every key).
fn in_large<'a, C: Config>(
    small: &'a RawTree<C>,
    large: &'a RawTree<C>,
) -> impl Iterator<Item = bool> + 'a {
    let lookups = small.len().saturating_mul(8) < large.len();
    let mut theirs = large.cursor_front();
    small.keys().map(move |key| {
        if lookups {
            return large.contains_key(key);
        }
        theirs.seek(key);
        theirs.peek_next().map(|(k, _)| k) == Some(key)
    })
}

/// Whether every key of `small` is in `large`.
fn is_subset_keys<C: Config>(small: &RawTree<C>, large: &RawTree<C>) -> bool {
    small.len() <= large.len() && in_large(small, large).all(|found| found)
}

/// Whether `small` and `large` share a key.
fn have_common_key<C: Config>(small: &RawTree<C>, large: &RawTree<C>) -> bool {
    in_large(small, large).any(|found| found)
}

/// Key-set comparisons, for every configuration (values are not compared).
impl<C: Config> RawTree<C> {
    /// Whether every key of `self` is in `other`.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let small: RadixMap<u64, u32> = [(1, 0), (3, 0)].into_iter().collect();
    /// let big: RadixMap<u64, u32> = (0..5).map(|k| (k, 1)).collect();
    /// assert!(small.is_subset(&big)); // the values differ, which does not matter
    /// assert!(!big.is_subset(&small));
    /// ```
    pub fn is_subset(&self, other: &Self) -> bool {
        is_subset_keys(self, other)
    }

    /// Whether every key of `other` is in `self`.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let small: RadixMap<u64, u32> = [(1, 0), (3, 0)].into_iter().collect();
    /// let big: RadixMap<u64, u32> = (0..5).map(|k| (k, 1)).collect();
    /// assert!(big.is_superset(&small));
    /// assert!(!small.is_superset(&big));
    /// ```
    pub fn is_superset(&self, other: &Self) -> bool {
        is_subset_keys(other, self)
    }

    /// Whether `self` and `other` have no key in common.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let evens: RadixMap<u64, ()> = (0..10).step_by(2).map(|k| (k, ())).collect();
    /// let odds: RadixMap<u64, ()> = (1..10).step_by(2).map(|k| (k, ())).collect();
    /// assert!(evens.is_disjoint(&odds));
    /// assert!(!evens.is_disjoint(&evens));
    /// ```
    pub fn is_disjoint(&self, other: &Self) -> bool {
        if self.len() <= other.len() {
            !have_common_key(self, other)
        } else {
            !have_common_key(other, self)
        }
    }
}
