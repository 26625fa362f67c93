//! The `radix_tree!` macro: declares a compile-time specialised radix tree
//! type. Use it through `radix_core::radix_tree!`, which re-exports it.
//!
//! The macro emits configuration only: a configuration type implementing
//! `radix_core::Config`, compile-time checks of that configuration, and
//! documented type aliases of the engine's generic types over it
//! (`radix_core::RawTree<NAMEConfig>` and its iterators). Every method and
//! trait is written once, in `radix-core`; `emit` explains the choice of
//! an alias over a newtype.
//!
//! The work is split by stage, one module each:
//!
//! - `parse`: the invocation's token structure;
//! - `validate`: meaning (required and duplicate fields, supported key
//!   types, known layouts and compressions), reported with spans on the
//!   offending tokens; `default_compression` there is the one place the
//!   compression of a tree that names none is decided;
//! - `emit`: the configuration, its checks, the type and its aliases,
//!   with `docs` for the generated documentation; `set` does the same for
//!   `radix_set!`.

use proc_macro::TokenStream;

mod docs;
mod emit;
mod parse;
mod set;
mod validate;

/// Declares a radix tree type: an ordered map from unsigned integer keys to
/// values, specialised at compile time for one configuration.
///
/// ```ignore
/// radix_core::radix_tree! {
///     /// Maps block numbers to visibility bits.
///     pub struct BlockMap {
///         key: u32,
///         value: u64,
///     }
/// }
///
/// let mut m = BlockMap::new();
/// m.insert(7, 0b1011);
/// assert_eq!(m.get(7), Some(&0b1011));
/// ```
///
/// (The example is tested in `radix_core`'s crate documentation and
/// examples.)
///
/// # Syntax
///
/// ```text
/// radix_tree! {
///     /// doc comments, #[allow(..)] and #[cfg(..)] attributes
///     VISIBILITY struct NAME {
///         key: u8 | u16 | u32 | u64 | u128,          // required
///         value: TYPE,                               // required
///         layout: auto | embedded | leaf | inline | varlen,  // default auto
///         memory: local | shared,                    // default local
///         size_classes: [4, 16, 32, 64, 256],        // default as shown
///         compression: none | lazy | path | full,    // default: see below
///         delete: true | false,                      // default true
///         ranges: true | false,                      // default false
///     }
/// }
/// ```
///
/// Fields may come in any order, each at most once. The layouts are those
/// of `radix_core::value`: `auto` embeds a value that fits a pointer-sized
/// word and otherwise allocates a leaf; `embedded` requires that it fits (a
/// compile error otherwise); `leaf` always allocates; `inline` stores values
/// in last-level leaf nodes; `varlen` stores a `radix_core::value::VarlenValue`
/// such as `VarBytes`, embedded or as a leaf depending on its run-time size.
/// `memory: shared` declares a tree in a shared-memory area that several
/// processes attach to (see `radix_core::shm`); its value must be plain
/// bytes (`radix_core::shm::ShmSafe`) unless the layout is `varlen`. Size
/// classes follow the rules of
/// `radix_core::SizeClasses::new`, checked at compile time.
///
/// `compression` chooses which of the ART paper's space savings the tree
/// applies (`radix_core::Compression`):
///
/// - `none`: one node per key byte, as PostgreSQL's tree. Pick it for
///   dense keys, such as block numbers or row ids, which leave no
///   single-child chains to save: it is exactly the uncompressed engine,
///   with no prefix word before each node and no lazy-leaf test per level.
/// - `lazy`: a subtree holding a single key is stored as a *lazy leaf*, the
///   key beside its value, instead of a chain of nodes down to it.
/// - `path`: an inner node with a single child is merged into that child,
///   which records the skipped key bytes in a prefix word.
/// - `full`: both. Pick it for sparse, random or hashed keys (`u64` ids,
///   `u128` UUIDs), where an uncompressed tree spends most of its memory on
///   single-child chains.
///
/// Left out, `compression` is `none`, except for `u128` keys, where it is
/// `full`: the benchmarks' dense `u64` workloads are fastest and smallest
/// uncompressed, and `u128` keys are mostly UUIDs and hashes. The generated
/// type's documentation names the choice ("compression: ... (the
/// default)").
///
/// `ranges: true` lets an inner slot hold a *range value*: one value for
/// every key of an aligned block of `256^level` keys (`radix_core::Span`),
/// stored with `insert_span` and seen with `get_span` and `spans`. A key
/// inserted under a range with the range's value is absorbed, another value
/// splits the range, and a last-level node that an insert fills with one
/// value merges into a range, so keys inserted in order end as the fewest
/// aligned ranges. It needs `compression: none` (the default then, for
/// every key type), no `concurrency`, keys of at least 16 bits, and a
/// value that implements `PartialEq` and can be cloned (or a `varlen`
/// value, which compares and copies as its bytes). With `memory: shared`
/// ranges form and split as in local memory; a split the area cannot make
/// room for is refused with nothing changed, and `insert_span`, which
/// stores a range directly, is offered on local trees only. A tree with
/// ranges has no `get_mut`, entries, mutable or owning iteration,
/// `pop_first`/`pop_last`, `retain`, `split_off`, `append` or in-place set
/// operations: a call fails to compile once built to code.
///
/// # What it declares
///
/// For `struct NAME`:
///
/// - `NAME`, an alias of `radix_core::RawTree<NAMEConfig>` documented with
///   the invocation's docs and its configuration. Every method and trait
///   is `RawTree`'s (`new`, `with_options`, `get`, `insert`, `remove`,
///   `entry`, `iter`, `range`, `retain`, `split_off`, `append`, the set
///   operations, `Clone`, `Debug`, `Extend`, `FromIterator`, `Index`,
///   serde with `radix_core`'s `serde` feature, ...), present as the
///   configuration allows:
///   - without `delete`, no `remove`, `pop_first`, `pop_last`, `retain`,
///     `split_off` or in-place `intersect_with`/`difference_with`;
///   - a `varlen` tree's values are unsized byte copies: its `insert` takes
///     `&V`, `insert` and `remove` return whether the key was present,
///     `Extend` and `FromIterator` take `(key, &V)`, and it has no
///     `get_mut`, entries, or mutable or owning iteration;
///   - `Clone`, `Debug`, `PartialEq`, `Eq`, `PartialOrd`, `Ord`, `Hash`,
///     `Send` and `Sync` when the value type has them.
/// - `NAMEIter<'a>`, `NAMERange<'a>`, `NAMEKeys<'a>`, `NAMEValues<'a>` and
///   `NAMECursor<'a>`; except for varlen, `NAMEIterMut<'a>`,
///   `NAMERangeMut<'a>`, `NAMEValuesMut<'a>`, `NAMEIntoIter`,
///   `NAMEIntoKeys`, `NAMEIntoValues`, and the entries `NAMEEntry<'a>`,
///   `NAMEOccupiedEntry<'a>` and `NAMEVacantEntry<'a>`: aliases of the
///   engine's types.
/// - `NAMEConfig`, the hidden configuration type.
///
/// With `memory: shared`, `NAME` is an alias of
/// `radix_core::shm::SharedTree<NAMEConfig>`: `create_in`, `attach`,
/// `handle`, `area`, `read`, `try_read`, `write`, `try_write` and
/// `destroy`. The map methods are on its guards, `NAMEReadGuard<'a>` and
/// `NAMEWriteGuard<'a>`: both read (`get`, `iter`, `range`, `len`, ...),
/// and the write guard adds `insert`, `insert_with_old` and `remove`,
/// which return `Result` since the area may be full, `get_mut`,
/// `iter_mut`, `range_mut`, `values_mut` and `clear`.
///
/// All share the struct's visibility.
#[proc_macro]
pub fn radix_tree(input: TokenStream) -> TokenStream {
    let invocation = syn::parse_macro_input!(input as parse::Invocation);
    match validate::validate(invocation) {
        Ok(spec) => emit::emit(&spec).into(),
        Err(error) => error.to_compile_error().into(),
    }
}

/// Declares a radix tree set type: an ordered set of unsigned integer keys,
/// specialised at compile time for one configuration.
///
/// ```ignore
/// radix_core::radix_set! {
///     /// Blocks with dead tuples.
///     pub struct DeadBlocks {
///         key: u32,
///     }
/// }
///
/// let mut s = DeadBlocks::new();
/// assert!(s.insert(7));
/// assert!(s.contains(7));
/// ```
///
/// It takes the fields of [`radix_tree!`] except `value`, `layout` and
/// `memory` (a set has no values and lives in local memory): `key`
/// (required), `size_classes`, `compression` and `delete`, with the same
/// meanings and defaults. `NAME` is an alias of `radix_core::TreeSet` over
/// the declared configuration (`NAMEConfig`), which has `BTreeSet`'s
/// methods with keys by value, the lazy set operations and their in-place
/// forms.
#[proc_macro]
pub fn radix_set(input: TokenStream) -> TokenStream {
    let invocation = syn::parse_macro_input!(input as parse::Invocation);
    match set::expand(invocation) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

/// The crate's README, whose examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
