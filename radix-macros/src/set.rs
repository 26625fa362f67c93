//! `radix_set!`: a set type from the same declaration as `radix_tree!`,
//! without a value.
//!
//! The invocation is checked as a `radix_tree!` one whose value is `()`
//! (so keys, size classes, compression and delete mean the same), after
//! refusing the fields a set cannot take: `value` (a set has none),
//! `layout` (a unit value needs no slot space in the default layout) and
//! `memory` (sets live in local memory). It then emits the configuration
//! and its checks, and the set type: an alias of
//! `radix_core::TreeSet<NAMEConfig>`, which carries every set method.

use proc_macro2::{Span, TokenStream};
use quote::quote;

use crate::emit::{Names, assertions, config};
use crate::parse::{Field, FieldValue, Invocation};
use crate::validate::{self, Spec};

/// The whole expansion of `radix_set!`, or the errors of its invocation.
pub fn expand(mut invocation: Invocation) -> syn::Result<TokenStream> {
    let mut errors: Option<syn::Error> = None;
    for field in &invocation.fields {
        let why = match field.value {
            FieldValue::Value(_) => "a set has no values; `radix_set!` takes no `value` field",
            FieldValue::Layout(_) => "a set stores no values; `radix_set!` takes no `layout` field",
            FieldValue::Memory(_) => "`radix_set!` declares sets in local memory only",
            FieldValue::Ranges(_) => {
                "`radix_set!` declares plain sets; a set of key ranges is a `radix_tree!` with \
                 `value: ()` and `ranges: true`"
            }
            FieldValue::Concurrency(_) => {
                "`radix_set!` declares plain sets; a concurrent set is a `radix_tree!` with \
                 `value: ()` and `concurrency: rowex`"
            }
            _ => continue,
        };
        let error = syn::Error::new(field.name.span(), why);
        match &mut errors {
            Some(all) => all.combine(error),
            None => errors = Some(error),
        }
    }
    if let Some(errors) = errors {
        return Err(errors);
    }
    invocation.fields.push(Field {
        name: syn::Ident::new("value", Span::call_site()),
        value: FieldValue::Value(syn::parse_quote!(())),
    });
    let spec = validate::validate(invocation)?;
    Ok(emit(&spec))
}

fn emit(spec: &Spec) -> TokenStream {
    let names = Names::new(&spec.name);
    let config = config(spec, &names);
    let assertions = assertions(spec);
    let Spec {
        docs: user_docs,
        forwarded,
        vis,
        ..
    } = spec;
    let Names { tree, .. } = &names;
    let config_name = &names.config;
    let generated = crate::docs::set_docs(spec).into_iter().map(|line| {
        if line.is_empty() {
            line
        } else {
            format!(" {line}")
        }
    });
    quote! {
        #config
        #assertions

        #(#user_docs)*
        #(#[doc = #generated])*
        #(#forwarded)*
        #vis type #tree = ::radix_core::TreeSet<#config_name>;
    }
}
