//! The TID bitmap: the set of TIDs a bitmap index scan collects, combined
//! by BitmapAnd and BitmapOr and walked in block order by a bitmap heap
//! scan, within a memory budget.
//!
//! PostgreSQL keeps it in `tidbitmap.c`: a hash table of 48-byte page
//! entries, sorted before every walk, that turns pages into lossy 256-page
//! chunks in hash order when it passes `work_mem`, and doubles its own
//! limit when that is not enough. [`TidBitmap`] keeps it in the project's
//! radix tree instead, keyed by block number:
//!
//! - **A page is one 16-byte entry** in a last-level node (`layout:
//!   inline`): its matching offsets as a 112-bit bitmap, or, for a page
//!   with a larger offset, a pointer to words of its own; or the mark that
//!   the page is lossy. A tree walk is already in block order: there is no
//!   sort.
//! - **A lossy chunk is a range value** ([`radix_core::Span`]): one value
//!   in the slot of the level above the chunk's 256 pages, where their
//!   node was, holding which of those pages are lossy. Turning a chunk
//!   lossy frees its node; a page added to it later only sets its bit.
//! - **The budget is a promise.** [`memory_usage`](TidBitmap::memory_usage)
//!   never passes [`max_bytes`](TidBitmap::max_bytes) after a call
//!   returns: when an add passes it, the bitmap turns chunks lossy, those
//!   that free the most bytes for the fewest pages made lossy first, until
//!   it is an eighth below the budget (see [`budget`]). It never raises
//!   its own limit.
//! - **A lossy page is also a bit beside the tree** ([`lossy_pages`]): an
//!   add to it is a bit test, not a descent to a range cell and a chunk's
//!   parts that miss the cache. Once a budget has made most pages lossy,
//!   most adds end there.
//! - **A bitmap of one page is no tree**, as PostgreSQL's one-page mode:
//!   the page sits in the bitmap itself until a second page arrives. A
//!   nested loop that makes a bitmap per outer row allocates nothing.
//!
//! Its set operations have PostgreSQL's meaning (a lossy page OR anything
//! is lossy; an exact page AND a lossy one keeps the exact offsets for
//! recheck; exact AND exact is the AND of their bits; empty pages go), and
//! an intersection builds its result fresh rather than deleting under a
//! walk ([`set_ops`]).

mod budget;
mod iter;
mod lossy_pages;
mod page;
mod set_ops;
#[cfg(all(feature = "shm", target_os = "linux"))]
mod shared;

use core::fmt;
use core::ops::{Bound, RangeBounds};

use radix_core::Span;

pub use iter::{BitmapPage, Pages};
use lossy_pages::LossyPages;
use page::PageEntry;
pub use page::PageOffsets;
#[cfg(all(feature = "shm", target_os = "linux"))]
pub use shared::{SharedPages, SharedTidBitmap, SharedWalk};

use crate::tid::{MAX_OFFSET, Tid};

radix_core::radix_tree! {
    /// Block number to its page entry; lossy chunks are range values.
    pub(crate) struct PageTable {
        key: u32,
        value: PageEntry,
        layout: inline,
        ranges: true,
    }
}

/// Why a [`TidBitmap`] call was refused. A refused call changes nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TidBitmapError {
    /// The budget is below the least a bitmap can always keep to.
    #[error(
        "a TID bitmap's budget must be at least {min} bytes (the least it can keep to \
         by making every page lossy), not {max_bytes}"
    )]
    BudgetTooSmall {
        /// The budget asked for.
        max_bytes: usize,
        /// [`TidBitmap::MIN_BUDGET`].
        min: usize,
    },
    /// An offset was 0 or above [`MAX_OFFSET`].
    #[error("block {block}: offset {offset} is outside 1..={MAX_OFFSET}")]
    OffsetOutOfRange {
        /// The block.
        block: u32,
        /// The offending offset.
        offset: u16,
    },
}

