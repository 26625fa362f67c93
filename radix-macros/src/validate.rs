//! Validation: turns a parsed [`Invocation`] into a checked [`Spec`].
//!
//! Checked here, each with an error spanned on the offending tokens: that
//! every field appears at most once and `key` and `value` appear at all;
//! that the key type is one of the unsigned integers the engine supports
//! (a syntactic check: the emitted code also asserts `Key` is implemented);
//! that the layout, memory and compression names are known; that size
//! classes are
//! integer literals that fit `u16`; and that only doc comments, `#[allow]`
//! and `#[cfg]` attributes are given. All problems found are reported
//! together.
//!
//! Not checked here: the size-class *rules* (ascending, ending with 256,
//! capacities a node kind has). Those live once, in
//! `radix_core::SizeClasses::check`, and the emitted code evaluates them at
//! compile time; see [`crate::emit`].

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Ident, LitInt, Type, Visibility};

use crate::parse::{Field, FieldValue, Invocation};

/// The key types the engine implements `Key` for.
const KEY_TYPES: [&str; 5] = ["u8", "u16", "u32", "u64", "u128"];

/// The compression of a tree declared without `compression:`, by key type.
///
/// The one place the default is decided, from the benchmarks
/// (`benches/RESULTS.md`, "Sparse keys"): for `u64` keys, `none` is fastest
/// and smallest on the dense workloads (RT-1, RT-2, RT-5, RT-6) and costs
/// them nothing, while `full` wins only on the sparse ones (RT-3, RT-4),
/// whose users name it; `u128` keys are UUIDs and hashes, sparse by
/// nature, where `full` takes 0.09x the memory of `none` (RT-7). The
/// generated docs name the default.
pub fn default_compression(key: &Ident) -> Compression {
    if key == "u128" {
        Compression::Full
    } else {
        Compression::None
    }
}

/// A checked configuration, ready to emit.
pub struct Spec {
    /// The user's doc comments, in order.
    pub docs: Vec<Attribute>,
    /// `#[allow]` and `#[cfg]` attributes, forwarded to every emitted item.
    pub forwarded: Vec<Attribute>,
    /// The visibility of every emitted item.
    pub vis: Visibility,
    /// The declared type's name.
    pub name: Ident,
    /// The key type: one of [`KEY_TYPES`].
    pub key: Ident,
    /// The value type.
    pub value: Type,
    /// The value layout.
    pub layout: Layout,
    /// The size classes, or `None` for the engine's default.
    pub size_classes: Option<SizeClassSpec>,
    /// Whether `remove` is generated.
    pub delete: bool,
    /// Where nodes live.
    pub memory: Memory,
    /// Lazy expansion and path compression.
    pub compression: Compression,
    /// Whether `compression` was left out, so the docs can say it is the
    /// default.
    pub compression_defaulted: bool,
    /// Who may read and write at once.
    pub concurrency: Concurrency,
    /// Whether inner slots may hold range values.
    pub ranges: bool,
}

/// The concurrency a configuration may name.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Concurrency {
    /// A plain value: `&self` reads, `&mut self` writes.
    None,
    /// `radix_core::concurrent::ConcurrentTree`: lock-free reads and
    /// per-node write locks, all through `&self`.
    Rowex,
}

/// The compressions a configuration may name: `radix_core::Compression`'s
/// variants, mirrored because a proc-macro crate cannot depend on the
/// crate it expands into.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Neither lazy expansion nor path compression.
    None,
    /// Lazy expansion only.
    Lazy,
    /// Path compression only.
    Path,
    /// Lazy expansion and path compression.
    Full,
}

impl Compression {
    /// The choices' names as written in an invocation.
    const NAMES: &'static str = "none, lazy, path, full";

    fn from_ident(ident: &Ident) -> Option<Self> {
        Some(match ident.to_string().as_str() {
            "none" => Self::None,
            "lazy" => Self::Lazy,
            "path" => Self::Path,
            "full" => Self::Full,
            _ => return None,
        })
    }

    /// The name as written in an invocation (and by
    /// `radix_core::Compression::name`).
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Lazy => "lazy",
            Self::Path => "path",
            Self::Full => "full",
        }
    }

    /// The variant's name in `radix_core::Compression`.
    pub fn variant(self) -> &'static str {
        match self {
            Self::None => "None",
            Self::Lazy => "Lazy",
            Self::Path => "Path",
            Self::Full => "Full",
        }
    }
}

