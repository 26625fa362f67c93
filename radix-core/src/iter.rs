//! Ordered iteration and ranges, in both directions.
//!
//! A [`Cursor`] walks the tree with an explicit stack of `(node, position)`
//! frames, one per level, so iteration never recurses and costs `O(levels)`
//! space. A forward cursor starts by *seeking* its lower bound: it descends
//! along the bound's chunks for as long as the tree has them, leaving each
//! frame at the first entry not below the bound. A backward cursor does the
//! mirror image from its upper bound. Both directions are lazy: the back
//! cursor is built on the first `next_back`.
//!
//! Front and back never cross: a range keeps the interval of keys not yet
//! produced, and each side stops when its next key falls outside it.

use core::iter::FusedIterator;
use core::mem::MaybeUninit;
use core::ops::{Bound, RangeBounds};
use core::ptr::NonNull;

use crate::config::Config;
use crate::config::RefOf;
use crate::key::{Key, SPAN};
use crate::node::END;
use crate::ptr::NodePtr;
use crate::tree::{
    entry_at, entry_before, resolve, seek, LayoutOf, RawTree, SlotOf, ValueOf, MAX_LEVELS,
};
use crate::value::ValueLayout;

#[derive(Clone, Copy)]
struct Frame {
    node: NodePtr,
    /// Forwards: the next position to visit. Backwards: the position the
    /// next entry must lie before.
    pos: u16,
}

/// A position in the ascending (or descending) walk of a tree.
struct Cursor<C: Config> {
    stack: [MaybeUninit<Frame>; MAX_LEVELS],
    /// Frames in use; 0 when the walk is over.
    depth: usize,
    root_shift: u32,
    /// The key being assembled, chunk by chunk, along the current path.
    key: C::Key,
}

impl<C: Config> Clone for Cursor<C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C: Config> Copy for Cursor<C> {}

impl<C: Config> Cursor<C> {
    /// A cursor over the whole tree, its root frame starting at `start`.
    fn at_root(tree: &RawTree<C>, start: u16) -> Self {
        let mut cursor = Self {
            stack: [MaybeUninit::uninit(); MAX_LEVELS],
            depth: 0,
            root_shift: 0,
            key: C::Key::MIN,
        };
        if let Some((root, root_shift)) = tree.root() {
            cursor.root_shift = root_shift;
            cursor.push(root, start);
        }
        cursor
    }

    /// A forward cursor before the first key `>= lower`.
    fn front(tree: &RawTree<C>, lower: Option<C::Key>) -> Self {
        let mut cursor = Self::at_root(tree, 0);
        if let (Some(lower), true) = (lower, cursor.depth > 0) {
            if lower.above(cursor.root_shift) {
                cursor.depth = 0; // every key is below `lower`
            } else {
                // SAFETY: the tree is live and borrowed for the cursor's life.
                unsafe { cursor.seek_front(tree.memory(), lower) };
            }
        }
        cursor
    }

    /// A backward cursor after the last key `<= upper`.
    fn back(tree: &RawTree<C>, upper: Option<C::Key>) -> Self {
        let mut cursor = Self::at_root(tree, END);
        if let (Some(upper), true) = (upper, cursor.depth > 0) {
            // An upper bound above the tree's reach bounds nothing.
            if upper.root_shift() <= cursor.root_shift {
                // SAFETY: the tree is live and borrowed for the cursor's life.
                unsafe { cursor.seek_back(tree.memory(), upper) };
            }
        }
        cursor
    }

    #[inline(always)]
    fn push(&mut self, node: NodePtr, pos: u16) {
        self.stack[self.depth].write(Frame { node, pos });
        self.depth += 1;
    }

    #[inline(always)]
    fn top(&mut self) -> &mut Frame {
        // SAFETY: frames below `depth` are initialised.
        unsafe { self.stack[self.depth - 1].assume_init_mut() }
    }

    #[inline(always)]
    fn shift(&self) -> u32 {
        self.root_shift - SPAN * (self.depth as u32 - 1)
    }

