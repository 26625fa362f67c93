//! Emission: the declarations a checked [`Spec`] expands to.
//!
//! For `struct BlockMap` the expansion holds, in order:
//!
//! - `BlockMapConfig`, a hidden, uninhabited type implementing
//!   `radix_core::Config` with the chosen key, layout, memory, size
//!   classes, delete flag and compression (and
//!   `radix_core::config::Removable` with delete);
//! - compile-time checks of the configuration (see [`assertions`]);
//! - `BlockMap`, an alias of `radix_core::RawTree<BlockMapConfig>` (with
//!   `memory: shared`, of `radix_core::shm::SharedTree<BlockMapConfig>`),
//!   documented with the user's docs and a generated configuration section;
//! - the iterator type aliases `BlockMapIter`, `BlockMapRange`,
//!   `BlockMapKeys` and `BlockMapValues`; for local trees of sized values
//!   (every layout but `varlen`) the mutable and owning iterators
//!   (`BlockMapIterMut`, `BlockMapRangeMut`, `BlockMapValuesMut`,
//!   `BlockMapIntoIter`, `BlockMapIntoKeys`, `BlockMapIntoValues`) and the
//!   entries (`BlockMapEntry`, `BlockMapOccupiedEntry`,
//!   `BlockMapVacantEntry`); for shared trees the guard aliases
//!   `BlockMapReadGuard` and `BlockMapWriteGuard`;
//!
//! That is all: no method and no trait impl. The map API is written once,
//! on the generic engine types, and the alias gets all of it, for local
//! and shared trees alike; which methods exist follows from the
//! configuration's bounds (`remove` from `Removable`, `get_mut` and the
//! entries from a mutable layout, `Clone` or `Debug` from the value's).
//!
//! Why an alias rather than a newtype: a newtype would have to forward
//! every method and trait by hand (it did: about 490 lines per
//! declaration, compiled again for each one, and a second API to keep in
//! step with the engine's), and tools could not follow a call through
//! it. An alias costs two things, both accepted: rustdoc shows the
//! engine's generic signatures (`get(&self, key: C::Key) ->
//! Option<&ValueOf<C>>`) under the alias's documentation, and the
//! declaring crate cannot add inherent methods to the alias (it can still
//! implement its own traits for it). `radix_set!` made the same choice
//! first.
//!
//! Every path into the engine is absolute (`::radix_core::...`), so the
//! expansion works whatever the caller has imported.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned;

use crate::docs;
use crate::validate::{Concurrency, Layout, Memory, Spec};

/// The names of the emitted items.
pub struct Names {
    /// The tree type, as the user named it.
    pub tree: Ident,
    /// The configuration type: `{tree}Config`.
    pub config: Ident,
    /// The iterator alias: `{tree}Iter`.
    pub iter: Ident,
    /// The range iterator alias: `{tree}Range`.
    pub range: Ident,
    /// The key iterator alias: `{tree}Keys`.
    pub keys: Ident,
    /// The value iterator alias: `{tree}Values`.
    pub values: Ident,
    /// The mutable iterator alias: `{tree}IterMut`.
    pub iter_mut: Ident,
    /// The mutable range iterator alias: `{tree}RangeMut`.
    pub range_mut: Ident,
    /// The mutable value iterator alias: `{tree}ValuesMut`.
    pub values_mut: Ident,
    /// The owning iterator alias: `{tree}IntoIter`.
    pub into_iter: Ident,
    /// The owning key iterator alias: `{tree}IntoKeys`.
    pub into_keys: Ident,
    /// The owning value iterator alias: `{tree}IntoValues`.
    pub into_values: Ident,
    /// The cursor alias: `{tree}Cursor`.
    pub cursor: Ident,
    /// The entry alias: `{tree}Entry`.
    pub entry: Ident,
    /// The occupied entry alias: `{tree}OccupiedEntry`.
    pub occupied: Ident,
    /// The vacant entry alias: `{tree}VacantEntry`.
    pub vacant: Ident,
    /// A shared tree's read guard alias: `{tree}ReadGuard`.
    pub read_guard: Ident,
    /// A shared tree's write guard alias: `{tree}WriteGuard`.
    pub write_guard: Ident,
}

