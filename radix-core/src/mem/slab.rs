//! A slab allocator for one node size.
//!
//! Nodes are carved from *blocks* of at least 32 nodes (at least 8 KiB,
//! rounded up to a power of two), as PostgreSQL's slab contexts do, so a
//! node costs no allocator header and nodes of one size sit together.
//!
//! A slab's first few blocks are smaller: a *ramp* of up to six blocks, each
//! twice the size of the one before and the last half a full block. A tree
//! of a few dozen nodes then holds a few kilobytes rather than a full block
//! per node size (128 KiB for node256 alone); PostgreSQL pays those full
//! blocks, and a store of 2,000 dead TIDs cost it 0.25 MB. Once the ramp is
//! used up every new block is full size. Ramp blocks stay until the slab is
//! released, which bounds what an emptied tree keeps to less than one full
//! block.
//!
//! Each block is aligned to its own size, and a small header at the start of
//! the block keeps that block's free list and live count. The block a node
//! belongs to is found by comparing the node's address with the (at most
//! six) ramp blocks, and otherwise by masking it with the full block size.
//! Blocks with room are chained in a *partial* list; allocation takes from
//! its head, and a freed node goes back to its own block.
//!
//! Full blocks are carved from *extents* of about 256 KiB (at least one
//! block), each one allocation aligned to the block size. Asking the
//! system allocator for each block on its own, aligned to its size, costs
//! a gap of one block between blocks (glibc's `posix_memalign` takes
//! `size + align` and gives the rest back as a free chunk whose header it
//! writes): a tree of 8 KiB blocks then touched three pages for every two
//! it used, and first-touch page faults were a third of RT-2's
//! `random_block` load. An extent is touched only as its blocks are
//! carved, so [`bytes`](Slab::bytes) counts carved blocks: the pages the
//! process has written.
//!
//! A block whose last node is freed cannot go back to the system alone,
//! being part of its extent. The first is kept as a *spare*, so that a
//! tree hovering at a block boundary does not fault a block in and give it
//! back on every operation; beyond the spare, an empty block's pages are
//! given back to the kernel (`madvise(MADV_DONTNEED)`, on Linux) and it
//! waits, unwritten, to be reused before a block is carved. An extent
//! whose carved blocks are all empty goes back to the system, except one
//! kept idle. Memory usage therefore follows the live nodes, rounded up to
//! whole blocks, plus the spare, as when each block was its own
//! allocation. (Where pages cannot be given back, as under Miri or for
//! blocks smaller than a page, empty blocks stay resident and counted.)
//!
//! # Pointer invariants
//!
//! Every `unsafe` block below relies on these, which every function that
//! changes the slab keeps:
//!
//! - Each block is aligned to its own size and starts with its header; a
//!   full block's header is found by masking any address inside it with
//!   the full block size, a ramp block's by comparing with the ramp list.
//! - A node pointer handed out lies inside one block, past its header, at
//!   a multiple of the node size from the first node, and derives its
//!   provenance from the extent (or ramp allocation) it was carved from.
//! - A node is on its block's free list, or live, never both. A block on
//!   the partial list has a free node; an empty full block leaves the
//!   list and becomes the spare or waits, perhaps decommitted, on the
//!   empty list, and is written again only once it is carved anew.
//! - An extent is freed only when none of its carved blocks holds a live
//!   node, and with the layout it was allocated with.

use alloc::alloc::{alloc, dealloc, handle_alloc_error};
use alloc::boxed::Box;
use alloc::vec::Vec;
use core::alloc::Layout;
use core::ptr::NonNull;

use super::PoolSpec;

/// Whether an empty full block of `block_size` bytes can give its pages
/// back while its extent stays: on Linux with `std`, outside Miri, when the block is
/// whole pages. (Full blocks are aligned to their size, a power of two, so
/// a block of at least a page starts on one. A smaller block shares its
/// page with live neighbours.)
fn decommits(block_size: usize) -> bool {
    #[cfg(all(feature = "std", target_os = "linux", not(miri)))]
    return block_size >= rustix::param::page_size();
    #[cfg(not(all(feature = "std", target_os = "linux", not(miri))))]
    return {
        let _ = block_size;
        false
    };
}