    /// Positions every frame on the path of `lower`, forwards.
    ///
    /// # Safety
    ///
    /// The tree is live on `mem`.
    unsafe fn seek_front(&mut self, mem: &C::Memory, lower: C::Key) {
        loop {
            let shift = self.shift();
            let chunk = lower.chunk(shift);
            let frame = self.top();
            // SAFETY: the frame's node is live; inner slots are child pointers.
            unsafe {
                frame.pos = seek(frame.node, chunk);
                if shift == 0 {
                    return;
                }
                match entry_at::<RefOf<C>>(frame.node, frame.pos) {
                    Some(e) if e.chunk == chunk => {
                        frame.pos = e.next;
                        self.key = self.key.with_chunk(shift, chunk);
                        self.push(resolve(mem, e.slot.read()), 0);
                    }
                    // A larger chunk (walked from its start) or none (popped).
                    _ => return,
                }
            }
        }
    }

    /// Positions every frame on the path of `upper`, backwards.
    ///
    /// # Safety
    ///
    /// The tree is live on `mem`.
    unsafe fn seek_back(&mut self, mem: &C::Memory, upper: C::Key) {
        loop {
            let shift = self.shift();
            let chunk = upper.chunk(shift);
            let frame = self.top();
            // SAFETY: the frame's node is live; inner slots are child pointers.
            unsafe {
                let pos = seek(frame.node, chunk);
                // Entries before `pos` are below `chunk`: all of them qualify.
                frame.pos = pos;
                let same = if shift == 0 {
                    entry_at::<SlotOf<C>>(frame.node, pos)
                        .filter(|e| e.chunk == chunk)
                        .map(|e| e.next)
                } else {
                    entry_at::<RefOf<C>>(frame.node, pos)
                        .filter(|e| e.chunk == chunk)
                        .map(|e| {
                            self.key = self.key.with_chunk(shift, chunk);
                            self.push(resolve(mem, e.slot.read()), END);
                            // The parent resumes before the child it descended into.
                            pos
                        })
                };
                match same {
                    // The last level holds `upper` itself: include it.
                    Some(next) if shift == 0 => {
                        self.top().pos = next;
                        return;
                    }
                    Some(_) => {}
                    None => return,
                }
            }
        }
    }

    /// The next key and its slot, forwards.
    ///
    /// # Safety
    ///
    /// The tree is live on `mem` and unchanged since the cursor was made.
    #[inline]
    unsafe fn next(&mut self, mem: &C::Memory) -> Option<(C::Key, NonNull<SlotOf<C>>)> {
        while self.depth > 0 {
            let shift = self.shift();
            let frame = *self.top();
            // SAFETY: the frame's node is live; its slots are values at the
            // last level and child pointers above it.
            unsafe {
                if shift == 0 {
                    if let Some(e) = entry_at::<SlotOf<C>>(frame.node, frame.pos) {
                        self.top().pos = e.next;
                        return Some((self.key.with_chunk(0, e.chunk), e.slot));
                    }
                } else if let Some(e) = entry_at::<RefOf<C>>(frame.node, frame.pos) {
                    self.top().pos = e.next;
                    self.key = self.key.with_chunk(shift, e.chunk);
                    self.push(resolve(mem, e.slot.read()), 0);
                    continue;
                }
            }
            self.depth -= 1;
        }
        None
    }

    /// The next key and its slot, backwards.
    ///
    /// # Safety
    ///
    /// As for [`Cursor::next`].
    #[inline]
    unsafe fn next_back(&mut self, mem: &C::Memory) -> Option<(C::Key, NonNull<SlotOf<C>>)> {
        while self.depth > 0 {
            let shift = self.shift();
            let frame = *self.top();
            // SAFETY: as in `next`.
            unsafe {
                if shift == 0 {
                    if let Some(e) = entry_before::<SlotOf<C>>(frame.node, frame.pos) {
                        self.top().pos = e.next;
                        return Some((self.key.with_chunk(0, e.chunk), e.slot));
                    }
                } else if let Some(e) = entry_before::<RefOf<C>>(frame.node, frame.pos) {
                    self.top().pos = e.next;
                    self.key = self.key.with_chunk(shift, e.chunk);
                    self.push(resolve(mem, e.slot.read()), END);
                    continue;
                }
            }
            self.depth -= 1;
        }
        None
    }
}

