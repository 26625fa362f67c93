//! The store's memory over a run, sampled during the heap scan, for the
//! memory chart of `--plot` ([`crate::plot`]).
//!
//! Sampling is cheap: the scan compares the page count with the next
//! sample's once per page and reads [`memory_usage`] (which it reads after
//! every page for the peak anyway) only when a sample is due, every
//! [`MemoryTrace::step`] pages. The step grows with the table so that a
//! run keeps at most about [`MAX_REGULAR_SAMPLES`] regular samples, plus
//! two per index pass.
//!
//! [`memory_usage`]: crate::DeadTupleStore::memory_usage

/// The fewest pages between two regular samples.
pub const MIN_STEP: u32 = 256;

/// The most regular samples a run keeps (index passes add two each).
pub const MAX_REGULAR_SAMPLES: u32 = 2_048;

/// The store's memory at one point of the heap scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemorySample {
    /// Heap pages scanned so far. For the shared store, whose heap scan
    /// runs in worker processes each over its own range of pages, the
    /// pages all workers scanned together.
    pub pages: u32,
    /// The store's memory usage then, in bytes (for the array, its
    /// allocation).
    pub bytes: u64,
}

/// Where one round of index passes ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexPassMark {
    /// Heap pages scanned when the round started (as
    /// [`MemorySample::pages`]).
    pub pages: u32,
    /// The store's memory just before the round, in bytes.
    pub bytes: u64,
    /// Dead TIDs the store held.
    pub tids: u64,
    /// `true` for the final round after the heap scan, which runs on
    /// whatever is left rather than because the store filled.
    pub end_of_scan: bool,
}

/// The store's memory over one run: regular samples during the heap scan
/// and the index passes, in scan order. Part of
/// [`VacuumStats`](crate::VacuumStats) as `memory`.
///
/// `samples` starts with the empty store at page 0, has one sample every
/// [`step`](Self::step) pages, and at each round one sample before the
/// round (the full store) and one after it (the cleared store) at the same
/// page count, so a line through them drops where the store was emptied.
/// The shared store, scanned by worker processes, is sampled at the end of
/// each stretch of the scan instead of every `step` pages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryTrace {
    /// Pages between two regular samples.
    pub step: u32,
    /// The samples, in scan order (`pages` never decreases).
    pub samples: Vec<MemorySample>,
    /// One mark per round of index passes, in order.
    pub passes: Vec<IndexPassMark>,
    /// The page count at which the next regular sample is due.
    next: u32,
}

impl MemoryTrace {
    /// An empty trace for a heap of `blocks` pages: a step of
    /// [`MIN_STEP`] pages, or more for a table of more than
    /// `MIN_STEP × MAX_REGULAR_SAMPLES` pages.
    ///
    /// ```
    /// use vacuum_sim::trace::{MemoryTrace, MIN_STEP};
    /// assert_eq!(MemoryTrace::new(1_000).step, MIN_STEP);
    /// assert_eq!(MemoryTrace::new(6_369_427).step, 3_111);
    /// ```
    pub fn new(blocks: u32) -> Self {
        let step = blocks.div_ceil(MAX_REGULAR_SAMPLES).max(MIN_STEP);
        Self {
            step,
            samples: Vec::new(),
            passes: Vec::new(),
            next: step,
        }
    }

    /// Whether a regular sample is due after `pages` pages: one integer
    /// comparison, for the scan's inner loop.
    #[inline]
    pub fn due(&self, pages: u32) -> bool {
        pages >= self.next
    }

    /// Records the store's `bytes` after `pages` pages, and moves the next
    /// regular sample `step` pages past `pages`.
    pub fn sample(&mut self, pages: u32, bytes: u64) {
        self.samples.push(MemorySample { pages, bytes });
        self.next = pages.saturating_add(self.step);
    }

    /// Records a round of index passes after `pages` pages: the mark, and
    /// the sample before it (`bytes` held, the full store).
    pub fn index_pass(&mut self, pages: u32, bytes: u64, tids: u64, end_of_scan: bool) {
        self.samples.push(MemorySample { pages, bytes });
        self.passes.push(IndexPassMark {
            pages,
            bytes,
            tids,
            end_of_scan,
        });
    }

    /// Records the store's memory after a round cleared it, at the same
    /// page count as the round.
    pub fn cleared(&mut self, bytes: u64) {
        let pages = self.samples.last().map_or(0, |s| s.pages);
        self.samples.push(MemorySample { pages, bytes });
    }

    /// The most bytes any sample or mark saw (0 for an empty trace).
    pub fn max_bytes(&self) -> u64 {
        let samples = self.samples.iter().map(|s| s.bytes);
        let passes = self.passes.iter().map(|p| p.bytes);
        samples.chain(passes).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_bound_the_samples() {
        assert_eq!(MemoryTrace::new(0).step, MIN_STEP);
        assert_eq!(
            MemoryTrace::new(MIN_STEP * MAX_REGULAR_SAMPLES).step,
            MIN_STEP
        );
        let big = MemoryTrace::new(u32::MAX);
        assert!(u32::MAX / big.step <= MAX_REGULAR_SAMPLES);
    }

    #[test]
    fn samples_and_passes() {
        let mut trace = MemoryTrace::new(1_000);
        trace.sample(0, 10);
        assert!(!trace.due(255));
        assert!(trace.due(256));
        trace.sample(256, 500);
        assert!(!trace.due(511));
        trace.index_pass(300, 900, 40, false);
        trace.cleared(10);
        trace.index_pass(1_000, 700, 30, true);
        trace.cleared(10);
        assert_eq!(trace.samples.len(), 6);
        assert_eq!(
            trace.samples[3],
            MemorySample {
                pages: 300,
                bytes: 10
            }
        );
        assert_eq!(trace.passes.len(), 2);
        assert!(trace.passes[1].end_of_scan);
        assert_eq!(trace.max_bytes(), 900);
    }
}
