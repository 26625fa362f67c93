//! Process-local memory: a [slab](super::slab) per node pool, and leaves in
//! the global allocator or in bump arenas.
//!
//! [`memory_usage`](crate::RawTree::memory_usage) counts whole slab blocks,
//! which is what the process really holds, plus leaf bytes. Full blocks
//! are allocated a run (an extent) at a time and counted as they are
//! handed out; [`LocalMemory::bytes_reserved`] gives the rest.
//!
//! Leaves come from the global allocator and are counted by their size, or,
//! in *insert-only* mode ([`LocalMemory::insert_only`]), from bump arenas
//! ([`bumpalo`]) with no per-leaf allocator header, as PostgreSQL's vacuum
//! does for its TID store. A freed bump leaf's space is not reused until the
//! tree is emptied. Arenas are fixed-size chunks no larger than the block
//! limit, so a memory budget is not overshot by one doubling chunk; like the
//! slabs' blocks, the first arenas are smaller (4 KiB, then doubling), so a
//! small store does not hold a whole chunk.

use alloc::alloc::{alloc, dealloc, handle_alloc_error};
use alloc::vec::Vec;
use core::alloc::Layout;
use core::convert::Infallible;
use core::fmt;
use core::ptr::NonNull;

use super::slab::Slab;
use super::{Memory, PoolSpec};
use crate::ptr::LocalRef;

/// Largest bump arena chunk; leaves of a dead-tuple store are small.
const MAX_ARENA_BYTES: usize = 1 << 20;
/// Smallest bump arena chunk.
const MIN_ARENA_BYTES: usize = 4 << 10;

/// Fixed-size bump arenas for insert-only leaves.
struct Arenas {
    chunk: usize,
    /// The newest arena is last; earlier ones are full.
    arenas: Vec<bumpalo::Bump>,
}

impl Arenas {
    fn alloc(&mut self, layout: Layout) -> NonNull<u8> {
        if let Some(ptr) = self
            .arenas
            .last()
            .and_then(|a| a.try_alloc_layout(layout).ok())
        {
            return ptr;
        }
        // A new arena whose one chunk is all it may hold: a limit equal to
        // what it already holds stops bumpalo from growing it by doubling.
        // (A limit below that would read as no limit at all.)
        let ramp = MIN_ARENA_BYTES << self.arenas.len().min(usize::BITS as usize / 2);
        let size = self.chunk.min(ramp).max(layout.size() + layout.align());
        let arena = bumpalo::Bump::with_capacity(size);
        arena.set_allocation_limit(Some(arena.allocated_bytes()));
        let ptr = arena
            .try_alloc_layout(layout)
            .unwrap_or_else(|_| handle_alloc_error(layout));
        self.arenas.push(arena);
        ptr
    }

    fn bytes(&self) -> usize {
        self.arenas.iter().map(bumpalo::Bump::allocated_bytes).sum()
    }
}

/// Process-local memory: slabs for nodes; the global allocator or bump
/// arenas for leaves.
pub struct LocalMemory {
    slabs: Vec<Slab>,
    /// Bytes of the nodes handed out and not freed, for
    /// [`bytes_in_use`](LocalMemory::bytes_in_use).
    node_bytes: usize,
    leaf_bytes: usize,
    arenas: Option<Arenas>,
}

impl LocalMemory {
    /// A back end serving `pools`, with no limit on its block size.
    pub fn with_pools(pools: &[PoolSpec]) -> Self {
        super::MemoryOptions::new().build(pools)
    }

    /// A back end whose slab blocks are at most `max_block` bytes (rounded
    /// up to a power of two, and never smaller than one node), so that a
    /// caller with a memory budget is not pushed over it by one large block.
    /// PostgreSQL's TID store uses a sixteenth of its budget.
    pub fn with_block_limit(pools: &[PoolSpec], max_block: usize) -> Self {
        Self {
            slabs: pools.iter().map(|&p| Slab::new(p, max_block)).collect(),
            node_bytes: 0,
            leaf_bytes: 0,
            arenas: None,
        }
    }

