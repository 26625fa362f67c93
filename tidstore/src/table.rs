//! The block table: the radix tree from block number to [`BlockEntry`],
//! declared for local memory ([`BlockTable`], under
//! [`TidStore`](crate::TidStore)), for a shared area (`SharedBlockTable`,
//! under `SharedTidStore`) and for a shared area that many writers change
//! at once (`ConcurrentBlockTable`, under `SharedConcurrentTidStore`), and
//! a cursor over either of the first two.
//!
//! Block numbers are dense: a vacuum's dead blocks fill whole runs of the
//! table, so no subtree holds a single block and no node has a single
//! child worth merging. Uncompressed is then the fastest and smallest (no
//! prefix word or 16-byte alignment per node, no tag test per level:
//! benches/RESULTS.md, "Sparse keys", measures what `full` costs dense
//! keys), and both tables say `compression: none`.

use crate::entry::BlockEntry;

radix_core::radix_tree! {
    /// Block number to the entry of its dead offsets. A run of blocks with
    /// the same dead offsets (a bulk `DELETE`'s, or a table emptied of
    /// every row) is stored as range values: each aligned block of 256
    /// (65,536, ...) equal entries as one.
    pub(crate) struct BlockTable {
        key: u32,
        value: BlockEntry,
        layout: varlen,
        compression: none,
        ranges: true,
    }
}

#[cfg(all(feature = "shm", target_os = "linux"))]
radix_core::radix_tree! {
    /// Block number to the entry of its dead offsets, in a shared area,
    /// with runs of equal entries stored as range values as in
    /// [`BlockTable`].
    pub(crate) struct SharedBlockTable {
        key: u32,
        value: BlockEntry,
        layout: varlen,
        memory: shared,
        compression: none,
        ranges: true,
    }
}

#[cfg(all(feature = "shm", target_os = "linux"))]
radix_core::radix_tree! {
    /// Block number to the entry of its dead offsets, in a shared area,
    /// written by the threads of many processes at once.
    pub(crate) struct ConcurrentBlockTable {
        key: u32,
        value: BlockEntry,
        layout: varlen,
        memory: shared,
        compression: none,
        concurrency: rowex,
    }
}

/// A cursor over a local or a shared store's table: what
/// [`OrderedLookup`](crate::OrderedLookup) seeks, whichever store made it.
pub(crate) enum TableCursor<'a> {
    Local(BlockTableCursor<'a>),
    #[cfg(all(feature = "shm", target_os = "linux"))]
    Shared(SharedBlockTableCursor<'a>),
}

impl<'a> TableCursor<'a> {
    /// The entry of `block`, if it has one, seeking forward from where the
    /// cursor is (from the root if `block` lies behind it).
    #[inline]
    pub(crate) fn seek_get(&mut self, block: u32) -> Option<&'a BlockEntry> {
        match self {
            TableCursor::Local(cursor) => cursor.seek_get(block),
            #[cfg(all(feature = "shm", target_os = "linux"))]
            TableCursor::Shared(cursor) => cursor.seek_get(block),
        }
    }
}
