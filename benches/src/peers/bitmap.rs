//! The project's TID bitmap, [`tidstore::TidBitmap`], on the TB workloads.
//!
//! `TidBitmap::new(budget)` for a workload with a budget (its
//! `memory_usage()` never passes it once a call returns, which the runner
//! checks after every add call), `TidBitmap::unlimited()` otherwise; one
//! `add_tid(tid, false)` per TID, `intersect_with`, `union_with`, and the
//! walk of `iter()`: each page's block and its `PageOffsets`, or the lossy
//! mark. Memory is its own account, `memory_usage()`.

use tidstore::{Tid, TidBitmap};

use super::{PageSink, TidBitmapPeer};

/// [`TidBitmap`] as a [`TidBitmapPeer`].
pub struct ProjectBitmap(TidBitmap);

impl TidBitmapPeer for ProjectBitmap {
    const NAME: &'static str = "project";
    const BUDGETED: bool = true;
    const KEEPS_BUDGET: bool = true;

    fn new(budget: Option<usize>) -> Self {
        Self(match budget {
            Some(bytes) => TidBitmap::new(bytes)
                .unwrap_or_else(|e| panic!("the project's bitmap refused the budget: {e}")),
            None => TidBitmap::unlimited(),
        })
    }

    #[inline]
    fn add_tid(&mut self, tid: Tid) {
        if let Err(e) = self.0.add_tid(tid, false) {
            panic!("the workload gave the project's bitmap a bad TID: {e}");
        }
    }

    fn intersect_with(&mut self, other: &Self) {
        self.0.intersect_with(&other.0);
    }

    fn union_with(&mut self, other: &Self) {
        self.0.union_with(&other.0);
    }

    fn walk<S: PageSink>(&self, sink: &mut S) {
        for page in self.0.iter() {
            match page.offsets() {
                Some(offsets) => sink.exact(page.block(), offsets, page.recheck()),
                None => sink.lossy(page.block()),
            }
        }
    }

    fn own_memory(&self) -> Option<usize> {
        Some(self.0.memory_usage())
    }
}