/// Nodes per block, at least.
const MIN_NODES_PER_BLOCK: usize = 32;
/// Smallest full block.
const MIN_BLOCK_BYTES: usize = 8 * 1024;
/// Most ramp blocks a slab starts with.
const MAX_RAMP: usize = 6;
/// Bytes of full blocks allocated at once (at least one block).
const EXTENT_BYTES: usize = 256 * 1024;

/// The start of every block.
struct BlockHeader {
    /// This block's free nodes; each holds the next in its first word.
    free: Option<NonNull<u8>>,
    /// Neighbours in the partial list, while the block has room.
    prev: Option<NonNull<BlockHeader>>,
    next: Option<NonNull<BlockHeader>>,
    /// Nodes handed out and not freed.
    live: usize,
    /// Nodes at the block's end never handed out yet.
    untouched: usize,
    /// Nodes the block holds.
    capacity: usize,
    /// The extent the block was carved from; `None` for ramp blocks.
    extent: Option<NonNull<Extent>>,
}

/// A carved full block with no live node. Its header may have been given
/// back to the kernel with its pages, so its extent is kept here.
#[derive(Clone, Copy)]
struct EmptyBlock {
    block: NonNull<BlockHeader>,
    extent: NonNull<Extent>,
}

/// Full blocks allocated together; see the module documentation.
struct Extent {
    /// Start of the allocation; its blocks are carved from it in order.
    base: NonNull<u8>,
    /// Blocks carved so far.
    carved: usize,
    /// Carved blocks holding live nodes (the rest are the spare or in
    /// `Slab::empty`).
    in_use: usize,
    /// Position in `Slab::extents`.
    index: usize,
}

/// The slab of one node pool.
pub(crate) struct Slab {
    node: Layout,
    /// A full block.
    block: Layout,
    /// An extent: `blocks_per_extent` full blocks, aligned to one.
    extent: Layout,
    blocks_per_extent: usize,
    /// Whether empty full blocks give their pages back ([`decommits`]).
    decommits: bool,
    /// Offset of the first node, past the header.
    first_node: usize,
    /// Nodes in a full block.
    per_block: usize,
    /// Ramp blocks this slab starts with; block `i` is
    /// `block.size() >> (ramp_len - i)` bytes.
    ramp_len: usize,
    /// The ramp blocks allocated so far, in order.
    ramp: [Option<NonNull<BlockHeader>>; MAX_RAMP],
    /// Every extent, each boxed so that its blocks can point at it.
    extents: Vec<NonNull<Extent>>,
    /// The newest extent, while it has blocks never carved.
    carving: Option<NonNull<Extent>>,
    /// An extent whose carved blocks are all empty, kept for reuse.
    idle: Option<NonNull<Extent>>,
    /// An empty full block kept resident, reused first.
    spare: Option<EmptyBlock>,
    /// Further empty full blocks, their pages given back where the
    /// slab can ([`decommits`]), reused next.
    empty: Vec<EmptyBlock>,
    /// Full blocks holding live nodes.
    blocks_in_use: usize,
    /// Head of the list of blocks with room.
    partial: Option<NonNull<BlockHeader>>,
    live: usize,
}

