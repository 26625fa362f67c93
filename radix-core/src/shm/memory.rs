//! [`SharedMemory`]: a tree's memory back end inside an area.
//!
//! Each tree keeps its own *pools* in its slot of the control segment, one
//! per node pool of its configuration and one per leaf size class, so that
//! allocating and freeing a node needs only the tree's write lock. A pool
//! carves equal objects out of *spans*: blocks of pages from the area's
//! buddy allocators, aligned to their size, each starting with a header
//! (its free list, counts and list links), exactly as the local slab carves
//! nodes out of blocks. A span with room is on its pool's *partial* list,
//! a full one on the *full* list; an emptied span goes back to the area,
//! except one kept per pool as a spare. Leaves larger than the biggest
//! class get a block of their own, linked into the tree's list of large
//! leaves. Only taking or returning blocks takes the area lock.
//!
//! Because every span and large block is on a list in the tree's slot,
//! [`Memory::release_all`] returns all of a tree's memory without walking
//! the tree, and a destroyed tree leaves nothing behind.
//!
//! A stored word is an [`Offset`]: the tagged offset from the area's base,
//! resolved with one add to the base this process mapped the area at.

use core::alloc::Layout;
use core::fmt;
use core::num::NonZeroUsize;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::ShmError;
use super::area::AreaInner;
use super::buddy::{PAGE, ceil_log2};
use super::control::{LEAF_CLASSES, NODE_POOLS, POOLS, PoolState, TreeSlot};
use crate::mem::{Memory, PoolSpec};
use crate::ptr::StoredRef;

/// Bytes at the start of a span, before its first object.
const SPAN_HEADER: usize = 64;
/// Spans hold about this many objects, within the bounds below.
const OBJECTS_PER_SPAN: usize = 16;
/// The largest span, unless one object needs more.
const MAX_SPAN: usize = 64 << 10;
/// Bytes at the start of a large leaf's block.
const LARGE_HEADER: usize = 64;

/// What a shared tree stores for a node or a leaf: the offset of its
/// (tagged) address from the area's base.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Offset(NonZeroUsize);

// SAFETY: a transparent `NonZeroUsize`.
unsafe impl StoredRef for Offset {}

impl crate::sealed::Sealed for Offset {}

impl Offset {
    /// The offset as a number.
    pub fn get(self) -> usize {
        self.0.get()
    }

    /// An offset from its number; `None` for 0.
    pub(crate) fn new(offset: u64) -> Option<Self> {
        NonZeroUsize::new(offset as usize).map(Self)
    }
}

impl fmt::Debug for Offset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Offset({:#x})", self.0)
    }
}

/// The header at the start of every span.
#[repr(C)]
struct Span {
    /// Objects the span holds.
    capacity: AtomicU64,
    /// Objects handed out and not freed.
    live: AtomicU64,
    /// Objects at the end never handed out.
    untouched: AtomicU64,
    /// Offset of the first free object (0: none); each holds the next.
    free: AtomicU64,
    /// Neighbours in the partial or full list (0: none).
    prev: AtomicU64,
    next: AtomicU64,
}

/// The header at the start of a large leaf's block.
#[repr(C)]
struct Large {
    prev: AtomicU64,
    next: AtomicU64,
}

/// Sizes of the objects of one pool and of its spans.
pub(crate) struct PoolShape {
    pub(crate) object_size: usize,
    pub(crate) align: usize,
    pub(crate) span_order: u32,
}

impl PoolShape {
    pub(crate) fn new(size: usize, align: usize) -> Self {
        let object_size = size.max(8).next_multiple_of(align.max(8));
        let first = SPAN_HEADER.next_multiple_of(align);
        let span = (first + OBJECTS_PER_SPAN * object_size)
            .next_power_of_two()
            .clamp(PAGE, MAX_SPAN)
            .max((first + object_size).next_power_of_two());
        Self {
            object_size,
            align,
            span_order: ceil_log2(span / PAGE),
        }
    }

    fn first_object(&self) -> usize {
        SPAN_HEADER.next_multiple_of(self.align)
    }

    fn capacity(&self) -> usize {
        ((PAGE << self.span_order) - self.first_object()) / self.object_size
    }
}

