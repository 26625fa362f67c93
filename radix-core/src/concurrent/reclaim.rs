//! Epoch-based reclamation: a node or value cell a writer unlinks is freed
//! only once every reader that could still hold it has left.
//!
//! The engine uses [`seize`], chosen by measurement against
//! `crossbeam-epoch` (`benches/benches/reclamation.rs`, and
//! `benches/RESULTS.md`, "Epoch-based reclamation"): entering costs both
//! about 3 ns alone, and seize is the cheaper by 0.4 to 1.6 ns beside a
//! reader and by 2.4 to 10 ns to retire. Entering writes only the calling
//! thread's own reservation, so a reader still stores nothing to a line
//! another thread reads.
//!
//! Everything the tree knows of reclamation goes through this module:
//! [`Reclaimer::pin`] makes a [`Pin`], which protects the pointers loaded
//! through it until it drops, and [`Pin::retire`] hands over what a writer
//! unlinked. The public API pins inside each call (an iterator, for each
//! refill of its buffer), so no caller sees a guard.
//!
//! Under the model checkers (`--cfg loom`, `--cfg shuttle`), whose
//! schedulers cannot see seize's own atomics, retired objects are instead
//! kept until the tree drops: the node protocols are what those runs
//! check, and deferring every free is the one reclamation that is sound
//! for any schedule.

use super::sync::{AtomicPtr, Ordering};

/// Frees a retired object, given the (tagged) pointer that was retired.
pub(crate) trait Reclaim {
    /// Frees `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` was retired through [`Pin::retire`] with this implementation,
    /// and no thread can reach it any more.
    unsafe fn reclaim(ptr: *mut u8);
}

/// Retired objects a writer gathers before it hands them over as a
/// batch. Each hand-over costs a process-wide memory barrier
/// (`membarrier`, an interrupt of every core running the process: what
/// lets readers enter with a plain store), so larger batches cost readers
/// less, at the price of a few hundred retired nodes held per writer.
#[cfg(not(any(loom, shuttle)))]
const BATCH: usize = 1024;

/// The tree's reclamation domain.
pub(crate) struct Reclaimer {
    #[cfg(not(any(loom, shuttle)))]
    collector: seize::Collector,
    #[cfg(any(loom, shuttle))]
    retired: std::sync::Mutex<Vec<(*mut u8, unsafe fn(*mut u8))>>,
}

/// A reader's or writer's protection: pointers loaded through it stay
/// valid until it drops.
pub(crate) struct Pin<'a> {
    #[cfg(not(any(loom, shuttle)))]
    guard: seize::LocalGuard<'a>,
    #[cfg(any(loom, shuttle))]
    reclaimer: &'a Reclaimer,
}

impl Reclaimer {
    /// A new domain.
    pub(crate) fn new() -> Self {
        Self {
            #[cfg(not(any(loom, shuttle)))]
            collector: seize::Collector::new().batch_size(BATCH),
            #[cfg(any(loom, shuttle))]
            retired: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Protects the pointers the caller loads until the pin drops.
    #[inline]
    pub(crate) fn pin(&self) -> Pin<'_> {
        Pin {
            #[cfg(not(any(loom, shuttle)))]
            guard: self.collector.enter(),
            #[cfg(any(loom, shuttle))]
            reclaimer: self,
        }
    }
}

#[cfg(any(loom, shuttle))]
impl Drop for Reclaimer {
    fn drop(&mut self) {
        let retired = self.retired.get_mut().unwrap_or_else(|e| e.into_inner());
        for (ptr, reclaim) in retired.drain(..) {
            // SAFETY: retired once, unreachable, and the tree (the last
            // thread that could read it) is being dropped.
            unsafe { reclaim(ptr) };
        }
    }
}

/// seize's calling convention for [`Reclaim::reclaim`].
#[cfg(not(any(loom, shuttle)))]
unsafe fn reclaim_with<R: Reclaim>(ptr: *mut u8, _: &seize::Collector) {
    // SAFETY: seize calls this once the object retired through
    // `Pin::retire` is unreachable by every thread; that is `reclaim`'s
    // contract.
    unsafe { R::reclaim(ptr) }
}

impl Pin<'_> {
    /// Loads a child pointer from `slot`, protected by this pin.
    #[inline(always)]
    pub(crate) fn load(&self, slot: &AtomicPtr<u8>) -> *mut u8 {
        #[cfg(not(any(loom, shuttle)))]
        {
            use seize::Guard as _;
            self.guard.protect(slot, Ordering::Acquire)
        }
        #[cfg(any(loom, shuttle))]
        {
            slot.load(Ordering::Acquire)
        }
    }

    /// Hands `ptr` over to be freed by `R` once no pinned thread can still
    /// hold it.
    ///
    /// # Safety
    ///
    /// `ptr` is unreachable from the tree for every thread that pins after
    /// this call, is retired once, and `R` frees what it is.
    pub(crate) unsafe fn retire<R: Reclaim>(&self, ptr: *mut u8) {
        #[cfg(not(any(loom, shuttle)))]
        {
            use seize::Guard as _;
            // SAFETY: the caller's contract is seize's: unreachable for
            // later readers, retired once, freed by a matching reclaimer.
            unsafe { self.guard.defer_retire(ptr, reclaim_with::<R>) };
        }
        #[cfg(any(loom, shuttle))]
        {
            self.reclaimer
                .retired
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((ptr, R::reclaim));
        }
    }
}