/// A set of TIDs for a bitmap heap scan: exact pages (their matching
/// offsets) and lossy pages (every tuple to be rechecked), in block order,
/// within a memory budget.
///
/// ```
/// use tidstore::{Tid, TidBitmap};
///
/// // What two bitmap index scans found.
/// let mut a = TidBitmap::new(4 << 20)?;
/// a.add_tids(7, &[3, 1, 2], false)?; // any order
/// a.add_tid(Tid::new(9, 4), false)?;
/// let mut b = TidBitmap::new(4 << 20)?;
/// b.add_tids(7, &[2, 3, 5], false)?;
/// b.add_page(9); // the whole page, lossy
/// // BitmapAnd, then the heap scan's walk.
/// a.intersect_with(&b);
/// let pages: Vec<_> = a
///     .iter()
///     .map(|p| (p.block(), p.offsets().map(|o| o.collect::<Vec<_>>()), p.recheck()))
///     .collect();
/// assert_eq!(pages, [(7, Some(vec![2, 3]), false), (9, Some(vec![4]), true)]);
/// # Ok::<(), tidstore::TidBitmapError>(())
/// ```
pub struct TidBitmap {
    max_bytes: usize,
    /// The only page, while there is at most one (no tree yet).
    single: Option<(u32, PageEntry)>,
    /// Every page, once a second one arrived.
    tree: Option<PageTable>,
    /// Bytes the entries own outside the tree (large pages' words, lossy
    /// chunks' parts).
    heap_bytes: usize,
    exact_pages: usize,
    lossy_pages: usize,
    /// Whether any lossy range was ever stored (until `clear`).
    lossy_ranges: bool,
    /// Whether any large page was ever added (until `clear`): only then
    /// does a lossify round walk every page to count the large pages'
    /// words into its candidates (`budget`).
    large_pages_added: bool,
    /// The pages known to be lossy, for adds that need no descent
    /// ([`lossy_pages`]).
    lossy_pages_known: LossyPages,
}

impl TidBitmap {
    /// The smallest budget [`new`](Self::new) takes: what the bitmap needs
    /// at most once every page is lossy in the coarsest chunks (a root node
    /// and 256 lossy ranges), with room to spare.
    pub const MIN_BUDGET: usize = 32 << 10;

    /// An empty bitmap whose [`memory_usage`](Self::memory_usage) will
    /// never pass `max_bytes`.
    ///
    /// # Errors
    ///
    /// [`TidBitmapError::BudgetTooSmall`] below [`MIN_BUDGET`](Self::MIN_BUDGET).
    pub fn new(max_bytes: usize) -> Result<Self, TidBitmapError> {
        if max_bytes < Self::MIN_BUDGET {
            return Err(TidBitmapError::BudgetTooSmall {
                max_bytes,
                min: Self::MIN_BUDGET,
            });
        }
        Ok(Self::with_budget(max_bytes))
    }

    /// An empty bitmap with no budget: no page is ever made lossy but by
    /// [`add_page`](Self::add_page) and its siblings.
    pub fn unlimited() -> Self {
        Self::with_budget(usize::MAX)
    }

    fn with_budget(max_bytes: usize) -> Self {
        Self {
            max_bytes,
            single: None,
            tree: None,
            heap_bytes: 0,
            exact_pages: 0,
            lossy_pages: 0,
            lossy_ranges: false,
            large_pages_added: false,
            lossy_pages_known: LossyPages::for_budget(max_bytes),
        }
    }

    /// Adds the TIDs `(block, o)` for each `o` of `offsets` (in any order;
    /// repeats are one TID), merging into the page if it is there; with
    /// `recheck`, the page's matches must be rechecked. A lossy page takes
    /// them as it is. No offsets add nothing.
    ///
    /// # Errors
    ///
    /// [`TidBitmapError::OffsetOutOfRange`] for an offset outside
    /// `1..=2048`; nothing is added.
    pub fn add_tids(
        &mut self,
        block: u32,
        offsets: &[u16],
        recheck: bool,
    ) -> Result<(), TidBitmapError> {
        if let Some(&offset) = offsets.iter().find(|&&o| o == 0 || o > MAX_OFFSET) {
            return Err(TidBitmapError::OffsetOutOfRange { block, offset });
        }
        if !offsets.is_empty() {
            self.add_exact(block, Adding::Offsets(offsets, recheck));
            self.keep_to_budget();
        }
        Ok(())
    }

