//! The shortcut: where lookups of small keys start in a tree that grew
//! tall, past the chain of single-child nodes above them.
//!
//! Without path compression a root's height follows the largest key. One
//! key far above the rest, say at bit 40 over keys below 2^24, lifts the
//! old root under a chain of single-child nodes on chunk 0 (at bits 32 and
//! 24, below a new root at 40), and every lookup of a small key then walks
//! the chain: two dependent node reads more than before, and a third for
//! the new root. The chain stays after the far key goes, since a root
//! without compression keeps its height. RT-C's writers do exactly this
//! beside its readers. With one far key inserted and no writer running,
//! its reader made 29.6 M lookups a second against 55.6 M without the key
//! (medians of six alternated runs): the whole of what a writer beside it
//! cost, 30.0 M, was the chain, not contention.
//!
//! So the tree's [`Anchor`](super::space::Anchor) keeps, beside the root,
//! one more word: the slot at the bottom of that chain, the one whose
//! child is the old root, with its child's shift in the word's low bits.
//! A lookup whose key has nothing above that shift loads the slot and
//! goes on from there. Every other lookup, every write and every walk
//! starts at the root as before.
//!
//! # Why readers may take it
//!
//! The shortcut names a slot, not a node, so the child it leads to has one
//! home: a writer that replaces the child (growing or shrinking it) stores
//! into that same slot, and readers from the root and through the
//! shortcut see the same word. The shortcut itself changes only when the
//! node holding the slot changes, and always under that node's lock:
//!
//! - when the node is replaced by a copy (grown, shrunk), the shortcut
//!   moves to the copy's slot before the copy is published. Until then
//!   both slots hold the same child, since the locked node's chunk-0 slot
//!   cannot change;
//! - before the slot's child is removed (the small keys all went), or the
//!   node gives way to its only child (lazy leaves), the shortcut is
//!   cleared. A reader that loaded it just before still holds a pin, so
//!   the slot and what it held stay readable, and what it finds there was
//!   the tree's content at some instant of its lookup, as for a reader
//!   already inside a node that is replaced.
//!
//! A taller root sets it, under the root's lock, only where there is none:
//! a shortcut already set lies lower and stays useful. A slot's position
//! in its node never moves while the node lives (`node.rs`: positions are
//! appended, never reused), so the word stays the slot's.
//!
//! Only trees without path compression grow chains (with it the new
//! root's prefix skips the zeros), and only shifts up to 56 fit the three
//! tag bits of a slot's address, which covers every `u64` and narrower
//! key; `u128` trees without compression take the root's path always.
//!
//! # Cost
//!
//! A tree that never grew a chain pays one load of a word on the root's
//! cache line and a test per lookup: RT-C's reader at a tenth of its size
//! ran 125 instructions a lookup against 120 before (callgrind, the whole
//! reader thread). With the chain, 124 against 189. A writer that
//! replaces a node, or removes a child at chunk 0, compares one word.

use super::ConcurrentTree;
use super::layout::ConcurrentLayout;
use super::node::{Kind, NodeRef};
use super::reclaim::Pin;
use super::space::Space;
use super::sync::{AtomicPtr, Ordering};
use crate::config::Config;
use crate::key::{Key, SPAN};

/// The tag bits of a shortcut word: its child's shift, in chunks.
const TAG: usize = 0b111;

