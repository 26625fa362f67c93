//! One page's entry in a [`TidBitmap`](super::TidBitmap): which offsets of
//! the page match (exact), or that the whole page must be rechecked
//! (lossy); and, as a range value only, which parts of a chunk of pages
//! are lossy.
//!
//! An entry is 16 bytes, stored inline in the tree's last-level nodes
//! (`layout: inline`): a page whose matching offsets are all at most
//! [`SMALL_OFFSETS`] keeps them in the entry itself, a bitmap of 112 bits,
//! with no allocation; a larger one points to a bitmap of as many words
//! as its largest offset needs. A page of PostgreSQL's default 8 KiB size
//! holds at most 291 tuples, and most hold far fewer than 112.

use alloc::boxed::Box;

use crate::tid::MAX_OFFSET;

/// The largest offset an entry holds without an allocation.
pub(crate) const SMALL_OFFSETS: u16 = 112;
/// Bytes of a small entry's bitmap.
/// Words of the largest page's bitmap.
pub(crate) const MAX_WORDS: usize = MAX_OFFSET as usize / 64;

/// A page's entry. Exact entries are normalised: `Small` whenever every
/// offset fits, never empty, `Large` without trailing zero words.
#[derive(Clone, Debug)]
pub(crate) enum PageEntry {
    /// Offsets `1..=112`: offset `o` is bit `o - 1` of the 112-bit
    /// integer `low | mid << 64 | top << 96` (in three fields, so that the
    /// enum's tag and the flag fit beside them in 16 bytes).
    Small {
        /// The matches must be rechecked against the query.
        recheck: bool,
        /// Bits 96 to 111.
        top: u16,
        /// Bits 64 to 95.
        mid: u32,
        /// Bits 0 to 63.
        low: u64,
    },
    /// Offsets up to [`MAX_OFFSET`], in words of their own.
    Large(Box<LargePage>),
    /// Every tuple of the page must be checked.
    LossyPage,
    /// A range value over a span of pages: bit `i` set says that part `i`
    /// of the span's 256 (a page, in a chunk of 256 pages) is lossy.
    LossyChunk(Box<[u64; 4]>),
}

/// The bitmap of a page with an offset above [`SMALL_OFFSETS`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LargePage {
    recheck: bool,
    words: Box<[u64]>,
}

static_assertions::assert_eq_size!(PageEntry, [u64; 2]);

/// The tree's rule for merging a full node of equal values into a range,
/// and for absorbing a key into a range of its value: small exact pages
/// and lossy pages compare by content. A large page and a lossy chunk are
/// never equal to anything, themselves included: the tree then never
/// makes copies of their words when a range splits, nor drops copies when
/// a node merges, so each allocation an entry owns belongs to one key or
/// one range, which the bitmap's count of them relies on; and two lossy
/// chunks never merge into a wider range, whose parts would be wider
/// too. [`PageEntry::same`] is equality proper.
impl PartialEq for PageEntry {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (
                Self::Small {
                    recheck,
                    top,
                    mid,
                    low,
                },
                Self::Small {
                    recheck: r,
                    top: t,
                    mid: m,
                    low: l,
                },
            ) => (recheck, top, mid, low) == (r, t, m, l),
            (Self::LossyPage, Self::LossyPage) => true,
            _ => false,
        }
    }
}

/// Bits `0..` of a page's offsets, `1..`, as words.
#[derive(Clone, Copy)]
pub(crate) struct Words {
    buf: [u64; MAX_WORDS],
    len: usize,
}

impl Words {
    /// No offsets.
    pub(crate) const EMPTY: Self = Self {
        buf: [0; MAX_WORDS],
        len: 0,
    };

    /// The words in use.
    pub(crate) fn as_slice(&self) -> &[u64] {
        &self.buf[..self.len]
    }

    /// Sets offset `offset` (`1..=MAX_OFFSET`).
    pub(crate) fn set(&mut self, offset: u16) {
        let bit = offset as usize - 1;
        let word = bit / 64;
        if word >= self.len {
            self.len = word + 1;
        }
        self.buf[word] |= 1 << (bit % 64);
    }

    /// Word by word, `op(ours, theirs)` over the longer of the two.
    pub(crate) fn combine(&self, other: &Self, op: impl Fn(u64, u64) -> u64) -> Self {
        let mut out = Self::EMPTY;
        out.len = self.len.max(other.len);
        for (i, word) in out.buf[..out.len].iter_mut().enumerate() {
            *word = op(self.buf[i], other.buf[i]);
        }
        out
    }

