//! The sorted-array index shared by node4 and node16.
//!
//! Both kinds keep their chunks in a sorted byte array, with the slot for
//! `chunks[i]` at slot `i`. They differ only in the array's length and in
//! how they search it, which each kind supplies through [`ChunkSearch`].
//!
//! The whole chunk array is kept initialised and *padded*: every byte past
//! `count` repeats the last chunk. A search may then compare the whole array
//! (four bytes at once for node4, two vectors for node16) and take the
//! lowest match without reading the count: a repeat of the last chunk can
//! only match after the last chunk itself has. Appends and removals rewrite
//! the padding; `verify` checks it. (A node with no chunks is never
//! searched: the tree frees a node as soon as it is empty.)

use core::ptr::NonNull;

use super::{Entry, Kind, count, header, slot_ptr, slots_offset, write_header};
use crate::ptr::StoredRef;
use crate::simd;

/// Where the chunk array starts: right after the 4-byte header.
pub(crate) const CHUNKS_AT: usize = 4;

/// How a sorted kind searches its chunk array.
pub(crate) trait ChunkSearch {
    /// The kind.
    const KIND: Kind;
    /// Whether a lookup should prefetch the slot array while it searches
    /// the chunks (see [`find`]).
    const PREFETCH_SLOTS: bool;
    /// Length of the chunk array.
    const CHUNKS: usize;
    /// Whether [`position`](Self::position) is branch-free. A lookup then
    /// selects the slot or an absent word without a branch (see
    /// [`find_child`]); a kind that searches by branches has already
    /// decided, and reads its slot only when found.
    const BRANCH_FREE: bool;
    /// Whether a lookup first tries the index a run of consecutive chunks
    /// would put `chunk` at ([`run_guess`]); node16 does, node4's compare
    /// chain needs no guess.
    const GUESS_RUN: bool;
    /// Index of `chunk` in the padded array of a non-empty node.
    fn find(chunks: NonNull<u8>, chunk: u8) -> Option<usize>;
    /// [`find`](Self::find) in the form a lookup wants: whether `chunk` is
    /// there, and its index if so (else any index). Branch-free where the
    /// kind's search is; see each kind for why it is or is not.
    fn position(chunks: NonNull<u8>, chunk: u8) -> (bool, usize);
    /// Index of the first of the `count` chunks of a padded array that is
    /// `>= chunk` (`count` when there is none).
    fn lower_bound(chunks: NonNull<u8>, count: usize, chunk: u8) -> usize;
    /// Sets every byte of the array from `from` on to `chunk`, in a fixed
    /// number of instructions (a `write_bytes` of a run-time length is a
    /// call to `memset`).
    ///
    /// # Safety
    ///
    /// `chunks` is a whole chunk array of this kind; `from <= CHUNKS`.
    unsafe fn pad(chunks: NonNull<u8>, from: usize, chunk: u8);
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn chunks(node: NonNull<u8>) -> NonNull<u8> {
    // SAFETY: the chunk array lies inside every sorted node's allocation.
    unsafe { node.byte_add(CHUNKS_AT) }
}

#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) const fn index_end<K: ChunkSearch>() -> usize {
    CHUNKS_AT + K::CHUNKS
}

/// # Safety
///
/// `node` is a fresh allocation for a sorted node of kind `K`.
#[inline]
pub(crate) unsafe fn init<K: ChunkSearch>(node: NonNull<u8>, class: usize) {
    // SAFETY: the allocation covers header and chunk array.
    unsafe {
        write_header(node, K::KIND, class);
        chunks(node).write_bytes(0, K::CHUNKS);
    }
}

