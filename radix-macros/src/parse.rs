//! Parsing: the invocation's token structure, before any meaning is checked.
//!
//! ```text
//! radix_tree! {
//!     #[attributes]*
//!     VISIBILITY struct NAME {
//!         FIELD: VALUE,*
//!     }
//! }
//! ```
//!
//! Each field's value is parsed by the grammar its name selects: a type for
//! `key` and `value`, an identifier for `layout`, `memory` and
//! `compression`, a bracketed list of integer literals for `size_classes`,
//! a boolean literal for `delete` and `ranges`. An unknown field name is a parse error
//! at that name. Whether the values make sense (a key type the tree
//! supports, no duplicates, a known layout or compression) is
//! [`crate::validate`]'s business.

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Attribute, Ident, LitBool, LitInt, Token, Type, Visibility, braced, bracketed};

/// The field names an invocation may use, in the order the docs list them.
pub const FIELD_NAMES: &str =
    "key, value, layout, memory, size_classes, compression, delete, ranges, concurrency";

/// A parsed `radix_tree!` invocation.
pub struct Invocation {
    /// Outer attributes before `struct`, doc comments included.
    pub attrs: Vec<Attribute>,
    /// The visibility of the declared type.
    pub vis: Visibility,
    /// The declared type's name.
    pub name: Ident,
    /// The fields, in the order written.
    pub fields: Vec<Field>,
}

/// One `name: value` field.
pub struct Field {
    /// The field's name as written, for spans and messages.
    pub name: Ident,
    /// The parsed value.
    pub value: FieldValue,
}

/// A field's value, parsed by the grammar its name selects.
pub enum FieldValue {
    /// `key: TYPE`.
    Key(Type),
    /// `value: TYPE`.
    Value(Type),
    /// `layout: IDENT`.
    Layout(Ident),
    /// `memory: IDENT`.
    Memory(Ident),
    /// `size_classes: [LIT, ...]`.
    SizeClasses(SizeClassList),
    /// `compression: IDENT`.
    Compression(Ident),
    /// `delete: BOOL`.
    Delete(LitBool),
    /// `concurrency: IDENT`.
    Concurrency(Ident),
    /// `ranges: BOOL`.
    Ranges(LitBool),
}

/// A bracketed list of integer literals, as written.
pub struct SizeClassList {
    /// Span of the whole bracketed list.
    pub span: Span,
    /// The literals.
    pub items: Vec<LitInt>,
}

impl Parse for Invocation {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        input.parse::<Token![struct]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                "radix_tree! expects `struct NAME { key: ..., value: ... }`",
            )
        })?;
        let name: Ident = input.parse()?;
        let body;
        braced!(body in input);
        let fields = Punctuated::<Field, Token![,]>::parse_terminated(&body)?;
        if !input.is_empty() {
            return Err(input.error("radix_tree! declares one struct; unexpected tokens after it"));
        }
        Ok(Self {
            attrs,
            vis,
            name,
            fields: fields.into_iter().collect(),
        })
    }
}

impl Parse for Field {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let name: Ident = input.parse()?;
        input.parse::<Token![:]>()?;
        let value = match name.to_string().as_str() {
            "key" => FieldValue::Key(input.parse()?),
            "value" => FieldValue::Value(input.parse()?),
            "layout" => FieldValue::Layout(input.parse()?),
            "memory" => FieldValue::Memory(input.parse()?),
            "size_classes" => FieldValue::SizeClasses(input.parse()?),
            "compression" => FieldValue::Compression(input.parse()?),
            "concurrency" => FieldValue::Concurrency(input.parse()?),
            "delete" => FieldValue::Delete(
                input
                    .parse()
                    .map_err(|e| syn::Error::new(e.span(), "delete must be `true` or `false`"))?,
            ),
            "ranges" => FieldValue::Ranges(
                input
                    .parse()
                    .map_err(|e| syn::Error::new(e.span(), "ranges must be `true` or `false`"))?,
            ),
            other => {
                return Err(syn::Error::new(
                    name.span(),
                    format!("unknown field `{other}`; expected one of: {FIELD_NAMES}"),
                ));
            }
        };
        Ok(Self { name, value })
    }
}

impl Parse for SizeClassList {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        const SHAPE: &str =
            "size_classes must be a bracketed list of integer literals, e.g. [4, 16, 32, 64, 256]";
        if !input.peek(syn::token::Bracket) {
            return Err(input.error(SHAPE));
        }
        let list;
        let bracket = bracketed!(list in input);
        let items = Punctuated::<LitInt, Token![,]>::parse_terminated(&list)
            .map_err(|e| syn::Error::new(e.span(), SHAPE))?;
        Ok(Self {
            span: bracket.span.join(),
            items: items.into_iter().collect(),
        })
    }
}
