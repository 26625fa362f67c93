//! Tagged child pointers, and the words a tree stores for them.
//!
//! Every node is at least 8-byte aligned, so the three low bits of a node's
//! address are zero. A child pointer spends the lowest two on the node's
//! [`Kind`], which lets a lookup descend a level with one load and two bit
//! tests (the engine's `dispatch!`), without first loading a header to
//! learn what the child is. The kind sits in bits 0 and 1, not higher, so
//! that the dispatch tests the word as it is and needs no shift, and a
//! node's fields are read at offsets with the tag subtracted
//! ([`NodePtr::addr_as`]) rather than through a masked address. Bit 2
//! marks a *lazy leaf* (a key and its value standing for a subtree of one
//! key, see [`crate::node`]) in trees with lazy expansion; its kind bits
//! are zero.
//!
//! Path-compressed trees align their nodes to 16 bytes and spend bit 3 of a
//! *stored child reference* on whether the node skips key bytes (its prefix
//! word records a shift below the chunk after its parent's, see
//! [`crate::node`]). A lookup reads that word only where the flag
//! says so, so the keys of a dense tree, which skip nothing, descend as in
//! an uncompressed tree: the next chunk's shift is known before the child
//! is loaded, not read from it. The engine strips the flag
//! ([`NodePtr::without_prefixed`]) before it uses the pointer. (The [`Varlen`](crate::value::Varlen) layout's
//! "embedded value" tag is bit 0 too, but of *value* slots, which never
//! hold a node pointer: each level's slots are all children or all values.)
//!
//! Two types carry a reference to a node:
//!
//! - [`NodePtr`] is the in-process form: a tagged address, what the engine
//!   dereferences.
//! - A [`StoredRef`] is what a slot (or a tree's root field) *stores*, and
//!   the memory back end decides what it is
//!   ([`Memory::Ref`](crate::mem::Memory::Ref)): for local memory the
//!   tagged address itself ([`LocalRef`]), for shared memory a tagged
//!   offset into a shared area. The back end converts between
//!   the two with the tag bits untouched, so a descent reads the kind from
//!   either form.
//!
//! All bit manipulation goes through the strict-provenance APIs
//! ([`NonNull::addr`], [`NonNull::map_addr`]), so the pointer never loses
//! the provenance of the allocation it came from and Miri can check every
//! access with `-Zmiri-strict-provenance`.

use core::fmt;
use core::ptr::NonNull;

/// The four node kinds. The discriminant is the pointer tag.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Kind {
    /// Up to 4 children, found by a scan of a sorted chunk array.
    N4 = 0,
    /// Up to 32 children, found by a SIMD compare of a sorted chunk array.
    N16 = 1,
    /// Up to 64 children, found through a 256-entry chunk-to-slot map.
    N48 = 2,
    /// All 256 children, indexed directly by chunk.
    N256 = 3,
}

impl Kind {
    /// The kind whose capacity range contains `cap`.
    pub const fn for_capacity(cap: usize) -> Self {
        match cap {
            0..=4 => Kind::N4,
            5..=32 => Kind::N16,
            33..=64 => Kind::N48,
            _ => Kind::N256,
        }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn from_bits(bits: usize) -> Self {
        match bits & 3 {
            0 => Kind::N4,
            1 => Kind::N16,
            2 => Kind::N48,
            _ => Kind::N256,
        }
    }
}

/// The alignment every node has, and so the number of low address bits the
/// tags may use.
pub const NODE_ALIGN: usize = 8;

const KIND_SHIFT: usize = 0;
const KIND_MASK: usize = 0b11;
const LAZY_BIT: usize = 0b100;
const PREFIXED_BIT: usize = 0b1000;
const TAG_MASK: usize = NODE_ALIGN - 1;

/// A pointer to a node, tagged with the node's kind.
///
/// `NodePtr` is `Copy` and carries no lifetime: it is the raw currency of
/// the engine. Whoever dereferences it must know the node is alive.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct NodePtr {
    tagged: NonNull<u8>,
}

