//! Criterion benchmarks of the WORKLOADS.md workloads, the project and
//! every peer, at sizes that keep the whole suite within a few minutes on a
//! 2-core machine.
//!
//! - RT-1 to RT-4 at 1/50 of the default size (20,000 blocks or keys);
//!   RT-5 at full size (327,680 keys) for fanouts 4, 48 and 256 (all nine
//!   are in the `micro` bench, project only); RT-6 at fanout 120 with 100
//!   churn rounds; RT-7 (random `u128` keys) at 1/50 (20,000 keys) with
//!   its WORKLOADS.md peers, `BTreeMap`, hashbrown and blart.
//! - Every TS workload at 1/50 (20,000 blocks: page patterns of up to
//!   20,000 blocks, as TS-5 and TS-6 have, still repeat whole), phases
//!   load, lookup (ordered, shuffled) and iterate.
//!
//! - `project-shared` (the project's tree and TID store in shared memory,
//!   locked once per batch) runs where `bench-report` runs it by default:
//!   RT-1 and RT-2 (load, search), TS-2 and TS-4 (every phase).
//!
//! Benchmark ids read `GROUP/PHASE/IMPL`, e.g. `RT-2/search/blart`;
//! `cargo bench -p benches --bench workloads -- RT-2/` runs one workload.
//! `bench-report` gives the full-size figures and memory.

mod common;

use std::hint::black_box;

use benches::peers::{self, DeadTidSet, Rt128Visitor, RtMap, RtVisitor, TsVisitor};
use benches::workloads::rt::RtData;
use benches::workloads::rt128::Rt128Data;
use benches::workloads::ts::{iterate, Order, TsData};
use benches::workloads::{self, Case, RtCase, Size, Sizing, Variant};
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion};

/// Scale of RT-1 to RT-4 and of the TS workloads.
const SCALE: f64 = 0.02;

/// RT-5 fanouts measured here.
const RT5_FANOUTS: [u64; 3] = [4, 48, 256];

/// RT-6 churn rounds here (WORKLOADS.md: 10,000).
const RT6_ROUNDS: u64 = 100;

fn rt_cases() -> Vec<RtCase> {
    let sizing = Sizing::scaled(Size::Default, SCALE);
    let mut cases = Vec::new();
    for id in ["RT-1", "RT-2", "RT-3", "RT-4"] {
        for case in workloads::parse(id, sizing, Variant::default()).expect("a workload") {
            if let Case::Rt(rt) = case {
                cases.push(rt);
            }
        }
    }
    cases.extend(RT5_FANOUTS.iter().map(|&fanout| RtCase::FixedHeightSearch {
        fanout,
        nkeys: workloads::rt::RT5_KEYS,
    }));
    cases.push(RtCase::Node48Churn {
        fanout: workloads::rt::RT6_FANOUTS[0],
        rounds: RT6_ROUNDS,
    });
    cases
}

/// Registers one RT structure's benchmarks in a group.
struct BenchRt<'g, 'c, 'd> {
    group: &'g mut BenchmarkGroup<'c, WallTime>,
    case: &'d RtCase,
    data: &'d RtData,
}

impl RtVisitor for BenchRt<'_, '_, '_> {
    type Output = ();

    fn visit<M: RtMap>(self) {
        let Self { group, case, data } = self;
        // RT-2's load is RT-1's: measure it once.
        if !matches!(case, RtCase::ShuffleSearch { .. }) {
            bench_load(group, |map: &mut M| data.load(map));
        }
        let mut map = M::new();
        data.load(&mut map);
        map.quiesce();
        if let RtData::Churn { .. } = data {
            group.bench_function(format!("churn/{}", M::NAME), |b| {
                b.iter(|| black_box(data.churn(&mut map)))
            });
        } else {
            bench_search(group, &map, data.expected_hits(), |map| data.search(map));
        }
    }
}

/// Registers `load/IMPL`: a new map of type `M` loaded by `load`, the drop
/// left out of the time.
fn bench_load<K: Copy, M: RtMap<K>>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    load: impl Fn(&mut M) -> u64,
) {
    group.bench_function(format!("load/{}", M::NAME), |b| {
        b.iter_with_large_drop(|| {
            let mut map = M::new();
            black_box(load(&mut map));
            map
        })
    });
}

