//! Nodes: the four kinds, their shared header, and their memory layout.
//!
//! A node is a header followed by a kind-specific index (how a chunk finds
//! its slot) and a slot array. The same four node types serve every level:
//! inner nodes hold child references (the memory back end's
//! [`StoredRef`]) in their slots, last-level nodes
//! hold the value layout's slot type. Node functions
//! are generic over the slot type `S`, which is how inner and leaf nodes
//! share one implementation (the inner/leaf split PostgreSQL abandoned
//! because C doubled every type and function).
//!
//! | kind | index | capacity |
//! |---|---|---|
//! | [`Kind::N4`] | sorted chunk array (4) | 1..=4 |
//! | [`Kind::N16`] | sorted chunk array (32), searched with SIMD | 5..=32 |
//! | [`Kind::N48`] | 256-byte chunk → slot map, `isset` bitmap | 33..=64 |
//! | [`Kind::N256`] | 256-bit bitmap, slot = chunk | 256 |
//!
//! The slot array is a flexible array: its length is the capacity of the
//! node's size class, so one kind serves several classes. Nodes are handled
//! only through raw pointers carrying the provenance of the whole
//! allocation, never through references to a fixed-size struct, because the
//! allocation is smaller than the largest class of the kind.
//!
//! Every function here is `unsafe`: the caller promises that `node` points
//! to a live, initialised node of the function's kind whose slots hold `S`.
//!
//! ## Compression: prefix words and lazy leaves
//!
//! A configuration may compress sparse keys
//! ([`Compression`](crate::Compression)); the layout above is the same in
//! every mode, and only two things are added around it.
//!
//! **The prefix word** (module `prefix`), with path compression. An inner node
//! with a single child is merged into that child, which then consumes its
//! chunk below the shift its depth implies. The node records that in one
//! key-wide word *in front of* its header:
//!
//! ```text
//!   allocation:  [ pad | prefix word ][ header | index | slots ... ]
//!                                      ^ the node pointer
//!   prefix word: every key bit above the node's chunk | the node's shift
//!                (in the low byte, which lies below the chunk, unused)
//! ```
//!
//! The word holds whole key bits rather than only the skipped bytes, so a
//! node's word never changes when a prefix splits above it or a parent is
//! merged into it, and one compare checks every skipped byte at once
//! ("pessimistic": a lookup never has to re-read a key to confirm a hit).
//! A `u128` key's 15 possible skipped bytes fit, so long prefixes need no
//! chains of nodes. Nodes are 16-aligned in these trees, and a child
//! reference flags a node that skips bytes in its bit 3 ([`crate::ptr`]):
//! a lookup loads the word only for flagged nodes, checks the key against
//! it (an XOR and two shifts) and takes the node's shift from it. Where
//! nothing is skipped, the next chunk's shift is known before the child is
//! loaded, as in the uncompressed tree.
//!
//! **Lazy leaves** (module `lazy`), with lazy expansion. A subtree that would
//! hold one key is not built: the child slot refers to a lazy leaf instead,
//! the value slot and the whole key side by side in a pool of their own,
//! the reference tagged with bit 2. A lookup that meets one compares keys;
//! an insert that meets one with another key builds the node where the two
//! keys part.
//!
//! **What dense keys pay.** With `compression: none` nothing: the prefix
//! word is not allocated, the tag bits are never set, and the engine runs
//! the code paths it had before compression existed (callgrind counts the
//! same instructions for RT-1 and RT-5 lookups, to the instruction). With
//! compression on, a dense tree pays 16 bytes and 16-byte alignment per
//! node, one tag test per level, and the root's prefix check; that is why
//! `none` is the default except for `u128` keys, whose random values
//! (UUIDs, hashes) are the sparse case.

mod class;
pub(crate) mod lazy;
mod node16;
mod node256;
mod node4;
mod node48;
pub(crate) mod prefix;
mod sorted;

use core::ptr::NonNull;

pub use class::{MAX_CLASSES, SizeClasses};
pub(crate) use lazy::{lazy_leaf_align, lazy_leaf_size};
pub(crate) use node4::Node4;
pub(crate) use node16::Node16;
pub(crate) use node48::Node48;
pub(crate) use node256::Node256;

pub use crate::ptr::Kind;
use crate::ptr::{NODE_ALIGN, StoredRef};

/// The header every node starts with.
///
/// `count` is 16 bits so a full node256 needs no wrap-around convention.
/// `kind` repeats the pointer tag so that a node can be checked on its own.
#[repr(C)]
pub(crate) struct Header {
    pub(crate) count: u16,
    pub(crate) class: u8,
    pub(crate) kind: u8,
}