    /// Adds one TID.
    ///
    /// # Errors
    ///
    /// As for [`add_tids`](Self::add_tids).
    #[inline]
    pub fn add_tid(&mut self, tid: Tid, recheck: bool) -> Result<(), TidBitmapError> {
        // An empty bitmap's first TID, and a one-page bitmap's next TID on
        // its page: a bit set, no tree, no budget to check (a small entry
        // owns no memory). A nested loop's bitmaps live on this path.
        if self.tree.is_none() && tid.offset() != 0 {
            match &mut self.single {
                None => {
                    if let Some(entry) = PageEntry::of_small_offset(tid.offset(), recheck) {
                        self.single = Some((tid.block(), entry));
                        self.exact_pages = 1;
                        return Ok(());
                    }
                }
                Some((only, entry)) => {
                    if *only == tid.block() && entry.add_small(tid.offset(), recheck).is_some() {
                        return Ok(());
                    }
                }
            }
        }
        self.add_tids(tid.block(), &[tid.offset()], recheck)
    }

    /// Adds every tuple of `block`: the page becomes lossy, its exact
    /// offsets, if it had any, given up.
    pub fn add_page(&mut self, block: u32) {
        self.add_lossy(block);
        self.keep_to_budget();
    }

    /// [`add_page`](Self::add_page) for every block of `blocks`: whole
    /// aligned chunks of them become one lossy range each.
    ///
    /// ```
    /// use tidstore::TidBitmap;
    ///
    /// let mut b = TidBitmap::unlimited();
    /// b.add_pages(100..70_000);
    /// assert_eq!((b.lossy_pages(), b.exact_pages()), (69_900, 0));
    /// assert!(b.memory_usage() < 32 << 10); // 69,900 pages, ~300 ranges
    /// assert_eq!(b.iter_from(69_999).map(|p| p.block()).collect::<Vec<_>>(), [69_999]);
    /// ```
    pub fn add_pages(&mut self, blocks: impl RangeBounds<u32>) {
        let low = match blocks.start_bound() {
            Bound::Included(&b) => Some(b),
            Bound::Excluded(&b) => b.checked_add(1),
            Bound::Unbounded => Some(0),
        };
        let high = match blocks.end_bound() {
            Bound::Included(&b) => Some(b),
            Bound::Excluded(&b) => b.checked_sub(1),
            Bound::Unbounded => Some(u32::MAX),
        };
        let (Some(mut low), Some(high)) = (low, high) else {
            return;
        };
        while low <= high {
            let span = widest_span(low, high);
            if span.level() == 0 {
                self.add_lossy(low);
            } else {
                self.store_lossy_span(span, PageEntry::LossyPage);
            }
            self.keep_to_budget();
            match span.last().checked_add(1) {
                Some(next) => low = next,
                None => break,
            }
        }
    }

    /// Pages: exact and lossy.
    pub fn len(&self) -> usize {
        self.exact_pages + self.lossy_pages
    }

    /// Whether the bitmap holds no page.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Pages whose matching offsets are known.
    pub fn exact_pages(&self) -> usize {
        self.exact_pages
    }

    /// Pages whose every tuple must be rechecked.
    pub fn lossy_pages(&self) -> usize {
        self.lossy_pages
    }

    /// The bytes the bitmap's pages occupy: the tree's live nodes, what
    /// the entries own beside them (large pages' words, lossy chunks'
    /// parts), and, once a budget has made pages lossy, a bit per page up
    /// to the highest lossy one (at most 1/16 of the budget). The slab allocator beneath holds whole blocks of nodes, so
    /// the process may hold up to a block per node size more, and room
    /// that lossy chunks freed until later pages take it. A bitmap of one
    /// small page occupies nothing.
    pub fn memory_usage(&self) -> usize {
        self.tree.as_ref().map_or(0, |t| t.memory().bytes_in_use())
            + self.heap_bytes
            + self.lossy_pages_known.bytes()
    }

