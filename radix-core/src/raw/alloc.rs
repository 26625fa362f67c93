//! Node allocation and replacement: new nodes from reserved pools, chains
//! of single-child nodes, growing a node into a larger class and shrinking
//! it into a smaller one, and relinking the replacement where the old
//! node hung.

use core::ptr::NonNull;

use crate::config::{Config, Pools, RefOf};
use crate::key::{Key, SPAN};
use crate::mem::Memory;
use crate::node::{self, Kind, Node256, NodeKind, dispatch, dispatch_kind};
use crate::ptr::NodePtr;
use crate::value::ValueLayout;

use super::{LayoutOf, RawTree, SlotOf, resolve, stored};

impl<C: Config> RawTree<C> {
    /// A fresh, empty node of `class` for level `shift`, from a reserved
    /// pool. With path compression its prefix word is `key`'s at `shift`
    /// (`key` is any key on the node's path, or the prefix word itself).
    #[inline]
    pub(crate) fn new_node(mem: &mut C::Memory, class: usize, shift: u32, key: C::Key) -> NodePtr {
        let kind = C::SIZE_CLASSES.kind(class);
        let raw = mem.alloc_node(Pools::<C>::at(class, shift));
        // SAFETY: the pool's nodes have `PREFIX` bytes in front of the
        // node proper (none without path compression).
        let raw = unsafe { raw.byte_add(Pools::<C>::PREFIX) };
        // SAFETY: a fresh allocation of this class's size for this level;
        // an inner node's slots are child references, a last-level node's
        // are the layout's.
        unsafe {
            if C::COMPRESSION.path() {
                node::prefix::set_prefix_word(raw, key.prefix_word(shift));
            }
            dispatch_kind!(kind, K => K::init(raw, class));
            if kind == Kind::N256 {
                if shift > 0 {
                    Node256::clear_slots::<RefOf<C>>(raw);
                } else if LayoutOf::<C>::NONNULL_SLOT {
                    const {
                        assert!(
                            !LayoutOf::<C>::NONNULL_SLOT
                                || size_of::<SlotOf<C>>() == size_of::<*const u8>(),
                            "a NONNULL_SLOT layout's slot must be one pointer word"
                        )
                    };
                    Node256::clear_slots::<SlotOf<C>>(raw);
                }
            }
        }
        NodePtr::new(raw, kind)
    }

    /// # Safety
    ///
    /// `node` is a live node at `shift` whose slots have been moved out or
    /// dropped, and it is not used again.
    #[inline]
    pub(crate) unsafe fn free_node(mem: &mut C::Memory, node: NodePtr, shift: u32) {
        // SAFETY: forwarded contract; the allocation starts `PREFIX` bytes
        // before the node.
        unsafe {
            let class = node::class(node.addr());
            let raw = node.addr().byte_sub(Pools::<C>::PREFIX);
            mem.free_node(Pools::<C>::at(class, shift), raw);
        }
    }

    /// The prefix word of `node` with path compression (any key otherwise):
    /// what [`Self::new_node`] takes to make a node in its place.
    ///
    /// # Safety
    ///
    /// `node` is a live node of this tree.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) unsafe fn word_of(node: NodePtr) -> C::Key {
        if C::COMPRESSION.path() {
            // SAFETY: the caller's contract.
            unsafe { node::prefix::prefix_word(node.addr()) }
        } else {
            C::Key::MIN
        }
    }

    /// A chain of single-child nodes from level `shift` down to the last
    /// level, holding `key`'s value; its nodes are reserved
    /// ([`Self::chain_needs`]).
    pub(crate) fn chain(mem: &mut C::Memory, key: C::Key, shift: u32, value: SlotOf<C>) -> NodePtr {
        let mut child = Self::new_node(mem, 0, 0, key);
        // SAFETY: fresh nodes are empty and have room for one entry.
        unsafe { insert_entry(child, key.chunk(0), value) };
        let mut level = SPAN;
        while level <= shift {
            let node = Self::new_node(mem, 0, level, key);
            // SAFETY: as above.
            unsafe { insert_entry(node, key.chunk(level), stored(mem, child)) };
            child = node;
            level += SPAN;
        }
        child
    }

    /// Adds `chunk` to the node at `loc`, growing it into the next size
    /// class first if it is full (from a reserved node).
    ///
    /// # Safety
    ///
    /// `loc` holds `node`, a live node at `shift` with slots `S` that lacks
    /// `chunk`.
    #[inline]
    pub(crate) unsafe fn add_child<S>(
        mem: &mut C::Memory,
        loc: NonNull<RefOf<C>>,
        mut node: NodePtr,
        chunk: u8,
        value: S,
        shift: u32,
    ) {
        // SAFETY: forwarded contract; the largest class (256) is never full
        // when a chunk is absent, so `class + 1` exists when growing.
        unsafe {
            let class = node::class(node.addr());
            if node::count(node.addr()) == C::SIZE_CLASSES.capacity(class) {
                node = Self::convert::<S>(mem, node, class + 1, shift);
                Self::relink(mem, loc, node);
            }
            insert_entry(node, chunk, value);
        }
    }

    /// Writes `node` to `loc` in place of the node there (which it was
    /// converted from), keeping a path-compressed tree's skipped-bytes flag:
    /// same place, same shift.
    ///
    /// # Safety
    ///
    /// `loc` is a live location holding a node reference.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) unsafe fn relink(mem: &C::Memory, loc: NonNull<RefOf<C>>, node: NodePtr) {
        // SAFETY: the caller's contract.
        unsafe {
            let node = if C::COMPRESSION.path() {
                node.with_prefixed(resolve(mem, loc.read()).is_prefixed())
            } else {
                node
            };
            loc.write(stored(mem, node));
        }
    }

    /// Copies `old`'s entries into a new node of `class` and frees `old`.
    ///
    /// # Safety
    ///
    /// `old` is a live node at `shift` with slots `S` whose entries fit the
    /// new class; it is not used again.
    pub(super) unsafe fn convert<S>(
        mem: &mut C::Memory,
        old: NodePtr,
        class: usize,
        shift: u32,
    ) -> NodePtr {
        // SAFETY: the caller's contract.
        let new = Self::new_node(mem, class, shift, unsafe { Self::word_of(old) });
        // One dispatch on each kind, not one per entry.
        // SAFETY: `new` is fresh with room for `old`'s entries (the caller's
        // contract); slots move bitwise, then `old` is freed without drops.
        unsafe {
            dispatch!(old, From => {
                let from = old.addr_as(From::KIND);
                dispatch!(new, To => {
                    node::move_entries::<From, To, S>(from, new.addr_as(To::KIND))
                })
            });
            Self::free_node(mem, old, shift);
        }
        new
    }
}

/// # Safety
///
/// `node` is live with slots `S`, lacks `chunk` and has room.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn insert_entry<S>(node: NodePtr, chunk: u8, value: S) {
    // SAFETY: forwarded contract.
    unsafe { dispatch!(node, K => K::insert::<S>(node.addr_as(K::KIND), chunk, value)) }
}

/// Removes `chunk` from `node`, returning its slot value (`None` if it was
/// absent).
///
/// # Safety
///
/// `node` is live with slots `S`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn remove_entry<S>(node: NodePtr, chunk: u8) -> Option<S> {
    // SAFETY: forwarded contract.
    unsafe { dispatch!(node, K => K::remove::<S>(node.addr_as(K::KIND), chunk)) }
}
