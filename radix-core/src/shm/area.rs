//! The area: a control segment, data segments made on demand, and the
//! process-local view of them.

use core::fmt;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Mutex};

use rustix::fs::Mode;
use rustix::mm::{MapFlags, ProtFlags};
use rustix::shm;

use super::ShmError;
use super::buddy::{Buddy, MAX_ORDER, PAGE, ceil_log2};
use super::control::{
    Control, MAGIC, MAX_TREES, SEGMENT_FREE, SEGMENT_LIVE, SEGMENT_SLOTS, TreeSlot, VERSION,
    control_size,
};
use super::handle::AreaHandle;
use super::lock::{PidMutexGuard, my_pid};
use super::segment::{Backing, Reservation, unlink};

/// The smallest segment size an area may be given.
const MIN_SEGMENT: usize = 64 << 10;
/// The largest segment size an area may be given.
const MAX_SEGMENT: usize = PAGE << MAX_ORDER;
/// The most address space a heap-backed area may take.
const MAX_HEAP_RESERVATION: usize = 1 << 30;

/// How an area is shaped: a builder, with defaults that suit most uses.
///
/// ```
/// use radix_core::shm::AreaOptions;
/// let options = AreaOptions::default()
///     .init_segment_size(256 << 10)
///     .max_segment_size(8 << 20)
///     .size_limit(Some(64 << 20));
/// assert_eq!(options.get_size_limit(), Some(64 << 20));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AreaOptions {
    init_segment_size: usize,
    max_segment_size: usize,
    size_limit: Option<usize>,
    max_segments: usize,
    max_trees: usize,
    backing: Backing,
}

impl Default for AreaOptions {
    /// Segments from 1 MiB, each an eighth of the area (a power of two) up
    /// to 256 MiB, no size limit, up to 128 data segments (16 GiB) and 8
    /// trees, in POSIX shared memory.
    fn default() -> Self {
        Self {
            init_segment_size: 1 << 20,
            max_segment_size: 256 << 20,
            size_limit: None,
            max_segments: 128,
            max_trees: 8,
            backing: Backing::SharedMemory,
        }
    }
}

impl AreaOptions {
    /// The size of the first data segment: a power of two, at least 64 KiB.
    /// Each new segment is an eighth of the area's size, rounded down to a
    /// power of two, and at least this and at most the maximum, so that
    /// the area stays within an eighth of what it held when it grew.
    #[must_use]
    pub fn init_segment_size(mut self, bytes: usize) -> Self {
        self.init_segment_size = bytes;
        self
    }

    /// The largest segment: a power of two between the initial size and
    /// 4 GiB. It also bounds a single allocation to half of it, and each
    /// process reserves `max_segments + 1` times it of address space.
    #[must_use]
    pub fn max_segment_size(mut self, bytes: usize) -> Self {
        self.max_segment_size = bytes;
        self
    }

    /// A limit on the area's total size (every segment, the control segment
    /// included). An allocation that would pass it fails with
    /// [`ShmError::AreaFull`] instead of growing the area.
    #[must_use]
    pub fn size_limit(mut self, bytes: Option<usize>) -> Self {
        self.size_limit = bytes;
        self
    }

    /// The most data segments alive at once, 1 to 255.
    #[must_use]
    pub fn max_segments(mut self, count: usize) -> Self {
        self.max_segments = count;
        self
    }

    /// The most trees alive in the area at once, 1 to 64. Each costs about
    /// 2 KiB of the control segment.
    #[must_use]
    pub fn max_trees(mut self, count: usize) -> Self {
        self.max_trees = count;
        self
    }

    /// Where the memory comes from.
    #[must_use]
    pub fn backing(mut self, backing: Backing) -> Self {
        self.backing = backing;
        self
    }

    /// The size limit set, if any.
    pub fn get_size_limit(&self) -> Option<usize> {
        self.size_limit
    }

