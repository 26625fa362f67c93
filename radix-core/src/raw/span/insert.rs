//! Inserting into a tree with ranges: a key under a range is absorbed or
//! splits it, a last-level node filled with one value merges into a range,
//! and [`RawTree::insert_span`] stores a range value over a whole span.

use core::mem::MaybeUninit;
use core::ptr::NonNull;

use crate::config::{Config, Pools, RefOf};
use crate::key::{Key, SPAN};
use crate::mem::{InfallibleMemory, Memory};
use crate::node::{self, Kind, lazy};
use crate::ptr::NodePtr;
use crate::value::{DropsAll, ValueLayout};

use super::super::insert::PathEnd;
use super::super::reserve::Needs;
use super::super::{
    InputOf, InsertHint, LayoutOf, MAX_LEVELS, MemError, OldOf, RawTree, SlotOf, ValueOf, entry_at,
    find_slot, follow, insert_entry, remove_entry, stored, walk_nodes,
};
use super::{Span, SpanError, keys_below};

/// The node256 class: every configuration's last.
fn full_class<C: Config>() -> usize {
    C::SIZE_CLASSES.len() - 1
}

impl<C: Config> RawTree<C>
where
    C::Memory: InfallibleMemory,
{
    /// Stores `value` as a *range value* for every key of `span`: what
    /// the span held before (keys and narrower ranges) is dropped, and a
    /// wider range holding the same value absorbs it. Returns how many of
    /// the span's keys had a value before. A span of level 0 is one key,
    /// stored as [`insert`](RawTree::insert) stores it.
    ///
    /// Only trees with ranges (`ranges: true`) have range values; on any
    /// other tree a call fails to compile once it is built to code. A tree
    /// with them does not offer what would hand out one range value as
    /// many keys' own (mutable and owning iteration, entries, `get_mut`,
    /// ...): those fail to compile in the same way.
    ///
    /// ```compile_fail
    /// radix_core::radix_tree! {
    ///     struct Pages { key: u32, value: u8, ranges: true }
    /// }
    /// let mut t = Pages::new();
    /// for (_, v) in t.iter_mut() {
    ///     *v += 1; // `iter_mut` is not offered on a tree with range values
    /// }
    /// ```
    ///
    /// ```
    /// radix_core::radix_tree! {
    ///     /// Page to visibility, with runs of pages stored once.
    ///     struct Pages { key: u32, value: u8, ranges: true }
    /// }
    /// use radix_core::Span;
    ///
    /// let mut t = Pages::new();
    /// t.insert(3, 1);
    /// // Pages 0..=255 all get 2; page 3's own value goes.
    /// assert_eq!(t.insert_span(Span::new(0, 1)?, 2)?, 1);
    /// assert_eq!(t.len(), 256);
    /// assert_eq!(t.get(3), Some(&2));
    /// // One page of the range changes: the range splits around it.
    /// t.insert(7, 5);
    /// assert_eq!((t.get(6), t.get(7), t.len()), (Some(&2), Some(&5), 256));
    /// # Ok::<(), radix_core::SpanError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`SpanError::TooManyKeys`] if the tree could hold more keys than
    /// `usize` counts; nothing changed.
    pub fn insert_span(
        &mut self,
        span: Span<C::Key>,
        value: InputOf<'_, C>,
    ) -> Result<usize, SpanError> {
        self.insert_span_with_old(span, value, |_, _| {})
    }

    /// [`insert_span`](Self::insert_span), first showing `old` every value
    /// it replaces with the keys that had it: a key, or a narrower or equal
    /// range, each with the span it was stored for. A wider range of the
    /// same value, which absorbs the span, is shown with `span` itself:
    /// its keys had that value.
    /// `old` runs before the tree changes, so a panic in it changes
    /// nothing.
    ///
    /// # Errors
    ///
    /// As for [`insert_span`](Self::insert_span).
    pub fn insert_span_with_old(
        &mut self,
        span: Span<C::Key>,
        value: InputOf<'_, C>,
        mut old: impl FnMut(Span<C::Key>, &ValueOf<C>),
    ) -> Result<usize, SpanError> {
        const {
            assert!(
                C::RANGES,
                "`insert_span` on a tree without range values (`ranges: true`)"
            )
        };
        if span.level() == 0 {
            let mut had = 0;
            self.insert_with_old(span.start(), value, |v| {
                had = 1;
                old(span, v);
            });
            return Ok(had);
        }
        let cover = (span.level() - 1) * SPAN;
        let span_keys = keys_below(cover).ok_or(SpanError::TooManyKeys)?;
        // Removed keys only lower the count: the sum bounds the result.
        self.len
            .checked_add(span_keys)
            .ok_or(SpanError::TooManyKeys)?;
        let Ok(slot_value) = LayoutOf::<C>::into_slot(value, &mut self.mem);
        let replaced = self.store_span(span, slot_value, &mut old);
        Ok(replaced)
    }

    /// Stores `slot_value` as the range value of `span` (level 1 or more;
    /// the tree's key count leaves room for the span): builds the path to
    /// the slot that covers it, splitting a wider range of another value on
    /// the way or giving up to a wider one of the same value, then replaces
    /// whatever the slot held. Returns how many of the span's keys had a
    /// value.
    fn store_span(
        &mut self,
        span: Span<C::Key>,
        slot_value: SlotOf<C>,
        old: &mut impl FnMut(Span<C::Key>, &ValueOf<C>),
    ) -> usize {
        let start = span.start();
        let cover = (span.level() - 1) * SPAN;
        let at = cover + SPAN;
        let span_keys = keys_below(cover).expect("checked by the caller");
        self.hint = InsertHint::NONE;
        match self.root {
            None => {
                let shift = start.root_shift().max(at);
                let cell = Self::new_cell(&mut self.mem, start, slot_value);
                let root = Self::range_chain(&mut self.mem, start, shift, at, cell);
                self.root = Some(stored(&self.mem, root));
                self.root_shift = shift;
                self.len = span_keys;
                self.merge_path(start, at);
                return 0;
            }
            Some(_) => {
                while self.root_shift < at || start.above(self.root_shift) {
                    self.add_level();
                }
            }
        }
        let mut loc = NonNull::from(self.root.as_mut().expect("non-empty tree"));
        let mut shift = self.root_shift;
        // SAFETY: `loc` always holds a live node reference on this memory,
        // on `start`'s path, at `shift` (at or above `at`).
        let replaced = unsafe {
            loop {
                let node = follow::<C>(&self.mem, loc.read());
                let chunk = start.chunk(shift);
                let child = find_slot::<RefOf<C>>(node, chunk);
                if shift == at {
                    break Self::replace_slot(
                        &mut self.mem,
                        loc,
                        node,
                        child,
                        span,
                        slot_value,
                        old,
                    );
                }
                let Some(child) = child else {
                    let cell = Self::new_cell(&mut self.mem, start, slot_value);
                    let below = Self::range_chain(&mut self.mem, start, shift - SPAN, at, cell);
                    let below = stored(&self.mem, below);
                    Self::add_child(&mut self.mem, loc, node, chunk, below, shift);
                    break 0;
                };
                let target = follow::<C>(&self.mem, child.read());
                if target.is_lazy() {
                    let range = lazy::slot::<SlotOf<C>>(target.addr());
                    let held = LayoutOf::<C>::get(range, &self.mem);
                    let new = LayoutOf::<C>::get(NonNull::from(&slot_value), &self.mem);
                    if C::same_value(held, new) {
                        old(span, held);
                        drop(LayoutOf::<C>::take(slot_value, &mut self.mem));
                        return span_keys;
                    }
                    let Ok(()) = Self::split_range(&mut self.mem, child, target, shift - SPAN);
                }
                loc = child;
                shift -= SPAN;
            }
        };
        self.len = self.len - replaced + span_keys;
        self.merge_path(start, at);
        replaced
    }
}

