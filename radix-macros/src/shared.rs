//! A shared tree's inherent methods and traits (`memory: shared`).
//!
//! The generated type wraps `radix_core::shm::SharedTree` and hands out its
//! guards, which carry the map methods (`get`, `iter`, `insert`, ...): a
//! shared tree is only read or written under its process-shared lock, so
//! the lock is the only way in. Every method delegates to the engine.

use proc_macro2::TokenStream;
use quote::quote;

use crate::emit::Names;
use crate::validate::Spec;

/// The inherent `impl` block of a shared tree.
pub fn inherent(spec: &Spec, names: &Names) -> TokenStream {
    let Spec { forwarded, .. } = spec;
    let Names {
        tree,
        config,
        read_guard,
        write_guard,
        ..
    } = names;
    let shm = quote!(::radix_core::shm);
    let result = quote!(::core::result::Result);
    quote! {
        #(#forwarded)*
        impl #tree {
            /// Creates an empty tree in `area`. Other processes open it with
            /// [`Self::attach`], given the area's handle and [`Self::handle`].
            ///
            /// # Errors
            ///
            /// The area has no free tree slot, was destroyed, or its lock is
            /// poisoned.
            pub fn create_in(area: &#shm::Area) -> #result<Self, #shm::ShmError> {
                ::core::result::Result::Ok(Self { inner: #shm::SharedTree::create_in(area)? })
            }

            /// Opens the tree `handle` names in `area`.
            ///
            /// # Errors
            ///
            /// No live tree has that handle, or it was declared with another
            /// configuration (the error names the part that differs).
            pub fn attach(
                area: &#shm::Area,
                handle: #shm::TreeHandle,
            ) -> #result<Self, #shm::ShmError> {
                ::core::result::Result::Ok(Self { inner: #shm::SharedTree::attach(area, handle)? })
            }

            /// The handle another process passes to [`Self::attach`].
            #[must_use]
            pub fn handle(&self) -> #shm::TreeHandle {
                self.inner.handle()
            }

            /// The area the tree lives in.
            #[must_use]
            pub fn area(&self) -> &#shm::Area {
                self.inner.area()
            }

            /// Takes the read lock, waiting while a writer holds it.
            ///
            /// # Panics
            ///
            /// When the tree is poisoned (a writer died holding its lock) or
            /// gone, with the message of [`Self::try_read`]'s error.
            pub fn read(&self) -> #read_guard<'_> {
                self.inner.read()
            }

            /// Takes the read lock at once, or says why not: `WouldBlock`
            /// while a writer holds it, `OwnerDied` once a writer died
            /// holding it.
            ///
            /// # Errors
            ///
            /// As described.
            pub fn try_read(&self) -> #result<#read_guard<'_>, #shm::ShmError> {
                self.inner.try_read()
            }

            /// Takes the write lock, waiting for readers and writers to leave.
            ///
            /// # Panics
            ///
            /// As [`Self::read`].
            pub fn write(&self) -> #write_guard<'_> {
                self.inner.write()
            }

            /// Takes the write lock at once, or says why not, as
            /// [`Self::try_read`].
            ///
            /// # Errors
            ///
            /// As described.
            pub fn try_write(&self) -> #result<#write_guard<'_>, #shm::ShmError> {
                self.inner.try_write()
            }

            /// Frees every node and leaf back to the area and removes the tree;
            /// for its creator, once no other process uses it.
            ///
            /// # Errors
            ///
            /// The tree is poisoned: its memory stays in the area until the
            /// area goes.
            pub fn destroy(self) -> #result<(), #shm::ShmError> {
                self.inner.destroy()
            }

            /// The underlying engine handle, for code written against the
            /// generic `radix_core::shm::SharedTree`.
            #[must_use]
            pub fn as_shared(&self) -> &#shm::SharedTree<#config> {
                &self.inner
            }
        }
    }
}

/// A shared tree's trait implementations: `Debug` (its handles; the
/// contents need the lock).
pub fn impls(spec: &Spec, names: &Names) -> TokenStream {
    let Spec { forwarded, .. } = spec;
    let tree = &names.tree;
    quote! {
        #(#forwarded)*
        impl ::core::fmt::Debug for #tree {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                ::core::fmt::Debug::fmt(&self.inner, f)
            }
        }
    }
}
