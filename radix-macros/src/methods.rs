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
        cursor,
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

    let sized = (!varlen).then(|| sized_methods(spec, names));

    quote! {
        #(#forwarded)*
        impl #tree {
            /// An empty tree. It allocates nothing until the first insert.
            #[inline]
            #[must_use]
            pub fn new() -> Self {
                Self { raw: ::radix_core::RawTree::new() }
            }

            /// An empty tree whose back end is laid out as `options` say: a
            /// block limit, or bump arenas for an insert-only pass.
            #[inline]
            #[must_use]
            pub fn with_options(options: ::radix_core::mem::MemoryOptions) -> Self {
                Self { raw: ::radix_core::RawTree::with_options(options) }
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

            /// The key and the value stored under `key`, if any, as
            /// `BTreeMap::get_key_value` gives them (the key by value).
            #[inline]
            pub fn get_key_value(&self, key: #key) -> #option<(#key, &#value)> {
                self.raw.get_key_value(key)
            }

            /// Looks up `key(item)` for every item of `items`, in order,
            /// and calls `found` with the item and the key's value: the
            /// answers of [`get`](Self::get), faster for a batch (walks to
            /// the last level pipelined and prefetched on large trees,
            /// shared between neighbouring keys). See
            /// [`RawTree::get_each`](::radix_core::RawTree::get_each).
            #[inline]
            pub fn get_each<T>(
                &self,
                items: &[T],
                key: impl Fn(&T) -> #key,
                found: impl FnMut(&T, #option<&#value>),
            ) {
                self.raw.get_each(items, key, found)
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
            /// range whose start lies after its end is empty, and so is one whose
            /// bounds are equal and both excluded (`BTreeMap` panics on both).
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

            /// The entry with the smallest key at or after `key`, if any: one
            /// descent along `key`'s path, without building a range.
            #[inline]
            pub fn first_at_or_after(&self, key: #key) -> #option<(#key, &#value)> {
                self.raw.first_at_or_after(key)
            }

            /// The entry with the largest key at or before `key`, if any: one
            /// descent along `key`'s path, without building a range.
            #[inline]
            pub fn last_at_or_before(&self, key: #key) -> #option<(#key, &#value)> {
                self.raw.last_at_or_before(key)
            }

            /// A cursor in the gap just before the first entry at or after `key`:
            /// it moves both ways, and seeks from where it is, so that probing
            /// keys in ascending order costs a node or two per probe rather than
            /// a descent from the root.
            #[inline]
            pub fn cursor_at(&self, key: #key) -> #cursor<'_> {
                self.raw.cursor_at(key)
            }

            /// A cursor before the first entry.
            #[inline]
            pub fn cursor_front(&self) -> #cursor<'_> {
                self.raw.cursor_front()
            }

            /// Whether every key of this tree is in `other` (values are not
            /// compared).
            #[inline]
            pub fn is_subset(&self, other: &Self) -> bool {
                self.raw.is_subset(&other.raw)
            }

            /// Whether every key of `other` is in this tree (values are not
            /// compared).
            #[inline]
            pub fn is_superset(&self, other: &Self) -> bool {
                self.raw.is_superset(&other.raw)
            }

            /// Whether this tree and `other` have no key in common.
            #[inline]
            pub fn is_disjoint(&self, other: &Self) -> bool {
                self.raw.is_disjoint(&other.raw)
            }

            #sized

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

/// Methods of trees whose values are sized (every layout but `varlen`):
/// entries, mutable iteration, owning iteration by key or value, `append`,
/// and with delete the removals in bulk.
fn sized_methods(spec: &Spec, names: &Names) -> TokenStream {
    let Spec { key, value, .. } = spec;
    let Names {
        entry,
        iter_mut,
        range_mut,
        values_mut,
        into_keys,
        into_values,
        ..
    } = names;
    let option = quote!(::core::option::Option);
    let removals = spec.delete.then(|| {
        quote! {
            /// Removes and returns the entry with the smallest key, if any.
            #[inline]
            pub fn pop_first(&mut self) -> #option<(#key, #value)> {
                self.raw.pop_first()
            }

            /// Removes and returns the entry with the largest key, if any.
            #[inline]
            pub fn pop_last(&mut self) -> #option<(#key, #value)> {
                self.raw.pop_last()
            }

            /// Keeps only the entries for which `keep(key, &mut value)` returns
            /// true, visiting them in ascending key order.
            ///
            /// One walk, plus a removal per rejected entry. If `keep` panics, the
            /// tree stays consistent; the last entries it rejected may remain.
            #[inline]
            pub fn retain<F: ::core::ops::FnMut(#key, &mut #value) -> bool>(&mut self, keep: F) {
                self.raw.retain(keep)
            }

            /// Removes every key that is in `other`. Uncompressed (the default),
            /// the two trees are walked together node by node, and each common
            /// key is removed without a descent; with compression, key by key.
            #[inline]
            pub fn difference_with(&mut self, other: &Self) {
                self.raw.difference_with(&other.raw)
            }

            /// Moves every entry at or after `key` into a new tree, which it
            /// returns; the rest stays. Uncompressed (the default), one descent
            /// along `key` and whole subtrees moved node by node without a
            /// search; with compression, O(m × height) for m entries moved.
            #[inline]
            #[must_use]
            pub fn split_off(&mut self, key: #key) -> Self {
                Self { raw: self.raw.split_off(key) }
            }
        }
    });
    quote! {
        /// The entry for `key`, for reading, changing, inserting or removing it
        /// in place with a single descent: an occupied entry holds the value's
        /// slot, and a vacant one inserts along the path its lookup took.
        #[inline]
        pub fn entry(&mut self, key: #key) -> #entry<'_> {
            self.raw.entry(key)
        }

        /// The entries as `(key, &mut value)`, in ascending key order.
        #[inline]
        pub fn iter_mut(&mut self) -> #iter_mut<'_> {
            self.raw.iter_mut()
        }

        /// The entries whose keys lie in `range`, as `(key, &mut value)`, in
        /// ascending key order. A range whose start lies after its end is
        /// empty, and so is one whose bounds are equal and both excluded
        /// (`BTreeMap` panics on both).
        #[inline]
        pub fn range_mut<R: ::core::ops::RangeBounds<#key>>(&mut self, range: R) -> #range_mut<'_> {
            self.raw.range_mut(range)
        }

        /// The values, mutably, in ascending key order.
        #[inline]
        pub fn values_mut(&mut self) -> #values_mut<'_> {
            self.raw.values_mut()
        }

        /// The keys in ascending order, consuming the tree.
        #[inline]
        pub fn into_keys(self) -> #into_keys {
            self.raw.into_keys()
        }

        /// The values in ascending key order, consuming the tree.
        #[inline]
        pub fn into_values(self) -> #into_values {
            self.raw.into_values()
        }

        /// Moves every entry of `other` into this tree, leaving `other` empty;
        /// a key in both takes `other`'s value. O(1) when this tree is empty.
        /// Uncompressed (the default), the trees are walked together and each
        /// subtree of `other` with no counterpart here moves whole, node by
        /// node; with compression, an insert per entry, in key order.
        #[inline]
        pub fn append(&mut self, other: &mut Self) {
            self.raw.append(&mut other.raw)
        }

        /// Keeps only the keys also in `other`, calling
        /// `merge(key, &mut ours, &theirs)` on each, in ascending key order. The
        /// kept values move into a fresh tree that replaces this one.
        /// Uncompressed (the default), the trees are walked together, node by
        /// node, and a subtree on one side only is passed over; with
        /// compression, one walk of this tree seeking each key in `other`.
        #[inline]
        pub fn intersect_with<F: ::core::ops::FnMut(#key, &mut #value, &#value)>(
            &mut self,
            other: &Self,
            merge: F,
        ) {
            self.raw.intersect_with(&other.raw, merge)
        }

        /// Adds every entry of `other`, moving its values; where a key is in
        /// both, `merge(key, &mut ours, theirs)` decides the value that stays,
        /// in ascending key order. Uncompressed (the default), subtrees of
        /// `other` with no counterpart here move whole, as in `append`.
        #[inline]
        pub fn union_with<F: ::core::ops::FnMut(#key, &mut #value, #value)>(
            &mut self,
            other: Self,
            merge: F,
        ) {
            self.raw.union_with(other.raw, merge)
        }

        #removals
    }
}
