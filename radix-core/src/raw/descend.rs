//! Descent: from a stored reference to its node, from a node to a child
//! or a value slot, and from the root to a key's value.
//!
//! Every read of the tree goes through these helpers. They are free
//! functions over a node pointer and a chunk, so that the batched lookups
//! (`batch.rs`), the iterators and the cursors take the same steps as
//! `get`; the methods at the end are the single-key lookups built on them.

use core::ptr::NonNull;

use crate::config::{Config, RefOf};
use crate::key::{Key, SPAN};
use crate::mem::Memory;
use crate::node::{self, Entry, NodeKind, dispatch, lazy};
use crate::ptr::NodePtr;
use crate::value::{MutableLayout, ValueLayout};

use super::{LayoutOf, RawTree, SlotOf, ValueOf};

/// The node a stored reference names.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn resolve<M: Memory>(mem: &M, stored: M::Ref) -> NodePtr {
    NodePtr::from_tagged(mem.resolve(stored))
}

/// The node a stored reference of configuration `C` names, without the
/// skipped-bytes flag of a path-compressed tree (see [`crate::ptr`]): what
/// every use but the lookup's descent wants.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn follow<C: Config>(mem: &C::Memory, stored: RefOf<C>) -> NodePtr {
    unflagged::<C>(resolve(mem, stored))
}

/// `node` without the skipped-bytes flag, which only path-compressed trees
/// have (elsewhere bit 3 is part of the address).
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn unflagged<C: Config>(node: NodePtr) -> NodePtr {
    if C::COMPRESSION.path() {
        node.without_prefixed()
    } else {
        node
    }
}

/// Whether `node`, as a reference named it, carries the skipped-bytes flag.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn flagged<C: Config>(node: NodePtr) -> bool {
    C::COMPRESSION.path() && node.is_prefixed()
}

/// The stored reference to `node`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn stored<M: Memory>(mem: &M, node: NodePtr) -> M::Ref {
    mem.to_ref(node.tagged())
}

/// Finds `chunk` in any node.
///
/// # Safety
///
/// `node` is live and its slots are `S`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn find_slot<S>(node: NodePtr, chunk: u8) -> Option<NonNull<S>> {
    // SAFETY: forwarded contract.
    unsafe { dispatch!(node, K => K::find::<S>(node.addr_as(K::KIND), chunk)) }
}

/// The child of inner node `node` for `chunk`: [`find_slot`], a read and a
/// resolve, which node256 does in one load (see [`NodeKind::find_child`]).
///
/// # Safety
///
/// `node` is a live inner node of a tree on `mem`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn find_child<M: Memory>(mem: &M, node: NodePtr, chunk: u8) -> Option<NodePtr> {
    // The test for an absent child is inside each kind's arm, right after
    // its load: with one test after the arms meet, LLVM moves the loads
    // there too, and node256's one-instruction load becomes an address
    // computation, a jump and a load.
    // SAFETY: forwarded contract.
    unsafe {
        dispatch!(node, K => {
            let child = K::find_child::<M::Ref>(node.addr_as(K::KIND), chunk)?;
            Some(resolve(mem, child))
        })
    }
}

/// The last-level node on `key`'s path from `node`, if the path gets
/// there; in a tree with ranges, the range cell the path meets instead, if
/// it meets one (a lazy-tagged pointer, which the caller tells apart).
///
/// # Safety
///
/// `node` is a live node at `shift` of an uncompressed tree of
/// configuration `C` on `mem` whose chunks above `shift` agree with
/// `key`'s.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn descend_to_last_level<C: Config>(
    mem: &C::Memory,
    mut node: NodePtr,
    mut shift: u32,
    key: C::Key,
) -> Option<NodePtr> {
    if shift > 0 {
        while shift > SPAN {
            // SAFETY: caller's contract: nodes reachable from `node` are
            // live, and above the last level their slots are child
            // references.
            node = unsafe { find_child(mem, node, key.chunk(shift))? };
            if C::RANGES && node.is_lazy() {
                return Some(node);
            }
            shift -= SPAN;
        }
        // SAFETY: as above.
        node = unsafe { find_child(mem, node, key.chunk(SPAN))? };
    }
    Some(node)
}

