//! [`Spans`]: a tree's keys and range values in ascending order, each
//! range value once, as the interval of keys it covers.

use core::fmt;
use core::iter::FusedIterator;
use core::ops::{RangeBounds, RangeInclusive};

use super::walk::{Path, inclusive};
use crate::config::Config;
use crate::raw::{LayoutOf, RawTree, ValueOf};
use crate::value::ValueLayout;

/// An iterator over a tree's values in ascending key order, a range value
/// once for its whole span: each item is an inclusive interval of keys and
/// the value every key in it maps to. A key of its own is an interval of
/// one key. Made by [`RawTree::spans`] and [`RawTree::spans_range`], which
/// clips the first and last interval to its bounds.
///
/// ```
/// radix_core::radix_tree! {
///     struct Blocks { key: u32, value: char, ranges: true }
/// }
/// use radix_core::Span;
///
/// let mut t = Blocks::new();
/// t.insert(1, 'a');
/// t.insert_span(Span::new(256, 1)?, 'b')?;
/// t.insert(600, 'c');
/// let spans: Vec<_> = t.spans().collect();
/// assert_eq!(spans, [(1..=1, &'a'), (256..=511, &'b'), (600..=600, &'c')]);
/// let clipped: Vec<_> = t.spans_range(300..=599).collect();
/// assert_eq!(clipped, [(300..=511, &'b')]);
/// # Ok::<(), radix_core::SpanError>(())
/// ```
pub struct Spans<'a, C: Config> {
    tree: &'a RawTree<C>,
    path: Path<C>,
    /// The last key to produce; `None` once done.
    high: Option<C::Key>,
    /// The walk's interval, for [`seek`](Spans::seek); `None` if empty.
    bounds: Option<(C::Key, C::Key)>,
}

impl<'a, C: Config> Iterator for Spans<'a, C> {
    type Item = (RangeInclusive<C::Key>, &'a ValueOf<C>);

    // Always inlined, with the walk's step under it: as a call (the
    // compiler's choice under `#[inline]`), a walk of TS-1's 50,000
    // blocks took 0.37-0.41 ms, inlined 0.15-0.22 ms. The heap pass and
    // the TID bitmap's page walk are loops over this.
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let high = self.high?;
        // SAFETY: the tree is borrowed for 'a: live and unchanged.
        match unsafe { self.path.next_run::<true>(self.tree.memory()) } {
            Some((low, last, slot)) if low <= high => {
                if last >= high {
                    self.high = None;
                }
                // SAFETY: the slot is live while the tree is borrowed.
                let value = unsafe { LayoutOf::<C>::get(slot, self.tree.memory()) };
                Some((low..=last.min(high), value))
            }
            _ => {
                self.high = None;
                None
            }
        }
    }
}

impl<C: Config> Spans<'_, C> {
    /// Moves the walk to `key`, in either direction, within the interval
    /// it was made for: the next item is the interval holding `key`,
    /// clipped to start at it, or the first one after it. Cheap near the
    /// current position, as [`Cursor::seek`](crate::Cursor::seek) is: only
    /// the levels below the lowest node covering both are searched again.
    /// Walking two trees together, one of them seeking the other's keys,
    /// costs a node search or two a key where a lookup descends from the
    /// root.
    ///
    /// ```
    /// radix_core::radix_tree! {
    ///     struct Blocks { key: u32, value: char, ranges: true }
    /// }
    /// use radix_core::Span;
    ///
    /// let mut t = Blocks::new();
    /// t.insert(1, 'a');
    /// t.insert_span(Span::new(256, 1)?, 'b')?;
    /// t.insert(600, 'c');
    /// let mut spans = t.spans_range(..=599);
    /// spans.seek(300);
    /// assert_eq!(spans.next(), Some((300..=511, &'b')));
    /// spans.seek(0);
    /// assert_eq!(spans.next(), Some((1..=1, &'a')));
    /// spans.seek(512);
    /// assert_eq!(spans.next(), None); // 600 is outside the walk's interval
    /// # Ok::<(), radix_core::SpanError>(())
    /// ```
    pub fn seek(&mut self, key: C::Key) {
        let Some((low, high)) = self.bounds else {
            return;
        };
        if key > high {
            self.high = None;
            return;
        }
        let key = key.max(low);
        // SAFETY: the tree is borrowed for 'a: live and unchanged.
        unsafe { self.path.reseek(self.tree.root(), self.tree.memory(), key) };
        self.high = Some(high);
    }
}

impl<C: Config> FusedIterator for Spans<'_, C> {}

impl<C: Config> Clone for Spans<'_, C> {
    fn clone(&self) -> Self {
        Self {
            tree: self.tree,
            path: self.path,
            high: self.high,
            bounds: self.bounds,
        }
    }
}

impl<C: Config> fmt::Debug for Spans<'_, C>
where
    ValueOf<C>: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

impl<C: Config> RawTree<C> {
    /// The tree's values in ascending key order, each range value once with
    /// the interval of keys it covers, each other key as an interval of one
    /// ([`Spans`]). Over a tree without range values it is
    /// [`iter`](RawTree::iter) with intervals for keys.
    pub fn spans(&self) -> Spans<'_, C> {
        self.spans_range(..)
    }

    /// [`spans`](RawTree::spans) of the keys in `range`: an interval that
    /// crosses a bound is clipped to it. A range whose start lies after
    /// its end is empty.
    pub fn spans_range<R: RangeBounds<C::Key>>(&self, range: R) -> Spans<'_, C> {
        let bounds = if self.is_empty() {
            None
        } else {
            inclusive(range)
        };
        let low = bounds.map(|(low, _)| low);
        Spans {
            tree: self,
            // SAFETY: the tree is borrowed by the iterator: live and
            // unchanged.
            path: unsafe { Path::front(self.root(), self.memory(), low) },
            high: bounds.map(|(_, high)| high),
            bounds,
        }
    }
}
