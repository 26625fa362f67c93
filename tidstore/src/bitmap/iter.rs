//! Walking a [`TidBitmap`] in block order, as a bitmap heap scan does:
//! each page once, with its exact offsets or the mark that it is lossy.

use alloc::boxed::Box;
use core::fmt;
use core::iter::FusedIterator;

use radix_core::{Span, Spans};

use super::page::{PageEntry, PageOffsets};
use super::{PageTable, PageTableConfig, TidBitmap};

/// One page of a [`TidBitmap`] (or of a
/// [`SharedTidBitmap`](super::SharedTidBitmap)), as its walk yields it.
#[derive(Clone, Copy)]
pub struct BitmapPage<'a> {
    block: u32,
    page: PageRef<'a>,
}

/// What a page is: a local bitmap's entry, or a shared bitmap's record.
#[derive(Clone, Copy)]
#[cfg_attr(
    not(all(feature = "shm", target_os = "linux")),
    expect(dead_code, reason = "records exist only in shared bitmaps")
)]
pub(super) enum PageRef<'a> {
    Entry(&'a PageEntry),
    Words { recheck: bool, words: &'a [u64] },
    Lossy,
}

impl<'a> BitmapPage<'a> {
    /// The page `block` as `page` says.
    pub(super) fn new(block: u32, page: PageRef<'a>) -> Self {
        Self { block, page }
    }

    /// The page's block number.
    #[inline]
    pub fn block(&self) -> u32 {
        self.block
    }

    /// Whether the page is lossy: every tuple on it must be checked.
    #[inline]
    pub fn is_lossy(&self) -> bool {
        match self.page {
            PageRef::Entry(entry) => entry.is_lossy(),
            PageRef::Words { .. } => false,
            PageRef::Lossy => true,
        }
    }

    /// Whether the page's tuples must be rechecked against the query:
    /// always for a lossy page, and for an exact one that an index scan
    /// added with `recheck` (or that a lossy page's intersection left).
    #[inline]
    pub fn recheck(&self) -> bool {
        match self.page {
            PageRef::Entry(entry) => entry.recheck(),
            PageRef::Words { recheck, .. } => recheck,
            PageRef::Lossy => true,
        }
    }

    /// The matching offsets in ascending order; `None` for a lossy page.
    #[inline]
    pub fn offsets(&self) -> Option<PageOffsets<'a>> {
        match self.page {
            PageRef::Entry(entry) => PageOffsets::of(entry),
            PageRef::Words { words, .. } => Some(PageOffsets::of_words(words)),
            PageRef::Lossy => None,
        }
    }
}

impl fmt::Debug for BitmapPage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("BitmapPage");
        d.field("block", &self.block);
        match self.offsets() {
            Some(offsets) => d.field("offsets", &offsets.collect::<alloc::vec::Vec<_>>()),
            None => d.field("lossy", &true),
        };
        d.field("recheck", &self.recheck()).finish()
    }
}

/// The pages of a [`TidBitmap`] in ascending block order, each once. Made
/// by [`TidBitmap::iter`] and [`TidBitmap::iter_from`]. No sort step: the
/// tree is walked in key order.
#[derive(Clone)]
pub struct Pages<'a> {
    source: Source<'a>,
    /// The entry being walked and the blocks of it not produced yet.
    run: Option<Run<'a>>,
}

/// Where the pages come from. A tree's walk is boxed: it is a stack of a
/// frame per level, which a one-page bitmap's walk (a nested loop makes
/// one per outer row) would otherwise copy about for nothing; one
/// allocation per walk of a tree is nothing beside the walk.
#[derive(Clone)]
enum Source<'a> {
    Single(Option<(u32, &'a PageEntry)>),
    Tree(&'a PageTable, Box<Spans<'a, PageTableConfig>>),
}

/// Blocks `next..=last` of one entry (a page, a run of equal pages, or a
/// lossy range).
#[derive(Clone, Copy)]
struct Run<'a> {
    next: u32,
    last: u32,
    done: bool,
    entry: &'a PageEntry,
    /// A lossy chunk's span (its parts are fractions of it).
    chunk: Option<Span<u32>>,
}

impl<'a> Iterator for Pages<'a> {
    type Item = BitmapPage<'a>;

    #[inline]
    fn next(&mut self) -> Option<BitmapPage<'a>> {
        // A one-page bitmap's walk (a nested loop makes one per outer row)
        // stays this branch, inlined into the caller's loop.
        if let Source::Single(only) = &mut self.source {
            let (block, entry) = only.take()?;
            return Some(BitmapPage::new(block, PageRef::Entry(entry)));
        }
        self.next_in_tree()
    }
}

impl<'a> Pages<'a> {
    /// The next page of a tree's walk.
    fn next_in_tree(&mut self) -> Option<BitmapPage<'a>> {
        loop {
            if let Some(run) = &mut self.run
                && let Some(block) = run.take()
            {
                return Some(BitmapPage::new(block, PageRef::Entry(run.entry)));
            }
            self.run = None;
            let Source::Tree(tree, spans) = &mut self.source else {
                return None;
            };
            let (blocks, entry) = spans.next()?;
            // A chunk's span, for its parts: the walk may have clipped the
            // range to its start.
            let chunk = entry
                .parts()
                .and_then(|_| tree.get_span(*blocks.start()))
                .map(|(span, _)| span);
            self.run = Some(Run {
                next: *blocks.start(),
                last: *blocks.end(),
                done: false,
                entry,
                chunk,
            });
        }
    }
}

impl FusedIterator for Pages<'_> {}

impl Run<'_> {
    /// The next block of the run: every block, or in a lossy chunk those
    /// of its lossy parts.
    #[inline]
    fn take(&mut self) -> Option<u32> {
        if self.done {
            return None;
        }
        if let (Some(span), Some(parts)) = (self.chunk, self.entry.parts()) {
            loop {
                let part = super::part_of(span, self.next);
                if parts[part / 64] & (1 << (part % 64)) != 0 {
                    break;
                }
                // Skip the rest of a part that is not lossy.
                let next_part =
                    u64::from(span.start()) + ((part as u64 + 1) << super::part_shift(span));
                if next_part > u64::from(self.last) {
                    self.done = true;
                    return None;
                }
                self.next = next_part as u32;
            }
        }
        let block = self.next;
        if block == self.last {
            self.done = true;
        } else {
            self.next += 1;
        }
        Some(block)
    }
}

impl fmt::Debug for Pages<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

impl TidBitmap {
    /// The pages in ascending block order.
    #[inline]
    pub fn iter(&self) -> Pages<'_> {
        self.iter_from(0)
    }

    /// The pages from `block` on, in ascending block order: where a
    /// parallel scan resumes, or where one worker's share starts.
    #[inline]
    pub fn iter_from(&self, block: u32) -> Pages<'_> {
        let source = match (&self.tree, &self.single) {
            (Some(tree), _) => Source::Tree(tree, Box::new(tree.spans_range(block..))),
            (None, Some((only, entry))) => {
                Source::Single((*only >= block).then_some((*only, entry)))
            }
            (None, None) => Source::Single(None),
        };
        Pages { source, run: None }
    }
}

impl<'a> IntoIterator for &'a TidBitmap {
    type Item = BitmapPage<'a>;
    type IntoIter = Pages<'a>;

    fn into_iter(self) -> Pages<'a> {
        self.iter()
    }
}
