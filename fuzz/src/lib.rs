//! Shared code of the fuzz targets in `fuzz_targets/`.
//!
//! Each tree target declares one or more trees with `radix_tree!`,
//! implements [`FuzzMap`] for them with [`impl_fuzz_map!`], and hands them
//! to [`check_trees`] with the fuzz [`Input`]: a list of [`Op`]s that the
//! [`harness`] applies to every tree and to a `BTreeMap` model, comparing
//! every result. The `tidstore` target uses [`check_tidstore`] instead, the
//! `tidstore_set_ops` target [`check_tidstore_set_ops`], and the
//! `tree_shared` target [`check_shared`], with configurations that
//! [`impl_shared_config!`] describes ([`shared_pairs!`] declares them), the `tree_rowex` target
//! [`check_rowex`] on concurrent trees, each a [`subject`] on the heap or
//! a [`shared_subject`] in a heap-backed shared area, the `tree_ranges`
//! target [`check_ranges`] on trees with range values, each a
//! [`RangeMap`] by [`impl_range_map!`], and the `tidbitmap` target
//! [`check_tidbitmap`].
//!
//! | module | what |
//! |---|---|
//! | [`keys`] | key widths and the [`KeySpec`] generator that favours node boundaries |
//! | [`values`] | value types and their model representation |
//! | [`counted`] | a value whose `Drop` checks it is dropped exactly once |
//! | [`ops`] | the operations of the tree targets |
//! | [`mod@walk`] | consuming iterators from both ends |
//! | [`map`] | the [`FuzzMap`] interface over generated tree types |
//! | [`harness`] | the tree harness and model |
//! | [`tids`] | the TID store operations and harness |
//! | [`tid_sets`] | the TID store's set operations: input and harness |
//! | [`shared`] | shared trees in an area: operations, [`SharedConfig`] and harness |
//! | [`mod@concurrent`] | concurrent (`rowex`) trees, on the heap or in shared memory: operations, threaded steps and harness |
//! | [`ranges`] | trees with range values (`ranges: true`): operations, the key-by-key model, [`RangeMap`] and harness |
//! | [`bitmap`] | the TID bitmap: operations, the page model and harness |
//!
//! The library has no `unsafe` and no fuzzing machinery of its own, so its
//! pieces can also be used from ordinary tests to replay an input.

#![forbid(unsafe_code)]

pub mod bitmap;
pub mod concurrent;
pub mod counted;
pub mod harness;
pub mod keys;
pub mod map;
pub mod ops;
pub mod ranges;
#[cfg(test)]
mod seeds;
pub mod shared;
pub mod tid_sets;
pub mod tids;
pub mod values;
pub mod walk;

pub use bitmap::{check_tidbitmap, BitmapInput};
pub use concurrent::{
    check_rowex, shared_subject, subject, RowexCompression, RowexConfig, RowexInput, RowexSubject,
    RowexSummary, SMALL_AREA,
};
pub use counted::Counted;
pub use harness::{check_trees, DynMap, BATCH};
pub use keys::{run_step, BoundSpec, KeyInt, KeySpec};
pub use map::{FuzzMap, Previous};
pub use ops::{Finish, Input, Op};
pub use ranges::{check_ranges, RangeMap, RangesInput, SecondTree};
pub use shared::{
    check_shared, AreaLimit, SharedCompression, SharedConfig, SharedFinish, SharedInput, SharedOp,
    Summary, TreeSet,
};
pub use tid_sets::{check_tidstore_set_ops, SetOpsInput};
pub use tids::{check_tidstore, StoreKind, TidInput};
pub use values::{FuzzValue, ModelValue, Pair};
pub use walk::{walk, walk_exact};
