//! Ordered iteration under concurrent writes, one last-level node at a
//! time.
//!
//! Each refill pins, seeks from the bound the iterator has reached to the
//! nearest last-level node with keys in range, copies that node's keys
//! and values out, and unpins. So keys come out in order, each at most
//! once (the bound moves past every key buffered), and a key present
//! throughout is found by the seek that passes it. The iterator holds no
//! pin between refills, so a slow consumer delays no reclamation.

use core::ops::{Bound, RangeBounds};
use std::collections::VecDeque;

use super::layout::ConcurrentLayout;
use super::node::{Entries, Kind};
use super::reclaim::Pin;
use super::space::{LocalSpace, Space};
use super::{ConcurrentTree, ValueOf};
use crate::config::Config;
use crate::key::{Key, SPAN};

/// An iterator over a [`ConcurrentTree`]'s entries in key order, with
/// copies of their values; from [`ConcurrentTree::iter`] and
/// [`ConcurrentTree::range`]. The module docs of [`crate::concurrent`]
/// say what it returns under concurrent writes.
pub struct Iter<'a, C: Config, S: Space = LocalSpace>
where
    C::Layout: ConcurrentLayout,
{
    tree: &'a ConcurrentTree<C, S>,
    /// Keys above this remain, less those buffered at the back.
    lo: Bound<C::Key>,
    /// Keys below this remain, less those buffered at the front.
    hi: Bound<C::Key>,
    /// Entries found from the front, ascending.
    front: VecDeque<(C::Key, ValueOf<C>)>,
    /// Entries found from the back, descending.
    back: VecDeque<(C::Key, ValueOf<C>)>,
    /// No key remains between `lo` and `hi`.
    drained: bool,
}

/// Which end a seek starts from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Front,
    Back,
}

fn above<K: Ord>(key: K, lo: &Bound<K>) -> bool {
    match lo {
        Bound::Included(lo) => key >= *lo,
        Bound::Excluded(lo) => key > *lo,
        Bound::Unbounded => true,
    }
}

fn below<K: Ord>(key: K, hi: &Bound<K>) -> bool {
    match hi {
        Bound::Included(hi) => key <= *hi,
        Bound::Excluded(hi) => key < *hi,
        Bound::Unbounded => true,
    }
}

impl<'a, C: Config, S: Space> Iter<'a, C, S>
where
    C::Layout: ConcurrentLayout,
{
    fn new(tree: &'a ConcurrentTree<C, S>, lo: Bound<C::Key>, hi: Bound<C::Key>) -> Self {
        Self {
            tree,
            lo,
            hi,
            front: VecDeque::new(),
            back: VecDeque::new(),
            drained: false,
        }
    }

    /// Buffers the next node's entries from `end`; false if none remain.
    fn refill(&mut self, end: End) -> bool {
        if self.drained {
            return false;
        }
        let pin = self.tree.reclaimer.pin();
        let root = pin.load(self.tree.root());
        let out = match end {
            End::Front => &mut self.front,
            End::Back => &mut self.back,
        };
        let mut seek = Seek::<C, S> {
            tree: self.tree,
            pin: &pin,
            lo: &self.lo,
            hi: &self.hi,
            end,
            out,
        };
        seek.subtree(root);
        match (end, out_last(&self.front, &self.back, end)) {
            (_, None) => {
                self.drained = true;
                false
            }
            (End::Front, Some(key)) => {
                self.lo = Bound::Excluded(key);
                true
            }
            (End::Back, Some(key)) => {
                self.hi = Bound::Excluded(key);
                true
            }
        }
    }
}

/// The key last buffered at `end`.
fn out_last<K: Copy, V>(front: &VecDeque<(K, V)>, back: &VecDeque<(K, V)>, end: End) -> Option<K> {
    match end {
        End::Front => front.back().map(|(k, _)| *k),
        End::Back => back.back().map(|(k, _)| *k),
    }
}

/// One refill's walk.
struct Seek<'s, 'p, C: Config, S: Space>
where
    C::Layout: ConcurrentLayout,
{
    tree: &'s ConcurrentTree<C, S>,
    pin: &'s Pin<'p, S::Table>,
    lo: &'s Bound<C::Key>,
    hi: &'s Bound<C::Key>,
    end: End,
    out: &'s mut VecDeque<(C::Key, ValueOf<C>)>,
}