impl Slab {
    /// A slab for `spec` whose blocks are at most `max_block` bytes (rounded
    /// up to a power of two), but always large enough for one node.
    pub(crate) fn new(spec: PoolSpec, max_block: usize) -> Self {
        let node = Layout::from_size_align(spec.size, spec.align)
            .expect("node layout")
            .pad_to_align();
        let first_node = size_of::<BlockHeader>().next_multiple_of(node.align());
        let wanted = (first_node + node.size() * MIN_NODES_PER_BLOCK)
            .next_power_of_two()
            .max(MIN_BLOCK_BYTES);
        let smallest = (first_node + node.size()).next_power_of_two();
        let cap = max_block
            .checked_next_power_of_two()
            .unwrap_or(1 << (usize::BITS - 1));
        let size = wanted.min(cap).max(smallest);
        // Aligned to its size, so a node's block is its address rounded down.
        let block = Layout::from_size_align(size, size).expect("block layout");
        let blocks_per_extent = (EXTENT_BYTES / size).max(1);
        let extent =
            Layout::from_size_align(size * blocks_per_extent, size).expect("extent layout");
        let mut ramp_len = 0;
        while ramp_len < MAX_RAMP && size >> (ramp_len + 1) >= smallest {
            ramp_len += 1;
        }
        Self {
            node,
            block,
            extent,
            blocks_per_extent,
            decommits: decommits(size),
            first_node,
            per_block: (size - first_node) / node.size(),
            ramp_len,
            ramp: [None; MAX_RAMP],
            extents: Vec::new(),
            carving: None,
            idle: None,
            spare: None,
            empty: Vec::new(),
            blocks_in_use: 0,
            partial: None,
            live: 0,
        }
    }

    /// Size of a full block.
    pub(crate) fn block_size(&self) -> usize {
        self.block.size()
    }

