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
//! - SET-1 and SET-2 at 1/50 (SET-1: TS-6's and TS-8's dead TIDs on 20,000
//!   blocks, 100,000 and 1,000,000 TIDs; SET-2: 20,000 keys in each of A
//!   and B), phases union and intersect, each on a fresh copy of A made
//!   (with B's copy for the union) outside the timing, the results dropped
//!   outside it too.
//!
//! - TB-1 to TB-6 at 1/50 (20,000 blocks; TB-3's budget scaled with them
//!   to 83,886 bytes, so that its bitmaps still turn most pages lossy;
//!   TB-6: 20,000 rounds), every TID bitmap (croaring only where there is
//!   no budget): `build` (every bitmap, every add call), `op` (TB-4's
//!   intersection, TB-5's unions, on bitmaps built outside the timing),
//!   `iterate` (the walk of the result); TB-6 `rounds` (each round's
//!   bitmap, adds, walk and drop) and `rounds-no-walk`. Each structure's
//!   result is checked once against the model before it is measured.
//!
//! - `project-shared` (the project's tree and TID store in shared memory,
//!   locked once per batch) runs where `bench-report` runs it by default:
//!   RT-1 and RT-2 (load, search), TS-2 and TS-4 (every phase).
//!
//! In criterion's test mode (`cargo test --benches`, as CI runs them:
//! each benchmark once, unoptimised, its results checked) every size above
//! is a tenth again, RT-5's keys included: the mode checks that each
//! benchmark runs and answers as its model does, and measures nothing.
//!
//! Benchmark ids read `GROUP/PHASE/IMPL`, e.g. `RT-2/search/blart`;
//! `cargo bench -p benches --bench workloads -- RT-2/` runs one workload.
//! `bench-report` gives the full-size figures and memory.

mod common;

use std::hint::black_box;

use benches::peers::{
    self, DeadTidSet, Rt128Visitor, RtMap, RtVisitor, SetOps, SetVisitor, TbVisitor, TidBitmapPeer,
    TsVisitor,
};
use benches::workloads::rt::RtData;
use benches::workloads::rt128::Rt128Data;
use benches::workloads::set::{SetData, SetModel};
use benches::workloads::tb::{self, TB_IDS, TbData, TbShape};
use benches::workloads::ts::{Order, TsData, iterate};
use benches::workloads::{self, Case, RtCase, Size, Sizing, TbCase, Variant};
use criterion::measurement::WallTime;
use criterion::{BatchSize, BenchmarkGroup, Criterion, criterion_group, criterion_main};

/// Scale of RT-1 to RT-4 and of the TS, SET and TB workloads, when
/// benchmarking.
const SCALE: f64 = 0.02;

/// How much smaller every workload is in criterion's test mode.
const TEST_MODE_FACTOR: u64 = 10;

/// Whether this run measures: cargo passes `--bench` to a benchmark
/// binary under `cargo bench` only, and criterion runs in test mode
/// without it.
fn measuring() -> bool {
    std::env::args().any(|arg| arg == "--bench")
}

/// The sizing of this run's RT-1 to RT-4, RT-7, TS, SET and TB workloads.
fn sizing() -> Sizing {
    let factor = if measuring() { 1 } else { TEST_MODE_FACTOR };
    Sizing::scaled(Size::Default, SCALE / factor as f64)
}

/// RT-5 fanouts measured here.
const RT5_FANOUTS: [u64; 3] = [4, 48, 256];

/// RT-6 churn rounds here (WORKLOADS.md: 10,000).
const RT6_ROUNDS: u64 = 100;

fn rt_cases() -> Vec<RtCase> {
    let sizing = sizing();
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
        nkeys: if measuring() {
            workloads::rt::RT5_KEYS
        } else {
            workloads::rt::RT5_KEYS / TEST_MODE_FACTOR
        },
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
    let sizing = sizing();
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
    let sizing = sizing();
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

/// Registers one SET structure's union and intersection in a group.
struct BenchSet<'g, 'c, 'd, I: ?Sized> {
    group: &'g mut BenchmarkGroup<'c, WallTime>,
    a: &'d I,
    b: &'d I,
    model: &'d SetModel,
}