    /// Like [`with_block_limit`](Self::with_block_limit), but leaves come
    /// from bump arenas of at most `max_block` bytes (and at most 1 MiB):
    /// no allocator header per leaf, and a removed or replaced leaf's space
    /// is only reclaimed when the tree is emptied.
    pub fn insert_only(pools: &[PoolSpec], max_block: usize) -> Self {
        let mut memory = Self::with_block_limit(pools, max_block);
        memory.arenas = Some(Arenas {
            chunk: max_block.clamp(MIN_ARENA_BYTES, MAX_ARENA_BYTES),
            arenas: Vec::new(),
        });
        memory
    }

    /// An empty back end with this one's options: the same pools and block
    /// limit, and insert-only if this one is. It holds no memory yet. A
    /// clone of a tree allocates from one, so that it keeps the options
    /// its original was built with.
    pub fn empty_like(&self) -> Self {
        let slab = |s: &Slab| {
            let node = s.node_layout();
            let spec = PoolSpec {
                size: node.size(),
                align: node.align(),
            };
            // A full block is already a power of two within its own
            // bounds, so as a limit it gives back the same block size.
            Slab::new(spec, s.block_size())
        };
        Self {
            slabs: self.slabs.iter().map(slab).collect(),
            node_bytes: 0,
            leaf_bytes: 0,
            arenas: self.arenas.as_ref().map(|a| Arenas {
                chunk: a.chunk,
                arenas: Vec::new(),
            }),
        }
    }

    /// Whether leaves come from bump arenas.
    pub fn is_insert_only(&self) -> bool {
        self.arenas.is_some()
    }

    /// Bytes allocated for slab blocks not handed out yet, beyond
    /// [`memory_usage`](crate::RawTree::memory_usage).
    ///
    /// Full blocks are allocated a run at a time (an *extent* of about
    /// 256 KiB per node pool), so that they sit together rather than each
    /// behind a gap its alignment costs, and are handed out one by one.
    /// The blocks not handed out yet have never been written: the process
    /// has not faulted their pages in, so they are address space, not
    /// memory, and `memory_usage` leaves them out. This is at most one
    /// extent per pool.
    ///
    /// ```
    /// use radix_core::{Config, RawTree, SizeClasses};
    /// use radix_core::{mem::LocalMemory, value::Auto};
    ///
    /// enum Ids {}
    /// impl Config for Ids {
    ///     type Key = u64;
    ///     type Layout = Auto<u64>;
    ///     type Memory = LocalMemory;
    ///     const SIZE_CLASSES: SizeClasses = SizeClasses::new(&[4, 16, 48, 256]);
    ///     const DELETE: bool = true;
    /// }
    ///
    /// let mut t = RawTree::<Ids>::new();
    /// for k in 0..100_000u64 {
    ///     t.insert(k * 3, k);
    /// }
    /// let pools = RawTree::<Ids>::pool_specs().len();
    /// assert!(t.memory().bytes_reserved() <= pools * (256 << 10));
    /// ```
    pub fn bytes_reserved(&self) -> usize {
        self.slabs.iter().map(Slab::bytes_reserved).sum()
    }

    /// Bytes of the live nodes and leaves: what the tree's contents
    /// occupy, without the free room of the slab blocks around them (which
    /// [`memory_usage`](crate::RawTree::memory_usage) counts). A structure
    /// that must stay within a budget it enforces itself, by giving nodes
    /// back, compares this: the free room a freed node leaves in its block
    /// is the first its pool hands out again. Leaves in bump arenas count
    /// as the arenas hold them.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m: RadixMap<u32, u64> = (0..10_000).map(|k| (k, k.into())).collect();
    /// let full = m.memory().bytes_in_use();
    /// assert!(0 < full && full <= m.memory_usage());
    /// m.retain(|k, _| k < 5_000);
    /// assert!(m.memory().bytes_in_use() < full);
    /// ```
    pub fn bytes_in_use(&self) -> usize {
        let arena_bytes = self.arenas.as_ref().map_or(0, Arenas::bytes);
        self.node_bytes + self.leaf_bytes + arena_bytes
    }

    /// Size of the full blocks of `pool` (its first few blocks are
    /// smaller).
    pub fn block_size(&self, pool: usize) -> usize {
        self.slabs[pool].block_size()
    }
}

impl crate::sealed::Sealed for LocalMemory {}

