//! Removal, and the replacements it leads to: a node left empty leaves its
//! parent, a node left with one child gives way to it where the
//! compression allows, and a sparse node shrinks to a smaller kind.

use super::layout::ConcurrentLayout;
use super::node::{Entries, Kind, NodeRef};
use super::reclaim::Pin;
use super::space::{Space, infallible};
use super::sync::Ordering;
use super::{Attempt, ConcurrentTree, OldOf, Parent};
use crate::config::Config;
use crate::key::{Key, SPAN};

/// A node found by address: where it hangs, and its tagged pointer.
struct Found<'p, K> {
    parent: Parent<'p, K>,
    node: NodeRef<'p, K>,
    word: *mut u8,
}

impl<C: Config> ConcurrentTree<C>
where
    C::Layout: ConcurrentLayout,
{
    /// Removes `key` and returns its value.
    ///
    /// ```
    /// radix_core::radix_tree! {
    ///     pub struct Ids { key: u64, value: u32, concurrency: rowex }
    /// }
    /// let ids = Ids::new();
    /// ids.insert(5, 1);
    /// assert_eq!(ids.remove(5), Some(1));
    /// assert_eq!(ids.remove(5), None);
    /// assert!(ids.is_empty());
    /// ```
    pub fn remove(&self, key: C::Key) -> OldOf<C> {
        infallible(self.remove_in(key))
    }
}

