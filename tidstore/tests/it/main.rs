//! The TID store's integration suite, one binary (linked once, every test
//! beside every other):
//!
//! - [`postgres`]: PostgreSQL's `test_tidstore`, ported;
//! - [`model`], [`set_ops`]: properties against `BTreeSet<(u32, u16)>`, of
//!   single stores and of set operations on whole stores;
//! - [`batch`]: `is_member_each` against `is_member`;
//! - [`block_ranges`]: runs of equal blocks stored as range values;
//! - [`shared_limits`]: a shared store in a small area, whose refused
//!   changes (block ranges split half-way included) change nothing;
//! - [`auto_traits`]: `Send` and `Sync` of every public type;
//! - [`bitmap_drops`]: a counting allocator (radix-core's, the binary's
//!   global allocator) proves that TID bitmaps give back every byte;
//! - [`serde`] (with the `serde` feature): the serialised forms.
//!
//! `shared_processes` is a binary of its own: it starts processes of
//! itself. `RADIX_TEST_DEPTH=full` runs each test at full size.

#[path = "../common/mod.rs"]
mod common;

// radix-core's counting allocator, as the global allocator here too.
#[path = "../../../radix-core/tests/it/counting.rs"]
#[expect(dead_code, reason = "this suite reads the byte count alone")]
mod counting;

mod auto_traits;
mod batch;
mod bitmap_drops;
mod block_ranges;
mod model;
mod postgres;
#[cfg(feature = "serde")]
mod serde;
mod set_ops;
mod shared_limits;