/// The leaf class serving `layout`, if any.
pub(crate) fn leaf_class(layout: Layout) -> Option<usize> {
    let size = layout.size().max(8);
    LEAF_CLASSES
        .iter()
        .position(|&c| c >= size && c % layout.align() == 0)
}

/// Writes a fresh tree's pool shapes: the node pools of `specs`, then the
/// leaf classes.
pub(crate) fn init_pools(slot: &TreeSlot, specs: &[PoolSpec]) {
    for (i, pool) in slot.pools.iter().enumerate() {
        let shape = if i < NODE_POOLS {
            specs.get(i).map(|s| PoolShape::new(s.size, s.align))
        } else {
            LEAF_CLASSES
                .get(i - NODE_POOLS)
                .map(|&size| PoolShape::new(size, 8))
        };
        let (size, align, order) = shape.map_or((0, 0, 0), |s| {
            (
                s.object_size as u64,
                s.align as u64,
                u64::from(s.span_order),
            )
        });
        pool.object_size.store(size, Relaxed);
        pool.align.store(align, Relaxed);
        pool.span_order.store(order, Relaxed);
        for field in [
            &pool.partial,
            &pool.full,
            &pool.spare,
            &pool.available,
            &pool.live,
        ] {
            field.store(0, Relaxed);
        }
    }
    slot.large.store(0, Relaxed);
}

/// A shared tree's memory: its pools in the area, reached through the
/// area's mapping in this process.
///
/// Made by a shared tree's guard for the time it holds the tree's lock; it
/// cannot be built otherwise.
pub struct SharedMemory {
    base: NonNull<u8>,
    area: NonNull<AreaInner>,
    tree: NonNull<TreeSlot>,
    /// Objects reserved per pool and not yet allocated, so that freeing
    /// meanwhile never gives back a span they were counted in.
    reserved: [u8; POOLS],
}

// SAFETY: through `&SharedMemory` the engine only reads the area (nodes,
// leaves, pool and span headers) and touches the tree slot's atomics
// (`user_word`, `set_user_word`); everything that writes plain memory
// (`take`, `put`, `add_span`, the `Memory` allocation methods) takes
// `&mut self`. The tree's lock keeps writers of other processes out
// while any guard lives, so threads of one process reading through
// shared references are the readers other processes already are. This
// makes a shared tree's views, guards and iterators `Sync` (and its
// iterators `Send`) when its values are, as std's `RwLock` guards and
// `btree_map::Iter` are. It is not `Send`: it lives inside a guard,
// whose lock belongs to the thread that took it.
unsafe impl Sync for SharedMemory {}

impl SharedMemory {
    /// The memory of the tree in `tree`.
    ///
    /// # Safety
    ///
    /// `area` and the slot outlive the value, and the caller holds the
    /// tree's lock (the write lock for any allocating call).
    pub(crate) unsafe fn new(area: &AreaInner, tree: &TreeSlot) -> Self {
        Self {
            base: area.base(),
            area: NonNull::from(area),
            tree: NonNull::from(tree),
            reserved: [0; POOLS],
        }
    }

    fn area(&self) -> &AreaInner {
        // SAFETY: `new`'s contract: the area outlives this value.
        unsafe { self.area.as_ref() }
    }

    fn slot(&self) -> &TreeSlot {
        // SAFETY: `new`'s contract: the slot outlives this value.
        unsafe { self.tree.as_ref() }
    }

    fn pool(&self, pool: usize) -> &PoolState {
        &self.slot().pools[pool]
    }