/// The keys a double-ended walk has not produced yet, as an inclusive
/// interval; `None` once the two ends have met.
type Remaining<K> = Option<(K, K)>;

/// The shared machinery of [`Iter`] and [`Range`]: two lazy cursors and the
/// interval between them.
struct Walk<'a, C: Config> {
    tree: &'a RawTree<C>,
    front: Option<Cursor<C>>,
    back: Option<Cursor<C>>,
    remaining: Remaining<C::Key>,
}

impl<C: Config> Clone for Walk<'_, C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C: Config> Copy for Walk<'_, C> {}

impl<'a, C: Config> Walk<'a, C> {
    fn new(tree: &'a RawTree<C>, remaining: Remaining<C::Key>) -> Self {
        Self {
            tree,
            front: None,
            back: None,
            remaining: if tree.is_empty() { None } else { remaining },
        }
    }

    #[inline]
    fn next(&mut self) -> Option<(C::Key, &'a ValueOf<C>)> {
        let (low, high) = self.remaining?;
        let tree = self.tree;
        let cursor = self
            .front
            .get_or_insert_with(|| Cursor::front(tree, (low != C::Key::MIN).then_some(low)));
        // SAFETY: the tree is borrowed for 'a, so it is live and unchanged.
        let found = unsafe { cursor.next(tree.memory()) };
        match found {
            Some((key, slot)) if key <= high => {
                self.remaining = key.checked_next().filter(|&k| k <= high).map(|k| (k, high));
                // SAFETY: as above; the value lives as long as the borrow.
                Some((key, unsafe { LayoutOf::<C>::get(slot, tree.memory()) }))
            }
            _ => {
                self.remaining = None;
                None
            }
        }
    }

    #[inline]
    fn next_back(&mut self) -> Option<(C::Key, &'a ValueOf<C>)> {
        let (low, high) = self.remaining?;
        let tree = self.tree;
        let cursor = self
            .back
            .get_or_insert_with(|| Cursor::back(tree, (high != C::Key::MAX).then_some(high)));
        // SAFETY: the tree is borrowed for 'a, so it is live and unchanged.
        let found = unsafe { cursor.next_back(tree.memory()) };
        match found {
            Some((key, slot)) if key >= low => {
                self.remaining = key.checked_prev().filter(|&k| k >= low).map(|k| (low, k));
                // SAFETY: as above; the value lives as long as the borrow.
                Some((key, unsafe { LayoutOf::<C>::get(slot, tree.memory()) }))
            }
            _ => {
                self.remaining = None;
                None
            }
        }
    }
}

/// An iterator over a tree's entries in ascending key order.
///
/// Made by `iter()`; yields `(key, &value)` and runs from either end.
pub struct Iter<'a, C: Config> {
    walk: Walk<'a, C>,
    len: usize,
}

impl<'a, C: Config> Iterator for Iter<'a, C> {
    type Item = (C::Key, &'a ValueOf<C>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let item = self.walk.next()?;
        self.len -= 1;
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len, Some(self.len))
    }

    fn last(mut self) -> Option<Self::Item> {
        self.next_back()
    }
}

impl<C: Config> DoubleEndedIterator for Iter<'_, C> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let item = self.walk.next_back()?;
        self.len -= 1;
        Some(item)
    }
}

impl<C: Config> ExactSizeIterator for Iter<'_, C> {}
impl<C: Config> FusedIterator for Iter<'_, C> {}

impl<C: Config> Clone for Iter<'_, C> {
    fn clone(&self) -> Self {
        Self {
            walk: self.walk,
            len: self.len,
        }
    }
}