impl<C: Config> RawTree<C> {
    /// The insert of a tree with ranges ([`RawTree::try_insert_with_old`]
    /// hands over once the slot value is built): as the plain insert, but
    /// a key whose path meets a range value is absorbed by it (same value)
    /// or splits it down to the key's own slot, and a last-level node that
    /// the insert fills with one value merges into a range.
    pub(crate) fn insert_ranged(
        &mut self,
        key: C::Key,
        mut slot_value: SlotOf<C>,
        on_replace: impl FnOnce(&ValueOf<C>),
    ) -> Result<OldOf<C>, MemError<C>> {
        let prefix = key.clear_below(0);
        // The hint names the slot of a last-level node: a tree with ranges
        // clears it whenever it writes a range value, splits or merges, so
        // it is valid as it is for the plain insert.
        if let Some(loc) = self.hint.get(prefix) {
            // SAFETY: `loc` holds the live last-level node of `prefix`.
            let old =
                unsafe { Self::insert_at_leaf(&mut self.mem, loc, key, slot_value, on_replace)? };
            // SAFETY: as above; read before `self` is borrowed again.
            let count = unsafe { Self::count_at(&self.mem, loc) };
            return Ok(self.after_leaf_insert(key, count, old));
        }
        if self.root.is_none() {
            return self.insert_first(key, slot_value);
        }
        if key.above(self.root_shift) {
            slot_value = self.raise_root(key, slot_value)?;
        }
        let mut loc = NonNull::from(self.root.as_mut().expect("non-empty tree"));
        let mut shift = self.root_shift;
        let mut split = false;
        // SAFETY: `loc` always holds a live node reference on this memory
        // (the root field, then a child slot on the key's path).
        unsafe {
            while shift > 0 {
                let node = follow::<C>(&self.mem, loc.read());
                let Some(child) = find_slot::<RefOf<C>>(node, key.chunk(shift)) else {
                    self.hint = InsertHint::NONE;
                    let end = PathEnd { loc, node, shift };
                    Self::insert_below(&mut self.mem, end, key, slot_value)?;
                    self.len += 1;
                    return Ok(LayoutOf::<C>::absent());
                };
                let target = follow::<C>(&self.mem, child.read());
                if target.is_lazy() {
                    let range = lazy::slot::<SlotOf<C>>(target.addr());
                    let held = LayoutOf::<C>::get(range, &self.mem);
                    let new = LayoutOf::<C>::get(NonNull::from(&slot_value), &self.mem);
                    if C::same_value(held, new) {
                        on_replace(held);
                        return Ok(LayoutOf::<C>::take(slot_value, &mut self.mem));
                    }
                    self.hint = InsertHint::NONE;
                    if let Err(refused) =
                        Self::split_range(&mut self.mem, child, target, shift - SPAN)
                    {
                        self.undo_splits(key, split.then_some(shift));
                        return Err(refused);
                    }
                    split = true;
                }
                loc = child;
                shift -= SPAN;
            }
        }
        if self.root_shift > 0 && !split {
            self.hint = InsertHint { prefix, slot: loc };
        }
        // SAFETY: `loc` holds the key's live last-level node.
        let old = unsafe { Self::insert_at_leaf(&mut self.mem, loc, key, slot_value, on_replace)? };
        // SAFETY: as above; `loc` may be the root field, so it is read
        // before `self` is borrowed again.
        let count = unsafe { Self::count_at(&self.mem, loc) };
        let old = self.after_leaf_insert(key, count, old);
        if split {
            // As after a removal's split: a root raised for a range may
            // now hold only its node at chunk 0.
            self.drop_levels();
        }
        Ok(old)
    }

