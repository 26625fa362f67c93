//! RT-C in miniature: what a reader's lookups cost in each concurrent
//! structure (`peers::RTC_IMPLS`), alone and beside a writer.
//!
//! The tree is RT-2's over blocks 0..100,000 (100,000 keys, 3,000,000
//! TIDs), a tenth of RT-C's, so that each structure loads in well under a
//! second. One iteration is a batch of [`BATCH`] lookups, made on the
//! benchmark's thread exactly as an RT-C reader makes them (runs of
//! `rtc::RUN` under one guard, each TID's bit tested), taken in turn from
//! reader 0's order (WORKLOADS.md's shuffle with seed 1); every batch must
//! find all its TIDs.
//!
//! - `RT-C/0-writers/IMPL`: the batches with no other thread running;
//! - `RT-C/1-writer/IMPL`: the batches while one writer thread churns
//!   RT-C's writer 0 key range in the background (65,536 keys above the
//!   tree's, inserted then removed, round after round), so the figure
//!   shows what a writer costs a reader: cache lines it invalidates,
//!   locks it holds, epochs it advances.
//!
//! Throughput is in lookups. The writer's own rate, memory and two-reader
//! rows are `bench-report RT-C`'s; on a 2-core machine the reader and the
//! writer each have a core.

mod common;

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use benches::peers::{self, ConcurrentMap, RtcVisitor};
use benches::workloads::rtc::{self, RUN, RtcCase, RtcData};
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};

/// Blocks of RT-2's tree here (RT-C: 1,000,000).
const BLOCKS: u64 = 100_000;

/// Lookups per iteration: a few runs, so that a batch spans some of the
/// writer's work without a whole iteration being one long lookup loop.
const BATCH: usize = 4 * RUN;

/// Registers one structure's two benchmarks in a group.
struct BenchRtc<'g, 'c, 'd> {
    group: &'g mut BenchmarkGroup<'c, WallTime>,
    data: &'d RtcData,
}

impl RtcVisitor for BenchRtc<'_, '_, '_> {
    type Output = ();

    fn visit<M: ConcurrentMap>(self) {
        let Self { group, data } = self;
        let map = M::new();
        data.load(&map);
        let order = data.order(0);
        for writers in [0, 1] {
            let stop = AtomicBool::new(false);
            thread::scope(|s| {
                let writer = (writers == 1).then(|| s.spawn(|| rtc::write(&map, 0, &stop)));
                let id = match writers {
                    0 => format!("0-writers/{}", M::NAME),
                    _ => format!("1-writer/{}", M::NAME),
                };
                // A cursor through the order that outlives one sample, so
                // that successive iterations look up different TIDs.
                let mut batches = order.chunks_exact(BATCH).cycle();
                group.bench_function(id, |b| {
                    // `iter_custom` times only the batches; the writer was
                    // started outside the measurement and keeps running
                    // between samples.
                    b.iter_custom(|iters| {
                        let start = Instant::now();
                        for _ in 0..iters {
                            let batch = batches.next().expect("the order is not empty");
                            let hits: u64 = batch
                                .chunks(RUN)
                                .map(|run| rtc::lookup_run(&map, run))
                                .sum();
                            assert_eq!(hits, BATCH as u64, "{} lost TIDs", M::NAME);
                            black_box(hits);
                        }
                        start.elapsed()
                    })
                });
                stop.store(true, Ordering::Relaxed);
                if let Some(writer) = writer {
                    let counts = writer.join().expect("the writer panicked");
                    assert_eq!(counts.removed, counts.removes, "{} lost keys", M::NAME);
                }
            });
        }
        drop(map);
        M::quiesce();
    }
}

fn rtc(c: &mut Criterion) {
    let data = RtcData::generate(&RtcCase {
        blocks: BLOCKS,
        readers: 1,
        writers: 1,
        duration: Duration::ZERO,
    });
    let mut group = c.benchmark_group("RT-C");
    common::configure(&mut group);
    group.throughput(Throughput::Elements(BATCH as u64));
    for impl_name in peers::RTC_IMPLS {
        peers::visit_rtc(
            impl_name,
            BenchRtc {
                group: &mut group,
                data: &data,
            },
        );
    }
    group.finish();
}

criterion_group!(concurrent, rtc);
criterion_main!(concurrent);