    fn shape(&self, pool: usize) -> PoolShape {
        let p = self.pool(pool);
        PoolShape {
            object_size: p.object_size.load(Relaxed) as usize,
            align: p.align.load(Relaxed) as usize,
            span_order: p.span_order.load(Relaxed) as u32,
        }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn at(&self, offset: usize) -> NonNull<u8> {
        // SAFETY: every offset this allocator handles lies inside a segment
        // mapped in the area's reservation, which `base` starts.
        unsafe { self.base.byte_add(offset) }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn offset_of(&self, ptr: NonNull<u8>) -> usize {
        ptr.addr().get() - self.base.addr().get()
    }

    fn span(&self, offset: u64) -> &Span {
        // SAFETY: `offset` is a live span of this tree; its header is all
        // atomics.
        unsafe { self.at(offset as usize).cast::<Span>().as_ref() }
    }

    fn large(&self, offset: u64) -> &Large {
        // SAFETY: `offset` is a live large block of this tree.
        unsafe { self.at(offset as usize).cast::<Large>().as_ref() }
    }

    /// Pushes span `offset` on the list whose head is `head`.
    fn link(&self, head: &AtomicU64, offset: u64) {
        let span = self.span(offset);
        let first = head.load(Relaxed);
        span.prev.store(0, Relaxed);
        span.next.store(first, Relaxed);
        if first != 0 {
            self.span(first).prev.store(offset, Relaxed);
        }
        head.store(offset, Relaxed);
    }

    /// Takes span `offset` off the list whose head is `head`.
    fn unlink(&self, head: &AtomicU64, offset: u64) {
        let span = self.span(offset);
        let (prev, next) = (span.prev.load(Relaxed), span.next.load(Relaxed));
        match prev {
            0 => head.store(next, Relaxed),
            p => self.span(p).next.store(next, Relaxed),
        }
        if next != 0 {
            self.span(next).prev.store(prev, Relaxed);
        }
    }

    /// Puts a span with room on the pool's partial list: the spare, or a
    /// new block from the area.
    fn add_span(&mut self, pool: usize) -> Result<(), ShmError> {
        let p = self.pool(pool);
        let spare = p.spare.swap(0, Relaxed);
        let offset = if spare != 0 {
            spare
        } else {
            let shape = self.shape(pool);
            let offset = self.area().alloc_block(shape.span_order)? as u64;
            let span = self.span(offset);
            let capacity = shape.capacity() as u64;
            span.capacity.store(capacity, Relaxed);
            span.live.store(0, Relaxed);
            span.untouched.store(capacity, Relaxed);
            span.free.store(0, Relaxed);
            offset
        };
        let p = self.pool(pool);
        self.link(&p.partial, offset);
        let span = self.span(offset);
        let room = span.capacity.load(Relaxed) - span.live.load(Relaxed);
        p.available.fetch_add(room, Relaxed);
        Ok(())
    }

    /// An object of `pool` from a span with room.
    fn take(&mut self, pool: usize) -> NonNull<u8> {
        if self.pool(pool).partial.load(Relaxed) == 0 {
            // Only a spare can serve without the area: a reserved object
            // whose span was emptied and kept.
            assert!(
                self.pool(pool).spare.load(Relaxed) != 0,
                "shared pool {pool} has no reserved object left: a bug in the caller"
            );
            self.add_span(pool).expect("a spare needs no allocation");
        }
        let shape = self.shape(pool);
        let p = self.pool(pool);
        let offset = p.partial.load(Relaxed);
        let span = self.span(offset);
        let free = span.free.load(Relaxed);
        let object = if free != 0 {
            // SAFETY: a free object holds the offset of the next one.
            let next = unsafe { self.at(free as usize).cast::<u64>().read() };
            span.free.store(next, Relaxed);
            free
        } else {
            let untouched = span.untouched.load(Relaxed);
            let index = span.capacity.load(Relaxed) - untouched;
            span.untouched.store(untouched - 1, Relaxed);
            offset + (shape.first_object() + index as usize * shape.object_size) as u64
        };
        span.live.fetch_add(1, Relaxed);
        p.available.fetch_sub(1, Relaxed);
        p.live.fetch_add(1, Relaxed);
        if span.free.load(Relaxed) == 0 && span.untouched.load(Relaxed) == 0 {
            self.unlink(&p.partial, offset);
            self.link(&p.full, offset);
        }
        self.reserved[pool] = self.reserved[pool].saturating_sub(1);
        self.at(object as usize)
    }

    /// Returns an object of `pool` to its span.
    fn put(&mut self, pool: usize, object: NonNull<u8>) {
        let shape = self.shape(pool);
        let offset = self.offset_of(object) as u64;
        let span_offset = offset & !((PAGE << shape.span_order) as u64 - 1);
        let p = self.pool(pool);
        let span = self.span(span_offset);
        let was_full = span.free.load(Relaxed) == 0 && span.untouched.load(Relaxed) == 0;
        // SAFETY: the object is dead; its first word holds the link.
        unsafe { object.cast::<u64>().write(span.free.load(Relaxed)) };
        span.free.store(offset, Relaxed);
        let live = span.live.fetch_sub(1, Relaxed) - 1;
        p.live.fetch_sub(1, Relaxed);
        p.available.fetch_add(1, Relaxed);
        if was_full {
            self.unlink(&p.full, span_offset);
            self.link(&p.partial, span_offset);
        }
        let capacity = span.capacity.load(Relaxed);
        let keeps_reserve =
            p.available.load(Relaxed).saturating_sub(capacity) >= u64::from(self.reserved[pool]);
        if live == 0 && keeps_reserve {
            self.unlink(&p.partial, span_offset);
            p.available.fetch_sub(capacity, Relaxed);
            let spare = p.spare.swap(span_offset, Relaxed);
            if spare != 0 {
                // A block the area cannot take back (its lock poisoned)
                // stays allocated: a leak, never a fault.
                let _ = self.area().free_blocks([spare as usize]);
            }
        }
    }

    /// Caller-defined word `index` of the tree.
    pub(crate) fn user_word(&self, index: usize) -> u64 {
        self.slot().user[index].load(Relaxed)
    }

    /// Sets caller-defined word `index` of the tree.
    pub(crate) fn set_user_word(&self, index: usize, value: u64) {
        self.slot().user[index].store(value, Relaxed);
    }

    /// After an operation that failed half-way through reserving: forgets
    /// the reservations it did not use, and gives the area back every span
    /// with no live object, the pools' spares included.
    ///
    /// Without the second step a refused change could leave the area
    /// larger than it found it: an insert that got a span for its value
    /// leaf, and then no room for a node, would keep that span (emptied,
    /// as the spare) and the segment made for it. Spans the operation
    /// added are all empty now, since reserving takes no object and the
    /// value leaf is freed again; returning them lets the area destroy a
    /// segment it made for them. Spares from earlier operations go too,
    /// which only makes the area smaller. The walk covers each pool's
    /// partial list, on this rare path only.
    pub(crate) fn clear_reservations(&mut self) {
        self.reserved = [0; POOLS];
        let mut blocks = Vec::new();
        for pool in 0..POOLS {
            let p = self.pool(pool);
            let spare = p.spare.swap(0, Relaxed);
            if spare != 0 {
                blocks.push(spare as usize);
            }
            let mut offset = p.partial.load(Relaxed);
            while offset != 0 {
                let span = self.span(offset);
                let next = span.next.load(Relaxed);
                if span.live.load(Relaxed) == 0 {
                    let capacity = span.capacity.load(Relaxed);
                    let p = self.pool(pool);
                    self.unlink(&p.partial, offset);
                    p.available.fetch_sub(capacity, Relaxed);
                    blocks.push(offset as usize);
                }
                offset = next;
            }
        }
        if !blocks.is_empty() {
            // Blocks the area cannot take back (its lock poisoned) stay
            // allocated: a leak, never a fault.
            let _ = self.area().free_blocks(blocks);
        }
    }

    /// The bytes before a large leaf in its block.
    fn large_header(align: usize) -> usize {
        LARGE_HEADER.next_multiple_of(align)
    }
}

impl crate::sealed::Sealed for SharedMemory {}

// SAFETY: objects are disjoint pieces of spans, and large leaves whole
// blocks, that this tree owns until it frees them; the area maps them at
// their offset in every process. `to_ref` and `resolve` subtract and add
// the same page-aligned base, so low bits pass through unchanged.
unsafe impl Memory for SharedMemory {
    type Ref = Offset;
    type Error = ShmError;
    const FALLIBLE: bool = true;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn to_ref(&self, tagged: NonNull<u8>) -> Offset {
        Offset(NonZeroUsize::new(self.offset_of(tagged)).expect("an area object at offset 0"))
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn resolve(&self, stored: Offset) -> NonNull<u8> {
        self.at(stored.get())
    }

    fn reserve_nodes(&mut self, pool: usize, count: usize) -> Result<(), ShmError> {
        while (self.pool(pool).available.load(Relaxed) as usize) < count {
            self.add_span(pool)?;
        }
        self.reserved[pool] = self.reserved[pool].max(count as u8);
        Ok(())
    }

    #[inline]
    fn alloc_node(&mut self, pool: usize) -> NonNull<u8> {
        self.take(pool)
    }

    #[inline]
    unsafe fn free_node(&mut self, pool: usize, node: NonNull<u8>) {
        self.put(pool, node);
    }

    fn alloc_leaf(&mut self, layout: Layout) -> Result<NonNull<u8>, ShmError> {
        if layout.size() == 0 {
            return Ok(NonNull::<u8>::dangling()
                .map_addr(|_| NonZeroUsize::new(layout.align()).expect("align is non-zero")));
        }
        if let Some(class) = leaf_class(layout) {
            let pool = NODE_POOLS + class;
            self.reserve_nodes(pool, 1)?;
            return Ok(self.take(pool));
        }
        let header = Self::large_header(layout.align());
        let bytes = layout.size() + header;
        let order = ceil_log2(bytes.div_ceil(PAGE));
        let max = self.area().max_block_order();
        if order > max || layout.align() > PAGE {
            return Err(ShmError::TooLarge {
                size: layout.size(),
                max: (PAGE << max) - header,
            });
        }
        let block = self.area().alloc_block(order)? as u64;
        let slot = self.slot();
        let first = slot.large.load(Relaxed);
        let large = self.large(block);
        large.prev.store(0, Relaxed);
        large.next.store(first, Relaxed);
        if first != 0 {
            self.large(first).prev.store(block, Relaxed);
        }
        slot.large.store(block, Relaxed);
        Ok(self.at(block as usize + header))
    }

    unsafe fn free_leaf(&mut self, leaf: NonNull<u8>, layout: Layout) {
        if layout.size() == 0 {
            return;
        }
        if let Some(class) = leaf_class(layout) {
            self.put(NODE_POOLS + class, leaf);
            return;
        }
        let block = (self.offset_of(leaf) - Self::large_header(layout.align())) as u64;
        let large = self.large(block);
        let (prev, next) = (large.prev.load(Relaxed), large.next.load(Relaxed));
        match prev {
            0 => self.slot().large.store(next, Relaxed),
            p => self.large(p).next.store(next, Relaxed),
        }
        if next != 0 {
            self.large(next).prev.store(prev, Relaxed);
        }
        let _ = self.area().free_blocks([block as usize]);
    }

    unsafe fn release_all(&mut self) {
        let mut blocks = Vec::new();
        for pool in 0..POOLS {
            let p = self.pool(pool);
            for head in [&p.partial, &p.full] {
                let mut span = head.load(Relaxed);
                while span != 0 {
                    blocks.push(span as usize);
                    span = self.span(span).next.load(Relaxed);
                }
                head.store(0, Relaxed);
            }
            let spare = p.spare.swap(0, Relaxed);
            if spare != 0 {
                blocks.push(spare as usize);
            }
            p.available.store(0, Relaxed);
            p.live.store(0, Relaxed);
        }
        let mut large = self.slot().large.swap(0, Relaxed);
        while large != 0 {
            blocks.push(large as usize);
            large = self.large(large).next.load(Relaxed);
        }
        self.reserved = [0; POOLS];
        let _ = self.area().free_blocks(blocks);
    }

    fn releases_leaves(&self) -> bool {
        true
    }

    fn bytes_held(&self) -> usize {
        self.area().control().total_size.load(Relaxed) as usize
    }

    fn live_nodes(&self, pool: usize) -> usize {
        self.pool(pool).live.load(Relaxed) as usize
    }

    fn serves(&self, pools: &[PoolSpec]) -> bool {
        pools.len() <= NODE_POOLS
            && pools.iter().enumerate().all(|(i, spec)| {
                let shape = self.shape(i);
                shape.object_size >= spec.size && shape.align >= spec.align
            })
    }
}

impl fmt::Debug for SharedMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedMemory")
            .field("bytes_held", &self.bytes_held())
            .field(
                "live",
                &(0..POOLS).map(|p| self.live_nodes(p)).collect::<Vec<_>>(),
            )
            .finish()
    }
}