    /// Drops trailing zero words.
    fn trim(&mut self) {
        while self.len > 0 && self.buf[self.len - 1] == 0 {
            self.len -= 1;
        }
    }
}

impl PageEntry {
    /// The exact entry of `words`, normalised; `None` if it holds no
    /// offset.
    pub(crate) fn exact(mut words: Words, recheck: bool) -> Option<Self> {
        words.trim();
        match words.len {
            0 => None,
            1 | 2 if words.buf[1] >> (SMALL_OFFSETS - 64) == 0 => {
                let bits = u128::from(words.buf[0]) | u128::from(words.buf[1]) << 64;
                Some(Self::small(recheck, bits))
            }
            _ => Some(Self::Large(Box::new(LargePage {
                recheck,
                words: words.as_slice().into(),
            }))),
        }
    }

    /// A lossy chunk of `parts` (bit `i`: part `i` is lossy).
    pub(crate) fn lossy_chunk(parts: [u64; 4]) -> Self {
        Self::LossyChunk(Box::new(parts))
    }

    /// The small entry of `bits` (below bit 112).
    #[inline]
    fn small(recheck: bool, bits: u128) -> Self {
        Self::Small {
            recheck,
            top: (bits >> 96) as u16,
            mid: (bits >> 64) as u32,
            low: bits as u64,
        }
    }

    /// A small entry's bits as one integer.
    #[inline]
    fn small_bits(top: u16, mid: u32, low: u64) -> u128 {
        u128::from(low) | u128::from(mid) << 64 | u128::from(top) << 96
    }

    /// An exact entry's offsets as words; empty for a lossy one.
    pub(crate) fn words(&self) -> Words {
        let mut out = Words::EMPTY;
        match self {
            Self::Small { top, mid, low, .. } => {
                out.buf[0] = *low;
                out.buf[1] = u64::from(*mid) | u64::from(*top) << 32;
                out.len = 2;
            }
            Self::Large(page) => {
                out.buf[..page.words.len()].copy_from_slice(&page.words);
                out.len = page.words.len();
            }
            Self::LossyPage | Self::LossyChunk(_) => {}
        }
        out
    }

    /// The small entry of one offset (in `1..`), if it fits one.
    #[inline]
    pub(crate) fn of_small_offset(offset: u16, recheck: bool) -> Option<Self> {
        (offset <= SMALL_OFFSETS).then(|| Self::small(recheck, 1 << (offset - 1)))
    }

    /// Adds one offset (in `1..=MAX_OFFSET`) and the recheck flag to a
    /// small entry, if it is one and the offset fits: `Some` of whether it
    /// changed, else `None`. What one TID of a bitmap index scan costs.
    #[inline]
    pub(crate) fn add_small(&mut self, offset: u16, recheck: bool) -> Option<bool> {
        let Self::Small {
            recheck: r,
            top,
            mid,
            low,
        } = self
        else {
            return None;
        };
        let changed = match offset - 1 {
            bit @ 0..=63 => {
                let old = *low;
                *low |= 1 << bit;
                *low != old
            }
            bit @ 64..=95 => {
                let old = *mid;
                *mid |= 1 << (bit - 64);
                *mid != old
            }
            bit @ 96..=111 => {
                let old = *top;
                *top |= 1 << (bit - 96);
                *top != old
            }
            _ => return None,
        };
        let changed = changed || (recheck && !*r);
        *r |= recheck;
        Some(changed)
    }

    /// Adds `offsets` (each in `1..=MAX_OFFSET`) and the recheck flag to an
    /// exact entry; returns whether it changed.
    #[inline]
    pub(crate) fn add(&mut self, offsets: &[u16], recheck: bool) -> bool {
        if let [offset] = *offsets
            && let Some(changed) = self.add_small(offset, recheck)
        {
            return changed;
        }
        if let Self::Small {
            recheck: r,
            top,
            mid,
            low,
        } = self
            && offsets.iter().all(|&o| o <= SMALL_OFFSETS)
        {
            let old = Self::small_bits(*top, *mid, *low);
            let mut new = old;
            for &o in offsets {
                new |= 1 << (o - 1);
            }
            let changed = new != old || (recheck && !*r);
            *self = Self::small(recheck || *r, new);
            return changed;
        }
        let mut words = self.words();
        for &o in offsets {
            words.set(o);
        }
        let recheck = recheck || self.recheck();
        let new = Self::exact(words, recheck).expect("an exact entry gains offsets");
        let changed = !new.same(self);
        *self = new;
        changed
    }

