//! RT-C, readers beside writers: RT-2's tree shared by `R` reader threads
//! and `W` writer threads for a fixed wall-clock time, generic over
//! [`ConcurrentMap`].
//!
//! - The tree is RT-2's (blocks `0..1,000,000`, 30 TIDs per block), loaded
//!   as RT-2 loads it (see [`KeyBitmaps`]).
//! - Reader `t` looks up every TID in its own order, WORKLOADS.md's
//!   shuffle with PRNG seed `t + 1`, round after round, testing each
//!   TID's bit: it counts lookups and hits, which must be equal, since no
//!   writer touches RT-2's keys.
//! - Writer `w` inserts the keys [`writer_key`]`(w, i)` for
//!   `i in 0..65,536` in order (value `i`), then removes them in order,
//!   round after round: keys above every RT-2 key, its own range, so the
//!   writers change the tree's shape beside the readers' keys without
//!   changing their answers.
//!
//! The threads wait at a barrier, then run until the main thread, two
//! seconds after the barrier (scaled with `--scale`), raises a stop flag.
//! Each thread counts in locals, and checks the flag after every run of
//! [`RUN`] operations: often enough to stop within microseconds, rarely
//! enough that the flag's load is no part of the figures.
//!
//! TIDs are held as `u32` (`block << 9 | offset` fits for fewer than
//! 2^23 blocks): each reader has a whole shuffled copy, and half the
//! bytes is half the memory for a run with two readers.

use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crate::rng::shuffle_seeded;
use crate::structures::ConcurrentMap;

use super::Sizing;
use super::rt::{KeyBitmaps, tid_walk};

/// The wall-clock time of one run at scale 1, in seconds.
pub const RTC_SECONDS: f64 = 2.0;

/// The `(readers, writers)` rows WORKLOADS.md runs, in order.
pub const RTC_ROWS: [(u64, u64); 5] = [(1, 0), (1, 1), (2, 0), (0, 1), (0, 2)];

/// Keys each writer churns: `i in 0..WRITER_KEYS`.
pub const WRITER_KEYS: u64 = 65_536;

/// Operations a thread makes under one [`ConcurrentMap::Guard`], and
/// between two looks at the stop flag.
pub const RUN: usize = 256;

/// The most blocks whose TIDs fit in a `u32`.
const MAX_BLOCKS: u64 = 1 << 23;

/// The most threads of either kind a row may ask for.
const MAX_THREADS: u64 = 256;

/// One row of RT-C: the tree's size, the threads and how long they run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtcCase {
    /// Blocks `0..blocks` of RT-2's tree.
    pub blocks: u64,
    /// Reader threads.
    pub readers: u64,
    /// Writer threads.
    pub writers: u64,
    /// How long the threads run after the barrier.
    pub duration: Duration,
}

impl RtcCase {
    /// The WORKLOADS.md id.
    pub fn id(&self) -> &'static str {
        "RT-C"
    }

    /// The name in table headings (WORKLOADS.md gives none).
    pub fn name(&self) -> &'static str {
        "readers_beside_writers"
    }

    /// The parameters, as WORKLOADS.md writes them: `readers=R,writers=W`.
    pub fn params(&self) -> String {
        format!("readers={},writers={}", self.readers, self.writers)
    }
}

/// RT-C's cases: every row of [`RTC_ROWS`], or the one row `arg` names
/// as `R,W`.
pub(crate) fn cases(arg: Option<&str>, sizing: Sizing) -> Result<Vec<RtcCase>, String> {
    let blocks = sizing.pick(1_000_000, 1_000_000);
    if blocks >= MAX_BLOCKS {
        return Err(format!(
            "RT-C holds TIDs in 32 bits: at most {} blocks, not {blocks}",
            MAX_BLOCKS - 1
        ));
    }
    let duration = Duration::from_secs_f64(RTC_SECONDS * sizing.scale);
    let rows = match arg {
        None => RTC_ROWS.to_vec(),
        Some(a) if a.eq_ignore_ascii_case("all") => RTC_ROWS.to_vec(),
        Some(a) => vec![parse_row(a)?],
    };
    Ok(rows
        .into_iter()
        .map(|(readers, writers)| RtcCase {
            blocks,
            readers,
            writers,
            duration,
        })
        .collect())
}

/// `R,W`: a row of readers and writers.
fn parse_row(text: &str) -> Result<(u64, u64), String> {
    let bad = || format!("RT-C:{text}: expected READERS,WRITERS (e.g. RT-C:1,1)");
    let (r, w) = text.split_once(',').ok_or_else(bad)?;
    let r: u64 = r.trim().parse().map_err(|_| bad())?;
    let w: u64 = w.trim().parse().map_err(|_| bad())?;
    if r + w == 0 || r > MAX_THREADS || w > MAX_THREADS {
        return Err(format!(
            "RT-C:{text}: at least one thread, and at most {MAX_THREADS} readers and {MAX_THREADS} writers"
        ));
    }
    Ok((r, w))
}

