//! Set algebra on whole stores: union, intersection, difference and the
//! subset test, as a bitmap scan combines TID sets (BitmapOr, BitmapAnd).
//!
//! Both stores are walked in block order together, one merge of two
//! sorted sequences of entries. Where a block is in one store only, its
//! entry is copied (union) or dropped (intersection) as it is. Where it is
//! in both, the two entries combine in the cheapest way their forms allow:
//! two runs combine as runs (a union of overlapping runs, the overlap of
//! two runs, one run minus another that leaves one piece), and any other
//! pair as bitmap words, OR-ed, AND-ed or AND-NOT-ed word by word. No entry
//! is ever expanded to a list of offsets. Each result entry is encoded in
//! its smallest form, as `set_block_offsets` would store it, which
//! `verify()` checks.
//!
//! The result is built into a fresh tree, in block order (the insert hint
//! makes each insert a node search), and replaces the store only when the
//! operation completes within the store's budget: an operation whose
//! result would pass `max_bytes` stops, returns
//! [`TidStoreError::OverBudget`], and leaves the store unchanged. A union
//! visits every entry of both stores, O(n + m) for stores of n and m
//! blocks. An intersection, a difference and the subset test move over
//! the blocks they do not take with cursor seeks, which pass whole
//! subtrees without visiting their entries: each costs a search of the
//! levels below the lowest node the two blocks share.

use core::cmp::Ordering;

use crate::entry::{BlockEntry, EntryBuf, MAX_WORDS};
use crate::error::TidStoreError;
use crate::store::TidStore;
use crate::table::BlockTable;

/// What happens to the blocks of each side.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum SetOp {
    Union,
    Intersection,
    Difference,
}

impl SetOp {
    fn name(self) -> &'static str {
        match self {
            SetOp::Union => "union",
            SetOp::Intersection => "intersection",
            SetOp::Difference => "difference",
        }
    }
}

/// How often (in result blocks) a build checks its memory against the
/// budget, so that an operation over budget stops early.
const BUDGET_CHECK_BLOCKS: usize = 4096;

impl TidStore {
    /// Adds every TID of `other` to this store (BitmapOr).
    ///
    /// # Errors
    ///
    /// [`TidStoreError::OverBudget`] if the result would take more than
    /// [`max_bytes`](Self::max_bytes); the store is then unchanged.
    ///
    /// ```
    /// use tidstore::{Tid, TidStore};
    ///
    /// let mut a = TidStore::new(1 << 20);
    /// a.set_block_offsets(1, &[1, 2, 3, 4])?;
    /// let mut b = TidStore::new(1 << 20);
    /// b.set_block_offsets(1, &[5, 6])?;
    /// b.set_block_offsets(9, &[7])?;
    /// a.union_with(&b)?;
    /// assert_eq!(a.num_tids(), 7);
    /// assert!(a.is_member(Tid::new(1, 6)) && a.is_member(Tid::new(9, 7)));
    /// # Ok::<(), tidstore::TidStoreError>(())
    /// ```
    pub fn union_with(&mut self, other: &TidStore) -> Result<(), TidStoreError> {
        self.combine(other, SetOp::Union)
    }

    /// Keeps only the TIDs that are also in `other` (BitmapAnd).
    ///
    /// # Errors
    ///
    /// As for [`union_with`](Self::union_with). (A result is never larger
    /// than the store, so this fails only for a store already over its
    /// budget whose result still is.)
    ///
    /// ```
    /// use tidstore::TidStore;
    ///
    /// let mut a = TidStore::new(1 << 20);
    /// a.set_block_offsets(1, &[1, 2, 3, 4])?;
    /// a.set_block_offsets(2, &[8])?;
    /// let mut b = TidStore::new(1 << 20);
    /// b.set_block_offsets(1, &[3, 4, 5])?;
    /// a.intersect_with(&b)?;
    /// assert_eq!(a.iter().map(|b| (b.block(), b.offsets().collect::<Vec<_>>())).collect::<Vec<_>>(),
    ///            [(1, vec![3, 4])]);
    /// # Ok::<(), tidstore::TidStoreError>(())
    /// ```
    pub fn intersect_with(&mut self, other: &TidStore) -> Result<(), TidStoreError> {
        self.combine(other, SetOp::Intersection)
    }

    /// Removes every TID that is in `other`.
    ///
    /// # Errors
    ///
    /// As for [`intersect_with`](Self::intersect_with).
    ///
    /// ```
    /// use tidstore::{Tid, TidStore};
    ///
    /// let mut a = TidStore::new(1 << 20);
    /// a.set_block_offsets(1, &[1, 2, 3, 4, 5])?;
    /// let mut b = TidStore::new(1 << 20);
    /// b.set_block_offsets(1, &[2, 3, 4])?;
    /// a.difference_with(&b)?;
    /// assert!(a.is_member(Tid::new(1, 1)) && !a.is_member(Tid::new(1, 3)));
    /// assert_eq!(a.num_tids(), 2);
    /// # Ok::<(), tidstore::TidStoreError>(())
    /// ```
    pub fn difference_with(&mut self, other: &TidStore) -> Result<(), TidStoreError> {
        self.combine(other, SetOp::Difference)
    }

