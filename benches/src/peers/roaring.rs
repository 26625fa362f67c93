//! roaring-rs's `RoaringTreemap` (a `BTreeMap` of 32-bit roaring bitmaps)
//! over `(blk << 16) | off`, in pure Rust.

use ::roaring::RoaringTreemap;
use tidstore::Tid;

use super::{DeadTidSet, group_by_block, tid_to_u64};

/// `roaring::RoaringTreemap` of `(blk << 16) | off`, one insert per TID.
pub struct RoaringSet(RoaringTreemap);

impl DeadTidSet for RoaringSet {
    const NAME: &'static str = "roaring";

    fn with_capacity(_ndead: u64) -> Self {
        Self(RoaringTreemap::new())
    }

    #[inline]
    fn set_block_offsets(&mut self, block: u32, offsets: &[u16]) {
        for &offset in offsets {
            self.0.insert(tid_to_u64(Tid::new(block, offset)));
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
