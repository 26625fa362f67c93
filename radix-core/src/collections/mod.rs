//! The map and set API over the raw engine: what a `BTreeMap` user reaches
//! for beyond `get`, `insert` and `remove`, which are the engine's own
//! operations (`raw/`).
//!
//! | file | what it adds |
//! |---|---|
//! | `entry.rs` | [`Entry`], [`OccupiedEntry`] and [`VacantEntry`]: one descent for a look and a change |
//! | `bulk.rs` | `pop_first`, `pop_last`, `retain`, `split_off`, `append` |
//! | `set_ops.rs` | the in-place set operations (`union_with`, `intersect_with`, `difference_with`) and the comparisons (`is_subset`, ...) |
//! | `traits.rs` | `PartialEq`, `Ord`, `Hash`, `Index`, `Extend`, `FromIterator`, `From<[_; N]>` |
//! | `set/` | [`TreeSet`]: a set over any unit-valued configuration; its lazy iterators, operators and traits |
//! | `defaults.rs` | [`RadixMap`] and [`RadixSet`]: the ready-made generic types |
//! | `serde.rs` | `Serialize` and `Deserialize` (with the `serde` feature) |
//! | `tests.rs` | unit tests of the API's unsafe paths, sized for Miri |
//!
//! The map type itself is [`RawTree`](crate::RawTree): one type, whose
//! engine operations live in `raw/` and whose conveniences live here, as
//! `impl RawTree` blocks. A façade newtype (hashbrown's `HashMap` over
//! `RawTable`) would forward every method once more, which is what the
//! `radix_tree!` expansion stopped doing; the split between engine and
//! API is kept in the layout of the files instead, and the engine's
//! unsafe internals stay crate-private (`ptr`, `node`, `simd`, the sealed
//! traits). The iterators are in [`crate::iter`], beside the walk they
//! share.

mod bulk;
mod defaults;
pub(crate) mod entry;
#[cfg(feature = "serde")]
mod serde;
pub mod set;
mod set_ops;
#[cfg(test)]
mod tests;
mod traits;

pub use defaults::{DefaultConfig, RadixMap, RadixSet};
pub use entry::{Entry, OccupiedEntry, VacantEntry};
pub use set::TreeSet;
