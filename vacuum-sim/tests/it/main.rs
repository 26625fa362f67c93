//! vacuum-sim's integration suite, one binary:
//!
//! - [`simulation`]: small vacuum runs checked against arithmetic and
//!   against each other;
//! - [`cli`]: the command line, its errors and its JSON output;
//! - [`plot`]: the `--plot` chart, parsed as XML;
//! - [`workers`] (Linux): index passes in worker processes through the
//!   real binary, and no shared memory left behind.

mod cli;
mod plot;
mod simulation;
#[cfg(target_os = "linux")]
mod workers;
