//! Memory back ends.
//!
//! The tree asks its back end for two things: *nodes*, fixed-size objects
//! from a numbered pool (one pool per distinct node size), and *leaves*,
//! single values of any layout. It also asks how many bytes the back end
//! holds, which is what [`memory_usage`](crate::RawTree::memory_usage)
//! reports and what a caller compares with its memory budget.
//!
//! [`LocalMemory`] keeps one slab per pool in process memory, and leaves
//! either in the global allocator or, for insert-only trees, in bump arenas.

mod local;
mod slab;

use core::alloc::Layout;
use core::ptr::NonNull;

pub use local::LocalMemory;

/// Size and alignment of the nodes in one pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolSpec {
    /// Bytes per node.
    pub size: usize,
    /// Alignment of every node (at least 8).
    pub align: usize,
}

/// Where a tree's nodes and leaves live.
///
/// # Safety
///
/// Implementations must return memory that is valid for reads and writes of
/// the requested size and alignment until it is freed, and must not hand
/// out the same memory twice while it is live.
pub unsafe trait Memory {
    /// A back end serving the given node pools.
    fn with_pools(pools: &[PoolSpec]) -> Self;

    /// A node from `pool`. Its contents are unspecified.
    fn alloc_node(&mut self, pool: usize) -> NonNull<u8>;

    /// Returns a node to its pool.
    ///
    /// # Safety
    ///
    /// `node` came from `alloc_node(pool)` on this back end and is not used
    /// again.
    unsafe fn free_node(&mut self, pool: usize, node: NonNull<u8>);

    /// A leaf of `layout`. Zero-sized layouts return a dangling, aligned
    /// pointer.
    fn alloc_leaf(&mut self, layout: Layout) -> NonNull<u8>;

    /// Frees a leaf.
    ///
    /// # Safety
    ///
    /// `leaf` came from `alloc_leaf(layout)` on this back end and is not
    /// used again.
    unsafe fn free_leaf(&mut self, leaf: NonNull<u8>, layout: Layout);

    /// Frees every node and every leaf at once, keeping nothing. The tree
    /// calls it once it holds no value: after `clear`, or when its last key
    /// was removed.
    ///
    /// # Safety
    ///
    /// No node or leaf allocated so far is used again.
    unsafe fn release_all(&mut self);

    /// Bytes obtained from the underlying allocator and still held: whole
    /// slab blocks, not the sum of live node sizes.
    fn bytes_held(&self) -> usize;

    /// Live nodes in `pool`, for statistics and invariant checks.
    fn live_nodes(&self, pool: usize) -> usize;

    /// Whether this back end serves exactly these pools, with nodes at
    /// least as large and as aligned as each asks.
    fn serves(&self, pools: &[PoolSpec]) -> bool;
}