    /// Adds the offsets and recheck flag of exact entry `other` to this
    /// exact entry; returns whether it changed.
    pub(crate) fn union(&mut self, other: &PageEntry) -> bool {
        if let (
            Self::Small {
                recheck: r,
                top,
                mid,
                low,
            },
            Self::Small {
                recheck,
                top: t,
                mid: m,
                low: l,
            },
        ) = (&*self, other)
        {
            let old = Self::small_bits(*top, *mid, *low);
            let new = old | Self::small_bits(*t, *m, *l);
            let changed = new != old || (*recheck && !*r);
            *self = Self::small(*r || *recheck, new);
            return changed;
        }
        let words = self.words().combine(&other.words(), |a, b| a | b);
        let recheck = self.recheck() || other.recheck();
        let new = Self::exact(words, recheck).expect("a union of exact entries");
        let changed = !new.same(self);
        *self = new;
        changed
    }

    /// The exact entry of the offsets both exact entries hold (their
    /// AND), to be rechecked if either was; `None` if they share none.
    #[inline]
    pub(crate) fn intersect(&self, other: &PageEntry) -> Option<PageEntry> {
        if let (
            Self::Small {
                recheck: r,
                top,
                mid,
                low,
            },
            Self::Small {
                recheck,
                top: t,
                mid: m,
                low: l,
            },
        ) = (self, other)
        {
            let both = Self::small_bits(*top, *mid, *low) & Self::small_bits(*t, *m, *l);
            return (both != 0).then(|| Self::small(*r || *recheck, both));
        }
        let words = self.words().combine(&other.words(), |a, b| a & b);
        Self::exact(words, self.recheck() || other.recheck())
    }

    /// Whether two entries are the same entry (where `==` is the tree's
    /// rule for merging, under which large pages and lossy chunks are
    /// never equal).
    pub(crate) fn same(&self, other: &PageEntry) -> bool {
        match (self, other) {
            (Self::Large(a), Self::Large(b)) => a == b,
            (Self::LossyChunk(a), Self::LossyChunk(b)) => a == b,
            _ => self == other,
        }
    }

    /// The exact entry of `offsets` (each in `1..=MAX_OFFSET`, at least
    /// one).
    #[inline]
    pub(crate) fn of_offsets(offsets: &[u16], recheck: bool) -> Self {
        let mut entry = Self::small(recheck, 0);
        entry.add(offsets, recheck);
        entry
    }

    /// Whether the matches must be rechecked: lossy entries always.
    pub(crate) fn recheck(&self) -> bool {
        match self {
            Self::Small { recheck, .. } => *recheck,
            Self::Large(page) => page.recheck,
            Self::LossyPage | Self::LossyChunk(_) => true,
        }
    }

    /// Whether the entry is lossy (a page or a chunk).
    pub(crate) fn is_lossy(&self) -> bool {
        matches!(self, Self::LossyPage | Self::LossyChunk(_))
    }

    /// Whether the page keeps its offsets in words of their own.
    pub(crate) fn is_large(&self) -> bool {
        matches!(self, Self::Large(_))
    }

    /// The same exact entry with its recheck flag set.
    pub(crate) fn with_recheck(&self) -> Self {
        match self {
            Self::Small { top, mid, low, .. } => {
                Self::small(true, Self::small_bits(*top, *mid, *low))
            }
            Self::Large(page) => Self::Large(Box::new(LargePage {
                recheck: true,
                words: page.words.clone(),
            })),
            Self::LossyPage | Self::LossyChunk(_) => self.clone(),
        }
    }

    /// Bytes the entry owns outside the tree.
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Self::Large(page) => size_of::<LargePage>() + 8 * page.words.len(),
            Self::LossyChunk(_) => size_of::<[u64; 4]>(),
            Self::Small { .. } | Self::LossyPage => 0,
        }
    }

    /// A lossy chunk's parts.
    pub(crate) fn parts(&self) -> Option<&[u64; 4]> {
        match self {
            Self::LossyChunk(parts) => Some(parts),
            _ => None,
        }
    }

    /// A lossy chunk's parts, mutably.
    pub(crate) fn parts_mut(&mut self) -> Option<&mut [u64; 4]> {
        match self {
            Self::LossyChunk(parts) => Some(parts),
            _ => None,
        }
    }
}

/// A page's offsets in ascending order, from its bitmap. Made by
/// [`BitmapPage::offsets`](super::BitmapPage::offsets).
#[derive(Clone, Debug)]
pub struct PageOffsets<'a> {
    /// The bits of the word being walked not produced yet.
    current: u64,
    /// A small entry's second word, until it is walked (0 for a large
    /// entry, whose words come from `rest`).
    second: u64,
    /// A large entry's words after the current one.
    rest: &'a [u64],
    /// The offset less one of the current word's bit 0.
    base: u32,
    /// Offsets not produced yet.
    remaining: u32,
}

