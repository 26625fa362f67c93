//! Which pages of a [`TidBitmap`](super::TidBitmap) are lossy: a bit per
//! page beside the tree, so that a TID added to a lossy page costs a bit
//! test rather than a descent.
//!
//! Once a budget has made most of a bitmap lossy (TB-3: three quarters of
//! a million pages in 4 MiB), most adds land on a lossy page and change
//! nothing. In the tree each of them still walks the root, a node of the
//! level above the chunks and a range cell, then a chunk's parts, and it
//! is the cell and the parts, among thousands scattered through the slab,
//! that miss the cache. A bit per page is 128 KiB for a million pages,
//! read where the add would have descended.
//!
//! The bits are a cache with one rule: a set bit means the page is lossy.
//! That stays true because a page of a bitmap never goes from lossy back
//! to exact ([`clear`](super::TidBitmap::clear) and
//! [`intersect_with`](super::TidBitmap::intersect_with) make a new
//! bitmap, with new bits). A lossy page without its bit (one past the
//! bits' reach, or made lossy where the bitmap keeps no budget) is found
//! in the tree, as before.
//!
//! **Memory.** Only a bitmap with a budget keeps the bits: lossy pages
//! are what a budget makes. They grow to the highest lossy page, at most
//! [`max_bytes`](super::TidBitmap::max_bytes) / 16 bytes (a 4 MiB budget
//! reaches two million pages), and count in
//! [`memory_usage`](super::TidBitmap::memory_usage): a lossify round that
//! sets them has room, since it ends an eighth below the budget.

use alloc::vec::Vec;

use radix_core::Span;

/// A bit per page: set when the page is lossy.
#[derive(Clone, Debug, Default)]
pub(super) struct LossyPages {
    words: Vec<u64>,
    /// The most words the bits may take.
    max_words: usize,
}

impl LossyPages {
    /// No page, and room for `max_bytes / 16` bytes of bits; none for an
    /// unlimited bitmap.
    pub(super) fn for_budget(max_bytes: usize) -> Self {
        let max_words = if max_bytes == usize::MAX {
            0
        } else {
            max_bytes / 16 / size_of::<u64>()
        };
        Self {
            words: Vec::new(),
            max_words,
        }
    }

    /// Whether `block` is known to be lossy.
    #[inline]
    pub(super) fn contains(&self, block: u32) -> bool {
        let block = block as usize;
        self.words
            .get(block / 64)
            .is_some_and(|word| word >> (block % 64) & 1 != 0)
    }

    /// Notes that every page of `span` is lossy, as far as the bits reach.
    pub(super) fn insert(&mut self, span: Span<u32>) {
        let Some(reach) = (self.max_words * 64).checked_sub(1) else {
            return;
        };
        let first = span.start() as usize;
        let last = (span.last() as usize).min(reach);
        if first > last {
            return;
        }
        let needed = last / 64 + 1;
        if self.words.len() < needed {
            // Doubling, but never past the reach: `bytes` counts capacity.
            let len = needed.max(2 * self.words.len()).min(self.max_words);
            self.words.reserve_exact(len - self.words.len());
            self.words.resize(len, 0);
        }
        let (first_word, last_word) = (first / 64, last / 64);
        let head = !0u64 << (first % 64);
        let tail = !0u64 >> (63 - last % 64);
        if first_word == last_word {
            self.words[first_word] |= head & tail;
            return;
        }
        self.words[first_word] |= head;
        self.words[first_word + 1..last_word].fill(!0);
        self.words[last_word] |= tail;
    }

    /// Bytes the bits take.
    pub(super) fn bytes(&self) -> usize {
        self.words.capacity() * size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_cover_lossy_pages_within_their_reach() {
        let mut bits = LossyPages::for_budget(16 << 10); // 1 KiB: 8,192 pages
        assert!(!bits.contains(0));
        bits.insert(Span::key(70));
        assert!(bits.contains(70) && !bits.contains(69) && !bits.contains(71));
        bits.insert(Span::new(512, 1).unwrap());
        assert!(bits.contains(512) && bits.contains(640) && bits.contains(767));
        assert!(!bits.contains(511) && !bits.contains(768));
        bits.insert(Span::new(0, 2).unwrap()); // past the reach from 8,192 on
        assert!(bits.contains(8191) && !bits.contains(8192));
        assert!(bits.bytes() <= 1 << 10);
        let mut unlimited = LossyPages::for_budget(usize::MAX);
        unlimited.insert(Span::new(0, 1).unwrap());
        assert!(!unlimited.contains(0));
        assert_eq!(unlimited.bytes(), 0);
    }
}