    /// After a split the back end refused, below others on `key`'s path
    /// that it allowed: merges the node256 of equal parts the lowest of
    /// those made (at `lowest`, if any), and each above it, so that the
    /// tree holds its keys as it did before. A merge above the last level
    /// allocates nothing.
    pub(super) fn undo_splits(&mut self, key: C::Key, lowest: Option<u32>) {
        if let Some(lowest) = lowest {
            self.merge_path(key, lowest);
            self.drop_levels();
        }
    }

    /// The entry count of the node held at `loc`.
    ///
    /// # Safety
    ///
    /// `loc` holds a live node of a tree on `mem`.
    unsafe fn count_at(mem: &C::Memory, loc: NonNull<RefOf<C>>) -> usize {
        // SAFETY: the caller's contract.
        unsafe { node::count(follow::<C>(mem, loc.read()).addr()) }
    }

    /// Counts an added key, and merges the last-level node it went into
    /// (which now holds `count` keys) if that is full of one value: after
    /// an add of its last key, or a replacement that made its values
    /// equal. Passes a replaced value's `Old` through. (A node whose
    /// values differ stops the comparison at the first that differs.)
    fn after_leaf_insert(&mut self, key: C::Key, count: usize, old: Option<OldOf<C>>) -> OldOf<C> {
        if old.is_none() {
            self.len += 1;
        }
        if count == 256 {
            self.merge_path(key, 0);
        }
        old.unwrap_or_else(LayoutOf::<C>::absent)
    }

