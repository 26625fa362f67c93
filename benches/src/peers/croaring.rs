//! CRoaring's 64-bit bitmap (`croaring::Bitmap64`, an ART of roaring
//! containers) over `(blk << 16) | off`: the closest peer of the TID store.
//!
//! CRoaring is C and allocates through `malloc`, which a Rust counting
//! allocator does not see. Before the first bitmap is made, this module
//! calls croaring's `configure_rust_alloc`, which routes every CRoaring
//! allocation through Rust's global allocator; the harness's counting
//! allocator then measures it like any Rust peer. Those hooks prefix each
//! allocation with its size and alignment (16 bytes or more), which is
//! counted: what `malloc` would add as its own header is not visible either
//! way.
//!
//! The set-operation workloads use the same bitmap: SET-1 over the same
//! encoding, SET-2 over the keys (a set: the values, equal to the keys,
//! are dropped), combined with `|=` and `&=`. So do the TID bitmap
//! workloads without a budget (TB-1, TB-2, TB-4, TB-5; a `Bitmap64` has
//! no memory limit, so TB-3 and TB-6 do not run it): one `add` per TID,
//! `&=` and `|=`, and a walk that groups the values by block, every page
//! exact.

use std::sync::Once;

use ::croaring::Bitmap64;
use tidstore::Tid;

use crate::structures::TidSide;

use super::{
    DeadTidSet, PageSink, SetOps, TidBitmapPeer, element_checksum, group_by_block, tid_to_u64,
};

static RUST_ALLOC: Once = Once::new();

/// Routes CRoaring's allocations through Rust's global allocator, once per
/// process, before any CRoaring object exists.
pub fn route_allocations_through_rust() {
    RUST_ALLOC.call_once(|| {
        // SAFETY: CRoaring objects are only made by this module, each
        // after this call; `Once` makes every other thread wait until it
        // has returned, so no CRoaring object exists while it runs.
        unsafe { ::croaring::configure_rust_alloc() }
    });
}

/// `croaring::Bitmap64` of `(blk << 16) | off`, one `add` per TID.
pub struct CroaringSet(Bitmap64);

impl DeadTidSet for CroaringSet {
    const NAME: &'static str = "croaring";

    fn with_capacity(_ndead: u64) -> Self {
        route_allocations_through_rust();
        Self(Bitmap64::new())
    }

    #[inline]
    fn set_block_offsets(&mut self, block: u32, offsets: &[u16]) {
        for &offset in offsets {
            self.0.add(tid_to_u64(Tid::new(block, offset)));
        }
    }

    #[inline(always)]
    fn is_member(&self, tid: Tid) -> bool {
        self.0.contains(tid_to_u64(tid))
    }

    fn for_each_block<F: FnMut(u32, &[u16])>(&self, f: F) {
        group_by_block(self.0.iter(), f);
    }
}

/// Declares a [`SetOps`] adapter over `Bitmap64`; only the build differs.
macro_rules! croaring_set_ops {
    ($(#[$doc:meta])* $adapter:ident, $input:ty, |$bitmap:ident, $side:ident| $build:block) => {
        $(#[$doc])*
        pub struct $adapter(Bitmap64);

        impl SetOps for $adapter {
            const NAME: &'static str = "croaring";
            type Input = $input;

            fn build($side: &$input) -> Self {
                route_allocations_through_rust();
                let mut $bitmap = Bitmap64::new();
                $build
                Self($bitmap)
            }

            fn copy(&self) -> Self {
                Self(self.0.clone())
            }

            fn union_with(&mut self, other: Self) -> Option<Self> {
                self.0 |= &other.0;
                Some(other)
            }

            fn intersect_with(&mut self, other: &Self) {
                self.0 &= &other.0;
            }

            fn count(&self) -> u64 {
                self.0.cardinality()
            }

            fn checksum(&self) -> u64 {
                self.0
                    .iter()
                    .fold(0, |sum, key| sum.wrapping_add(element_checksum(key, key)))
            }
        }
    };
}

croaring_set_ops!(
    /// SET-1: `Bitmap64` of `(blk << 16) | off`, one `add` per TID as the TS
    /// load does.
    CroaringTids,
    TidSide,
    |bitmap, side| {
        for &block in &side.blocks {
            for &offset in &side.offsets {
                bitmap.add(tid_to_u64(Tid::new(block, offset)));
            }
        }
    }
);

croaring_set_ops!(
    /// SET-2: `Bitmap64` of the keys, one `add` per key in stream order.
    CroaringKeys,
    [u64],
    |bitmap, keys| {
        for &key in keys {
            bitmap.add(key);
        }
    }
);

/// The TB workloads' `croaring::Bitmap64` of `(blk << 16) | off`: one
/// `add` per TID, `&=`, `|=`, and a walk grouped by block. It has no
/// budget, so it runs only on the unlimited workloads.
pub struct CroaringBitmap(Bitmap64);

impl TidBitmapPeer for CroaringBitmap {
    const NAME: &'static str = "croaring";
    const BUDGETED: bool = false;
    const KEEPS_BUDGET: bool = false;

    fn new(budget: Option<usize>) -> Self {
        assert!(
            budget.is_none(),
            "croaring has no memory budget: the TB workloads with one do not run it"
        );
        route_allocations_through_rust();
        Self(Bitmap64::new())
    }

    #[inline]
    fn add_tid(&mut self, tid: Tid) {
        self.0.add(tid_to_u64(tid));
    }

    fn intersect_with(&mut self, other: &Self) {
        self.0 &= &other.0;
    }

    fn union_with(&mut self, other: &Self) {
        self.0 |= &other.0;
    }

    fn walk<S: PageSink>(&self, sink: &mut S) {
        group_by_block(self.0.iter(), |block, offsets| {
            sink.exact(block, offsets.iter().copied(), false);
        });
    }
}
