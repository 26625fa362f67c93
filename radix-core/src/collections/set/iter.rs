//! The lazy set iterators: a range of a set's keys, and the four set
//! operations, each a merge of two ascending walks that lets through the
//! keys it keeps.

use core::cmp::Ordering;
use core::iter::{FusedIterator, Peekable};

use super::TreeSet;
use crate::config::Config;
use crate::iter::{Keys, Range};

/// An iterator over the keys of a set in a range, ascending. Made by
/// [`TreeSet::range`].
///
/// ```
/// use radix_core::RadixSet;
///
/// let s: RadixSet<u32> = (0..10).collect();
/// let mut r = s.range(4..8);
/// assert_eq!(r.next_back(), Some(7));
/// assert_eq!(r.collect::<Vec<_>>(), [4, 5, 6]);
/// ```
pub struct SetRange<'a, C: Config>(pub(super) Range<'a, C>);

impl<C: Config> Iterator for SetRange<'_, C> {
    type Item = C::Key;

    #[inline]
    fn next(&mut self) -> Option<C::Key> {
        self.0.next().map(|(k, _)| k)
    }
}

impl<C: Config> DoubleEndedIterator for SetRange<'_, C> {
    #[inline]
    fn next_back(&mut self) -> Option<C::Key> {
        self.0.next_back().map(|(k, _)| k)
    }
}

impl<C: Config> FusedIterator for SetRange<'_, C> {}

/// Two ascending key walks side by side: the engine of the lazy set
/// operations, which differ only in which keys they let through.
pub(super) struct Merge<'a, C: Config> {
    a: Peekable<Keys<'a, C>>,
    b: Peekable<Keys<'a, C>>,
}

/// Where the next key of a merge comes from.
enum Side<K> {
    A(K),
    B(K),
    Both(K),
}

impl<'a, C: Config> Merge<'a, C> {
    pub(super) fn new(a: &'a TreeSet<C>, b: &'a TreeSet<C>) -> Self {
        Self {
            a: a.tree.keys().peekable(),
            b: b.tree.keys().peekable(),
        }
    }

    /// The next key of either walk, and which walks held it.
    #[inline]
    fn next(&mut self) -> Option<Side<C::Key>> {
        let order = match (self.a.peek(), self.b.peek()) {
            (None, None) => return None,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some(a), Some(b)) => a.cmp(b),
        };
        Some(match order {
            Ordering::Less => Side::A(self.a.next()?),
            Ordering::Greater => Side::B(self.b.next()?),
            Ordering::Equal => {
                self.b.next();
                Side::Both(self.a.next()?)
            }
        })
    }
}

/// Declares a lazy set-operation iterator over [`Merge`] that yields the
/// keys `$keep` accepts, and stops early when `$done` says no key can
/// follow.
macro_rules! set_op_iter {
    ($(#[$doc:meta])* $name:ident, $keep:pat => $key:ident, |$m:ident| $done:expr) => {
        $(#[$doc])*
        pub struct $name<'a, C: Config>(pub(super) Merge<'a, C>);

        impl<C: Config> Iterator for $name<'_, C> {
            type Item = C::Key;

            // `$done` is a condition, an option's emptiness for only some sets.
            #[allow(clippy::question_mark)]
            #[inline]
            fn next(&mut self) -> Option<C::Key> {
                loop {
                    let $m = &mut self.0;
                    if $done {
                        return None;
                    }
                    // (The union keeps every side, leaving `_` unreachable.)
                    #[allow(unreachable_patterns)]
                    match $m.next()? {
                        $keep => return Some($key),
                        _ => {}
                    }
                }
            }
        }

        impl<C: Config> FusedIterator for $name<'_, C> {}
    };
}

set_op_iter! {
    /// The keys of two sets' union, ascending. Made by [`TreeSet::union`].
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let a: RadixSet<u32> = [1, 3].into_iter().collect();
    /// let b: RadixSet<u32> = [2, 3].into_iter().collect();
    /// let mut union = a.union(&b);
    /// assert_eq!(union.next(), Some(1));
    /// assert_eq!(union.collect::<Vec<_>>(), [2, 3]);
    /// ```
    Union, Side::A(key) | Side::B(key) | Side::Both(key) => key, |m| false
}

set_op_iter! {
    /// The keys of two sets' intersection, ascending. Made by
    /// [`TreeSet::intersection`].
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let a: RadixSet<u32> = (0..100_000).collect();
    /// let b: RadixSet<u32> = [5, 50_000, 200_000].into_iter().collect();
    /// let mut both = a.intersection(&b);
    /// assert_eq!(both.next(), Some(5)); // walks `a` only up to 5
    /// assert_eq!(both.collect::<Vec<_>>(), [50_000]);
    /// ```
    Intersection, Side::Both(key) => key, |m| m.a.peek().is_none() || m.b.peek().is_none()
}

set_op_iter! {
    /// The keys of one set not in another, ascending. Made by
    /// [`TreeSet::difference`].
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let a: RadixSet<u32> = (0..10).collect();
    /// let b: RadixSet<u32> = (2..10).collect();
    /// let mut difference = a.difference(&b);
    /// assert_eq!(difference.next(), Some(0));
    /// assert_eq!(difference.next(), Some(1));
    /// assert_eq!(difference.next(), None);
    /// ```
    Difference, Side::A(key) => key, |m| m.a.peek().is_none()
}

set_op_iter! {
    /// The keys in exactly one of two sets, ascending. Made by
    /// [`TreeSet::symmetric_difference`].
    ///
    /// ```
    /// use radix_core::RadixSet;
    ///
    /// let a: RadixSet<u32> = [1, 2].into_iter().collect();
    /// let b: RadixSet<u32> = [2, 3].into_iter().collect();
    /// let only_one: RadixSet<u32> = a.symmetric_difference(&b).collect();
    /// assert_eq!(only_one.iter().collect::<Vec<_>>(), [1, 3]);
    /// ```
    SymmetricDifference, Side::A(key) | Side::B(key) => key, |m| false
}
