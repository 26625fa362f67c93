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
            let word = self.0.load(Ordering::Relaxed);
            if word & OBSOLETE != 0 {
                return None;
            }
            if word & LOCKED == 0
                && self
                    .0
                    .compare_exchange_weak(
                        word,
                        word | LOCKED,
                        Ordering::Acquire,
                        Ordering::Relaxed,
                    )
                    .is_ok()
            {
                return Some(LockGuard { lock: self });
            }
            backoff(&mut spins);
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
    /// every later `lock` fails.
    pub(crate) fn mark_obsolete(&self) {
        self.lock.0.fetch_or(OBSOLETE, Ordering::Relaxed);
    }
}

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        self.lock.0.fetch_and(!LOCKED, Ordering::Release);
    }
}