    /// Replaces the range value `cell`, held at `loc` in place of a node at
    /// `shift`, with that node: a node256 whose 256 slots are ranges one
    /// level down (values, at the last level), each a copy of the range's
    /// value. The cell itself becomes the part at chunk 0, whose span
    /// starts where its own did.
    ///
    /// On a back end that can fail (a shared area), the nodes and cells are
    /// reserved and the 255 copies made before anything changes: a refusal
    /// leaves the tree as it was and frees what was copied. A split changes
    /// how the tree holds its keys, never what they map to, so a caller
    /// whose later step is refused has changed nothing a reader can see.
    ///
    /// If a copy panics (a user's `Clone`), the range is left as it was
    /// and the copies made so far leak.
    ///
    /// # Safety
    ///
    /// `loc` is a live slot holding `cell`, a range cell of this tree on
    /// `mem` standing in for a node at `shift`.
    pub(super) unsafe fn split_range(
        mem: &mut C::Memory,
        loc: NonNull<RefOf<C>>,
        cell: NodePtr,
        shift: u32,
    ) -> Result<(), MemError<C>> {
        if <C::Memory as Memory>::FALLIBLE {
            // SAFETY: forwarded contract.
            return unsafe { Self::split_range_reserved(mem, loc, cell, shift) };
        }
        // SAFETY: the caller's contract: a live cell holds a slot and the
        // span's first key; the new node256 has room for every chunk.
        unsafe {
            let range = lazy::slot::<SlotOf<C>>(cell.addr());
            let first = lazy::key::<C::Key, SlotOf<C>>(cell.addr());
            let node = Self::new_node(mem, full_class::<C>(), shift, first);
            for chunk in 1..=255u8 {
                let copy = C::clone_value_slot(range, mem)?;
                Self::add_part(mem, node, shift, first, chunk, copy);
            }
            Self::finish_split(mem, loc, cell, node, shift);
        }
        Ok(())
    }

    /// [`split_range`](Self::split_range) on a back end that can fail:
    /// everything it allocates is reserved or made before the tree changes.
    ///
    /// # Safety
    ///
    /// As for [`split_range`](Self::split_range).
    #[cold]
    unsafe fn split_range_reserved(
        mem: &mut C::Memory,
        loc: NonNull<RefOf<C>>,
        cell: NodePtr,
        shift: u32,
    ) -> Result<(), MemError<C>> {
        let mut needs = Needs::NONE;
        needs.add(Pools::<C>::at(full_class::<C>(), shift), 1);
        if shift > 0 {
            needs.add(Pools::<C>::cell(), 255);
        }
        needs.reserve(mem)?;
        // Each copy, made on `mem`, is linked into the new node or, on a
        // refusal, dropped once; the reserved node and cells cannot fail.
        let mut copies = [const { MaybeUninit::<SlotOf<C>>::uninit() }; 255];
        // SAFETY: the caller's contract: a live cell holds a slot and the
        // span's first key; copies are read once each, as said above.
        unsafe {
            let range = lazy::slot::<SlotOf<C>>(cell.addr());
            for made in 0..copies.len() {
                match C::clone_value_slot(range, mem) {
                    Ok(copy) => {
                        copies[made].write(copy);
                    }
                    Err(refused) => {
                        for copy in &copies[..made] {
                            drop(LayoutOf::<C>::take(copy.assume_init_read(), mem));
                        }
                        return Err(refused);
                    }
                }
            }
            let first = lazy::key::<C::Key, SlotOf<C>>(cell.addr());
            let node = Self::new_node(mem, full_class::<C>(), shift, first);
            for (chunk, copy) in (1..=255u8).zip(&copies) {
                Self::add_part(mem, node, shift, first, chunk, copy.assume_init_read());
            }
            Self::finish_split(mem, loc, cell, node, shift);
        }
        Ok(())
    }

    /// Puts `copy` in the new node256 `node` of a split at `chunk`: as a
    /// value at the last level, as a range cell above it.
    ///
    /// # Safety
    ///
    /// `node` is a fresh node256 at `shift` whose keys start at `first`,
    /// without `chunk`; `copy` was made on `mem`.
    unsafe fn add_part(
        mem: &mut C::Memory,
        node: NodePtr,
        shift: u32,
        first: C::Key,
        chunk: u8,
        copy: SlotOf<C>,
    ) {
        // SAFETY: the caller's contract; a node256 has room for every chunk.
        unsafe {
            if shift == 0 {
                insert_entry(node, chunk, copy);
            } else {
                let part = Self::new_cell(mem, first.with_chunk(shift, chunk), copy);
                insert_entry(node, chunk, Self::cell_ref(mem, part));
            }
        }
    }