/// Registers `search/IMPL`: `search` over the loaded `map`, which must
/// find `expected` hits.
fn bench_search<K: Copy, M: RtMap<K>>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    map: &M,
    expected: u64,
    search: impl Fn(&M) -> (u64, u64),
) {
    group.bench_function(format!("search/{}", M::NAME), |b| {
        b.iter(|| {
            let (hits, sum) = search(map);
            assert_eq!(hits, expected, "{} gave wrong hits", M::NAME);
            black_box(sum)
        })
    });
}

fn rt(c: &mut Criterion) {
    for case in rt_cases() {
        let data = RtData::generate(&case);
        let name = match &case {
            RtCase::SearchRandomNodes { filter, .. } => format!("{}:{filter:#X}", case.id()),
            RtCase::FixedHeightSearch { fanout, .. } | RtCase::Node48Churn { fanout, .. } => {
                format!("{}:{fanout}", case.id())
            }
            _ => case.id().to_string(),
        };
        let mut group = c.benchmark_group(name);
        common::configure(&mut group);
        for impl_name in peers::RT_IMPLS {
            if !peers::runs_by_default(impl_name, case.id()) {
                continue;
            }
            peers::visit_rt(
                impl_name,
                BenchRt {
                    group: &mut group,
                    case: &case,
                    data: &data,
                },
            );
        }
        group.finish();
    }
}

/// Registers one RT-7 structure's load and search in a group.
struct BenchRt128<'g, 'c, 'd> {
    group: &'g mut BenchmarkGroup<'c, WallTime>,
    data: &'d Rt128Data,
}

impl Rt128Visitor for BenchRt128<'_, '_, '_> {
    type Output = ();

    fn visit<M: RtMap<u128>>(self) {
        let Self { group, data } = self;
        bench_load(group, |map: &mut M| data.load(map));
        let mut map = M::new();
        data.load(&mut map);
        bench_search(group, &map, data.lookups(), |map| data.search(map));
    }
}

fn rt128(c: &mut Criterion) {
    let sizing = Sizing::scaled(Size::Default, SCALE);
    for case in workloads::parse("RT-7", sizing, Variant::default()).expect("RT-7") {
        let Case::Rt128(rt) = case else { continue };
        let data = Rt128Data::generate(&rt);
        let mut group = c.benchmark_group(rt.id());
        common::configure(&mut group);
        for impl_name in peers::RT128_IMPLS {
            peers::visit_rt128(
                impl_name,
                BenchRt128 {
                    group: &mut group,
                    data: &data,
                },
            );
        }
        group.finish();
    }
}

/// Registers one TS structure's benchmarks in a group.
struct BenchTs<'g, 'c, 'd> {
    group: &'g mut BenchmarkGroup<'c, WallTime>,
    data: &'d TsData,
}

impl TsVisitor for BenchTs<'_, '_, '_> {
    type Output = ();

    fn visit<S: DeadTidSet>(self) {
        let Self { group, data } = self;
        group.bench_function(format!("load/{}", S::NAME), |b| {
            b.iter_with_large_drop(|| data.load::<S>())
        });
        let set: S = data.load();
        let dead = data.dead();
        for order in Order::ALL {
            group.bench_function(format!("lookup-{}/{}", order.name(), S::NAME), |b| {
                b.iter(|| {
                    let matched = data.lookup(&set, order);
                    assert_eq!(matched, dead, "{} matched wrongly", S::NAME);
                    black_box(matched)
                })
            });
        }
        group.bench_function(format!("iterate/{}", S::NAME), |b| {
            b.iter(|| black_box(iterate(&set)))
        });
    }
}

fn ts(c: &mut Criterion) {
    let sizing = Sizing::scaled(Size::Default, SCALE);
    for id in workloads::DEFAULT_WORKLOADS
        .iter()
        .filter(|id| id.starts_with("TS-"))
    {
        for case in workloads::parse(id, sizing, Variant::default()).expect("a workload") {
            let Case::Ts(ts) = case else { continue };
            let data = TsData::prepare(&ts);
            let mut group = c.benchmark_group(ts.id);
            common::configure(&mut group);
            for impl_name in peers::TS_IMPLS {
                if !peers::runs_by_default(impl_name, ts.id) {
                    continue;
                }
                peers::visit_ts(
                    impl_name,
                    BenchTs {
                        group: &mut group,
                        data: &data,
                    },
                );
            }
            group.finish();
        }
    }
}

criterion_group!(benches, rt, rt128, ts);
criterion_main!(benches);