/// Offset of the slot array for slots of type `S`, given the byte offset at
/// which the kind's index ends.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) const fn slots_offset<S>(index_end: usize) -> usize {
    let align = core::mem::align_of::<S>();
    index_end.div_ceil(align) * align
}

/// Alignment of a node whose slots are `S`.
pub(crate) const fn node_align<S>() -> usize {
    let a = core::mem::align_of::<S>();
    if a > NODE_ALIGN { a } else { NODE_ALIGN }
}

/// Bytes of a node of `kind` with `capacity` slots of type `S`.
pub(crate) const fn node_size<S>(kind: Kind, capacity: usize) -> usize {
    let index_end = match kind {
        Kind::N4 => Node4::INDEX_END,
        Kind::N16 => Node16::INDEX_END,
        Kind::N48 => Node48::INDEX_END,
        Kind::N256 => Node256::INDEX_END,
    };
    let raw = slots_offset::<S>(index_end) + capacity * core::mem::size_of::<S>();
    let align = node_align::<S>();
    raw.div_ceil(align) * align
}

/// Pointer to slot `i` of a node whose slot array starts at `index_end`.
///
/// # Safety
///
/// `node` must be a live node whose allocation holds slot `i`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn slot_ptr<S>(node: NonNull<u8>, index_end: usize, i: usize) -> NonNull<S> {
    let offset = slots_offset::<S>(index_end) + i * core::mem::size_of::<S>();
    // SAFETY: the caller promises slot `i` is inside the node's allocation.
    unsafe { node.byte_add(offset).cast() }
}

/// The node's header.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn header(node: NonNull<u8>) -> NonNull<Header> {
    node.cast()
}

/// Number of children of `node`.
///
/// # Safety
///
/// `node` must point to a live node.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn count(node: NonNull<u8>) -> usize {
    // SAFETY: every node starts with an initialised header.
    unsafe { (*header(node).as_ptr()).count as usize }
}

/// Size class index of `node`.
///
/// # Safety
///
/// `node` must point to a live node.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn class(node: NonNull<u8>) -> usize {
    // SAFETY: every node starts with an initialised header.
    unsafe { (*header(node).as_ptr()).class as usize }
}

/// Writes a fresh header.
///
/// # Safety
///
/// `node` must point to writable memory of at least a header's size.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn write_header(node: NonNull<u8>, kind: Kind, class: usize) {
    // SAFETY: the caller promises the memory is writable.
    unsafe {
        header(node).write(Header {
            count: 0,
            class: class as u8,
            kind: kind as u8,
        })
    };
}

/// A word of zero bits, which reads as an absent child (`None`) for every
/// [`StoredRef`]: a branch-free search that found nothing reads it instead
/// of a slot.
static ABSENT: usize = 0;

/// The address to read a child from: slot `i` when `found`, else
/// [`ABSENT`]. Choosing the *address* keeps the search branch-free: given a
/// choice between two values, LLVM would test `found` first and branch
/// around the load; a load from a chosen address it leaves alone.
///
/// # Safety
///
/// When `found`, slot `i` of `node` (slots from `index_end`) is an
/// initialised child reference `R`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn child_or_absent<R: StoredRef>(
    node: NonNull<u8>,
    index_end: usize,
    i: usize,
    found: bool,
) -> Option<R> {
    let slot = slots_offset::<R>(index_end) + i * core::mem::size_of::<R>();
    let absent = NonNull::from(&ABSENT).cast::<Option<R>>();
    let at = core::hint::select_unpredictable(
        found,
        node.as_ptr().wrapping_add(slot).cast::<Option<R>>(),
        absent.as_ptr(),
    );
    // SAFETY: `at` is the slot (caller's contract) or ABSENT, a live,
    // aligned word of zero bits, which is `None` for a `StoredRef`.
    unsafe { at.read() }
}

/// A walk position past every entry of any kind.
pub(crate) const END: u16 = 256;

/// One entry met while walking a node in chunk order.
pub(crate) struct Entry<S> {
    pub(crate) chunk: u8,
    pub(crate) slot: NonNull<S>,
    /// The position to continue the walk from: just after this entry when
    /// walking forwards, this entry's own when walking backwards.
    pub(crate) next: u16,
}

/// The operations every node kind provides. The tree dispatches on the
/// pointer tag to one of the four implementations with [`dispatch!`].
pub(crate) trait NodeKind {
    /// The kind.
    const KIND: Kind;
    /// Byte offset at which the kind's chunk index ends.
    const INDEX_END: usize;

