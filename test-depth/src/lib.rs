//! How deep this workspace's tests go.
//!
//! Every test runs at one of three depths, and sizes its work (quickcheck
//! cases, model operations, key counts, loop lengths, the duration of the
//! cross-process runs) by it:
//!
//! - [`Depth::Fast`], the default: what the README's test command runs. Every
//!   test runs, each small enough that the whole suite, build included,
//!   takes a few minutes on two cores. Run it after every change.
//! - [`Depth::Full`], with `RADIX_TEST_DEPTH=full`: the sizes the suite had
//!   before the default was cut, or more. Run it before a release, and
//!   after changing the engine, the shared-memory code or the TID store
//!   encoding.
//! - [`Depth::Miri`], chosen by `cfg(miri)`: the smallest sizes that still
//!   reach every node kind and size class, since Miri interprets every
//!   step.
//!
//! `QUICKCHECK_TESTS`, quickcheck's own switch, still sets the number of
//! cases of a quickcheck property exactly, at any depth ([`cases`]).
//!
//! ```
//! use test_depth::{pick, Depth};
//!
//! // 100,000 keys at full depth, 10,000 by default, 300 under Miri.
//! let keys = pick(100_000, 10_000, 300);
//! match test_depth::depth() {
//!     Depth::Full => assert_eq!(keys, 100_000),
//!     Depth::Fast => assert_eq!(keys, 10_000),
//!     Depth::Miri => assert_eq!(keys, 300),
//! }
//! ```

use std::sync::OnceLock;

/// The environment variable that selects the depth: `fast` (the default)
/// or `full`.
pub const DEPTH_VAR: &str = "RADIX_TEST_DEPTH";

/// How much work each test does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Depth {
    /// The smallest sizes that still reach every case: under Miri.
    Miri,
    /// The default: every test, sized to finish the suite in minutes.
    Fast,
    /// `RADIX_TEST_DEPTH=full`: every test at its full size.
    Full,
}

/// The depth of this run: [`Depth::Miri`] under Miri, otherwise what
/// `RADIX_TEST_DEPTH` says, [`Depth::Fast`] when it is unset.
///
/// # Panics
///
/// If `RADIX_TEST_DEPTH` holds anything but `fast` or `full`: a misspelt
/// switch must not quietly run the shallow suite.
pub fn depth() -> Depth {
    static DEPTH: OnceLock<Depth> = OnceLock::new();
    *DEPTH.get_or_init(|| {
        if cfg!(miri) {
            return Depth::Miri;
        }
        match std::env::var(DEPTH_VAR) {
            Err(std::env::VarError::NotPresent) => Depth::Fast,
            Ok(value) => match value.trim().to_ascii_lowercase().as_str() {
                "" | "fast" => Depth::Fast,
                "full" => Depth::Full,
                _ => panic!("{DEPTH_VAR}={value:?}: expected `fast` or `full`"),
            },
            Err(e) => panic!("{DEPTH_VAR}: {e}"),
        }
    })
}

/// True at [`Depth::Full`].
pub fn is_full() -> bool {
    depth() == Depth::Full
}

/// One of three sizes by the [`depth`]: `full`, `fast` or `miri`.
pub fn pick<T>(full: T, fast: T, miri: T) -> T {
    match depth() {
        Depth::Full => full,
        Depth::Fast => fast,
        Depth::Miri => miri,
    }
}

/// The number of cases of a quickcheck property: `QUICKCHECK_TESTS` when it
/// is set, else [`pick`]`(full, fast, miri)`.
pub fn cases(full: u64, fast: u64, miri: u64) -> u64 {
    std::env::var("QUICKCHECK_TESTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| pick(full, fast, miri))
}
