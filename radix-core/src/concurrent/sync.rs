//! The atomics and the waiting the concurrent engine uses, in one place.
//!
//! Under `--cfg loom` they are loom's, so that loom can explore every
//! interleaving of the node protocols (`tests/loom.rs`); under
//! `--cfg shuttle`, shuttle's, for its randomised whole-tree schedules
//! (`tests/shuttle.rs`); otherwise they are `core`'s. The engine names
//! nothing from `core::sync` directly, so a model checker sees every load
//! and store a reader or writer makes.

#[cfg(all(loom, shuttle))]
compile_error!("--cfg loom and --cfg shuttle select different atomics; choose one");

#[cfg(not(any(loom, shuttle)))]
pub(crate) use core::sync::atomic::{AtomicPtr, AtomicU8, AtomicU32, AtomicU64};
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicPtr, AtomicU8, AtomicU32, AtomicU64};
#[cfg(shuttle)]
pub(crate) use shuttle::sync::atomic::{AtomicPtr, AtomicU8, AtomicU32, AtomicU64};

pub(crate) use core::sync::atomic::Ordering;

/// What a writer does while a lock it wants is held: spin briefly, since
/// a node lock is held for one node's change, then give the core away
/// (the lock holder may be descheduled on a machine with few cores).
/// Model checkers need a yield in every wait loop to make progress.
#[inline]
pub(crate) fn backoff(spins: &mut u32) {
    #[cfg(loom)]
    {
        let _ = spins;
        loom::thread::yield_now();
    }
    #[cfg(shuttle)]
    {
        let _ = spins;
        shuttle::thread::yield_now();
    }
    #[cfg(not(any(loom, shuttle)))]
    {
        if *spins < SPINS {
            *spins += 1;
            core::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// Spins before a waiting writer yields: a few hundred nanoseconds, longer
/// than most node changes take.
#[cfg(not(any(loom, shuttle)))]
const SPINS: u32 = 64;