    /// The ramp blocks allocated so far, with their layouts.
    fn ramp_blocks(&self) -> impl Iterator<Item = (NonNull<BlockHeader>, Layout)> + '_ {
        self.ramp
            .iter()
            .map_while(|b| *b)
            .enumerate()
            .map(|(i, b)| {
                let size = self.block.size() >> (self.ramp_len - i);
                (b, Layout::from_size_align(size, size).expect("ramp layout"))
            })
    }

    /// Nodes handed out and not freed.
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// Blocks held: ramp blocks, and full blocks carved and not returned
    /// (empty ones included).
    pub(crate) fn blocks(&self) -> usize {
        self.blocks_in_use
            + usize::from(self.spare.is_some())
            + self.empty.len()
            + self.ramp_blocks().count()
    }

    /// Full blocks whose pages are resident: in use, the spare, and the
    /// other empty ones where their pages cannot be given back.
    fn resident_blocks(&self) -> usize {
        let empty = if self.decommits { 0 } else { self.empty.len() };
        self.blocks_in_use + usize::from(self.spare.is_some()) + empty
    }

    /// Bytes held: ramp blocks and resident full blocks. Blocks never
    /// carved, or empty with their pages given back, are address space,
    /// not memory, and are not counted.
    pub(crate) fn bytes(&self) -> usize {
        self.resident_blocks() * self.block.size() + self.ramp_bytes()
    }

    /// Bytes of the ramp blocks allocated so far.
    fn ramp_bytes(&self) -> usize {
        self.ramp_blocks().map(|(_, l)| l.size()).sum()
    }

    /// Bytes allocated for full blocks and not counted by
    /// [`bytes`](Self::bytes): the newest extent's blocks not carved yet,
    /// and empty blocks whose pages were given back.
    pub(crate) fn bytes_reserved(&self) -> usize {
        let uncarved = self.carving.map_or(0, |e| {
            // SAFETY: `carving` is a live extent of this slab.
            let carved = unsafe { (*e.as_ptr()).carved };
            self.blocks_per_extent - carved
        });
        let held = self.blocks_in_use + usize::from(self.spare.is_some()) + self.empty.len();
        (uncarved + held - self.resident_blocks()) * self.block.size()
    }

    /// Node layout of this slab.
    pub(crate) fn node_layout(&self) -> Layout {
        self.node
    }

    /// A node; its contents are unspecified.
    #[inline]
    pub(crate) fn alloc(&mut self) -> NonNull<u8> {
        let block = match self.partial {
            Some(block) => block,
            None => self.new_block(),
        };
        // SAFETY: blocks in the partial list are live and have room; their
        // free nodes hold a link in their first word; untouched nodes lie
        // inside the block.
        unsafe {
            let h = block.as_ptr();
            let node = match (*h).free {
                Some(node) => {
                    (*h).free = node.cast::<Option<NonNull<u8>>>().read();
                    node
                }
                None => {
                    let index = (*h).capacity - (*h).untouched;
                    (*h).untouched -= 1;
                    block
                        .cast::<u8>()
                        .byte_add(self.first_node + index * self.node.size())
                }
            };
            (*h).live += 1;
            if (*h).free.is_none() && (*h).untouched == 0 {
                self.unlink(block);
            }
            self.live += 1;
            node
        }
    }

    /// Returns `node` to its block, and the block's extent to the system
    /// when all of its blocks are empty (beyond one idle extent).
    ///
    /// # Safety
    ///
    /// `node` came from this slab's `alloc` and is not used again.
    #[inline]
    pub(crate) unsafe fn free(&mut self, node: NonNull<u8>) {
        let addr = node.addr().get();
        let ramp = self
            .ramp_blocks()
            .find(|(b, layout)| addr.wrapping_sub(b.addr().get()) < layout.size())
            .map(|(b, _)| b);
        let block = ramp.unwrap_or_else(|| {
            let mask = !(self.block.size() - 1);
            // The node's pointer carries the provenance of its whole block.
            node.map_addr(|a| {
                // SAFETY: a full block is aligned to its size and the node
                // lies inside it, so masking gives the block's non-zero
                // start.
                unsafe { core::num::NonZeroUsize::new_unchecked(a.get() & mask) }
            })
            .cast::<BlockHeader>()
        });
        // SAFETY: the node belongs to a live block of this slab, whose
        // header is at the block's start; the dead node can hold a link.
        unsafe {
            let h = block.as_ptr();
            let was_full = (*h).free.is_none() && (*h).untouched == 0;
            node.cast::<Option<NonNull<u8>>>().write((*h).free);
            (*h).free = Some(node);
            (*h).live -= 1;
            self.live -= 1;
            if (*h).live == 0 && ramp.is_none() {
                if !was_full {
                    self.unlink(block);
                }
                self.retire(block);
            } else if was_full {
                self.link(block);
            }
        }
    }

    /// Frees every block.
    pub(crate) fn release(&mut self) {
        let ramp: Vec<_> = self.ramp_blocks().collect();
        for (block, layout) in ramp {
            // SAFETY: every ramp block was allocated with its layout.
            unsafe { dealloc(block.as_ptr().cast(), layout) };
        }
        self.ramp = [None; MAX_RAMP];
        for extent in core::mem::take(&mut self.extents) {
            // SAFETY: every extent was boxed by `new_extent` and allocated
            // with `self.extent`; nothing refers to it after the release.
            unsafe { self.free_extent(extent) };
        }
        self.carving = None;
        self.idle = None;
        self.spare = None;
        self.empty = Vec::new();
        self.blocks_in_use = 0;
        self.partial = None;
        self.live = 0;
    }

    #[cold]
    fn new_block(&mut self) -> NonNull<BlockHeader> {
        let ramp_used = self.ramp_blocks().count();
        let (block, capacity, extent) = if ramp_used < self.ramp_len {
            let size = self.block.size() >> (self.ramp_len - ramp_used);
            let layout = Layout::from_size_align(size, size).expect("ramp layout");
            let block = Self::alloc_block(layout);
            self.ramp[ramp_used] = Some(block);
            (block, (size - self.first_node) / self.node.size(), None)
        } else {
            let (block, extent) = self.take_full_block();
            self.blocks_in_use += 1;
            (block, self.per_block, Some(extent))
        };
        // SAFETY: a block no node of this slab lies in, large and aligned
        // enough for its header and `capacity` nodes.
        unsafe {
            block.write(BlockHeader {
                free: None,
                prev: None,
                next: None,
                live: 0,
                untouched: capacity,
                capacity,
                extent,
            });
        }
        self.link(block);
        block
    }

    /// A full block for new nodes: the spare, else another empty one,
    /// else the next of the newest extent, else the first of a new extent.
    /// Its header is stale.
    fn take_full_block(&mut self) -> (NonNull<BlockHeader>, NonNull<Extent>) {
        let (block, extent) = match self.spare.take().or_else(|| self.empty.pop()) {
            Some(EmptyBlock { block, extent }) => (block, extent),
            None => {
                let extent = self.carving.unwrap_or_else(|| self.new_extent());
                // SAFETY: `carving` is a live extent with a block never
                // carved, which lies inside its allocation.
                unsafe {
                    let e = extent.as_ptr();
                    let block = (*e)
                        .base
                        .byte_add((*e).carved * self.block.size())
                        .cast::<BlockHeader>();
                    (*e).carved += 1;
                    if (*e).carved == self.blocks_per_extent {
                        self.carving = None;
                    }
                    (block, extent)
                }
            }
        };
        if self.idle == Some(extent) {
            self.idle = None;
        }
        // SAFETY: a live extent.
        unsafe { (*extent.as_ptr()).in_use += 1 };
        (block, extent)
    }

    #[cold]
    fn new_extent(&mut self) -> NonNull<Extent> {
        let base = Self::alloc_block(self.extent).cast::<u8>();
        let extent = NonNull::from(Box::leak(Box::new(Extent {
            base,
            carved: 0,
            in_use: 0,
            index: self.extents.len(),
        })));
        self.extents.push(extent);
        self.carving = Some(extent);
        extent
    }

    fn alloc_block(layout: Layout) -> NonNull<BlockHeader> {
        // SAFETY: block and extent layouts have a non-zero size.
        NonNull::new(unsafe { alloc(layout) })
            .unwrap_or_else(|| handle_alloc_error(layout))
            .cast()
    }

    /// Takes an empty full block out of use: it becomes the spare, or
    /// gives its pages back and waits in `empty`; its extent goes back to
    /// the system once every carved block of it is empty, unless it
    /// becomes the idle extent.
    ///
    /// # Safety
    ///
    /// `block` is a full block of this slab with no live node, not in the
    /// partial list.
    unsafe fn retire(&mut self, block: NonNull<BlockHeader>) {
        self.blocks_in_use -= 1;
        // SAFETY: caller's contract: the header names the block's live
        // extent.
        let extent = unsafe { (*block.as_ptr()).extent }.expect("full block");
        let empty = EmptyBlock { block, extent };
        if self.spare.is_none() {
            self.spare = Some(empty);
        } else {
            // SAFETY: nothing lives in the block; its header is rewritten
            // before its next use.
            unsafe { self.decommit(block) };
            self.empty.push(empty);
        }
        // SAFETY: a live extent of this slab.
        let in_use = unsafe {
            let e = extent.as_ptr();
            (*e).in_use -= 1;
            (*e).in_use
        };
        if in_use > 0 {
            return;
        }
        let Some(previous) = self.idle.replace(extent) else {
            return;
        };
        // Two idle extents: the older one goes, with its empty blocks.
        self.empty.retain(|e| e.extent != previous);
        if self.spare.is_some_and(|e| e.extent == previous) {
            // The spare must stay resident: a given-back block would be
            // counted without its pages, so none replaces it.
            self.spare = None;
        }
        if self.carving == Some(previous) {
            self.carving = None;
        }
        // SAFETY: a live extent of this slab.
        let index = unsafe { (*previous.as_ptr()).index };
        self.extents.swap_remove(index);
        if let Some(&moved) = self.extents.get(index) {
            // SAFETY: a live extent of this slab.
            unsafe { (*moved.as_ptr()).index = index };
        }
        // SAFETY: no block of `previous` is in use or listed any more.
        unsafe { self.free_extent(previous) };
    }

    /// Gives an empty full block's pages back to the kernel, where the
    /// slab [`decommits`]; they read as zeros when next touched.
    ///
    /// # Safety
    ///
    /// No live node lies in `block`.
    unsafe fn decommit(&self, block: NonNull<BlockHeader>) {
        #[cfg(all(feature = "std", target_os = "linux", not(miri)))]
        if self.decommits {
            use rustix::mm::{Advice, madvise};
            // The block is whole pages: at least a page, and aligned to its
            // size, a power of two.
            // SAFETY: the block is ours, whole pages and holds nothing live;
            // after `MADV_DONTNEED` the mapping stays valid, reading zeros.
            let given_back = unsafe {
                madvise(
                    block.as_ptr().cast(),
                    self.block.size(),
                    Advice::LinuxDontNeed,
                )
            };
            // It cannot fail on memory we own; if it did, the pages would
            // only stay resident until the block is reused.
            debug_assert!(given_back.is_ok(), "madvise: {given_back:?}");
        }
        #[cfg(not(all(feature = "std", target_os = "linux", not(miri))))]
        let _ = block;
    }

    /// Returns `extent`'s memory and its box.
    ///
    /// # Safety
    ///
    /// `extent` was made by `new_extent` and is no longer listed or used.
    unsafe fn free_extent(&self, extent: NonNull<Extent>) {
        // SAFETY: caller's contract: boxed by `new_extent`, allocated with
        // `self.extent`.
        unsafe {
            let extent = Box::from_raw(extent.as_ptr());
            dealloc(extent.base.as_ptr(), self.extent);
        }
    }

    /// Pushes `block` on the partial list.
    fn link(&mut self, block: NonNull<BlockHeader>) {
        // SAFETY: `block` and the list's head are live blocks of this slab.
        unsafe {
            (*block.as_ptr()).prev = None;
            (*block.as_ptr()).next = self.partial;
            if let Some(head) = self.partial {
                (*head.as_ptr()).prev = Some(block);
            }
        }
        self.partial = Some(block);
    }

    /// Takes `block` off the partial list.
    ///
    /// # Safety
    ///
    /// `block` is in the partial list.
    unsafe fn unlink(&mut self, block: NonNull<BlockHeader>) {
        // SAFETY: caller's contract; its neighbours are live list members.
        unsafe {
            let (prev, next) = ((*block.as_ptr()).prev, (*block.as_ptr()).next);
            match prev {
                Some(p) => (*p.as_ptr()).next = next,
                None => self.partial = next,
            }
            if let Some(n) = next {
                (*n.as_ptr()).prev = prev;
            }
        }
    }
}

