//! # The TID store: dead tuples of a huge table in a few megabytes
//!
//! Lazy vacuum collects the identifiers (TIDs) of dead tuples while it scans
//! a table's heap, then scans every index once and asks, for each index
//! entry, "is this TID dead?". Before PostgreSQL 17 the TIDs sat in a sorted
//! array of 6-byte entries, allocated whole up front and capped at 1 GB;
//! when it filled, vacuum had to stop and scan every index again.
//!
//! [`TidStore`] keeps the TIDs in a radix tree keyed by block number
//! ([`radix_core`], through `radix_tree!` with the `varlen` layout). Each
//! block's dead offsets form one entry: up to three offsets, or a contiguous
//! run of any length, live inline in the tree's slot with no allocation;
//! other sets are a bitmap of `max_offset / 64 + 1` words. The result is a
//! fraction of a byte per dead TID for typical vacuums, and a lookup that
//! is a short tree descent plus one bit test.
//!
//! The caller gives a memory budget and checks [`TidStore::is_full`]:
//! [`TidStore::memory_usage`] is the bytes the store really holds, and no
//! single allocation block exceeds a sixteenth of the budget.
//!
//! [`SharedTidStore`] is the same store in shared memory: the leader of a
//! parallel vacuum fills it, and worker processes attach by handle and
//! read it under a process-shared lock (Linux).
//! [`SharedConcurrentTidStore`] is the store for a parallel heap scan: the
//! workers of many processes write it at once, each locking only the tree
//! nodes it changes, and readers take no lock at all.
//!
//! [`DeadItemsArray`] is PostgreSQL 16's sorted array, kept for comparison
//! (it is what `vacuum-sim` and the benchmarks measure the store against).
// docs.rs (`--cfg docsrs`, on nightly) marks each item gated by a feature
// or a platform with what it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod array;
#[cfg(target_os = "linux")]
mod concurrent;
mod entry;
mod error;
mod ordered;
#[cfg(feature = "serde")]
mod serde;
mod set_ops;
#[cfg(target_os = "linux")]
mod shared;
mod store;
mod table;
mod tid;

pub use array::{ArrayError, DeadItemsArray, ItemPointer};
#[cfg(target_os = "linux")]
pub use concurrent::SharedConcurrentTidStore;
pub use error::TidStoreError;
pub use ordered::OrderedLookup;
#[cfg(target_os = "linux")]
pub use shared::{
    SharedIter, SharedTidStore, SharedTidStoreHandle, SharedTidStoreReader, SharedTidStoreWriter,
};
pub use store::{BlockOffsets, DeadBlock, Iter, TidStore};
pub use tid::{MAX_OFFSET, Tid};

/// The shared-memory types that [`SharedTidStore`]'s API takes and
/// returns, from [`radix_core::shm`], so that a user of the shared store
/// needs no dependency of its own on `radix-core`.
#[cfg(target_os = "linux")]
pub mod shm {
    pub use radix_core::shm::{Area, AreaHandle, AreaOptions, Backing, ShmError, remove_stale};
}

/// The crate's README, whose examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
