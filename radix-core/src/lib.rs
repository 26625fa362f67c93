//! # An adaptive radix tree, specialised at compile time
//!
//! This crate is an ordered map from unsigned integers to values, built as
//! an *adaptive radix tree* (ART) in the manner of PostgreSQL 17's
//! `radixtree.h`, which it follows closely and then extends. Read this
//! overview before the code: each module implements one idea named here.
//!
//! ## The structure
//!
//! A key is split into 8-bit *chunks*, most significant first. Each level of
//! the tree consumes one chunk, so a `u64` key needs at most eight levels
//! and a lookup is at most eight node visits, each choosing among at most
//! 256 children by one byte ([`key`]). The height adapts to the largest key
//! stored, not to the key type: a tree of keys below 256 is a single node.
//!
//! Sparse keys (random `u64` ids, hashes, `u128` UUIDs) would make that
//! tree a forest of single-child chains, one node per byte below the dense
//! top levels. A configuration may choose the ART paper's two remedies
//! ([`Compression`]): *lazy expansion* stores a subtree holding one key as
//! a *lazy leaf*, the key beside its value, and *path compression* merges
//! a single-child node into its child, which records the skipped bytes in
//! a *prefix word* in front of its header. A lookup checks the word only
//! where the child reference flags skipped bytes, and compares the whole
//! key at a lazy leaf (`src/node/mod.rs` explains the layout). Dense keys (block
//! numbers, row ids) need neither, and with `compression: none` (the
//! default, except for `u128` keys) the engine is exactly the uncompressed
//! one. One million random `u64` keys take 38 MB compressed against 218 MB
//! uncompressed.
//!
//! A node with 256 child slots for three children would waste most of its
//! memory, so nodes come in four *kinds* that trade search cost for space
//! (`src/node/`): node4 and node16 keep a sorted array of chunks beside their
//! children (node16 searches its array with one SIMD compare, `src/simd/`),
//! node48 maps chunks through a 256-byte index to 64 child slots, and
//! node256 indexes its children by chunk directly. The kind is not the whole
//! story: each kind may come in several *size classes* ([`SizeClasses`]),
//! so a node16 holding 12 children need not pay for 32 slots. A full node
//! grows into the next class; after deletes a sparse node shrinks back.
//!
//! Children are reached through *tagged pointers* (`src/ptr.rs`): nodes are
//! 8-byte aligned, so a child pointer carries its node's kind in two spare
//! bits and a descent dispatches on it without loading the child's header.
//!
//! A lookup touches as few cache lines and instructions as the kinds allow:
//! node4 and node16 pad their chunk arrays with the last chunk, so a search
//! compares the whole array and never reads the count; an inner node256
//! keeps absent children's slots null, so a descent reads one slot rather
//! than bitmap then slot (as does a last-level node256 whose value layout
//! never stores a null word, the TID store's); and a last-level node16
//! prefetches its slot lines while it searches its chunks.
//!
//! Values live in the slots of the last level ([`value`]): in the slot word
//! itself when they fit (*embedded*), behind a pointer otherwise (*leaf*),
//! chosen per value at run time for variable-length values (*varlen*, what
//! the TID store uses), or inline in dedicated leaf nodes (*inline*).
//!
//! Nodes come from a slab allocator per size class ([`mem`]); the memory a
//! tree reports is the bytes of slab blocks it holds, which is what a caller
//! with a memory budget must compare.
//!
//! ## Compile-time specialisation
//!
//! Every choice above (key width, value layout, memory back end, size
//! classes, whether delete exists) is a constant of a [`Config`]. The engine
//! ([`RawTree`]) is written once against that trait and monomorphised per
//! configuration, as PostgreSQL does with its preprocessor template, but
//! type-checked and debuggable. The [`radix_tree!`] macro declares a
//! configuration, validates it, and emits a named, documented map type:
//!
//! ```
//! radix_core::radix_tree! {
//!     /// Maps block numbers to visibility bits.
//!     pub struct BlockMap {
//!         key: u32,
//!         value: u64,
//!     }
//! }
//!
//! let mut m = BlockMap::new();
//! m.insert(7, 0b1011);
//! assert_eq!(m.get(7), Some(&0b1011));
//! assert_eq!(m.range(0..100).count(), 1);
//! ```
//!
//! Monomorphisation has a price in build time, paid once per configuration.
//! The hot helpers of a descent (a node search, a slot read, a pointer tag)
//! are forced inline only where assertions are off, that is in optimised
//! builds: `#[cfg_attr(not(debug_assertions), inline(always))]`. Forced
//! inlining is honoured even without optimisation, and in a debug build it
//! copied every helper into every caller of every configuration: the test
//! suite, which builds hundreds of configurations, took three times as long
//! to compile for code that ran a quarter faster.
//!
//! ## Choosing a configuration
//!
//! Each setting of [`radix_tree!`], which to pick, and the measurement
//! behind the advice (one machine: AMD EPYC, 2 cores, 32 MiB L3; 1M keys
//! unless said; `benches/RESULTS.md` in the repository has the runs).
//!
//! | setting | pick | for | measured reason |
//! |---|---|---|---|
//! | `key` | the narrowest unsigned type that holds every key | all trees | a tree is at most one level per key byte: a `u32` tree is never deeper than four nodes |
//! | `compression: none` | default below `u128` | dense keys: block numbers, row ids, counters | on dense `u64` keys `full` costs 1.07x the memory (9.72 to 10.44 MB) and 1.14x to 1.27x the lookup time (RT-1, RT-2) |
//! | `compression: full` | default for `u128` | random, hashed or sparse keys | 1M random `u64` keys: 38.3 MB and 29.7 ns a lookup, against 218.1 MB and 123.7 ns uncompressed (RT-3) |
//! | `compression: path` | | keys whose middle bytes are constant | keys masked by `0xFFFF0000003F`: the three zero bytes become prefixes, 24.7 to 17.3 MB and 68.1 to 18.9 ns (RT-4) |
//! | `compression: lazy` | | few keys spread over a wide range | a subtree of one key is the key beside its value: no chain of single-child nodes |
//! | `layout: auto` / `embedded` | default | values of at most 8 bytes | the value is the slot word: `u64 -> u64`, 8.4 MB, 4.6 ns a random lookup |
//! | `layout: inline` | | fixed-size values of 9 to about 64 bytes | `u64 -> [u64; 4]`: 33.1 MB and 27 ns a random lookup, against 40.4 MB and 34 ns as `leaf` |
//! | `layout: leaf` | `auto`'s choice above 8 bytes | larger values, values with heap parts | one allocation per value; nodes grow and shrink without moving it |
//! | `layout: varlen` | | values whose size is known only at run time ([`value::VarlenValue`]) | embedded in the slot when they fit, one exact-size leaf otherwise: the TID store's entries |
//! | `delete: false` | | insert-only trees | `remove` and the methods that remove become compile errors, and removal's code is never built |
//! | `size_classes` | default `[4, 16, 32, 64, 256]` | | PostgreSQL's classes; fewer classes mean fewer copies on growth and more slack per node |
//! | `memory: local` | default | one process | |
//! | `memory: shared` | | several processes, one tree (Linux) | lookups at most 1.25x the local tree's time, memory 1.08x the local tree's on RT-1 (an area grows by an eighth of itself) |
//! | `concurrency: none` | default | one writer at a time (`&mut self`, or an outer lock) | no atomics and no epochs on any path |
//! | `concurrency: rowex` | | threads that read while others write | readers never wait: 3.2x congee's reads; disjoint writers scale (2 writers 1.65x to 2x one); a single-thread lookup costs 1.8x the plain tree's per call, 1.14x to 1.36x under one [`concurrent::ReadPin`] |
//!
//! ## The map API
//!
//! [`RawTree`], which every generated type is an alias of, reads like `BTreeMap` with
//! keys passed by value: the entry API ([`Entry`]), iteration by
//! reference, mutably and by value in both directions (the [`iter`]
//! module), ordered seeking ([`RawTree::first_at_or_after`], and a
//! [`Cursor`] that moves both ways and re-seeks from where it is), bulk
//! removal (`pop_first`, `retain`, `split_off`, `append`), set algebra on
//! whole trees (`union_with`, `intersect_with`, `difference_with`), and the
//! standard traits, `Clone` being a structural copy node by node. Without
//! compression, `split_off`, `append` and `union_with` move whole subtrees
//! node by node rather than entry by entry, and `intersect_with` and
//! `difference_with` walk both trees together, passing over the subtrees
//! of one side only. Sets are
//! trees of `()` values behind [`TreeSet`], with `BTreeSet`'s API and lazy
//! `union`, `intersection`, `difference` and `symmetric_difference`.
//! [`RadixMap<K, V>`] and [`RadixSet<K>`] are both in the default
//! configuration, for users who need no `radix_tree!` declaration:
//!
//! ```
//! use radix_core::RadixMap;
//!
//! let mut counts: RadixMap<u64, u32> = RadixMap::new();
//! for word_id in [3, 1, 3, 3, 2] {
//!     *counts.entry(word_id).or_insert(0) += 1;
//! }
//! assert_eq!(counts.iter().collect::<Vec<_>>(), [(1, &1), (2, &1), (3, &3)]);
//! counts.retain(|_, n| *n > 1);
//! assert_eq!(counts.pop_first(), Some((3, 3)));
//! ```
//!
//! ## Concurrency, and trees shared between processes
//!
//! A tree is an ordinary Rust value: `&self` reads, `&mut self` writes, and
//! it is `Send`/`Sync` when its values are.
//!
//! A tree declared with `concurrency: rowex` is a
//! [`concurrent::ConcurrentTree`] instead, which threads share through
//! `&self`: readers take no lock and write nothing shared, writers lock only
//! the nodes they change, and unlinked nodes are freed by epochs once no
//! reader can hold them (the [`concurrent`] module explains the protocol).
//!
//! A tree declared with `memory: shared` lives in a shared-memory [`shm`]
//! area instead, which other *processes* attach to by handle. Its slots
//! store offsets into the area rather than addresses ([`mem`] explains who
//! resolves them), and it is read and written through the guards of a
//! process-shared reader-writer lock that survives the death of its
//! holders. This is what PostgreSQL's parallel vacuum does with its DSA.
//!
//! ## Features, and `no_std`
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `std` | yes | the concurrent trees ([`concurrent`], `concurrency: rowex`); slabs that give empty pages back to the system (Linux); drops that go on past a value whose `Drop` panics, as std's collections' do |
//! | `shm` | yes | trees in shared memory (`shm`, `memory: shared`; Linux); implies `std` |
//! | `serde` | no | `Serialize`/`Deserialize` for maps and sets, in `BTreeMap`'s and `BTreeSet`'s forms |
//!
//! With `default-features = false` the crate is `no_std` and needs only
//! `alloc`: every local tree (each key width, layout and compression), the
//! map and set API, the set operations and, with `serde`, their
//! serialisation. CI builds it so for `x86_64-unknown-none`. A declaration
//! that needs a missing feature (`concurrency: rowex` without `std`,
//! `memory: shared` without `shm`) is a compile error that names it.
// docs.rs (`--cfg docsrs`, on nightly) marks each item gated by a feature
// or a platform with what it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
// Without the `std` feature the crate needs only `alloc`: local trees, the
// map and set API and the set operations.
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

