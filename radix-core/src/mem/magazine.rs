//! [`Magazine`]: free objects a thread or process holds back from an
//! allocator that others share, so that most allocations and frees take
//! no lock.
//!
//! Concurrent trees allocate from a lock shared by every writer: a local
//! space's slabs behind a mutex (`concurrent/space.rs`), or an area's
//! pools behind a process-shared one (`shm/space.rs`). Writers took that
//! lock once per node, and its line and the free lists moved between
//! their cores with it (`benches/RESULTS.md` has the profiles). So each
//! writer keeps a magazine per object size, as `tcmalloc`'s per-thread
//! caches and Bonwick's `umem` magazines do:
//!
//! - an allocation pops the last object freed, which is likely still in
//!   this core's cache; an empty magazine is refilled with one *batch*
//!   under one lock;
//! - a free pushes; a magazine that would pass two batches gives its
//!   oldest batch back under one lock, and keeps the newest.
//!
//! So the lock is taken at most once per batch of allocations or frees,
//! and a writer holds back at most two batches per size that no other
//! writer can use. The owner chooses the batch: the local space a fixed
//! count, the area a count that keeps a batch near 1 KiB.
//!
//! The magazine holds what the owner's allocator calls an object: a
//! pointer with its provenance for local spaces, an offset in the area
//! for shared ones.

use alloc::vec::{Drain, Vec};

/// Free objects of one size held back from a shared allocator, the last
/// freed on top (the module's docs give the policy).
#[derive(Debug)]
pub(crate) struct Magazine<T> {
    objects: Vec<T>,
}

impl<T> Magazine<T> {
    /// An empty magazine; it allocates its storage on its first refill.
    pub(crate) const fn new() -> Self {
        Self {
            objects: Vec::new(),
        }
    }

    /// The object freed last, if any.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<T> {
        self.objects.pop()
    }

    /// Keeps `objects`, a batch taken from the allocator; the last one
    /// comes out first.
    pub(crate) fn refill(&mut self, objects: impl IntoIterator<Item = T>) {
        self.objects.extend(objects);
    }

    /// Keeps freed `object`. If the magazine then holds more than two
    /// batches of `batch` objects, the oldest batch, for the caller to give
    /// back to the allocator.
    #[inline]
    pub(crate) fn push(&mut self, object: T, batch: usize) -> Option<Drain<'_, T>> {
        self.objects.push(object);
        (self.objects.len() > 2 * batch).then(|| self.objects.drain(..batch))
    }

    /// Takes every object out, to give them all back.
    pub(crate) fn take_all(&mut self) -> Vec<T> {
        core::mem::take(&mut self.objects)
    }

    /// Forgets every object, for an allocator whose memory went back whole.
    pub(crate) fn clear(&mut self) {
        self.objects.clear();
    }

    /// How many objects it holds.
    pub(crate) fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether it holds none.
    pub(crate) fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }
}

impl<T> Default for Magazine<T> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_freed_first_out_and_the_oldest_batch_goes_back() {
        let mut magazine = Magazine::new();
        assert_eq!(magazine.pop(), None);
        magazine.refill([1, 2, 3]);
        assert_eq!(magazine.pop(), Some(3));
        // Batches of 2: at most 4 kept.
        assert!(magazine.push(10, 2).is_none());
        assert!(magazine.push(11, 2).is_none());
        assert_eq!(magazine.len(), 4);
        let back: Vec<_> = magazine.push(12, 2).expect("over two batches").collect();
        assert_eq!(back, [1, 2], "the oldest batch");
        assert_eq!(magazine.take_all(), [10, 11, 12]);
        assert!(magazine.is_empty());
        magazine.refill([7]);
        magazine.clear();
        assert_eq!(magazine.pop(), None);
    }
}