/// The memory back ends a configuration may name.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Memory {
    /// Process memory: an ordinary Rust value.
    Local,
    /// A shared area that several processes attach to.
    Shared,
}

/// The value layouts a configuration may name.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Embedded when the value fits a word, otherwise a leaf.
    Auto,
    /// Always embedded; a value that does not fit is a compile error.
    Embedded,
    /// One leaf allocation per value.
    Leaf,
    /// Values inline in last-level leaf nodes.
    Inline,
    /// Variable-length values, embedded or a leaf per value at run time.
    Varlen,
}

impl Layout {
    /// The layouts' names as written in an invocation.
    const NAMES: &'static str = "auto, embedded, leaf, inline, varlen";

    fn from_ident(ident: &Ident) -> Option<Self> {
        Some(match ident.to_string().as_str() {
            "auto" => Self::Auto,
            "embedded" => Self::Embedded,
            "leaf" => Self::Leaf,
            "inline" => Self::Inline,
            "varlen" => Self::Varlen,
            _ => return None,
        })
    }
}

/// A syntactically valid size-class list.
pub struct SizeClassSpec {
    /// Span of the bracketed list, for the compile-time check's error.
    pub span: Span,
    /// The capacities, each with its literal's span.
    pub caps: Vec<(u16, Span)>,
}

/// Collects errors so that one invocation reports every problem at once.
#[derive(Default)]
struct Errors(Option<syn::Error>);