mod collections;
#[cfg(feature = "std")]
pub mod concurrent;
pub mod config;
pub mod iter;
pub mod key;
pub mod mem;
mod node;
mod ptr;
mod raw;
pub use collections::set;
#[cfg(all(feature = "shm", target_os = "linux"))]
pub mod shm;
mod simd;
#[cfg(test)]
mod tests;
pub mod value;

/// The seal on the engine's unsafe extension traits ([`mem::Memory`],
/// [`value::ValueLayout`] and the traits built on it, the stored reference
/// of a back end): their contracts are the engine's own invariants, so
/// only this crate implements them. [`value::VarlenValue`], a value
/// encoding, stays open.
mod sealed {
    /// Implemented only inside this crate.
    pub trait Sealed {}
}

pub use collections::{
    DefaultConfig, Entry, OccupiedEntry, RadixMap, RadixSet, TreeSet, VacantEntry,
};
pub use config::{Compression, Config};
pub use iter::{
    Cursor, IntoIter, IntoKeys, IntoValues, Iter, IterMut, Keys, Range, RangeMut, Spans, Values,
    ValuesMut,
};
pub use key::Key;
pub use node::{Kind, MAX_CLASSES, SizeClasses};
pub use radix_macros::{radix_set, radix_tree};
pub use raw::{
    ClassStats, InputOf, LastLevelNode, OldOf, OverlapSide, RawTree, Span, SpanError, Stats,
    ValueOf,
};