/// The value slot for `chunk` in last-level node `node`, with a single
/// kind dispatch: a node16 first prefetches its slot lines (the levels
/// above are few and stay cached, so only here do the prefetches pay), and
/// a node256 of a layout that never stores a null word reads its slot
/// alone (see [`NodeKind::find_nonnull`]).
///
/// # Safety
///
/// `node` is a live last-level node of a tree of configuration `C`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn find_value_slot<C: Config>(
    node: NodePtr,
    chunk: u8,
) -> Option<NonNull<SlotOf<C>>> {
    // SAFETY: forwarded contract.
    unsafe { search_value_slot::<C, true>(node, chunk) }
}

/// [`find_value_slot`], with the node16's slot prefetches where
/// `PREFETCH_SLOTS` (a caller whose node line is already cached prefetches
/// the one slot found instead).
///
/// # Safety
///
/// As for [`find_value_slot`].
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn search_value_slot<C: Config, const PREFETCH_SLOTS: bool>(
    node: NodePtr,
    chunk: u8,
) -> Option<NonNull<SlotOf<C>>> {
    // SAFETY: forwarded contract.
    unsafe {
        dispatch!(node, K => {
            let addr = node.addr_as(K::KIND);
            if PREFETCH_SLOTS {
                K::prefetch_slots::<SlotOf<C>>(addr);
            }
            if LayoutOf::<C>::NONNULL_SLOT {
                K::find_nonnull::<SlotOf<C>>(addr, chunk)
            } else {
                K::find::<SlotOf<C>>(addr, chunk)
            }
        })
    }
}

/// The first entry of `node` at or after walk position `pos`.
///
/// # Safety
///
/// `node` is live and its slots are `S`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn entry_at<S>(node: NodePtr, pos: u16) -> Option<Entry<S>> {
    // SAFETY: forwarded contract.
    unsafe { dispatch!(node, K => K::entry_at::<S>(node.addr_as(K::KIND), pos)) }
}

/// The walk position of the first entry of `node` with a chunk `>= chunk`.
///
/// # Safety
///
/// `node` is live.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn seek(node: NodePtr, chunk: u8) -> u16 {
    // SAFETY: forwarded contract.
    unsafe { dispatch!(node, K => K::seek(node.addr_as(K::KIND), chunk)) }
}

/// The last entry of `node` before walk position `end`.
///
/// # Safety
///
/// `node` is live and its slots are `S`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn entry_before<S>(node: NodePtr, end: u16) -> Option<Entry<S>> {
    // SAFETY: forwarded contract.
    unsafe { dispatch!(node, K => K::entry_before::<S>(node.addr_as(K::KIND), end)) }
}

/// The key bits fixed above `node`'s chunk, given those its path fixes:
/// with path compression all of them are in its prefix word.
///
/// # Safety
///
/// `node` is a live node of a tree of configuration `C`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn node_key<C: Config>(node: NodePtr, path_key: C::Key) -> C::Key {
    if C::COMPRESSION.path() {
        // SAFETY: the caller's contract; such nodes have a prefix word.
        let word = unsafe { node::prefix::prefix_word::<C::Key>(node.addr()) };
        word.clear_below(word.word_shift())
    } else {
        path_key
    }
}

/// The shift of the chunk `node` consumes, given the shift of the first
/// chunk below its parent's (`start`): the same without path compression,
/// the shift its prefix word records with it.
///
/// # Safety
///
/// `node` is live in a tree of configuration `C`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn node_shift<C: Config>(node: NodePtr, start: u32) -> u32 {
    if C::COMPRESSION.path() && !node.is_lazy() {
        // SAFETY: the caller's contract; path-compressed nodes have a
        // prefix word.
        unsafe { node::prefix::prefix_word::<C::Key>(node.addr()).word_shift() }
    } else {
        start
    }
}

