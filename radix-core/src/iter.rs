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
use crate::node::{lazy, END};
use crate::ptr::NodePtr;
use crate::tree::{
    entry_at, entry_before, follow, node_key, node_shift, seek, unflagged, LayoutOf, RawTree,
    SlotOf, ValueOf, MAX_LEVELS,
};
use crate::value::ValueLayout;

#[derive(Clone, Copy)]
struct Frame {
    node: NodePtr,
    /// Forwards: the next position to visit. Backwards: the position the
    /// next entry must lie before.
    pos: u16,
    /// The shift of the chunk the node consumes.
    shift: u32,
}

/// A position in the ascending (or descending) walk of a tree.
struct Cursor<C: Config> {
    stack: [MaybeUninit<Frame>; MAX_LEVELS],
    /// Frames in use; 0 when the walk is over.
    depth: usize,
    root_shift: u32,
    /// The key being assembled along the current path: every bit above the
    /// top frame's chunk.
    key: C::Key,
    /// A tree that is one lazy leaf: its leaf, until produced.
    lazy_root: Option<NodePtr>,
}

impl<C: Config> Clone for Cursor<C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C: Config> Copy for Cursor<C> {}

/// The key and value slot of lazy leaf `leaf`.
///
/// # Safety
///
/// `leaf` is a live lazy leaf of a tree of configuration `C`.
#[inline(always)]
unsafe fn lazy_entry<C: Config>(leaf: NodePtr) -> (C::Key, NonNull<SlotOf<C>>) {
    // SAFETY: the caller's contract.
    unsafe {
        (
            lazy::key::<C::Key, SlotOf<C>>(leaf.addr()),
            lazy::slot::<SlotOf<C>>(leaf.addr()),
        )
    }
}

impl<C: Config> Cursor<C> {
    /// A cursor over the whole tree, its root frame starting at `start`.
    fn at_root(tree: &RawTree<C>, start: u16) -> Self {
        let mut cursor = Self {
            stack: [MaybeUninit::uninit(); MAX_LEVELS],
            depth: 0,
            root_shift: 0,
            key: C::Key::MIN,
            lazy_root: None,
        };
        if let Some((root, root_shift)) = tree.root() {
            let root = unflagged::<C>(root);
            cursor.root_shift = root_shift;
            if root.is_lazy() {
                cursor.lazy_root = Some(root);
            } else {
                // SAFETY: the tree is live and borrowed for the cursor's life.
                unsafe {
                    let shift = node_shift::<C>(root, root_shift);
                    cursor.key = node_key::<C>(root, C::Key::MIN);
                    cursor.push(root, start, shift);
                }
            }
        }
        cursor
    }

