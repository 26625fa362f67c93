//! The two halves of an asymmetric fence: a light one on the reader's
//! path, a heavy one on the writer's rare one.
//!
//! Epoch-based reclamation needs a store-load fence on both sides: a
//! reader announces its epoch, then loads pointers; a writer unlinks a
//! node, then reads the announcements. If both were full fences (`mfence`
//! or a locked instruction on x86), every lookup would pay one, and a
//! full fence also keeps the processor from overlapping one lookup's
//! cache misses with the next's. Linux's `membarrier` moves the cost to
//! the writer: `MEMBARRIER_CMD_PRIVATE_EXPEDITED` runs a full fence on
//! every core that is running a thread of this process, so the reader's
//! side needs only a compiler fence. Writers reach it once a batch of
//! retired objects, a few microseconds per thousand retirements.
//!
//! Where `membarrier` is missing (another OS, an old kernel, a seccomp
//! filter, or Miri, which sees only the Rust memory model), both sides
//! fall back to `fence(SeqCst)`: the textbook scheme, slower for readers
//! and equally correct. The choice is made once per process, before the
//! first tree exists.

use core::sync::atomic::{AtomicU8, Ordering, compiler_fence, fence};

/// How the two halves are made, once known.
static STRATEGY: AtomicU8 = AtomicU8::new(UNKNOWN);

const UNKNOWN: u8 = 0;
/// The writer calls `membarrier`; the reader fences the compiler only.
const MEMBARRIER: u8 = 1;
/// Both sides fence.
const FENCE: u8 = 2;

/// Chooses the strategy for the process, if not yet chosen, and returns
/// whether readers fence the compiler only: what [`light`] is to be given.
/// Called as a tree is built, so it happens before any thread pins that
/// tree; the choice never changes after, so a tree may keep the answer.
pub(super) fn detect() -> bool {
    let mut chosen = STRATEGY.load(Ordering::Acquire);
    if chosen == UNKNOWN {
        chosen = if membarrier_works() {
            MEMBARRIER
        } else {
            FENCE
        };
        // Two threads building their first trees at once both probe, and
        // both find the same answer: registering twice is harmless.
        STRATEGY.store(chosen, Ordering::Release);
    }
    chosen == MEMBARRIER
}

#[cfg(all(target_os = "linux", not(miri)))]
fn membarrier_works() -> bool {
    use rustix::thread::{MembarrierCommand, MembarrierQuery, membarrier, membarrier_query};
    membarrier_query().contains(MembarrierQuery::PRIVATE_EXPEDITED)
        && membarrier(MembarrierCommand::RegisterPrivateExpedited).is_ok()
}

#[cfg(not(all(target_os = "linux", not(miri))))]
fn membarrier_works() -> bool {
    false
}

/// The reader's half: after announcing an epoch, before loading pointers.
/// `compiler_only` is what [`detect`] returned: a tree keeps it beside its
/// epoch, where a pin tests a field it loads anyway rather than a static
/// behind the global offset table.
#[inline(always)]
pub(super) fn light(compiler_only: bool) {
    if compiler_only {
        compiler_fence(Ordering::SeqCst);
    } else {
        fence(Ordering::SeqCst);
    }
}

/// The writer's half: after unlinking, before reading announcements.
///
/// Returns `false` if the barrier could not be made; the caller must then
/// not rely on it, and frees nothing.
#[must_use]
pub(super) fn heavy() -> bool {
    #[cfg(all(target_os = "linux", not(miri)))]
    if STRATEGY.load(Ordering::Relaxed) == MEMBARRIER {
        use rustix::thread::{MembarrierCommand, membarrier};
        // Registered in `detect`, so the kernel has no reason to refuse;
        // if it does, readers that fenced only the compiler are not
        // ordered, and holding memory back is the safe answer.
        return membarrier(MembarrierCommand::PrivateExpedited).is_ok();
    }
    fence(Ordering::SeqCst);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_settles_on_one_strategy() {
        let compiler_only = detect();
        let chosen = STRATEGY.load(Ordering::Relaxed);
        assert!(chosen == MEMBARRIER || chosen == FENCE);
        assert_eq!(compiler_only, chosen == MEMBARRIER);
        #[cfg(miri)]
        assert_eq!(chosen, FENCE);
        assert_eq!(detect(), compiler_only);
        assert_eq!(STRATEGY.load(Ordering::Relaxed), chosen);
        light(compiler_only);
        assert!(heavy());
    }
}
