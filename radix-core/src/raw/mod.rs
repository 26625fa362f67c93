//! The raw engine: the generic tree and its operations, one per file.
//!
//! Read the files in the order `radixtree.h` keeps its sections:
//!
//! | file | what it does |
//! |---|---|
//! | `mod.rs` | [`RawTree`]: its fields, constructors, accessors, `Drop` |
//! | `descend.rs` | from a stored reference to its node, from a node to a child or a value slot; `get` |
//! | `reserve.rs` | counting the nodes a change will allocate, and reserving them before it starts |
//! | `alloc.rs` | new nodes and chains of them, growing a node into the next class and shrinking it, relinking the replacement |
//! | `insert.rs` | insert, with the key-order hint |
//! | `remove.rs` | remove and clear, with the bottom-up repair |
//! | `visit/` | the node visitor, and `stats` and `verify` built on it |
//! | `compressed/` | the same operations with lazy expansion and path compression |
//! | `batch.rs` | lookups in batches: pipelined descents, shared walks |
//! | `copy.rs`, `clone.rs` | node twins, and `Clone` built on them |
//! | `graft/` | node-by-node merge, split, difference and intersection |
//!
//! The map API built on these (entries, bulk moves, set operations, the
//! std traits, sets) is in `collections/`.
//!
//! [`RawTree`] is the engine every `radix_tree!` type is an alias of. It owns a root
//! reference, the root's shift (height), the number of keys and a memory
//! back end. All algorithms are loops, never recursion: a descent is at most
//! `Key::BITS / 8` levels, and paths that must be revisited (for shrinking
//! after a delete) are kept in a fixed array of slot locations.
//!
//! Slots and the root field hold the back end's stored references
//! ([`Memory::Ref`]); the engine resolves one into a [`NodePtr`] each time
//! it follows it (see [`crate::mem`]), which for local memory is free.
//!
//! Where a node is replaced (it grew, shrank or was freed) the tree writes
//! the new reference through the *location* of the old one: the parent's
//! slot, or the root field. Locations are raw pointers derived from the node
//! allocations, so they stay valid while the parent node is unchanged, which
//! the bottom-up order of every repair guarantees.
//!
//! A modification first works out which nodes it will allocate and
//! reserves them ([`Memory::reserve_nodes`]); only then does it change the
//! tree. A back end that can run out (a shared area with a size limit) thus
//! fails an insert or a remove before anything changed. For local memory,
//! which cannot fail, the planning compiles away.

use ::alloc::boxed::Box;
use ::alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr::NonNull;

use crate::config::{Config, Pools, RefOf};
use crate::key::{Key, SPAN};
use crate::mem::{LocalMemory, Memory, MemoryOptions, PoolSpec};
use crate::node::{self, lazy};
use crate::ptr::NodePtr;
use crate::value::ValueLayout;

mod alloc;
mod batch;
mod clone;
mod compressed;
mod copy;
mod descend;
mod graft;
mod insert;
mod remove;
mod reserve;
mod span;
#[cfg(test)]
pub(crate) mod test_keys;
mod visit;

pub(crate) use alloc::{insert_entry, remove_entry};
pub(crate) use descend::{
    descend_to_last_level, entry_at, entry_before, find_child, find_slot, find_value_slot, flagged,
    follow, node_key, node_shift, resolve, search_value_slot, seek, stored, unflagged,
};
pub(crate) use insert::InsertHint;
pub(crate) use reserve::Needs;
pub(crate) use span::refuse_ranges;
pub use span::{Span, SpanError};
pub use visit::stats::{ClassStats, Stats};
pub use visit::{LastLevelNode, OverlapSide};
pub(crate) use visit::{Visit, walk_nodes};

/// The layout of configuration `C`.
pub(crate) type LayoutOf<C> = <C as Config>::Layout;
/// The last-level slot type of configuration `C`.
pub(crate) type SlotOf<C> = <LayoutOf<C> as ValueLayout>::Slot;
/// The value type of configuration `C`.
pub type ValueOf<C> = <LayoutOf<C> as ValueLayout>::Value;
/// What `insert` takes for configuration `C`.
pub type InputOf<'a, C> = <LayoutOf<C> as ValueLayout>::Input<'a>;
/// What `insert` and `remove` return for configuration `C`.
pub type OldOf<C> = <LayoutOf<C> as ValueLayout>::Old;
/// Why an allocation of configuration `C`'s memory failed.
pub(crate) type MemError<C> = <<C as Config>::Memory as Memory>::Error;

/// The most levels any key type needs (`u128`).
pub(crate) const MAX_LEVELS: usize = 16;

