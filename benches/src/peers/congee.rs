//! congee's `Congee<usize, usize>` (formerly `CongeeRaw`): the ART-OLC
//! concurrent adaptive radix tree, used from one thread.
//!
//! congee reclaims replaced nodes through epochs (crossbeam-epoch): every
//! operation takes a guard, and a node retired while a guard is held is
//! freed only after the guard is gone. Pinning is not free, so this adapter
//! holds one guard across a batch of operations, as congee's documentation
//! advises, and re-pins and flushes at [`RtMap::quiesce`] (after a load,
//! after each churn round, and before memory is read) until the retired
//! nodes are freed, which it sees through the counting allocator (without
//! it, it stops after a few rounds).

use ::congee::Congee;
use ::congee::epoch::{Guard, pin};

use super::RtMap;
use crate::alloc::live_bytes;

/// [`RtMap::quiesce`] re-pins and flushes until the thread's live bytes
/// have not fallen below their lowest for this many rounds in a row: each
/// flush frees at most a few bags of retired nodes, and a bag is freed two
/// epochs after it was sealed. (Waiting for them to stop *moving* never
/// ended: each flush allocates and frees a bag of its own, so the count
/// moves every round and every quiesce ran its million rounds.)
const QUIESCE_STILL_ROUNDS: usize = 8;

/// Upper bound on [`RtMap::quiesce`]'s rounds.
const QUIESCE_MAX_ROUNDS: usize = 1 << 20;

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
        let mut lowest = live_bytes();
        let mut still = 0;
        for _ in 0..QUIESCE_MAX_ROUNDS {
            self.guard.repin();
            self.guard.flush();
            let now = live_bytes();
            if now < lowest {
                lowest = now;
                still = 0;
            } else {
                still += 1;
                if still == QUIESCE_STILL_ROUNDS {
                    break;
                }
            }
        }
    }
}
