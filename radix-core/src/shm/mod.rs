//! # Shared memory: trees that several processes use at once
//!
//! PostgreSQL's parallel vacuum fills a TID store in the leader process and
//! lets worker *processes* read it during the index passes. This module is
//! that half of the design: an [`Area`] of shared memory, trees that live
//! in it ([`SharedTree`], or a `radix_tree!` type declared with
//! `memory: shared`), and a process-shared reader-writer lock per tree.
//! Linux only (it needs futexes and POSIX shared memory).
//!
//! ## An area
//!
//! An area is a *control segment* plus *data segments* created on demand,
//! each a POSIX shared-memory object of mode 0600 named after the area's
//! [`AreaHandle`] (`radix-<creator pid>-<random>`). Segment sizes start at
//! [`AreaOptions::init_segment_size`] and grow, each an eighth of the
//! area, up to [`AreaOptions::max_segment_size`], so that the area is at
//! most an eighth larger than its contents were when it last grew; with a
//! [`size_limit`](AreaOptions::size_limit), growing past it fails with
//! [`ShmError::AreaFull`] instead. A refused change leaves the tree as it
//! was and the area no larger: memory it took before the refusal (an
//! insert needing a value leaf and a node may get the first and not the
//! second) goes back. [`Area::memory_usage`] is the total size of the segments, as PostgreSQL's `dsa_get_total_size`. The control
//! segment records a magic number, a format version, the geometry, the
//! segment table and the tree slots; attaching to anything else is an
//! error, never a misread.
//!
//! ## Pointers are offsets
//!
//! A tree stores, for each child and each leaf, a tagged *offset* from the
//! area's start ([`Offset`]) where a local tree stores an address (see
//! [`crate::mem`]). Each process reserves one range of address space for
//! the whole area, `PROT_NONE`, and maps every segment at its own fixed
//! offset inside it, so an offset resolves with one add to the base this
//! process reserved; PostgreSQL's `dsa_get_address` looks the segment up in
//! a table instead, on every node visit. Segments are only added under a
//! tree's write lock or the area lock, so taking a guard is where a process
//! maps the segments it has not seen yet; resolving stays one add either
//! way.
//!
//! ## Allocation
//!
//! Each data segment is a binary buddy allocator of 4 KiB pages. Each tree
//! carves its nodes and leaves out of *spans* of pages, one pool per node
//! size and leaf size class, with free lists in the area, as the local slab
//! does out of blocks: freed space is reused, emptied spans go back to
//! their segment, and an emptied segment goes back to the system. Only
//! taking or returning spans takes the area lock; a node allocation needs
//! only the tree's write lock. A failing insert fails before it changes
//! anything: the engine reserves the nodes it will need first.
//!
//! ## Locks and faults
//!
//! [`SharedTree::read`] and [`SharedTree::write`] return RAII guards;
//! [`try_read`](SharedTree::try_read) and
//! [`try_write`](SharedTree::try_write) return at once. The locks are
//! futex words that record holders by pid, so no process waits forever for
//! a dead one:
//!
//! - a writer that dies holding the lock poisons the tree (it may be
//!   half-written): later acquisitions fail with [`ShmError::OwnerDied`],
//!   and the blocking ones panic with that message;
//! - a reader that dies holding a read slot is reclaimed by a waiting
//!   writer;
//! - a segment missing at attach, a configuration that differs (key width,
//!   value layout, size and alignment, size classes, delete) and a garbage
//!   handle are typed errors.
//!
//! When the creator drops its last [`Area`] clone (or calls
//! [`Area::destroy`]) the objects are unlinked; processes that attached
//! unmap on drop. A crashed creator leaves objects behind, which
//! [`remove_stale`] removes.
//!
//! ## Where this departs from the design notes
//!
//! `DESIGN.md` sketched a stored pointer as a (segment index, offset) pair
//! resolved by mapping a segment "the first time a process meets one", in
//! `mem/shared/`. Two things changed, for speed and for soundness:
//!
//! - A stored word is a single offset into one reserved range, and the
//!   segment is implied by it (`offset >> slot_shift`): resolving is one
//!   add, with no table lookup and no branch on whether the segment is
//!   mapped yet.
//! - A process maps new segments when it takes a guard (and when it
//!   allocates), not when a lookup first meets one: segments appear only
//!   under a lock, so that is the one point where they can change, and the
//!   hot path never has to ask.
//!
//! The module is `shm` rather than `mem::shared` because the area is more
//! than a memory back end: it has handles, locks, a tree directory and its
//! own errors; [`SharedMemory`] is the back-end part, re-exported by
//! [`crate::mem`].
//!
//! ## Example
//!
//! One process creates the area and a tree and passes the two handles on;
//! another attaches and reads. Here both ends run in one process, with a
//! heap-backed area (the same layout and allocator in process memory; the
//! README shows the two-process version):
//!
//! ```
//! use radix_core::shm::{Area, AreaOptions, Backing};
//!
//! radix_core::radix_tree! {
//!     /// Block numbers to visibility bits, shared between processes.
//!     pub struct SharedBlocks {
//!         key: u32,
//!         value: u64,
//!         memory: shared,
//!     }
//! }
//!
//! let area = Area::create(AreaOptions::default().backing(Backing::Heap)
//!     .max_segment_size(1 << 20).max_segments(8))?;
//! let tree = SharedBlocks::create_in(&area)?;
//! {
//!     let mut w = tree.write();
//!     for block in 0..1000 {
//!         w.insert(block, u64::from(block) * 3)?;
//!     }
//! }
//! // What travels to the other process: two strings.
//! let (area_handle, tree_handle) = (area.handle().to_string(), tree.handle().to_string());
//!
//! // In the other process: `Area::attach(&area_handle.parse()?)?` (a heap
//! // area can only be shared within its process, by cloning it).
//! let reader = SharedBlocks::attach(&area.clone(), tree_handle.parse()?)?;
//! let r = reader.read();
//! assert_eq!(r.get(7), Some(&21));
//! assert_eq!(r.range(10..13).count(), 3);
//! drop(r);
//! tree.destroy()?;
//! assert_eq!(area.memory_usage(), area.empty_size());
//! # let _ = area_handle;
//! # Ok::<(), radix_core::shm::ShmError>(())
//! ```

mod area;
mod buddy;
mod cache;
mod concurrent;
mod control;
mod epochs;
mod error;
mod handle;
mod lock;
mod memory;
mod plain;
mod segment;
mod space;
mod stale;
mod tree;

pub use area::{Area, AreaOptions};
pub use concurrent::SharedConcurrentTree;
pub use epochs::ANNOUNCEMENTS;
pub use error::ShmError;
pub use handle::{AreaHandle, TreeHandle};
pub use memory::{Offset, SharedMemory};
pub use plain::ShmSafe;
pub use segment::Backing;
pub use space::SharedSpace;
pub use stale::remove_stale;
pub use tree::{ReadGuard, SharedTree, TreeView, WriteGuard};
#[cfg(test)]
mod tests;
