//! congee's `Congee<usize, usize>` (formerly `CongeeRaw`): the ART-OLC
//! concurrent adaptive radix tree, used from one thread.
//!
//! congee reclaims replaced nodes through epochs (crossbeam-epoch): every
//! operation takes a guard, and a node retired while a guard is held is
//! freed only after the guard is gone. Pinning is not free, so this adapter
//! holds one guard across a batch of operations, as congee's documentation
//! advises, and re-pins and flushes at [`RtMap::quiesce`] (after a load,
//! after each churn round, and before memory is read) until the retired
//! nodes are freed, which it sees through the counting allocator (see
//! [`settle`]).

use ::congee::Congee;
use ::congee::epoch::{Guard, pin};

use super::RtMap;
use crate::alloc::settle;

/// `congee::Congee<usize, usize>` (keys and values are `u64` on 64-bit
/// targets) with a held epoch guard.
pub struct CongeeMap {
    tree: Congee<usize, usize>,
    guard: Guard,
}

const _: () = assert!(usize::BITS == 64, "congee's keys are usize");

impl RtMap for CongeeMap {
    const NAME: &'static str = "congee";

    fn new() -> Self {
        Self {
            tree: Congee::default(),
            guard: pin(),
        }
    }

    #[inline]
    fn insert(&mut self, key: u64, value: u64) {
        if let Err(e) = self.tree.insert(key as usize, value as usize, &self.guard) {
            panic!("congee insert failed: {e:?}");
        }
    }

    #[inline(always)]
    fn get(&self, key: u64) -> Option<u64> {
        self.tree
            .get(&(key as usize), &self.guard)
            .map(|v| v as u64)
    }

    #[inline]
    fn remove(&mut self, key: u64) -> bool {
        self.tree.remove(&(key as usize), &self.guard).is_some()
    }

    fn quiesce(&mut self) {
        let guard = &mut self.guard;
        settle(|| {
            guard.repin();
            guard.flush();
        });
    }
}