/// # Safety
///
/// `node` is a live sorted node of kind `K` with slots `S`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn find<K: ChunkSearch, S>(node: NonNull<u8>, chunk: u8) -> Option<NonNull<S>> {
    // SAFETY: caller's contract; a live node is not empty, so a match in
    // its padded array is at `i < count <= capacity`.
    unsafe {
        debug_assert!(count(node) > 0, "search of an empty node");
        if K::GUESS_RUN
            && let Some(i) = run_guess::<K>(node, chunk)
        {
            return Some(slot_ptr(node, index_end::<K>(), i));
        }
        let i = K::find(chunks(node), chunk)?;
        Some(slot_ptr(node, index_end::<K>(), i))
    }
}

/// The child reference for `chunk`, or `None`. A kind that guesses runs
/// first reads the slot a run would put `chunk` at, if a compare confirms
/// it ([`run_guess`]). A branch-free kind then reads it
/// with no branch on whether it is there (see
/// [`child_or_absent`](super::child_or_absent)): the one branch left, on the
/// result, comes after the load, so a lookup's next level can start before
/// it resolves. A kind that searches by branches reads the slot behind
/// them: selecting an address there would only add instructions to every
/// miss.
///
/// # Safety
///
/// `node` is a live inner node of kind `K` whose slots are `R`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn find_child<K: ChunkSearch, R: StoredRef>(
    node: NonNull<u8>,
    chunk: u8,
) -> Option<R> {
    if K::GUESS_RUN {
        // SAFETY: caller's contract; a live node is not empty, and a found
        // index is below the count.
        if let Some(i) = unsafe { run_guess::<K>(node, chunk) } {
            // SAFETY: as above: slot `i` holds a live child reference.
            return Some(unsafe { slot_ptr::<R>(node, index_end::<K>(), i).read() });
        }
    }
    if K::BRANCH_FREE {
        let (found, i) = K::position(chunks(node), chunk);
        // SAFETY: caller's contract; a found index is below the count.
        unsafe { super::child_or_absent::<R>(node, index_end::<K>(), i, found) }
    } else {
        let i = K::find(chunks(node), chunk)?;
        // SAFETY: caller's contract; a found index is below the count, so
        // its slot holds a live child reference.
        Some(unsafe { slot_ptr::<R>(node, index_end::<K>(), i).read() })
    }
}

/// The index `chunk` would have if the node's chunks were a run of
/// consecutive values, if it is there: `chunk - chunks[0]`, confirmed
/// against the count and the chunk at that index. The count test keeps the
/// padding out: past the last entry every byte repeats the last chunk, so
/// without it a node `[1, 3]` would "find" 3 at index 2.
///
/// Why a kind would guess: a search whose index comes out of a vector
/// compare, a mask and a bit scan puts about fifteen cycles of arithmetic
/// between a node's load and its child's, on the path every level of a
/// lookup waits for. The guess is two loads and a subtraction, and when a
/// predicted branch confirms it, the child's load starts right after the
/// first chunk arrives. Runs are what dense keys make: in-order block
/// numbers, the TID store's keys, every level of RT-5. Against the search
/// alone (`benches/RESULTS.md`, "Node16 guesses a run"), RT-5 lookups at
/// fanouts 15, 16 and 32 take 0.52x to 0.57x the time and RT-1's 0.78x;
/// random keys, whose node16s are no runs, pay the compare and a branch
/// that is right on all but the lookups of a node's first chunk: RT-3 and
/// RT-4 take 1.02x to 1.04x.
///
/// # Safety
///
/// `node` is a live, non-empty sorted node of kind `K`.
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn run_guess<K: ChunkSearch>(node: NonNull<u8>, chunk: u8) -> Option<usize> {
    // SAFETY: caller's contract: the header and the whole chunk array are
    // initialised, and `i < count <= K::CHUNKS` is checked before the read.
    unsafe {
        let i = usize::from(chunk.wrapping_sub(chunks(node).read()));
        (i < count(node) && chunks(node).add(i).read() == chunk).then_some(i)
    }
}

