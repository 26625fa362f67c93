//! Range values: one value standing for a whole aligned block of keys.
//!
//! A tree whose configuration turns on [`Config::RANGES`] may hold, in an
//! inner node's slot, a *range value* instead of a child: one value that
//! every key of the slot's subtree maps to. The block of keys a slot
//! covers is a [`Span`]: the `256^level` keys that agree on every chunk
//! above the lowest `level`. A slot of a node at shift 8 covers 256 keys
//! (a span of level 1), one at shift 16 covers 65,536 (level 2), and so
//! on up to the root's slots.
//!
//! Two users need them, and ask for the same thing:
//!
//! - a *TID bitmap* that passes its memory budget turns a page chunk into a
//!   lossy one: 256 pages whose exact offsets are given up for one value
//!   that marks them all for a recheck;
//! - a *TID store* of a table whose pages are all dead, or dead alike,
//!   holds one value per run of blocks with the same dead offsets instead
//!   of one per block (VAC-1's billion dead rows fit in a few nodes).
//!
//! ## How a range value is stored
//!
//! As a *cell*, the object lazy expansion stores a single key in: the
//! value's slot and the span's first key, side by side in the cell pool
//! ([`Pools::cell`](crate::config::Pools::cell)), the reference to it
//! tagged with bit 2 ([`NodePtr::lazy`]). A tree with ranges is
//! uncompressed (`Config::RANGES` requires compression `None`), so the
//! tag is free and means "range value" wherever it appears. A descent
//! tells a range from a child by that tag before it loads anything, and
//! the code that walks nodes (`walk_nodes`: `clear`, `clone`, `stats`,
//! `verify`) already visits cells without descending into them. A cell is
//! never the root: a range over every key a root holds is stored one
//! level up, in the slot of a new root.
//!
//! ## What each operation does with one
//!
//! | operation | a key under a range value |
//! |---|---|
//! | `get`, `contains_key` | the range's value |
//! | `insert` of the value the range holds | *absorbed*: nothing changes |
//! | `insert` of another value | the range *splits*: its node is built, a node256 whose 256 slots are ranges one level down (or, at the last level, values), copies of the range's value, down to the key's own slot |
//! | `remove` | the range splits down to the key, which is then removed |
//! | [`insert_span`](RawTree::insert_span) | the range's value is replaced |
//! | iteration, `range`, cursors | every key of the range, each with the range's value |
//! | [`spans`](RawTree::spans) | the range once, as its key interval |
//!
//! And the other way, a *merge*: when an insert leaves a full last-level
//! node whose values are all the same ([`Config::same_value`]), by adding
//! its 256th key or by replacing the one value that differed, the node
//! becomes one range value in its parent's slot; a parent whose 256 slots
//! are then ranges of one value merges in turn. Keys inserted in order therefore end as the fewest
//! aligned ranges that cover them: a run of blocks with identical values
//! costs a node or two at each end, not a slot per block.
//!
//! `len()` counts keys, a range's whole span included.
//!
//! ## In a shared area
//!
//! A split allocates a node256 and, above the last level, 255 cells, and
//! makes 255 copies of the value, out-of-line leaves for long values: on a
//! back end whose allocations can fail, half a split would leave a node
//! partly filled. So on such a back end `split_range` reserves the node and
//! cells, then makes the copies into a local array (a refused copy frees
//! those made), and only then changes the tree. An insert or a removal
//! whose split is refused below levels it already split merges those back
//! (`undo_splits`): a split changes how the keys are held, never what they
//! map to, so a refused write changes nothing a reader can see. A merge
//! that cannot get its cell or new root is left undone, which is only a
//! larger form of the same keys. [`insert_span`](RawTree::insert_span),
//! which stores a range directly, is offered on local trees only.
//!
//! ## What trees without ranges pay
//!
//! Nothing: every branch on a range value is behind the constant
//! `C::RANGES`, so the code of a tree without them is the code it had
//! before range values existed (callgrind counts RT-1's and RT-5's
//! lookups to the instruction). Operations that would need a range
//! value's key-by-key form to stay sound (mutable iteration, entries, the
//! node-by-node set operations, `split_off`, `append`, owned iteration)
//! are not offered on a tree with ranges: a call fails to compile once it
//! is built to code, with a message naming the limit, as `remove` on a
//! tree without delete does.

mod insert;
mod remove;

use core::fmt;
use core::ops::RangeInclusive;
use core::ptr::NonNull;

use crate::config::{Config, Pools, RefOf};
use crate::key::{Key, SPAN};
use crate::mem::Memory;
use crate::node::lazy;
use crate::ptr::NodePtr;
use crate::value::{MutableLayout, ValueLayout};

use super::{LayoutOf, RawTree, SlotOf, ValueOf, find_child, find_value_slot, follow};

