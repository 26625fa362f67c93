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
    ValueOf<C>: Clone,
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
pub(super) enum End {
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
    ValueOf<C>: Clone,
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
        let out = match end {
            End::Front => &mut self.front,
            End::Back => &mut self.back,
        };
        let more = step(self.tree, &mut self.lo, &mut self.hi, end, |key, value| {
            out.push_back((key, value.clone()));
        });
        self.drained = !more;
        more
    }
}

/// One step of a walk between `lo` and `hi` from `end`: pins, calls
/// `emit` on the entries of the next last-level node (or lazy leaf) in
/// range, in order, moves the bound at `end` past them, and unpins. False
/// if nothing was left in range.
pub(super) fn step<C: Config, S: Space>(
    tree: &ConcurrentTree<C, S>,
    lo: &mut Bound<C::Key>,
    hi: &mut Bound<C::Key>,
    end: End,
    emit: impl FnMut(C::Key, &ValueOf<C>),
) -> bool
where
    C::Layout: ConcurrentLayout,
{
    let pin = tree.reclaimer.pin();
    let root = pin.load(tree.root());
    let mut seek = Seek::<C, S, _> {
        tree,
        pin: &pin,
        lo: &*lo,
        hi: &*hi,
        end,
        emit,
        last: None,
    };
    seek.subtree(root);
    match (end, seek.last) {
        (_, None) => false,
        (End::Front, Some(key)) => {
            *lo = Bound::Excluded(key);
            true
        }
        (End::Back, Some(key)) => {
            *hi = Bound::Excluded(key);
            true
        }
    }
}

/// One step's walk.
struct Seek<'s, 'p, C: Config, S: Space, E>
where
    C::Layout: ConcurrentLayout,
{
    tree: &'s ConcurrentTree<C, S>,
    pin: &'s Pin<'p, S::Table>,
    lo: &'s Bound<C::Key>,
    hi: &'s Bound<C::Key>,
    end: End,
    emit: E,
    /// The key last emitted.
    last: Option<C::Key>,
}

impl<C: Config, S: Space, E: FnMut(C::Key, &ValueOf<C>)> Seek<'_, '_, C, S, E>
where
    C::Layout: ConcurrentLayout,
{
    /// Hands `key`'s value to the step's consumer.
    fn out(&mut self, key: C::Key, value: &ValueOf<C>) {
        (self.emit)(key, value);
        self.last = Some(key);
    }

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
            let key = unsafe { self.tree.cell_key(word) };
            if self.wanted(key) {
                // SAFETY: as above.
                unsafe { self.tree.with_cell(word, |value| self.out(key, value)) };
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
                    let tree = seek.tree;
                    // SAFETY: a last-level slot word, under the pin.
                    unsafe { tree.with_value(child, |value| seek.out(key, value)) };
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
        self.last.is_some()
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
    ValueOf<C>: Clone,
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
    ValueOf<C>: Clone,
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

impl<C: Config, S: Space> core::iter::FusedIterator for Iter<'_, C, S>
where
    C::Layout: ConcurrentLayout,
    ValueOf<C>: Clone,
{
}

impl<C: Config, S: Space> ConcurrentTree<C, S>
where
    C::Layout: ConcurrentLayout,
{
    /// Calls `f` on every entry with a key in `range`, in key order,
    /// lending it the value: iteration for values that are not `Clone`
    /// (varlen values), or that need not be cloned. It promises what
    /// [`iter`](Self::iter) does under concurrent writes, and holds a pin
    /// only while it visits one last-level node.
    ///
    /// ```
    /// radix_core::radix_tree! {
    ///     pub struct Names { key: u32, value: String, layout: leaf, concurrency: rowex }
    /// }
    /// let names = Names::new();
    /// for (k, name) in [(1, "one"), (2, "two"), (3, "three")] {
    ///     names.insert(k, name.to_string());
    /// }
    /// let mut letters = 0;
    /// names.for_each_in(2.., |_, name| letters += name.len());
    /// assert_eq!(letters, 3 + 5);
    /// ```
    pub fn for_each_in(
        &self,
        range: impl RangeBounds<C::Key>,
        mut f: impl FnMut(C::Key, &ValueOf<C>),
    ) {
        let mut lo = range.start_bound().cloned();
        let mut hi = range.end_bound().cloned();
        while step(self, &mut lo, &mut hi, End::Front, &mut f) {}
    }
}

impl<C: Config, S: Space> ConcurrentTree<C, S>
where
    C::Layout: ConcurrentLayout,
    ValueOf<C>: Clone,
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