impl<C: Config, S: Space> ConcurrentTree<C, S>
where
    C::Layout: ConcurrentLayout,
{
    /// [`remove`](ConcurrentTree::remove) in any space: fails, changing
    /// nothing, only if a writer died holding a lock the removal needs.
    pub(crate) fn remove_in(&self, key: C::Key) -> Result<OldOf<C>, S::Error> {
        const { assert!(C::DELETE, "remove needs a configuration with delete: true") };
        self.check_poison()?;
        let pin = self.reclaimer.pin();
        loop {
            if let Attempt::Done(old) = self.try_remove(&pin, key)? {
                return Ok(old);
            }
        }
    }

    /// One attempt at a removal.
    fn try_remove(
        &self,
        pin: &Pin<'_, S::Table>,
        key: C::Key,
    ) -> Result<Attempt<OldOf<C>>, S::Error> {
        let mut parent = Parent::Root;
        let mut word = pin.load(self.root());
        let mut shift = 0;
        loop {
            if word.is_null() {
                return Ok(Attempt::Done(Self::absent()));
            }
            let Some(kind) = Kind::of(word) else {
                return self.remove_cell(pin, parent, word, key);
            };
            // SAFETY: a node of this tree, loaded under the pin.
            let node = unsafe { self.node_at(word, kind) };
            let header = node.header();
            if Self::PATH {
                shift = header.shift();
                if !key.matches_word(header.prefix()) {
                    return Ok(Attempt::Done(Self::absent()));
                }
            } else if matches!(parent, Parent::Root) {
                shift = header.shift();
                if key.above(shift) {
                    return Ok(Attempt::Done(Self::absent()));
                }
            }
            let chunk = key.chunk(shift);
            if shift > 0 {
                let Some(child) = node.find(chunk, pin, false) else {
                    return Ok(Attempt::Done(Self::absent()));
                };
                parent = Parent::Node(node, chunk);
                word = child;
                shift -= SPAN;
                continue;
            }
            let Some(guard) = self.lock_node(&header.lock)? else {
                return Ok(Attempt::Restart);
            };
            let Some(slot) = node.slot(chunk) else {
                return Ok(Attempt::Done(Self::absent()));
            };
            let old_word = slot.load(Ordering::Relaxed);
            // SAFETY: a last-level slot word of this layout, under the lock.
            let old = unsafe { self.with_value(old_word, Self::old_of) };
            node.remove(chunk, Self::EMBEDS);
            let sparse = Self::sparse(node);
            drop(guard);
            // SAFETY: the value's slot word was just unlinked.
            unsafe { self.retire_slot(pin, old_word) };
            if sparse {
                self.collapse(pin, key, node.addr());
            }
            return Ok(Attempt::Done(old));
        }
    }

    /// Removes the lazy leaf `word` in `parent`'s slot if it is `key`'s.
    fn remove_cell(
        &self,
        pin: &Pin<'_, S::Table>,
        parent: Parent<'_, C::Key>,
        word: *mut u8,
        key: C::Key,
    ) -> Result<Attempt<OldOf<C>>, S::Error> {
        // SAFETY: a lazy leaf of this tree, loaded under the pin.
        if unsafe { self.cell_key(word) } != key {
            return Ok(Attempt::Done(Self::absent()));
        }
        let Some((guard, slot)) = self.lock_parent(parent, word)? else {
            return Ok(Attempt::Restart);
        };
        let sparse = match parent {
            Parent::Root => {
                slot.store(core::ptr::null_mut(), Ordering::Release);
                false
            }
            Parent::Node(node, chunk) => {
                self.clear_shortcut(node, chunk);
                node.remove(chunk, false);
                Self::sparse(node)
            }
        };
        drop(guard);
        // SAFETY: the cell is protected by the pin until it is retired.
        let old = unsafe { self.with_cell(word, Self::old_of) };
        // SAFETY: the cell was just unlinked.
        unsafe { self.retire_cell(pin, word) };
        if let Parent::Node(node, _) = parent
            && sparse
        {
            self.collapse(pin, key, node.addr());
        }
        Ok(Attempt::Done(old))
    }

    /// Whether a node a removal left with its children may need
    /// [`collapse`](Self::collapse): empty, down to one child where the
    /// compression lifts one, or sparse enough to shrink. Checked under
    /// the node's lock from its count, so that the common removal does
    /// not walk down again.
    fn sparse(node: NodeRef<'_, C::Key>) -> bool {
        let left = node.len();
        left == 0
            || (left == 1 && (Self::PATH || Self::LAZY))
            || node
                .kind()
                .smaller()
                .is_some_and(|smaller| left <= smaller.capacity() / 2)
    }

    /// Replaces the node at address `target` on `key`'s path, if a removal
    /// left it empty, with one child its compression can lift, or sparse
    /// enough for a smaller kind; and so on upwards while nodes empty.
    /// An economy: if a lock holder died meanwhile, the tree is poisoned
    /// and the node stays as it is.
    fn collapse(&self, pin: &Pin<'_, S::Table>, key: C::Key, mut target: usize) {
        loop {
            let Some(Found { parent, node, word }) = self.find_node(pin, key, target) else {
                return;
            };
            let Ok(locked) = self.lock_parent(parent, word) else {
                return;
            };
            let Some((parent_guard, slot)) = locked else {
                // The parent changed under us; look again.
                continue;
            };
            let Ok(Some(guard)) = self.lock_node(&node.header().lock) else {
                return;
            };
            let shift = node.header().shift();
            let values = Self::values_at(shift);
            let mut entries = Entries::new();
            node.entries(pin, &mut entries, values);
            let emptied = entries.len() == 0;
            let replacement = if emptied {
                match parent {
                    Parent::Root => slot.store(core::ptr::null_mut(), Ordering::Release),
                    Parent::Node(parent, chunk) => {
                        self.clear_shortcut(parent, chunk);
                        parent.remove(chunk, false);
                    }
                }
                None
            } else if let Some(child) = self.lifted(node, &entries) {
                // The node goes: a shortcut in its chunk-0 slot goes first.
                self.clear_shortcut(node, 0);
                Some(child)
            } else if let Some(smaller) = node.kind().smaller()
                && entries.len() <= smaller.capacity() / 2
            {
                // Shrinking is an economy: without room for the smaller
                // node, the sparse one stays.
                let Ok(shrunk) = self.new_node(smaller, node.header().prefix(), &entries, shift)
                else {
                    return;
                };
                // SAFETY: built above, unpublished, so live.
                self.move_shortcut(node, unsafe { self.node_at(shrunk, smaller) });
                Some(shrunk)
            } else {
                return;
            };
            if let Some(replacement) = replacement {
                slot.store(replacement, Ordering::Release);
            }
            guard.mark_obsolete();
            drop(guard);
            drop(parent_guard);
            // SAFETY: unlinked above and marked obsolete.
            unsafe { self.retire_node(pin, word) };
            match parent {
                Parent::Node(parent, _) if emptied => target = parent.addr(),
                _ => return,
            }
        }
    }

    /// What replaces a node holding only `entries` (one of them) in its
    /// parent's slot, if the compression allows: its child, or a lazy leaf
    /// for its value.
    fn lifted(&self, node: NodeRef<'_, C::Key>, entries: &Entries) -> Option<*mut u8> {
        let (chunk, child) = entries.iter().next().filter(|_| entries.len() == 1)?;
        let shift = node.header().shift();
        if shift == 0 {
            if !Self::LAZY {
                return None;
            }
            if !Self::EMBEDS {
                // A leaf layout's value is already a cell (the layouts
                // with lazy leaves are the sized ones).
                return Some(child);
            }
            let key = node.header().prefix().with_chunk(0, chunk);
            // SAFETY: an embedded last-level slot word of this layout.
            // Without room for the cell, the node stays.
            return unsafe {
                self.with_value(child, |value| {
                    self.new_cell(key, <C::Layout as ConcurrentLayout>::input(value))
                })
            }
            .ok();
        }
        let is_cell = Kind::of(child).is_none();
        (Self::PATH || (Self::LAZY && is_cell)).then_some(child)
    }

    /// The node at address `target` on `key`'s path, if it is still in
    /// the tree.
    fn find_node<'p>(
        &self,
        pin: &'p Pin<'_, S::Table>,
        key: C::Key,
        target: usize,
    ) -> Option<Found<'p, C::Key>>
    where
        Self: 'p,
    {
        let mut parent = Parent::Root;
        let mut word = pin.load(self.root());
        let mut shift = 0;
        loop {
            let kind = Kind::of(word)?;
            // SAFETY: a node of this tree, loaded under the pin.
            let node = unsafe { self.node_at(word, kind) };
            if node.addr() == target {
                return Some(Found { parent, node, word });
            }
            if Self::PATH || matches!(parent, Parent::Root) {
                shift = node.header().shift();
            }
            if shift == 0 || (Self::PATH && !key.matches_word(node.header().prefix())) {
                return None;
            }
            let chunk = key.chunk(shift);
            let child = node.find(chunk, pin, false)?;
            parent = Parent::Node(node, chunk);
            word = child;
            shift -= SPAN;
        }
    }
}
