//! The classic dead-tuple array of PostgreSQL before 17,
//! [`tidstore::DeadItemsArray`]: TIDs sorted and packed in 6 bytes each,
//! allocated at exactly the size the workload needs, searched by a bounds
//! check against the first and last TID and then a binary search.

use tidstore::{DeadItemsArray, Tid};

use super::DeadTidSet;

impl DeadTidSet for DeadItemsArray {
    const NAME: &'static str = "array";

    fn with_capacity(ndead: u64) -> Self {
        let n = usize::try_from(ndead).expect("dead TID count fits in memory");
        DeadItemsArray::with_max_items(n).expect("the dead-tuple array fits in memory")
    }

    #[inline]
    fn set_block_offsets(&mut self, block: u32, offsets: &[u16]) {
        if let Err(e) = self.push_block(block, offsets) {
            panic!("workload generated an unsorted or oversized block: {e}");
        }
    }

    #[inline(always)]
    fn is_member(&self, tid: Tid) -> bool {
        DeadItemsArray::is_member(self, tid)
    }

    fn for_each_block<F: FnMut(u32, &[u16])>(&self, mut f: F) {
        let mut buf: Vec<u16> = Vec::with_capacity(usize::from(tidstore::MAX_OFFSET));
        for (block, run) in self.blocks() {
            buf.clear();
            buf.extend(run.iter().map(|i| i.tid().offset()));
            f(block, &buf);
        }
    }
}