/// An aligned block of keys: the `256^level` keys that agree with
/// [`start`](Span::start) on every chunk above the lowest `level` ones.
/// Level 0 is a single key.
///
/// A range value ([`RawTree::insert_span`]) covers one; the
/// [`spans`](RawTree::spans) of a tree are its keys and ranges in order.
///
/// ```
/// use radix_core::Span;
///
/// let chunk = Span::<u32>::new(512, 1)?; // keys 512..=767
/// assert_eq!(chunk.last(), 767);
/// assert!(chunk.contains(700) && !chunk.contains(768));
/// assert_eq!(Span::<u32>::containing(700, 1)?, chunk);
/// assert_eq!(chunk.key_count(), 256);
/// assert!(Span::<u32>::new(513, 1).is_err()); // not aligned
/// # Ok::<(), radix_core::SpanError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Span<K> {
    start: K,
    level: u8,
}

/// Why a [`Span`] could not be made, or a range value not stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpanError {
    /// The first key has bits set below the span's lowest chunk.
    #[error("span start {start} is not aligned to a block of 256^{level} keys")]
    Misaligned {
        /// The first key asked for, as an integer.
        start: u128,
        /// The level asked for.
        level: u32,
    },
    /// The key type has too few chunks for a span of this level: the
    /// widest span is one level below the key's width in bytes (a slot of
    /// the highest root).
    #[error("a span of level {level} needs keys wider than {bits} bits")]
    TooWide {
        /// The level asked for.
        level: u32,
        /// The key type's width.
        bits: u32,
    },
    /// The tree would hold more keys than `usize` counts.
    #[error("the tree would hold more than usize::MAX keys")]
    TooManyKeys,
}

impl<K: Key> Span<K> {
    /// The widest level: a slot of the highest root, one chunk below the
    /// key's top.
    pub const MAX_LEVEL: u32 = K::BITS / SPAN - 1;

    /// The span of `level` starting at `start`.
    ///
    /// # Errors
    ///
    /// [`SpanError::TooWide`] if the key type has no slot covering such a
    /// span, [`SpanError::Misaligned`] if `start` has a bit set in its
    /// lowest `level` chunks.
    pub fn new(start: K, level: u32) -> Result<Self, SpanError> {
        let span = Self::containing(start, level)?;
        if span.start != start {
            return Err(SpanError::Misaligned {
                start: start.to_u128(),
                level,
            });
        }
        Ok(span)
    }

    /// The span of `level` that holds `key`.
    ///
    /// # Errors
    ///
    /// [`SpanError::TooWide`] if the key type has no slot covering such a
    /// span.
    pub fn containing(key: K, level: u32) -> Result<Self, SpanError> {
        if level > Self::MAX_LEVEL {
            return Err(SpanError::TooWide {
                level,
                bits: K::BITS,
            });
        }
        let start = if level == 0 {
            key
        } else {
            key.clear_below(Self::cover_shift(level))
        };
        Ok(Self {
            start,
            level: level as u8,
        })
    }

    /// The span of one key.
    pub fn key(key: K) -> Self {
        Self {
            start: key,
            level: 0,
        }
    }

    /// The span a range value covers in a slot of a node at `shift`.
    pub(crate) fn of_slot(key: K, shift: u32) -> Self {
        debug_assert!(shift >= SPAN && shift.is_multiple_of(SPAN));
        Self {
            start: key.clear_below(shift - SPAN),
            level: (shift / SPAN) as u8,
        }
    }

    /// The shift of the node a span of `level` (at least 1) stands in for:
    /// its keys vary in the chunks at and below it.
    const fn cover_shift(level: u32) -> u32 {
        (level - 1) * SPAN
    }

    /// The first key.
    pub fn start(self) -> K {
        self.start
    }

    /// The last key.
    pub fn last(self) -> K {
        if self.level == 0 {
            self.start
        } else {
            self.start.fill_below(Self::cover_shift(self.level as u32))
        }
    }

    /// The level: the span holds `256^level` keys.
    pub fn level(self) -> u32 {
        self.level as u32
    }

    /// The keys, as an inclusive range.
    pub fn keys(self) -> RangeInclusive<K> {
        self.start..=self.last()
    }

    /// How many keys the span holds.
    pub fn key_count(self) -> u128 {
        1u128 << (SPAN * self.level as u32)
    }

    /// Whether `key` lies in the span.
    pub fn contains(self, key: K) -> bool {
        self.start <= key && key <= self.last()
    }
}

impl<K: Key> fmt::Debug for Span<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Span({:?}..={:?})", self.start, self.last())
    }
}

/// A value slot and the span its value covers.
pub(crate) type SlotAndSpan<C> = (NonNull<SlotOf<C>>, Span<<C as Config>::Key>);

/// The key count of a span at cover shift `shift` (the shift of the node it
/// stands in for) as a `usize`, if it fits.
pub(crate) fn keys_below(shift: u32) -> Option<usize> {
    1usize.checked_shl(shift + SPAN)
}

