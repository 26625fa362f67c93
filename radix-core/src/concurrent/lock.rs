//! The per-node write lock, and the *obsolete* mark.
//!
//! Readers never look at it: a reader takes a node as it finds it. A
//! writer locks the nodes whose words it will store, and a node it
//! replaces it marks obsolete (under its lock, before unlocking), so that a
//! writer that raced to the same node and locks it afterwards learns that
//! the node has left the tree and starts over from the root.
//!
//! # Lock order
//!
//! A writer locks top-down: a node's parent (or the tree's root lock for
//! the root) before the node, and it never waits for a lock while holding
//! one *below* it. Every wait is therefore for a lock deeper in the tree
//! than every lock the waiter holds, the waits-for graph follows tree
//! edges downwards, and a cycle, which would need an edge upwards, cannot
//! form. A writer that holds a node's lock and finds it needs the parent
//! too unlocks the node first and takes both again in order.
//!
//! # Holders that die
//!
//! In shared memory a writer is a process that can be killed while it
//! holds a lock. There the lock word records the holder's pid above the
//! two flag bits (Linux pids are below 2^22), and a waiter that has waited
//! long checks that the holder still runs. If it does not, the lock is
//! never released: [`NodeLock::lock`] reports the dead pid, and the tree
//! is *poisoned* (`ShmError::OwnerDied` for every later write). Readers go
//! on, since every state a writer leaves between two stores is one a
//! reader accepts; but the dead writer may have published a replacement
//! without marking the old node obsolete, and a writer that went on
//! through that node would change a node no longer in the tree. Local
//! trees record no holder (pid 0) and never check.

use super::sync::{AtomicU32, Ordering, backoff};

/// Set while a writer holds the lock.
const LOCKED: u32 = 1;
/// Set, forever, once the node is no longer reachable from the root.
const OBSOLETE: u32 = 2;
/// The holder's pid sits above the flags.
const HOLDER_SHIFT: u32 = 2;
/// Waits between two checks that a recorded holder is alive: each is a
/// system call, and a live holder releases a node lock in well under the
/// time this many yields take.
const WAITS_PER_CHECK: u32 = 4096;

/// A node's lock word: [`LOCKED`] and [`OBSOLETE`] bits, and the holder's
/// pid where the tree records one. All zero is an unlocked, live node.
pub(crate) struct NodeLock(AtomicU32);

/// What waiting for a lock came to.
pub(crate) enum Locked<'a> {
    /// The lock is held.
    Held(LockGuard<'a>),
    /// The node left the tree: start over from the root.
    Obsolete,
    /// The holder, this pid, died holding it.
    OwnerDied(u32),
}

impl NodeLock {
    /// An unlocked, live node's lock.
    pub(crate) fn new() -> Self {
        Self(AtomicU32::new(0))
    }

    /// Makes the lock look held by `pid`, for tests of dead holders.
    #[cfg(test)]
    pub(crate) fn plant_holder(&self, pid: u32) {
        self.0
            .store(LOCKED | pid << HOLDER_SHIFT, Ordering::Relaxed);
    }

    /// Waits for the lock, recording `holder` (0, or this process's pid
    /// below 2^30) as its holder. `alive` says whether a recorded pid
    /// still runs; it is asked only after a long wait.
    pub(crate) fn lock(&self, holder: u32, alive: impl Fn(u32) -> bool) -> Locked<'_> {
        let mut spins = 0;
        let mut waits = 0u32;
        loop {
            // A read-modify-write reads the latest value, where a plain
            // load may go on reading an old one (the memory model promises
            // no progress to a load; loom explores exactly that).
            match self.0.compare_exchange(
                0,
                LOCKED | holder << HOLDER_SHIFT,
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => return Locked::Held(LockGuard { lock: self }),
                Err(word) if word & OBSOLETE != 0 => return Locked::Obsolete,
                Err(word) => {
                    let pid = word >> HOLDER_SHIFT;
                    waits = waits.wrapping_add(1);
                    if pid != 0 && waits.is_multiple_of(WAITS_PER_CHECK) && !alive(pid) {
                        return Locked::OwnerDied(pid);
                    }
                    backoff(&mut spins);
                }
            }
        }
    }
}

/// A held node lock; unlocks when dropped, also when a user's closure
/// panics under it.
pub(crate) struct LockGuard<'a> {
    lock: &'a NodeLock,
}

impl LockGuard<'_> {
    /// Marks the node obsolete. The lock stays held until the guard drops;
    /// every later `lock` fails. Release, with the failed lock's acquire:
    /// a writer that finds the mark then sees the replacement published
    /// before it, so its restart cannot find the old node again.
    pub(crate) fn mark_obsolete(&self) {
        self.lock.0.fetch_or(OBSOLETE, Ordering::Release);
    }
}

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        // A plain store, not a read-modify-write: while the lock is held
        // only its holder stores to the word (a waiter's compare-exchange
        // fails without storing), so the word read here is current.
        let word = self.lock.0.load(Ordering::Relaxed);
        self.lock.0.store(word & OBSOLETE, Ordering::Release);
    }
}
