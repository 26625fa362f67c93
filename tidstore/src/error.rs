//! Errors.

use crate::tid::MAX_OFFSET;
use alloc::string::String;

/// Why a call was refused. A refused call leaves the store exactly as it
/// was.
///
/// `OverBudget` comes from the set operations
/// ([`TidStore::union_with`](crate::TidStore::union_with) and its
/// siblings). The last two arise only in a
/// [`SharedTidStore`](crate::SharedTidStore),
/// whose memory is a shared area that may be full.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TidStoreError {
    /// `set_block_offsets` was given no offsets.
    #[error("block {block}: no offsets given (an entry needs at least one)")]
    NoOffsets {
        /// The block.
        block: u32,
    },
    /// An offset was 0 or above [`MAX_OFFSET`].
    #[error("block {block}: offset {offset} is outside 1..={MAX_OFFSET}")]
    OffsetOutOfRange {
        /// The block.
        block: u32,
        /// The offending offset.
        offset: u16,
    },
    /// Offsets were not strictly ascending.
    #[error("block {block}: offsets must be strictly ascending, but {offset} follows {previous}")]
    NotAscending {
        /// The block.
        block: u32,
        /// The offset before the offending one.
        previous: u16,
        /// The offending offset.
        offset: u16,
    },
    /// A set operation's result would take more memory than the store's
    /// budget; the operation stopped there.
    #[error(
        "the {operation} needs more than the store's budget of {max_bytes} bytes \
         (stopped at {needed} bytes)"
    )]
    OverBudget {
        /// `"union"`, `"intersection"` or `"difference"`.
        operation: &'static str,
        /// The result's memory when the operation stopped.
        needed: usize,
        /// The budget.
        max_bytes: usize,
    },
    /// A shared store's area could not grow by the segment the entry
    /// needed.
    #[error(
        "block {block}: the shared area is full (a {requested}-byte segment on top of \
         {used} bytes would pass its limit of {limit})"
    )]
    AreaFull {
        /// The block.
        block: u32,
        /// The segment the area needed.
        requested: usize,
        /// The area's size.
        used: usize,
        /// Its limit (`usize::MAX` when the system ran out).
        limit: usize,
    },
    /// Another shared-memory failure (a poisoned area lock, a system error).
    #[error("block {block}: shared memory: {message}")]
    SharedMemory {
        /// The block.
        block: u32,
        /// What went wrong.
        message: String,
    },
}

#[cfg(all(feature = "shm", target_os = "linux"))]
impl TidStoreError {
    /// The error of a shared store's write to `block`.
    pub(crate) fn from_shm(block: u32, error: radix_core::shm::ShmError) -> Self {
        match error {
            radix_core::shm::ShmError::AreaFull {
                requested,
                used,
                limit,
            } => Self::AreaFull {
                block,
                requested,
                used,
                limit,
            },
            other => Self::SharedMemory {
                block,
                message: other.to_string(),
            },
        }
    }
}