/// Prefetches the slot array's lines after the first, for kinds that ask
/// for it.
///
/// The chunks share the node's first cache line; the slot sought is most
/// likely in one of the (up to four) lines after it, and which one is known
/// only once the chunk line has arrived. Asking for them first overlaps
/// their misses with the chunk line's instead of queueing one behind the
/// other.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn prefetch_slots<K: ChunkSearch, S>(node: NonNull<u8>) {
    if K::PREFETCH_SLOTS {
        let end = slots_offset::<S>(index_end::<K>()) + K::CHUNKS * size_of::<S>();
        for line in 1..end.div_ceil(64).min(5) {
            simd::prefetch(node.as_ptr().cast_const().wrapping_add(64 * line));
        }
    }
}

/// How many of a sorted node's lines a batch's walk prefetches, from the
/// header line with the chunks on: three hold the first 19 slots, all of
/// a node16 of the smallest class (16 entries). A node16 of the larger
/// class (32) spans five; asking for all five on every walk cost more in
/// memory traffic than the later miss on a slot past the third line
/// (random keys over half-full node16s, RT-2 `random_block`: 0.88x the
/// time with three; full ones, RT-2: 0.94x), and asking for the header
/// line alone left that miss to most lookups of full nodes (RT-2: 1.8x).
const WALK_LINES: usize = 3;

/// [`NodeKind::prefetch_lookup`](super::NodeKind::prefetch_lookup) for
/// the sorted kinds: the header line, and where the kind prefetches its
/// slots, the next lines up to [`WALK_LINES`].
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn prefetch_lookup<K: ChunkSearch, S>(node: NonNull<u8>) {
    simd::prefetch(node.as_ptr().cast_const());
    if K::PREFETCH_SLOTS {
        let end = slots_offset::<S>(index_end::<K>()) + K::CHUNKS * size_of::<S>();
        for line in 1..end.div_ceil(64).min(WALK_LINES) {
            simd::prefetch(node.as_ptr().cast_const().wrapping_add(64 * line));
        }
    }
}

/// Whether `chunk` is above the node's last chunk.
///
/// # Safety
///
/// `node` is a live, non-empty sorted node of kind `K`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn follows_last<K: ChunkSearch>(node: NonNull<u8>, chunk: u8) -> bool {
    // SAFETY: caller's contract; `count - 1` indexes a chunk in the array.
    unsafe {
        debug_assert!(count(node) > 0, "last chunk of an empty node");
        chunks(node).add(count(node) - 1).read() < chunk
    }
}

/// # Safety
///
/// As [`find`]; `chunk` is absent and `count < capacity`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn insert<K: ChunkSearch, S>(node: NonNull<u8>, chunk: u8, value: S) {
    // SAFETY: caller's contract; every index used is `<= count < capacity`.
    unsafe {
        let n = count(node);
        let chunks = chunks(node);
        // Keys inserted in order always land at the end: test that first.
        let pos = if n == 0 || follows_last::<K>(node, chunk) {
            n
        } else {
            K::lower_bound(chunks, n, chunk)
        };
        if pos < n {
            // The old last chunk moves to `n`, where the padding already
            // repeats it.
            chunks.add(pos).copy_to(chunks.add(pos + 1), n - pos);
            let first = slot_ptr::<S>(node, index_end::<K>(), pos);
            first.copy_to(first.add(1), n - pos);
            chunks.add(pos).write(chunk);
        } else {
            // A new last chunk: it is also the new padding.
            K::pad(chunks, n, chunk);
        }
        slot_ptr::<S>(node, index_end::<K>(), pos).write(value);
        (*header(node).as_ptr()).count = (n + 1) as u16;
    }
}