/// Writer `w`'s key `i`: `(1 << 40) | (w << 32) | i`, above every key of
/// RT-2's tree (`tid >> 6 < 2^26` for fewer than 2^23 blocks).
#[inline(always)]
pub fn writer_key(w: u64, i: u64) -> u64 {
    (1 << 40) | (w << 32) | i
}

/// RT-C's generated data.
#[derive(Debug, Clone)]
pub struct RtcData {
    /// The load's inserts `(key, bitmap)`, in order (RT-2's load).
    inserts: Vec<(u64, u64)>,
    /// Each reader's lookup order: the TIDs shuffled with seed `t + 1`.
    orders: Vec<Vec<u32>>,
    /// TIDs in the tree.
    tids: u64,
}

impl RtcData {
    /// Generates the data of `case`: the load and one order per reader.
    pub fn generate(case: &RtcCase) -> Self {
        assert!(case.blocks < MAX_BLOCKS, "RT-C's TIDs are u32");
        let (tids, _) = tid_walk(case.blocks, false);
        let inserts: Vec<(u64, u64)> = KeyBitmaps::new(&tids).collect();
        let narrow: Vec<u32> = tids.iter().map(|&tid| tid as u32).collect();
        drop(tids);
        let orders = (0..case.readers)
            .map(|t| {
                let mut order = narrow.clone();
                shuffle_seeded(&mut order, t + 1);
                order
            })
            .collect();
        Self {
            inserts,
            orders,
            tids: narrow.len() as u64,
        }
    }

    /// Distinct keys in the tree after the load.
    pub fn nkeys(&self) -> u64 {
        self.inserts.len() as u64
    }

    /// TIDs in the tree: the lookups of one reader's round.
    pub fn tids(&self) -> u64 {
        self.tids
    }

    /// Reader `t`'s lookup order.
    pub fn order(&self, t: u64) -> &[u32] {
        &self.orders[t as usize]
    }

    /// Loads `map` from this thread, as RT-2 loads its tree.
    pub fn load<M: ConcurrentMap>(&self, map: &M) {
        for run in self.inserts.chunks(RUN) {
            let guard = map.guard();
            for &(key, bits) in run {
                map.insert(key, bits, &guard);
            }
        }
    }

    /// Runs `case`'s readers and writers on `map` for its duration and
    /// sums their counts.
    pub fn run<M: ConcurrentMap>(&self, map: &M, case: &RtcCase) -> RtcCounts {
        let barrier = Barrier::new((case.readers + case.writers) as usize + 1);
        let stop = AtomicBool::new(false);
        let (barrier, stop) = (&barrier, &stop);
        thread::scope(|s| {
            let readers: Vec<_> = (0..case.readers)
                .map(|t| {
                    let order = self.order(t);
                    s.spawn(move || {
                        barrier.wait();
                        read(map, order, stop)
                    })
                })
                .collect();
            let writers: Vec<_> = (0..case.writers)
                .map(|w| {
                    s.spawn(move || {
                        barrier.wait();
                        write(map, w, stop)
                    })
                })
                .collect();
            barrier.wait();
            let start = Instant::now();
            thread::sleep(case.duration);
            stop.store(true, Ordering::Relaxed);
            let mut counts = RtcCounts::default();
            for reader in readers {
                let r = reader.join().expect("a reader panicked");
                counts.lookups += r.lookups;
                counts.hits += r.hits;
            }
            for writer in writers {
                let w = writer.join().expect("a writer panicked");
                counts.inserts += w.inserts;
                counts.removes += w.removes;
                counts.removed += w.removed;
            }
            counts.seconds = start.elapsed().as_secs_f64();
            counts
        })
    }
}

/// What the threads of one run did, summed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RtcCounts {
    /// Lookups, all readers.
    pub lookups: u64,
    /// Lookups that found their TID's bit set.
    pub hits: u64,
    /// Inserts, all writers.
    pub inserts: u64,
    /// Removes, all writers.
    pub removes: u64,
    /// Removes that found their key (all of them, in a correct map).
    pub removed: u64,
    /// Wall-clock seconds from the barrier until every thread had
    /// stopped.
    pub seconds: f64,
}

impl RtcCounts {
    /// Inserts and removes.
    pub fn writes(&self) -> u64 {
        self.inserts + self.removes
    }
}