    /// The budget: [`memory_usage`](Self::memory_usage) never passes it.
    /// `usize::MAX` for [`unlimited`](Self::unlimited).
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Removes every page, giving the memory back.
    pub fn clear(&mut self) {
        *self = Self::with_budget(self.max_bytes);
    }

    /// Adds exact offsets (valid, at least one) to `block`.
    #[inline]
    fn add_exact(&mut self, block: u32, adding: Adding<'_>) {
        self.large_pages_added |= adding.is_large();
        if self.tree.is_none() {
            match &mut self.single {
                None => {
                    let entry = adding.entry();
                    self.heap_bytes += entry.heap_bytes();
                    self.single = Some((block, entry));
                    self.exact_pages = 1;
                    return;
                }
                Some((only, entry)) if *only == block => {
                    self.heap_bytes -= entry.heap_bytes();
                    if !entry.is_lossy() {
                        adding.apply(entry);
                    }
                    self.heap_bytes += entry.heap_bytes();
                    return;
                }
                Some(_) => self.promote(),
            }
        }
        if self.lossy_pages_known.contains(block) {
            // A lossy page takes any TID as it is.
            return;
        }
        let tree = self.tree.as_mut().expect("a tree");
        match tree.get_span_mut(block) {
            None => {
                let entry = adding.entry();
                self.heap_bytes += entry.heap_bytes();
                tree.insert(block, entry);
                self.exact_pages += 1;
            }
            Some((span, entry)) if span.level() == 0 => {
                if entry.is_lossy() {
                    self.lossy_pages_known.insert(span);
                } else {
                    self.heap_bytes -= entry.heap_bytes();
                    adding.apply(entry);
                    self.heap_bytes += entry.heap_bytes();
                }
            }
            Some((span, entry)) => {
                if entry.parts().is_some() {
                    // A page that joins a lossy chunk is lossy: the chunk
                    // already pays for it.
                    self.lossy_pages += join_chunk(
                        entry,
                        span,
                        block,
                        &mut self.heap_bytes,
                        &mut self.lossy_pages_known,
                    );
                } else if !entry.is_lossy() {
                    // A run of equal exact pages, merged into a range:
                    // this one differs now, and the range splits.
                    let mut changed = entry.clone();
                    if adding.apply(&mut changed) {
                        self.heap_bytes += changed.heap_bytes();
                        tree.insert(block, changed);
                    }
                } else {
                    self.lossy_pages_known.insert(span);
                }
            }
        }
    }

    /// Makes `block` lossy.
    fn add_lossy(&mut self, block: u32) {
        if self.tree.is_none() {
            match &mut self.single {
                None => {
                    self.single = Some((block, PageEntry::LossyPage));
                    self.lossy_pages = 1;
                    return;
                }
                Some((only, entry)) if *only == block => {
                    if !entry.is_lossy() {
                        self.heap_bytes -= entry.heap_bytes();
                        *entry = PageEntry::LossyPage;
                        self.exact_pages -= 1;
                        self.lossy_pages += 1;
                    }
                    return;
                }
                Some(_) => self.promote(),
            }
        }
        if self.lossy_pages_known.contains(block) {
            return;
        }
        let tree = self.tree.as_mut().expect("a tree");
        match tree.get_span_mut(block) {
            None => {
                tree.insert(block, PageEntry::LossyPage);
                self.lossy_pages += 1;
                self.lossy_pages_known.insert(Span::key(block));
            }
            Some((span, entry)) => {
                if entry.parts().is_some() {
                    self.lossy_pages += join_chunk(
                        entry,
                        span,
                        block,
                        &mut self.heap_bytes,
                        &mut self.lossy_pages_known,
                    );
                } else if !entry.is_lossy() {
                    self.exact_pages -= 1;
                    self.lossy_pages += 1;
                    if span.level() == 0 {
                        self.heap_bytes -= entry.heap_bytes();
                        *entry = PageEntry::LossyPage;
                    } else {
                        tree.insert(block, PageEntry::LossyPage);
                    }
                    self.lossy_pages_known.insert(Span::key(block));
                } else {
                    self.lossy_pages_known.insert(span);
                }
            }
        }
    }

