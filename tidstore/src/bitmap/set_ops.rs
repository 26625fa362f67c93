//! BitmapOr and BitmapAnd: [`TidBitmap::union_with`] and
//! [`TidBitmap::intersect_with`], page by page, with PostgreSQL's meaning:
//!
//! | ours | theirs | union | intersection |
//! |---|---|---|---|
//! | exact | absent | ours | dropped |
//! | exact | exact | the OR of the bits | the AND of the bits (dropped if empty) |
//! | exact | lossy | lossy | ours, to recheck |
//! | lossy | exact | lossy | theirs, to recheck |
//! | lossy | lossy | lossy | lossy |
//!
//! and exact results keep a recheck flag either side had. A union walks the
//! other bitmap and adds its pages to this one: a run of lossy pages goes
//! in as whole lossy ranges, the rest page by page, keeping to the budget
//! as adds do. An intersection walks this bitmap's entries in block order,
//! finds each page in the other with a second walk that seeks forward
//! (a node search or two a page, where a lookup would descend from the
//! root), and builds the result into a new bitmap,
//! which then replaces this one: nothing is deleted under a walk (the bug
//! a proof of concept of PostgreSQL's met), and the result is built in key
//! order, so each insert finds its node from the last one.

use radix_core::Spans;

use super::page::PageEntry;
use super::{Adding, PageTableConfig, TidBitmap};

impl TidBitmap {
    /// Adds `block`'s page as `entry`, `block` being above every page the
    /// bitmap holds (an intersection's result, built in block order): one
    /// insert, which finds its node from the last one.
    fn append_page(&mut self, block: u32, entry: PageEntry) {
        debug_assert!(
            self.iter_from(block).next().is_none(),
            "pages appended in order"
        );
        if self.lossy_ranges {
            // A lossy chunk made by the budget may cover the page already.
            if entry.is_lossy() {
                self.add_lossy(block);
            } else {
                self.add_exact(block, Adding::Entry(&entry));
            }
            return;
        }
        if entry.is_lossy() {
            self.lossy_pages += 1;
        } else {
            self.exact_pages += 1;
        }
        self.heap_bytes += entry.heap_bytes();
        if self.tree.is_none() && self.single.is_none() {
            self.single = Some((block, entry));
            return;
        }
        if self.tree.is_none() {
            self.promote();
        }
        self.tree.as_mut().expect("a tree").insert(block, entry);
    }
}

/// Finds the pages of a bitmap for blocks asked in ascending order, as an
/// intersection asks them: one walk of the bitmap's tree, which seeks each
/// block past its current entry (a node search or two, not a descent from
/// the root).
struct PageFinder<'a> {
    bitmap: &'a TidBitmap,
    /// The walk of the bitmap's tree, if it has one.
    walk: Option<Spans<'a, PageTableConfig>>,
    /// The walk's entry at or after the last block asked: its first and
    /// last block, and the entry. `None` once the walk is over.
    current: Option<(u32, u32, &'a PageEntry)>,
}

impl<'a> PageFinder<'a> {
    fn new(bitmap: &'a TidBitmap) -> Self {
        let mut walk = bitmap.tree.as_ref().map(|tree| tree.spans());
        let current = walk.as_mut().and_then(Self::step);
        Self {
            bitmap,
            walk,
            current,
        }
    }

    /// The walk's next entry.
    #[inline]
    fn step(walk: &mut Spans<'a, PageTableConfig>) -> Option<(u32, u32, &'a PageEntry)> {
        walk.next()
            .map(|(blocks, e)| (*blocks.start(), *blocks.end(), e))
    }

    /// `block`'s page; `block` at or above the last one asked.
    #[inline]
    fn find(&mut self, block: u32) -> Option<Page<'a>> {
        let Some(walk) = &mut self.walk else {
            return self.bitmap.page(block);
        };
        if self.current.is_some_and(|(_, last, _)| last < block) {
            // Then the entry holds `block` or lies after it.
            walk.seek(block);
            self.current = Self::step(walk);
        }
        let (start, _, entry) = self.current?;
        if start > block {
            return None;
        }
        if entry.parts().is_some() {
            // A lossy chunk: which of its parts are lossy depends on its
            // span, which the walk (clipped at a seek) does not give.
            return self.bitmap.page(block);
        }
        Some(Page::of(entry))
    }
}

/// A page's state in a bitmap, for an intersection.
pub(super) enum Page<'a> {
    Exact(&'a PageEntry),
    Lossy,
}

impl<'a> Page<'a> {
    /// The page an entry other than a lossy chunk stands for.
    #[inline]
    fn of(entry: &'a PageEntry) -> Self {
        if entry.is_lossy() {
            Page::Lossy
        } else {
            Page::Exact(entry)
        }
    }
}