impl NodePtr {
    /// Tags `node`, which must be [`NODE_ALIGN`]-aligned, with `kind`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn new(node: NonNull<u8>, kind: Kind) -> Self {
        debug_assert_eq!(node.addr().get() & TAG_MASK, 0, "misaligned node");
        let tagged = node.map_addr(|a| a | ((kind as usize) << KIND_SHIFT));
        Self { tagged }
    }

    /// Tags `leaf`, which must be [`NODE_ALIGN`]-aligned, as a lazy leaf.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn lazy(leaf: NonNull<u8>) -> Self {
        debug_assert_eq!(leaf.addr().get() & TAG_MASK, 0, "misaligned lazy leaf");
        Self {
            tagged: leaf.map_addr(|a| a | LAZY_BIT),
        }
    }

    /// Whether this points to a lazy leaf rather than a node.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn is_lazy(self) -> bool {
        self.tagged.addr().get() & LAZY_BIT != 0
    }

    /// Whether this points to a lazy leaf, or (path compression) to a node
    /// that skips key bytes: whether a lookup must look closer before it
    /// descends. One test of the tag for both.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn needs_check(self) -> bool {
        self.tagged.addr().get() & (LAZY_BIT | PREFIXED_BIT) != 0
    }

    /// Whether the reference this came from flags a node that skips key
    /// bytes (path-compressed trees only).
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn is_prefixed(self) -> bool {
        !self.is_lazy() && self.tagged.addr().get() & PREFIXED_BIT != 0
    }

    /// This node pointer with the skipped-bytes flag set as `prefixed`
    /// says. The node must be 16-aligned, as path-compressed trees' are.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn with_prefixed(self, prefixed: bool) -> Self {
        debug_assert!(!self.is_lazy(), "a lazy leaf has no prefix");
        let flag = if prefixed { PREFIXED_BIT } else { 0 };
        Self {
            tagged: self.tagged.map_addr(|a| {
                // SAFETY: a node's address is not zero; only a tag bit
                // below its alignment changes.
                unsafe { core::num::NonZeroUsize::new_unchecked((a.get() & !PREFIXED_BIT) | flag) }
            }),
        }
    }

    /// This node pointer without the skipped-bytes flag: the form every
    /// other method expects. A lazy leaf is returned unchanged (bit 3 is
    /// part of its address).
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn without_prefixed(self) -> Self {
        if self.is_lazy() {
            self
        } else {
            self.with_prefixed(false)
        }
    }

    /// A node pointer from its tagged form, as [`NodePtr::tagged`] gave it.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn from_tagged(tagged: NonNull<u8>) -> Self {
        Self { tagged }
    }

    /// The tagged form: the node's address with the kind in its low bits.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn tagged(self) -> NonNull<u8> {
        self.tagged
    }

    /// The tag's kind bits as a plain integer (its low two bits are the
    /// [`Kind`] discriminant; the rest are not cleared), for
    /// [`dispatch!`](crate::node::dispatch), which tests them one by one.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn tag_bits(self) -> usize {
        self.tagged.addr().get() >> KIND_SHIFT
    }

    /// The kind of the node this points to, read from the tag alone.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn kind(self) -> Kind {
        kind_of(self.tagged.addr().get())
    }

    /// The node's address, tags removed, with the original provenance.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn addr(self) -> NonNull<u8> {
        self.tagged.map_addr(|a| {
            // SAFETY: the untagged address is a node's, which is a real
            // allocation and so not at address zero; only tag bits, which
            // `new` added to it, are cleared.
            unsafe { core::num::NonZeroUsize::new_unchecked(a.get() & !TAG_MASK) }
        })
    }

    /// The node's address, given the kind its tag holds: the tag is then a
    /// constant to subtract, which the compiler folds into the offsets of
    /// the loads that follow, where [`addr`](Self::addr) costs a mask.
    /// Used where a dispatch on the kind has just established it.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn addr_as(self, kind: Kind) -> NonNull<u8> {
        debug_assert_eq!(self.kind(), kind, "addr_as with another kind");
        debug_assert!(!self.is_lazy(), "addr_as of a lazy leaf");
        let tag = (kind as usize) << KIND_SHIFT;
        self.tagged.map_addr(|a| {
            // SAFETY: the tag was added by `new` to a real, aligned node
            // address, which taking it away gives back (and which is not
            // zero); the caller promises this is the pointer's tag.
            unsafe { core::num::NonZeroUsize::new_unchecked(a.get() - tag) }
        })
    }
}

/// The node kind carried by the low bits of a tagged word.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn kind_of(tagged: usize) -> Kind {
    Kind::from_bits((tagged & KIND_MASK) >> KIND_SHIFT)
}

impl fmt::Debug for NodePtr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_lazy() {
            return write!(f, "Lazy@{:#x}", self.addr().addr().get());
        }
        write!(f, "{:?}@{:#x}", self.kind(), self.addr().addr().get())
    }
}

/// A word a tree stores to refer to a node or a leaf: what a child slot, a
/// leaf-value slot and the root field hold. The memory back end chooses the
/// type ([`Memory::Ref`](crate::mem::Memory::Ref)) and converts it to and
/// from addresses.
///
/// # Safety
///
/// Implementors are `#[repr(transparent)]` over a non-zero, pointer-sized
/// word (a `NonNull` or a `NonZeroUsize`), so that a slot of all zero bits
/// reads as `None` when read as `Option<Self>`: inner node256s rely on it
/// to find a child with one load.
pub unsafe trait StoredRef:
    crate::sealed::Sealed + Copy + Eq + fmt::Debug + 'static
{
}

/// What a local tree stores: the tagged address itself, with its provenance.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct LocalRef(pub(crate) NonNull<u8>);

impl crate::sealed::Sealed for LocalRef {}

// SAFETY: a transparent `NonNull<u8>`.
unsafe impl StoredRef for LocalRef {}

impl fmt::Debug for LocalRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LocalRef({:#x})", self.0.addr().get())
    }
}

static_assertions::assert_eq_size!(LocalRef, Option<LocalRef>, usize);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip_and_keep_bit_two_clear() {
        let mut storage = [0u64; 4];
        let base = NonNull::from(&mut storage).cast::<u8>();
        for kind in [Kind::N4, Kind::N16, Kind::N48, Kind::N256] {
            let p = NodePtr::new(base, kind);
            assert_eq!(p.kind(), kind);
            assert_eq!(p.addr(), base);
            assert_eq!(p.tagged.addr().get() & 4, 0);
            assert!(!p.is_lazy());
            assert_eq!(NodePtr::from_tagged(p.tagged()), p);
            // The untagged pointer is still usable for access.
            // SAFETY: `storage` is alive and 8-aligned; the pointer came from it.
            unsafe { p.addr().cast::<u64>().write(7) };
        }
        assert_eq!(storage[0], 7);
        let leaf = NodePtr::lazy(base);
        assert!(leaf.is_lazy());
        assert_eq!(leaf.addr(), base);
    }
}
