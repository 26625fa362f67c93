//! A concurrent tree's header in the area: its anchor, its allocation
//! mutex, and the epoch table through which the threads of every attached
//! process announce what they read.
//!
//! It is the shared-memory form of the local reclaimer's table
//! (`concurrent/reclaim/`): the global epoch and one announcement per
//! reading or writing thread, each on a line of its own. What differs is
//! who may be on the other side:
//!
//! - **Announcements are claimed**, not indexed by thread number: a
//!   thread takes a free one by compare-exchange the first time it pins
//!   the tree through a handle, records its process's pid as the owner,
//!   and keeps it until the handle drops. There are [`ANNOUNCEMENTS`] of
//!   them; a thread that finds none free takes back those of dead
//!   processes, or waits for one.
//! - **A dead process cannot hold reclamation back.** A writer that finds
//!   an announcement lagging behind the epoch checks that its owner still
//!   runs; the announcement of a process that died inside a read is
//!   cleared, and the epoch moves on.
//! - **The barrier crosses processes.** A process whose kernel lets it
//!   register for `MEMBARRIER_CMD_GLOBAL_EXPEDITED` reads with a compiler
//!   fence only, and says so in the header ([`Header::light_readers`]);
//!   writers then order their unlinks before their scan with that
//!   command, which runs a full fence on every core running a registered
//!   process. Where no process reads that way, a writer's own fence is
//!   enough. A writer whose command fails frees nothing.
//!
//! Retired nodes wait in the retiring process's bags, in its own memory:
//! a process that dies with bags leaves those nodes allocated until the
//! tree is destroyed, which returns every span of the tree at once.

use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering, compiler_fence, fence};

use super::Area;
use super::lock::{PidMutex, process_alive};
use crate::concurrent::{Anchor, Slot, Slots, Table, lags};

/// Announcements in a tree's header: the most threads, across all
/// processes, that pin one concurrent shared tree at once.
pub const ANNOUNCEMENTS: usize = 112;
/// Handles (one per `create_in` or `attach`) open on one tree at once.
pub(crate) const HANDLES: usize = 64;

/// One thread's announcement, on a line pair of its own.
#[repr(C, align(128))]
pub(crate) struct Announcement {
    /// The pid of the process whose thread claimed it; 0 when free.
    owner: AtomicU32,
    /// As a local slot's: 0, or the epoch seen with `ACTIVE` set.
    announced: AtomicUsize,
}

/// What a concurrent tree keeps in the area besides its nodes. All zero
/// is a fresh header.
#[repr(C)]
pub(crate) struct Header {
    /// The root slot, root lock and poison mark.
    pub(crate) anchor: Anchor,
    /// The global epoch, on a line of its own.
    epoch: crate::concurrent::Padded<AtomicUsize>,
    /// Serialises the tree's allocations, across processes.
    pub(crate) alloc: PidMutex,
    /// Non-zero once a process that reads with a compiler fence only
    /// opened the tree: writers must then use the global barrier.
    light_readers: AtomicU32,
    /// The pids of the handles open on the tree; 0 for a free entry.
    pub(crate) handles: [AtomicU32; HANDLES],
    announcements: [Announcement; ANNOUNCEMENTS],
}

/// The header's bytes, which the tree takes as one block of the area.
pub(crate) const HEADER_BYTES: usize = size_of::<Header>();

/// A handle's view of its tree's epoch table.
pub struct SharedTable {
    header: NonNull<Header>,
    /// This process's pid, which owns the announcements it claims.
    pid: u32,
    /// Whether this process reads with a compiler fence only.
    light: bool,
    /// Keeps the area, and so the header, mapped.
    _area: Area,
}

// SAFETY: the header is all atomics in shared memory, kept mapped by the
// area this value holds.
unsafe impl Send for SharedTable {}
// SAFETY: as for `Send`.
unsafe impl Sync for SharedTable {}

impl SharedTable {
    /// The table of the header at `header`, for this process.
    ///
    /// # Safety
    ///
    /// `header` is a live tree's header inside `area`'s mapping.
    pub(crate) unsafe fn new(area: Area, header: NonNull<Header>) -> Self {
        let light = global_barrier();
        let table = Self {
            header,
            pid: area.inner.pid(),
            light,
            _area: area,
        };
        if light {
            // Before this process's first pin: a writer that reads the
            // mark as unset ordered its unlinks before this store, so this
            // process's pins cannot reach what it unlinked.
            table.header().light_readers.store(1, Ordering::SeqCst);
        }
        table
    }

    fn header(&self) -> &Header {
        // SAFETY: `new`'s contract, and the area is held.
        unsafe { self.header.as_ref() }
    }

