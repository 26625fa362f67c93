//! Where two trees both hold a value: [`RawTree::for_each_overlap`], for
//! operations that combine two trees into a third without changing either
//! (an intersection built afresh, a join).
//!
//! An uncompressed tree is walked together with the other node by node, as
//! the tree's own `intersect_with` does: at each pair of nodes the one with
//! fewer entries is walked and the other searched for each of its chunks,
//! so a subtree on one side only costs nothing, and a key both hold costs
//! a node search where a lookup would descend from the root. A range value
//! on one side meets the other side's keys and ranges below its slot, each
//! once. A compressed tree, whose nodes need not stand at the same depth on
//! both sides, walks its own keys and seeks the other's
//! ([`Spans::seek`](crate::Spans::seek)).

use core::ops::RangeInclusive;

use crate::config::{Config, RefOf};
use crate::key::{Key, SPAN};
use crate::node::{self, lazy};
use crate::ptr::NodePtr;
use crate::value::ValueLayout;

use super::super::{
    LayoutOf, MAX_LEVELS, RawTree, SlotOf, Span, ValueOf, entry_at, find_slot, follow,
};

/// One tree's side of an overlap: its value and the span it was stored
/// for (a key alone, or the range value's whole span).
pub type OverlapSide<'a, C> = (Span<<C as Config>::Key>, &'a ValueOf<C>);

/// A frame of the paired walk: our node and the other tree's node at the
/// same place, the walk position in the one walked (ours when the flag is
/// set), the nodes' shift, and the key bits above.
type PairFrame<C> = (NodePtr, NodePtr, u16, bool, u32, <C as Config>::Key);

