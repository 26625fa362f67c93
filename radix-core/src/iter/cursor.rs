//! [`Cursor`]: a position between two entries of a tree, which moves
//! forwards and backwards and seeks.
//!
//! The cursor sits in a *gap*, as `BTreeMap`'s cursors do: `next` returns
//! the entry after the gap and moves past it, `prev` the entry before it.
//! It keeps the forward walk's stack of frames, so that `next` is a step
//! and [`seek`](Cursor::seek) keeps every frame whose node covers the key
//! sought and re-descends only below the lowest of them: probing keys in
//! ascending order costs a node search or two per probe where a lookup
//! descends from the root. Moving backwards descends from the root (one
//! range query per step) and then re-seeks the forward stack near where
//! it was.

use core::fmt;
use core::ptr::NonNull;

use super::walk::Path;
use crate::config::Config;
use crate::key::Key;
use crate::raw::{LayoutOf, RawTree, SlotOf, ValueOf};
use crate::value::ValueLayout;

/// A key and its value slot, as the walk yields them.
type Found<C> = Option<(<C as Config>::Key, NonNull<SlotOf<C>>)>;

/// A position between two entries of a tree (or before the first, or after
/// the last), borrowing the tree. Made by [`RawTree::cursor_at`].
///
/// ```
/// radix_core::radix_tree! {
///     /// Extents by start block.
///     pub struct Extents { key: u64, value: u32 }
/// }
///
/// let mut t = Extents::new();
/// for k in [10, 20, 30, 40] {
///     t.insert(k, k as u32 * 2);
/// }
/// let mut c = t.as_raw().cursor_at(15);
/// assert_eq!(c.next(), Some((20, &40)));
/// assert_eq!(c.next(), Some((30, &60)));
/// assert_eq!(c.prev(), Some((30, &60)));
/// assert_eq!(c.prev(), Some((20, &40)));
/// c.seek(35);
/// assert_eq!(c.peek_next(), Some((40, &80)));
/// assert_eq!(c.peek_prev(), Some((30, &60)));
/// ```
pub struct Cursor<'a, C: Config> {
    tree: &'a RawTree<C>,
    /// The forward walk, positioned at the gap (possibly one entry past
    /// it, held in `peeked`).
    path: Path<C>,
    /// The entry after the gap, once `path` has produced it.
    peeked: Option<Found<C>>,
    /// Every key at or above this lies after the gap; `None` when the gap
    /// is after the last key the type can hold.
    gap: Option<C::Key>,
}

// SAFETY: a cursor reads the tree as a shared borrow does.
unsafe impl<C: Config> Send for Cursor<'_, C> where for<'x> &'x RawTree<C>: Send {}
// SAFETY: as above.
unsafe impl<C: Config> Sync for Cursor<'_, C> where for<'x> &'x RawTree<C>: Sync {}

impl<C: Config> RawTree<C> {
    /// A cursor in the gap just before the first entry at or after `key`.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, char> = [(10, 'a'), (20, 'b'), (30, 'c')].into_iter().collect();
    /// let mut c = m.cursor_at(15);
    /// assert_eq!(c.peek_prev(), Some((10, &'a')));
    /// assert_eq!(c.next(), Some((20, &'b')));
    /// // At a present key, the gap is just before it.
    /// assert_eq!(m.cursor_at(30).next(), Some((30, &'c')));
    /// ```
    pub fn cursor_at(&self, key: C::Key) -> Cursor<'_, C> {
        // SAFETY: the tree is borrowed by the cursor: live and unchanged.
        let path = unsafe { Path::front(self.root(), self.memory(), Some(key)) };
        Cursor {
            tree: self,
            path,
            peeked: None,
            gap: Some(key),
        }
    }

    /// A cursor before the first entry.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, char> = [(10, 'a'), (20, 'b')].into_iter().collect();
    /// let mut c = m.cursor_front();
    /// assert_eq!(c.peek_prev(), None);
    /// assert_eq!(c.next(), Some((10, &'a')));
    /// assert_eq!(c.next(), Some((20, &'b')));
    /// assert_eq!(c.next(), None);
    /// ```
    pub fn cursor_front(&self) -> Cursor<'_, C> {
        self.cursor_at(C::Key::MIN)
    }
}

impl<'a, C: Config> Cursor<'a, C> {
    fn value(
        &self,
        found: Option<(C::Key, NonNull<SlotOf<C>>)>,
    ) -> Option<(C::Key, &'a ValueOf<C>)> {
        // SAFETY: the tree is borrowed for 'a: the slot is live.
        found.map(|(key, slot)| (key, unsafe { LayoutOf::<C>::get(slot, self.tree.memory()) }))
    }

