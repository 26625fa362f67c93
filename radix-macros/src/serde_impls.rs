//! The generated type's `Serialize` and `Deserialize` impls, when
//! `radix-core` has its `serde` feature.
//!
//! The expansion cannot test that feature itself: a
//! `#[cfg(feature = "serde")]` in it would be evaluated in the *user's*
//! crate, against the user's features. So it emits one call to
//! `::radix_core::__serde_impls!`, which `radix-core` defines twice: with
//! the feature, as the two impls forwarding to the `raw` field (each
//! bounded, through a higher-ranked binder, on the engine tree having the
//! trait, as [`crate::traits`] explains); without it, as nothing.
//!
//! Only local-memory trees get the call: a shared tree lives in an area
//! other processes attach to, and has no `raw` field to forward to.

use proc_macro2::TokenStream;
use quote::quote;

use crate::emit::Names;
use crate::validate::Spec;

/// The call of `radix_core::__serde_impls!` for a local-memory tree. The
/// forwarded `#[cfg]` and `#[allow]` attributes go inside the call, which
/// puts them on each impl, so a tree that is configured out takes its
/// impls with it.
pub fn serde_impls(spec: &Spec, names: &Names) -> TokenStream {
    let Spec { forwarded, .. } = spec;
    let Names { tree, config, .. } = names;
    quote! {
        ::radix_core::__serde_impls!(#(#forwarded)* #tree, #config);
    }
}
