//! The configuration a `radix_tree!` invocation fills in.
//!
//! A configuration is a zero-sized type naming every compile-time choice:
//! key width, value layout, memory back end, node size classes and whether
//! deletion exists. The engine is written once against this trait and the
//! compiler specialises it per configuration, so a finished tree has no
//! run-time configuration branches, as PostgreSQL's `radixtree.h` template
//! achieves with the preprocessor.

use crate::key::Key;
use crate::mem::{Memory, PoolSpec};
use crate::node::{
    MAX_CLASSES, SizeClasses, lazy_leaf_align, lazy_leaf_size, node_align, node_size,
};
use crate::value::ValueLayout;

/// Which of the ART paper's two space savings a tree applies to sparse
/// keys (`src/node/mod.rs`, "Compression", says how each is laid out and
/// checked).
///
/// | choice | a subtree holding one key | an inner node with one child |
/// |---|---|---|
/// | [`None`](Compression::None) | a chain of single-child nodes | kept |
/// | [`Lazy`](Compression::Lazy) | one *lazy leaf*: the key and its value | kept |
/// | [`Path`](Compression::Path) | a chain ending in one node | merged into its child, whose *prefix* records the skipped bytes |
/// | [`Full`](Compression::Full) | one lazy leaf | merged into its child |
///
/// Dense keys (block numbers, row ids) have neither shape, so `None`
/// serves them best: it is exactly the uncompressed engine, with no prefix
/// word before each node and no test for a lazy leaf on each level.
/// Random or hashed keys (`u64` ids, `u128` UUIDs) spend most of an
/// uncompressed tree on single-child chains; `Full` removes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Neither: one node per key byte, as PostgreSQL's tree.
    None,
    /// Lazy expansion only.
    Lazy,
    /// Path compression only.
    Path,
    /// Lazy expansion and path compression.
    Full,
}

impl Compression {
    /// The compression a configuration that names none gets, for keys of
    /// `key_bits` bits: `Full` for `u128` keys (UUIDs and hashes, sparse
    /// by nature), `None` for the others. The `radix_tree!` macro applies
    /// the same rule.
    ///
    /// ```
    /// use radix_core::Compression;
    /// assert_eq!(Compression::default_for(u128::BITS), Compression::Full);
    /// assert_eq!(Compression::default_for(u64::BITS), Compression::None);
    /// ```
    pub const fn default_for(key_bits: u32) -> Self {
        if key_bits == 128 {
            Self::Full
        } else {
            Self::None
        }
    }

    /// Whether a subtree holding a single key is stored as a lazy leaf.
    pub const fn lazy(self) -> bool {
        matches!(self, Compression::Lazy | Compression::Full)
    }

    /// Whether single-child inner nodes are merged into their child.
    pub const fn path(self) -> bool {
        matches!(self, Compression::Path | Compression::Full)
    }

    /// Whether the tree is uncompressed.
    pub const fn is_none(self) -> bool {
        matches!(self, Compression::None)
    }

    /// The name the `radix_tree!` macro's `compression:` key takes.
    pub const fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Lazy => "lazy",
            Compression::Path => "path",
            Compression::Full => "full",
        }
    }
}