    /// Whether every TID of this store is in `other`.
    ///
    /// ```
    /// use tidstore::TidStore;
    ///
    /// let mut a = TidStore::new(1 << 20);
    /// a.set_block_offsets(3, &[10, 11])?;
    /// let mut b = TidStore::new(1 << 20);
    /// b.set_block_offsets(3, &(1..=100).collect::<Vec<_>>())?;
    /// assert!(a.is_subset(&b) && !b.is_subset(&a));
    /// # Ok::<(), tidstore::TidStoreError>(())
    /// ```
    pub fn is_subset(&self, other: &TidStore) -> bool {
        if self.num_tids() > other.num_tids() || self.num_blocks() > other.num_blocks() {
            return false;
        }
        // A seek of `other` to each block passes over its blocks between
        // without visiting them.
        let mut theirs = other.table().cursor_front();
        self.table().iter().all(|(block, ours)| {
            theirs.seek(block);
            match theirs.peek_next() {
                Some((b, entry)) if b == block => entry_subset(ours, entry),
                _ => false,
            }
        })
    }

    /// Replaces the store by the result of `op` with `other`, built into a
    /// fresh tree on the same kind of memory.
    fn combine(&mut self, other: &TidStore, op: SetOp) -> Result<(), TidStoreError> {
        let mut result = BlockTable::with_memory(self.table().as_raw().memory().empty_like());
        let mut num_tids = 0u64;
        let mut buf = EntryBuf::new();
        let mut since_check = 0;
        let mut push = |block: u32, entry: &BlockEntry, result: &mut BlockTable| {
            num_tids += entry.len() as u64;
            result.insert(block, entry);
            since_check += 1;
            if since_check == BUDGET_CHECK_BLOCKS {
                since_check = 0;
                return self.check_budget(result, op);
            }
            Ok(())
        };
        // Cursors, so that blocks the result does not take are skipped by a
        // seek, which passes over whole subtrees without visiting their
        // entries: an intersection seeks each side to the other's next
        // block, a difference seeks `other` to this store's next block.
        let mut ours = self.table().cursor_front();
        let mut theirs = other.table().cursor_front();
        loop {
            let (a, b) = (ours.peek_next(), theirs.peek_next());
            let order = match (a, b) {
                (None, None) => break,
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some((a, _)), Some((b, _))) => a.cmp(&b),
            };
            match (order, op) {
                (Ordering::Less, SetOp::Intersection) => match b {
                    Some((b, _)) => ours.seek(b),
                    None => break,
                },
                (Ordering::Less, _) => {
                    let (block, entry) = ours.next().expect("peeked");
                    push(block, entry, &mut result)?;
                }
                (Ordering::Greater, SetOp::Union) => {
                    let (block, entry) = theirs.next().expect("peeked");
                    push(block, entry, &mut result)?;
                }
                (Ordering::Greater, _) => match a {
                    Some((a, _)) => theirs.seek(a),
                    None => break,
                },
                (Ordering::Equal, _) => {
                    let (block, a) = ours.next().expect("peeked");
                    let (_, b) = theirs.next().expect("peeked");
                    if let Some(entry) = combine_entries(a, b, op, &mut buf) {
                        push(block, entry, &mut result)?;
                    }
                }
            }
        }
        self.check_budget(&result, op)?;
        self.replace_contents(result, num_tids);
        Ok(())
    }

    /// The error for a result that has passed the budget.
    fn check_budget(&self, result: &BlockTable, op: SetOp) -> Result<(), TidStoreError> {
        let needed = result.memory_usage();
        if needed > self.max_bytes() {
            return Err(TidStoreError::OverBudget {
                operation: op.name(),
                needed,
                max_bytes: self.max_bytes(),
            });
        }
        Ok(())
    }
}

/// The entry `a op b` for one block, in its smallest form, or `None` when
/// it is empty.
fn combine_entries<'b>(
    a: &BlockEntry,
    b: &BlockEntry,
    op: SetOp,
    buf: &'b mut EntryBuf,
) -> Option<&'b BlockEntry> {
    if let (Some((a0, a1)), Some((b0, b1))) = (a.as_run(), b.as_run()) {
        match op {
            // Overlapping or adjacent runs make one run.
            SetOp::Union if a0 <= b1.saturating_add(1) && b0 <= a1.saturating_add(1) => {
                return Some(buf.encode_run(a0.min(b0), a1.max(b1)));
            }
            SetOp::Intersection => {
                let (first, last) = (a0.max(b0), a1.min(b1));
                return (first <= last).then(|| buf.encode_run(first, last));
            }
            SetOp::Difference => {
                let below = (a0 < b0).then(|| (a0, a1.min(b0 - 1)));
                let above = (a1 > b1).then(|| (a0.max(b1 + 1), a1));
                match (below, above) {
                    (None, None) => return None,
                    (Some((f, l)), None) | (None, Some((f, l))) => {
                        return Some(buf.encode_run(f, l));
                    }
                    // Two pieces: as bitmap words below.
                    (Some(_), Some(_)) => {}
                }
            }
            SetOp::Union => {}
        }
    }
    let mut ours = [0; MAX_WORDS];
    let mut theirs = [0; MAX_WORDS];
    let used = a.or_into(&mut ours).max(b.or_into(&mut theirs));
    for (x, &y) in ours[..used].iter_mut().zip(&theirs[..used]) {
        *x = match op {
            SetOp::Union => *x | y,
            SetOp::Intersection => *x & y,
            SetOp::Difference => *x & !y,
        };
    }
    buf.encode_words(&ours)
}

/// Whether every offset of `a` is in `b`.
fn entry_subset(a: &BlockEntry, b: &BlockEntry) -> bool {
    if let Some((b0, b1)) = b.as_run() {
        return match a.as_run() {
            Some((a0, a1)) => b0 <= a0 && a1 <= b1,
            None => a.offsets().all(|o| b0 <= o && o <= b1),
        };
    }
    let mut ours = [0; MAX_WORDS];
    let mut theirs = [0; MAX_WORDS];
    let used = a.or_into(&mut ours);
    b.or_into(&mut theirs);
    ours[..used]
        .iter()
        .zip(&theirs[..used])
        .all(|(&x, &y)| x & !y == 0)
}
