//! The control segment: what every process of an area reads first.
//!
//! It is mapped at offset 0 of the area's address range and holds, in
//! order: a header (magic number, format version, geometry, the area lock,
//! the segment epoch and total size), the segment table, and the tree
//! slots. Every field is an atomic, so any process may hold a shared
//! reference to it; fields that change together are changed under a lock
//! (the area lock for segments and the tree directory, a tree's own lock
//! for its slot's contents).

use core::sync::atomic::{AtomicU32, AtomicU64};

use super::lock::{PidMutex, SharedRwLock};
use crate::config::MAX_POOLS;

/// "RADIXARE" as a little-endian word: the first word of a control segment.
pub(crate) const MAGIC: u64 = u64::from_le_bytes(*b"RADIXARE");
/// The format version this build writes and reads. 4: a concurrent tree's
/// anchor keeps a shortcut (`concurrent/shortcut.rs`), which a build that
/// does not maintain it would leave pointing into freed nodes.
pub(crate) const VERSION: u32 = 4;

/// Entries of the segment table; data segments use slots `1..`.
pub(crate) const SEGMENT_SLOTS: usize = 256;
/// The most tree slots an area may have.
pub(crate) const MAX_TREES: usize = 64;
/// Caller-defined words stored beside each tree.
pub(crate) const USER_WORDS: usize = 4;
/// Node pools a tree can have (inner and leaf classes, lazy leaves).
pub(crate) const NODE_POOLS: usize = MAX_POOLS;
/// Leaf size classes, in bytes; larger leaves get a block of their own.
pub(crate) const LEAF_CLASSES: [usize; 19] = [
    16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
];
/// Pools per tree: node pools, then leaf classes.
pub(crate) const POOLS: usize = NODE_POOLS + LEAF_CLASSES.len();
/// Words of a configuration fingerprint.
pub(crate) const FINGERPRINT_WORDS: usize = 8;

/// Segment table entry states.
pub(crate) const SEGMENT_FREE: u32 = 0;
pub(crate) const SEGMENT_LIVE: u32 = 1;
/// Tree slot states.
pub(crate) const TREE_FREE: u32 = 0;
pub(crate) const TREE_LIVE: u32 = 1;

/// The control segment's header.
#[repr(C)]
pub(crate) struct Control {
    pub(crate) magic: AtomicU64,
    pub(crate) version: AtomicU32,
    /// Bytes of the control segment.
    pub(crate) control_size: AtomicU32,
    pub(crate) creator_pid: AtomicU32,
    /// log2 of the address range each segment slot spans.
    pub(crate) slot_shift: AtomicU32,
    /// Data segment slots in use by this area (`1..=max_segments`).
    pub(crate) max_segments: AtomicU32,
    pub(crate) max_trees: AtomicU32,
    pub(crate) init_segment_size: AtomicU64,
    pub(crate) max_segment_size: AtomicU64,
    /// `u64::MAX` when there is no limit.
    pub(crate) size_limit: AtomicU64,
    /// Serialises segment creation and destruction, the page allocators
    /// and the tree directory.
    pub(crate) lock: PidMutex,
    /// Set by the creator when it destroys the area.
    pub(crate) destroyed: AtomicU32,
    /// Set once a concurrent tree was made here: emptied segments are then
    /// kept for reuse rather than destroyed, because lock-free readers map
    /// segments lazily and a slot must never name two segments in turn
    /// (`AreaInner::ensure_mapped`).
    pub(crate) keeps_segments: AtomicU32,
    /// Bumped whenever a segment is created or destroyed, so that a
    /// process knows when its mappings need a look.
    pub(crate) epoch: AtomicU64,
    /// The control segment plus every live data segment, in bytes.
    pub(crate) total_size: AtomicU64,
    pub(crate) live_segments: AtomicU64,
    pub(crate) segments: [SegmentEntry; SEGMENT_SLOTS],
}

/// One slot of the segment table.
#[repr(C)]
pub(crate) struct SegmentEntry {
    pub(crate) state: AtomicU32,
    /// Bumped each time the slot gets a new segment; part of its name.
    pub(crate) generation: AtomicU32,
    pub(crate) size: AtomicU64,
}

/// One tree's slot: its lock, identity, root and allocator state.
#[repr(C)]
pub(crate) struct TreeSlot {
    pub(crate) state: AtomicU32,
    /// Bumped each time the slot gets a new tree; part of its handle.
    pub(crate) generation: AtomicU32,
    pub(crate) lock: SharedRwLock,
    pub(crate) fingerprint: [AtomicU64; FINGERPRINT_WORDS],
    /// The root's stored reference (0 when empty), its shift and the number
    /// of keys: written under the write lock after every change.
    pub(crate) root: AtomicU64,
    pub(crate) root_shift: AtomicU64,
    pub(crate) len: AtomicU64,
    pub(crate) user: [AtomicU64; USER_WORDS],
    /// First block of the list of large leaves (0: none).
    pub(crate) large: AtomicU64,
    pub(crate) pools: [PoolState; POOLS],
}

/// One pool of a tree: spans of equal objects.
#[repr(C)]
pub(crate) struct PoolState {
    /// Bytes per object (0: the pool is unused).
    pub(crate) object_size: AtomicU64,
    /// Alignment of every object.
    pub(crate) align: AtomicU64,
    /// log2 of a span's pages.
    pub(crate) span_order: AtomicU64,
    /// First span with a free object (area offset; 0: none).
    pub(crate) partial: AtomicU64,
    /// First span with none.
    pub(crate) full: AtomicU64,
    /// An empty span kept for reuse (0: none).
    pub(crate) spare: AtomicU64,
    /// Objects free in the partial spans.
    pub(crate) available: AtomicU64,
    /// Objects handed out and not freed.
    pub(crate) live: AtomicU64,
}

/// Bytes of a control segment with `max_trees` tree slots, whole pages.
pub(crate) fn control_size(max_trees: usize) -> usize {
    (size_of::<Control>() + max_trees * size_of::<TreeSlot>()).next_multiple_of(super::buddy::PAGE)
}
