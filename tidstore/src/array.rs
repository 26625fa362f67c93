//! The classic dead-tuple array, for comparison.
//!
//! Before PostgreSQL 17, lazy vacuum kept dead TIDs in one array
//! (`VacDeadItems`): TIDs sorted and packed in 6 bytes each, allocated whole
//! up front at the memory limit (at most 1 GiB, about 179 million TIDs), and
//! searched by a bounds check against the first and last TID followed by a
//! binary search (`lazy_tid_reaped`). [`DeadItemsArray`] is that array, kept
//! faithful so that [`TidStore`](crate::TidStore) can be measured against
//! it.

use alloc::vec::Vec;
use core::fmt;

use crate::tid::Tid;

/// A TID packed as PostgreSQL's `ItemPointerData`: block high and low
/// halves, then offset; 6 bytes, 2-byte aligned.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(C)]
pub struct ItemPointer {
    block_hi: u16,
    block_lo: u16,
    offset: u16,
}

static_assertions::const_assert_eq!(core::mem::size_of::<ItemPointer>(), 6);

impl ItemPointer {
    /// Packs a TID.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub const fn new(tid: Tid) -> Self {
        Self {
            block_hi: (tid.block() >> 16) as u16,
            block_lo: tid.block() as u16,
            offset: tid.offset(),
        }
    }

    /// The TID.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub const fn tid(self) -> Tid {
        Tid::new(
            ((self.block_hi as u32) << 16) | self.block_lo as u32,
            self.offset,
        )
    }

    /// An integer in TID order, `block << 16 | offset` (`itemptr_encode`).
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub const fn encode(self) -> u64 {
        ((self.block_hi as u64) << 32) | ((self.block_lo as u64) << 16) | self.offset as u64
    }
}

/// Why [`DeadItemsArray::push_block`] refused a block. The array is
/// unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArrayError {
    /// The block's TIDs do not fit in what is left of the allocation.
    #[error("the dead-tuple array has room for {remaining} more TIDs, not {needed}")]
    Full {
        /// TIDs offered.
        needed: usize,
        /// Room left.
        remaining: usize,
    },
    /// The TIDs would not keep the array sorted (blocks must come in
    /// ascending order, each block's offsets ascending).
    #[error("TID {tid} would not keep the dead-tuple array sorted")]
    NotAscending {
        /// The first offending TID.
        tid: Tid,
    },
}

/// PostgreSQL 16's dead-tuple array: sorted 6-byte TIDs in one allocation
/// made up front.
///
/// ```
/// use tidstore::{DeadItemsArray, Tid};
/// let mut a = DeadItemsArray::with_max_items(100).unwrap();
/// a.push_block(7, &[1, 5]).unwrap();
/// assert!(a.is_member(Tid::new(7, 5)));
/// assert!(!a.is_member(Tid::new(7, 4)));
/// assert_eq!(a.allocated_bytes(), 600);
/// ```
pub struct DeadItemsArray {
    items: Vec<ItemPointer>,
    max_items: usize,
}

impl DeadItemsArray {
    /// Bytes per TID.
    pub const ITEM_BYTES: u64 = 6;
    /// The largest allocation PostgreSQL allows (`MaxAllocSize`, 1 GiB).
    pub const MAX_ALLOC: u64 = 1 << 30;

    /// TIDs an array holds for a memory `limit` on a table of
    /// `total_tuples`: `min(limit, 1 GiB, 6 x total_tuples) / 6`, as
    /// PostgreSQL 16 sizes it.
    pub fn capacity_for(limit: u64, total_tuples: u64) -> u64 {
        limit
            .min(Self::MAX_ALLOC)
            .min(total_tuples.saturating_mul(Self::ITEM_BYTES))
            / Self::ITEM_BYTES
    }

    /// An empty array with room for `max_items` TIDs, allocated now.
    pub fn with_max_items(max_items: usize) -> Result<Self, alloc::collections::TryReserveError> {
        let mut items = Vec::new();
        items.try_reserve_exact(max_items)?;
        Ok(Self { items, max_items })
    }

    /// TIDs the array can hold.
    pub fn max_items(&self) -> usize {
        self.max_items
    }

    /// Bytes allocated: `max_items x 6`. This is the array's memory use
    /// from the start.
    pub fn allocated_bytes(&self) -> u64 {
        self.max_items as u64 * Self::ITEM_BYTES
    }

