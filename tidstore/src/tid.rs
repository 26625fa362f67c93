//! Tuple identifiers.

use core::fmt;

/// The largest tuple offset on a page (PostgreSQL's limit for 32 kB pages).
pub const MAX_OFFSET: u16 = 2048;

/// A tuple identifier: a heap block number and a 1-based line pointer
/// offset within the block.
///
/// Offsets start at 1; 0 is never a valid offset, and a store never holds
/// it.
///
/// ```
/// use tidstore::Tid;
/// let tid = Tid::new(42, 7);
/// assert_eq!((tid.block(), tid.offset()), (42, 7));
/// assert!(Tid::new(1, 0) < tid);
/// assert_eq!(format!("{tid:?}"), "(42,7)");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Tid {
    block: u32,
    offset: u16,
}

impl Tid {
    /// The TID of tuple `offset` in `block`.
    #[inline]
    pub const fn new(block: u32, offset: u16) -> Self {
        Self { block, offset }
    }

    /// The heap block number.
    #[inline]
    pub const fn block(self) -> u32 {
        self.block
    }

    /// The offset within the block (1-based).
    #[inline]
    pub const fn offset(self) -> u16 {
        self.offset
    }
}

impl fmt::Debug for Tid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({},{})", self.block, self.offset)
    }
}

impl fmt::Display for Tid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
