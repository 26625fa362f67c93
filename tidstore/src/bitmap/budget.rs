//! Keeping a [`TidBitmap`] within its budget: which pages become lossy,
//! and what choosing them costs.
//!
//! After every call that may have grown the bitmap, its
//! [`memory_usage`](TidBitmap::memory_usage) is compared with the budget
//! (one add and a compare: the tree's memory keeps a running count of its
//! live nodes). Past it, a *lossify round* brings the bitmap to an eighth
//! below the budget, so that rounds come once per eighth of the budget a
//! bitmap grows by rather than on every add:
//!
//! 1. **Chunks of 256 pages.** Every last-level node is a candidate: its
//!    256 pages' entries would become one lossy range value (a 24-byte
//!    cell and 32 bytes of parts) in its parent's slot. A candidate is
//!    worth the bytes it frees (its node, and the words of its large
//!    pages, less the range's 56) per page it makes lossy, since each
//!    lossy page costs the heap scan a recheck of every tuple on it: the
//!    node with the most bytes per page goes first. A node holding few
//!    pages in a large size class (a sparse node256, 4 KiB for 70 pages)
//!    beats a full one (4 KiB for 256). Only the pages a chunk held
//!    become lossy; a page added to a lossy chunk later joins it and costs
//!    nothing more.
//! 2. **Coarser blocks, if that was not enough** (a budget near
//!    [`TidBitmap::MIN_BUDGET`] over pages spread across the whole block
//!    space): 65,536-page blocks, then 2^24-page ones, with the most
//!    entries first, each becoming one range whose parts mark the
//!    256-page (65,536-page) sub-blocks that held anything. Every page of
//!    a marked sub-block is lossy, so these are a last resort.
//!
//! PostgreSQL's `tbm_lossify` walks its hash table in hash order, making
//! pages lossy one by one until it is at half its entry limit, and
//! doubles the limit when the walk ends above it. Here the order is by
//! value, the round stops at seven eighths, and the limit never moves.
//!
//! **Cost.** A round visits every last-level node (a walk of the inner
//! levels, not of the pages), plus one walk of every page if a large page
//! (an offset above 112) was ever added, and sorts the candidates:
//! `O(n log n)` in the nodes, once per eighth of the budget of growth.
//! Each chunk made lossy costs a descent to its node and a read of the
//! node's chunks (`RawTree::last_level_keys`), not a walk of its pages.

use alloc::vec::Vec;

use radix_core::Span;

use super::TidBitmap;
use super::page::PageEntry;

/// What a lossy range value costs: its cell (a 16-byte entry and the
/// span's first key) and its parts.
const LOSSY_RANGE_BYTES: usize = 24 + size_of::<[u64; 4]>();

/// A chunk that may become lossy.
struct Candidate {
    first: u32,
    pages: usize,
    /// Bytes it would free: its node and its pages' words.
    bytes: usize,
}

impl TidBitmap {
    /// Makes pages lossy if the bitmap passed its budget.
    #[inline]
    pub(super) fn keep_to_budget(&mut self) {
        if self.memory_usage() > self.max_bytes {
            self.lossify();
        }
    }

    /// A lossify round: see the module documentation.
    #[cold]
    #[inline(never)]
    fn lossify(&mut self) {
        let target = self.max_bytes - self.max_bytes / 8;
        if self.tree.is_none() {
            // One page: only a large page's words can be over a budget.
            return;
        }
        for candidate in self.chunk_candidates() {
            if self.memory_usage() <= target {
                return;
            }
            self.lossify_chunk(candidate.first);
        }
        for level in 2..=Span::<u32>::MAX_LEVEL {
            if self.memory_usage() <= target {
                return;
            }
            self.coarsen(level, target);
        }
        debug_assert!(
            self.memory_usage() <= self.max_bytes,
            "a budget of at least MIN_BUDGET always fits every page lossy"
        );
    }