    fn validate(&self) -> Result<(), ShmError> {
        let bad = |why: String| Err(ShmError::InvalidOptions(why));
        let (init, max) = (self.init_segment_size, self.max_segment_size);
        if !init.is_power_of_two() || !max.is_power_of_two() {
            return bad(format!(
                "segment sizes must be powers of two (init {init}, max {max})"
            ));
        }
        if init < MIN_SEGMENT || init > max || !(4 * MIN_SEGMENT..=MAX_SEGMENT).contains(&max) {
            return bad(format!(
                "need 64 KiB <= init_segment_size ({init}) <= max_segment_size ({max}), \
                 256 KiB <= max_segment_size <= 4 GiB"
            ));
        }
        if !(1..SEGMENT_SLOTS).contains(&self.max_segments) {
            return bad(format!(
                "max_segments must be 1 to {} (got {})",
                SEGMENT_SLOTS - 1,
                self.max_segments
            ));
        }
        if !(1..=MAX_TREES).contains(&self.max_trees) {
            return bad(format!(
                "max_trees must be 1 to {MAX_TREES} (got {})",
                self.max_trees
            ));
        }
        let control = control_size(self.max_trees);
        if self.size_limit.is_some_and(|limit| limit < control) {
            return bad(format!(
                "size_limit must leave room for the {control}-byte control segment"
            ));
        }
        match self.reservation_len() {
            None => bad("the address range needed overflows".into()),
            Some(len) if self.backing == Backing::Heap && len > MAX_HEAP_RESERVATION => {
                bad(format!(
                    "a heap-backed area may span at most 1 GiB ({len} bytes asked); \
                 give it a size_limit"
                ))
            }
            Some(_) => Ok(()),
        }
    }

    /// Data segment slots: fewer when a size limit caps the area.
    fn slots(&self) -> usize {
        let capped = self.size_limit.map_or(usize::MAX, |limit| {
            limit.div_ceil(self.init_segment_size) + 1
        });
        self.max_segments.min(capped)
    }

    fn reservation_len(&self) -> Option<usize> {
        (self.slots() + 1).checked_mul(self.max_segment_size)
    }
}

/// An area of shared memory holding trees, in this process.
///
/// Clones share one mapping, and may be used from any thread. A process
/// made by `fork` must attach the area itself rather than use a handle it
/// inherited: the locks record who holds them by the pid this process had
/// when it opened the area. (`exec` starts afresh and is fine.) The process that created the area unlinks its
/// segments when its last clone is dropped or [`destroy`](Area::destroy)ed;
/// a process that attached unmaps them on drop. See [`crate::shm`] for the
/// whole story and an example.
#[derive(Clone)]
pub struct Area {
    pub(crate) inner: Arc<AreaInner>,
}

/// An area's base in this process and where its mapped prefix ends,
/// copied out of the [`AreaInner`] so that a concurrent tree's reader
/// resolves a word with one compare and one add, without first loading
/// the pointer to the area: made by [`AreaInner::resolver`], and valid
/// while that area is held.
#[derive(Clone, Copy)]
pub(crate) struct Resolver {
    base: NonNull<u8>,
    /// `AreaInner::mapped_below`.
    mapped_below: NonNull<AtomicUsize>,
}

impl Resolver {
    /// The address of area offset `word` (tag bits included) in this
    /// process, mapping its segment first if `area` (the area this was
    /// made from) does not map it yet.
    #[inline(always)]
    pub(crate) fn resolve(&self, area: &AreaInner, word: *mut u8) -> *mut u8 {
        // SAFETY: `mapped_below` is a field of the area, which the caller
        // holds.
        let mapped_below = unsafe { self.mapped_below.as_ref() }.load(Acquire);
        if word.addr() >= mapped_below {
            area.ensure_mapped(word.addr());
        }
        self.base.as_ptr().wrapping_byte_add(word.addr())
    }

    /// The area offset of `addr`, an address inside the area.
    #[inline(always)]
    pub(crate) fn offset(&self, addr: *mut u8) -> *mut u8 {
        core::ptr::without_provenance_mut(addr.addr() - self.base.addr().get())
    }
}

/// A process's view of an area.
pub(crate) struct AreaInner {
    reservation: Reservation,
    /// This process's id, which the locks record: read once, because
    /// asking the system is a system call on every guard. (A forked child
    /// must attach the area again rather than use its parent's handle.)
    pid: u32,
    handle: AreaHandle,
    creator: bool,
    /// Set once the creator unlinked the area's objects.
    unlinked: AtomicBool,
    slot_shift: u32,
    max_segments: usize,
    /// Per data segment slot, the generation this process has mapped (0:
    /// none). Changed under the area lock.
    mapped: Mutex<Vec<u32>>,
    /// Per data segment slot, whether this process maps it: what a
    /// concurrent tree's readers check on every node they visit.
    live: Box<[AtomicBool]>,
    /// The end of the data segment slots, from the first on, that this
    /// process maps without a gap: a reader's word below it needs no
    /// look at `live`. Changed under `mapped`, with `live`.
    mapped_below: AtomicUsize,
    /// The segment epoch this process's mappings reflect.
    synced: AtomicU64,
}