impl<C: Config, S: Space> Seek<'_, '_, C, S>
where
    C::Layout: ConcurrentLayout,
{
    /// Whether `key` is in the range still to return.
    fn wanted(&self, key: C::Key) -> bool {
        above(key, self.lo) && below(key, self.hi)
    }

    /// Buffers the entries of the first last-level node (or lazy leaf) in
    /// range below `word`, from the seek's end. True once something is
    /// buffered. (Every node's prefix word records its path, so the walk
    /// reads keys from headers whatever the compression.)
    fn subtree(&mut self, word: *mut u8) -> bool {
        if word.is_null() {
            return false;
        }
        let Some(kind) = Kind::of(word) else {
            // SAFETY: a lazy leaf of this tree, loaded under the pin.
            let cell = unsafe { self.tree.cell_at(word) };
            if self.wanted(cell.key) {
                self.out.push_back((cell.key, cell.value.clone()));
                return true;
            }
            return false;
        };
        // SAFETY: a node of this tree, loaded under the pin.
        let node = unsafe { self.tree.node_at(word, kind) };
        let header = node.header();
        let shift = header.shift();
        let base = header.prefix().clear_below(shift);
        if !above(max_under(base, shift), self.lo) || !below(base, self.hi) {
            return false;
        }
        let values = ConcurrentTree::<C, S>::values_at(shift);
        let mut entries = Entries::new();
        node.entries(self.pin, &mut entries, values);
        let visit = |seek: &mut Self, chunk: u8, child: *mut u8| -> bool {
            let key = base.with_chunk(shift, chunk);
            if shift == 0 {
                if seek.wanted(key) {
                    // SAFETY: a last-level slot word, under the pin.
                    let value = unsafe { seek.tree.with_value(child, ValueOf::<C>::clone) };
                    seek.out.push_back((key, value));
                }
                false
            } else {
                seek.subtree(child)
            }
        };
        match self.end {
            End::Front => {
                for (chunk, child) in entries.iter() {
                    if visit(self, chunk, child) {
                        return true;
                    }
                }
            }
            End::Back => {
                for (chunk, child) in entries.iter().rev() {
                    if visit(self, chunk, child) {
                        return true;
                    }
                }
            }
        }
        !self.out.is_empty()
    }
}

/// The largest key below a node at `shift` whose smallest is `base`.
fn max_under<K: Key>(base: K, shift: u32) -> K {
    let mut key = base;
    let mut at = 0;
    while at <= shift {
        key = key.with_chunk(at, 0xFF);
        at += SPAN;
    }
    key
}

impl<C: Config, S: Space> Iterator for Iter<'_, C, S>
where
    C::Layout: ConcurrentLayout,
{
    type Item = (C::Key, ValueOf<C>);

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(entry) = self.front.pop_front() {
            return Some(entry);
        }
        if self.refill(End::Front) {
            return self.front.pop_front();
        }
        self.back.pop_back()
    }
}

impl<C: Config, S: Space> DoubleEndedIterator for Iter<'_, C, S>
where
    C::Layout: ConcurrentLayout,
{
    fn next_back(&mut self) -> Option<Self::Item> {
        if let Some(entry) = self.back.pop_front() {
            return Some(entry);
        }
        if self.refill(End::Back) {
            return self.back.pop_front();
        }
        self.front.pop_back()
    }
}

impl<C: Config, S: Space> core::iter::FusedIterator for Iter<'_, C, S> where
    C::Layout: ConcurrentLayout
{
}

impl<C: Config, S: Space> ConcurrentTree<C, S>
where
    C::Layout: ConcurrentLayout,
{
    /// The entries in key order, with copies of their values.
    ///
    /// ```
    /// radix_core::radix_tree! {
    ///     pub struct Tree { key: u32, value: u32, concurrency: rowex }
    /// }
    /// let tree: Tree = [(3, 30), (1, 10), (2, 20)].into_iter().collect();
    /// assert_eq!(tree.iter().collect::<Vec<_>>(), [(1, 10), (2, 20), (3, 30)]);
    /// assert_eq!(tree.iter().rev().next(), Some((3, 30)));
    /// ```
    pub fn iter(&self) -> Iter<'_, C, S> {
        Iter::new(self, Bound::Unbounded, Bound::Unbounded)
    }

    /// The entries with keys in `range`, in key order.
    ///
    /// ```
    /// radix_core::radix_tree! {
    ///     pub struct Tree { key: u64, value: u64, concurrency: rowex }
    /// }
    /// let tree: Tree = (0..100u64).map(|k| (k, k * 2)).collect();
    /// assert_eq!(tree.range(10..13).collect::<Vec<_>>(), [(10, 20), (11, 22), (12, 24)]);
    /// ```
    pub fn range(&self, range: impl RangeBounds<C::Key>) -> Iter<'_, C, S> {
        Iter::new(
            self,
            range.start_bound().cloned(),
            range.end_bound().cloned(),
        )
    }

    /// The entry with the smallest key.
    pub fn first_key_value(&self) -> Option<(C::Key, ValueOf<C>)> {
        self.iter().next()
    }

    /// The entry with the largest key.
    pub fn last_key_value(&self) -> Option<(C::Key, ValueOf<C>)> {
        self.iter().next_back()
    }

    /// The entry with the smallest key at or after `key`.
    pub fn first_at_or_after(&self, key: C::Key) -> Option<(C::Key, ValueOf<C>)> {
        self.range(key..).next()
    }

    /// The entry with the largest key at or before `key`.
    pub fn last_at_or_before(&self, key: C::Key) -> Option<(C::Key, ValueOf<C>)> {
        self.range(..=key).next_back()
    }
}
