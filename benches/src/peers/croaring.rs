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

use std::sync::Once;

use ::croaring::Bitmap64;
use tidstore::Tid;

use super::{group_by_block, tid_to_u64, DeadTidSet};

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