// SAFETY: every field shared between threads is an atomic, a mutex or
// immutable; the mapped memory is shared by design and guarded by the
// area's and the trees' process-shared locks.
unsafe impl Send for AreaInner {}
// SAFETY: as above.
unsafe impl Sync for AreaInner {}

impl Area {
    /// Creates an area: its control segment now, data segments as trees
    /// grow.
    ///
    /// # Errors
    ///
    /// Invalid options, or the system refused the memory.
    pub fn create(options: AreaOptions) -> Result<Area, ShmError> {
        options.validate()?;
        let mut nonce = [0u8; 8];
        rustix::rand::getrandom(&mut nonce, rustix::rand::GetRandomFlags::empty())
            .map_err(|e| ShmError::io("drawing the area's name", e))?;
        let pid = my_pid();
        let handle = AreaHandle::new(pid, u64::from_le_bytes(nonce));
        let len = options.reservation_len().expect("validated");
        let reservation = Reservation::new(len, options.backing)?;
        let control_bytes = control_size(options.max_trees);
        reservation.create(&handle.object_name(), 0, control_bytes)?;
        let slots = options.slots();
        let inner = AreaInner {
            reservation,
            pid,
            handle,
            creator: true,
            unlinked: AtomicBool::new(false),
            slot_shift: options.max_segment_size.trailing_zeros(),
            max_segments: slots,
            mapped: Mutex::new(vec![0; slots + 1]),
            live: (0..=slots).map(|_| AtomicBool::new(false)).collect(),
            mapped_below: AtomicUsize::new(0),
            synced: AtomicU64::new(0),
        };
        let c = inner.control();
        c.version.store(VERSION, Relaxed);
        c.control_size.store(control_bytes as u32, Relaxed);
        c.creator_pid.store(pid, Relaxed);
        c.slot_shift.store(inner.slot_shift, Relaxed);
        c.max_segments.store(slots as u32, Relaxed);
        c.max_trees.store(options.max_trees as u32, Relaxed);
        c.init_segment_size
            .store(options.init_segment_size as u64, Relaxed);
        c.max_segment_size
            .store(options.max_segment_size as u64, Relaxed);
        c.size_limit
            .store(options.size_limit.map_or(u64::MAX, |l| l as u64), Relaxed);
        c.total_size.store(control_bytes as u64, Relaxed);
        // The magic goes last: a control segment without it is not an area.
        c.magic.store(MAGIC, Release);
        Ok(Area {
            inner: Arc::new(inner),
        })
    }