    /// Stores the lossy range `entry` over `span` (level 1 or more),
    /// counting what it replaces.
    ///
    /// A wider lossy range that covers the span already holds it, or,
    /// if it is a chunk, takes it as one of its parts (the span fits in
    /// one: a part is a level below the chunk), `entry`'s own parts, if
    /// any, giving way to the whole part. Left to the tree, a chunk would
    /// split into copies one level down, each reading its parts as
    /// narrower pages and owning words the bitmap never counted.
    fn store_lossy_span(&mut self, span: Span<u32>, entry: PageEntry) {
        if self.tree.is_none() {
            self.promote();
        }
        let tree = self.tree.as_mut().expect("a tree");
        if let Some((held, lossy)) = tree.get_span_mut(span.start())
            && held.level() > span.level()
            && lossy.is_lossy()
        {
            if lossy.parts().is_some() {
                self.lossy_pages += join_chunk(
                    lossy,
                    held,
                    span.start(),
                    &mut self.heap_bytes,
                    &mut self.lossy_pages_known,
                );
            }
            return;
        }
        self.lossy_ranges = true;
        let added = lossy_count(span, &entry);
        self.heap_bytes += entry.heap_bytes();
        note_lossy(&mut self.lossy_pages_known, span, &entry);
        let tree = self.tree.as_mut().expect("a tree");
        let (mut exact, mut lossy, mut heap) = (0, 0, 0);
        tree.insert_span_with_old(span, entry, |old_span, old| {
            exact += exact_count(old_span, old);
            lossy += lossy_count(old_span, old);
            heap += old.heap_bytes();
        })
        .expect("a u32 tree counts its keys in a usize");
        self.exact_pages -= exact;
        self.lossy_pages = self.lossy_pages - lossy + added;
        self.heap_bytes -= heap;
    }

    /// Moves the one page into a new tree, where the second one goes.
    #[cold]
    fn promote(&mut self) {
        let mut tree = PageTable::new();
        if let Some((block, entry)) = self.single.take() {
            tree.insert(block, entry);
        }
        self.tree = Some(tree);
    }
}

/// What an exact add brings to a page.
#[derive(Clone, Copy)]
enum Adding<'a> {
    /// Offsets (valid, at least one) and the recheck flag.
    Offsets(&'a [u16], bool),
    /// Another bitmap's exact entry.
    Entry(&'a PageEntry),
}

impl Adding<'_> {
    /// The page's entry, when it had none.
    #[inline]
    fn entry(self) -> PageEntry {
        match self {
            Adding::Offsets(offsets, recheck) => PageEntry::of_offsets(offsets, recheck),
            Adding::Entry(entry) => entry.clone(),
        }
    }

    /// Whether it makes or brings a large page.
    #[inline]
    fn is_large(self) -> bool {
        match self {
            Adding::Offsets(offsets, _) => offsets.iter().any(|&o| o > page::SMALL_OFFSETS),
            Adding::Entry(entry) => entry.is_large(),
        }
    }

    /// Adds to the page's exact entry; whether it changed.
    #[inline]
    fn apply(self, entry: &mut PageEntry) -> bool {
        match self {
            Adding::Offsets(offsets, recheck) => entry.add(offsets, recheck),
            Adding::Entry(other) => entry.union(other),
        }
    }
}

/// The widest aligned span that starts at `low` and ends by `high`.
fn widest_span(low: u32, high: u32) -> Span<u32> {
    let mut level = 0;
    while level < Span::<u32>::MAX_LEVEL {
        match Span::new(low, level + 1) {
            Ok(span) if span.last() <= high => level += 1,
            _ => break,
        }
    }
    Span::new(low, level).expect("level 0 and aligned levels are spans")
}

/// log2 of the pages in one part of `span`'s 256 (a range, level 1 or
/// more).
pub(super) fn part_shift(span: Span<u32>) -> u32 {
    8 * (span.level() - 1)
}

/// Pages in one part of `span`'s 256.
fn part_pages(span: Span<u32>) -> usize {
    1 << part_shift(span)
}

/// The part of range `span` that `block` lies in.
#[inline]
pub(super) fn part_of(span: Span<u32>, block: u32) -> usize {
    ((block - span.start()) >> part_shift(span)) as usize
}