impl<C: Config> RawTree<C> {
    /// Calls `visit(keys, ours, theirs)` for every interval of keys that
    /// both trees map to a value, in ascending order: a key both hold, or,
    /// where a range value meets the other tree's keys and ranges, each
    /// key or range of the other tree inside it (two range values over the
    /// same span meet once). `ours` and `theirs` give each tree's value
    /// with the span it was stored for, of which `keys` is a part.
    ///
    /// ```
    /// radix_core::radix_tree! {
    ///     /// Block to a flag, with ranges of blocks.
    ///     struct Blocks { key: u32, value: char, ranges: true }
    /// }
    /// use radix_core::Span;
    ///
    /// let mut a = Blocks::new();
    /// a.insert(3, 'a');
    /// a.insert(300, 'b');
    /// a.insert_span(Span::new(512, 1)?, 'c')?;
    /// let mut b = Blocks::new();
    /// b.insert(4, 'x');
    /// b.insert_span(Span::new(256, 1)?, 'y')?;
    /// b.insert(600, 'z');
    /// let mut met = Vec::new();
    /// a.for_each_overlap(&b, |keys, (_, ours), (_, theirs)| met.push((keys, *ours, *theirs)));
    /// assert_eq!(met, [(300..=300, 'b', 'y'), (600..=600, 'c', 'z')]);
    /// # Ok::<(), radix_core::SpanError>(())
    /// ```
    pub fn for_each_overlap<'a>(
        &'a self,
        other: &'a Self,
        mut visit: impl FnMut(RangeInclusive<C::Key>, OverlapSide<'a, C>, OverlapSide<'a, C>),
    ) {
        if !C::COMPRESSION.is_none() {
            self.overlaps_by_seeking(other, &mut visit);
            return;
        }
        let (Some(our_root), Some(their_root)) = (self.root, other.root) else {
            return;
        };
        // Both trees are uncompressed: every node consumes the chunk at its
        // depth's shift, on both sides.
        // SAFETY: both are borrowed for 'a, live and unchanged; inner slots
        // hold child references or range cells, last-level slots values.
        unsafe {
            // Both sides at the lower root's level: the higher tree's keys
            // there have their upper chunks zero.
            let shift = self.root_shift.min(other.root_shift);
            let a = match self.zero_path_to(our_root, shift) {
                Ok(node) => node,
                Err(None) => return,
                Err(Some(ours)) => return other.meet_range(ours, false, &mut visit),
            };
            let b = match other.zero_path_to(their_root, shift) {
                Ok(node) => node,
                Err(None) => return,
                Err(Some(theirs)) => return self.meet_range(theirs, true, &mut visit),
            };
            let fewer_ours =
                |a: NodePtr, b: NodePtr| node::count(a.addr()) <= node::count(b.addr());
            let start: PairFrame<C> = (a, b, 0, fewer_ours(a, b), shift, C::Key::MIN);
            let mut stack = [start; MAX_LEVELS];
            let mut depth = 1;
            while depth > 0 {
                let (a, b, pos, walk_ours, shift, prefix) = stack[depth - 1];
                let (walked, sought) = if walk_ours { (a, b) } else { (b, a) };
                if shift == 0 {
                    let mut pos = 0;
                    while let Some(e) = entry_at::<SlotOf<C>>(walked, pos) {
                        pos = e.next;
                        let Some(found) = find_slot::<SlotOf<C>>(sought, e.chunk) else {
                            continue;
                        };
                        let (ours, theirs) = if walk_ours {
                            (e.slot, found)
                        } else {
                            (found, e.slot)
                        };
                        let key = prefix.with_chunk(0, e.chunk);
                        visit(
                            key..=key,
                            (Span::key(key), LayoutOf::<C>::get(ours, &self.mem)),
                            (Span::key(key), LayoutOf::<C>::get(theirs, &other.mem)),
                        );
                    }
                    depth -= 1;
                    continue;
                }
                let Some(e) = entry_at::<RefOf<C>>(walked, pos) else {
                    depth -= 1;
                    continue;
                };
                stack[depth - 1].2 = e.next;
                let Some(found) = find_slot::<RefOf<C>>(sought, e.chunk) else {
                    continue;
                };
                let (ours, theirs) = if walk_ours {
                    (e.slot.read(), found.read())
                } else {
                    (found.read(), e.slot.read())
                };
                let (a, b) = (
                    follow::<C>(&self.mem, ours),
                    follow::<C>(&other.mem, theirs),
                );
                let key = prefix.with_chunk(shift, e.chunk);
                match (a.is_lazy(), b.is_lazy()) {
                    (false, false) => {
                        stack[depth] = (a, b, 0, fewer_ours(a, b), shift - SPAN, key);
                        depth += 1;
                    }
                    (true, true) => {
                        let ours = self.range_side(a, key, shift);
                        let theirs = other.range_side(b, key, shift);
                        visit(ours.0.keys(), ours, theirs);
                    }
                    (true, false) => {
                        other.meet_range(self.range_side(a, key, shift), false, &mut visit)
                    }
                    (false, true) => {
                        self.meet_range(other.range_side(b, key, shift), true, &mut visit)
                    }
                }
            }
        }
    }

    /// The node at `shift` on the path of the keys whose chunks above it
    /// are zero, from `root`: what meets the lower root of another tree.
    /// `Err` with the range value on that path, if one covers it; an
    /// absent path is an `Err` of nothing, as an empty overlap.
    ///
    /// # Safety
    ///
    /// `root` is this tree's live root, at or above `shift`.
    unsafe fn zero_path_to(
        &self,
        root: RefOf<C>,
        shift: u32,
    ) -> Result<NodePtr, Option<OverlapSide<'_, C>>> {
        let mut node = follow::<C>(&self.mem, root);
        let mut at = self.root_shift;
        while at > shift {
            // SAFETY: the caller's contract: `node` is a live inner node of
            // this tree, whose slots are child references or range cells.
            let child = unsafe {
                let Some(slot) = find_slot::<RefOf<C>>(node, 0) else {
                    return Err(None);
                };
                follow::<C>(&self.mem, slot.read())
            };
            if child.is_lazy() {
                // SAFETY: a range cell in the slot for chunk 0 at `at`.
                return Err(Some(unsafe { self.range_side(child, C::Key::MIN, at) }));
            }
            node = child;
            at -= SPAN;
        }
        Ok(node)
    }

    /// The range value in cell `cell`, a slot of a node at `shift` on the
    /// path of `key`, with its span.
    ///
    /// # Safety
    ///
    /// `cell` is a live range cell of this tree, in that slot.
    unsafe fn range_side(&self, cell: NodePtr, key: C::Key, shift: u32) -> OverlapSide<'_, C> {
        // SAFETY: the caller's contract; the cell's slot is live while the
        // tree is borrowed.
        let value = unsafe { LayoutOf::<C>::get(lazy::slot::<SlotOf<C>>(cell.addr()), &self.mem) };
        (Span::of_slot(key, shift), value)
    }

    /// Visits the other tree's range value `range` against each of this
    /// tree's keys and ranges inside its span; `self_is_ours` says which
    /// side this tree is in the visit.
    fn meet_range<'a>(
        &'a self,
        range: OverlapSide<'a, C>,
        self_is_ours: bool,
        visit: &mut impl FnMut(RangeInclusive<C::Key>, OverlapSide<'a, C>, OverlapSide<'a, C>),
    ) {
        // Inside the range's slot, this tree's ranges are narrower: each
        // interval is a whole span, unclipped.
        for (keys, value) in self.spans_range(range.0.keys()) {
            let side = (span_of(&keys), value);
            if self_is_ours {
                visit(keys, side, range);
            } else {
                visit(keys, range, side);
            }
        }
    }

    /// [`for_each_overlap`](RawTree::for_each_overlap) for a compressed
    /// tree (which has no range values): our keys, each sought in a walk
    /// of the other tree.
    fn overlaps_by_seeking<'a>(
        &'a self,
        other: &'a Self,
        visit: &mut impl FnMut(RangeInclusive<C::Key>, OverlapSide<'a, C>, OverlapSide<'a, C>),
    ) {
        debug_assert!(!C::RANGES, "a tree with ranges is uncompressed");
        let mut theirs = other.spans();
        let mut current = theirs.next();
        for (keys, ours) in self.spans() {
            let key = *keys.start();
            if current.as_ref().is_some_and(|(k, _)| *k.end() < key) {
                theirs.seek(key);
                current = theirs.next();
            }
            match &current {
                Some((k, value)) if *k.start() == key => {
                    visit(keys, (Span::key(key), ours), (Span::key(key), *value));
                }
                Some(_) => {}
                None => return,
            }
        }
    }
}

/// The span whose keys are exactly `keys` (an interval a walk of spans
/// gave unclipped: one key, or a range value's whole span).
fn span_of<K: Key>(keys: &RangeInclusive<K>) -> Span<K> {
    let (low, high) = (*keys.start(), *keys.end());
    let mut level = 0;
    while Span::new(low, level + 1).is_ok_and(|span| span.last() <= high) {
        level += 1;
    }
    let span = Span::new(low, level).expect("an aligned interval");
    debug_assert!(span.last() == high, "an interval that is a whole span");
    span
}
