//! Inserts and upserts: lock the node that changes, or its parent too when
//! it must be replaced.

use super::layout::ConcurrentLayout;
use super::node::{Entries, Kind, NodeRef};
use super::reclaim::Pin;
use super::space::{Space, infallible};
use super::sync::Ordering;
use super::{Attempt, ConcurrentTree, InputOf, OldOf, Parent, ValueOf};
use crate::config::Config;
use crate::key::{Key, SPAN};

impl<C: Config> ConcurrentTree<C>
where
    C::Layout: ConcurrentLayout,
{
    /// Inserts `value` under `key` and returns the value it replaced.
    ///
    /// ```
    /// radix_core::radix_tree! {
    ///     pub struct Ids { key: u64, value: u32, concurrency: rowex }
    /// }
    /// let ids = Ids::new();
    /// assert_eq!(ids.insert(5, 1), None);
    /// assert_eq!(ids.insert(5, 2), Some(1));
    /// assert_eq!(ids.get(5), Some(2));
    /// ```
    pub fn insert(&self, key: C::Key, value: InputOf<'_, C>) -> OldOf<C> {
        self.update_or_insert(key, |_| value)
    }

    /// Stores `f(old)` under `key`, where `old` is the present value if
    /// there is one, and returns the value it replaced: an upsert that no
    /// other writer can interleave with.
    ///
    /// `f` runs once, while the writer holds the lock of the node where
    /// `key` lives. It must not write to this tree, which could wait for
    /// that lock. Readers go on meanwhile; if `f` panics, nothing changes.
    ///
    /// ```
    /// radix_core::radix_tree! {
    ///     pub struct Bits { key: u64, value: u64, concurrency: rowex }
    /// }
    /// let bits = Bits::new();
    /// for tid in [3u64, 5, 64 + 1] {
    ///     bits.update_or_insert(tid / 64, |old| old.copied().unwrap_or(0) | 1 << (tid % 64));
    /// }
    /// assert_eq!(bits.get(0), Some(0b101000));
    /// assert_eq!(bits.get(1), Some(0b10));
    /// ```
    pub fn update_or_insert<'i>(
        &self,
        key: C::Key,
        f: impl FnOnce(Option<&ValueOf<C>>) -> InputOf<'i, C>,
    ) -> OldOf<C> {
        infallible(self.upsert(key, f))
    }
}