    /// Ends a split: the range's own value (or its cell) becomes the part
    /// at chunk 0, and `node` replaces the cell at `loc`.
    ///
    /// # Safety
    ///
    /// As for [`split_range`](Self::split_range); `node` holds every other
    /// part.
    unsafe fn finish_split(
        mem: &mut C::Memory,
        loc: NonNull<RefOf<C>>,
        cell: NodePtr,
        node: NodePtr,
        shift: u32,
    ) {
        // SAFETY: the caller's contract.
        unsafe {
            if shift == 0 {
                let range = lazy::slot::<SlotOf<C>>(cell.addr());
                insert_entry(node, 0, range.read());
                Self::free_cell(mem, cell);
            } else {
                insert_entry(node, 0, Self::cell_ref(mem, cell));
            }
            loc.write(stored(mem, node));
        }
    }

    /// Merges, bottom-up along `key`'s path, every full node of one value:
    /// first the node at `bottom` (a last-level node, or the node holding a
    /// range just stored), then each parent the merge leaves full of
    /// ranges of that value. A full root merges into a range in the slot
    /// of a new root above it.
    pub(super) fn merge_path(&mut self, key: C::Key, bottom: u32) {
        let mut path = [MaybeUninit::<NonNull<RefOf<C>>>::uninit(); MAX_LEVELS];
        let mut loc = NonNull::from(self.root.as_mut().expect("non-empty tree"));
        let mut shift = self.root_shift;
        let mut depth = 0;
        // The key's path from the root down to `bottom` exists and holds
        // nodes: the caller just stored there.
        // SAFETY: that path is live; locations are used bottom-up, each
        // before its parent changes, and a merge writes only the slot above.
        unsafe {
            loop {
                path[depth % MAX_LEVELS].write(loc);
                if shift == bottom {
                    break;
                }
                let node = follow::<C>(&self.mem, loc.read());
                loc = find_slot::<RefOf<C>>(node, key.chunk(shift)).expect("the key's path");
                shift -= SPAN;
                depth += 1;
            }
            let mut level = depth;
            let mut shift = bottom;
            loop {
                let loc = path[level % MAX_LEVELS].assume_init();
                let node = follow::<C>(&self.mem, loc.read());
                if !Self::holds_one_value(&self.mem, node, shift) {
                    return;
                }
                if <C::Memory as Memory>::FALLIBLE {
                    // A merge is only a smaller form of the same keys: one
                    // the back end cannot make room for is left undone.
                    let mut needs = Needs::NONE;
                    if shift == 0 {
                        needs.add(Pools::<C>::cell(), 1);
                    }
                    if level == 0 {
                        needs.add(Pools::<C>::inner(0), 1);
                    }
                    if needs.reserve(&mut self.mem).is_err() {
                        return;
                    }
                }
                self.hint = InsertHint::NONE;
                let first = key.clear_below(shift);
                if level == 0 {
                    // The root: its range goes into a new root's slot 0.
                    self.add_level();
                    let root = follow::<C>(&self.mem, self.root.expect("non-empty tree"));
                    let slot = find_slot::<RefOf<C>>(root, 0).expect("the old root");
                    Self::merge_node(&mut self.mem, slot, node, shift, first);
                    return;
                }
                Self::merge_node(&mut self.mem, loc, node, shift, first);
                level -= 1;
                shift += SPAN;
            }
        }
    }