impl Names {
    pub fn new(tree: &Ident) -> Self {
        Self {
            tree: tree.clone(),
            config: format_ident!("{}Config", tree),
            iter: format_ident!("{}Iter", tree),
            range: format_ident!("{}Range", tree),
            keys: format_ident!("{}Keys", tree),
            values: format_ident!("{}Values", tree),
            iter_mut: format_ident!("{}IterMut", tree),
            range_mut: format_ident!("{}RangeMut", tree),
            values_mut: format_ident!("{}ValuesMut", tree),
            into_iter: format_ident!("{}IntoIter", tree),
            into_keys: format_ident!("{}IntoKeys", tree),
            into_values: format_ident!("{}IntoValues", tree),
            cursor: format_ident!("{}Cursor", tree),
            entry: format_ident!("{}Entry", tree),
            occupied: format_ident!("{}OccupiedEntry", tree),
            vacant: format_ident!("{}VacantEntry", tree),
            read_guard: format_ident!("{}ReadGuard", tree),
            write_guard: format_ident!("{}WriteGuard", tree),
        }
    }
}

/// The whole expansion.
pub fn emit(spec: &Spec) -> TokenStream {
    let names = Names::new(&spec.name);
    let config = config(spec, &names);
    let assertions = assertions(spec);
    let tree = tree_type(spec, &names);
    let aliases = match spec.concurrency {
        Concurrency::None => aliases(spec, &names),
        Concurrency::Rowex => concurrent_aliases(spec, &names),
    };
    quote! {
        #config
        #assertions
        #tree
        #aliases
    }
}