/// An iterator over the entries whose keys lie in a range, ascending.
///
/// Made by `range()`; yields `(key, &value)` and runs from either end.
pub struct Range<'a, C: Config> {
    walk: Walk<'a, C>,
}

impl<'a, C: Config> Iterator for Range<'a, C> {
    type Item = (C::Key, &'a ValueOf<C>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.walk.next()
    }

    fn last(mut self) -> Option<Self::Item> {
        self.next_back()
    }
}

impl<C: Config> DoubleEndedIterator for Range<'_, C> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        self.walk.next_back()
    }
}

impl<C: Config> FusedIterator for Range<'_, C> {}

impl<C: Config> Clone for Range<'_, C> {
    fn clone(&self) -> Self {
        Self { walk: self.walk }
    }
}

/// An iterator over a tree's keys, ascending. Made by `keys()`.
pub struct Keys<'a, C: Config>(Iter<'a, C>);

impl<C: Config> Iterator for Keys<'_, C> {
    type Item = C::Key;

    #[inline]
    fn next(&mut self) -> Option<C::Key> {
        self.0.next().map(|(k, _)| k)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<C: Config> DoubleEndedIterator for Keys<'_, C> {
    #[inline]
    fn next_back(&mut self) -> Option<C::Key> {
        self.0.next_back().map(|(k, _)| k)
    }
}

impl<C: Config> ExactSizeIterator for Keys<'_, C> {}
impl<C: Config> FusedIterator for Keys<'_, C> {}

/// An iterator over a tree's values, in ascending key order. Made by
/// `values()`.
pub struct Values<'a, C: Config>(Iter<'a, C>);

impl<'a, C: Config> Iterator for Values<'a, C> {
    type Item = &'a ValueOf<C>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(_, v)| v)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<C: Config> DoubleEndedIterator for Values<'_, C> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(_, v)| v)
    }
}

impl<C: Config> ExactSizeIterator for Values<'_, C> {}
impl<C: Config> FusedIterator for Values<'_, C> {}

impl<C: Config> RawTree<C> {
    /// The entries in ascending key order.
    pub fn iter(&self) -> Iter<'_, C> {
        Iter {
            walk: Walk::new(self, Some((C::Key::MIN, C::Key::MAX))),
            len: self.len(),
        }
    }

    /// The entries whose keys lie in `range`, in ascending key order. A
    /// range whose start lies after its end is empty (where `BTreeMap`
    /// panics).
    pub fn range<R: RangeBounds<C::Key>>(&self, range: R) -> Range<'_, C> {
        let low = match range.start_bound() {
            Bound::Included(&k) => Some(k),
            Bound::Excluded(&k) => k.checked_next(),
            Bound::Unbounded => Some(C::Key::MIN),
        };
        let high = match range.end_bound() {
            Bound::Included(&k) => Some(k),
            Bound::Excluded(&k) => k.checked_prev(),
            Bound::Unbounded => Some(C::Key::MAX),
        };
        let remaining = match (low, high) {
            (Some(low), Some(high)) if low <= high => Some((low, high)),
            _ => None,
        };
        Range {
            walk: Walk::new(self, remaining),
        }
    }

    /// The keys in ascending order.
    pub fn keys(&self) -> Keys<'_, C> {
        Keys(self.iter())
    }

    /// The values in ascending key order.
    pub fn values(&self) -> Values<'_, C> {
        Values(self.iter())
    }

    /// The entry with the smallest key.
    pub fn first_key_value(&self) -> Option<(C::Key, &ValueOf<C>)> {
        self.iter().next()
    }

    /// The entry with the largest key.
    pub fn last_key_value(&self) -> Option<(C::Key, &ValueOf<C>)> {
        self.iter().next_back()
    }
}

impl<'a, C: Config> IntoIterator for &'a RawTree<C> {
    type Item = (C::Key, &'a ValueOf<C>);
    type IntoIter = Iter<'a, C>;

    fn into_iter(self) -> Iter<'a, C> {
        self.iter()
    }
}