impl<I: ?Sized> SetVisitor<I> for BenchSet<'_, '_, '_, I> {
    type Output = ();

    fn visit<S: SetOps<Input = I>>(self) {
        let Self { group, a, b, model } = self;
        let a = S::build(a);
        let b = S::build(b);
        // Check the answers once, outside the measurements.
        let mut check = a.copy();
        drop(check.union_with(b.copy()));
        assert_eq!(check.count(), model.union_len, "{} union", S::NAME);
        let mut check = a.copy();
        check.intersect_with(&b);
        assert_eq!(
            check.count(),
            model.intersect_len,
            "{} intersection",
            S::NAME
        );
        drop(check);

        group.bench_function(format!("union/{}", S::NAME), |bench| {
            bench.iter_batched(
                || (a.copy(), b.copy()),
                |(mut ours, theirs)| {
                    let rest = ours.union_with(theirs);
                    (ours, rest)
                },
                BatchSize::LargeInput,
            )
        });
        group.bench_function(format!("intersect/{}", S::NAME), |bench| {
            bench.iter_batched(
                || a.copy(),
                |mut ours| {
                    ours.intersect_with(&b);
                    ours
                },
                BatchSize::LargeInput,
            )
        });
    }
}

fn set(c: &mut Criterion) {
    let sizing = sizing();
    for id in ["SET-1", "SET-2"] {
        for case in workloads::parse(id, sizing, Variant::default()).expect("a workload") {
            let Case::Set(set) = case else { continue };
            let data = SetData::generate(&set);
            let model = data.model();
            let mut group = c.benchmark_group(set.id());
            common::configure(&mut group);
            match &data {
                SetData::Tids { a, b } => {
                    for impl_name in peers::SET_TID_IMPLS {
                        peers::visit_set_tids(
                            impl_name,
                            BenchSet {
                                group: &mut group,
                                a,
                                b,
                                model: &model,
                            },
                        );
                    }
                }
                SetData::Keys { a, b } => {
                    for impl_name in peers::SET_KEY_IMPLS {
                        peers::visit_set_keys(
                            impl_name,
                            BenchSet {
                                group: &mut group,
                                a: a.as_slice(),
                                b: b.as_slice(),
                                model: &model,
                            },
                        );
                    }
                }
            }
            group.finish();
        }
    }
}

/// Registers one TB structure's benchmarks in a group.
struct BenchTb<'g, 'c, 'd> {
    group: &'g mut BenchmarkGroup<'c, WallTime>,
    case: &'d TbCase,
    data: &'d TbData,
}

impl TbVisitor for BenchTb<'_, '_, '_> {
    type Output = ();

    fn visit<B: TidBitmapPeer>(self) {
        let Self { group, case, data } = self;
        if let TbShape::Rounds { rounds } = case.shape {
            let walked = tb::rounds::<B, true>(rounds, case.budget);
            assert_eq!(walked, data.expected, "{} walked wrongly", B::NAME);
            group.bench_function(format!("rounds/{}", B::NAME), |b| {
                b.iter(|| black_box(tb::rounds::<B, true>(rounds, case.budget)))
            });
            group.bench_function(format!("rounds-no-walk/{}", B::NAME), |b| {
                b.iter(|| black_box(tb::rounds::<B, false>(rounds, case.budget)))
            });
            return;
        }
        // Check the result once, outside the measurements.
        let mut bitmaps: Vec<B> = data.build_all(case);
        tb::combine(case, &mut bitmaps);
        bitmaps.truncate(1);
        let result = &bitmaps[0];
        let verified = tb::verify(result, &data.result);
        assert!(verified.is_clean(), "{} {}: {verified:?}", case.id, B::NAME);
        if !case.lossy_allowed() {
            assert_eq!(tb::walk(result, case.tpp), data.expected, "{}", B::NAME);
        }

        group.bench_function(format!("build/{}", B::NAME), |b| {
            b.iter_with_large_drop(|| data.build_all::<B>(case))
        });
        if data.sides.len() > 1 {
            group.bench_function(format!("op/{}", B::NAME), |b| {
                b.iter_batched(
                    || data.build_all::<B>(case),
                    |mut bitmaps| {
                        tb::combine(case, &mut bitmaps);
                        bitmaps
                    },
                    BatchSize::LargeInput,
                )
            });
        }
        group.bench_function(format!("iterate/{}", B::NAME), |b| {
            b.iter(|| black_box(tb::walk(result, case.tpp)))
        });
    }
}

fn tid_bitmaps(c: &mut Criterion) {
    let sizing = sizing();
    for id in TB_IDS {
        for case in workloads::parse(id, sizing, Variant::default()).expect("a workload") {
            let Case::Tb(case) = case else { continue };
            let data = TbData::generate(&case);
            let mut group = c.benchmark_group(case.id);
            common::configure(&mut group);
            for impl_name in peers::TB_IMPLS {
                if !peers::tb_runs_on(impl_name, case.budget.is_some()) {
                    continue;
                }
                peers::visit_tb(
                    impl_name,
                    BenchTb {
                        group: &mut group,
                        case: &case,
                        data: &data,
                    },
                );
            }
            group.finish();
        }
    }
}

criterion_group!(benches, rt, rt128, ts, set, tid_bitmaps);
criterion_main!(benches);
