//! What the TID store suites share: a model check that reads a local
//! store or a shared store's guard alike.

#![allow(dead_code)] // each suite uses what it needs

use std::collections::{BTreeMap, BTreeSet};

use tidstore::{DeadBlock, Tid, TidStore};

/// The reads the model check makes, on a local store or a shared one.
pub trait ReadStore {
    fn verify(&self) -> Result<(), String>;
    fn num_tids(&self) -> u64;
    fn num_blocks(&self) -> usize;
    fn is_member(&self, tid: Tid) -> bool;
    fn blocks(&self) -> Box<dyn Iterator<Item = DeadBlock<'_>> + '_>;
}

/// Implements [`ReadStore`] by forwarding to the type's own methods.
macro_rules! read_store {
    ($($ty:ty),*) => {$(
        impl ReadStore for $ty {
            fn verify(&self) -> Result<(), String> {
                <$ty>::verify(self)
            }
            fn num_tids(&self) -> u64 {
                <$ty>::num_tids(self)
            }
            fn num_blocks(&self) -> usize {
                <$ty>::num_blocks(self)
            }
            fn is_member(&self, tid: Tid) -> bool {
                <$ty>::is_member(self, tid)
            }
            fn blocks(&self) -> Box<dyn Iterator<Item = DeadBlock<'_>> + '_> {
                Box::new(self.iter())
            }
        }
    )*};
}

read_store!(TidStore);
#[cfg(target_os = "linux")]
read_store!(
    tidstore::SharedTidStoreReader<'_>,
    tidstore::SharedTidStoreWriter<'_>
);

/// The TIDs of blocks given as their offsets, as [`check`] takes them.
pub fn tids_of(blocks: &BTreeMap<u32, Vec<u16>>) -> BTreeSet<(u32, u16)> {
    blocks
        .iter()
        .flat_map(|(&b, offsets)| offsets.iter().map(move |&o| (b, o)))
        .collect()
}

/// Checks the store against a model: membership of every stored TID and of
/// its neighbours, iteration order and contents, counts and copied offsets.
pub fn check<S: ReadStore>(ts: &S, model: &BTreeSet<(u32, u16)>) {
    ts.verify().unwrap();
    assert_eq!(ts.num_tids(), model.len() as u64);
    for &(b, o) in model {
        assert!(ts.is_member(Tid::new(b, o)), "({b},{o}) missing");
        for n in [o.wrapping_sub(1), o + 1] {
            assert_eq!(
                ts.is_member(Tid::new(b, n)),
                model.contains(&(b, n)),
                "({b},{n})"
            );
        }
    }
    let iterated: Vec<(u32, u16)> = ts
        .blocks()
        .flat_map(|blk| blk.offsets().map(move |o| (blk.block(), o)))
        .collect();
    assert!(
        iterated.iter().eq(model.iter()),
        "iteration differs from the model"
    );
    let blocks: BTreeSet<u32> = model.iter().map(|&(b, _)| b).collect();
    assert_eq!(ts.num_blocks(), blocks.len());
    for blk in ts.blocks() {
        let want: Vec<u16> = model
            .range((blk.block(), 0)..=(blk.block(), u16::MAX))
            .map(|&(_, o)| o)
            .collect();
        let mut buf = vec![0u16; want.len()];
        assert_eq!(blk.copy_offsets(&mut buf), want.len());
        assert_eq!(buf, want);
        let mut short = vec![0u16; want.len() / 2];
        assert_eq!(
            blk.copy_offsets(&mut short),
            want.len(),
            "too small a buffer reports the size needed"
        );
        assert_eq!(short[..], want[..short.len()]);
    }
}