impl TidBitmap {
    /// Adds every TID of `other` (BitmapOr), keeping to this bitmap's
    /// budget.
    ///
    /// ```
    /// use tidstore::TidBitmap;
    ///
    /// let mut a = TidBitmap::unlimited();
    /// a.add_tids(1, &[1, 2], false)?;
    /// a.add_tids(2, &[5], false)?;
    /// let mut b = TidBitmap::unlimited();
    /// b.add_tids(1, &[3], true)?;
    /// b.add_page(2);
    /// a.union_with(&b);
    /// let pages: Vec<_> = a.iter().map(|p| (p.block(), p.is_lossy(), p.recheck())).collect();
    /// assert_eq!(pages, [(1, false, true), (2, true, true)]);
    /// assert_eq!(a.iter().next().unwrap().offsets().unwrap().collect::<Vec<_>>(), [1, 2, 3]);
    /// # Ok::<(), tidstore::TidBitmapError>(())
    /// ```
    pub fn union_with(&mut self, other: &TidBitmap) {
        if let Some((block, entry)) = &other.single {
            self.union_page(*block, entry);
            return;
        }
        let Some(tree) = &other.tree else { return };
        for (blocks, entry) in tree.spans() {
            match entry {
                PageEntry::LossyPage => self.add_pages(blocks),
                PageEntry::LossyChunk(_) => {
                    for page in other.iter_from(*blocks.start()) {
                        if page.block() > *blocks.end() {
                            break;
                        }
                        self.add_lossy(page.block());
                        self.keep_to_budget();
                    }
                }
                _ => {
                    for block in blocks {
                        self.union_page(block, entry);
                    }
                }
            }
        }
    }

    /// Adds one page of another bitmap.
    fn union_page(&mut self, block: u32, entry: &PageEntry) {
        if entry.is_lossy() {
            self.add_lossy(block);
        } else {
            self.add_exact(block, Adding::Entry(entry));
        }
        self.keep_to_budget();
    }

    /// Keeps only the TIDs that are also in `other` (BitmapAnd), with
    /// PostgreSQL's meaning for lossy pages (see the module table).
    ///
    /// ```
    /// use tidstore::TidBitmap;
    ///
    /// let mut a = TidBitmap::unlimited();
    /// a.add_tids(1, &[1, 2, 3], false)?;
    /// a.add_tids(2, &[4], false)?;
    /// a.add_tids(3, &[9], false)?;
    /// let mut b = TidBitmap::unlimited();
    /// b.add_tids(1, &[2, 3, 4], false)?;
    /// b.add_page(2);
    /// a.intersect_with(&b);
    /// let pages: Vec<_> = a
    ///     .iter()
    ///     .map(|p| (p.block(), p.offsets().unwrap().collect::<Vec<_>>(), p.recheck()))
    ///     .collect();
    /// assert_eq!(pages, [(1, vec![2, 3], false), (2, vec![4], true)]);
    /// # Ok::<(), tidstore::TidBitmapError>(())
    /// ```
    pub fn intersect_with(&mut self, other: &TidBitmap) {
        let mut result = TidBitmap::with_budget(self.max_bytes);
        let mut theirs = PageFinder::new(other);
        let mut keep = |block: u32, ours: Page<'_>| {
            let Some(theirs) = theirs.find(block) else {
                return;
            };
            let entry = match (ours, theirs) {
                (Page::Lossy, Page::Lossy) => PageEntry::LossyPage,
                (Page::Lossy, Page::Exact(entry)) | (Page::Exact(entry), Page::Lossy) => {
                    entry.with_recheck()
                }
                (Page::Exact(a), Page::Exact(b)) => match a.intersect(b) {
                    Some(entry) => entry,
                    None => return,
                },
            };
            result.append_page(block, entry);
            result.keep_to_budget();
        };
        match (&self.tree, &self.single) {
            (Some(tree), _) => {
                // The tree's entries rather than its pages: a run of equal
                // pages is one entry, and a page costs no walk state.
                for (blocks, entry) in tree.spans() {
                    if entry.parts().is_some() {
                        // A lossy chunk: only its lossy parts are pages.
                        for page in self.iter_from(*blocks.start()) {
                            if page.block() > *blocks.end() {
                                break;
                            }
                            keep(page.block(), Page::Lossy);
                        }
                    } else {
                        for block in blocks {
                            keep(block, Page::of(entry));
                        }
                    }
                }
            }
            (None, Some((block, entry))) => keep(*block, Page::of(entry)),
            (None, None) => {}
        }
        *self = result;
    }

    /// `block`'s page, if the bitmap has it.
    pub(super) fn page(&self, block: u32) -> Option<Page<'_>> {
        let (span, entry) = match (&self.tree, &self.single) {
            (Some(tree), _) => tree.get_span(block)?,
            (None, Some((only, entry))) if *only == block => (radix_core::Span::key(block), entry),
            (None, _) => return None,
        };
        if let Some(parts) = entry.parts() {
            let part = super::part_of(span, block);
            return (parts[part / 64] & (1 << (part % 64)) != 0).then_some(Page::Lossy);
        }
        Some(if entry.is_lossy() {
            Page::Lossy
        } else {
            Page::Exact(entry)
        })
    }
}
