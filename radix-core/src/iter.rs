//! Ordered iteration and ranges.
//!
//! A [`Cursor`] walks the tree in ascending key order with an explicit stack
//! of `(node, position)` frames, one per level, so iteration never recurses
//! and costs `O(levels)` space. A range starts by *seeking*: it descends
//! along the lower bound's chunks for as long as the tree has them, leaving
//! each frame positioned at the first entry not below the bound, and then
//! walks normally; the upper bound is checked on each key produced.

use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ops::{Bound, RangeBounds};
use core::ptr::NonNull;

use crate::config::Config;
use crate::key::{Key, SPAN};
use crate::ptr::NodePtr;
use crate::tree::{entry_at, seek, LayoutOf, RawTree, SlotOf, ValueOf, MAX_LEVELS};
use crate::value::ValueLayout;

#[derive(Clone, Copy)]
struct Frame {
    node: NodePtr,
    pos: u16,
}

/// A position in the ascending walk of a tree.
pub(crate) struct Cursor<C: Config> {
    stack: [MaybeUninit<Frame>; MAX_LEVELS],
    /// Frames in use; 0 when the walk is over.
    depth: usize,
    root_shift: u32,
    /// The key being assembled, chunk by chunk, along the current path.
    key: C::Key,
}

impl<C: Config> Clone for Cursor<C> {
    fn clone(&self) -> Self {
        Self {
            stack: self.stack,
            depth: self.depth,
            root_shift: self.root_shift,
            key: self.key,
        }
    }
}

impl<C: Config> Cursor<C> {
    /// A cursor before the first key `>= lower`.
    fn new(tree: &RawTree<C>, lower: Option<C::Key>) -> Self {
        let mut cursor = Self {
            stack: [MaybeUninit::uninit(); MAX_LEVELS],
            depth: 0,
            root_shift: 0,
            key: C::Key::MIN,
        };
        let Some((root, root_shift)) = tree.root() else {
            return cursor;
        };
        cursor.root_shift = root_shift;
        cursor.push(root);
        if let Some(lower) = lower {
            if lower.root_shift() > root_shift {
                cursor.depth = 0; // every key is below `lower`
            } else {
                // SAFETY: the tree is live and borrowed for the cursor's life.
                unsafe { cursor.seek(lower) };
            }
        }
        cursor
    }

    #[inline(always)]
    fn push(&mut self, node: NodePtr) {
        self.stack[self.depth].write(Frame { node, pos: 0 });
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

    /// Positions every frame on the path of `lower`.
    ///
    /// # Safety
    ///
    /// The tree is live.
    unsafe fn seek(&mut self, lower: C::Key) {
        loop {
            let shift = self.shift();
            let chunk = lower.chunk(shift);
            let frame = self.top();
            // SAFETY: the frame's node is live; inner slots are child pointers.
            unsafe {
                let pos = seek(frame.node, chunk);
                frame.pos = pos;
                if shift == 0 {
                    return;
                }
                match entry_at::<NodePtr>(frame.node, pos) {
                    Some(e) if e.chunk == chunk => {
                        frame.pos = e.next;
                        self.key = self.key.with_chunk(shift, chunk);
                        self.push(e.slot.read());
                    }
                    // A larger chunk (walk it from its start) or none (pop).
                    _ => return,
                }
            }
        }
    }

    /// The next key and its slot.
    ///
    /// # Safety
    ///
    /// The tree is live and unchanged since the cursor was made.
    #[inline]
    unsafe fn next(&mut self) -> Option<(C::Key, NonNull<SlotOf<C>>)> {
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
                } else if let Some(e) = entry_at::<NodePtr>(frame.node, frame.pos) {
                    self.top().pos = e.next;
                    self.key = self.key.with_chunk(shift, e.chunk);
                    self.push(e.slot.read());
                    continue;
                }
            }
            self.depth -= 1;
        }
        None
    }
}

/// An iterator over a tree's entries in ascending key order.
///
/// Made by `iter()`; yields `(key, &value)`.
pub struct Iter<'a, C: Config> {
    cursor: Cursor<C>,
    remaining: usize,
    _tree: PhantomData<&'a RawTree<C>>,
}

impl<'a, C: Config> Iterator for Iter<'a, C> {
    type Item = (C::Key, &'a ValueOf<C>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        // SAFETY: the tree is borrowed for 'a, so it is live and unchanged.
        let (key, slot) = unsafe { self.cursor.next()? };
        self.remaining -= 1;
        // SAFETY: as above; the value lives as long as the borrow.
        Some((key, unsafe { LayoutOf::<C>::get(slot) }))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<C: Config> ExactSizeIterator for Iter<'_, C> {}
impl<C: Config> FusedIterator for Iter<'_, C> {}

impl<C: Config> Clone for Iter<'_, C> {
    fn clone(&self) -> Self {
        Self {
            cursor: self.cursor.clone(),
            remaining: self.remaining,
            _tree: PhantomData,
        }
    }
}

/// An iterator over the entries whose keys lie in a range, ascending.
///
/// Made by `range()`; yields `(key, &value)`.
pub struct Range<'a, C: Config> {
    cursor: Cursor<C>,
    end: Bound<C::Key>,
    _tree: PhantomData<&'a RawTree<C>>,
}

impl<'a, C: Config> Iterator for Range<'a, C> {
    type Item = (C::Key, &'a ValueOf<C>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        // SAFETY: the tree is borrowed for 'a, so it is live and unchanged.
        let (key, slot) = unsafe { self.cursor.next()? };
        let inside = match self.end {
            Bound::Included(end) => key <= end,
            Bound::Excluded(end) => key < end,
            Bound::Unbounded => true,
        };
        if !inside {
            self.cursor.depth = 0;
            return None;
        }
        // SAFETY: as above; the value lives as long as the borrow.
        Some((key, unsafe { LayoutOf::<C>::get(slot) }))
    }
}

impl<C: Config> FusedIterator for Range<'_, C> {}

impl<C: Config> Clone for Range<'_, C> {
    fn clone(&self) -> Self {
        Self {
            cursor: self.cursor.clone(),
            end: self.end,
            _tree: PhantomData,
        }
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

impl<C: Config> ExactSizeIterator for Values<'_, C> {}
impl<C: Config> FusedIterator for Values<'_, C> {}

impl<C: Config> RawTree<C> {
    /// The entries in ascending key order.
    pub fn iter(&self) -> Iter<'_, C> {
        Iter {
            cursor: Cursor::new(self, None),
            remaining: self.len(),
            _tree: PhantomData,
        }
    }

    /// The entries whose keys lie in `range`, in ascending key order. A
    /// range whose start lies after its end is empty.
    pub fn range<R: RangeBounds<C::Key>>(&self, range: R) -> Range<'_, C> {
        let (lower, empty) = match range.start_bound() {
            Bound::Included(&k) => (Some(k), false),
            // `(Excluded(MAX), _)` holds nothing.
            Bound::Excluded(&k) => (k.checked_next(), k.checked_next().is_none()),
            Bound::Unbounded => (None, false),
        };
        let mut cursor = Cursor::new(self, lower);
        if empty {
            cursor.depth = 0;
        }
        Range {
            cursor,
            end: range.end_bound().cloned(),
            _tree: PhantomData,
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
}

impl<'a, C: Config> IntoIterator for &'a RawTree<C> {
    type Item = (C::Key, &'a ValueOf<C>);
    type IntoIter = Iter<'a, C>;

    fn into_iter(self) -> Iter<'a, C> {
        self.iter()
    }
}
