//! Errors.

use crate::tid::MAX_OFFSET;

/// Why a call was refused. A refused call leaves the store exactly as it
/// was.
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
}