impl<'a> PageOffsets<'a> {
    /// The offsets of bitmap `words` (offset `o` at bit `o - 1`; at least
    /// one word).
    #[inline]
    pub(crate) fn of_words(words: &'a [u64]) -> Self {
        let (&first, rest) = words.split_first().unwrap_or((&0, &[]));
        Self {
            current: first,
            second: 0,
            rest,
            base: 0,
            remaining: words.iter().map(|w| w.count_ones()).sum(),
        }
    }

    /// The offsets of an exact entry; `None` for a lossy one.
    #[inline]
    pub(crate) fn of(entry: &'a PageEntry) -> Option<Self> {
        match entry {
            PageEntry::Small { top, mid, low, .. } => {
                let second = u64::from(*mid) | u64::from(*top) << 32;
                Some(Self {
                    current: *low,
                    second,
                    rest: &[],
                    base: 0,
                    remaining: low.count_ones() + second.count_ones(),
                })
            }
            PageEntry::Large(page) => Some(Self::of_words(&page.words)),
            PageEntry::LossyPage | PageEntry::LossyChunk(_) => None,
        }
    }
}

impl Iterator for PageOffsets<'_> {
    type Item = u16;

    #[inline]
    fn next(&mut self) -> Option<u16> {
        while self.current == 0 {
            self.base += 64;
            if self.second != 0 {
                self.current = core::mem::take(&mut self.second);
            } else {
                let (&word, rest) = self.rest.split_first()?;
                self.current = word;
                self.rest = rest;
            }
        }
        let bit = self.current.trailing_zeros();
        self.current &= self.current - 1;
        self.remaining -= 1;
        Some((self.base + bit + 1) as u16)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let remaining = self.remaining as usize;
        (remaining, Some(remaining))
    }
}

impl ExactSizeIterator for PageOffsets<'_> {}
impl core::iter::FusedIterator for PageOffsets<'_> {}

/// The offsets of `words` as a vector, for tests.
#[cfg(test)]
pub(crate) fn offsets_of(entry: &PageEntry) -> alloc::vec::Vec<u16> {
    PageOffsets::of(entry).map_or_else(Vec::new, Iterator::collect)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_pages_stay_inline_and_large_ones_grow_words() {
        let mut e = PageEntry::of_offsets(&[1, 5, 112], false);
        assert!(matches!(e, PageEntry::Small { .. }));
        assert_eq!(offsets_of(&e), [1, 5, 112]);
        assert_eq!(e.heap_bytes(), 0);
        assert!(!e.add(&[5], false));
        assert!(e.add(&[5], true));
        assert!(e.recheck());
        assert!(e.add(&[113, 2048], false));
        assert!(matches!(e, PageEntry::Large(_)));
        assert_eq!(offsets_of(&e), [1, 5, 112, 113, 2048]);
        assert_eq!(e.heap_bytes(), size_of::<LargePage>() + 8 * 32);
        assert!(e.recheck());
        assert_eq!(PageOffsets::of(&e).unwrap().len(), 5);
    }

    #[test]
    fn exact_entries_normalise_and_lossy_chunks_equal_nothing() {
        let mut w = Words::EMPTY;
        assert_eq!(PageEntry::exact(w, false), None);
        w.set(300);
        let large = PageEntry::exact(w, false).unwrap();
        let anded = large
            .words()
            .combine(&PageEntry::of_offsets(&[3], false).words(), |a, b| a & b);
        assert_eq!(PageEntry::exact(anded, false), None);
        let mut w = large.words();
        w.set(7);
        let both = PageEntry::exact(w, false).unwrap();
        let low = both
            .words()
            .combine(&PageEntry::of_offsets(&[7], false).words(), |a, b| a & b);
        // Only offset 7 is left: back to a small entry.
        assert!(matches!(
            PageEntry::exact(low, false),
            Some(PageEntry::Small { .. })
        ));
        let chunk = PageEntry::lossy_chunk([1, 0, 0, 0]);
        assert_ne!(chunk, chunk.clone());
        assert_eq!(PageEntry::LossyPage, PageEntry::LossyPage);
        assert!(chunk.is_lossy() && chunk.recheck());
        assert_eq!(
            PageOffsets::of(&PageEntry::LossyPage).map(|o| o.len()),
            None
        );
    }
}
