//! Memory back ends, and what a tree stores to refer to memory.
//!
//! The tree asks its back end for two things: *nodes*, fixed-size objects
//! from a numbered pool (one pool per distinct node size), and *leaves*,
//! single values of any layout. It also asks how many bytes the back end
//! holds, which is what [`memory_usage`](crate::RawTree::memory_usage)
//! reports and what a caller compares with its memory budget.
//!
//! ## What a stored word is, and who resolves it
//!
//! A child slot, a leaf-value slot and a tree's root field each hold one
//! word naming a node or a leaf. The back end chooses that word's type,
//! [`Memory::Ref`], because an address means nothing outside the process
//! that made it:
//!
//! | back end | stored word | resolved by |
//! |---|---|---|
//! | [`LocalMemory`] | [`LocalRef`]: the tagged address, with its provenance | nothing: it *is* the address |
//! | [`SharedMemory`](crate::shm::SharedMemory) | [`Offset`](crate::shm::Offset): the tagged offset from the area's base | one add to the base address held by the tree's guard |
//!
//! The engine converts at the edges only: [`Memory::resolve`] when it
//! follows a word it read from a slot, [`Memory::to_ref`] when it writes a
//! new node or leaf into one. Both keep the low tag bits as they are (the
//! base is page-aligned, so an offset is as aligned as its node), so the
//! node kind travels in the stored word whichever form it takes. For local memory both conversions
//! are the identity and compile to nothing: a local tree is exactly what it
//! was before shared memory existed.
//!
//! The shared form is an offset because every process maps the area at its
//! own address. Each process reserves one contiguous range of address space
//! for the whole area and maps every segment at the same offset within it,
//! so resolving is a single add, where PostgreSQL's `dsa_get_address` looks
//! the segment up in a table on every node visit. The add starts from the
//! reservation's pointer, so the result keeps that mapping's provenance.
//!
//! ## Failure
//!
//! [`LocalMemory`] follows the standard collections: running out of memory
//! aborts, and its [`Memory::Error`] is uninhabited. A shared area has a
//! size limit, so its allocations can fail. The engine keeps the promise
//! "a failed insert changes nothing" by *reserving* before it changes
//! anything: it works out which nodes an operation needs, asks
//! [`Memory::reserve_nodes`] for them (the only node call that may fail),
//! and only then modifies the tree, allocating from what was reserved.

mod local;
#[cfg(feature = "std")]
pub(crate) mod magazine;
mod options;
pub(crate) mod slab;

use core::alloc::Layout;
use core::convert::Infallible;
use core::fmt;
use core::ptr::NonNull;

pub use crate::ptr::{LocalRef, StoredRef};
pub use local::LocalMemory;
pub use options::MemoryOptions;

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
/// The trait is sealed: [`LocalMemory`] and
/// [`SharedMemory`](crate::shm::SharedMemory) are its implementations.
///
/// # Safety
///
/// Implementations must return memory that is valid for reads and writes of
/// the requested size and alignment until it is freed, and must not hand
/// out the same memory twice while it is live. [`to_ref`](Memory::to_ref)
/// and [`resolve`](Memory::resolve) must be inverse to each other on every
/// address the back end handed out, tag bits (the four lowest: bit 3 is
/// the skipped-bytes flag of path-compressed trees, whose nodes are
/// 16-aligned) included.
pub unsafe trait Memory: crate::sealed::Sealed {
    /// What a slot stores to refer to a node or a leaf of this back end.
    type Ref: StoredRef;
    /// Why an allocation failed; uninhabited when it cannot.
    type Error: fmt::Debug + fmt::Display;
    /// Whether [`reserve_nodes`](Memory::reserve_nodes) and
    /// [`alloc_leaf`](Memory::alloc_leaf) can fail. When false, the engine
    /// skips working out what an operation will allocate.
    const FALLIBLE: bool;

    /// The stored form of an address this back end handed out, possibly
    /// tagged in its four low bits.
    fn to_ref(&self, tagged: NonNull<u8>) -> Self::Ref;

    /// The address a stored word refers to, with the same low bits.
    fn resolve(&self, stored: Self::Ref) -> NonNull<u8>;

    /// Makes sure the next `count` calls of
    /// [`alloc_node(pool)`](Memory::alloc_node) succeed.
    ///
    /// # Errors
    ///
    /// The back end cannot provide that many nodes; nothing was allocated
    /// for the caller.
    fn reserve_nodes(&mut self, pool: usize, count: usize) -> Result<(), Self::Error>;

    /// A node from `pool`. Its contents are unspecified.
    ///
    /// # Panics
    ///
    /// A fallible back end panics if the node was not reserved and none is
    /// left: that is a bug in the caller.
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
    ///
    /// # Errors
    ///
    /// The back end is out of memory.
    fn alloc_leaf(&mut self, layout: Layout) -> Result<NonNull<u8>, Self::Error>;

    /// Frees a leaf.
    ///
    /// # Safety
    ///
    /// `leaf` came from `alloc_leaf(layout)` on this back end and is not
    /// used again.
    unsafe fn free_leaf(&mut self, leaf: NonNull<u8>, layout: Layout);

    /// Makes `leaf`, allocated on this back end with `layout`, a leaf of
    /// `to` instead, without copying it, if the two can share leaves:
    /// returns whether it did. `to` then frees it, and a stored reference
    /// to it is remade with `to`. The default keeps every leaf where it is.
    ///
    /// # Safety
    ///
    /// `leaf` came from `alloc_leaf(layout)` on this back end and is live.
    unsafe fn hand_over_leaf(&mut self, to: &mut Self, leaf: NonNull<u8>, layout: Layout) -> bool {
        let _ = (to, leaf, layout);
        false
    }

    /// Frees every node and every leaf at once, keeping nothing. The tree
    /// calls it once it holds no value: after `clear`, or when its last key
    /// was removed.
    ///
    /// # Safety
    ///
    /// No node or leaf allocated so far is used again.
    unsafe fn release_all(&mut self);

    /// Whether [`release_all`](Memory::release_all) also frees every leaf,
    /// so that clearing a tree whose values need no drop may skip visiting
    /// its slots.
    fn releases_leaves(&self) -> bool;

    /// Bytes obtained from the underlying allocator and still held: whole
    /// slab blocks or area segments, not the sum of live node sizes. Blocks
    /// allocated ahead and never handed out (see
    /// [`LocalMemory::bytes_reserved`]) are not counted.
    fn bytes_held(&self) -> usize;

    /// Live nodes in `pool`, for statistics and invariant checks.
    fn live_nodes(&self, pool: usize) -> usize;

    /// Whether this back end serves exactly these pools, with nodes at
    /// least as large and as aligned as each asks.
    fn serves(&self, pools: &[PoolSpec]) -> bool;
}

/// A back end whose allocations never fail (they abort on exhaustion, as
/// the standard collections do): trees over it offer `insert` and
/// `remove` without a `Result`.
pub trait InfallibleMemory: Memory<Error = Infallible> {}

impl<M: Memory<Error = Infallible>> InfallibleMemory for M {}
