//! The page allocator inside one data segment: a binary buddy system.
//!
//! A segment is a power-of-two number of 4 KiB pages. Blocks are runs of
//! `2^order` pages aligned to their own size, so a block's buddy is found by
//! flipping one bit of its page index, and two free buddies merge back into
//! their parent. The tree's span pools ask for blocks of one order per size
//! class (so a span's header is found by masking an object's offset), and
//! leaves too large for any class get a block of their own.
//!
//! Everything lives in the segment itself, so every process sees the same
//! allocator: a header with a free list per order, then a one-byte *page
//! map* entry per page (`order + 1` at the first page of a block, with the
//! high bit set while the block is free; 0 inside a block), then the pages.
//! The header and the map occupy the first block. A free block links to its
//! neighbours in its free list through its first 16 bytes. Every access
//! happens under the area's lock.

use core::ptr::NonNull;
use core::sync::atomic::{AtomicU8, AtomicU64, Ordering::Relaxed};

/// Bytes per page.
pub(crate) const PAGE: usize = 4096;
/// The largest segment is `PAGE << MAX_ORDER` bytes (4 GiB).
pub(crate) const MAX_ORDER: u32 = 20;

const MAGIC: u64 = u64::from_le_bytes(*b"RADIXSEG");
const FREE: u8 = 0x80;

/// The start of every data segment.
#[repr(C)]
struct Header {
    magic: AtomicU64,
    /// log2 of the segment's pages.
    order: AtomicU64,
    /// log2 of the pages the header block covers.
    header_order: AtomicU64,
    /// Pages in free blocks.
    free_pages: AtomicU64,
    /// Per order, the first free block's page index plus one (0: none).
    free: [AtomicU64; MAX_ORDER as usize + 1],
}

/// The links of a free block, at its first page.
#[repr(C)]
struct FreeLinks {
    /// Page index plus one of the next and previous free block of the same
    /// order (0: none).
    next: AtomicU64,
    prev: AtomicU64,
}

/// The smallest `k` with `2^k >= n`.
pub(crate) fn ceil_log2(n: usize) -> u32 {
    n.max(1).next_power_of_two().trailing_zeros()
}

/// A mapped data segment, seen as a buddy allocator.
///
/// Every method must be called with the area lock held, on a segment that
/// [`init`](Self::init) has set up.
#[derive(Clone, Copy)]
pub(crate) struct Buddy {
    base: NonNull<u8>,
}

impl Buddy {
    /// The segment mapped at `base`.
    ///
    /// # Safety
    ///
    /// `base` is a mapped, page-aligned segment, valid while the value is
    /// used.
    pub(crate) unsafe fn at(base: NonNull<u8>) -> Self {
        Self { base }
    }

    /// Pages the header and page map of a segment of `2^order` pages need,
    /// as an order.
    pub(crate) fn header_order(order: u32) -> u32 {
        let bytes = size_of::<Header>() + (1usize << order);
        ceil_log2(bytes.div_ceil(PAGE))
    }

    /// The largest block order a segment of `2^order` pages can hand out.
    pub(crate) fn max_block_order(order: u32) -> Option<u32> {
        let header = Self::header_order(order);
        // The header takes the first block of its order; the upper half of
        // the segment is then free (if the header is not the whole of it).
        (header < order).then(|| order - 1)
    }

    fn header(&self) -> &Header {
        // SAFETY: the segment starts with its header (`at`'s contract), and
        // the header is all atomics, so shared references are sound.
        unsafe { self.base.cast::<Header>().as_ref() }
    }

    fn map(&self, page: usize) -> &AtomicU8 {
        // SAFETY: the page map follows the header, one byte per page, and
        // `page` is below the segment's page count.
        unsafe {
            self.base
                .byte_add(size_of::<Header>() + page)
                .cast::<AtomicU8>()
                .as_ref()
        }
    }

    fn links(&self, page: usize) -> &FreeLinks {
        // SAFETY: a free block's first page holds its links; `page` is
        // inside the segment and aligned to a page.
        unsafe { self.base.byte_add(page * PAGE).cast::<FreeLinks>().as_ref() }
    }

    /// Sets up a fresh segment of `2^order` pages: everything free but the
    /// header block.
    ///
    /// # Safety
    ///
    /// The segment is mapped, zeroed, `PAGE << order` bytes long, and not
    /// in use.
    pub(crate) unsafe fn init(&self, order: u32) {
        let h = self.header();
        h.magic.store(MAGIC, Relaxed);
        h.order.store(order.into(), Relaxed);
        let header_order = Self::header_order(order);
        h.header_order.store(header_order.into(), Relaxed);
        h.free_pages.store(0, Relaxed);
        // As if the whole segment were split down to the header block: the
        // upper half at each order is free. (The header block is never on
        // a free list, whose links would overwrite the header.)
        for o in header_order..order {
            self.push(1 << o, o);
        }
        self.map(0).store(header_order as u8 + 1, Relaxed);
    }

    /// Whether the header carries the segment magic.
    pub(crate) fn is_valid(&self) -> bool {
        self.header().magic.load(Relaxed) == MAGIC
    }

    /// Pages of the segment.
    pub(crate) fn pages(&self) -> usize {
        1 << self.header().order.load(Relaxed)
    }

    /// Pages in free blocks.
    pub(crate) fn free_pages(&self) -> usize {
        self.header().free_pages.load(Relaxed) as usize
    }

    /// Whether every block but the header is free.
    pub(crate) fn is_empty(&self) -> bool {
        let header = 1usize << self.header().header_order.load(Relaxed);
        self.free_pages() == self.pages() - header
    }