    /// The last-level nodes worth making lossy, best first.
    fn chunk_candidates(&self) -> Vec<Candidate> {
        let tree = self.tree.as_ref().expect("a tree");
        let mut chunks = Vec::new();
        tree.visit_last_level(|node| {
            chunks.push(Candidate {
                first: node.first,
                pages: node.keys,
                bytes: node.bytes,
            })
        });
        if self.large_pages_added {
            // Large pages' words, chunk by chunk: one walk of the pages in
            // block order against the candidates in block order.
            chunks.sort_unstable_by_key(|c| c.first);
            let mut at = 0;
            for (blocks, entry) in tree.spans() {
                let first = blocks.start() & !0xFF;
                while at < chunks.len() && chunks[at].first < first {
                    at += 1;
                }
                if let Some(chunk) = chunks.get_mut(at).filter(|c| c.first == first) {
                    chunk.bytes += entry.heap_bytes();
                }
            }
        }
        chunks.retain(|c| c.bytes > LOSSY_RANGE_BYTES && c.pages > 0);
        // Most bytes freed per page made lossy first: a / p > b / q, as
        // a * q > b * p.
        chunks.sort_unstable_by(|a, b| {
            let a_saved = (a.bytes - LOSSY_RANGE_BYTES) as u128 * b.pages as u128;
            let b_saved = (b.bytes - LOSSY_RANGE_BYTES) as u128 * a.pages as u128;
            b_saved.cmp(&a_saved).then(a.first.cmp(&b.first))
        });
        chunks
    }

    /// Makes the 256 pages from `first` one lossy range, marking those
    /// that held an entry.
    fn lossify_chunk(&mut self, first: u32) {
        let tree = self.tree.as_ref().expect("a tree");
        // A candidate stays a last-level node until it turns lossy: making
        // others lossy only replaces their own nodes.
        let held = tree.last_level_keys(first);
        debug_assert!(held.is_some(), "candidate {first} is no last-level node");
        let Some(parts) = held else { return };
        let span = Span::new(first, 1).expect("a last-level node's first key");
        self.store_lossy_span(span, lossy_value(parts));
    }

    /// Makes blocks of `256^level` pages lossy, those with the most
    /// entries first, until the bitmap is at `target`.
    fn coarsen(&mut self, level: u32, target: usize) {
        let tree = self.tree.as_ref().expect("a tree");
        let block_of = |key: u32| Span::containing(key, level).expect("a level below the top");
        // Each block with more than one entry: its parts and entries.
        let mut blocks: Vec<(Span<u32>, [u64; 4], usize)> = Vec::new();
        for (keys, _) in tree.spans() {
            let span = block_of(*keys.start());
            if *keys.end() > span.last() {
                // A range wider than these blocks: as coarse already.
                continue;
            }
            let sub = span.key_count() / 256;
            if blocks.last().is_none_or(|(s, _, _)| *s != span) {
                blocks.push((span, [0; 4], 0));
            }
            let (_, parts, entries) = blocks.last_mut().expect("pushed");
            *entries += 1;
            let low = ((*keys.start() - span.start()) as u128 / sub) as usize;
            let high = ((*keys.end() - span.start()) as u128 / sub) as usize;
            for part in low..=high {
                parts[part / 64] |= 1 << (part % 64);
            }
        }
        blocks.retain(|&(_, _, entries)| entries > 1);
        blocks.sort_unstable_by_key(|&(span, _, entries)| (usize::MAX - entries, span.start()));
        for (span, parts, _) in blocks {
            if self.memory_usage() <= target {
                return;
            }
            self.store_lossy_span(span, lossy_value(parts));
        }
    }
}

/// The lossy range value of `parts`: every part, or a chunk of them.
fn lossy_value(parts: [u64; 4]) -> PageEntry {
    if parts == [u64::MAX; 4] {
        PageEntry::LossyPage
    } else {
        PageEntry::lossy_chunk(parts)
    }
}
