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
//! as adds do. An intersection walks both bitmaps' trees together, node
//! by node ([`RawTree::for_each_overlap`](radix_core::RawTree::for_each_overlap)):
//! a page on one side only is passed over, a page on both costs a node
//! search rather than a lookup from the root. It builds the result into a
//! new bitmap,
//! which then replaces this one: nothing is deleted under a walk (the bug
//! a proof of concept of PostgreSQL's met), and the result is built in key
//! order, so each insert finds its node from the last one.

use radix_core::Span;

use super::page::PageEntry;
use super::{Adding, TidBitmap};

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
        self.large_pages_added |= entry.is_large();
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

/// A page's state in a bitmap, for an intersection.
pub(super) enum Page<'a> {
    Exact(&'a PageEntry),
    Lossy,
}

impl<'a> Page<'a> {
    /// The page `block` of `entry`, stored for `span`: `None` where a
    /// lossy chunk's part holding it is not lossy.
    #[inline]
    fn at(span: Span<u32>, entry: &'a PageEntry, block: u32) -> Option<Self> {
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
        let mut keep = |block: u32, ours: Page<'_>, theirs: Page<'_>| {
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
        match (&self.tree, &other.tree) {
            (Some(ours), Some(theirs)) => {
                // Both trees walked together, node by node: a page on one
                // side only is passed over, and a page on both costs a node
                // search, not a lookup from the root.
                ours.for_each_overlap(
                    theirs,
                    |blocks, (our_span, our_entry), (their_span, their_entry)| {
                        for block in blocks {
                            let (Some(a), Some(b)) = (
                                Page::at(our_span, our_entry, block),
                                Page::at(their_span, their_entry, block),
                            ) else {
                                continue;
                            };
                            keep(block, a, b);
                        }
                    },
                );
            }
            // A side of one page or none: at most one page to look up.
            _ => {
                for page in self.single_page().into_iter().chain(other.single_page()) {
                    let block = page.0;
                    if let (Some(a), Some(b)) = (self.page(block), other.page(block)) {
                        keep(block, a, b);
                        break;
                    }
                }
            }
        }
        *self = result;
    }

    /// The one page of a bitmap without a tree.
    fn single_page(&self) -> Option<(u32, &PageEntry)> {
        match (&self.tree, &self.single) {
            (None, Some((block, entry))) => Some((*block, entry)),
            _ => None,
        }
    }

    /// `block`'s page, if the bitmap has it.
    pub(super) fn page(&self, block: u32) -> Option<Page<'_>> {
        let (span, entry) = match (&self.tree, &self.single) {
            (Some(tree), _) => tree.get_span(block)?,
            (None, Some((only, entry))) if *only == block => (Span::key(block), entry),
            (None, _) => return None,
        };
        Page::at(span, entry, block)
    }
}