    /// Opens an area another process created, from its handle.
    ///
    /// # Errors
    ///
    /// [`ShmError::NotFound`] when no such object exists,
    /// [`ShmError::NotAnArea`] or [`ShmError::VersionMismatch`] when it is
    /// not an area this build reads, [`ShmError::SegmentMissing`] when a
    /// segment it lists is gone.
    pub fn attach(handle: &AreaHandle) -> Result<Area, ShmError> {
        let name = handle.object_name();
        let fd = shm::open(name.as_str(), shm::OFlags::RDWR, Mode::empty()).map_err(|e| {
            ShmError::NotFound {
                name: name.clone(),
                source: e.into(),
            }
        })?;
        let not_area = |reason: String| ShmError::NotAnArea {
            name: name.clone(),
            reason,
        };
        let size = rustix::fs::fstat(&fd)
            .map_err(|e| ShmError::io(format!("fstat of {name}"), e))?
            .st_size as usize;
        if size < size_of::<Control>() {
            return Err(not_area(format!("{size} bytes is too small")));
        }
        // Read the header through a temporary mapping to learn the
        // geometry before reserving the range.
        // SAFETY: a new shared read-only mapping of the object's first
        // bytes, at an address the kernel picks.
        let peek = unsafe {
            rustix::mm::mmap(
                core::ptr::null_mut(),
                size_of::<Control>(),
                ProtFlags::READ,
                MapFlags::SHARED,
                &fd,
                0,
            )
        }
        .map_err(|e| ShmError::io(format!("mapping {name}"), e))?;
        // SAFETY: the mapping holds a whole `Control`, all atomics.
        let header = unsafe { &*peek.cast::<Control>() };
        let magic = header.magic.load(Acquire);
        let version = header.version.load(Relaxed);
        let control_bytes = header.control_size.load(Relaxed) as usize;
        let slot_shift = header.slot_shift.load(Relaxed);
        let slots = header.max_segments.load(Relaxed) as usize;
        // SAFETY: unmapping the temporary mapping made above; `header` is
        // not used again.
        unsafe {
            let _ = rustix::mm::munmap(peek, size_of::<Control>());
        }
        if magic != MAGIC {
            return Err(not_area(format!("magic {magic:#018x}")));
        }
        if version != VERSION {
            return Err(ShmError::VersionMismatch {
                name,
                found: version,
                expected: VERSION,
            });
        }
        let geometry_ok = control_bytes == size
            && (18..=32).contains(&slot_shift)
            && (1..SEGMENT_SLOTS).contains(&slots)
            && control_bytes <= 1 << slot_shift;
        if !geometry_ok {
            return Err(not_area("its header describes no valid area".into()));
        }
        let len = (slots + 1) << slot_shift;
        let reservation = Reservation::new(len, Backing::SharedMemory)?;
        reservation.open(&name, 0, control_bytes)?;
        let inner = AreaInner {
            reservation,
            pid: my_pid(),
            handle: *handle,
            creator: false,
            unlinked: AtomicBool::new(false),
            slot_shift,
            max_segments: slots,
            mapped: Mutex::new(vec![0; slots + 1]),
            live: (0..=slots).map(|_| AtomicBool::new(false)).collect(),
            mapped_below: AtomicUsize::new(0),
            synced: AtomicU64::new(0),
        };
        inner.sync()?;
        Ok(Area {
            inner: Arc::new(inner),
        })
    }

    /// The handle another process attaches with.
    pub fn handle(&self) -> AreaHandle {
        self.inner.handle
    }

    /// Total bytes of the area's segments, the control segment included:
    /// what PostgreSQL's `dsa_get_total_size` reports.
    pub fn memory_usage(&self) -> usize {
        self.inner.control().total_size.load(Relaxed) as usize
    }

    /// What [`memory_usage`](Self::memory_usage) is with no data segment:
    /// the control segment alone.
    pub fn empty_size(&self) -> usize {
        self.inner.control().control_size.load(Relaxed) as usize
    }

    /// The size limit, if any.
    pub fn size_limit(&self) -> Option<usize> {
        match self.inner.control().size_limit.load(Relaxed) {
            u64::MAX => None,
            limit => Some(limit as usize),
        }
    }

    /// Live data segments.
    pub fn segments(&self) -> usize {
        self.inner.control().live_segments.load(Relaxed) as usize
    }

    /// Whether this process created the area.
    pub fn is_creator(&self) -> bool {
        self.inner.creator
    }

    /// Where the memory comes from.
    pub fn backing(&self) -> Backing {
        self.inner.reservation.backing()
    }

    /// Unlinks the area's objects now, for its creator. Processes that have
    /// them mapped keep them until they detach; none can attach any more,
    /// and no new segment is made. Dropping the creator's last clone does
    /// the same.
    ///
    /// # Errors
    ///
    /// [`ShmError::InvalidOptions`] if this process did not create the
    /// area: only the creator destroys it, others detach by dropping.
    pub fn destroy(self) -> Result<(), ShmError> {
        if !self.inner.creator {
            return Err(ShmError::InvalidOptions(
                "only the creating process destroys an area; others drop their handle".into(),
            ));
        }
        self.inner.unlink_all();
        Ok(())
    }
}

impl fmt::Debug for Area {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Area")
            .field("handle", &self.handle().to_string())
            .field("creator", &self.is_creator())
            .field("backing", &self.backing())
            .field("memory_usage", &self.memory_usage())
            .field("segments", &self.segments())
            .field("size_limit", &self.size_limit())
            .finish()
    }
}

impl AreaInner {
    /// The control segment.
    #[inline]
    pub(crate) fn control(&self) -> &Control {
        // SAFETY: the control segment is mapped at offset 0 for the life of
        // the reservation, and `Control` is all atomics.
        unsafe { self.reservation.base().cast::<Control>().as_ref() }
    }