impl Errors {
    fn push(&mut self, span: Span, message: impl core::fmt::Display) {
        let error = syn::Error::new(span, message);
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// Checks an invocation, returning its spec or every problem found.
pub fn validate(inv: Invocation) -> syn::Result<Spec> {
    let mut errors = Errors::default();
    let (docs, forwarded) = split_attributes(inv.attrs, &mut errors);

    let mut seen: Vec<Ident> = Vec::new();
    let mut key = None;
    let mut value = None;
    let mut layout = Layout::Auto;
    let mut size_classes = None;
    let mut delete = true;
    let mut memory = Memory::Local;
    let mut compression = None;
    let mut concurrency = (Concurrency::None, None);
    let mut ranges = None;
    for Field { name, value: field } in inv.fields {
        if seen.contains(&name) {
            errors.push(
                name.span(),
                format_args!("duplicate field `{name}`: each field may be given only once"),
            );
            continue;
        }
        seen.push(name.clone());
        match field {
            FieldValue::Key(ty) => key = check_key(&ty, &mut errors),
            FieldValue::Value(ty) => value = Some(ty),
            FieldValue::Layout(ident) => match Layout::from_ident(&ident) {
                Some(l) => layout = l,
                None => errors.push(
                    ident.span(),
                    format_args!(
                        "unknown layout `{ident}`; expected one of: {}",
                        Layout::NAMES
                    ),
                ),
            },
            FieldValue::Memory(ident) => {
                if let Some(m) = check_memory(&ident, &mut errors) {
                    memory = m;
                }
            }
            FieldValue::SizeClasses(list) => {
                let caps = list
                    .items
                    .iter()
                    .filter_map(|lit| check_capacity(lit, &mut errors).map(|c| (c, lit.span())))
                    .collect();
                size_classes = Some(SizeClassSpec {
                    span: list.span,
                    caps,
                });
            }
            FieldValue::Compression(ident) => match Compression::from_ident(&ident) {
                Some(c) => compression = Some(c),
                None => errors.push(
                    ident.span(),
                    format_args!(
                        "unknown compression `{ident}`; expected one of: {}",
                        Compression::NAMES
                    ),
                ),
            },
            FieldValue::Delete(lit) => delete = lit.value,
            FieldValue::Ranges(lit) => ranges = Some((lit.value, lit.span())),
            FieldValue::Concurrency(ident) => match ident.to_string().as_str() {
                "none" => concurrency = (Concurrency::None, Some(ident.span())),
                "rowex" => concurrency = (Concurrency::Rowex, Some(ident.span())),
                _ => errors.push(
                    ident.span(),
                    format_args!("unknown concurrency `{ident}`; expected `none` or `rowex`"),
                ),
            },
        }
    }
    if let (Concurrency::Rowex, Some(span)) = concurrency {
        check_rowex(
            span,
            layout,
            compression,
            size_classes.is_some(),
            &mut errors,
        );
    }
    if let Some((true, span)) = ranges {
        check_ranges(span, key.as_ref(), compression, concurrency.0, &mut errors);
    }
    for (field, what) in [
        ("key", "the key type, e.g. `key: u64`"),
        ("value", "the value type, e.g. `value: u64`"),
    ] {
        if !seen.iter().any(|s| s == field) {
            errors.push(
                inv.name.span(),
                format_args!(
                    "`{}` is missing the required field `{field}`: {what}",
                    inv.name
                ),
            );
        }
    }
    errors.finish()?;
    Ok(Spec {
        docs,
        forwarded,
        vis: inv.vis,
        name: inv.name,
        compression: compression.unwrap_or_else(|| {
            if ranges.is_some_and(|(on, _)| on) {
                return Compression::None;
            }
            let default = default_compression(key.as_ref().expect("a key type, checked above"));
            // Varlen values have no lazy leaves in a concurrent tree.
            match (concurrency.0, layout, default) {
                (Concurrency::Rowex, Layout::Varlen, Compression::Full) => Compression::Path,
                _ => default,
            }
        }),
        key: key.expect("a key type, checked above"),
        value: value.expect("a value type, checked above"),
        layout,
        size_classes,
        delete,
        memory,
        compression_defaulted: compression.is_none(),
        concurrency: concurrency.0,
        ranges: ranges.is_some_and(|(on, _)| on),
    })
}

/// The limits of `ranges: true`, each an error naming it.
fn check_ranges(
    span: Span,
    key: Option<&Ident>,
    compression: Option<Compression>,
    concurrency: Concurrency,
    errors: &mut Errors,
) {
    if key.is_some_and(|k| k == "u8") {
        errors.push(
            span,
            "ranges: true needs keys of at least two bytes: a `u8` tree has one level, with no \
             inner slot to hold a range",
        );
    }
    // Left out, compression is `none` for a tree with ranges, whatever
    // the key.
    if compression.is_some_and(|c| c != Compression::None) {
        errors.push(
            span,
            "ranges: true needs compression: none: a range value takes the tag a lazy leaf \
             would, and spans are aligned blocks that path compression would skip",
        );
    }
    if concurrency == Concurrency::Rowex {
        errors.push(
            span,
            "ranges: true is not offered with concurrency: rowex: a reader would have to \
             follow a range as it splits",
        );
    }
}

/// The limits of `concurrency: rowex`, each an error naming it.
fn check_rowex(
    span: Span,
    layout: Layout,
    compression: Option<Compression>,
    size_classes: bool,
    errors: &mut Errors,
) {
    if layout == Layout::Inline {
        errors.push(
            span,
            "concurrency: rowex supports the layouts auto, embedded, leaf and varlen: a reader \
             copies a value out while writers may replace it, so a value is one atomic word or \
             an immutable leaf",
        );
    }
    if layout == Layout::Varlen
        && matches!(compression, Some(Compression::Lazy | Compression::Full))
    {
        errors.push(
            span,
            "concurrency: rowex with layout: varlen has no lazy leaves; use compression none \
             or path",
        );
    }
    if size_classes {
        errors.push(
            span,
            "concurrency: rowex has fixed node sizes (4, 16, 32, 64 and 256 children); \
             remove size_classes",
        );
    }
}

/// Splits attributes into doc comments and forwarded lint/cfg attributes,
/// rejecting any other attribute.
fn split_attributes(
    attrs: Vec<Attribute>,
    errors: &mut Errors,
) -> (Vec<Attribute>, Vec<Attribute>) {
    let mut docs = Vec::new();
    let mut forwarded = Vec::new();
    for attr in attrs {
        let path = attr.path();
        if path.is_ident("doc") {
            docs.push(attr);
        } else if path.is_ident("allow") || path.is_ident("cfg") {
            forwarded.push(attr);
        } else {
            let name = path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect::<Vec<_>>()
                .join("::");
            errors.push(
                path.span(),
                format_args!(
                    "radix_tree! does not accept `#[{name}]`: only doc comments, `#[allow(..)]` \
                     and `#[cfg(..)]` are forwarded to the generated type"
                ),
            );
        }
    }
    (docs, forwarded)
}

/// The key type's name, if it is one the engine supports.
fn check_key(ty: &Type, errors: &mut Errors) -> Option<Ident> {
    let mut inner = ty;
    // Types passed through `macro_rules!` fragments arrive grouped.
    while let Type::Group(g) = inner {
        inner = &g.elem;
    }
    if let Type::Path(p) = inner
        && p.qself.is_none()
        && let Some(ident) = p.path.get_ident()
        && KEY_TYPES.iter().any(|k| ident == k)
    {
        return Some(ident.clone());
    }
    let written = crate::docs::type_string(ty);
    errors.push(
        ty.span(),
        format_args!(
            "unsupported key type `{written}`: the key must be an unsigned integer type, one of u8, u16, u32, u64 or u128"
        ),
    );
    None
}

/// The memory back end named by `memory: local | shared`.
fn check_memory(ident: &Ident, errors: &mut Errors) -> Option<Memory> {
    match ident.to_string().as_str() {
        "local" => Some(Memory::Local),
        "shared" => Some(Memory::Shared),
        _ => {
            errors.push(
                ident.span(),
                format_args!("unknown memory `{ident}`; expected `local` or `shared`"),
            );
            None
        }
    }
}

/// One size-class literal as a `u16`. Whether the list forms valid classes
/// is checked by `SizeClasses::new` in the emitted code.
fn check_capacity(lit: &LitInt, errors: &mut Errors) -> Option<u16> {
    if !matches!(lit.suffix(), "" | "u16") {
        errors.push(
            lit.span(),
            format_args!(
                "size class `{lit}` must be a plain integer literal (at most suffixed `u16`)"
            ),
        );
        return None;
    }
    match lit.base10_parse::<u16>() {
        Ok(cap) => Some(cap),
        Err(_) => {
            errors.push(
                lit.span(),
                format_args!("size class `{lit}` does not fit u16; capacities are at most 256"),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(fields: &str) -> syn::Result<Spec> {
        let invocation: Invocation =
            syn::parse_str(&format!("pub struct Map {{ {fields} }}")).expect("parses");
        validate(invocation)
    }

    fn messages(fields: &str) -> Vec<String> {
        match check(fields) {
            Ok(_) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn compression_choices() {
        for (name, want) in [
            ("none", Compression::None),
            ("lazy", Compression::Lazy),
            ("path", Compression::Path),
            ("full", Compression::Full),
        ] {
            let spec = check(&format!("key: u64, value: u64, compression: {name}")).unwrap();
            assert!(spec.compression == want, "{name}");
            assert!(!spec.compression_defaulted);
            assert_eq!(spec.compression.name(), name);
        }
    }

    #[test]
    fn compression_defaults_by_key_type() {
        let spec = check("key: u64, value: u64").unwrap();
        assert!(spec.compression == Compression::None);
        assert!(spec.compression_defaulted);
        let spec = check("key: u128, value: u64").unwrap();
        assert!(spec.compression == Compression::Full);
        assert!(spec.compression_defaulted);
    }

    #[test]
    fn unknown_compression_names_the_choices() {
        assert_eq!(
            messages("key: u64, value: u64, compression: zip"),
            ["unknown compression `zip`; expected one of: none, lazy, path, full"]
        );
        // Reported with the invocation's other problems, not instead.
        assert_eq!(
            messages("value: u64, compression: Full").len(),
            2,
            "a wrong case and a missing key"
        );
    }

    #[test]
    fn rowex_names_each_limit() {
        assert!(check("key: u64, value: u64, concurrency: rowex").is_ok());
        assert!(check("key: u128, value: u64, layout: leaf, concurrency: rowex").is_ok());
        assert!(check("key: u64, value: u64, memory: shared, concurrency: rowex").is_ok());
        assert!(
            check("key: u32, value: VarBytes, layout: varlen, memory: shared, concurrency: rowex")
                .is_ok()
        );
        let spec = check("key: u128, value: VarBytes, layout: varlen, concurrency: rowex").unwrap();
        assert!(
            spec.compression == Compression::Path,
            "no lazy leaves by default"
        );
        let all = messages(
            "key: u64, value: u64, layout: inline, memory: shared, size_classes: [4, 256], \
             concurrency: rowex",
        );
        assert_eq!(all.len(), 2, "{all:?}");
        assert!(all[0].contains("layouts auto, embedded, leaf and varlen"));
        assert!(all[1].contains("fixed node sizes"));
        assert_eq!(
            messages(
                "key: u64, value: VarBytes, layout: varlen, compression: full, concurrency: rowex"
            ),
            [
                "concurrency: rowex with layout: varlen has no lazy leaves; use compression none or path"
            ]
        );
        assert_eq!(
            messages("key: u64, value: u64, concurrency: olc"),
            ["unknown concurrency `olc`; expected `none` or `rowex`"]
        );
    }

    #[test]
    fn duplicate_compression() {
        assert_eq!(
            messages("key: u64, value: u64, compression: lazy, compression: full"),
            ["duplicate field `compression`: each field may be given only once"]
        );
    }
}