impl<C: Config, S: Space> ConcurrentTree<C, S>
where
    C::Layout: ConcurrentLayout,
{
    /// Whether this tree keeps a shortcut: no path compression, and shifts
    /// that fit the tag.
    pub(super) const SHORTCUT: bool = !Self::PATH && <C::Key as Key>::BITS - SPAN <= 7 * SPAN;

    /// The shortcut word: null, or a slot's space word tagged with its
    /// child's shift in chunks.
    #[inline(always)]
    fn shortcut(&self) -> &AtomicPtr<u8> {
        self.space.anchor().shortcut()
    }

    /// Where a lookup of `key` may start below the root: the word in the
    /// shortcut's slot and that word's shift, if the tree has a shortcut
    /// and `key` lies below it.
    #[inline(always)]
    pub(super) fn shortcut_start(
        &self,
        pin: &Pin<'_, S::Table>,
        key: C::Key,
    ) -> Option<(*mut u8, u32)> {
        if !Self::SHORTCUT {
            return None;
        }
        let cut = self.shortcut().load(Ordering::Acquire);
        if cut.is_null() {
            return None;
        }
        let shift = (cut.addr() & TAG) as u32 * SPAN;
        if key.above(shift) {
            return None;
        }
        let addr = self.space.resolve(cut.map_addr(|addr| addr & !TAG));
        let slot =
            // SAFETY: a set shortcut names a slot of a node in the tree
            // (the module docs), whose word was loaded after the pin was
            // taken; the node is retired only after the shortcut leaves it,
            // so it is still allocated, and slots are aligned atomics.
            unsafe { &*addr.cast::<AtomicPtr<u8>>() };
        let word = pin.load(slot);
        // A child removed from a node of 256 leaves its slot null.
        (!word.is_null()).then_some((word, shift))
    }

    /// Points the shortcut at `slot`, whose child sits at `shift`, unless
    /// the tree has one already. Called by a taller root before it is
    /// published, under the root's lock.
    pub(super) fn set_shortcut(&self, slot: &AtomicPtr<u8>, shift: u32) {
        if !Self::SHORTCUT || shift / SPAN > TAG as u32 {
            return;
        }
        let word = self.slot_word(slot);
        let tagged = word.map_addr(|addr| addr | (shift / SPAN) as usize);
        let _ = self.shortcut().compare_exchange(
            core::ptr::null_mut(),
            tagged,
            Ordering::Release,
            Ordering::Relaxed,
        );
    }

    /// The bottom of the chain of single-child nodes `top` heads, the
    /// node whose child sits at `shift`.
    ///
    /// # Safety
    ///
    /// `top` is a chain [`chain`](Self::chain) built above a node at
    /// `shift` and this thread has not published yet.
    pub(super) unsafe fn chain_bottom(&self, top: *mut u8, shift: u32) -> NodeRef<'_, C::Key> {
        let mut word = top;
        loop {
            let kind = Kind::of(word).expect("a chain holds nodes");
            // SAFETY: the caller's contract: a node of the chain, which
            // only this thread can reach.
            let node = unsafe { self.node_at(word, kind) };
            if node.header().shift() == shift + SPAN {
                return node;
            }
            word = node
                .slot(0)
                .expect("a chain node's child is at chunk 0")
                .load(Ordering::Relaxed);
        }
    }

    /// The space word of `slot`'s address, untagged.
    fn slot_word(&self, slot: &AtomicPtr<u8>) -> *mut u8 {
        self.space.word(core::ptr::from_ref(slot).cast_mut().cast())
    }

    /// Whether the shortcut names `node`'s slot for chunk 0. Writers only,
    /// under `node`'s lock, which is what may change it.
    fn shortcut_in(&self, node: NodeRef<'_, C::Key>) -> Option<*mut u8> {
        if !Self::SHORTCUT {
            return None;
        }
        // Null first: most trees never have a shortcut, and the slot's
        // search is a node's compare.
        let cut = self.shortcut().load(Ordering::Relaxed);
        if cut.is_null() {
            return None;
        }
        let slot = node.slot(0)?;
        (cut.map_addr(|addr| addr & !TAG) == self.slot_word(slot)).then_some(cut)
    }

    /// Moves the shortcut from `old`'s slot to `new`'s, if it is in `old`:
    /// called under `old`'s lock before `new`, its replacement holding the
    /// same chunk-0 child, is published.
    pub(super) fn move_shortcut(&self, old: NodeRef<'_, C::Key>, new: NodeRef<'_, C::Key>) {
        let Some(cut) = self.shortcut_in(old) else {
            return;
        };
        let slot = new
            .slot(0)
            .expect("a replacement keeps its node's children");
        let word = self.slot_word(slot);
        let moved = word.map_addr(|addr| addr | (cut.addr() & TAG));
        self.shortcut().store(moved, Ordering::Release);
    }

    /// Clears the shortcut if it is `node`'s slot for `chunk`, whose child
    /// is about to leave (or, with chunk 0, if the node gives way to its
    /// only child): called under `node`'s lock, before the change.
    pub(super) fn clear_shortcut(&self, node: NodeRef<'_, C::Key>, chunk: u8) {
        if chunk == 0 && self.shortcut_in(node).is_some() {
            self.shortcut()
                .store(core::ptr::null_mut(), Ordering::Release);
        }
    }
}