/// # Safety
///
/// As [`NodeKind::fill_from_sorted`](super::NodeKind::fill_from_sorted),
/// for a node of kind `K`.
#[inline]
pub(crate) unsafe fn fill_from_sorted<K: ChunkSearch, S>(
    node: NonNull<u8>,
    from: NonNull<u8>,
    slots: NonNull<S>,
    n: usize,
) {
    // SAFETY: the caller's contract: `n` is at most the node's capacity,
    // so within its chunk array and slots; the source arrays are another
    // node's, so they do not overlap these.
    unsafe {
        let chunks = chunks(node);
        from.copy_to_nonoverlapping(chunks, n);
        // The padding repeats the last chunk (any byte for no entries).
        let last = if n > 0 { from.add(n - 1).read() } else { 0 };
        K::pad(chunks, n, last);
        slots.copy_to_nonoverlapping(slot_ptr::<S>(node, index_end::<K>(), 0), n);
        (*header(node).as_ptr()).count = n as u16;
    }
}

/// # Safety
///
/// As [`find`].
#[inline]
pub(crate) unsafe fn remove<K: ChunkSearch, S>(node: NonNull<u8>, chunk: u8) -> Option<S> {
    // SAFETY: caller's contract; a match in the padded array is below the
    // count.
    unsafe {
        let n = count(node);
        let chunks = chunks(node);
        let pos = K::find(chunks, chunk)?;
        let slot = slot_ptr::<S>(node, index_end::<K>(), pos);
        let value = slot.read();
        let after = n - pos - 1;
        if after > 0 {
            chunks.add(pos + 1).copy_to(chunks.add(pos), after);
            slot.add(1).copy_to(slot, after);
        }
        // Pad from the new count with the new last chunk (any byte when the
        // node is now empty: it is freed without another search).
        let last = if n > 1 { chunks.add(n - 2).read() } else { 0 };
        K::pad(chunks, n - 1, last);
        (*header(node).as_ptr()).count = (n - 1) as u16;
        Some(value)
    }
}

/// # Safety
///
/// `node` is a live sorted node of kind `K`.
#[inline]
pub(crate) unsafe fn seek<K: ChunkSearch>(node: NonNull<u8>, chunk: u8) -> u16 {
    // SAFETY: caller's contract.
    unsafe { K::lower_bound(chunks(node), count(node), chunk) as u16 }
}

/// # Safety
///
/// As [`find`].
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn entry_at<K: ChunkSearch, S>(node: NonNull<u8>, pos: u16) -> Option<Entry<S>> {
    let pos = pos as usize;
    // SAFETY: caller's contract; `pos < count`.
    unsafe {
        if pos >= count(node) {
            return None;
        }
        Some(Entry {
            chunk: chunks(node).add(pos).read(),
            slot: slot_ptr(node, index_end::<K>(), pos),
            next: (pos + 1) as u16,
        })
    }
}

/// # Safety
///
/// As [`find`].
#[inline]
pub(crate) unsafe fn entry_before<K: ChunkSearch, S>(
    node: NonNull<u8>,
    end: u16,
) -> Option<Entry<S>> {
    // SAFETY: caller's contract; `pos < count`.
    unsafe {
        let pos = (end as usize).min(count(node)).checked_sub(1)?;
        Some(Entry {
            chunk: chunks(node).add(pos).read(),
            slot: slot_ptr(node, index_end::<K>(), pos),
            next: pos as u16,
        })
    }
}

/// Whether the bytes past the count repeat the last chunk; for invariant
/// checks.
///
/// # Safety
///
/// `node` is a live, non-empty sorted node of kind `K`.
pub(crate) unsafe fn check_padding<K: ChunkSearch>(node: NonNull<u8>) -> Result<(), &'static str> {
    // SAFETY: caller's contract; the whole array is initialised.
    unsafe {
        let n = count(node);
        let chunks = chunks(node);
        let last = chunks.add(n - 1).read();
        if (n..K::CHUNKS).any(|i| chunks.add(i).read() != last) {
            return Err("chunk array padding does not repeat the last chunk");
        }
    }
    Ok(())
}

