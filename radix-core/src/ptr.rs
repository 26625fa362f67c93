//! Tagged child pointers.
//!
//! Every node is at least 8-byte aligned, so the three low bits of a node's
//! address are zero. A child pointer spends two of them on the node's
//! [`Kind`], which lets a lookup descend a level with one load and one 4-way
//! match, without first loading a header to learn what the child is. Bit 0
//! stays zero: it is reserved for the "embedded value" tag of the
//! [`Varlen`](crate::value::Varlen) layout, whose slots share the word.
//!
//! All bit manipulation goes through the strict-provenance APIs
//! ([`NonNull::addr`], [`NonNull::map_addr`]), so the pointer never loses
//! the provenance of the allocation it came from and Miri can check every
//! access with `-Zmiri-strict-provenance`.

use core::fmt;
use core::ptr::NonNull;

use crate::node::Kind;

/// The alignment every node has, and so the number of low address bits the
/// tags may use.
pub const NODE_ALIGN: usize = 8;

const KIND_SHIFT: usize = 1;
const KIND_MASK: usize = 0b110;
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
    #[inline(always)]
    pub fn new(node: NonNull<u8>, kind: Kind) -> Self {
        debug_assert_eq!(node.addr().get() & TAG_MASK, 0, "misaligned node");
        let tagged = node.map_addr(|a| a | ((kind as usize) << KIND_SHIFT));
        Self { tagged }
    }

    /// The kind of the node this points to, read from the tag alone.
    #[inline(always)]
    pub fn kind(self) -> Kind {
        Kind::from_bits((self.tagged.addr().get() & KIND_MASK) >> KIND_SHIFT)
    }

    /// The node's address, tags removed, with the original provenance.
    #[inline(always)]
    pub fn addr(self) -> NonNull<u8> {
        self.tagged.map_addr(|a| {
            // SAFETY: the untagged address is a node's, which is a real
            // allocation and so not at address zero; only tag bits, which
            // `new` added to it, are cleared.
            unsafe { core::num::NonZeroUsize::new_unchecked(a.get() & !TAG_MASK) }
        })
    }

    /// The node's address, cast to its concrete type.
    #[inline(always)]
    pub fn cast<T>(self) -> NonNull<T> {
        self.addr().cast()
    }
}

impl fmt::Debug for NodePtr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}@{:#x}", self.kind(), self.addr().addr().get())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip_and_keep_bit_zero_clear() {
        let mut storage = [0u64; 4];
        let base = NonNull::from(&mut storage).cast::<u8>();
        for kind in [Kind::N4, Kind::N16, Kind::N48, Kind::N256] {
            let p = NodePtr::new(base, kind);
            assert_eq!(p.kind(), kind);
            assert_eq!(p.addr(), base);
            assert_eq!(p.tagged.addr().get() & 1, 0);
            // The untagged pointer is still usable for access.
            // SAFETY: `storage` is alive and 8-aligned; the pointer came from it.
            unsafe { p.cast::<u64>().write(7) };
        }
        assert_eq!(storage[0], 7);
    }
}