/// The layout type for the value type.
fn layout_type(spec: &Spec) -> TokenStream {
    let value = &spec.value;
    let layout = match spec.layout {
        Layout::Auto => quote!(Auto),
        Layout::Embedded => quote!(Embedded),
        Layout::Leaf => quote!(Leaf),
        Layout::Inline => quote!(Inline),
        Layout::Varlen => quote!(Varlen),
    };
    // Spanned on the value type: a value the layout cannot store (a
    // `varlen` value without `VarlenValue`) is reported there.
    quote_spanned!(value.span()=> ::radix_core::value::#layout<#value>)
}

/// `SizeClasses::new(&[...])` for an explicit list, spanned on the list so
/// that a const-evaluation failure points at it.
fn size_classes_expr(spec: &Spec) -> TokenStream {
    match &spec.size_classes {
        None => quote!(::radix_core::SizeClasses::DEFAULT),
        Some(classes) => {
            let caps = classes.caps.iter().map(|&(cap, span)| {
                let mut lit = Literal::u16_unsuffixed(cap);
                lit.set_span(span);
                lit
            });
            quote_spanned! {classes.span=>
                ::radix_core::SizeClasses::new(&[#(#caps),*])
            }
        }
    }
}

/// The configuration type and its `Config` implementation.
pub fn config(spec: &Spec, names: &Names) -> TokenStream {
    let Spec {
        forwarded,
        vis,
        key,
        delete,
        ..
    } = spec;
    let Names { tree, config, .. } = names;
    let layout = layout_type(spec);
    let classes = size_classes_expr(spec);
    let memory = match spec.memory {
        Memory::Local => quote!(::radix_core::mem::LocalMemory),
        Memory::Shared => quote!(::radix_core::shm::SharedMemory),
    };
    // Always written out, the default included: the trait's own default
    // and the macro's need not agree (see `default_compression`).
    let compression = format_ident!("{}", spec.compression.variant());
    let removable = delete.then(|| {
        quote! {
            #(#forwarded)*
            impl ::radix_core::config::Removable for #config {}
        }
    });
    // Range values compare as `PartialEq` says and split into copies made
    // by the layout's `CloneLayout`.
    let ranges = spec.ranges.then(|| {
        let value = &spec.value;
        quote! {
            const RANGES: bool = true;

            #[inline]
            fn same_value(a: &#value, b: &#value) -> bool {
                ::core::cmp::PartialEq::eq(a, b)
            }

            #[inline]
            unsafe fn clone_value_slot(
                slot: ::core::ptr::NonNull<
                    <#layout as ::radix_core::value::ValueLayout>::Slot,
                >,
                mem: &mut #memory,
            ) -> ::core::result::Result<
                <#layout as ::radix_core::value::ValueLayout>::Slot,
                <#memory as ::radix_core::mem::Memory>::Error,
            > {
                // SAFETY: the engine's contract for `clone_value_slot`: a
                // live slot made on `mem`.
                unsafe {
                    <#layout as ::radix_core::value::CloneLayout>::clone_slot_in(slot, mem)
                }
            }
        }
    });
    let doc = format!(
        "The compile-time configuration of [`{tree}`], declared by `radix_tree!`. \
         An uninhabited marker type implementing `radix_core::Config`."
    );
    quote! {
        #(#forwarded)*
        #[doc = #doc]
        #[doc(hidden)]
        #vis enum #config {}

        #(#forwarded)*
        impl ::radix_core::Config for #config {
            type Key = #key;
            type Layout = #layout;
            type Memory = #memory;
            const SIZE_CLASSES: ::radix_core::SizeClasses = #classes;
            const DELETE: bool = #delete;
            const COMPRESSION: ::radix_core::Compression =
                ::radix_core::Compression::#compression;
            #ranges
        }

        #removable
    }
}

/// Compile-time checks of the configuration, each failing with a message
/// that names the problem:
///
/// - the key type implements `radix_core::Key`;
/// - explicit size classes pass `SizeClasses::new`, whose panic message
///   (from `SizeClasses::check`, the one place the rules live) becomes the
///   compile error;
/// - an `embedded` value fits a pointer-sized, pointer-aligned word;
/// - a `varlen` value implements `VarlenValue`;
/// - a tree with ranges has values that implement `PartialEq` (ranges
///   merge and absorb equal values);
/// - a shared tree's value (other than `varlen`) implements
///   `radix_core::shm::ShmSafe`: plain bytes, since a pointer into one
///   process's heap means nothing in another.
pub fn assertions(spec: &Spec) -> TokenStream {
    let Spec {
        forwarded,
        key,
        value,
        ..
    } = spec;
    let sa = quote!(::radix_core::__private::static_assertions);
    let mut checks = quote! {
        #sa::assert_impl_all!(#key: ::radix_core::Key);
    };
    if spec.size_classes.is_some() {
        let classes = size_classes_expr(spec);
        checks.extend(quote! {
            const _: ::radix_core::SizeClasses = #classes;
        });
    }
    match spec.layout {
        Layout::Embedded => {
            let span = value.span();
            checks.extend(quote_spanned! {span=>
                // An embedded value lives in the slot word itself.
                const _: () = ::core::assert!(
                    ::core::mem::size_of::<#value>() <= ::core::mem::size_of::<usize>()
                        && ::core::mem::align_of::<#value>() <= ::core::mem::align_of::<usize>(),
                    "layout: embedded requires a value of at most pointer size and alignment; use leaf or inline"
                );
            });
        }
        Layout::Varlen => checks.extend(quote! {
            #sa::assert_impl_all!(#value: ::radix_core::value::VarlenValue);
        }),
        Layout::Auto | Layout::Leaf | Layout::Inline => {}
    }
    // A missing feature of radix-core is named before any path it gates.
    if spec.concurrency == Concurrency::Rowex {
        checks.extend(quote!(::radix_core::__private::needs_concurrent!();));
    }
    if spec.memory == Memory::Shared {
        checks.extend(quote!(::radix_core::__private::needs_shm!();));
    }
    if spec.concurrency == Concurrency::Rowex {
        let span = value.span();
        let layout = layout_type(spec);
        checks.extend(quote_spanned! {span=>
            const _: fn() = || {
                fn concurrent_values_are_words_or_leaves<
                    L: ::radix_core::concurrent::ConcurrentLayout,
                >() {
                }
                concurrent_values_are_words_or_leaves::<#layout>();
            };
        });
    }
    if spec.ranges {
        let span = value.span();
        checks.extend(quote_spanned! {span=>
            const _: fn() = || {
                fn range_values_compare_with_partial_eq<T: ?Sized + ::core::cmp::PartialEq>() {}
                range_values_compare_with_partial_eq::<#value>();
            };
        });
    }
    if spec.memory == Memory::Shared && spec.layout != Layout::Varlen {
        let span = value.span();
        checks.extend(quote_spanned! {span=>
            const _: fn() = || {
                fn shared_values_must_be_plain_bytes<T: ::radix_core::shm::ShmSafe>() {}
                shared_values_must_be_plain_bytes::<#value>();
            };
        });
    }
    quote! {
        #(#forwarded)*
        const _: () = {
            #checks
        };
    }
}

/// The tree type itself, with the user's docs and the configuration's.
fn tree_type(spec: &Spec, names: &Names) -> TokenStream {
    let Spec {
        docs: user_docs,
        forwarded,
        vis,
        ..
    } = spec;
    let Names { tree, config, .. } = names;
    let engine = match (spec.concurrency, spec.memory) {
        (Concurrency::Rowex, Memory::Local) => {
            quote!(::radix_core::concurrent::ConcurrentTree<#config>)
        }
        (Concurrency::Rowex, Memory::Shared) => {
            quote!(::radix_core::concurrent::ConcurrentTree<#config, ::radix_core::shm::SharedSpace>)
        }
        (Concurrency::None, Memory::Local) => quote!(::radix_core::RawTree<#config>),
        (Concurrency::None, Memory::Shared) => quote!(::radix_core::shm::SharedTree<#config>),
    };
    let generated = docs::type_docs(spec).into_iter().map(|line| {
        if line.is_empty() {
            line
        } else {
            format!(" {line}")
        }
    });
    quote! {
        #(#user_docs)*
        #(#[doc = #generated])*
        #(#forwarded)*
        #vis type #tree = #engine;
    }
}

/// A concurrent tree's one iterator alias.
fn concurrent_aliases(spec: &Spec, names: &Names) -> TokenStream {
    let Spec { forwarded, vis, .. } = spec;
    let Names {
        tree, config, iter, ..
    } = names;
    let space = match spec.memory {
        Memory::Local => quote!(::radix_core::concurrent::LocalSpace),
        Memory::Shared => quote!(::radix_core::shm::SharedSpace),
    };
    let doc = format!(
        "An iterator over a [`{tree}`]'s entries as `(key, value)` copies, in ascending key \
         order (or descending, from the back), made by [`{tree}::iter`] and \
         [`{tree}::range`]."
    );
    quote! {
        #(#forwarded)*
        #[doc = #doc]
        #vis type #iter<'a> = ::radix_core::concurrent::Iter<'a, #config, #space>;
    }
}

/// The iterator type aliases.
fn aliases(spec: &Spec, names: &Names) -> TokenStream {
    let Spec { forwarded, vis, .. } = spec;
    let Names {
        tree,
        config,
        iter,
        range,
        keys,
        values,
        read_guard,
        write_guard,
        ..
    } = names;
    let guards = (spec.memory == Memory::Shared).then(|| {
        let read_doc = format!(
            "The read lock of a [`{tree}`], from [`{tree}::read`]: dereferences to \
             `radix_core::shm::TreeView` for every read, and releases the lock on drop."
        );
        let write_doc = format!(
            "The write lock of a [`{tree}`], from [`{tree}::write`]: reads as the read guard \
             does, adds `insert`, `remove` and `clear`, and releases the lock on drop."
        );
        quote! {
            #(#forwarded)*
            #[doc = #read_doc]
            #vis type #read_guard<'a> = ::radix_core::shm::ReadGuard<'a, #config>;

            #(#forwarded)*
            #[doc = #write_doc]
            #vis type #write_guard<'a> = ::radix_core::shm::WriteGuard<'a, #config>;
        }
    });
    let sized_aliases = sized_aliases(spec, names);
    let cursor = {
        let cursor = &names.cursor;
        let maker = match spec.memory {
            Memory::Local => format!("[`{tree}::cursor_at`]"),
            Memory::Shared => {
                format!("`cursor_at` on a [`{tree}ReadGuard`] or [`{tree}WriteGuard`]")
            }
        };
        let doc = format!(
            "A position between two entries of a [`{tree}`], which moves both ways and seeks; \
             made by {maker}."
        );
        quote! {
            #(#forwarded)*
            #[doc = #doc]
            #vis type #cursor<'a> = ::radix_core::Cursor<'a, #config>;
        }
    };
    // Who makes the iterators: the tree, or a shared tree's guards.
    let maker = |method: &str| match spec.memory {
        Memory::Local => format!("[`{tree}::{method}`]"),
        Memory::Shared => format!("`{method}` on a [`{tree}ReadGuard`] or [`{tree}WriteGuard`]"),
    };
    let iter_doc = format!(
        "An iterator over a [`{tree}`]'s entries as `(key, &value)`, in ascending key \
         order; made by {}.",
        maker("iter")
    );
    let range_doc = format!(
        "An iterator over the entries of a [`{tree}`] whose keys lie in a range, in \
         ascending key order; made by {}.",
        maker("range")
    );
    let keys_doc = format!(
        "An iterator over a [`{tree}`]'s keys, ascending; made by {}.",
        maker("keys")
    );
    let values_doc = format!(
        "An iterator over a [`{tree}`]'s values, in ascending key order; made by {}.",
        maker("values")
    );
    quote! {
        #(#forwarded)*
        #[doc = #iter_doc]
        #vis type #iter<'a> = ::radix_core::Iter<'a, #config>;

        #(#forwarded)*
        #[doc = #range_doc]
        #vis type #range<'a> = ::radix_core::Range<'a, #config>;

        #(#forwarded)*
        #[doc = #keys_doc]
        #vis type #keys<'a> = ::radix_core::Keys<'a, #config>;

        #(#forwarded)*
        #[doc = #values_doc]
        #vis type #values<'a> = ::radix_core::Values<'a, #config>;

        #guards

        #cursor

        #sized_aliases
    }
}

/// The aliases of a local tree of sized values: mutable and owning
/// iterators, and entries.
fn sized_aliases(spec: &Spec, names: &Names) -> Option<TokenStream> {
    if spec.memory != Memory::Local || spec.layout == Layout::Varlen {
        return None;
    }
    let Spec { forwarded, vis, .. } = spec;
    let Names {
        tree,
        config,
        iter_mut,
        range_mut,
        values_mut,
        into_iter,
        into_keys,
        into_values,
        entry,
        occupied,
        vacant,
        ..
    } = names;
    let doc = |what: &str, method: &str| format!("{what} Made by [`{tree}::{method}`].");
    let docs = [
        doc(
            &format!(
                "A mutable iterator over a [`{tree}`]'s entries as `(key, &mut value)`, in ascending key order."
            ),
            "iter_mut",
        ),
        doc(
            &format!(
                "A mutable iterator over the entries of a [`{tree}`] whose keys lie in a range, in ascending key order."
            ),
            "range_mut",
        ),
        doc(
            &format!("A mutable iterator over a [`{tree}`]'s values, in ascending key order."),
            "values_mut",
        ),
        format!(
            "An owning iterator over a [`{tree}`]'s entries as `(key, value)`, in ascending key order. Made by `into_iter()`."
        ),
        doc(
            &format!("An owning iterator over a [`{tree}`]'s keys, ascending."),
            "into_keys",
        ),
        doc(
            &format!("An owning iterator over a [`{tree}`]'s values, in ascending key order."),
            "into_values",
        ),
        doc(
            &format!("A view into one key of a [`{tree}`], present or not."),
            "entry",
        ),
        format!("A view into a present key of a [`{tree}`]: part of [`{entry}`]."),
        format!("A view into an absent key of a [`{tree}`]: part of [`{entry}`]."),
    ];
    let [
        d_iter_mut,
        d_range_mut,
        d_values_mut,
        d_into_iter,
        d_into_keys,
        d_into_values,
        d_entry,
        d_occupied,
        d_vacant,
    ] = docs;
    Some(quote! {
        #(#forwarded)*
        #[doc = #d_iter_mut]
        #vis type #iter_mut<'a> = ::radix_core::IterMut<'a, #config>;

        #(#forwarded)*
        #[doc = #d_range_mut]
        #vis type #range_mut<'a> = ::radix_core::RangeMut<'a, #config>;

        #(#forwarded)*
        #[doc = #d_values_mut]
        #vis type #values_mut<'a> = ::radix_core::ValuesMut<'a, #config>;

        #(#forwarded)*
        #[doc = #d_into_iter]
        #vis type #into_iter = ::radix_core::IntoIter<#config>;

        #(#forwarded)*
        #[doc = #d_into_keys]
        #vis type #into_keys = ::radix_core::IntoKeys<#config>;

        #(#forwarded)*
        #[doc = #d_into_values]
        #vis type #into_values = ::radix_core::IntoValues<#config>;

        #(#forwarded)*
        #[doc = #d_entry]
        #vis type #entry<'a> = ::radix_core::Entry<'a, #config>;

        #(#forwarded)*
        #[doc = #d_occupied]
        #vis type #occupied<'a> = ::radix_core::OccupiedEntry<'a, #config>;

        #(#forwarded)*
        #[doc = #d_vacant]
        #vis type #vacant<'a> = ::radix_core::VacantEntry<'a, #config>;
    })
}