impl<C: Config, S: Space> ConcurrentTree<C, S>
where
    C::Layout: ConcurrentLayout,
{
    /// [`update_or_insert`](ConcurrentTree::update_or_insert) in any
    /// space: fails, changing nothing, if the space has no room for what
    /// the write must build. (`f` may have run; its value is dropped.)
    pub(crate) fn upsert<'i>(
        &self,
        key: C::Key,
        f: impl FnOnce(Option<&ValueOf<C>>) -> InputOf<'i, C>,
    ) -> Result<OldOf<C>, S::Error> {
        self.check_poison()?;
        let pin = self.reclaimer.pin();
        // The closure is taken once, when an attempt commits.
        let mut make = Some(f);
        loop {
            if let Attempt::Done(old) = self.try_upsert(&pin, key, &mut make)? {
                return Ok(old);
            }
        }
    }

    /// Takes the caller's closure and makes the value to store.
    fn make<'i, F: FnOnce(Option<&ValueOf<C>>) -> InputOf<'i, C>>(
        make: &mut Option<F>,
        old: Option<&ValueOf<C>>,
    ) -> InputOf<'i, C> {
        let f = make.take().expect("a write commits once");
        f(old)
    }

    /// One attempt at an upsert.
    fn try_upsert<'i, F: FnOnce(Option<&ValueOf<C>>) -> InputOf<'i, C>>(
        &self,
        pin: &Pin<'_, S::Table>,
        key: C::Key,
        make: &mut Option<F>,
    ) -> Result<Attempt<OldOf<C>>, S::Error> {
        let mut parent = Parent::Root;
        let mut word = pin.load(self.root());
        let mut shift = 0;
        loop {
            if word.is_null() {
                // Only the root slot is ever empty: a node's absent child
                // is handled at the node.
                let Some((_guard, slot)) = self.lock_parent(parent, word)? else {
                    return Ok(Attempt::Restart);
                };
                let value = Self::make(make, None);
                let top = key.root_shift();
                slot.store(self.single(key, top, value)?, Ordering::Release);
                return Ok(Attempt::Done(Self::absent()));
            }
            let Some(kind) = Kind::of(word) else {
                return self.upsert_at_cell(pin, parent, word, key, make);
            };
            // SAFETY: a node of this tree, loaded under the pin.
            let node = unsafe { self.node_at(word, kind) };
            let header = node.header();
            let at_root = matches!(parent, Parent::Root);
            let mismatch = if Self::PATH {
                shift = header.shift();
                !key.matches_word(header.prefix())
            } else {
                if at_root {
                    shift = header.shift();
                }
                at_root && key.above(shift)
            };
            if mismatch {
                return self.split_above(parent, word, shift, key, make);
            }
            let chunk = key.chunk(shift);
            let values = Self::values_at(shift);
            if shift > 0
                && let Some(child) = node.find(chunk, pin, false)
            {
                parent = Parent::Node(node, chunk);
                word = child;
                shift -= SPAN;
                continue;
            }
            // The key's slot is in this node: present (last level), or
            // absent and to be added.
            let Some(guard) = self.lock_node(&header.lock)? else {
                return Ok(Attempt::Restart);
            };
            if let Some(slot) = node.slot(chunk) {
                if shift > 0 {
                    // A child appeared since the search: descend again.
                    return Ok(Attempt::Restart);
                }
                let old_word = slot.load(Ordering::Relaxed);
                // SAFETY: a last-level slot word of this layout; the node
                // is locked, so it is this tree's current value.
                let (value, old) = unsafe {
                    self.with_value(old_word, |old| {
                        (Self::make(make, Some(old)), Self::old_of(old))
                    })
                };
                slot.store(self.new_slot(key, value)?, Ordering::Release);
                drop(guard);
                // SAFETY: the old value's slot word was just unlinked.
                unsafe { self.retire_slot(pin, old_word) };
                return Ok(Attempt::Done(old));
            }
            if node.has_room(chunk, values) {
                let value = Self::make(make, None);
                let child = self.below(key, shift, value)?;
                let appended = node.try_append(chunk, child, values);
                debug_assert!(appended);
                return Ok(Attempt::Done(Self::absent()));
            }
            drop(guard);
            return self.grow(pin, parent, node, word, shift, key, make);
        }
    }

    /// The child to add for `key` below a node at `shift`: its value's slot
    /// word at the last level, else a subtree holding only `key`.
    fn below(&self, key: C::Key, shift: u32, value: InputOf<'_, C>) -> Result<*mut u8, S::Error> {
        if shift == 0 {
            self.new_slot(key, value)
        } else {
            self.single(key, shift - SPAN, value)
        }
    }

    /// A subtree holding only `key`, for a slot whose child would sit at
    /// `shift`: a lazy leaf, a last-level node carrying the whole path in
    /// its prefix, or a chain of nodes down to the last level.
    pub(super) fn single(
        &self,
        key: C::Key,
        shift: u32,
        value: InputOf<'_, C>,
    ) -> Result<*mut u8, S::Error> {
        if Self::LAZY {
            return self.new_cell(key, value);
        }
        let slot = self.new_slot(key, value)?;
        let leaf = self
            .new_node1(key, 0, slot)
            .inspect_err(|_| self.discard_child(slot, 0))?;
        if Self::PATH {
            return Ok(leaf);
        }
        self.chain(key, SPAN, shift, leaf)
            .inspect_err(|_| self.discard_child(leaf, SPAN))
    }

    /// Wraps `word` in single-child nodes at shifts `from..=to` on `key`'s
    /// path. On failure the nodes it built are freed and `word` is left
    /// to the caller.
    fn chain(&self, key: C::Key, from: u32, to: u32, word: *mut u8) -> Result<*mut u8, S::Error> {
        let mut top = word;
        let mut shift = from;
        while shift <= to {
            match self.new_node1(key, shift, top) {
                Ok(wrapped) => top = wrapped,
                Err(error) => {
                    self.unchain(top, word);
                    return Err(error);
                }
            }
            shift += SPAN;
        }
        Ok(top)
    }

    /// Frees the unpublished single-child nodes from `top` down to, not
    /// including, `bottom`: what [`chain`](Self::chain) built.
    fn unchain(&self, mut top: *mut u8, bottom: *mut u8) {
        let pin = self.reclaimer.pin();
        while top != bottom {
            let kind = Kind::of(top).expect("a chain holds nodes");
            // SAFETY: a node `chain` built, never published, owned here.
            let node = unsafe { self.node_at(top, kind) };
            let mut entries = Entries::new();
            node.entries(&pin, &mut entries, false);
            let (_, child) = entries.iter().next().expect("a chain node has its child");
            // SAFETY: unpublished, so unreachable, freed once; its child
            // is the next link, freed next or left to the caller.
            unsafe { self.free_node(top) };
            top = child;
        }
    }

    /// The subtree that holds `other`'s subtree and `key`, which diverge:
    /// a node at their diverging shift with `other_child` (already the
    /// child for that node's level) and `key`'s child, under a chain of
    /// single-child nodes up to `top` unless prefixes record the path.
    fn join(
        &self,
        key: C::Key,
        value: InputOf<'_, C>,
        other: C::Key,
        other_child: *mut u8,
        top: u32,
    ) -> Result<*mut u8, S::Error> {
        let split = key.diverging_shift(other);
        let mine = self.below(key, split, value)?;
        let mut entries = Entries::new();
        entries.push(other.chunk(split), other_child);
        entries.push(key.chunk(split), mine);
        let node = self
            .new_node(Kind::N4, key.prefix_word(split), &entries, split)
            .inspect_err(|_| self.discard_child(mine, split))?;
        if Self::PATH {
            return Ok(node);
        }
        self.chain(key, split + SPAN, top, node).inspect_err(|_| {
            // SAFETY: built just above, never published; its children
            // are `other_child` (the caller's) and `mine`, freed next.
            unsafe { self.free_node(node) };
            self.discard_child(mine, split);
        })
    }

    /// Upserts where a lazy leaf sits in `parent`'s slot.
    fn upsert_at_cell<'i, F: FnOnce(Option<&ValueOf<C>>) -> InputOf<'i, C>>(
        &self,
        pin: &Pin<'_, S::Table>,
        parent: Parent<'_, C::Key>,
        word: *mut u8,
        key: C::Key,
        make: &mut Option<F>,
    ) -> Result<Attempt<OldOf<C>>, S::Error> {
        // SAFETY: a lazy leaf of this tree, loaded under the pin.
        let cell_key = unsafe { self.cell_key(word) };
        let Some((guard, slot)) = self.lock_parent(parent, word)? else {
            return Ok(Attempt::Restart);
        };
        if cell_key == key {
            // SAFETY: as above; the parent's lock keeps it the key's.
            let (value, old) = unsafe {
                self.with_cell(word, |old| (Self::make(make, Some(old)), Self::old_of(old)))
            };
            slot.store(self.new_cell(key, value)?, Ordering::Release);
            drop(guard);
            // SAFETY: the old cell was just unlinked.
            unsafe { self.retire_cell(pin, word) };
            return Ok(Attempt::Done(old));
        }
        let value = Self::make(make, None);
        let top = match parent {
            Parent::Root => key.root_shift().max(cell_key.root_shift()),
            Parent::Node(node, _) => node.header().shift() - SPAN,
        };
        // Below a split at the last level the other key needs a value slot:
        // a leaf layout's cell is one, an embedded value is copied out.
        let split = key.diverging_shift(cell_key);
        let copied = split == 0 && Self::EMBEDS;
        let other_child = if copied {
            // SAFETY: as above.
            unsafe {
                self.with_cell(word, |other| {
                    self.new_slot(cell_key, <C::Layout as ConcurrentLayout>::input(other))
                })
            }?
        } else {
            word
        };
        let joined = self
            .join(key, value, cell_key, other_child, top)
            .inspect_err(|_| {
                if copied {
                    self.discard_child(other_child, 0);
                }
            })?;
        slot.store(joined, Ordering::Release);
        drop(guard);
        if copied {
            // SAFETY: the cell was just unlinked; its value lives on in
            // the slot.
            unsafe { self.retire_cell(pin, word) };
        }
        Ok(Attempt::Done(Self::absent()))
    }

    /// Inserts `key`, which lies outside the node `word` at `shift`, by a
    /// new node above it: a split of its compressed path, or, without path
    /// compression, a taller root.
    fn split_above<'i, F: FnOnce(Option<&ValueOf<C>>) -> InputOf<'i, C>>(
        &self,
        parent: Parent<'_, C::Key>,
        word: *mut u8,
        shift: u32,
        key: C::Key,
        make: &mut Option<F>,
    ) -> Result<Attempt<OldOf<C>>, S::Error> {
        let Some((_guard, slot)) = self.lock_parent(parent, word)? else {
            return Ok(Attempt::Restart);
        };
        let value = Self::make(make, None);
        let joined = if Self::PATH {
            // SAFETY: `word` is still the parent's child (checked under
            // its lock), so the node is live.
            let node = unsafe { self.node_at(word, Kind::of(word).expect("a node")) };
            self.join(key, value, node.header().prefix(), word, 0)?
        } else {
            // The root's keys have zero chunks above it, as key 0 does;
            // the old root hangs below the new one by a chain of zeros.
            let top = key.root_shift();
            let lifted = self.chain(C::Key::MIN, shift + SPAN, top - SPAN, word)?;
            let joined = self
                .join(key, value, C::Key::MIN, lifted, top)
                .inspect_err(|_| self.unchain(lifted, word))?;
            if lifted != word {
                // A chain: lookups of the old root's keys may skip it.
                // SAFETY: `lifted` was built above, unpublished, so live.
                let bottom = unsafe { self.chain_bottom(lifted, shift) };
                self.set_shortcut(bottom.slot(0).expect("a chain's child"), shift);
            }
            joined
        };
        slot.store(joined, Ordering::Release);
        Ok(Attempt::Done(Self::absent()))
    }

    /// Adds `key` below a node with no room for it: builds the node anew,
    /// compacted or of the next kind, and publishes it in its parent.
    #[allow(clippy::too_many_arguments)]
    fn grow<'i, F: FnOnce(Option<&ValueOf<C>>) -> InputOf<'i, C>>(
        &self,
        pin: &Pin<'_, S::Table>,
        parent: Parent<'_, C::Key>,
        node: NodeRef<'_, C::Key>,
        word: *mut u8,
        shift: u32,
        key: C::Key,
        make: &mut Option<F>,
    ) -> Result<Attempt<OldOf<C>>, S::Error> {
        let Some((parent_guard, slot)) = self.lock_parent(parent, word)? else {
            return Ok(Attempt::Restart);
        };
        let Some(guard) = self.lock_node(&node.header().lock)? else {
            return Ok(Attempt::Restart);
        };
        let chunk = key.chunk(shift);
        if node.slot(chunk).is_some() {
            return Ok(Attempt::Restart);
        }
        let values = Self::values_at(shift);
        let mut entries = Entries::new();
        node.entries(pin, &mut entries, values);
        let value = Self::make(make, None);
        let mine = self.below(key, shift, value)?;
        entries.push(chunk, mine);
        let kind = Kind::for_len(entries.len());
        #[cfg(test)]
        if super::tests::publishes_before_copy::<C>() {
            // The bug the linearizability test must catch: readers find
            // the grown node empty until the copy below is done.
            let grown = self.new_node(kind, node.header().prefix(), &Entries::new(), shift)?;
            slot.store(grown, Ordering::Release);
            // SAFETY: the new node, unpublished to writers (the parent's
            // lock is held), is this tree's.
            let grown_node = unsafe { self.node_at(grown, kind) };
            for (chunk, child) in entries.iter() {
                std::thread::yield_now();
                grown_node.try_append(chunk, child, values);
            }
            self.move_shortcut(node, grown_node);
            guard.mark_obsolete();
            drop(guard);
            drop(parent_guard);
            // SAFETY: as below.
            unsafe { self.retire_node(pin, word) };
            return Ok(Attempt::Done(Self::absent()));
        }
        let grown = self
            .new_node(kind, node.header().prefix(), &entries, shift)
            .inspect_err(|_| self.discard_child(mine, shift))?;
        // SAFETY: built above, unpublished, so live.
        self.move_shortcut(node, unsafe { self.node_at(grown, kind) });
        slot.store(grown, Ordering::Release);
        guard.mark_obsolete();
        drop(guard);
        drop(parent_guard);
        // SAFETY: unlinked above, and marked obsolete so no writer uses it.
        unsafe { self.retire_node(pin, word) };
        Ok(Attempt::Done(Self::absent()))
    }
}