    /// Whether `node`, at `shift`, is full of one value: 256 values, or
    /// 256 ranges, all the same ([`Config::same_value`]).
    ///
    /// # Safety
    ///
    /// `node` is a live node of this tree on `mem`.
    unsafe fn holds_one_value(mem: &C::Memory, node: NodePtr, shift: u32) -> bool {
        if node.kind() != Kind::N256 {
            return false;
        }
        // SAFETY: the caller's contract; a node256 indexes slots by chunk.
        // A `NONNULL_SLOT` layout's slot is one initialised word
        // (`ValueLayout::NONNULL_SLOT`), so reading it as one is sound.
        unsafe {
            if node::count(node.addr()) != 256 {
                return false;
            }
            let slot_of = |chunk: u8| -> Option<NonNull<SlotOf<C>>> {
                if shift == 0 {
                    find_slot::<SlotOf<C>>(node, chunk)
                } else {
                    let child = follow::<C>(mem, find_slot::<RefOf<C>>(node, chunk)?.read());
                    child
                        .is_lazy()
                        .then(|| lazy::slot::<SlotOf<C>>(child.addr()))
                }
            };
            let Some(first) = slot_of(0) else {
                return false;
            };
            // A layout whose slots are whole words (embedded varlen
            // values, leaf pointers) may compare the words first: equal
            // words are the same value, and a run of embedded entries
            // (a fully dead table's) needs nothing more.
            let word = |s: NonNull<SlotOf<C>>| s.cast::<usize>().read();
            let first_word = LayoutOf::<C>::NONNULL_SLOT.then(|| word(first));
            let first_value = LayoutOf::<C>::get(first, mem);
            (1..=255u8).all(|chunk| {
                slot_of(chunk).is_some_and(|s| {
                    first_word.is_some_and(|w| w == word(s))
                        || C::same_value(first_value, LayoutOf::<C>::get(s, mem))
                })
            })
        }
    }

    /// Replaces the full node of one value `node`, at `shift` and held at
    /// `loc`, with one range value: its chunk-0 value (or range cell)
    /// stays, the other 255 are dropped, and the node is freed.
    ///
    /// # Safety
    ///
    /// `loc` holds `node`, a live node256 of this tree on `mem` for which
    /// [`holds_one_value`](Self::holds_one_value) is true; its keys start
    /// at `first`.
    unsafe fn merge_node(
        mem: &mut C::Memory,
        loc: NonNull<RefOf<C>>,
        node: NodePtr,
        shift: u32,
        first: C::Key,
    ) {
        let mut drops = DropsAll::new();
        // SAFETY: the caller's contract. The range is linked first, so the
        // tree is whole before any value is dropped; the node's other
        // entries are then dropped once each and the node freed.
        unsafe {
            let cell = if shift == 0 {
                let kept = remove_entry::<SlotOf<C>>(node, 0).expect("a full node");
                Self::new_cell(mem, first, kept)
            } else {
                let kept = remove_entry::<RefOf<C>>(node, 0).expect("a full node");
                follow::<C>(mem, kept)
            };
            loc.write(Self::cell_ref(mem, cell));
            for chunk in 1..=255u8 {
                if shift == 0 {
                    let slot = remove_entry::<SlotOf<C>>(node, chunk).expect("a full node");
                    drops.drop_one(|| drop(LayoutOf::<C>::take(slot, mem)));
                } else {
                    let part = remove_entry::<RefOf<C>>(node, chunk).expect("a full node");
                    let part = follow::<C>(mem, part);
                    let slot = lazy::slot::<SlotOf<C>>(part.addr());
                    drops.drop_one(|| LayoutOf::<C>::drop_slot(slot, mem));
                    Self::free_cell(mem, part);
                }
            }
            Self::free_node(mem, node, shift);
        }
        drops.finish();
    }