    /// Claims a free announcement for the thread of `slot`.
    #[cold]
    fn claim(&self, slot: &Slot) -> &Announcement {
        let announcements = &self.header().announcements;
        loop {
            for a in announcements {
                if a.owner.load(Ordering::Relaxed) == 0
                    && a.owner
                        .compare_exchange(0, self.pid, Ordering::Acquire, Ordering::Relaxed)
                        .is_ok()
                {
                    slot.claimed
                        .store(ptr::from_ref(a).cast_mut().cast(), Ordering::Relaxed);
                    return a;
                }
            }
            let mut freed = false;
            for a in announcements {
                let owner = a.owner.load(Ordering::Relaxed);
                if owner != 0 && owner != self.pid && !process_alive(owner) {
                    freed |= clear_dead(a, owner);
                }
            }
            if !freed {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
    }
}

#[cfg(test)]
impl SharedTable {
    /// Announces a reader of process `pid` pinned at the current epoch,
    /// as a process that died inside a read leaves it.
    pub(crate) fn plant(&self, pid: u32) {
        let a = &self.header().announcements[ANNOUNCEMENTS - 1];
        a.owner.store(pid, Ordering::Relaxed);
        let epoch = self.header().epoch.0.load(Ordering::Relaxed);
        a.announced
            .store(epoch | crate::concurrent::ACTIVE, Ordering::Relaxed);
    }

    /// Whether an announcement of `pid` is still there.
    pub(crate) fn planted(&self, pid: u32) -> bool {
        self.header()
            .announcements
            .iter()
            .any(|a| a.owner.load(Ordering::Relaxed) == pid)
    }
}

/// Clears the announcement of `dead`, a process that no longer runs.
fn clear_dead(a: &Announcement, dead: u32) -> bool {
    a.announced.store(0, Ordering::Relaxed);
    a.owner
        .compare_exchange(dead, 0, Ordering::Release, Ordering::Relaxed)
        .is_ok()
}

// SAFETY: a claimed announcement has one owner thread until it is released
// or its process is dead; `lagging` reads them all; the barrier halves
// follow the module docs.
unsafe impl Table for SharedTable {
    #[inline(always)]
    fn epoch(&self) -> &AtomicUsize {
        &self.header().epoch.0
    }

    #[inline(always)]
    fn announcement<'a>(&'a self, slot: &'a Slot) -> &'a AtomicUsize {
        let claimed = slot.claimed.load(Ordering::Relaxed);
        let announcement = if claimed.is_null() {
            self.claim(slot)
        } else {
            // SAFETY: `claim` stored the address of an announcement in
            // this table's header, which the area held here keeps mapped;
            // it stays this thread's until `release` clears the slot.
            unsafe { &*claimed.cast::<Announcement>() }
        };
        &announcement.announced
    }

    fn lagging(&self, _local: &Slots, epoch: usize) -> bool {
        let mut lagging = false;
        for a in &self.header().announcements {
            if !lags(a.announced.load(Ordering::Acquire), epoch) {
                continue;
            }
            let owner = a.owner.load(Ordering::Relaxed);
            if owner != 0 && (owner == self.pid || process_alive(owner)) {
                lagging = true;
                break;
            }
            // Its process died inside a read: it reads no more.
            clear_dead(a, owner);
        }
        lagging
    }

    #[inline(always)]
    fn light(&self) {
        if self.light {
            compiler_fence(Ordering::SeqCst);
        } else {
            fence(Ordering::SeqCst);
        }
    }

    fn heavy(&self) -> bool {
        fence(Ordering::SeqCst);
        if self.header().light_readers.load(Ordering::SeqCst) == 0 {
            return true;
        }
        global_barrier_now()
    }

    fn release(&self, slot: &Slot) {
        let claimed = slot.claimed.swap(ptr::null_mut(), Ordering::Relaxed);
        if !claimed.is_null() {
            // SAFETY: as in `announcement`.
            let a = unsafe { &*claimed.cast::<Announcement>() };
            a.announced.store(0, Ordering::Release);
            a.owner.store(0, Ordering::Release);
        }
    }
}

/// Whether this process reads with a compiler fence only: it registered
/// for the global expedited barrier. Decided once per process.
fn global_barrier() -> bool {
    use std::sync::OnceLock;
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    *REGISTERED.get_or_init(register_global)
}

#[cfg(all(target_os = "linux", not(miri)))]
fn register_global() -> bool {
    use rustix::thread::{MembarrierCommand, MembarrierQuery, membarrier, membarrier_query};
    membarrier_query().contains(MembarrierQuery::GLOBAL_EXPEDITED)
        && membarrier(MembarrierCommand::RegisterGlobalExpedited).is_ok()
}

#[cfg(not(all(target_os = "linux", not(miri))))]
fn register_global() -> bool {
    false
}

/// A full fence on every core running a registered process.
fn global_barrier_now() -> bool {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        use rustix::thread::{MembarrierCommand, membarrier};
        membarrier(MembarrierCommand::GlobalExpedited).is_ok()
    }
    // No process can have registered.
    #[cfg(not(all(target_os = "linux", not(miri))))]
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_fits_its_block_and_keeps_announcements_apart() {
        const { assert!(HEADER_BYTES <= 4 * super::super::buddy::PAGE) };
        assert_eq!(size_of::<Announcement>(), 128);
        assert_eq!(align_of::<Header>(), 128);
    }
}
