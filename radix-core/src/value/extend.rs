//! What a tree can be built and extended from, per layout: the item types
//! of `FromIterator`, `From<[_; N]>` and `Extend`.
//!
//! As `BTreeMap`'s, a tree of a sized layout is collected from its values
//! ([`CollectFrom`]) and extended with its values or with references to
//! `Copy` values, as `Extend<(&K, &V)>` does ([`ExtendFrom`]). A
//! [`Varlen`] tree takes references in both, which is what its `insert`
//! takes.
//!
//! Why traits on the layout, and not two `Extend` impls on the tree: the
//! tree knows its value type only as a projection (`ValueOf<C>`), and
//! coherence cannot tell `Extend<(K, ValueOf<C>)>` from
//! `Extend<(K, &ValueOf<C>)>` (`ValueOf<C>` might, as far as it can see,
//! be a reference to itself). On the layout types the value is a plain
//! parameter, so `ExtendFrom<V> for Word<V, _>` and
//! `ExtendFrom<&V> for Word<V, _>` are visibly disjoint, and the tree has
//! one `Extend<(K, X)>` for every `X` its layout takes. `CollectFrom` has
//! a single implementation per layout, so `Tree::from([])` and
//! `collect()` infer their item type as they do for `BTreeMap`.
//!
//! Every [`MutableLayout`](super::MutableLayout) takes its own value in
//! both, so code generic over such a layout extends and collects without
//! naming these traits.

use super::{Inline, ValueLayout, Varlen, VarlenValue, Word};

/// A layout whose `insert` input can be made from an `X`, for `Extend`.
/// Sealed with [`ValueLayout`]: the implementations are the module's.
pub trait ExtendFrom<X>: ValueLayout {
    /// `item` as what `insert` takes.
    fn input_from<'a>(item: X) -> Self::Input<'a>
    where
        Self: 'a,
        X: 'a;
}

/// A layout whose `insert` input is an `X`, for `FromIterator` and
/// `From<[_; N]>`: one `X` per layout. Sealed with [`ValueLayout`].
pub trait CollectFrom<X>: ExtendFrom<X> {}

/// `ExtendFrom` by value and by reference to a `Copy` value, and
/// `CollectFrom` by value, for a sized layout generic over its value.
macro_rules! sized_layout_inputs {
    ($(impl<V $(, const $param:ident: $ty:ty)?> for $layout:ty;)*) => {$(
        impl<V $(, const $param: $ty)?> ExtendFrom<V> for $layout {
            #[inline]
            fn input_from<'a>(item: V) -> V
            where
                Self: 'a,
                V: 'a,
            {
                item
            }
        }

        impl<'v, V: Copy $(, const $param: $ty)?> ExtendFrom<&'v V> for $layout {
            #[inline]
            fn input_from<'a>(item: &'v V) -> V
            where
                Self: 'a,
                &'v V: 'a,
            {
                *item
            }
        }

        impl<V $(, const $param: $ty)?> CollectFrom<V> for $layout {}
    )*};
}

sized_layout_inputs! {
    impl<V, const EMBED: bool> for Word<V, EMBED>;
    impl<V> for Inline<V>;
}

impl<'v, V: ?Sized + VarlenValue> ExtendFrom<&'v V> for Varlen<V> {
    #[inline]
    fn input_from<'a>(item: &'v V) -> &'a V
    where
        Self: 'a,
        &'v V: 'a,
    {
        item
    }
}

impl<V: ?Sized + VarlenValue> CollectFrom<&V> for Varlen<V> {}