// SAFETY: slab nodes are disjoint pieces of blocks we own, valid until the
// block is released; leaves come straight from the global allocator. A
// stored word is the address itself.
unsafe impl Memory for LocalMemory {
    type Ref = LocalRef;
    type Error = Infallible;
    const FALLIBLE: bool = false;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn to_ref(&self, tagged: NonNull<u8>) -> LocalRef {
        LocalRef(tagged)
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn resolve(&self, stored: LocalRef) -> NonNull<u8> {
        stored.0
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn reserve_nodes(&mut self, _pool: usize, _count: usize) -> Result<(), Infallible> {
        Ok(())
    }

    #[inline]
    fn alloc_node(&mut self, pool: usize) -> NonNull<u8> {
        let slab = &mut self.slabs[pool];
        self.node_bytes += slab.node_layout().size();
        slab.alloc()
    }

    #[inline]
    unsafe fn free_node(&mut self, pool: usize, node: NonNull<u8>) {
        let slab = &mut self.slabs[pool];
        self.node_bytes -= slab.node_layout().size();
        // SAFETY: forwarded contract.
        unsafe { slab.free(node) }
    }

    #[inline]
    fn alloc_leaf(&mut self, layout: Layout) -> Result<NonNull<u8>, Infallible> {
        if layout.size() == 0 {
            // An aligned, non-null address with no provenance to misuse.
            return Ok(NonNull::<u8>::dangling().map_addr(|_| {
                core::num::NonZeroUsize::new(layout.align()).expect("align is non-zero")
            }));
        }
        if let Some(arenas) = &mut self.arenas {
            return Ok(arenas.alloc(layout));
        }
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc(layout) };
        let Some(leaf) = NonNull::new(raw) else {
            handle_alloc_error(layout)
        };
        self.leaf_bytes += layout.size();
        Ok(leaf)
    }

    #[inline]
    unsafe fn free_leaf(&mut self, leaf: NonNull<u8>, layout: Layout) {
        if layout.size() == 0 || self.arenas.is_some() {
            return;
        }
        self.leaf_bytes -= layout.size();
        // SAFETY: forwarded contract: allocated with this layout.
        unsafe { dealloc(leaf.as_ptr(), layout) };
    }

    /// Leaves from the global allocator change owners by their count
    /// alone; a leaf in a bump arena stays with its arena.
    unsafe fn hand_over_leaf(&mut self, to: &mut Self, _leaf: NonNull<u8>, layout: Layout) -> bool {
        if self.arenas.is_some() || to.arenas.is_some() {
            return false;
        }
        if layout.size() > 0 {
            self.leaf_bytes -= layout.size();
            to.leaf_bytes += layout.size();
        }
        true
    }

    unsafe fn release_all(&mut self) {
        self.slabs.iter_mut().for_each(Slab::release);
        self.node_bytes = 0;
        // A leaf still allocated now belongs to nobody: a value leaked by a
        // panicking `Drop` (the only way one outlives a release). The tree
        // no longer holds it.
        self.leaf_bytes = 0;
        if let Some(arenas) = &mut self.arenas {
            arenas.arenas.clear();
        }
    }

    fn releases_leaves(&self) -> bool {
        self.arenas.is_some()
    }

    fn bytes_held(&self) -> usize {
        let arena_bytes = self.arenas.as_ref().map_or(0, Arenas::bytes);
        self.slabs.iter().map(Slab::bytes).sum::<usize>() + self.leaf_bytes + arena_bytes
    }

    fn live_nodes(&self, pool: usize) -> usize {
        self.slabs[pool].live()
    }

    fn serves(&self, pools: &[PoolSpec]) -> bool {
        self.slabs.len() == pools.len()
            && self.slabs.iter().zip(pools).all(|(slab, p)| {
                let node = slab.node_layout();
                node.size() >= p.size && node.align() >= p.align
            })
    }
}

// SAFETY: the slabs' blocks and the leaves are owned exclusively by this
// value (no other handle to them exists), so moving it to another thread is
// moving ownership; `&LocalMemory` only reads counters.
unsafe impl Send for LocalMemory {}
// SAFETY: as above; no method taking `&self` mutates anything.
unsafe impl Sync for LocalMemory {}

impl fmt::Debug for LocalMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalMemory")
            .field("bytes_held", &self.bytes_held())
            .field("leaf_bytes", &self.leaf_bytes)
            .field(
                "slab_blocks",
                &self.slabs.iter().map(Slab::blocks).collect::<Vec<_>>(),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POOLS: [PoolSpec; 2] = [
        PoolSpec { size: 40, align: 8 },
        PoolSpec {
            size: 2088,
            align: 8,
        },
    ];

    #[test]
    fn nodes_are_reused_and_release_returns_every_block() {
        let mut m = LocalMemory::with_pools(&POOLS);
        assert_eq!(m.bytes_held(), 0);
        let nodes: Vec<_> = (0..300).map(|_| m.alloc_node(0)).collect();
        assert_eq!(m.live_nodes(0), 300);
        // The ramp (128 + 256 + ... + 4096 bytes, 1 + 5 + 11 + 24 + 49 + 100
        // nodes), then one full 8 KiB block for the remaining 110.
        assert_eq!(m.bytes_held(), (8192 - 128) + 8192);
        let first = nodes[7];
        // SAFETY: allocated above, not used again.
        unsafe { m.free_node(0, first) };
        assert_eq!(m.alloc_node(0), first, "a freed node is reused first");
        let Ok(leaf) = m.alloc_leaf(Layout::new::<[u64; 3]>());
        assert_eq!(m.bytes_held(), (8192 - 128) + 8192 + 24);
        // SAFETY: allocated above with this layout.
        unsafe { m.free_leaf(leaf, Layout::new::<[u64; 3]>()) };
        // SAFETY: no node is used again.
        unsafe { m.release_all() };
        assert_eq!(m.bytes_held(), 0);
        assert_eq!(m.live_nodes(0), 0);
    }

    #[test]
    fn empty_like_keeps_the_options_a_clone_needs() {
        for limit in [1, 300, 4 << 10, 5000, 64 << 10, usize::MAX / 2] {
            for insert_only in [false, true] {
                let m = if insert_only {
                    LocalMemory::insert_only(&POOLS, limit)
                } else {
                    LocalMemory::with_block_limit(&POOLS, limit)
                };
                let mut e = m.empty_like();
                assert!(e.serves(&POOLS));
                assert_eq!(e.is_insert_only(), insert_only);
                assert_eq!(e.bytes_held(), 0);
                for (a, b) in m.slabs.iter().zip(&e.slabs) {
                    assert_eq!(a.node_layout(), b.node_layout(), "limit {limit}");
                    assert_eq!(a.block_size(), b.block_size(), "limit {limit}");
                }
                let (a, b) = (m.arenas.as_ref(), e.arenas.as_ref());
                assert_eq!(a.map(|a| a.chunk), b.map(|b| b.chunk));
                let _ = e.alloc_node(1);
                // SAFETY: no node is used again.
                unsafe { e.release_all() };
            }
        }
    }

    #[test]
    fn insert_only_leaves_come_from_fixed_size_arenas() {
        let mut m = LocalMemory::insert_only(&POOLS, 16 << 10);
        let layout = Layout::from_size_align(40, 8).unwrap();
        let leaves: Vec<_> = (0..2000)
            .map(|_| m.alloc_leaf(layout))
            .collect::<Result<_, _>>()
            .unwrap();
        // 80,000 bytes in arenas of 4, 8 and then 16 KiB (bumpalo rounds a
        // requested size up to its own chunk size), none grown by bumpalo.
        let arenas = &m.arenas.as_ref().unwrap().arenas;
        let sizes: Vec<usize> = arenas.iter().map(bumpalo::Bump::allocated_bytes).collect();
        assert!(sizes.windows(2).all(|w| w[0] <= w[1]), "{sizes:?}");
        assert!(((4 << 10)..(8 << 10)).contains(&sizes[0]), "{sizes:?}");
        let full = *sizes.last().unwrap();
        assert!(((16 << 10)..=(32 << 10)).contains(&full), "{sizes:?}");
        assert!(sizes[2..].iter().all(|&s| s == full), "{sizes:?}");
        let held = m.bytes_held();
        assert!((80_000..80_000 + full).contains(&held), "{held}");
        // SAFETY: allocated above; freeing a bump leaf only forgets it.
        unsafe { m.free_leaf(leaves[0], layout) };
        assert_eq!(m.bytes_held(), held);
        // A leaf larger than the arena chunk gets an arena of its own.
        let Ok(_) = m.alloc_leaf(Layout::from_size_align(100 << 10, 8).unwrap());
        assert!(m.bytes_held() >= held + (100 << 10));
        // SAFETY: nothing allocated is used again.
        unsafe { m.release_all() };
        assert_eq!(m.bytes_held(), 0);
    }
}
