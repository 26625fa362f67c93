//! Ordered iteration, in both directions, by reference, mutably and by
//! value.
//!
//! One walk (the private `walk` module) underlies every iterator: a stack of
//! `(node, position)` frames per end that yields each key with its value
//! slot, seeking its bounds in one descent each. The other modules only
//! decide what an item is and how long the tree is borrowed:
//!
//! | module | iterators | the tree is |
//! |---|---|---|
//! | `shared` | [`Iter`], [`Range`], [`Keys`], [`Values`] | borrowed shared; items are `&V` |
//! | `mutable` | [`IterMut`], [`RangeMut`], [`ValuesMut`] | borrowed exclusively; items are `&mut V`, each slot produced once |
//! | `owned` | [`IntoIter`], [`IntoKeys`], [`IntoValues`] | consumed; each value is moved out of its slot |
//! | `spans` | [`Spans`] | borrowed shared; items are key intervals with `&V`, a range value once |
//!
//! Every iterator is double-ended and fused; those over a whole tree are
//! exact-size too.
//!
//! A [`Cursor`] is the walk made public: a position between
//! two entries that moves either way and seeks, re-descending only from
//! the lowest node that covers the key sought.

mod cursor;
mod mutable;
mod owned;
mod shared;
mod spans;
mod walk;

pub use cursor::Cursor;
pub use mutable::{IterMut, RangeMut, ValuesMut};
pub use owned::{IntoIter, IntoKeys, IntoValues};
pub use shared::{Iter, Keys, Range, Values};
pub use spans::Spans;

/// Declares an iterator that wraps another and maps its items (keys or
/// values out of entries), with the wrapped one's `Iterator`,
/// `DoubleEndedIterator`, `FusedIterator` and, where the wrapped one is,
/// `ExactSizeIterator`.
macro_rules! adapter {
    (
        $(#[$doc:meta])*
        pub struct $name:ident<$($lt:lifetime,)? C>($inner:ty) -> $item:ty, $map:expr;
        where [$($bounds:tt)*]
    ) => {
        $(#[$doc])*
        pub struct $name<$($lt,)? C: Config>(pub(super) $inner)
        where
            $($bounds)*;

        impl<$($lt,)? C: Config> Iterator for $name<$($lt,)? C>
        where
            $($bounds)*
        {
            type Item = $item;

            #[inline]
            fn next(&mut self) -> Option<$item> {
                self.0.next().map($map)
            }

            fn size_hint(&self) -> (usize, Option<usize>) {
                self.0.size_hint()
            }
        }

        impl<$($lt,)? C: Config> DoubleEndedIterator for $name<$($lt,)? C>
        where
            $($bounds)*
        {
            #[inline]
            fn next_back(&mut self) -> Option<$item> {
                self.0.next_back().map($map)
            }
        }

        impl<$($lt,)? C: Config> ExactSizeIterator for $name<$($lt,)? C> where $($bounds)* {}
        impl<$($lt,)? C: Config> core::iter::FusedIterator for $name<$($lt,)? C> where $($bounds)* {}
    };
}
use adapter;