    /// TIDs held.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the array holds no TID.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Room left, in TIDs.
    pub fn remaining(&self) -> usize {
        self.max_items - self.items.len()
    }

    /// Appends the dead `offsets` of `block`, which must sort after every
    /// TID already held and fit in the room left.
    pub fn push_block(&mut self, block: u32, offsets: &[u16]) -> Result<(), ArrayError> {
        if offsets.len() > self.remaining() {
            return Err(ArrayError::Full {
                needed: offsets.len(),
                remaining: self.remaining(),
            });
        }
        let mut previous = self.items.last().map(|i| i.encode());
        for &offset in offsets {
            let item = ItemPointer::new(Tid::new(block, offset));
            if previous.is_some_and(|p| p >= item.encode()) {
                return Err(ArrayError::NotAscending { tid: item.tid() });
            }
            previous = Some(item.encode());
        }
        self.items.extend(
            offsets
                .iter()
                .map(|&o| ItemPointer::new(Tid::new(block, o))),
        );
        Ok(())
    }

    /// Whether `tid` is held: a bounds check, then a binary search.
    #[inline]
    pub fn is_member(&self, tid: Tid) -> bool {
        let (Some(first), Some(last)) = (self.items.first(), self.items.last()) else {
            return false;
        };
        let key = ItemPointer::new(tid).encode();
        if key < first.encode() || key > last.encode() {
            return false;
        }
        self.items
            .binary_search_by_key(&key, |i| i.encode())
            .is_ok()
    }

    /// The TIDs, ascending.
    pub fn items(&self) -> &[ItemPointer] {
        &self.items
    }

    /// The TIDs grouped by block, ascending: `(block, its TIDs)`.
    pub fn blocks(&self) -> impl Iterator<Item = (u32, &[ItemPointer])> + '_ {
        self.items
            .chunk_by(|a, b| a.block_hi == b.block_hi && a.block_lo == b.block_lo)
            .map(|run| (run[0].tid().block(), run))
    }

    /// Forgets every TID, keeping the allocation.
    pub fn clear(&mut self) {
        self.items.clear();
    }
}

impl fmt::Debug for DeadItemsArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeadItemsArray")
            .field("len", &self.items.len())
            .field("max_items", &self.max_items)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sized_like_postgres_16() {
        assert_eq!(DeadItemsArray::capacity_for(600, 1_000), 100);
        assert_eq!(DeadItemsArray::capacity_for(601, 1_000), 100);
        assert_eq!(DeadItemsArray::capacity_for(600, 40), 40);
        assert_eq!(
            DeadItemsArray::capacity_for(u64::MAX, u64::MAX),
            (1 << 30) / 6
        );
    }

    #[test]
    fn push_search_group_and_refuse() {
        let mut a = DeadItemsArray::with_max_items(6).unwrap();
        a.push_block(0, &[1, 2, 3]).unwrap();
        a.push_block(70_000, &[5]).unwrap();
        assert_eq!(
            a.push_block(70_001, &[1, 2, 3]),
            Err(ArrayError::Full {
                needed: 3,
                remaining: 2
            })
        );
        assert_eq!(
            a.push_block(69_999, &[1]),
            Err(ArrayError::NotAscending {
                tid: Tid::new(69_999, 1)
            })
        );
        assert_eq!(
            a.push_block(70_001, &[4, 2]),
            Err(ArrayError::NotAscending {
                tid: Tid::new(70_001, 2)
            })
        );
        assert_eq!(a.len(), 4);
        a.push_block(70_001, &[1, 9]).unwrap();
        for (tid, member) in [
            ((0, 2), true),
            ((70_000, 5), true),
            ((70_001, 9), true),
            ((0, 4), false),
            ((5, 1), false),
            ((u32::MAX, 1), false),
        ] {
            assert_eq!(a.is_member(Tid::new(tid.0, tid.1)), member, "{tid:?}");
        }
        let blocks: Vec<(u32, Vec<u16>)> = a
            .blocks()
            .map(|(b, items)| (b, items.iter().map(|i| i.tid().offset()).collect()))
            .collect();
        assert_eq!(
            blocks,
            [(0, vec![1, 2, 3]), (70_000, vec![5]), (70_001, vec![1, 9])]
        );
        a.clear();
        assert!(!a.is_member(Tid::new(0, 2)));
        assert_eq!(a.allocated_bytes(), 36);
    }
}