/// Marks `block`'s part of lossy chunk `span` lossy; returns the pages
/// that became lossy.
fn mark_part(parts: &mut [u64; 4], span: Span<u32>, block: u32) -> usize {
    let part = part_of(span, block);
    let (word, bit) = (part / 64, 1u64 << (part % 64));
    if parts[word] & bit != 0 {
        return 0;
    }
    parts[word] |= bit;
    part_pages(span)
}

/// Makes `block` a lossy page of the lossy chunk `entry` over `span`;
/// returns the pages that became lossy (noted in `known`). A chunk whose
/// every part is lossy becomes a lossy range with no parts to keep
/// (`heap_bytes` loses them), which a later page's lookup reads without
/// following a pointer.
fn join_chunk(
    entry: &mut PageEntry,
    span: Span<u32>,
    block: u32,
    heap_bytes: &mut usize,
    known: &mut LossyPages,
) -> usize {
    let parts = entry.parts_mut().expect("a lossy chunk");
    let added = mark_part(parts, span, block);
    if added > 0 {
        known.insert(Span::containing(block, span.level() - 1).expect("a lower level"));
        if *parts == [u64::MAX; 4] {
            *heap_bytes -= entry.heap_bytes();
            *entry = PageEntry::LossyPage;
        }
    }
    added
}

/// Notes in `known` the pages that lossy entry `entry` over `span` makes
/// lossy: all of them, or a chunk's lossy parts.
fn note_lossy(known: &mut LossyPages, span: Span<u32>, entry: &PageEntry) {
    match entry {
        PageEntry::LossyPage => known.insert(span),
        PageEntry::LossyChunk(parts) => {
            for part in 0..256 {
                if parts[part / 64] & (1 << (part % 64)) != 0 {
                    let first = span.start() + ((part as u32) << part_shift(span));
                    known.insert(Span::new(first, span.level() - 1).expect("an aligned part"));
                }
            }
        }
        PageEntry::Small { .. } | PageEntry::Large(_) => {}
    }
}

/// The exact pages `entry` stands for over `span`.
fn exact_count(span: Span<u32>, entry: &PageEntry) -> usize {
    if entry.is_lossy() {
        0
    } else {
        span.key_count() as usize
    }
}

/// The lossy pages `entry` stands for over `span`.
fn lossy_count(span: Span<u32>, entry: &PageEntry) -> usize {
    match entry {
        PageEntry::LossyPage => span.key_count() as usize,
        PageEntry::LossyChunk(parts) => {
            parts.iter().map(|w| w.count_ones() as usize).sum::<usize>() * part_pages(span)
        }
        PageEntry::Small { .. } | PageEntry::Large(_) => 0,
    }
}

impl Clone for TidBitmap {
    fn clone(&self) -> Self {
        Self {
            max_bytes: self.max_bytes,
            single: self.single.clone(),
            tree: self.tree.clone(),
            heap_bytes: self.heap_bytes,
            exact_pages: self.exact_pages,
            lossy_pages: self.lossy_pages,
            lossy_ranges: self.lossy_ranges,
            large_pages_added: self.large_pages_added,
            lossy_pages_known: self.lossy_pages_known.clone(),
        }
    }
}

impl Drop for TidBitmap {
    fn drop(&mut self) {
        if let Some(tree) = &mut self.tree
            && self.heap_bytes == 0
        {
            // No entry owns memory (every page is small or lossy, no chunk
            // keeps parts): the nodes go back without a visit to each of
            // their entries, which a bitmap of a million pages would pay
            // for at every intersection (it replaces the bitmap).
            tree.forget_values();
        }
    }
}

impl Default for TidBitmap {
    /// An [`unlimited`](TidBitmap::unlimited) bitmap.
    fn default() -> Self {
        Self::unlimited()
    }
}

impl fmt::Debug for TidBitmap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TidBitmap")
            .field("exact_pages", &self.exact_pages)
            .field("lossy_pages", &self.lossy_pages)
            .field("memory_usage", &self.memory_usage())
            .field("max_bytes", &self.max_bytes)
            .finish()
    }
}

#[cfg(test)]
mod tests;