    /// The entry after the gap, without moving.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, char> = [(1, 'a'), (2, 'b')].into_iter().collect();
    /// let mut c = m.cursor_front();
    /// assert_eq!(c.peek_next(), Some((1, &'a')));
    /// assert_eq!(c.peek_next(), Some((1, &'a'))); // the gap did not move
    /// c.seek(3);
    /// assert_eq!(c.peek_next(), None);
    /// ```
    pub fn peek_next(&mut self) -> Option<(C::Key, &'a ValueOf<C>)> {
        self.gap?;
        let tree = self.tree;
        let path = &mut self.path;
        // SAFETY: the tree is borrowed for 'a: live and unchanged.
        let found = *self
            .peeked
            .get_or_insert_with(|| unsafe { path.next(tree.memory()) });
        self.value(found)
    }

    /// The entry after the gap; the gap moves past it.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, u32> = (0..10).map(|k| (k * 10, k as u32)).collect();
    /// let mut c = m.cursor_at(65);
    /// let mut keys = Vec::new();
    /// while let Some((key, _)) = c.next() {
    ///     keys.push(key);
    /// }
    /// assert_eq!(keys, [70, 80, 90]);
    /// assert_eq!(c.peek_prev(), Some((90, &9))); // the gap is after the last entry
    /// ```
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<(C::Key, &'a ValueOf<C>)> {
        let entry = self.peek_next();
        if let Some((key, _)) = entry {
            self.peeked = None;
            self.gap = key.checked_next();
        }
        entry
    }

    /// The entry before the gap, without moving.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, char> = [(1, 'a'), (2, 'b')].into_iter().collect();
    /// let c = m.cursor_at(2);
    /// assert_eq!(c.peek_prev(), Some((1, &'a')));
    /// assert_eq!(c.peek_prev(), Some((1, &'a'))); // the gap did not move
    /// assert_eq!(m.cursor_front().peek_prev(), None);
    /// ```
    pub fn peek_prev(&self) -> Option<(C::Key, &'a ValueOf<C>)> {
        match self.gap {
            Some(gap) => self.tree.range(..gap).next_back(),
            None => self.tree.last_key_value(),
        }
    }

    /// The entry before the gap; the gap moves before it.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, char> = [(1, 'a'), (2, 'b'), (3, 'c')].into_iter().collect();
    /// let mut c = m.cursor_at(u64::MAX);
    /// assert_eq!(c.prev(), Some((3, &'c')));
    /// assert_eq!(c.prev(), Some((2, &'b')));
    /// assert_eq!(c.next(), Some((2, &'b'))); // the gap was just before 2
    /// ```
    pub fn prev(&mut self) -> Option<(C::Key, &'a ValueOf<C>)> {
        let entry = self.peek_prev();
        if let Some((key, _)) = entry {
            self.seek(key);
        }
        entry
    }

    /// Moves the gap to just before the first entry at or after `key`,
    /// in either direction. Cheap near the current position: only the
    /// levels below the lowest node covering both are searched again.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, u32> = (0..1000).map(|k| (k * 3, k as u32)).collect();
    /// let mut c = m.cursor_front();
    /// c.seek(100); // absent: the gap is before 102
    /// assert_eq!(c.peek_next(), Some((102, &34)));
    /// c.seek(10); // backwards works too
    /// assert_eq!(c.next(), Some((12, &4)));
    /// ```
    pub fn seek(&mut self, key: C::Key) {
        let tree = self.tree;
        // SAFETY: the tree is borrowed for 'a: live and unchanged.
        unsafe { self.path.reseek(tree.root(), tree.memory(), key) };
        self.peeked = None;
        self.gap = Some(key);
    }

    /// The value stored under `key`, moving the gap to just before `key`
    /// (or the entry after it): a lookup that, for keys probed in
    /// ascending order, starts from the cursor's position rather than the
    /// root.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, u32> = (0..1000).map(|k| (k * 3, k as u32)).collect();
    /// let mut c = m.cursor_front();
    /// let probes = [3, 4, 300, 2997];
    /// let hits: Vec<u32> = probes.iter().filter_map(|&k| c.seek_get(k).copied()).collect();
    /// assert_eq!(hits, [1, 100, 999]);
    /// ```
    pub fn seek_get(&mut self, key: C::Key) -> Option<&'a ValueOf<C>> {
        self.seek(key);
        match self.peek_next() {
            Some((k, value)) if k == key => Some(value),
            _ => None,
        }
    }
}

impl<C: Config> Clone for Cursor<'_, C> {
    fn clone(&self) -> Self {
        Self {
            tree: self.tree,
            path: self.path,
            peeked: self.peeked,
            gap: self.gap,
        }
    }
}

impl<C: Config> fmt::Debug for Cursor<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cursor")
            .field("gap_before", &self.gap)
            .finish()
    }
}