impl<C: Config> RawTree<C> {
    /// The slot of `key`, if present.
    ///
    /// Each level reads its child with [`NodeKind::find_child`]: node256
    /// without a branch on whether it is there, so its one branch follows
    /// the load; node4 and node48 behind predicted branches, which cost
    /// fewer instructions and, for a present key, start the load as early
    /// (see the `node4` and `node48` modules); node16 at the index a run
    /// of consecutive chunks would give, behind a predicted compare, and
    /// else branch-free after its vector search (see `sorted::run_guess`).
    ///
    /// The level above the last is peeled out of the loop: its kind
    /// dispatch ([`dispatch!`], two bit tests) is a pair of branches of
    /// its own, which the CPU predicts apart from the levels above (the
    /// levels near the values are the ones whose kinds vary). Against the
    /// plain loop, when the dispatch was still one jump table, RT-5
    /// lookups took 0.67x (fanout 48: node4s above node48s) to 0.96x
    /// (fanout 16) the time, RT-1, RT-3 and RT-4 the same or less
    /// (`benches/RESULTS.md`), for 2 to 7 more instructions a lookup.
    /// Unrolling every level (a jump on the root's shift into
    /// straight-line code) measured the same on RT-5 but 1.10x on RT-1's
    /// three levels: entering the sequence costs more than a short loop.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn find(&self, key: C::Key) -> Option<NonNull<SlotOf<C>>> {
        if !C::COMPRESSION.is_none() {
            return self.find_compressed(key);
        }
        let node = self.last_level(key)?;
        if C::RANGES && node.is_lazy() {
            // The path met a range value above the last level. Ranged
            // trees descend as the others do, through the peeled level
            // above the last: through `find_ranged`'s plain loop, TS-1's
            // shuffled lookups (keys, no ranges) took 1.06x the time, and
            // TS-2's (every key under a range) 0.95x.
            // SAFETY: a tagged node on a ranged tree's path is a live
            // range cell.
            return Some(unsafe { lazy::slot::<SlotOf<C>>(node.addr()) });
        }
        // SAFETY: `node` is a live last-level node; its slots are the
        // layout's.
        unsafe { find_value_slot::<C>(node, key.chunk(0)) }
    }

    /// The last-level node on `key`'s path, if the path gets there.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn last_level(&self, key: C::Key) -> Option<NodePtr> {
        let node = follow::<C>(&self.mem, self.root?);
        if key.above(self.root_shift) {
            return None;
        }
        // SAFETY: `node` is the root, at the root's shift, and `key` is
        // not above it.
        unsafe { descend_to_last_level::<C>(&self.mem, node, self.root_shift, key) }
    }

    /// The value for `key`.
    #[inline]
    pub fn get(&self, key: C::Key) -> Option<&ValueOf<C>> {
        // SAFETY: the slot is live while `self` is borrowed.
        self.find(key)
            .map(|slot| unsafe { LayoutOf::<C>::get(slot, &self.mem) })
    }

    /// The key and the value for `key`, as `BTreeMap::get_key_value` gives
    /// them (keys are integers, so the key comes back by value).
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let m: RadixMap<u64, &str> = RadixMap::from([(1, "a"), (2, "b")]);
    /// assert_eq!(m.get_key_value(2), Some((2, &"b")));
    /// assert_eq!(m.get_key_value(3), None);
    /// ```
    #[inline]
    pub fn get_key_value(&self, key: C::Key) -> Option<(C::Key, &ValueOf<C>)> {
        self.get(key).map(|value| (key, value))
    }

    /// The value for `key`, mutably.
    #[inline]
    pub fn get_mut(&mut self, key: C::Key) -> Option<&mut ValueOf<C>>
    where
        C::Layout: MutableLayout,
    {
        crate::raw::refuse_ranges!(C, "get_mut");
        // SAFETY: the slot is live and exclusively borrowed with `self`.
        self.find(key)
            .map(|slot| unsafe { LayoutOf::<C>::get_mut(slot, &self.mem) })
    }

    /// Whether `key` is present.
    #[inline]
    pub fn contains_key(&self, key: C::Key) -> bool {
        self.find(key).is_some()
    }
}