/// One reader's counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReaderCounts {
    /// Lookups made.
    pub lookups: u64,
    /// Lookups that found their TID's bit set.
    pub hits: u64,
}

/// One writer's counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriterCounts {
    /// Inserts made.
    pub inserts: u64,
    /// Removes made.
    pub removes: u64,
    /// Removes that found their key.
    pub removed: u64,
}

/// Looks up every TID of `tids` (at most a [`RUN`] of them, under one
/// guard), testing its bit; the hits.
#[inline]
pub fn lookup_run<M: ConcurrentMap>(map: &M, tids: &[u32]) -> u64 {
    let guard = map.guard();
    let mut hits = 0;
    for &tid in tids {
        let tid = u64::from(tid);
        if let Some(bits) = map.get(tid >> 6, &guard) {
            hits += (bits >> (tid & 63)) & 1;
        }
    }
    hits
}

/// A reader: looks up `order`, round after round, a [`RUN`] at a time,
/// until `stop` is raised (after at least one run).
pub fn read<M: ConcurrentMap>(map: &M, order: &[u32], stop: &AtomicBool) -> ReaderCounts {
    assert!(!order.is_empty(), "a reader needs TIDs to look up");
    let mut counts = ReaderCounts::default();
    loop {
        for run in order.chunks(RUN) {
            counts.hits += lookup_run(map, run);
            counts.lookups += run.len() as u64;
            if stop.load(Ordering::Relaxed) {
                return counts;
            }
        }
    }
}

/// Writer `w`: inserts its keys in order, then removes them in order,
/// round after round, a [`RUN`] at a time, until `stop` is raised (after
/// at least one run).
pub fn write<M: ConcurrentMap>(map: &M, w: u64, stop: &AtomicBool) -> WriterCounts {
    const { assert!(WRITER_KEYS.is_multiple_of(RUN as u64)) };
    let mut counts = WriterCounts::default();
    loop {
        for start in (0..WRITER_KEYS).step_by(RUN) {
            let guard = map.guard();
            for i in start..start + RUN as u64 {
                map.insert(writer_key(w, i), i, &guard);
            }
            drop(guard);
            counts.inserts += RUN as u64;
            if stop.load(Ordering::Relaxed) {
                return counts;
            }
        }
        for start in (0..WRITER_KEYS).step_by(RUN) {
            let guard = map.guard();
            for i in start..start + RUN as u64 {
                counts.removed += u64::from(map.remove(writer_key(w, i), &guard));
            }
            drop(guard);
            counts.removes += RUN as u64;
            if stop.load(Ordering::Relaxed) {
                return counts;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::Size;

    #[test]
    fn rows_and_scaling() {
        let full = cases(None, Sizing::default()).unwrap();
        assert_eq!(full.len(), 5);
        assert_eq!(full[1].params(), "readers=1,writers=1");
        assert_eq!(full[0].blocks, 1_000_000);
        assert_eq!(full[0].duration, Duration::from_secs(2));
        let small = cases(Some("2,1"), Sizing::scaled(Size::Default, 0.1)).unwrap();
        assert_eq!(small.len(), 1);
        assert_eq!((small[0].readers, small[0].writers), (2, 1));
        assert_eq!(small[0].blocks, 100_000);
        assert_eq!(small[0].duration, Duration::from_millis(200));
        assert_eq!(cases(Some("all"), Sizing::default()).unwrap().len(), 5);
        for bad in ["0,0", "1", "x,1", "1,2,3", "1000,0"] {
            assert!(cases(Some(bad), Sizing::default()).is_err(), "{bad}");
        }
        assert!(cases(None, Sizing::scaled(Size::Default, 10.0)).is_err());
    }

    #[test]
    fn data_follows_rt2_and_the_seeded_shuffle() {
        let case = RtcCase {
            blocks: 100,
            readers: 2,
            writers: 0,
            duration: Duration::ZERO,
        };
        let data = RtcData::generate(&case);
        let (tids, nkeys) = tid_walk(100, false);
        assert_eq!(data.nkeys(), nkeys);
        assert_eq!(data.tids(), tids.len() as u64);
        assert_eq!(data.inserts, KeyBitmaps::new(&tids).collect::<Vec<_>>());
        for t in 0..2 {
            let mut expected = tids.clone();
            shuffle_seeded(&mut expected, t + 1);
            let got: Vec<u64> = data.order(t).iter().map(|&tid| u64::from(tid)).collect();
            assert_eq!(got, expected, "reader {t}");
        }
        assert_ne!(data.order(0), data.order(1));
        assert!(writer_key(0, 0) > data.inserts.last().unwrap().0);
        assert_eq!(writer_key(3, 65_535), (1 << 40) | (3 << 32) | 65_535);
    }
}
