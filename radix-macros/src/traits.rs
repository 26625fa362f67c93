//! The generated type's trait implementations: `Default`, `Debug`,
//! `Extend`, `FromIterator` and `IntoIterator` for `&T`.
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
    let Names { tree, iter, .. } = names;
    // What `insert` takes, and so what `Extend` and `FromIterator` consume.
    let (generics, item) = if spec.layout == Layout::Varlen {
        (quote!(<'a>), quote!((#key, &'a #value)))
    } else {
        (quote!(), quote!((#key, #value)))
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
        impl #generics ::core::iter::FromIterator<#item> for #tree {
            fn from_iter<I: ::core::iter::IntoIterator<Item = #item>>(iter: I) -> Self {
                let mut tree = Self::new();
                ::core::iter::Extend::extend(&mut tree, iter);
                tree
            }
        }

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
