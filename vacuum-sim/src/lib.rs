//! # vacuum-sim: lazy vacuum, simulated, with two dead-tuple stores
//!
//! PostgreSQL's lazy vacuum scans a table's heap collecting the TIDs of dead
//! tuples until its store for them is over the memory limit; then it scans
//! every index, asking the store "is this TID dead?" once per index entry;
//! then it revisits the heap pages in block order to free the tuples; then
//! it empties the store and resumes the scan. Every refill costs another
//! full scan of every index, so bytes per dead TID decide how many passes a
//! vacuum needs and lookup speed decides how long each takes.
//!
//! This crate simulates that job on a synthetic table (WORKLOADS.md,
//! "Vacuum scenarios") with two stores behind one trait
//! ([`store::DeadTupleStore`]):
//!
//! - [`tidstore::TidStore`], insert-only, as PostgreSQL 17 uses it;
//! - [`tidstore::DeadItemsArray`], PostgreSQL 16's sorted array of 6-byte TIDs,
//!   allocated up front at `min(limit, 1 GiB)`, searched with a bounds check
//!   and a binary search.
//!
//! On Linux, `shared` adds a third: `tidstore::SharedTidStore`, the TID
//! store in shared memory, filled by this process and read by worker
//! processes that split each index pass between them (`--workers N`), as
//! PostgreSQL's parallel vacuum does.
//!
//! | module | concept |
//! |---|---|
//! | [`scenario`] | table shape, named scenarios, `--mem` sizes |
//! | [`heap`] | which tuples are dead |
//! | [`order`] | index orders: correlated, and a seeded random bijection |
//! | [`store`] | the two stores |
//! | [`vacuum`] | the simulation loop and per-phase timing |
//! | [`report`] | the human table and JSON lines |
//! | [`progress`] | progress bars or plain lines on standard error |
//! | [`trace`] | the store's memory over the heap scan, sampled |
//! | [`plot`] | the SVG chart of `--plot`: memory over the scan, time per phase |
//! | `shared` | the shared TID store and its worker processes (Linux) |
//!
//! ```
//! use vacuum_sim::{run, DeadPattern, IndexOrder, Progress, Scenario, StoreKind};
//!
//! let scenario = Scenario::custom(
//!     100,                                         // pages
//!     20,                                          // tuples per page
//!     DeadPattern::Every(2),                       // 10 dead per page
//!     vec![IndexOrder::Correlated, IndexOrder::Random],
//!     600,                                         // bytes: 100 TIDs in the array
//! );
//! let array = run(&scenario, StoreKind::Array, &Progress::hidden())?;
//! assert_eq!(array.dead_tids, 1_000);
//! assert_eq!(array.index_passes, 10); // ceil(1,000 × 6 / 600)
//! assert_eq!(array.found, 2_000); // every dead TID, once per index
//! array.check()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod error;
pub mod heap;
pub mod order;
pub mod plot;
pub mod progress;
pub mod report;
pub mod scenario;
#[cfg(target_os = "linux")]
pub mod shared;
pub mod store;
pub mod trace;
pub mod vacuum;

pub use error::VacuumError;
pub use heap::{DeadPattern, Heap};
pub use order::{IndexOrder, RandomOrder};
pub use progress::Progress;
pub use scenario::{Scenario, parse_size};
pub use store::{DeadTupleStore, StoreKind, array_with_limit};
pub use tidstore::DeadItemsArray;
pub use trace::{IndexPassMark, MemorySample, MemoryTrace};
pub use vacuum::{CheckError, VacuumStats, WorkerSummary, run};