    /// Stores the range `slot_value` of `span` in `node` (at the span's
    /// slot shift, held at `loc`), whose slot for the span's chunk is
    /// `child`: added, or replacing the range or the subtree there. Shows
    /// `old` what is replaced before anything changes; returns how many
    /// keys had a value.
    ///
    /// # Safety
    ///
    /// `loc` holds `node`, a live inner node of this tree on the span's
    /// path; `child` is its slot for the span's chunk, if it has one.
    unsafe fn replace_slot(
        mem: &mut C::Memory,
        loc: NonNull<RefOf<C>>,
        node: NodePtr,
        child: Option<NonNull<RefOf<C>>>,
        span: Span<C::Key>,
        slot_value: SlotOf<C>,
        old: &mut impl FnMut(Span<C::Key>, &ValueOf<C>),
    ) -> usize {
        let start = span.start();
        let at = span.level() * SPAN;
        // SAFETY: the caller's contract.
        unsafe {
            let Some(child) = child else {
                let cell = Self::new_cell(mem, start, slot_value);
                let cell = Self::cell_ref(mem, cell);
                Self::add_child(mem, loc, node, start.chunk(at), cell, at);
                return 0;
            };
            let target = follow::<C>(mem, child.read());
            if target.is_lazy() {
                let range = lazy::slot::<SlotOf<C>>(target.addr());
                old(span, LayoutOf::<C>::get(range, mem));
                let previous = range.read();
                range.write(slot_value);
                drop(LayoutOf::<C>::take(previous, mem));
                return keys_below(at - SPAN).expect("checked by the caller");
            }
            // Shown and counted first; then the range is linked, and only
            // then is the subtree freed. The walk starts at the subtree, so
            // its keys hold the chunks below the slot; the span's start
            // gives those above.
            let mut count = 0;
            let below = at - SPAN;
            walk_nodes::<C, _>(&mut &*mem, target, below, |mem, visit| {
                let (node, shift) = (visit.node, visit.shift);
                let path_key = under(start, visit.path_key, below);
                if node.is_lazy() {
                    let slot = lazy::slot::<SlotOf<C>>(node.addr());
                    old(
                        Span::of_slot(path_key, shift + SPAN),
                        LayoutOf::<C>::get(slot, *mem),
                    );
                    count += keys_below(shift).expect("a range within the span");
                } else if shift == 0 {
                    let mut pos = 0;
                    while let Some(e) = entry_at::<SlotOf<C>>(node, pos) {
                        let key = path_key.with_chunk(0, e.chunk);
                        old(Span::key(key), LayoutOf::<C>::get(e.slot, *mem));
                        count += 1;
                        pos = e.next;
                    }
                }
            });
            let cell = Self::new_cell(mem, start, slot_value);
            child.write(Self::cell_ref(mem, cell));
            Self::free_subtree(mem, target, at - SPAN);
            count
        }
    }

    /// A chain of single-child nodes on `key`'s path from `from` down to
    /// `to`, the last holding `cell` at the key's chunk. Returns its top.
    fn range_chain(mem: &mut C::Memory, key: C::Key, from: u32, to: u32, cell: NodePtr) -> NodePtr {
        let mut child = Self::cell_ref(mem, cell);
        let mut shift = to;
        loop {
            let node = Self::new_node(mem, 0, shift, key);
            // SAFETY: a fresh node has room for one entry.
            unsafe { insert_entry(node, key.chunk(shift), child) };
            if shift == from {
                return node;
            }
            child = stored(mem, node);
            shift += SPAN;
        }
    }

    /// Frees the detached subtree `node` at `shift`: drops every value and
    /// range in it and frees its nodes, children before parents.
    ///
    /// # Safety
    ///
    /// `node` is a live node of a tree on `mem` that nothing refers to any
    /// more.
    unsafe fn free_subtree(mem: &mut C::Memory, node: NodePtr, shift: u32) {
        let mut drops = DropsAll::new();
        let mut stack = [(node, 0u16, shift); MAX_LEVELS];
        let mut depth = 1;
        // SAFETY: the caller's contract: every node below is live and
        // reached once; a node is freed after its entries.
        unsafe {
            while depth > 0 {
                let (node, pos, shift) = stack[depth - 1];
                if shift == 0 {
                    let mut pos = 0;
                    while let Some(e) = entry_at::<SlotOf<C>>(node, pos) {
                        drops.drop_one(|| LayoutOf::<C>::drop_slot(e.slot, mem));
                        pos = e.next;
                    }
                    Self::free_node(mem, node, 0);
                    depth -= 1;
                    continue;
                }
                match entry_at::<RefOf<C>>(node, pos) {
                    Some(e) => {
                        stack[depth - 1].1 = e.next;
                        let child = follow::<C>(mem, e.slot.read());
                        if child.is_lazy() {
                            let slot = lazy::slot::<SlotOf<C>>(child.addr());
                            drops.drop_one(|| LayoutOf::<C>::drop_slot(slot, mem));
                            Self::free_cell(mem, child);
                        } else {
                            stack[depth] = (child, 0, shift - SPAN);
                            depth += 1;
                        }
                    }
                    None => {
                        Self::free_node(mem, node, shift);
                        depth -= 1;
                    }
                }
            }
        }
        drops.finish();
    }
}

/// The key with `high`'s chunks above `shift` and `low`'s at and below it:
/// a key a walk of a subtree at `shift` found, `low`, put back under the
/// path `high` leads to the subtree by.
fn under<K: Key>(high: K, low: K, shift: u32) -> K {
    let mut key = high.clear_below(shift);
    let mut at = 0;
    while at <= shift {
        key = key.with_chunk(at, low.chunk(at));
        at += SPAN;
    }
    key
}