    /// Initialises an empty node of this kind in size class `class`.
    ///
    /// # Safety
    ///
    /// `node` must be a fresh allocation of this kind's size for the class.
    unsafe fn init(node: NonNull<u8>, class: usize);

    /// The slot for `chunk`, if present.
    ///
    /// # Safety
    ///
    /// `node` is a live node of this kind with slots of type `S`.
    unsafe fn find<S>(node: NonNull<u8>, chunk: u8) -> Option<NonNull<S>>;

    /// Starts loading the cache lines of `node`'s slots that a coming
    /// [`find`](Self::find) may read, where that pays. Only a hint: it
    /// reads nothing, so `node` need not be live.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn prefetch_slots<S>(node: NonNull<u8>) {
        let _ = node;
    }

    /// Starts loading the lines a coming lookup of `chunk` in `node` will
    /// read, a few lookups ahead of it (a batch's walk): the line its
    /// slot's address depends on, and the slot lines where they are few
    /// enough to ask for. Only a hint, like
    /// [`prefetch_slots`](Self::prefetch_slots).
    fn prefetch_lookup<S>(node: NonNull<u8>, chunk: u8);

    /// The slot for `chunk`, if present, in a node whose slots are
    /// pointer-sized words that node256 keeps null when absent (inner
    /// nodes, and leaves of
    /// [`NONNULL_SLOT`](crate::value::ValueLayout::NONNULL_SLOT) layouts).
    /// Node256 overrides it to read the slot alone, skipping its bitmap;
    /// the other kinds search as [`find`](Self::find) does.
    ///
    /// # Safety
    ///
    /// As [`find`](Self::find); also the slots are as described.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn find_nonnull<S>(node: NonNull<u8>, chunk: u8) -> Option<NonNull<S>> {
        // SAFETY: forwarded contract.
        unsafe { Self::find::<S>(node, chunk) }
    }

    /// The stored child reference for `chunk` of an inner node, if
    /// present: the hot step of every lookup. Node256 overrides it to skip
    /// its bitmap.
    ///
    /// # Safety
    ///
    /// `node` is a live inner node of this kind whose slots are `R`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn find_child<R: StoredRef>(node: NonNull<u8>, chunk: u8) -> Option<R> {
        // SAFETY: caller's contract: the slots are child references.
        unsafe { Self::find::<R>(node, chunk).map(|slot| slot.read()) }
    }

    /// Whether `chunk` is known, at the cost of a compare, to lie above
    /// every chunk of the node: a sorted kind reads its last chunk, the
    /// others answer `false` ("search"). An insert in key order then skips
    /// the search for a chunk that cannot be there.
    ///
    /// # Safety
    ///
    /// `node` is a live node of this kind, not empty (as no node in a
    /// tree is).
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn follows_last(node: NonNull<u8>, chunk: u8) -> bool {
        let _ = (node, chunk);
        false
    }

    /// Adds `chunk` with slot value `value`.
    ///
    /// # Safety
    ///
    /// As [`NodeKind::find`]; also `chunk` is absent and the node has room.
    unsafe fn insert<S>(node: NonNull<u8>, chunk: u8, value: S);

    /// For a sorted kind, the node's chunk array and count: chunk `i`'s
    /// slot is slot `i`. `None` for the other kinds.
    ///
    /// # Safety
    ///
    /// `node` is a live node of this kind.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn sorted_chunks(node: NonNull<u8>) -> Option<(NonNull<u8>, usize)> {
        let _ = node;
        None
    }

    /// Fills `node`, fresh and empty, with `n` entries given as ascending
    /// chunks and their slots, which are moved bitwise: what growing or
    /// shrinking a sorted node does. By default one insert each; the
    /// sorted kinds and node48 copy the arrays whole.
    ///
    /// # Safety
    ///
    /// `node` is a fresh, empty node of this kind with room for `n`;
    /// `chunks` and `slots` hold `n` ascending chunks and their live slot
    /// values `S`, and are not used again.
    #[inline]
    unsafe fn fill_from_sorted<S>(
        node: NonNull<u8>,
        chunks: NonNull<u8>,
        slots: NonNull<S>,
        n: usize,
    ) {
        // SAFETY: the caller's contract; each chunk is new and the node has
        // room for all.
        unsafe {
            for i in 0..n {
                Self::insert(node, chunks.add(i).read(), slots.add(i).read());
            }
        }
    }

    /// Removes `chunk` and returns its slot value, or `None` (and no
    /// change) when it is absent: one search where a removal that checks
    /// first would make two.
    ///
    /// # Safety
    ///
    /// As [`NodeKind::find`].
    unsafe fn remove<S>(node: NonNull<u8>, chunk: u8) -> Option<S>;

    /// The walk position of the first entry whose chunk is `>= chunk`.
    ///
    /// # Safety
    ///
    /// `node` is a live node of this kind.
    unsafe fn seek(node: NonNull<u8>, chunk: u8) -> u16;

    /// The first entry at or after walk position `pos`.
    ///
    /// # Safety
    ///
    /// As [`NodeKind::find`]; `pos` came from `seek` or an earlier entry.
    unsafe fn entry_at<S>(node: NonNull<u8>, pos: u16) -> Option<Entry<S>>;

    /// The last entry before walk position `end` ([`END`] for the whole
    /// node). Its `next` is its own position, so passing it back as `end`
    /// continues the walk backwards.
    ///
    /// # Safety
    ///
    /// As [`NodeKind::find`]; `end` is [`END`] or a position from this node.
    unsafe fn entry_before<S>(node: NonNull<u8>, end: u16) -> Option<Entry<S>>;
}

