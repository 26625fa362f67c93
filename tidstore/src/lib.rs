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
//!
//! Features: `std` and `shm` (the shared stores, Linux) are on by default;
//! `serde` adds `Serialize`/`Deserialize` for [`TidStore`]. With
//! `default-features = false` the crate is `no_std` and needs only
//! `alloc`: [`TidStore`], its set operations and ordered lookups, and
//! [`DeadItemsArray`].
//!
//! ## A vacuum, step by step
//!
//! A storage engine's lazy vacuum uses the store in rounds. Scan the heap
//! page by page and record each page's dead tuples; when the store is
//! full, stop the scan for a round of the other two phases:
//!
//! 1. **Fill.** [`TidStore::set_block_offsets`] once per heap page that has
//!    dead tuples, with the page's dead offsets in ascending order. Blocks
//!    may come in any order; a block given twice takes the new offsets.
//! 2. **Check the limit** after each page: [`TidStore::is_full`] compares
//!    [`TidStore::memory_usage`], the bytes the store holds, with the
//!    budget given to [`TidStore::new`]. It is checked after a page, not
//!    before, as PostgreSQL does, so the store may pass the budget by one
//!    page's entry and one allocation block (at most a sixteenth of the
//!    budget).
//! 3. **Index pass.** Scan every index once and ask, of each entry, whether
//!    its TID is dead: [`TidStore::is_member`], or
//!    [`TidStore::is_member_each`] for a batch (a random-order index goes
//!    twice as fast in batches of a thousand), or
//!    [`TidStore::ordered_lookup`] for entries in TID order. Remove the dead
//!    entries from the index.
//! 4. **Heap pass.** [`TidStore::for_each_block_offsets`] gives each block
//!    once, in block order, with its offsets: mark those line pointers
//!    unused. It extracts a run of blocks' offsets once, where
//!    [`TidStore::iter`] hands out each block's entry to read as it likes
//!    and [`TidStore::runs`] the runs themselves.
//! 5. **Reset** with [`TidStore::clear`], which gives the memory back, and
//!    resume the heap scan where it stopped. After the last page, run the
//!    index and heap passes once more for whatever the store holds.
//!
//! ```
//! use tidstore::{Tid, TidStore};
//!
//! // A toy table: 1,000 pages, every third tuple of each page dead (from
//! // the first, second or third, by page), and one index with an entry
//! // per tuple.
//! let pages: Vec<Vec<u16>> = (0..1000).map(|p| (1 + p % 3..=60).step_by(3).collect()).collect();
//! let mut index: Vec<Tid> = (0..1000u32)
//!     .flat_map(|block| (1..=60).map(move |offset| Tid::new(block, offset)))
//!     .collect();
//! let mut heap_vacuumed = 0;
//!
//! // A small budget, so that the store fills and the vacuum takes rounds.
//! let mut dead = TidStore::new(16 << 10);
//! let mut rounds = 0;
//! let mut next_page = 0;
//! while next_page < pages.len() || !dead.is_empty() {
//!     // 1, 2: fill until full or the heap ends.
//!     while next_page < pages.len() && !dead.is_full() {
//!         dead.set_block_offsets(next_page as u32, &pages[next_page])?;
//!         next_page += 1;
//!     }
//!     // 3: the index pass, one batch of entries at a time.
//!     let mut keep = Vec::with_capacity(index.len());
//!     for batch in index.chunks(1024) {
//!         dead.is_member_each(batch, |tid, is_dead| {
//!             if !is_dead {
//!                 keep.push(tid);
//!             }
//!         });
//!     }
//!     index = keep;
//!     // 4: the heap pass, in block order.
//!     dead.for_each_block_offsets(|_block, offsets| heap_vacuumed += offsets.len());
//!     // 5: reset for the next round.
//!     dead.clear();
//!     rounds += 1;
//! }
//! assert_eq!(heap_vacuumed, 1000 * 20);
//! assert_eq!(index.len(), 1000 * 40);
//! assert!(rounds > 1);
//! # Ok::<(), tidstore::TidStoreError>(())
//! ```
//!
//! ## Parallel workers
//!
//! PostgreSQL's parallel vacuum lets worker processes run the index
//! passes. With [`SharedTidStore`] the leader fills the store in shared
//! memory as above, hands each worker the store's
//! [`handle`](SharedTidStore::handle), and each worker
//! [`attach`](SharedTidStore::attach)es and scans its own indexes through
//! a [read guard](SharedTidStore::read); the leader then runs the heap pass
//! and makes a new store for the next round.
//!
//! A parallel heap scan needs more: workers that fill the store at the
//! same time. [`SharedConcurrentTidStore`] takes
//! [`set_block_offsets`](SharedConcurrentTidStore::set_block_offsets) from
//! the threads of many processes at once (each worker scanning its own
//! range of pages), and answers lookups without a lock. `vacuum-sim
//! --workers N` runs both phases in worker processes this way; its README
//! section gives the speed-ups.
// docs.rs (`--cfg docsrs`, on nightly) marks each item gated by a feature
// or a platform with what it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
// Without the `std` feature the local store needs only `alloc`.
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

mod array;
mod bitmap;
#[cfg(all(feature = "shm", target_os = "linux"))]
mod concurrent;
mod entry;
mod error;
mod ordered;
#[cfg(feature = "serde")]
mod serde;
mod set_ops;
#[cfg(all(feature = "shm", target_os = "linux"))]
mod shared;
mod store;
mod table;
mod tid;

pub use array::{ArrayError, DeadItemsArray, ItemPointer};
pub use bitmap::{BitmapPage, PageOffsets, Pages, TidBitmap, TidBitmapError};
#[cfg(all(feature = "shm", target_os = "linux"))]
pub use bitmap::{SharedPages, SharedTidBitmap, SharedWalk};
#[cfg(all(feature = "shm", target_os = "linux"))]
pub use concurrent::SharedConcurrentTidStore;
pub use error::TidStoreError;
pub use ordered::OrderedLookup;
#[cfg(all(feature = "shm", target_os = "linux"))]
pub use shared::{
    SharedIter, SharedTidStore, SharedTidStoreHandle, SharedTidStoreReader, SharedTidStoreWriter,
};
pub use store::{BlockOffsets, DeadBlock, DeadRun, Iter, Runs, TidStore};
pub use tid::{MAX_OFFSET, Tid};

/// The shared-memory types that [`SharedTidStore`]'s API takes and
/// returns, from [`radix_core::shm`], so that a user of the shared store
/// needs no dependency of its own on `radix-core`.
#[cfg(all(feature = "shm", target_os = "linux"))]
pub mod shm {
    pub use radix_core::shm::{Area, AreaHandle, AreaOptions, Backing, ShmError, remove_stale};
}

/// The crate's README, whose examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