    fn push(&self, page: usize, order: u32) {
        let h = self.header();
        let head = h.free[order as usize].load(Relaxed);
        let links = self.links(page);
        links.next.store(head, Relaxed);
        links.prev.store(0, Relaxed);
        if head != 0 {
            self.links(head as usize - 1)
                .prev
                .store(page as u64 + 1, Relaxed);
        }
        h.free[order as usize].store(page as u64 + 1, Relaxed);
        self.map(page).store(FREE | (order as u8 + 1), Relaxed);
        h.free_pages.fetch_add(1 << order, Relaxed);
    }

    fn unlink(&self, page: usize, order: u32) {
        let h = self.header();
        let links = self.links(page);
        let (next, prev) = (links.next.load(Relaxed), links.prev.load(Relaxed));
        match prev {
            0 => h.free[order as usize].store(next, Relaxed),
            p => self.links(p as usize - 1).next.store(next, Relaxed),
        }
        if next != 0 {
            self.links(next as usize - 1).prev.store(prev, Relaxed);
        }
        self.map(page).store(order as u8 + 1, Relaxed);
        h.free_pages.fetch_sub(1 << order, Relaxed);
    }

    /// A block of `2^order` pages: its first page's index.
    pub(crate) fn alloc(&self, order: u32) -> Option<usize> {
        let h = self.header();
        let top = h.order.load(Relaxed) as u32;
        let from = (order..=top).find(|&o| h.free[o as usize].load(Relaxed) != 0)?;
        let page = h.free[from as usize].load(Relaxed) as usize - 1;
        self.unlink(page, from);
        // Split down, keeping the lower half and freeing the upper ones.
        for o in (order..from).rev() {
            self.push(page + (1 << o), o);
        }
        self.map(page).store(order as u8 + 1, Relaxed);
        Some(page)
    }

    /// Frees the block starting at `page`, merging it with free buddies.
    ///
    /// # Panics
    ///
    /// If `page` does not start an allocated block: a corrupt segment or a
    /// double free, which is a bug.
    pub(crate) fn free(&self, page: usize) {
        let entry = self.map(page).load(Relaxed);
        assert!(
            entry != 0 && entry & FREE == 0,
            "freeing page {page}, which does not start an allocated block"
        );
        let top = self.header().order.load(Relaxed) as u32;
        let (mut page, mut order) = (page, u32::from(entry) - 1);
        while order < top {
            let buddy = page ^ (1 << order);
            if self.map(buddy).load(Relaxed) != FREE | (order as u8 + 1) {
                break;
            }
            self.unlink(buddy, order);
            self.map(buddy).store(0, Relaxed);
            self.map(page).store(0, Relaxed);
            page = page.min(buddy);
            order += 1;
        }
        self.push(page, order);
    }

    /// The order of the allocated block starting at `page`.
    #[cfg(test)]
    pub(crate) fn block_order(&self, page: usize) -> Option<u32> {
        let entry = self.map(page).load(Relaxed);
        (entry != 0 && entry & FREE == 0).then(|| u32::from(entry) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::alloc::{Layout, alloc_zeroed, dealloc};

    /// A zeroed, page-aligned heap segment, freed on drop (also when a
    /// test panics).
    struct HeapSegment {
        base: NonNull<u8>,
        layout: Layout,
    }

    impl Drop for HeapSegment {
        fn drop(&mut self) {
            // SAFETY: allocated in `with_segment` with this layout.
            unsafe { dealloc(self.base.as_ptr(), self.layout) };
        }
    }

    fn with_segment(order: u32, f: impl FnOnce(Buddy)) {
        let layout = Layout::from_size_align(PAGE << order, PAGE).unwrap();
        // SAFETY: non-zero size.
        let base = NonNull::new(unsafe { alloc_zeroed(layout) }).unwrap();
        let segment = HeapSegment { base, layout };
        // SAFETY: a zeroed, page-aligned allocation of the segment's size,
        // alive until `segment` drops.
        let buddy = unsafe { Buddy::at(segment.base) };
        // SAFETY: as above.
        unsafe { buddy.init(order) };
        f(buddy);
    }

    #[test]
    fn blocks_split_align_and_merge_back() {
        with_segment(6, |b| {
            assert!(b.is_valid() && b.is_empty());
            assert_eq!(Buddy::header_order(6), 0);
            assert_eq!(b.free_pages(), 63);
            let mut got = Vec::new();
            for order in [0, 3, 1, 0, 2, 4, 0] {
                let page = b.alloc(order).unwrap();
                assert_eq!(page % (1 << order), 0, "aligned to its size");
                assert_eq!(b.block_order(page), Some(order));
                got.push(page);
            }
            let mut sorted = got.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), got.len(), "distinct blocks");
            assert!(!got.contains(&0), "the header block is never handed out");
            assert!(b.alloc(5).is_none(), "the upper half is split");
            for (i, &page) in got.iter().enumerate() {
                if i % 2 == 0 {
                    b.free(page);
                }
            }
            for (i, &page) in got.iter().enumerate() {
                if i % 2 == 1 {
                    b.free(page);
                }
            }
            assert!(b.is_empty());
            assert_eq!(b.alloc(5), Some(32), "merged back into the upper half");
        });
    }

    #[test]
    fn large_segments_reserve_their_page_map() {
        // 2^16 pages: a 64 KiB map plus the header needs 17 pages: order 5.
        assert_eq!(Buddy::header_order(16), 5);
        assert_eq!(Buddy::max_block_order(16), Some(15));
        assert_eq!(Buddy::max_block_order(0), None);
        assert_eq!(ceil_log2(1), 0);
        assert_eq!(ceil_log2(17), 5);
    }

    #[test]
    #[should_panic(expected = "does not start an allocated block")]
    fn double_free_is_caught() {
        with_segment(3, |b| {
            let page = b.alloc(1).unwrap();
            b.free(page);
            b.free(page);
        });
    }
}