/// Implements [`NodeKind`](super::NodeKind) for a sorted kind by
/// forwarding to this module.
macro_rules! sorted_node_kind {
    ($ty:ty) => {
        impl $ty {
            /// Checks the chunk array's padding; for invariant checks.
            ///
            /// # Safety
            ///
            /// `node` is a live, non-empty node of this kind.
            pub(crate) unsafe fn check(node: NonNull<u8>) -> Result<(), &'static str> {
                // SAFETY: forwarded contract.
                unsafe { $crate::node::sorted::check_padding::<$ty>(node) }
            }
        }

        impl $crate::node::NodeKind for $ty {
            const KIND: $crate::node::Kind = <$ty as $crate::node::sorted::ChunkSearch>::KIND;
            const INDEX_END: usize = $crate::node::sorted::index_end::<$ty>();

            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn init(node: NonNull<u8>, class: usize) {
                // SAFETY: forwarded contract.
                unsafe { $crate::node::sorted::init::<$ty>(node, class) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn find<S>(node: NonNull<u8>, chunk: u8) -> Option<NonNull<S>> {
                // SAFETY: forwarded contract.
                unsafe { $crate::node::sorted::find::<$ty, S>(node, chunk) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn find_child<R: $crate::ptr::StoredRef>(
                node: NonNull<u8>,
                chunk: u8,
            ) -> Option<R> {
                // SAFETY: forwarded contract.
                unsafe { $crate::node::sorted::find_child::<$ty, R>(node, chunk) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn prefetch_slots<S>(node: NonNull<u8>) {
                $crate::node::sorted::prefetch_slots::<$ty, S>(node)
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn prefetch_lookup<S>(node: NonNull<u8>, chunk: u8) {
                let _ = chunk;
                $crate::node::sorted::prefetch_lookup::<$ty, S>(node)
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn follows_last(node: NonNull<u8>, chunk: u8) -> bool {
                // SAFETY: forwarded contract.
                unsafe { $crate::node::sorted::follows_last::<$ty>(node, chunk) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn sorted_chunks(node: NonNull<u8>) -> Option<(NonNull<u8>, usize)> {
                // SAFETY: forwarded contract: a live node's header.
                let n = unsafe { $crate::node::count(node) };
                // SAFETY: the chunk array lies inside the node.
                Some((unsafe { node.byte_add($crate::node::sorted::CHUNKS_AT) }, n))
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn fill_from_sorted<S>(
                node: NonNull<u8>,
                chunks: NonNull<u8>,
                slots: NonNull<S>,
                n: usize,
            ) {
                // SAFETY: forwarded contract.
                unsafe { $crate::node::sorted::fill_from_sorted::<$ty, S>(node, chunks, slots, n) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn insert<S>(node: NonNull<u8>, chunk: u8, value: S) {
                // SAFETY: forwarded contract.
                unsafe { $crate::node::sorted::insert::<$ty, S>(node, chunk, value) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn remove<S>(node: NonNull<u8>, chunk: u8) -> Option<S> {
                // SAFETY: forwarded contract.
                unsafe { $crate::node::sorted::remove::<$ty, S>(node, chunk) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn seek(node: NonNull<u8>, chunk: u8) -> u16 {
                // SAFETY: forwarded contract.
                unsafe { $crate::node::sorted::seek::<$ty>(node, chunk) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn entry_at<S>(node: NonNull<u8>, pos: u16) -> Option<$crate::node::Entry<S>> {
                // SAFETY: forwarded contract.
                unsafe { $crate::node::sorted::entry_at::<$ty, S>(node, pos) }
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            unsafe fn entry_before<S>(
                node: NonNull<u8>,
                end: u16,
            ) -> Option<$crate::node::Entry<S>> {
                // SAFETY: forwarded contract.
                unsafe { $crate::node::sorted::entry_before::<$ty, S>(node, end) }
            }
        }
    };
}
pub(crate) use sorted_node_kind;