impl Drop for Slab {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: PoolSpec = PoolSpec { size: 40, align: 8 };
    const LARGE: PoolSpec = PoolSpec {
        size: 2088,
        align: 8,
    };
    /// 32 KiB blocks of 32 nodes, 8 to an extent.
    const MEDIUM: PoolSpec = PoolSpec {
        size: 1000,
        align: 8,
    };

    #[test]
    fn blocks_hold_at_least_32_nodes_and_8_kib() {
        assert_eq!(Slab::new(SMALL, usize::MAX).block_size(), 8192);
        assert_eq!(Slab::new(LARGE, usize::MAX).block_size(), 131072);
        assert_eq!(Slab::new(SMALL, 4096).block_size(), 4096);
        assert_eq!(Slab::new(LARGE, 1024).block_size(), 4096);
    }

    /// Allocates nodes until the ramp is used up; returns them.
    fn fill_ramp(slab: &mut Slab) -> Vec<NonNull<u8>> {
        let mut nodes = Vec::new();
        while slab.ramp_blocks().count() < slab.ramp_len || slab.partial.is_some() {
            nodes.push(slab.alloc());
        }
        nodes
    }

    #[test]
    fn the_first_blocks_ramp_up_to_full_size() {
        let mut slab = Slab::new(LARGE, usize::MAX);
        assert_eq!(slab.ramp_len, 5);
        let first = slab.alloc();
        // A one-node tree holds 4 KiB, not a 128 KiB block.
        assert_eq!(slab.bytes(), 4096);
        let ramp = fill_ramp(&mut slab);
        assert_eq!(slab.bytes(), 4096 + 8192 + 16384 + 32768 + 65536);
        assert_eq!(slab.live(), ramp.len() + 1);
        let full = slab.alloc();
        assert_eq!(slab.blocks(), 6);
        assert_eq!(slab.bytes(), 131072 - 4096 + 131072);
        // Ramp blocks stay when empty; their nodes are reused.
        // SAFETY: allocated above, each freed once.
        unsafe {
            slab.free(first);
            ramp.iter().for_each(|&n| slab.free(n));
        }
        assert_eq!(slab.blocks(), 6);
        assert_eq!(slab.live(), 1);
        let reused = slab.alloc();
        assert!(reused == first || ramp.contains(&reused));
        // SAFETY: allocated above, each freed once.
        unsafe {
            slab.free(reused);
            slab.free(full);
        }
        assert_eq!(slab.live(), 0);
        slab.release();
        assert_eq!((slab.bytes(), slab.blocks()), (0, 0));
        // After a release the ramp starts again.
        let again = slab.alloc();
        assert_eq!(slab.bytes(), 4096);
        // SAFETY: allocated above, freed once.
        unsafe { slab.free(again) };
    }

