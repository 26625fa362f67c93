//! radix-core's integration suite, one binary: each module was a test
//! binary of its own, and each binary linked the crate and its
//! dependencies again and ran its slowest test alone on one core. As one,
//! every test runs beside every other.
//!
//! - [`smoke`]: a first end-to-end check of the engine;
//! - [`postgres_suite`]: PostgreSQL's `test_radixtree`, one test per bug of
//!   theirs, the shrink thresholds and the ordered-access API;
//! - [`model`], [`model_map`], [`model_shared`], [`model_set`]: random
//!   operation sequences against `BTreeMap` (`BTreeSet`), on the engine, on
//!   the map API, on trees in shared-memory areas, and on sets;
//! - [`shared_ranges`]: range values in shared areas, and splits the
//!   area refuses;
//! - [`macro_api`], [`batch`]: what `radix_tree!` generates, and batched
//!   lookups;
//! - [`auto_traits`]: `Send` and `Sync` of every public type, against std's;
//! - [`lincheck`]: a linearizability checker for maps (WGL, per key), and
//!   its tests against a correct map and a planted bug;
//! - [`concurrent`]: the `concurrency: rowex` tree under threads: readers
//!   of an ascending writer, disjoint writers, every byte given back;
//! - [`alloc_accounting`], [`drop_map`]: every byte given back and every
//!   value dropped once, through [`counting`], the binary's allocator;
//! - [`serde`] (with the `serde` feature): the serialised forms.
//!
//! [`common`] holds the helpers they share. `RADIX_TEST_DEPTH=full` runs
//! each at full size (see the `test-depth` crate).

mod common;
mod counting;

mod alloc_accounting;
mod auto_traits;
mod batch;
mod concurrent;
mod drop_map;
mod lincheck;
mod macro_api;
mod model;
mod model_map;
mod model_set;
mod model_shared;
mod postgres_suite;
#[cfg(feature = "serde")]
mod serde;
mod shared_ranges;
mod smoke;
