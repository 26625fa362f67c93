//! The prefix word of a path-compressed node.
//!
//! With path compression an inner node never has a single child: it is
//! merged into that child, which then consumes its chunk at a lower shift
//! than its depth implies, having *skipped* the merged nodes' chunks. The
//! node must record both the skipped bytes (a lookup that diverges inside
//! them must miss) and its own shift (the descent no longer knows it).
//!
//! One key-wide word does both, stored just *in front of* the node, so the
//! four node kinds and their index offsets are the same with and without
//! compression: the word is the node's *whole* key prefix, every bit of the
//! keys below it above its chunk, with the node's shift in the low byte
//! (those bits lie below the chunk, so a prefix never uses them; see
//! [`Key::prefix_word`]). A lookup checks it in full ("pessimistic" in the
//! ART paper's terms): one load, an XOR and two shifts say whether the key
//! agrees with the node on every bit above its chunk, whatever the number
//! of skipped bytes, so no lookup ever re-reads a key to confirm a match.
//! Up to 15 skipped bytes of a `u128` key fit, so long prefixes need no
//! chains of nodes. And since the word holds whole keys' bits rather than
//! just the skipped ones, splitting a prefix or merging a node away never
//! rewrites the node below: its word stays true.
//!
//! The space in front is [`Pools::PREFIX`](crate::config::Pools) bytes:
//! the key's width, at least 8 and a multiple of the nodes' alignment, so
//! the word is read unaligned only for `u128` keys over 8-aligned nodes.

use core::ptr::NonNull;

use crate::key::Key;

/// The prefix word of `node`.
///
/// # Safety
///
/// `node` is a live node of a path-compressed tree whose key type is `K`
/// (so that the bytes before it hold its prefix word).
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn prefix_word<K: Key>(node: NonNull<u8>) -> K {
    // SAFETY: the caller's contract: the `size_of::<K>()` bytes before the
    // node are its initialised prefix word, inside the node's allocation.
    unsafe {
        node.byte_sub(size_of::<K>())
            .cast::<K>()
            .as_ptr()
            .read_unaligned()
    }
}

/// Stores `word` as `node`'s prefix word.
///
/// # Safety
///
/// `node` was allocated with room for a prefix word of `K` in front of it,
/// and is not being read.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn set_prefix_word<K: Key>(node: NonNull<u8>, word: K) {
    // SAFETY: the caller's contract: the bytes in front are the node's.
    unsafe {
        node.byte_sub(size_of::<K>())
            .cast::<K>()
            .as_ptr()
            .write_unaligned(word)
    }
}