    /// Frees `nodes`, each allocated from `slab` and not used again.
    fn free_all(slab: &mut Slab, nodes: &[NonNull<u8>]) {
        for &n in nodes {
            // SAFETY: the caller's nodes, each freed once.
            unsafe { slab.free(n) };
        }
    }

    #[test]
    fn blocks_smaller_than_a_page_keep_their_pages() {
        // 256-byte blocks, several to a page: giving one's page back would
        // zero its live neighbours.
        let mut slab = Slab::new(SMALL, 256);
        assert_eq!(slab.block_size(), 256);
        assert!(!slab.decommits);
        let ramp = fill_ramp(&mut slab);
        let per_block = slab.per_block;
        let nodes: Vec<_> = (0..16 * per_block).map(|_| slab.alloc()).collect();
        for (i, n) in nodes.iter().enumerate() {
            // SAFETY: a live node of at least 8 bytes, aligned to 8.
            unsafe { n.cast::<u64>().write(i as u64) };
        }
        // Empty every other block: beyond the spare, each is an empty
        // block of a page shared with live ones.
        let (emptied, kept): (Vec<_>, Vec<_>) = nodes
            .chunks(per_block)
            .enumerate()
            .partition(|(b, _)| b % 2 == 0);
        for (_, block) in &emptied {
            free_all(&mut slab, block);
        }
        // Every empty block stays resident and counted.
        let full_blocks = slab.blocks() - slab.ramp_blocks().count();
        assert_eq!(full_blocks, 16);
        assert_eq!(slab.bytes(), full_blocks * 256 + slab.ramp_bytes());
        for (b, block) in &kept {
            for (j, n) in block.iter().enumerate() {
                // SAFETY: a live node written above.
                let stored = unsafe { n.cast::<u64>().read() };
                assert_eq!(stored, (b * per_block + j) as u64);
            }
        }
        for (_, block) in &kept {
            free_all(&mut slab, block);
        }
        free_all(&mut slab, &ramp);
        slab.release();
    }