/// Compile-time choices for one tree type.
///
/// Implement it through [`radix_tree!`](crate::radix_tree), which validates
/// the choices and documents the result. A hand-written implementation:
///
/// ```
/// use radix_core::{Config, RawTree, SizeClasses};
/// use radix_core::{mem::LocalMemory, value::Auto};
///
/// enum Small {}
/// impl Config for Small {
///     type Key = u16;
///     type Layout = Auto<u32>;
///     type Memory = LocalMemory;
///     const SIZE_CLASSES: SizeClasses = SizeClasses::new(&[4, 32, 256]);
///     const DELETE: bool = true;
/// }
///
/// let mut t = RawTree::<Small>::new();
/// t.insert(300, 1);
/// assert_eq!(t.get(300), Some(&1));
/// ```
pub trait Config: 'static {
    /// The key type: `u8`, `u16`, `u32`, `u64` or `u128`.
    type Key: Key;
    /// How values are stored; see [`crate::value`].
    type Layout: ValueLayout;
    /// Where nodes and leaves live.
    type Memory: Memory;
    /// The node size classes.
    const SIZE_CLASSES: SizeClasses;
    /// Whether `remove` is offered: a call of `remove` on a configuration
    /// without it fails when the call is compiled to code, and the macro
    /// implements [`Removable`], which the other removing methods require,
    /// exactly when it is true. Part of the configuration a shared tree
    /// checks on attach.
    const DELETE: bool;
    /// Lazy expansion and path compression; none unless chosen.
    const COMPRESSION: Compression = Compression::None;
    /// Whether an inner slot may hold a *range value*: one value standing
    /// for every key of the aligned block of keys below the slot (see
    /// [`Span`](crate::Span) and `src/raw/span/mod.rs`). Off unless
    /// chosen (`ranges: true` in `radix_tree!`); a configuration that
    /// turns it on uses compression `None`, local or shared memory, and
    /// says how to compare and copy its values
    /// ([`same_value`](Config::same_value),
    /// [`clone_value_slot`](Config::clone_value_slot)). Trees without it
    /// compile to exactly the code they had before range values existed.
    const RANGES: bool = false;

    /// With [`RANGES`](Config::RANGES): whether two values are the same,
    /// so that a key inserted under a range holding its value is absorbed,
    /// and a full node of one value becomes a range. `radix_tree!` emits
    /// `PartialEq::eq`. The default says no two values are the same.
    #[inline]
    fn same_value(a: &ValueOf<Self>, b: &ValueOf<Self>) -> bool {
        let _ = (a, b);
        false
    }

    /// With [`RANGES`](Config::RANGES): a new slot value on `mem` holding
    /// a copy of the value in `slot`, for splitting a range into the
    /// ranges or keys below it. `radix_tree!` emits
    /// [`CloneLayout::clone_slot_in`](crate::value::CloneLayout::clone_slot_in).
    /// A configuration with `RANGES` that keeps this default does not
    /// compile.
    ///
    /// # Safety
    ///
    /// `slot` holds a live slot value made on `mem`.
    ///
    /// # Errors
    ///
    /// `mem` could not allocate the copy's leaf; nothing was allocated.
    #[inline]
    unsafe fn clone_value_slot(
        slot: core::ptr::NonNull<SlotOf<Self>>,
        mem: &mut Self::Memory,
    ) -> Result<SlotOf<Self>, <Self::Memory as Memory>::Error> {
        const {
            assert!(
                !Self::RANGES,
                "a configuration with RANGES must implement Config::clone_value_slot"
            )
        };
        let _ = (slot, mem);
        unreachable!("clone_value_slot is called only on configurations with RANGES")
    }
}

/// The value type of configuration `C`.
type ValueOf<C> = <<C as Config>::Layout as ValueLayout>::Value;

/// The most node pools any configuration has: inner and last-level pools
/// per class, and the lazy leaves' pool.
pub(crate) const MAX_POOLS: usize = 2 * MAX_CLASSES + 1;

/// Configurations with delete: what `pop_first`, `pop_last`, `retain`,
/// `split_off`, an occupied entry's `remove`, the in-place set operations
/// and a shared tree's write guard's `remove` require. The `radix_tree!`
/// macro implements it when `delete` is true. (`RawTree::remove` checks
/// [`Config::DELETE`] instead, so that a configuration written by hand
/// with delete need not implement this trait to remove keys.)
pub trait Removable: Config {}

/// The stored child reference of configuration `C`: what its inner slots
/// hold.
pub(crate) type RefOf<C> = <<C as Config>::Memory as Memory>::Ref;

/// The last-level slot type of configuration `C`.
type SlotOf<C> = <<C as Config>::Layout as ValueLayout>::Slot;

