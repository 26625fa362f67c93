//! # The WORKLOADS.md benchmark harness
//!
//! This crate measures the project's radix tree, TID store and TID bitmap
//! against their peers on the workloads of `WORKLOADS.md`, which reproduce
//! the benchmarks PostgreSQL's radix tree and TID store were designed
//! with, and PostgreSQL's bitmap index and heap scans.
//! Every workload is deterministic (same seed, same keys, on every
//! machine), so results can be set beside the C implementation's.
//!
//! One concept per module:
//!
//! - [`rng`]: the `splitmix64` PRNG, `hash64` and the shuffle;
//! - [`workloads`]: each workload's parameters, data and measured phases
//!   ([`workloads::rt`] for RT-1..RT-6, [`workloads::rt128`] for RT-7,
//!   [`workloads::rtc`] for RT-C, [`workloads::ts`] for TS-*,
//!   [`workloads::set`] for SET-1 and SET-2, [`workloads::tb`] for TB-1
//!   to TB-6);
//! - [`peers`]: the structures, behind the [`peers::RtMap`],
//!   [`peers::DeadTidSet`], [`peers::SetOps`], [`peers::ConcurrentMap`]
//!   and [`peers::TidBitmapPeer`] traits, one file per family (the
//!   hash-table TID bitmap written as PostgreSQL's `tidbitmap.c` is
//!   described, [`peers::tbm_hash`], among them);
//! - [`alloc`]: the counting global allocator that measures peers without
//!   their own memory accounting;
//! - [`runner`]: runs a case for each structure on the same data, times
//!   it and checks the answers;
//! - [`report`]: markdown tables and JSON lines;
//! - [`plot`]: the SVG charts of `bench-report --plot`, the peers' time
//!   and memory as ratios to the project's.
//!
//! The `bench-report` binary is the command-line front end; the criterion
//! benches (`cargo bench -p benches`) reuse the same workloads and peers.

pub mod alloc;
pub mod peers;
pub mod plot;
pub mod report;
pub mod rng;
pub mod runner;
pub mod structures;
pub mod workloads;

#[cfg(test)]
#[global_allocator]
static TEST_ALLOC: alloc::CountingAlloc = alloc::CountingAlloc;
