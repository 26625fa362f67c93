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
use crate::node::{node_align, node_size, SizeClasses, MAX_CLASSES};
use crate::value::ValueLayout;

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
    /// Whether `remove` is offered. The engine always has the code; the
    /// macro leaves the method out of the generated type when this is false.
    const DELETE: bool;
}

/// Configurations with `remove`: what a shared tree's write guard requires
/// for its `remove`. The `radix_tree!` macro implements it when `delete` is
/// true.
pub trait Removable: Config {}

/// The stored child reference of configuration `C`: what its inner slots
/// hold.
pub(crate) type RefOf<C> = <<C as Config>::Memory as Memory>::Ref;

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

    /// Number of pools.
    pub(crate) const COUNT: usize = if Self::SHARED {
        C::SIZE_CLASSES.len()
    } else {
        2 * C::SIZE_CLASSES.len()
    };

    /// Pool of an inner node of `class`.
    #[inline(always)]
    pub(crate) fn inner(class: usize) -> usize {
        class
    }

    /// Pool of a last-level node of `class`.
    #[inline(always)]
    pub(crate) fn leaf(class: usize) -> usize {
        if Self::SHARED {
            class
        } else {
            C::SIZE_CLASSES.len() + class
        }
    }

    /// Pool of a node of `class` at `shift`.
    #[inline(always)]
    pub(crate) fn at(class: usize, shift: u32) -> usize {
        if shift == 0 {
            Self::leaf(class)
        } else {
            Self::inner(class)
        }
    }

    /// The pool specifications, in pool order.
    pub(crate) fn specs() -> ([PoolSpec; 2 * MAX_CLASSES], usize) {
        let classes = C::SIZE_CLASSES;
        let mut specs = [PoolSpec { size: 0, align: 0 }; 2 * MAX_CLASSES];
        for class in 0..classes.len() {
            let (kind, cap) = (classes.kind(class), classes.capacity(class));
            specs[Self::inner(class)] = PoolSpec {
                size: node_size::<RefOf<C>>(kind, cap),
                align: node_align::<RefOf<C>>(),
            };
            specs[Self::leaf(class)] = PoolSpec {
                size: node_size::<<C::Layout as ValueLayout>::Slot>(kind, cap),
                align: node_align::<<C::Layout as ValueLayout>::Slot>(),
            };
        }
        (specs, Self::COUNT)
    }
}
