//! [`MemoryOptions`]: how a local tree's back end is laid out, said once,
//! and applied by the tree to the node pools its configuration needs.
//!
//! Building a [`LocalMemory`] by hand takes the configuration's pools
//! ([`RawTree::pool_specs`](crate::RawTree::pool_specs)); passing a back
//! end built for another configuration's pools compiles and fails an
//! assert when the tree is made. With options, the tree builds its own back
//! end, so that mistake cannot be written.

use super::{LocalMemory, PoolSpec};

/// How a local tree's memory is laid out: the largest slab block, and
/// whether leaves come from bump arenas (an insert-only pass).
///
/// ```
/// use radix_core::RadixMap;
/// use radix_core::mem::MemoryOptions;
///
/// // A budget of 64 MiB, as PostgreSQL's TID store sizes its blocks: at
/// // most a sixteenth of it.
/// let options = MemoryOptions::new().block_limit((64 << 20) / 16).insert_only();
/// let mut m = RadixMap::<u32, String>::with_options(options);
/// m.insert(7, "seven".to_string());
/// assert_eq!(m.get(7).map(String::as_str), Some("seven"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryOptions {
    max_block: usize,
    insert_only: bool,
}

impl MemoryOptions {
    /// Slab blocks of any size, leaves from the global allocator: what
    /// `new()` gives a tree.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            max_block: usize::MAX / 2,
            insert_only: false,
        }
    }

    /// Slab blocks (and, insert-only, arena chunks) of at most
    /// `max_block` bytes, rounded up to a power of two and never smaller
    /// than one node, so that a caller with a memory budget is not pushed
    /// over it by one large block.
    #[must_use]
    pub const fn block_limit(self, max_block: usize) -> Self {
        Self { max_block, ..self }
    }

    /// Leaves come from bump arenas: no allocator header per leaf, and a
    /// removed or replaced leaf's space is reclaimed only when the tree is
    /// emptied. For a pass that only inserts, as vacuum's heap scan does.
    #[must_use]
    pub const fn insert_only(self) -> Self {
        Self {
            insert_only: true,
            ..self
        }
    }

    /// The largest slab block, in bytes.
    #[must_use]
    pub const fn max_block(&self) -> usize {
        self.max_block
    }

    /// Whether leaves come from bump arenas.
    #[must_use]
    pub const fn is_insert_only(&self) -> bool {
        self.insert_only
    }

    /// A back end with these options serving `pools`.
    pub(crate) fn build(self, pools: &[PoolSpec]) -> LocalMemory {
        if self.insert_only {
            LocalMemory::insert_only(pools, self.max_block)
        } else {
            LocalMemory::with_block_limit(pools, self.max_block)
        }
    }
}

impl Default for MemoryOptions {
    fn default() -> Self {
        Self::new()
    }
}
