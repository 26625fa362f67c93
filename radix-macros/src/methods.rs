//! The generated type's inherent methods.
//!
//! Each delegates to the same-named method of `radix_core::RawTree`; the
//! point of generating them is concrete signatures (`get(&self, key: u32)
//! -> Option<&u64>`) and documentation on the user's type. The layout
//! decides two signatures: a `varlen` tree takes `&V` in `insert` and
//! reports presence as `bool` from `insert` and `remove`, and has no
//! `get_mut` (its values are unsized byte copies). `remove` exists only
//! when the configuration enables delete.

use proc_macro2::TokenStream;
use quote::quote;

use crate::emit::Names;
use crate::validate::{Layout, Spec};

/// The inherent `impl` block.
pub fn inherent(spec: &Spec, names: &Names) -> TokenStream {
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
        range,
        keys,
        values,
        ..
    } = names;
    let varlen = spec.layout == Layout::Varlen;
    let option = quote!(::core::option::Option);

    let get_mut = (!varlen).then(|| {
        quote! {
            /// The value stored under `key`, mutably, if any.
            #[inline]
            pub fn get_mut(&mut self, key: #key) -> #option<&mut #value> {
                self.raw.get_mut(key)
            }
        }
    });

    let insert = if varlen {
        quote! {
            /// Stores a copy of `value` under `key`, returning whether the key was
            /// already present (its old value is replaced).
            ///
            /// A value small enough is embedded in its slot; a larger one is copied
            /// into a leaf allocation of its own size.
            #[inline]
            pub fn insert(&mut self, key: #key, value: &#value) -> bool {
                self.raw.insert(key, value)
            }

            /// Stores a copy of `value` under `key` as [`Self::insert`] does, first
            /// showing the value it replaces, if any, to `old`: the way to see a
            /// replaced value without a second walk down the tree. (If `old`
            /// panics, the replaced value's memory is leaked.)
            #[inline]
            pub fn insert_with_old(
                &mut self,
                key: #key,
                value: &#value,
                old: impl ::core::ops::FnOnce(&#value),
            ) -> bool {
                self.raw.insert_with_old(key, value, old)
            }
        }
    } else {
        quote! {
            /// Stores `value` under `key`, returning the value it replaces, if any.
            ///
            /// A full node grows into the next size class as needed.
            #[inline]
            pub fn insert(&mut self, key: #key, value: #value) -> #option<#value> {
                self.raw.insert(key, value)
            }
        }
    };

    let remove = match (spec.delete, varlen) {
        (false, _) => None,
        (true, true) => Some(quote! {
            /// Removes `key`, returning whether it was present.
            ///
            /// Nodes left sparse shrink into smaller size classes, and removing the
            /// last key returns all node memory.
            #[inline]
            pub fn remove(&mut self, key: #key) -> bool {
                self.raw.remove(key)
            }
        }),
        (true, false) => Some(quote! {
            /// Removes `key`, returning its value if it was present.
            ///
            /// Nodes left sparse shrink into smaller size classes, and removing the
            /// last key returns all node memory.
            #[inline]
            pub fn remove(&mut self, key: #key) -> #option<#value> {
                self.raw.remove(key)
            }
        }),
    };

    quote! {
        #(#forwarded)*
        impl #tree {
            /// An empty tree. It allocates nothing until the first insert.
            #[inline]
            #[must_use]
            pub fn new() -> Self {
                Self { raw: ::radix_core::RawTree::new() }
            }

            /// An empty tree over a memory back end built by the caller, for
            /// example with a block-size limit or bump arenas for an insert-only
            /// pass.
            ///
            /// The back end must have been built from [`Self::pool_specs`]: the
            /// engine relies on its pools having exactly those node sizes.
            #[inline]
            #[must_use]
            pub fn with_memory(memory: ::radix_core::mem::LocalMemory) -> Self {
                Self { raw: ::radix_core::RawTree::with_memory(memory) }
            }

            /// The node pools this configuration needs, in pool order: what a
            /// memory back end passed to [`Self::with_memory`] must be built with.
            #[must_use]
            pub fn pool_specs() -> ::std::vec::Vec<::radix_core::mem::PoolSpec> {
                ::radix_core::RawTree::<#config>::pool_specs()
            }

            /// The number of keys. O(1).
            #[inline]
            #[must_use]
            pub fn len(&self) -> usize {
                self.raw.len()
            }

            /// Whether the tree holds no keys. O(1).
            #[inline]
            #[must_use]
            pub fn is_empty(&self) -> bool {
                self.raw.is_empty()
            }

            /// The value stored under `key`, if any.
            ///
            /// A lookup visits at most one node per byte of the largest key.
            #[inline]
            pub fn get(&self, key: #key) -> #option<&#value> {
                self.raw.get(key)
            }

            #get_mut

            /// Whether `key` is present.
            #[inline]
            pub fn contains_key(&self, key: #key) -> bool {
                self.raw.contains_key(key)
            }

            #insert

            #remove

            /// Removes every key, dropping the values and returning all node and
            /// leaf memory.
            #[inline]
            pub fn clear(&mut self) {
                self.raw.clear()
            }

            /// The entries as `(key, &value)`, in ascending key order.
            #[inline]
            pub fn iter(&self) -> #iter<'_> {
                self.raw.iter()
            }

            /// The entries whose keys lie in `range`, as `(key, &value)`, in
            /// ascending key order.
            ///
            /// The start is found by one descent, not by skipping smaller keys. A
            /// range whose start lies after its end is empty.
            #[inline]
            pub fn range<R: ::core::ops::RangeBounds<#key>>(&self, range: R) -> #range<'_> {
                self.raw.range(range)
            }

            /// The keys, in ascending order.
            #[inline]
            pub fn keys(&self) -> #keys<'_> {
                self.raw.keys()
            }

            /// The values, in ascending key order.
            #[inline]
            pub fn values(&self) -> #values<'_> {
                self.raw.values()
            }

            /// The entry with the smallest key, if any.
            #[inline]
            pub fn first_key_value(&self) -> #option<(#key, &#value)> {
                self.raw.first_key_value()
            }

            /// The entry with the largest key, if any.
            #[inline]
            pub fn last_key_value(&self) -> #option<(#key, &#value)> {
                self.raw.last_key_value()
            }

            /// Bytes held from the memory back end: whole slab blocks plus leaves.
            ///
            /// This is what a memory budget should be compared with. An empty tree
            /// holds none. O(1).
            #[inline]
            pub fn memory_usage(&self) -> usize {
                self.raw.memory_usage()
            }

            /// A snapshot of the tree's shape: keys, height, nodes per size class,
            /// leaves and memory.
            ///
            /// Walks the whole tree: O(n).
            pub fn stats(&self) -> ::radix_core::Stats {
                self.raw.stats()
            }

            /// Checks the tree's structural invariants, returning a description of
            /// the first violation found.
            ///
            /// Walks the whole tree: O(n). Meant for tests, property tests and
            /// fuzzing; a correct tree always passes.
            pub fn verify(&self) -> ::core::result::Result<(), ::std::string::String> {
                self.raw.verify()
            }

            /// The underlying engine tree, for code written against the generic
            /// `radix_core::RawTree`.
            #[inline]
            pub fn as_raw(&self) -> &::radix_core::RawTree<#config> {
                &self.raw
            }
        }
    }
}
