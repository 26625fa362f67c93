//! Membership tests for TIDs that arrive in ascending order, as a
//! correlated index's entries do during an index pass.
//!
//! [`OrderedLookup`] keeps a tree cursor and the entry of the last block
//! it looked up. A TID on the same block as the previous one is one bit
//! test against the remembered entry; a TID on a later block seeks the
//! cursor forward from where it is, which searches again only the levels
//! below the lowest node covering both blocks (the last-level node alone
//! for the next of 256 neighbouring blocks), instead of descending from
//! the root. Out-of-order TIDs are still answered correctly, by a seek
//! from the root.
//!
//! The same type serves a local store and the read or write lock of a
//! [`SharedTidStore`](crate::SharedTidStore): its cursor is over either
//! tree, and the one branch on which it is runs only when the block
//! changes.

use crate::entry::BlockEntry;
use crate::store::TidStore;
use crate::table::TableCursor;
use crate::tid::Tid;

/// A lookup for TIDs probed in ascending order. Made by
/// [`TidStore::ordered_lookup`].
///
/// ```
/// use tidstore::{Tid, TidStore};
///
/// let mut ts = TidStore::new(1 << 20);
/// ts.set_block_offsets(3, &[1, 4])?;
/// ts.set_block_offsets(5, &[2])?;
/// let mut dead = ts.ordered_lookup();
/// let index_entries = [Tid::new(3, 1), Tid::new(3, 2), Tid::new(4, 1), Tid::new(5, 2)];
/// let hits: Vec<bool> = index_entries.iter().map(|&t| dead.is_member(t)).collect();
/// assert_eq!(hits, [true, false, false, true]);
/// # Ok::<(), tidstore::TidStoreError>(())
/// ```
pub struct OrderedLookup<'a> {
    cursor: TableCursor<'a>,
    /// The block last looked up and its entry, if it has one.
    last: Option<(u32, Option<&'a BlockEntry>)>,
}

impl TidStore {
    /// A lookup for TIDs probed in ascending order (any order is answered
    /// correctly; ascending order is what makes it fast).
    pub fn ordered_lookup(&self) -> OrderedLookup<'_> {
        OrderedLookup::new(TableCursor::Local(self.table().cursor_at(0)))
    }
}

impl<'a> OrderedLookup<'a> {
    pub(crate) fn new(cursor: TableCursor<'a>) -> Self {
        OrderedLookup { cursor, last: None }
    }

    /// Whether `tid` is in the store.
    //
    // Always inlined, with the seek apart: the probe of the remembered
    // block is a compare and a bit test, and a call around it cost TS-2 to
    // TS-4's in-order passes 2x to 2.6x when LLVM stopped inlining it.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn is_member(&mut self, tid: Tid) -> bool {
        let block = tid.block();
        let entry = match self.last {
            Some((last, entry)) if last == block => entry,
            _ => self.seek(block),
        };
        entry.is_some_and(|entry| entry.contains(tid.offset()))
    }

    /// Moves to `block` and remembers its entry.
    #[inline]
    fn seek(&mut self, block: u32) -> Option<&'a BlockEntry> {
        let entry = self.cursor.seek_get(block);
        self.last = Some((block, entry));
        entry
    }
}

impl core::fmt::Debug for OrderedLookup<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("OrderedLookup")
            .field("last_block", &self.last.map(|(b, _)| b))
            .finish()
    }
}
