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

use super::sync::{AtomicU32, Ordering, backoff};

/// Set while a writer holds the lock.
const LOCKED: u32 = 1;
/// Set, forever, once the node is no longer reachable from the root.
const OBSOLETE: u32 = 2;

/// A node's lock word: [`LOCKED`] and [`OBSOLETE`] bits.
pub(crate) struct NodeLock(AtomicU32);

impl NodeLock {
    /// An unlocked, live node's lock.
    pub(crate) fn new() -> Self {
        Self(AtomicU32::new(0))
    }

    /// Waits for the lock. `None` if the node is obsolete, found so before
    /// or after locking (the lock is then not held).
    pub(crate) fn lock(&self) -> Option<LockGuard<'_>> {
        let mut spins = 0;
        loop {
            // A read-modify-write reads the latest value, where a plain
            // load may go on reading an old one (the memory model promises
            // no progress to a load; loom explores exactly that).
            match self
                .0
                .compare_exchange(0, LOCKED, Ordering::Acquire, Ordering::Acquire)
            {
                Ok(_) => return Some(LockGuard { lock: self }),
                Err(word) if word & OBSOLETE != 0 => return None,
                Err(_) => backoff(&mut spins),
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
        self.lock.0.store(word & !LOCKED, Ordering::Release);
    }
}