/// Moves every entry of `old`, a node of kind `From`, into `new`, a
/// fresh, empty node of kind `To` with room for them all: the body of
/// every growth and shrink. From a sorted kind the arrays are handed over
/// whole ([`NodeKind::fill_from_sorted`]); otherwise the entries come in
/// chunk order, each an append.
///
/// # Safety
///
/// `old` is a live node of kind `From` with slots `S`, not used again but
/// to be freed without dropping its slots; `new` is as described.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn move_entries<From: NodeKind, To: NodeKind, S>(
    old: NonNull<u8>,
    new: NonNull<u8>,
) {
    // SAFETY: the caller's contract; a sorted node's first `n` slots are
    // its entries'.
    unsafe {
        if let Some((chunks, n)) = From::sorted_chunks(old) {
            let slots = slot_ptr::<S>(old, From::INDEX_END, 0);
            To::fill_from_sorted(new, chunks, slots, n);
            return;
        }
        let mut pos = 0;
        while let Some(e) = From::entry_at::<S>(old, pos) {
            To::insert(new, e.chunk, e.slot.read());
            pos = e.next;
        }
    }
}

/// Runs `$body` with `$K` bound to the node type of `$node`, a
/// [`NodePtr`](crate::ptr::NodePtr), by testing the two bits of its tag.
///
/// Two conditional branches, not a `match` on [`Kind`]: LLVM compiles a
/// four-way `match` to a jump table, and one indirect jump then carries
/// every level's kind, for every operation, through one entry of the
/// indirect-branch predictor. The conditional predictor keeps a history per
/// branch, so a descent whose kinds change level by level (node4s above
/// node48s, say) is predicted where the shared jump was not, and a level
/// costs no table load. Lookups run 4 to 9 fewer instructions (RT-1 to
/// RT-5), RT-3's take 0.71x to 0.75x the time and RT-4's 0.68x to 0.96x;
/// rows with one kind per level move within the machine's spread
/// (`benches/RESULTS.md`, "The kind dispatch as two bit tests"). The
/// tests read the tag as a plain integer: from a [`Kind`], whose range
/// LLVM knows, it rebuilds the jump table.
macro_rules! dispatch {
    ($node:expr, $K:ident => $body:expr) => {{
        let bits = $crate::ptr::NodePtr::tag_bits($node);
        if bits & 2 == 0 {
            if bits & 1 == 0 {
                type $K = $crate::node::Node4;
                $body
            } else {
                type $K = $crate::node::Node16;
                $body
            }
        } else if bits & 1 == 0 {
            type $K = $crate::node::Node48;
            $body
        } else {
            type $K = $crate::node::Node256;
            $body
        }
    }};
}
pub(crate) use dispatch;

/// Runs `$body` with `$K` bound to the node type for `$kind`, a [`Kind`]
/// with no node yet (a node being made); [`dispatch!`] is the form for a
/// node pointer.
macro_rules! dispatch_kind {
    ($kind:expr, $K:ident => $body:expr) => {
        match $kind {
            $crate::node::Kind::N4 => {
                type $K = $crate::node::Node4;
                $body
            }
            $crate::node::Kind::N16 => {
                type $K = $crate::node::Node16;
                $body
            }
            $crate::node::Kind::N48 => {
                type $K = $crate::node::Node48;
                $body
            }
            $crate::node::Kind::N256 => {
                type $K = $crate::node::Node256;
                $body
            }
        }
    };
}
pub(crate) use dispatch_kind;

#[cfg(test)]
mod tests;