/// An adaptive radix tree, generic over its [`Config`].
///
/// Most users never name this type: a `radix_tree!` type is an alias of
/// it over the declared configuration, and [`RadixMap`](crate::RadixMap)
/// over the default one. It reads like
/// [`BTreeMap`](std::collections::BTreeMap): keys are passed and returned by
/// value, values by reference, and iteration is in ascending key order.
///
/// Its fields are the engine's: `collections/` reads them where an
/// operation there is one descent of the engine's (an entry, a bulk move).
pub struct RawTree<C: Config> {
    pub(crate) root: Option<RefOf<C>>,
    /// Shift of the root node; the tree holds keys below `256 << root_shift`.
    pub(crate) root_shift: u32,
    pub(crate) len: usize,
    pub(crate) mem: C::Memory,
    /// Where the last insert's last-level node hangs, so that the next
    /// insert under the same node, as inserts in key order are, skips the
    /// descent. See [`RawTree::try_insert_with_old`] for when it is valid.
    pub(crate) hint: InsertHint<C>,
    _owns: PhantomData<Box<ValueOf<C>>>,
}

// SAFETY: the tree owns its nodes and values exactly as a `Box<V>` would;
// nodes are reached only through `&self`/`&mut self`.
unsafe impl<C: Config> Send for RawTree<C>
where
    ValueOf<C>: Send,
    C::Memory: Send,
{
}

// SAFETY: `&RawTree` only reads nodes and hands out `&V`.
unsafe impl<C: Config> Sync for RawTree<C>
where
    ValueOf<C>: Sync,
    C::Memory: Sync,
{
}

impl<C: Config<Memory = LocalMemory>> RawTree<C> {
    /// An empty tree. It allocates nothing until the first insert.
    pub fn new() -> Self {
        Self::with_memory(LocalMemory::with_pools(&Self::pool_specs()))
    }

    /// An empty tree whose back end is laid out as `options` say: a
    /// block limit, or bump arenas for an insert-only pass.
    pub fn with_options(options: MemoryOptions) -> Self {
        Self::with_memory(options.build(&Self::pool_specs()))
    }

    /// An empty tree over a memory back end made by the caller from
    /// [`RawTree::pool_specs`], for example with a block limit or in
    /// insert-only mode.
    ///
    /// # Panics
    ///
    /// If the back end was built for other pools (another configuration's):
    /// its nodes could be too small. That is a bug in the caller.
    pub fn with_memory(mem: LocalMemory) -> Self {
        let (specs, count) = Pools::<C>::specs();
        assert!(
            mem.serves(&specs[..count]),
            "memory back end built for other node pools; build it from RawTree::pool_specs()"
        );
        // SAFETY: an empty tree over a fresh back end.
        unsafe { Self::from_parts(None, 0, 0, mem) }
    }
}

impl<C: Config<Memory = LocalMemory>> Default for RawTree<C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Config> RawTree<C> {
    /// A tree from its parts.
    ///
    /// # Safety
    ///
    /// `root` is `None` and `len` 0, or `root` refers to a live tree on
    /// `mem` of height `root_shift` holding `len` values.
    pub(crate) unsafe fn from_parts(
        root: Option<RefOf<C>>,
        root_shift: u32,
        len: usize,
        mem: C::Memory,
    ) -> Self {
        Self {
            root,
            root_shift,
            len,
            mem,
            hint: InsertHint::NONE,
            _owns: PhantomData,
        }
    }

    /// The root reference, its shift and the number of keys: what a shared
    /// tree publishes for other processes after each change.
    #[cfg(all(feature = "shm", target_os = "linux"))]
    pub(crate) fn parts(&self) -> (Option<RefOf<C>>, u32, usize) {
        (self.root, self.root_shift, self.len)
    }

    /// The memory back end, mutably.
    pub(crate) fn memory_mut(&mut self) -> &mut C::Memory {
        &mut self.mem
    }

    /// The node pools this configuration needs, for building a back end.
    pub fn pool_specs() -> Vec<PoolSpec> {
        let (specs, count) = Pools::<C>::specs();
        specs[..count].to_vec()
    }

    /// The tree itself. `radix_tree!` types were newtypes around
    /// `RawTree` before they became aliases of it, and had this method to
    /// reach the engine; it stays so that code written then compiles.
    #[doc(hidden)]
    #[inline]
    pub fn as_raw(&self) -> &Self {
        self
    }

    /// Number of keys.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the tree holds no keys.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes the tree holds from its memory back end: slab blocks and
    /// leaves (for a shared tree, its area's segments). An empty local tree
    /// holds none.
    #[inline]
    pub fn memory_usage(&self) -> usize {
        self.mem.bytes_held()
    }

    /// The memory back end.
    pub fn memory(&self) -> &C::Memory {
        &self.mem
    }

    /// Levels of nodes from the root to the values (0 when empty).
    pub fn height(&self) -> usize {
        if self.root.is_some() {
            (self.root_shift / SPAN) as usize + 1
        } else {
            0
        }
    }

    /// The root node, as its stored reference names it (with a
    /// path-compressed tree's skipped-bytes flag), and its shift.
    pub(crate) fn root(&self) -> Option<(NodePtr, u32)> {
        self.root.map(|r| (resolve(&self.mem, r), self.root_shift))
    }
}

impl<C: Config> Drop for RawTree<C> {
    fn drop(&mut self) {
        self.clear();
    }
}

impl<C: Config> fmt::Debug for RawTree<C>
where
    ValueOf<C>: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}
