//! Free nodes each thread keeps for a local space, so that writers on
//! different cores do not meet at the space's mutex for every node.
//!
//! A [`LocalSpace`](super::space::LocalSpace) carves nodes from slabs
//! behind one mutex. One writer takes it uncontended, a few dozen
//! nanoseconds a node; two writers on disjoint keys took it in turns, and
//! its line and the slab's free lists moved between their cores on every
//! node built or freed: RT-C's (0, 2) writes were 1.28x to 1.48x its
//! (0, 1)'s, with the mutex and the slabs' free lists a seventh of the
//! profile (`benches/RESULTS.md`).
//!
//! Each thread now keeps, per node layout, a magazine of free nodes of
//! the space (`mem/magazine.rs`, the policy shared trees follow per
//! process) in a [`NodeCache`] only it touches (one per thread number, as
//! the reclaimer's slots are). A node comes from the cache, and goes back
//! to it when freed, whether the thread built it or retired it for
//! another; the mutex is taken once per [`BATCH`] nodes, to refill an
//! empty magazine from the slab or to give the oldest batch of a full one
//! back. Here the magazines hold pointers, with their provenance, by
//! layout.
//!
//! What the caches hold counts as the space's (its slabs carved it), so
//! [`memory_usage`](super::ConcurrentTree::memory_usage) is unchanged,
//! and an emptied tree keeps at most two batches of nodes of each layout
//! per thread that wrote to it. Dropping the space drops the caches with it:
//! the slabs free their blocks whole, cached nodes among them.
//!
//! A thread number passes from an exiting thread to the next through the
//! number table's mutex (`reclaim/slots.rs`), so the next owner of a cache
//! sees what the last one left there: nodes of the same space, as good
//! as any.

// Under the model checkers, whose threads share one OS thread and so one
// thread number, the space keeps no caches: only the types are built.
#![cfg_attr(any(loom, shuttle), allow(dead_code))]

use core::alloc::Layout;
use core::cell::UnsafeCell;
use core::ptr::NonNull;

use crate::mem::magazine::Magazine;

/// Nodes moved between a cache and the slab at once; a thread keeps at
/// most two batches per layout.
pub(crate) const BATCH: usize = 16;

/// Layouts a cache keeps nodes of: a tree has at most six (four node
/// kinds' size classes and the cell), the number of slabs of a space.
const LISTS: usize = 6;

/// One thread's free nodes of one space, by layout.
#[derive(Default)]
pub(crate) struct NodeCache {
    lists: UnsafeCell<[FreeList; LISTS]>,
}

// SAFETY: the lists hold addresses of nodes in the space's slabs, which
// are `Send` with the space; only the thread owning the cache's number
// touches them (`NodeCache::list`'s contract), and a number passes between
// threads through a mutex, which orders the accesses.
unsafe impl Send for NodeCache {}
// SAFETY: as for `Send`.
unsafe impl Sync for NodeCache {}

/// The free nodes of one layout.
#[derive(Default)]
struct FreeList {
    layout: Option<Layout>,
    nodes: Magazine<NonNull<u8>>,
}

impl NodeCache {
    /// The free nodes of `layout`, claiming an unused list for it on first
    /// use; `None` if every list serves another layout (the caller then
    /// goes to the slab).
    ///
    /// # Safety
    ///
    /// The caller is the thread that owns this cache (it found it through
    /// `PerThread::mine`) and holds no other reference from this call.
    #[allow(clippy::mut_from_ref)]
    #[inline]
    pub(crate) unsafe fn list(&self, layout: Layout) -> Option<&mut Magazine<NonNull<u8>>> {
        // SAFETY: only the owner reaches the lists, one reference at a
        // time (the caller's contract).
        let lists = unsafe { &mut *self.lists.get() };
        let at = lists
            .iter()
            .position(|list| list.layout == Some(layout))
            .or_else(|| lists.iter().position(|list| list.layout.is_none()))?;
        let list = &mut lists[at];
        list.layout = Some(layout);
        Some(&mut list.nodes)
    }
}

impl core::fmt::Debug for FreeList {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FreeList")
            .field("layout", &self.layout)
            .field("len", &self.nodes.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_per_layout_up_to_six() {
        let cache = NodeCache::default();
        let layouts: Vec<Layout> = (1..=7)
            .map(|i| Layout::from_size_align(64 * i, 8).unwrap())
            .collect();
        let mut words = [0u64; 2];
        let base = NonNull::new(words.as_mut_ptr()).unwrap();
        // SAFETY: `i` is at most 1, inside `words`.
        let node = |i: usize| unsafe { base.add(i) }.cast::<u8>();
        // SAFETY: this thread is the cache's only user.
        let list = unsafe { cache.list(layouts[0]) }.unwrap();
        list.refill([node(0), node(1)]);
        // SAFETY: as above; the list above is no longer used.
        let again = unsafe { cache.list(layouts[0]) }.unwrap();
        assert_eq!(
            again.pop(),
            Some(node(1)),
            "the same list, last in first out"
        );
        for layout in &layouts[1..6] {
            // SAFETY: as above.
            assert_eq!(unsafe { cache.list(*layout) }.map(|l| l.len()), Some(0));
        }
        // SAFETY: as above.
        assert!(unsafe { cache.list(layouts[6]) }.is_none(), "six lists");
    }
}