impl<C: Config> RawTree<C> {
    /// The slot holding `key`'s value in a tree with ranges, and the span
    /// that value covers: the key alone, or the range it lies under.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn find_ranged(&self, key: C::Key) -> Option<SlotAndSpan<C>> {
        let mut node = follow::<C>(&self.mem, self.root?);
        if key.above(self.root_shift) {
            return None;
        }
        let mut shift = self.root_shift;
        while shift > 0 {
            // SAFETY: `node` is a live inner node at `shift` on `key`'s path.
            let child = unsafe { find_child(&self.mem, node, key.chunk(shift))? };
            if child.is_lazy() {
                // SAFETY: a tagged child of a tree with ranges is a live
                // range cell.
                let slot = unsafe { lazy::slot::<SlotOf<C>>(child.addr()) };
                return Some((slot, Span::of_slot(key, shift)));
            }
            node = child;
            shift -= SPAN;
        }
        // SAFETY: `node` is a live last-level node.
        unsafe { find_value_slot::<C>(node, key.chunk(0)) }.map(|slot| (slot, Span::key(key)))
    }

    /// The value for `key` and the span it was stored for: `key` alone, or
    /// the range value `key` lies under. In a tree without ranges every
    /// span is a single key.
    ///
    /// ```
    /// radix_core::radix_tree! {
    ///     /// Block to a flag, with ranges of blocks.
    ///     struct Blocks { key: u32, value: u8, ranges: true }
    /// }
    /// use radix_core::Span;
    ///
    /// let mut t = Blocks::new();
    /// t.insert_span(Span::new(256, 1)?, 7)?;
    /// t.insert(5, 1);
    /// assert_eq!(t.get_span(300), Some((Span::new(256, 1)?, &7)));
    /// assert_eq!(t.get_span(5), Some((Span::key(5), &1)));
    /// assert_eq!(t.get_span(6), None);
    /// # Ok::<(), radix_core::SpanError>(())
    /// ```
    #[inline]
    pub fn get_span(&self, key: C::Key) -> Option<(Span<C::Key>, &ValueOf<C>)> {
        let (slot, span) = if C::RANGES {
            self.find_ranged(key)?
        } else {
            (self.find(key)?, Span::key(key))
        };
        // SAFETY: the slot is live while `self` is borrowed.
        Some((span, unsafe { LayoutOf::<C>::get(slot, &self.mem) }))
    }

    /// The value for `key`, mutably, and the span it was stored for: a
    /// change to a range value changes it for every key of its span. (To
    /// change one key's value alone, [`insert`](RawTree::insert) it: the
    /// range splits.)
    ///
    /// ```
    /// radix_core::radix_tree! {
    ///     struct Blocks { key: u32, value: u8, ranges: true }
    /// }
    /// use radix_core::Span;
    ///
    /// let mut t = Blocks::new();
    /// t.insert_span(Span::new(0, 1)?, 7)?;
    /// if let Some((span, value)) = t.get_span_mut(9) {
    ///     assert_eq!(span.level(), 1);
    ///     *value = 8;
    /// }
    /// assert_eq!(t.get(200), Some(&8));
    /// # Ok::<(), radix_core::SpanError>(())
    /// ```
    #[inline]
    pub fn get_span_mut(&mut self, key: C::Key) -> Option<(Span<C::Key>, &mut ValueOf<C>)>
    where
        C::Layout: MutableLayout,
    {
        let (slot, span) = if C::RANGES {
            self.find_ranged(key)?
        } else {
            (self.find(key)?, Span::key(key))
        };
        // SAFETY: the slot is live and exclusively borrowed with `self`.
        Some((span, unsafe { LayoutOf::<C>::get_mut(slot, &self.mem) }))
    }

    /// A range cell holding `slot` for the span starting at `first`.
    pub(super) fn new_cell(mem: &mut C::Memory, first: C::Key, slot: SlotOf<C>) -> NodePtr {
        let raw = mem.alloc_node(Pools::<C>::cell());
        // SAFETY: a fresh object of the cell pool, sized and aligned for a
        // slot and a key.
        unsafe { lazy::init::<C::Key, SlotOf<C>>(raw, first, slot) };
        NodePtr::lazy(raw)
    }

    /// Frees a range cell whose slot value was moved out or dropped.
    ///
    /// # Safety
    ///
    /// `cell` is a live range cell of this tree's memory, not used again.
    pub(super) unsafe fn free_cell(mem: &mut C::Memory, cell: NodePtr) {
        // SAFETY: the caller's contract; cells come from the cell pool.
        unsafe { mem.free_node(Pools::<C>::cell(), cell.addr()) };
    }

    /// The stored reference to a range cell.
    pub(super) fn cell_ref(mem: &C::Memory, cell: NodePtr) -> RefOf<C> {
        super::stored(mem, cell)
    }
}

/// A compile-time refusal of an operation that a tree with range values
/// does not offer, naming it.
macro_rules! refuse_ranges {
    ($C:ty, $what:literal) => {
        const {
            assert!(
                !<$C as $crate::Config>::RANGES,
                concat!(
                    "`",
                    $what,
                    "` is not offered on a tree with range values (`ranges: true`): ",
                    "a range value stands for many keys at once"
                )
            )
        }
    };
}
pub(crate) use refuse_ranges;

#[cfg(test)]
mod tests;
