//! The operators `|`, `&`, `-` and `^` on two borrowed sets, each
//! returning a new set, as `BTreeSet`'s do.
//!
//! Each collects the matching lazy set operation ([`TreeSet::union`] and
//! its siblings): one walk of both sets, and one insert per key of the
//! result, in ascending order, so that the insert hint spares each a
//! descent. To change a set in place instead, without a new tree, use
//! `union_with`, `intersect_with` or `difference_with`, which move or free
//! whole subtrees where they can.

use core::ops::{BitAnd, BitOr, BitXor, Sub};

use super::{SetConfig, TreeSet};
use crate::mem::LocalMemory;

/// The keys in `self` or `rhs`, as a new set.
///
/// ```
/// use radix_core::RadixSet;
///
/// let a = RadixSet::<u32>::from([1, 2, 3]);
/// let b = RadixSet::<u32>::from([3, 4]);
/// assert_eq!(&a | &b, RadixSet::from([1, 2, 3, 4]));
/// ```
impl<C: SetConfig<Memory = LocalMemory>> BitOr<&TreeSet<C>> for &TreeSet<C> {
    type Output = TreeSet<C>;

    fn bitor(self, rhs: &TreeSet<C>) -> TreeSet<C> {
        self.union(rhs).collect()
    }
}

/// The keys in both `self` and `rhs`, as a new set.
///
/// ```
/// use radix_core::RadixSet;
///
/// let a = RadixSet::<u32>::from([1, 2, 3]);
/// let b = RadixSet::<u32>::from([2, 3, 4]);
/// assert_eq!(&a & &b, RadixSet::from([2, 3]));
/// ```
impl<C: SetConfig<Memory = LocalMemory>> BitAnd<&TreeSet<C>> for &TreeSet<C> {
    type Output = TreeSet<C>;

    fn bitand(self, rhs: &TreeSet<C>) -> TreeSet<C> {
        self.intersection(rhs).collect()
    }
}

/// The keys in `self` but not in `rhs`, as a new set.
///
/// ```
/// use radix_core::RadixSet;
///
/// let a = RadixSet::<u32>::from([1, 2, 3]);
/// let b = RadixSet::<u32>::from([2, 3, 4]);
/// assert_eq!(&a - &b, RadixSet::from([1]));
/// ```
impl<C: SetConfig<Memory = LocalMemory>> Sub<&TreeSet<C>> for &TreeSet<C> {
    type Output = TreeSet<C>;

    fn sub(self, rhs: &TreeSet<C>) -> TreeSet<C> {
        self.difference(rhs).collect()
    }
}

/// The keys in exactly one of `self` and `rhs`, as a new set.
///
/// ```
/// use radix_core::RadixSet;
///
/// let a = RadixSet::<u32>::from([1, 2, 3]);
/// let b = RadixSet::<u32>::from([2, 3, 4]);
/// assert_eq!(&a ^ &b, RadixSet::from([1, 4]));
/// ```
impl<C: SetConfig<Memory = LocalMemory>> BitXor<&TreeSet<C>> for &TreeSet<C> {
    type Output = TreeSet<C>;

    fn bitxor(self, rhs: &TreeSet<C>) -> TreeSet<C> {
        self.symmetric_difference(rhs).collect()
    }
}
