//! The generated type's trait implementations: `Default`, `Debug`,
//! `Clone`, `PartialEq`, `Eq`, `PartialOrd`, `Ord`, `Hash`, `Index`,
//! `Extend`, `FromIterator`, and `IntoIterator` for `&T` and (for sized
//! values) `&mut T` and `T`. Each forwards to the engine tree's.
//!
//! `Send` and `Sync` need nothing here: they follow from the engine tree,
//! which has them when its values do.
//!
//! `Debug` is bounded on the value type being `Debug`. The bound names no
//! generic parameter, and stable Rust rejects such a bound outright when it
//! does not hold ("trivial bounds"), which would make every tree of a
//! non-`Debug` value a compile error. A higher-ranked binder
//! (`for<'x> V: Debug`) keeps the bound in force but checked only where the
//! impl is used, so a tree of non-`Debug` values simply is not `Debug`.

use proc_macro2::TokenStream;
use quote::quote;

use crate::emit::Names;
use crate::validate::{Layout, Spec};

/// The trait implementations.
pub fn impls(spec: &Spec, names: &Names) -> TokenStream {
    let Spec {
        forwarded,
        key,
        value,
        ..
    } = spec;
    let Names {
        tree,
        config,
        iter,
        iter_mut,
        into_iter,
        ..
    } = names;
    let raw = quote!(::radix_core::RawTree<#config>);
    // The comparison traits, each where the engine tree has it (see the
    // module docs for the binder).
    let forward = |tr: TokenStream, body: TokenStream| {
        quote! {
            #(#forwarded)*
            impl #tr for #tree
            where
                for<'x> #raw: #tr,
            {
                #body
            }
        }
    };
    let clone = forward(
        quote!(::core::clone::Clone),
        quote! {
            /// A structural copy, node by node: the same shape and size classes,
            /// each value cloned.
            fn clone(&self) -> Self {
                Self { raw: ::core::clone::Clone::clone(&self.raw) }
            }
        },
    );
    let partial_eq = forward(
        quote!(::core::cmp::PartialEq),
        quote! {
            fn eq(&self, other: &Self) -> bool {
                self.raw == other.raw
            }
        },
    );
    let eq = forward(quote!(::core::cmp::Eq), quote!());
    let partial_ord = forward(
        quote!(::core::cmp::PartialOrd),
        quote! {
            fn partial_cmp(&self, other: &Self) -> ::core::option::Option<::core::cmp::Ordering> {
                ::core::cmp::PartialOrd::partial_cmp(&self.raw, &other.raw)
            }
        },
    );
    let ord = forward(
        quote!(::core::cmp::Ord),
        quote! {
            fn cmp(&self, other: &Self) -> ::core::cmp::Ordering {
                ::core::cmp::Ord::cmp(&self.raw, &other.raw)
            }
        },
    );
    let hash = forward(
        quote!(::core::hash::Hash),
        quote! {
            fn hash<H: ::core::hash::Hasher>(&self, state: &mut H) {
                ::core::hash::Hash::hash(&self.raw, state)
            }
        },
    );
    let sized = (spec.layout != Layout::Varlen).then(|| {
        quote! {
            #(#forwarded)*
            impl<'a> ::core::iter::Extend<(#key, &'a #value)> for #tree
            where
                for<'x> #value: ::core::marker::Copy,
            {
                fn extend<I: ::core::iter::IntoIterator<Item = (#key, &'a #value)>>(&mut self, iter: I) {
                    ::core::iter::Extend::extend(
                        self,
                        ::core::iter::Iterator::map(
                            ::core::iter::IntoIterator::into_iter(iter),
                            |(key, value)| (key, *value),
                        ),
                    )
                }
            }

            #(#forwarded)*
            impl<'a> ::core::iter::IntoIterator for &'a mut #tree {
                type Item = (#key, &'a mut #value);
                type IntoIter = #iter_mut<'a>;

                #[inline]
                fn into_iter(self) -> #iter_mut<'a> {
                    self.raw.iter_mut()
                }
            }

            #(#forwarded)*
            impl ::core::iter::IntoIterator for #tree {
                type Item = (#key, #value);
                type IntoIter = #into_iter;

                /// The entries in ascending key order, consuming the tree.
                #[inline]
                fn into_iter(self) -> #into_iter {
                    ::core::iter::IntoIterator::into_iter(self.raw)
                }
            }
        }
    });
    // What `insert` takes, and so what `Extend` and `FromIterator` consume.
    let (generics, array_generics, item) = if spec.layout == Layout::Varlen {
        (
            quote!(<'a>),
            quote!(<'a, const N: usize>),
            quote!((#key, &'a #value)),
        )
    } else {
        (quote!(), quote!(<const N: usize>), quote!((#key, #value)))
    };
    quote! {
        #(#forwarded)*
        impl ::core::default::Default for #tree {
            #[inline]
            fn default() -> Self {
                Self::new()
            }
        }

        #(#forwarded)*
        impl ::core::fmt::Debug for #tree
        where
            for<'x> #value: ::core::fmt::Debug,
        {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                ::core::fmt::Debug::fmt(&self.raw, f)
            }
        }

        #(#forwarded)*
        impl #generics ::core::iter::Extend<#item> for #tree {
            fn extend<I: ::core::iter::IntoIterator<Item = #item>>(&mut self, iter: I) {
                ::core::iter::Iterator::for_each(
                    ::core::iter::IntoIterator::into_iter(iter),
                    |(key, value)| {
                        self.raw.insert(key, value);
                    },
                );
            }
        }

        #(#forwarded)*
        impl #array_generics ::core::convert::From<[#item; N]> for #tree {
            /// A tree of the entries of an array, as `BTreeMap::from` makes
            /// one (a key given twice keeps its last value).
            fn from(entries: [#item; N]) -> Self {
                ::core::iter::FromIterator::from_iter(entries)
            }
        }

        #(#forwarded)*
        impl #generics ::core::iter::FromIterator<#item> for #tree {
            fn from_iter<I: ::core::iter::IntoIterator<Item = #item>>(iter: I) -> Self {
                let mut tree = Self::new();
                ::core::iter::Extend::extend(&mut tree, iter);
                tree
            }
        }

        #clone
        #partial_eq
        #eq
        #partial_ord
        #ord
        #hash

        #(#forwarded)*
        impl ::core::ops::Index<#key> for #tree {
            type Output = #value;

            /// The value stored under `key`.
            ///
            /// # Panics
            ///
            /// If `key` is absent, as `BTreeMap` does.
            #[inline]
            fn index(&self, key: #key) -> &#value {
                &self.raw[key]
            }
        }

        #sized

        #(#forwarded)*
        impl<'a> ::core::iter::IntoIterator for &'a #tree {
            type Item = (#key, &'a #value);
            type IntoIter = #iter<'a>;

            #[inline]
            fn into_iter(self) -> #iter<'a> {
                self.raw.iter()
            }
        }
    }
}
