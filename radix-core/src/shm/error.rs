//! Errors of shared areas and shared trees.

use std::io;

use super::handle::TreeHandle;

/// Why a shared-memory operation failed.
///
/// Every failure leaves what was already stored intact: a failed insert
/// changed nothing, a failed attach mapped nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShmError {
    /// Growing the area by a segment would pass its size limit (or the
    /// system has no shared memory left). The tree still holds every
    /// earlier key.
    #[error(
        "the shared area is full: a new segment of {requested} bytes would take it from \
         {used} bytes past its limit of {limit} bytes"
    )]
    AreaFull {
        /// The segment the allocation needed.
        requested: usize,
        /// The area's size before it.
        used: usize,
        /// The limit (`usize::MAX` when the system ran out).
        limit: usize,
    },
    /// One allocation is larger than the area's largest segment can hold.
    #[error(
        "an allocation of {size} bytes is larger than the area's segments can hold ({max} bytes)"
    )]
    TooLarge {
        /// Bytes asked for.
        size: usize,
        /// The largest allocation the area serves.
        max: usize,
    },
    /// `try_read` or `try_write` found the lock held.
    #[error("the tree's lock is held by another process or thread")]
    WouldBlock,
    /// The process holding the write lock died; what it was writing may be
    /// half done, so the tree is poisoned and stays unusable.
    #[error(
        "process {pid} died holding the write lock; the tree may be half-written and is poisoned"
    )]
    OwnerDied {
        /// The dead process.
        pid: u32,
    },
    /// No shared-memory object of that name exists.
    #[error("no shared area {name}: {source}")]
    NotFound {
        /// The object's name.
        name: String,
        /// What opening it said.
        source: io::Error,
    },
    /// The object exists but is not a radix area.
    #[error("{name} is not a radix shared area ({reason})")]
    NotAnArea {
        /// The object's name.
        name: String,
        /// What gave it away.
        reason: String,
    },
    /// The area was written by another format version.
    #[error("area {name} has format version {found}; this build reads version {expected}")]
    VersionMismatch {
        /// The object's name.
        name: String,
        /// The version in the area.
        found: u32,
        /// The version this build writes.
        expected: u32,
    },
    /// A segment the area lists could not be opened or mapped.
    #[error("segment {name} of the area is missing or unmappable: {source}")]
    SegmentMissing {
        /// The segment's object name.
        name: String,
        /// What opening or mapping it said.
        source: io::Error,
    },
    /// The tree in the area was built with another configuration.
    #[error(
        "the tree's configuration differs in {part}: the area holds {found}, this type has {expected}"
    )]
    ConfigMismatch {
        /// Which part differs: "key width", "value layout", "value size",
        /// "value alignment", "size classes" or "delete".
        part: &'static str,
        /// This type's.
        expected: String,
        /// The area's.
        found: String,
    },
    /// A handle string did not parse.
    #[error("invalid handle {text:?}: {reason}")]
    BadHandle {
        /// The text given.
        text: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The handle names no live tree: it was destroyed, or never made.
    #[error("no tree {handle} in this area (destroyed, or never created)")]
    NoSuchTree {
        /// The handle.
        handle: TreeHandle,
    },
    /// Every tree slot of the area is in use.
    #[error("the area has room for {max} trees, and all are in use")]
    TooManyTrees {
        /// The area's number of tree slots.
        max: usize,
    },
    /// Every handle entry of a concurrent tree is taken by a live process.
    #[error("a concurrent shared tree takes {max} handles at once, and all are open")]
    TooManyHandles {
        /// The most handles a tree takes.
        max: usize,
    },
    /// A concurrent tree cannot be destroyed while other processes have
    /// it open: they read it without locks.
    #[error("the tree is still open in processes {pids:?}")]
    TreeInUse {
        /// The live processes with a handle on it.
        pids: Vec<u32>,
    },
    /// The area's creator destroyed it; it takes no new segments.
    #[error("the area was destroyed by its creator")]
    AreaDestroyed,
    /// The options do not describe a usable area.
    #[error("invalid area options: {0}")]
    InvalidOptions(String),
    /// A system call failed.
    #[error("{op}: {source}")]
    Io {
        /// What was being done.
        op: String,
        /// The error.
        source: io::Error,
    },
}

impl ShmError {
    pub(crate) fn io(op: impl Into<String>, errno: rustix::io::Errno) -> Self {
        Self::Io {
            op: op.into(),
            source: errno.into(),
        }
    }
}