    #[test]
    fn full_blocks_are_carved_from_extents_in_order() {
        let mut slab = Slab::new(MEDIUM, usize::MAX);
        let (size, per_extent) = (slab.block_size(), slab.blocks_per_extent);
        assert_eq!(size * per_extent, EXTENT_BYTES);
        let ramp = fill_ramp(&mut slab);
        let ramp_bytes = slab.bytes();
        let nodes: Vec<_> = (0..per_extent * slab.per_block)
            .map(|_| slab.alloc())
            .collect();
        assert_eq!(slab.extents.len(), 1);
        assert_eq!(slab.bytes(), ramp_bytes + per_extent * size);
        // The blocks are one run, so the pages between them are never
        // touched: an aligned allocation per block left a gap after each.
        let lowest = nodes.iter().map(|n| n.addr().get()).min().unwrap();
        let highest = nodes.iter().map(|n| n.addr().get()).max().unwrap();
        assert!(highest - lowest < per_extent * size);
        assert_eq!(lowest & (size - 1), slab.first_node);
        free_all(&mut slab, &nodes);
        free_all(&mut slab, &ramp);
        slab.release();
    }

    #[test]
    fn empty_blocks_are_reused_and_extents_go_back_keeping_one() {
        // Blocks, as in `blocks()`, are held address space; `bytes()`
        // counts those resident.
        let mut slab = Slab::new(MEDIUM, usize::MAX);
        let ramp = fill_ramp(&mut slab);
        let ramp_blocks = slab.blocks();
        let (size, per_block, per_extent) =
            (slab.block_size(), slab.per_block, slab.blocks_per_extent);
        let ramp_bytes = slab.bytes();
        // Two whole extents and one block of a third, block by block.
        let blocks: Vec<Vec<_>> = (0..2 * per_extent + 1)
            .map(|_| (0..per_block).map(|_| slab.alloc()).collect())
            .collect();
        assert_eq!(slab.extents.len(), 3);
        assert_eq!(slab.blocks(), ramp_blocks + 2 * per_extent + 1);
        let mut addrs: Vec<usize> = blocks.iter().flatten().map(|n| n.addr().get()).collect();
        addrs.sort_unstable();
        addrs.dedup();
        assert_eq!(addrs.len(), blocks.len() * per_block, "nodes are distinct");

        // An emptied block stays, counted, and is reused before any other.
        free_all(&mut slab, &blocks[1]);
        assert_eq!(slab.blocks(), ramp_blocks + 2 * per_extent + 1);
        let refill: Vec<_> = (0..per_block).map(|_| slab.alloc()).collect();
        assert!(refill.iter().all(|n| blocks[1].contains(n)));
        assert_eq!(slab.blocks(), ramp_blocks + 2 * per_extent + 1);

        // The first extent empties: it stays, idle.
        free_all(&mut slab, &refill);
        for block in &blocks[..per_extent] {
            if !core::ptr::eq(block, &blocks[1]) {
                free_all(&mut slab, block);
            }
        }
        assert_eq!(slab.extents.len(), 3);
        assert_eq!(slab.blocks(), ramp_blocks + 2 * per_extent + 1);

        // The second empties too: the first goes back, with its blocks.
        for block in &blocks[per_extent..2 * per_extent] {
            free_all(&mut slab, block);
        }
        assert_eq!(slab.extents.len(), 2);
        assert_eq!(slab.blocks(), ramp_blocks + per_extent + 1);
        // Resident: the one block in use, and where pages cannot be given
        // back, the second extent's empty blocks.
        let resident = if slab.decommits { 1 } else { per_extent + 1 };
        assert_eq!(slab.bytes(), ramp_bytes + resident * size);
        assert_eq!(
            slab.bytes_reserved(),
            (per_extent + 1 - resident + per_extent - 1) * size
        );

        // New nodes take the idle extent's blocks, not new ones.
        let again: Vec<_> = (0..per_block).map(|_| slab.alloc()).collect();
        assert!(slab.idle.is_none());
        assert_eq!(slab.blocks(), ramp_blocks + per_extent + 1);

        // Emptied, the slab keeps its ramp and one idle extent.
        free_all(&mut slab, &again);
        free_all(&mut slab, &blocks[2 * per_extent]);
        free_all(&mut slab, &ramp);
        assert_eq!(slab.live(), 0);
        assert_eq!(slab.extents.len(), 1);
        assert_eq!(
            slab.blocks(),
            ramp_blocks + 1,
            "the ramp and a one-block idle extent"
        );
        let resident = if slab.decommits { 0 } else { 1 };
        assert_eq!(slab.bytes(), ramp_bytes + resident * size);
        // Its blocks never carved are carved after the empty one.
        let next: Vec<_> = (0..2 * per_block).map(|_| slab.alloc()).collect();
        assert_eq!(slab.extents.len(), 1);
        assert_eq!(slab.blocks(), ramp_blocks + 2);
        free_all(&mut slab, &next);
        slab.release();
        assert_eq!((slab.bytes(), slab.blocks()), (0, 0));
    }
}