/// The node pools a configuration needs: one per class for inner nodes
/// (slots are child references) and, unless the last-level slot has the
/// same size and alignment as a child reference, one per class for leaf
/// nodes.
pub(crate) struct Pools<C: Config>(core::marker::PhantomData<C>);

impl<C: Config> Pools<C> {
    /// Whether last-level nodes share the inner nodes' pools.
    pub(crate) const SHARED: bool = core::mem::size_of::<<C::Layout as ValueLayout>::Slot>()
        == core::mem::size_of::<RefOf<C>>()
        && core::mem::align_of::<<C::Layout as ValueLayout>::Slot>()
            == core::mem::align_of::<RefOf<C>>();

    /// Number of node pools (without the lazy leaves').
    const NODE_POOLS: usize = if Self::SHARED {
        C::SIZE_CLASSES.len()
    } else {
        2 * C::SIZE_CLASSES.len()
    };

    /// Whether the tree has *cells*: lazy leaves (lazy expansion) or range
    /// values (ranges), objects of one pool holding a value slot and a
    /// key. A tree has at most one of the two: ranges need compression
    /// `None`.
    pub(crate) const CELLS: bool = C::COMPRESSION.lazy() || C::RANGES;

    /// Number of pools.
    pub(crate) const COUNT: usize = Self::NODE_POOLS + Self::CELLS as usize;

    /// Bytes in front of every node for its prefix word when path
    /// compression is on (see [`crate::node::prefix`]): a key's width, at
    /// least 8 and a multiple of every node alignment, so that the node
    /// after it keeps its alignment. Zero otherwise.
    pub(crate) const PREFIX: usize = if C::COMPRESSION.path() {
        let word = if size_of::<C::Key>() > 8 {
            size_of::<C::Key>()
        } else {
            8
        };
        let align = {
            let (a, b) = (Self::align::<RefOf<C>>(), Self::align::<SlotOf<C>>());
            if a > b { a } else { b }
        };
        word.div_ceil(align) * align
    } else {
        0
    };

    /// Alignment of nodes whose slots are `S`: with path compression at
    /// least 16, so that a child reference has bit 3 free for its
    /// skipped-bytes flag (see [`crate::ptr`]).
    const fn align<S>() -> usize {
        let align = node_align::<S>();
        if C::COMPRESSION.path() && align < 16 {
            16
        } else {
            align
        }
    }

    /// Pool of the cells: lazy leaves or range values (only when the tree
    /// has them, [`Self::CELLS`]).
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn cell() -> usize {
        Self::NODE_POOLS
    }

    /// Pool of an inner node of `class`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn inner(class: usize) -> usize {
        class
    }

    /// Pool of a last-level node of `class`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn leaf(class: usize) -> usize {
        if Self::SHARED {
            class
        } else {
            C::SIZE_CLASSES.len() + class
        }
    }

    /// Pool of a node of `class` at `shift`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn at(class: usize, shift: u32) -> usize {
        if shift == 0 {
            Self::leaf(class)
        } else {
            Self::inner(class)
        }
    }

    /// The pool specifications, in pool order.
    pub(crate) fn specs() -> ([PoolSpec; MAX_POOLS], usize) {
        let classes = C::SIZE_CLASSES;
        let mut specs = [PoolSpec { size: 0, align: 0 }; MAX_POOLS];
        for class in 0..classes.len() {
            let (kind, cap) = (classes.kind(class), classes.capacity(class));
            specs[Self::inner(class)] = PoolSpec {
                size: Self::PREFIX + node_size::<RefOf<C>>(kind, cap),
                align: Self::align::<RefOf<C>>(),
            };
            specs[Self::leaf(class)] = PoolSpec {
                size: Self::PREFIX + node_size::<SlotOf<C>>(kind, cap),
                align: Self::align::<SlotOf<C>>(),
            };
        }
        if Self::CELLS {
            specs[Self::cell()] = PoolSpec {
                size: lazy_leaf_size::<C::Key, SlotOf<C>>(),
                align: lazy_leaf_align::<SlotOf<C>>(),
            };
        }
        (specs, Self::COUNT)
    }
}
