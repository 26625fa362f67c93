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
//! block, as the spare below does.
//!
//! Each block is aligned to its own size, and a small header at the start of
//! the block keeps that block's free list and live count. The block a node
//! belongs to is found by comparing the node's address with the (at most
//! six) ramp blocks, and otherwise by masking it with the full block size. Blocks with room
//! are chained in a *partial* list; allocation takes from its head, and a
//! freed node goes back to its own block. When a block's last node is freed
//! the block is returned to the system, except for one empty block kept as a
//! spare so that a tree hovering at a block boundary does not allocate and
//! free a block on every operation. Memory usage therefore follows the live
//! nodes, rounded up to whole blocks.

use core::alloc::Layout;
use core::ptr::NonNull;
use std::alloc::{alloc, dealloc, handle_alloc_error};

use super::PoolSpec;

/// Nodes per block, at least.
const MIN_NODES_PER_BLOCK: usize = 32;
/// Smallest full block.
const MIN_BLOCK_BYTES: usize = 8 * 1024;
/// Most ramp blocks a slab starts with.
const MAX_RAMP: usize = 6;

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
    /// Position in `Slab::blocks` (full blocks only).
    index: usize,
}

/// The slab of one node pool.
pub(crate) struct Slab {
    node: Layout,
    /// A full block.
    block: Layout,
    /// Offset of the first node, past the header.
    first_node: usize,
    /// Nodes in a full block.
    per_block: usize,
    /// Ramp blocks this slab starts with; block `i` is
    /// `block.size() >> (ramp_len - i)` bytes.
    ramp_len: usize,
    /// The ramp blocks allocated so far, in order.
    ramp: [Option<NonNull<BlockHeader>>; MAX_RAMP],
    /// Every full block in use.
    blocks: Vec<NonNull<BlockHeader>>,
    /// Head of the list of blocks with room.
    partial: Option<NonNull<BlockHeader>>,
    /// An empty block kept for reuse.
    spare: Option<NonNull<u8>>,
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
        let mut ramp_len = 0;
        while ramp_len < MAX_RAMP && size >> (ramp_len + 1) >= smallest {
            ramp_len += 1;
        }
        Self {
            node,
            block,
            first_node,
            per_block: (size - first_node) / node.size(),
            ramp_len,
            ramp: [None; MAX_RAMP],
            blocks: Vec::new(),
            partial: None,
            spare: None,
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

    /// Blocks held, ramp blocks and the spare included.
    pub(crate) fn blocks(&self) -> usize {
        self.blocks.len() + self.spare.is_some() as usize + self.ramp_blocks().count()
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        let full = self.blocks.len() + self.spare.is_some() as usize;
        full * self.block.size() + self.ramp_blocks().map(|(_, l)| l.size()).sum::<usize>()
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

    /// Returns `node` to its block, and the block to the system when it
    /// empties (beyond one spare).
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
        let blocks = core::mem::take(&mut self.blocks);
        for block in blocks
            .into_iter()
            .map(NonNull::cast)
            .chain(self.spare.take())
        {
            // SAFETY: every block was allocated with `self.block`.
            unsafe { dealloc(block.as_ptr(), self.block) };
        }
        self.partial = None;
        self.live = 0;
    }

    #[cold]
    fn new_block(&mut self) -> NonNull<BlockHeader> {
        let ramp_used = self.ramp_blocks().count();
        let (block, capacity, index) = if ramp_used < self.ramp_len {
            let size = self.block.size() >> (self.ramp_len - ramp_used);
            let layout = Layout::from_size_align(size, size).expect("ramp layout");
            let block = Self::alloc_block(layout);
            self.ramp[ramp_used] = Some(block);
            (
                block,
                (size - self.first_node) / self.node.size(),
                usize::MAX,
            )
        } else {
            let block = self
                .spare
                .take()
                .map_or_else(|| Self::alloc_block(self.block), NonNull::cast);
            self.blocks.push(block);
            (block, self.per_block, self.blocks.len() - 1)
        };
        // SAFETY: a fresh block, large and aligned enough for its header and
        // `capacity` nodes.
        unsafe {
            block.write(BlockHeader {
                free: None,
                prev: None,
                next: None,
                live: 0,
                untouched: capacity,
                capacity,
                index,
            });
        }
        self.link(block);
        block
    }

    fn alloc_block(layout: Layout) -> NonNull<BlockHeader> {
        // SAFETY: block layouts have a non-zero size.
        NonNull::new(unsafe { alloc(layout) })
            .unwrap_or_else(|| handle_alloc_error(layout))
            .cast()
    }

    /// Takes an empty block out of use: keeps it as the spare or frees it.
    ///
    /// # Safety
    ///
    /// `block` is a live block of this slab with no live node, not in the
    /// partial list.
    unsafe fn retire(&mut self, block: NonNull<BlockHeader>) {
        // SAFETY: caller's contract; the block moved into the vacated
        // position gets its index updated.
        unsafe {
            let index = (*block.as_ptr()).index;
            self.blocks.swap_remove(index);
            if let Some(&moved) = self.blocks.get(index) {
                (*moved.as_ptr()).index = index;
            }
            if self.spare.is_none() {
                self.spare = Some(block.cast());
            } else {
                dealloc(block.as_ptr().cast(), self.block);
            }
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

    #[test]
    fn empty_blocks_go_back_keeping_one_spare() {
        let mut slab = Slab::new(SMALL, usize::MAX);
        let ramp = fill_ramp(&mut slab);
        let ramp_bytes = slab.bytes();
        let ramp_blocks = slab.blocks();
        let per_block = slab.per_block;
        let nodes: Vec<_> = (0..3 * per_block).map(|_| slab.alloc()).collect();
        assert_eq!(slab.blocks(), ramp_blocks + 3);
        assert_eq!(slab.live(), ramp.len() + 3 * per_block);
        // Nodes are distinct and inside their blocks.
        let mut addrs: Vec<usize> = nodes.iter().map(|n| n.addr().get()).collect();
        addrs.sort_unstable();
        addrs.dedup();
        assert_eq!(addrs.len(), nodes.len());
        // Free the first two blocks' nodes: one becomes the spare, one is
        // returned.
        for &n in &nodes[..2 * per_block] {
            // SAFETY: allocated above, not used again.
            unsafe { slab.free(n) };
        }
        assert_eq!(slab.blocks(), ramp_blocks + 2);
        assert_eq!(slab.live(), ramp.len() + per_block);
        // Reuse: the spare serves before a new block is allocated.
        let again: Vec<_> = (0..per_block).map(|_| slab.alloc()).collect();
        assert_eq!(slab.blocks(), ramp_blocks + 2);
        // Freeing in any order, a block is reused as soon as it has room.
        // SAFETY: allocated above, not used again.
        unsafe { slab.free(nodes[2 * per_block + 5]) };
        let refill = slab.alloc();
        assert_eq!(refill, nodes[2 * per_block + 5]);
        for &n in again.iter().chain(&nodes[2 * per_block..]) {
            if n != nodes[2 * per_block + 5] {
                // SAFETY: allocated above, freed once.
                unsafe { slab.free(n) };
            }
        }
        // SAFETY: allocated above, freed once.
        unsafe {
            slab.free(refill);
            ramp.iter().for_each(|&n| slab.free(n));
        }
        assert_eq!(slab.live(), 0);
        assert_eq!(
            slab.blocks(),
            ramp_blocks + 1,
            "the ramp and the spare remain"
        );
        assert_eq!(slab.bytes(), ramp_bytes + slab.block_size());
        slab.release();
        assert_eq!(slab.bytes(), 0);
    }
}