    /// A forward cursor before the first key `>= lower`.
    fn front(tree: &RawTree<C>, lower: Option<C::Key>) -> Self {
        let mut cursor = Self::at_root(tree, 0);
        let Some(lower) = lower else { return cursor };
        if let Some(leaf) = cursor.lazy_root {
            // SAFETY: the tree is live and borrowed for the cursor's life.
            if unsafe { lazy_entry::<C>(leaf) }.0 < lower {
                cursor.lazy_root = None;
            }
        } else if cursor.depth > 0 {
            if !C::COMPRESSION.path() && lower.above(cursor.root_shift) {
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
        let Some(upper) = upper else { return cursor };
        if let Some(leaf) = cursor.lazy_root {
            // SAFETY: the tree is live and borrowed for the cursor's life.
            if unsafe { lazy_entry::<C>(leaf) }.0 > upper {
                cursor.lazy_root = None;
            }
        } else if cursor.depth > 0 {
            // An upper bound above the tree's reach bounds nothing.
            if C::COMPRESSION.path() || upper.root_shift() <= cursor.root_shift {
                // SAFETY: the tree is live and borrowed for the cursor's life.
                unsafe { cursor.seek_back(tree.memory(), upper) };
            }
        }
        cursor
    }

    #[inline(always)]
    fn push(&mut self, node: NodePtr, pos: u16, shift: u32) {
        self.stack[self.depth].write(Frame { node, pos, shift });
        self.depth += 1;
    }

    /// Descends from the top frame, at `shift`, into `child`, its entry for
    /// `chunk`, starting the child's walk at `pos`.
    ///
    /// # Safety
    ///
    /// `child` is a live node of the tree.
    #[inline(always)]
    unsafe fn descend(&mut self, shift: u32, chunk: u8, child: NodePtr, pos: u16) {
        // SAFETY: the caller's contract.
        unsafe {
            let child_shift = node_shift::<C>(child, shift - SPAN);
            self.key = node_key::<C>(child, self.key.with_chunk(shift, chunk));
            self.push(child, pos, child_shift);
        }
    }

    #[inline(always)]
    fn top(&mut self) -> &mut Frame {
        // SAFETY: frames below `depth` are initialised.
        unsafe { self.stack[self.depth - 1].assume_init_mut() }
    }

    /// How a path-compressed node's prefix compares with `bound`'s: the
    /// bound's bits above the node's chunk against the node's (in
    /// `self.key`). Always equal without path compression.
    #[inline(always)]
    fn prefix_order(&self, bound: C::Key, shift: u32) -> core::cmp::Ordering {
        if C::COMPRESSION.path() {
            bound.clear_below(shift).cmp(&self.key)
        } else {
            core::cmp::Ordering::Equal
        }
    }

    /// Positions every frame on the path of `lower`, forwards.
    ///
    /// # Safety
    ///
    /// The tree is live on `mem`.
    unsafe fn seek_front(&mut self, mem: &C::Memory, lower: C::Key) {
        use core::cmp::Ordering;
        loop {
            let Frame { node, shift, .. } = *self.top();
            match self.prefix_order(lower, shift) {
                // The node's keys are all above `lower`: walk it all.
                Ordering::Less => return,
                // ... or all below: skip it.
                Ordering::Greater => {
                    self.top().pos = END;
                    return;
                }
                Ordering::Equal => {}
            }
            let chunk = lower.chunk(shift);
            // SAFETY: the frame's node is live; inner slots are child pointers.
            unsafe {
                let pos = seek(node, chunk);
                self.top().pos = pos;
                if shift == 0 {
                    return;
                }
                match entry_at::<RefOf<C>>(node, pos) {
                    Some(e) if e.chunk == chunk => {
                        let child = follow::<C>(mem, e.slot.read());
                        if C::COMPRESSION.lazy() && child.is_lazy() {
                            // Produce the leaf only if it is not below `lower`.
                            if lazy_entry::<C>(child).0 < lower {
                                self.top().pos = e.next;
                            }
                            return;
                        }
                        self.top().pos = e.next;
                        self.descend(shift, chunk, child, 0);
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
        use core::cmp::Ordering;
        loop {
            let Frame { node, shift, .. } = *self.top();
            match self.prefix_order(upper, shift) {
                // The node's keys are all below `upper`: walk it all.
                Ordering::Greater => return,
                // ... or all above: skip it.
                Ordering::Less => {
                    self.top().pos = 0;
                    return;
                }
                Ordering::Equal => {}
            }
            let chunk = upper.chunk(shift);
            // SAFETY: the frame's node is live; inner slots are child pointers.
            unsafe {
                // Entries before `pos` are below `chunk`: all of them qualify.
                let pos = seek(node, chunk);
                self.top().pos = pos;
                if shift == 0 {
                    // The last level holds `upper` itself: include it.
                    if let Some(e) = entry_at::<SlotOf<C>>(node, pos).filter(|e| e.chunk == chunk) {
                        self.top().pos = e.next;
                    }
                    return;
                }
                match entry_at::<RefOf<C>>(node, pos) {
                    Some(e) if e.chunk == chunk => {
                        let child = follow::<C>(mem, e.slot.read());
                        if C::COMPRESSION.lazy() && child.is_lazy() {
                            if lazy_entry::<C>(child).0 <= upper {
                                self.top().pos = e.next;
                            }
                            return;
                        }
                        // The parent resumes before the child it descends into.
                        self.descend(shift, chunk, child, END);
                    }
                    _ => return,
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
            let frame = *self.top();
            // SAFETY: the frame's node is live; its slots are values at the
            // last level and child pointers above it.
            unsafe {
                if frame.shift == 0 {
                    if let Some(e) = entry_at::<SlotOf<C>>(frame.node, frame.pos) {
                        self.top().pos = e.next;
                        return Some((self.key.with_chunk(0, e.chunk), e.slot));
                    }
                } else if let Some(e) = entry_at::<RefOf<C>>(frame.node, frame.pos) {
                    self.top().pos = e.next;
                    let child = follow::<C>(mem, e.slot.read());
                    if C::COMPRESSION.lazy() && child.is_lazy() {
                        return Some(lazy_entry::<C>(child));
                    }
                    self.descend(frame.shift, e.chunk, child, 0);
                    continue;
                }
            }
            self.depth -= 1;
        }
        // SAFETY: a lazy root is live while the tree is.
        self.lazy_root
            .take()
            .map(|leaf| unsafe { lazy_entry::<C>(leaf) })
    }

    /// The next key and its slot, backwards.
    ///
    /// # Safety
    ///
    /// As for [`Cursor::next`].
    #[inline]
    unsafe fn next_back(&mut self, mem: &C::Memory) -> Option<(C::Key, NonNull<SlotOf<C>>)> {
        while self.depth > 0 {
            let frame = *self.top();
            // SAFETY: as in `next`.
            unsafe {
                if frame.shift == 0 {
                    if let Some(e) = entry_before::<SlotOf<C>>(frame.node, frame.pos) {
                        self.top().pos = e.next;
                        return Some((self.key.with_chunk(0, e.chunk), e.slot));
                    }
                } else if let Some(e) = entry_before::<RefOf<C>>(frame.node, frame.pos) {
                    self.top().pos = e.next;
                    let child = follow::<C>(mem, e.slot.read());
                    if C::COMPRESSION.lazy() && child.is_lazy() {
                        return Some(lazy_entry::<C>(child));
                    }
                    self.descend(frame.shift, e.chunk, child, END);
                    continue;
                }
            }
            self.depth -= 1;
        }
        // SAFETY: a lazy root is live while the tree is.
        self.lazy_root
            .take()
            .map(|leaf| unsafe { lazy_entry::<C>(leaf) })
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