/// Items the `radix_tree!` expansion refers to. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use static_assertions;

    pub use crate::{__radix_needs_concurrent as needs_concurrent, __radix_needs_shm as needs_shm};
}

/// Expands to nothing where the concurrent engine is built (the `std`
/// feature), to a compile error naming the feature elsewhere: what a
/// `concurrency: rowex` declaration expands to first.
#[cfg(feature = "std")]
#[doc(hidden)]
#[macro_export]
macro_rules! __radix_needs_concurrent {
    () => {};
}
#[cfg(not(feature = "std"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __radix_needs_concurrent {
    () => {
        ::core::compile_error!(
            "`concurrency: rowex` needs radix-core's `std` feature (on by default): \
             concurrent trees use threads"
        );
    };
}

/// As [`__radix_needs_concurrent`], for `memory: shared` and the `shm`
/// feature (Linux).
#[cfg(all(feature = "shm", target_os = "linux"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __radix_needs_shm {
    () => {};
}
#[cfg(not(all(feature = "shm", target_os = "linux")))]
#[doc(hidden)]
#[macro_export]
macro_rules! __radix_needs_shm {
    () => {
        ::core::compile_error!(
            "`memory: shared` needs radix-core's `shm` feature (on by default) on Linux"
        );
    };
}

/// The crate's README, whose examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