    /// The first byte of the area's range: offset 0.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn base(&self) -> NonNull<u8> {
        self.reservation.base()
    }

    /// Tree slot `index`.
    pub(crate) fn tree_slot(&self, index: usize) -> &TreeSlot {
        let trees = self.control().max_trees.load(Relaxed) as usize;
        assert!(index < trees, "tree slot {index} out of range");
        // SAFETY: the tree slots follow the header inside the control
        // segment (its size counts them), and `TreeSlot` is all atomics.
        unsafe {
            self.base()
                .byte_add(size_of::<Control>() + index * size_of::<TreeSlot>())
                .cast::<TreeSlot>()
                .as_ref()
        }
    }

    /// Number of tree slots.
    pub(crate) fn max_trees(&self) -> usize {
        self.control().max_trees.load(Relaxed) as usize
    }

    /// This process's id, as the locks record it.
    #[inline]
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// Takes the area lock.
    pub(crate) fn lock(&self) -> Result<PidMutexGuard<'_>, ShmError> {
        self.control().lock.lock(self.pid)
    }

    /// Maps segments created since this process last looked, and unmaps
    /// destroyed ones. Cheap when nothing changed.
    pub(crate) fn sync(&self) -> Result<(), ShmError> {
        if self.control().epoch.load(Acquire) == self.synced.load(Acquire) {
            return Ok(());
        }
        let guard = self.lock()?;
        self.sync_locked(&guard)
    }

    /// [`sync`](Self::sync) with the area lock held.
    pub(crate) fn sync_locked(&self, _lock: &PidMutexGuard<'_>) -> Result<(), ShmError> {
        let c = self.control();
        let epoch = c.epoch.load(Acquire);
        let mut mapped = self.mapped.lock().unwrap_or_else(|e| e.into_inner());
        for (slot, have) in mapped.iter_mut().enumerate().skip(1) {
            let entry = &c.segments[slot];
            let live = entry.state.load(Acquire) == SEGMENT_LIVE;
            let generation = entry.generation.load(Relaxed);
            let size = entry.size.load(Relaxed) as usize;
            if live && *have == generation {
                continue;
            }
            if *have != 0 {
                self.set_live(slot, false);
                self.reservation
                    .release(slot << self.slot_shift, 1 << self.slot_shift);
                *have = 0;
            }
            if live {
                if size > 1 << self.slot_shift {
                    return Err(ShmError::SegmentMissing {
                        name: self.handle.segment_name(slot, generation),
                        source: std::io::Error::other("segment larger than its slot"),
                    });
                }
                let name = self.handle.segment_name(slot, generation);
                self.reservation
                    .open(&name, slot << self.slot_shift, size)?;
                *have = generation;
                if !self.buddy(slot).is_valid() {
                    return Err(ShmError::SegmentMissing {
                        name,
                        source: std::io::Error::other("not a radix data segment"),
                    });
                }
                self.set_live(slot, true);
            }
        }
        self.synced.store(epoch, Release);
        Ok(())
    }

    /// What resolving an offset reads, for a [`Resolver`] to keep beside
    /// the `Area` that keeps it valid.
    pub(crate) fn resolver(&self) -> Resolver {
        Resolver {
            base: self.base(),
            mapped_below: NonNull::from(&self.mapped_below),
        }
    }

    /// Sets whether this process maps segment slot `slot`, and moves the
    /// end of the mapped prefix to match: before a mapping is released,
    /// after one is made. Called with the mapping mutex (`mapped`) held.
    fn set_live(&self, slot: usize, live: bool) {
        self.live[slot].store(live, Release);
        let end = (1..self.live.len())
            .find(|&s| !self.live[s].load(Relaxed))
            .unwrap_or(self.live.len());
        self.mapped_below.store(end << self.slot_shift, Release);
    }

    /// Makes sure this process maps the segment holding area offset
    /// `offset`, which a concurrent tree's reader found in a slot.
    ///
    /// A lock-free reader may meet a node in a segment made after it last
    /// looked (by a writer in another process). Such a segment was listed
    /// live before the node was published, and the reader's acquire load
    /// of the node's word orders that listing before it; since an area
    /// holding a concurrent tree never destroys a segment
    /// (`Control::keeps_segments`), the slot still names the same one.
    /// Mapping it takes this process's mapping mutex, never a lock other
    /// processes hold.
    ///
    /// # Panics
    ///
    /// If the segment cannot be mapped (the system is out of mappings or
    /// memory, or the creator destroyed the area and unlinked it): the
    /// reader cannot go on without it.
    #[inline(always)]
    pub(crate) fn ensure_mapped(&self, offset: usize) {
        let slot = offset >> self.slot_shift;
        if !self.live[slot].load(Acquire) {
            self.map_lazily(slot);
        }
    }

    #[cold]
    #[inline(never)]
    fn map_lazily(&self, slot: usize) {
        let mut mapped = self.mapped.lock().unwrap_or_else(|e| e.into_inner());
        if self.live[slot].load(Acquire) {
            return;
        }
        let entry = &self.control().segments[slot];
        let generation = entry.generation.load(Acquire);
        let size = entry.size.load(Relaxed) as usize;
        assert!(
            entry.state.load(Acquire) == SEGMENT_LIVE && size <= 1 << self.slot_shift,
            "a concurrent tree's word names segment slot {slot}, which holds no segment"
        );
        let name = self.handle.segment_name(slot, generation);
        if let Err(e) = self.reservation.open(&name, slot << self.slot_shift, size) {
            panic!("a reader could not map segment {name} of its tree: {e}");
        }
        mapped[slot] = generation;
        self.set_live(slot, true);
    }

    /// The buddy allocator of the segment in `slot`, which is live and
    /// mapped.
    fn buddy(&self, slot: usize) -> Buddy {
        // SAFETY: the caller holds the area lock with the slot live and
        // mapped by `sync_locked`.
        unsafe { Buddy::at(self.base().byte_add(slot << self.slot_shift)) }
    }

    /// A block of `PAGE << order` bytes: its area offset, aligned to its
    /// size. Makes a segment if none has room.
    pub(crate) fn alloc_block(&self, order: u32) -> Result<usize, ShmError> {
        let guard = self.lock()?;
        self.sync_locked(&guard)?;
        let c = self.control();
        for slot in 1..=self.max_segments {
            if c.segments[slot].state.load(Relaxed) != SEGMENT_LIVE {
                continue;
            }
            if let Some(page) = self.buddy(slot).alloc(order) {
                return Ok((slot << self.slot_shift) + page * PAGE);
            }
        }
        let slot = self.create_segment(order, &guard)?;
        let page = self
            .buddy(slot)
            .alloc(order)
            .expect("a new segment has room for the block it was made for");
        Ok((slot << self.slot_shift) + page * PAGE)
    }

    /// Frees blocks from [`alloc_block`](Self::alloc_block), and every
    /// segment left empty.
    pub(crate) fn free_blocks(
        &self,
        offsets: impl IntoIterator<Item = usize>,
    ) -> Result<(), ShmError> {
        let guard = self.lock()?;
        self.sync_locked(&guard)?;
        let mut emptied = Vec::new();
        for offset in offsets {
            let slot = offset >> self.slot_shift;
            let buddy = self.buddy(slot);
            buddy.free((offset & ((1 << self.slot_shift) - 1)) / PAGE);
            if buddy.is_empty() && !emptied.contains(&slot) {
                emptied.push(slot);
            }
        }
        let keeps = self.control().keeps_segments.load(Relaxed) != 0;
        for slot in emptied {
            if !keeps && self.buddy(slot).is_empty() {
                self.destroy_segment(slot, &guard);
            }
        }
        Ok(())
    }

    /// The largest block order any segment of this area can hold.
    pub(crate) fn max_block_order(&self) -> u32 {
        Buddy::max_block_order(self.slot_shift - PAGE.trailing_zeros()).unwrap_or(0)
    }

    /// Makes a data segment with room for a block of `order`; its slot.
    fn create_segment(&self, order: u32, guard: &PidMutexGuard<'_>) -> Result<usize, ShmError> {
        let c = self.control();
        if c.destroyed.load(Acquire) != 0 {
            return Err(ShmError::AreaDestroyed);
        }
        let max = c.max_segment_size.load(Relaxed) as usize;
        // The smallest segment whose buddy allocator hands out such a block.
        let page_shift = PAGE.trailing_zeros();
        let mut needed = order + 1;
        while Buddy::max_block_order(needed).is_none_or(|m| m < order) {
            needed += 1;
        }
        let needed = PAGE << needed;
        if needed > max {
            return Err(ShmError::TooLarge {
                size: PAGE << order,
                max: PAGE << self.max_block_order(),
            });
        }
        let init = c.init_segment_size.load(Relaxed) as usize;
        let used = c.total_size.load(Relaxed) as usize;
        let mut size = next_segment_size(used, init, max).max(needed);
        let limit = c.size_limit.load(Relaxed);
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        while used.saturating_add(size) > limit && size / 2 >= needed {
            size /= 2;
        }
        let Some(slot) = (1..=self.max_segments)
            .find(|&s| c.segments[s].state.load(Relaxed) == SEGMENT_FREE)
            .filter(|_| used.saturating_add(size) <= limit)
        else {
            return Err(ShmError::AreaFull {
                requested: size,
                used,
                limit,
            });
        };
        let entry = &c.segments[slot];
        let generation = entry.generation.load(Relaxed).wrapping_add(1).max(1);
        let offset = slot << self.slot_shift;
        self.reservation
            .create(&self.handle.segment_name(slot, generation), offset, size)
            .map_err(|e| match e {
                ShmError::AreaFull { requested, .. } => ShmError::AreaFull {
                    requested,
                    used,
                    limit: usize::MAX,
                },
                e => e,
            })?;
        // SAFETY: the segment was just mapped at `offset`, zeroed, and is
        // `size` bytes.
        unsafe { self.buddy(slot).init(ceil_log2(size >> page_shift)) };
        entry.size.store(size as u64, Relaxed);
        entry.generation.store(generation, Relaxed);
        entry.state.store(SEGMENT_LIVE, Release);
        c.total_size.fetch_add(size as u64, Relaxed);
        c.live_segments.fetch_add(1, Relaxed);
        c.epoch.fetch_add(1, Release);
        let mut mapped = self.mapped.lock().unwrap_or_else(|e| e.into_inner());
        mapped[slot] = generation;
        self.set_live(slot, true);
        // This process has seen every change so far (it holds the lock).
        let _ = guard;
        Ok(slot)
    }

    /// Destroys the empty segment in `slot`.
    fn destroy_segment(&self, slot: usize, _guard: &PidMutexGuard<'_>) {
        let c = self.control();
        let entry = &c.segments[slot];
        let size = entry.size.load(Relaxed);
        let generation = entry.generation.load(Relaxed);
        entry.state.store(SEGMENT_FREE, Release);
        c.total_size.fetch_sub(size, Relaxed);
        c.live_segments.fetch_sub(1, Relaxed);
        c.epoch.fetch_add(1, Release);
        if self.reservation.backing() == Backing::SharedMemory {
            unlink(&self.handle.segment_name(slot, generation));
        }
        let mut mapped = self.mapped.lock().unwrap_or_else(|e| e.into_inner());
        self.set_live(slot, false);
        self.reservation
            .release(slot << self.slot_shift, 1 << self.slot_shift);
        mapped[slot] = 0;
    }

    /// Unlinks every object of the area (the creator's job), once.
    fn unlink_all(&self) {
        if !self.creator || self.unlinked.swap(true, AcqRel) {
            return;
        }
        let c = self.control();
        c.destroyed.store(1, Release);
        if self.reservation.backing() != Backing::SharedMemory {
            return;
        }
        // Hold the area lock so that no segment appears meanwhile; if a
        // holder died, unlink what the table lists anyway.
        let guard = self.lock();
        for slot in 1..=self.max_segments {
            let entry = &c.segments[slot];
            if entry.state.load(Acquire) == SEGMENT_LIVE {
                unlink(
                    &self
                        .handle
                        .segment_name(slot, entry.generation.load(Relaxed)),
                );
            }
        }
        unlink(&self.handle.object_name());
        drop(guard);
    }
}

impl Drop for AreaInner {
    fn drop(&mut self) {
        self.unlink_all();
    }
}

/// The size of the next data segment of an area whose segments total
/// `used` bytes: an eighth of that, rounded down to a power of two,
/// between the initial and the largest segment size. The area then holds
/// at most an eighth more than it had when it last grew, where doubling
/// (PostgreSQL's DSA doubles every two segments) holds up to twice its
/// contents. The price is more segments: the default 128 reach 16 GiB
/// (`max_segments` allows up to 255: 48 GiB), where doubling reached 30.
pub(super) fn next_segment_size(used: usize, init: usize, max: usize) -> usize {
    let eighth = used / 8;
    let rounded = if eighth == 0 { 0 } else { 1 << eighth.ilog2() };
    rounded.clamp(init, max)
}
