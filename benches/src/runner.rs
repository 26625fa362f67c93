//! Runs a workload case for each structure, one after another on the same
//! data, timing each phase, reading memory, and checking the answers.
//!
//! Timing is wall clock around the measured loop only. Memory is the
//! structure's own account when it has one ([`RtMap::own_memory`],
//! [`DeadTidSet::own_memory`]), else the bytes the counting allocator saw
//! it keep: live bytes after the load minus live bytes before construction.
//!
//! RT-C builds each structure, loads it and reads its memory on this
//! thread, then runs its reader and writer threads for the case's wall
//! clock time (see [`crate::workloads::rtc`]); a fresh structure for every
//! row and run, since writers stopped mid-round leave keys behind.
//!
//! The SET workloads build A and B untimed, then time `A ∪= B` and
//! `A ∩= B`, each on a fresh copy of A (copied untimed); a result's memory
//! is its own account, or the live bytes added since before the copy of A
//! was made, read once B's copy (for the union) has been dropped.
//!
//! The TB workloads time the build of every bitmap (construction and
//! every add call), the operation (TB-4's intersection, TB-5's unions)
//! and the walk of the result; memory is read after each bitmap's build.
//! Then, untimed: a second walk checks the result against the model, and
//! with a budget a second build reads the memory after every add call
//! (for the project, which promises to keep within it, any add that
//! leaves it over fails the run; `tbm-hash` has how far it went over
//! reported). TB-6 times its rounds twice, without their walks
//! (`build_ms`) and with them, `iterate_ms` being the difference.

use std::hint::black_box;
use std::time::Instant;

use tidstore::Tid;

use crate::alloc::{bytes_since, live_bytes};
use crate::peers::{
    self, ConcurrentMap, DeadTidSet, Rt128Visitor, RtMap, RtVisitor, RtcVisitor, SetOps,
    SetVisitor, TbVisitor, TidBitmapPeer, TsVisitor,
};
use crate::report::{CaseResult, Rows, RtRow, RtcRow, SetRow, TbRow, TsRow};
use crate::workloads::rt::RtData;
use crate::workloads::rt128::Rt128Data;
use crate::workloads::rtc::{RtcCase, RtcData};
use crate::workloads::set::{SetData, SetModel};
use crate::workloads::tb::{self, TbData, TbShape, Verified};
use crate::workloads::ts::{Order, TsData, iterate};
use crate::workloads::{Case, Rt128Case, RtCase, SetCase, TbCase, TsCase};

/// What the runner tells its caller while it works.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// Generating the data of a case.
    Generating(&'a Case),
    /// About to measure structure `impl_name`, run `run` (0-based).
    Measuring {
        /// The case.
        case: &'a Case,
        /// The structure.
        impl_name: &'a str,
        /// The run, counting from 0.
        run: usize,
    },
    /// Finished measuring one structure once.
    Measured,
}

/// How to run cases.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The structures to run, by `impl` name; `None` for the default
    /// selection (see [`select`](Self::select)).
    pub impls: Option<Vec<String>>,
    /// Runs per structure; the report gives the median.
    pub repeat: usize,
    /// TS workloads: look up at most this many index TIDs in the shuffled
    /// pass, a uniform random sample (see [`TsData::prepare_sampled`]);
    /// `None` for every index TID.
    pub shuffled_sample: Option<u64>,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            impls: None,
            repeat: 1,
            shuffled_sample: None,
        }
    }
}

impl RunOptions {
    /// The structures to run on `case`, in report order: those named, or
    /// without names every structure of its family that
    /// [`peers::runs_by_default`] on it; on a TB workload, only those
    /// [`peers::tb_runs_on`] it (no structure without a budget where the
    /// workload has one).
    pub fn select(&self, case: &Case) -> Vec<&'static str> {
        let all: &[&'static str] = match case {
            Case::Rt(_) => &peers::RT_IMPLS,
            Case::Rt128(_) => &peers::RT128_IMPLS,
            Case::Rtc(_) => &peers::RTC_IMPLS,
            Case::Ts(_) => &peers::TS_IMPLS,
            Case::Set(SetCase::Tids { .. }) => &peers::SET_TID_IMPLS,
            Case::Set(SetCase::Keys { .. }) => &peers::SET_KEY_IMPLS,
            Case::Tb(_) => &peers::TB_IMPLS,
        };
        all.iter()
            .copied()
            .filter(|name| match &self.impls {
                Some(chosen) => chosen.iter().any(|c| c == name),
                None => peers::runs_by_default(name, case.id()),
            })
            .filter(|name| match case {
                Case::Tb(tb) => peers::tb_runs_on(name, tb.budget.is_some()),
                _ => true,
            })
            .collect()
    }

    /// The chosen names that are no structure at all.
    pub fn unknown_impls(&self) -> Vec<String> {
        let known = |n: &String| {
            peers::RT_IMPLS.contains(&n.as_str())
                || peers::RT128_IMPLS.contains(&n.as_str())
                || peers::RTC_IMPLS.contains(&n.as_str())
                || peers::TS_IMPLS.contains(&n.as_str())
                || peers::SET_TID_IMPLS.contains(&n.as_str())
                || peers::SET_KEY_IMPLS.contains(&n.as_str())
                || peers::TB_IMPLS.contains(&n.as_str())
        };
        self.impls
            .iter()
            .flatten()
            .filter(|n| !known(n))
            .cloned()
            .collect()
    }

    /// Measurements (structures times runs) a case will make.
    pub fn steps(&self, case: &Case) -> usize {
        self.select(case).len() * self.repeat.max(1)
    }
}

/// Generates the data of `case`, measures every selected structure on it
/// (`repeat` times, interleaved), and checks each run's answers.
pub fn run_case(case: &Case, opts: &RunOptions, events: &mut dyn FnMut(Event<'_>)) -> CaseResult {
    events(Event::Generating(case));
    match case {
        Case::Rt(rt) => run_rt(case, rt, opts, events),
        Case::Rt128(rt) => run_rt128(case, rt, opts, events),
        Case::Rtc(rtc) => run_rtc(case, rtc, opts, events),
        Case::Ts(ts) => run_ts(case, ts, opts, events),
        Case::Set(set) => run_set(case, set, opts, events),
        Case::Tb(tb) => run_tb(case, tb, opts, events),
    }
}

fn run_rt(
    case: &Case,
    rt: &RtCase,
    opts: &RunOptions,
    events: &mut dyn FnMut(Event<'_>),
) -> CaseResult {
    let data = RtData::generate(rt);
    run_maps(
        case,
        opts,
        events,
        data.lookups(),
        |name| peers::visit_rt(name, MeasureRt { data: &data }).expect("a known name"),
        |row| check_rt(rt, &data, row),
    )
}

fn run_rt128(
    case: &Case,
    rt: &Rt128Case,
    opts: &RunOptions,
    events: &mut dyn FnMut(Event<'_>),
) -> CaseResult {
    let data = Rt128Data::generate(rt);
    run_maps(
        case,
        opts,
        events,
        data.lookups(),
        |name| peers::visit_rt128(name, MeasureRt128 { data: &data }).expect("a known name"),
        |row| check_rt128(&data, row),
    )
}

fn run_rtc(
    case: &Case,
    rtc: &RtcCase,
    opts: &RunOptions,
    events: &mut dyn FnMut(Event<'_>),
) -> CaseResult {
    let data = RtcData::generate(rtc);
    let (runs, failures) = measure_all(
        case,
        &opts.select(case),
        opts,
        events,
        |name| {
            peers::visit_rtc(
                name,
                MeasureRtc {
                    data: &data,
                    case: rtc,
                },
            )
            .expect("a known name")
        },
        |row| check_rtc(rtc, row),
    );
    let rows = runs.iter().map(|r| RtcRow::median(r)).collect();
    CaseResult {
        case: case.clone(),
        lookups: data.tids(),
        shuffled_lookups: None,
        dead: None,
        index: None,
        set_model: None,
        tb_model: None,
        rows: Rows::Rtc(rows),
        failures,
    }
}

/// Measures every selected map (either key width) with `measure`, checks
/// each run with `check`, and reports the medians.
fn run_maps(
    case: &Case,
    opts: &RunOptions,
    events: &mut dyn FnMut(Event<'_>),
    lookups: u64,
    measure: impl FnMut(&str) -> RtRow,
    check: impl Fn(&RtRow) -> Result<(), String>,
) -> CaseResult {
    let (runs, failures) = measure_all(case, &opts.select(case), opts, events, measure, check);
    let rows = runs.iter().map(|r| RtRow::median(r)).collect();
    CaseResult {
        case: case.clone(),
        lookups,
        shuffled_lookups: None,
        dead: None,
        index: None,
        set_model: None,
        tb_model: None,
        rows: Rows::Rt(rows),
        failures,
    }
}

fn run_ts(
    case: &Case,
    ts: &TsCase,
    opts: &RunOptions,
    events: &mut dyn FnMut(Event<'_>),
) -> CaseResult {
    let data = TsData::prepare_sampled(ts, opts.shuffled_sample);
    let (runs, failures) = measure_all(
        case,
        &opts.select(case),
        opts,
        events,
        |name| peers::visit_ts(name, MeasureTs { data: &data }).expect("a known name"),
        |row| check_ts(&data, row),
    );
    let rows = runs.iter().map(|r| TsRow::median(r)).collect();
    CaseResult {
        case: case.clone(),
        lookups: data.index(),
        shuffled_lookups: data.is_sampled().then(|| data.lookups(Order::Shuffled)),
        dead: Some(data.dead()),
        index: Some(data.index()),
        set_model: None,
        tb_model: None,
        rows: Rows::Ts(rows),
        failures,
    }
}

fn run_set(
    case: &Case,
    set: &SetCase,
    opts: &RunOptions,
    events: &mut dyn FnMut(Event<'_>),
) -> CaseResult {
    let data = SetData::generate(set);
    let model = data.model();
    let (runs, failures) = measure_all(
        case,
        &opts.select(case),
        opts,
        events,
        |name| {
            match &data {
                SetData::Tids { a, b } => peers::visit_set_tids(name, MeasureSet { a, b }),
                SetData::Keys { a, b } => peers::visit_set_keys(
                    name,
                    MeasureSet {
                        a: a.as_slice(),
                        b: b.as_slice(),
                    },
                ),
            }
            .expect("a known name")
        },
        |row| check_set(&model, row),
    );
    let rows = runs.iter().map(|r| SetRow::median(r)).collect();
    CaseResult {
        case: case.clone(),
        lookups: 0,
        shuffled_lookups: None,
        dead: None,
        index: None,
        set_model: Some(model),
        tb_model: None,
        rows: Rows::Set(rows),
        failures,
    }
}

fn run_tb(
    case: &Case,
    tb: &TbCase,
    opts: &RunOptions,
    events: &mut dyn FnMut(Event<'_>),
) -> CaseResult {
    let data = TbData::generate(tb);
    let (runs, failures) = measure_all(
        case,
        &opts.select(case),
        opts,
        events,
        |name| {
            peers::visit_tb(
                name,
                MeasureTb {
                    case: tb,
                    data: &data,
                },
            )
            .expect("a known name")
        },
        |row| check_tb(tb, &data, row),
    );
    let rows = runs.iter().map(|r| TbRow::median(r)).collect();
    CaseResult {
        case: case.clone(),
        lookups: 0,
        shuffled_lookups: None,
        dead: None,
        index: None,
        set_model: None,
        tb_model: Some(data.model(tb)),
        rows: Rows::Tb(rows),
        failures,
    }
}

/// Measures every named structure `repeat` times, in turn, and checks each
/// row; returns the rows per structure and the failures found.
fn measure_all<Row: Clone, E: std::fmt::Display>(
    case: &Case,
    names: &[&'static str],
    opts: &RunOptions,
    events: &mut dyn FnMut(Event<'_>),
    mut measure: impl FnMut(&str) -> Row,
    check: impl Fn(&Row) -> Result<(), E>,
) -> (Vec<Vec<Row>>, Vec<String>) {
    let mut runs: Vec<Vec<Row>> = vec![Vec::new(); names.len()];
    let mut failures = Vec::new();
    for run in 0..opts.repeat.max(1) {
        for (i, name) in names.iter().enumerate() {
            events(Event::Measuring {
                case,
                impl_name: name,
                run,
            });
            let row = measure(name);
            if let Err(problem) = check(&row) {
                failures.push(format!("{} {name}: {problem}", case));
            }
            runs[i].push(row);
            events(Event::Measured);
        }
    }
    (runs, failures)
}

/// Milliseconds since `start`.
fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

/// Memory of a structure: its own account, or the live bytes it added.
fn memory(own: Option<usize>, before: isize) -> u64 {
    own.unwrap_or_else(|| bytes_since(before)) as u64
}

/// Measures one RT structure once.
pub struct MeasureRt<'a> {
    /// The workload's data.
    pub data: &'a RtData,
}

impl RtVisitor for MeasureRt<'_> {
    type Output = RtRow;

    fn visit<M: RtMap>(self) -> RtRow {
        let data = self.data;
        let before = live_bytes();
        let (mut map, mut row) = measure_load::<u64, M>(data.nkeys(), |map| data.load(map));
        if matches!(data, RtData::Churn { .. }) {
            let start = Instant::now();
            row.hits = data.churn(&mut map);
            row.churn_ms = Some(ms_since(start));
            map.quiesce();
            row.mem_bytes = memory(map.own_memory(), before);
            let (present, sum) = data.search(&map);
            row.present = Some(present);
            row.value_sum = sum;
        } else {
            row.mem_bytes = memory(map.own_memory(), before);
            measure_search(&map, &mut row, |map| data.search(map));
        }
        drop(map);
        row
    }
}

/// Measures one RT-7 structure once.
pub struct MeasureRt128<'a> {
    /// The workload's data.
    pub data: &'a Rt128Data,
}

impl Rt128Visitor for MeasureRt128<'_> {
    type Output = RtRow;

    fn visit<M: RtMap<u128>>(self) -> RtRow {
        let data = self.data;
        let before = live_bytes();
        let (map, mut row) = measure_load::<u128, M>(data.nkeys(), |map| data.load(map));
        row.mem_bytes = memory(map.own_memory(), before);
        measure_search(&map, &mut row, |map| data.search(map));
        drop(map);
        row
    }
}

/// Builds a map with `load` (timed, construction included) and starts its
/// row: the load time, the key count, nothing else measured yet.
fn measure_load<K: Copy, M: RtMap<K>>(nkeys: u64, load: impl FnOnce(&mut M) -> u64) -> (M, RtRow) {
    let start = Instant::now();
    let mut map = M::new();
    let inserts = load(&mut map);
    let load_ms = ms_since(start);
    black_box(inserts);
    map.quiesce();
    let row = RtRow {
        impl_name: M::NAME,
        nkeys,
        mem_bytes: 0,
        load_ms,
        search_ms: None,
        churn_ms: None,
        hits: 0,
        value_sum: 0,
        present: None,
    };
    (map, row)
}

/// Times `search` over `map` and records its hits and value sum in `row`.
fn measure_search<M>(map: &M, row: &mut RtRow, search: impl FnOnce(&M) -> (u64, u64)) {
    let start = Instant::now();
    let (hits, sum) = search(map);
    row.search_ms = Some(ms_since(start));
    row.hits = black_box(hits);
    row.value_sum = black_box(sum);
}

fn check_rt(case: &RtCase, data: &RtData, row: &RtRow) -> Result<(), String> {
    let expected = data.expected_hits();
    if row.hits != expected {
        let what = match case {
            RtCase::Node48Churn { .. } => "successful deletes",
            _ => "hits",
        };
        return Err(format!("{} {what}, expected {expected}", row.hits));
    }
    if let Some(present) = row.present
        && present != data.nkeys()
    {
        return Err(format!(
            "{present} keys present after the churn, expected {}",
            data.nkeys()
        ));
    }
    check_value_sum(row, data.expected_sum())
}

fn check_rt128(data: &Rt128Data, row: &RtRow) -> Result<(), String> {
    if row.hits != data.lookups() {
        return Err(format!("{} hits, expected {}", row.hits, data.lookups()));
    }
    check_value_sum(row, data.expected_sum())
}

/// Whether the values a map found sum (wrapping) to `expected`.
fn check_value_sum(row: &RtRow, expected: u64) -> Result<(), String> {
    if row.value_sum != expected {
        return Err(format!(
            "values found sum to {:#x}, expected {expected:#x}",
            row.value_sum
        ));
    }
    Ok(())
}

/// Measures one RT-C structure once, on one row.
pub struct MeasureRtc<'a> {
    /// The workload's data.
    pub data: &'a RtcData,
    /// The row: readers, writers, duration.
    pub case: &'a RtcCase,
}

impl RtcVisitor for MeasureRtc<'_> {
    type Output = RtcRow;

    fn visit<M: ConcurrentMap>(self) -> RtcRow {
        let data = self.data;
        // Garbage still waiting in this structure's epochs (an earlier
        // row's writers retired it) is freed now, not while this one's
        // bytes are counted; each structure settles its own after its run.
        M::quiesce();
        let before = live_bytes();
        let map = M::new();
        data.load(&map);
        M::quiesce();
        let mem_bytes = memory(map.own_memory(), before);
        let counts = data.run(&map, self.case);
        drop(map);
        M::quiesce();
        let rate = |n: u64| {
            if counts.seconds > 0.0 {
                n as f64 / counts.seconds
            } else {
                0.0
            }
        };
        RtcRow {
            impl_name: M::NAME,
            nkeys: data.nkeys(),
            mem_bytes,
            lookups: black_box(counts.lookups),
            hits: black_box(counts.hits),
            writes: counts.writes(),
            removes: counts.removes,
            removed: counts.removed,
            reads_per_s: rate(counts.lookups),
            writes_per_s: rate(counts.writes()),
        }
    }
}

fn check_rtc(case: &RtcCase, row: &RtcRow) -> Result<(), String> {
    if row.hits != row.lookups {
        return Err(format!(
            "{} hits in {} lookups: RT-2's TIDs must all be found beside the writers",
            row.hits, row.lookups
        ));
    }
    if row.removed != row.removes {
        return Err(format!(
            "{} of {} removes found their key: a writer's keys are its own",
            row.removed, row.removes
        ));
    }
    if case.readers > 0 && row.lookups == 0 {
        return Err("the readers made no lookups".to_string());
    }
    if case.writers > 0 && row.writes == 0 {
        return Err("the writers made no inserts or removes".to_string());
    }
    Ok(())
}

/// Measures one TS structure once.
pub struct MeasureTs<'a> {
    /// The workload's data.
    pub data: &'a TsData,
}

impl TsVisitor for MeasureTs<'_> {
    type Output = TsRow;

    fn visit<S: DeadTidSet>(self) -> TsRow {
        let data = self.data;
        let before = live_bytes();
        let start = Instant::now();
        let set: S = data.load();
        let load_ms = ms_since(start);
        let mem_bytes = memory(set.own_memory(), before);

        let mut lookup_ms = [0.0; 2];
        let mut matched = [0; 2];
        for (i, order) in Order::ALL.into_iter().enumerate() {
            let start = Instant::now();
            matched[i] = black_box(data.lookup(&set, order));
            lookup_ms[i] = ms_since(start);
        }

        let start = Instant::now();
        let walked = black_box(iterate(&set));
        let iterate_ms = ms_since(start);
        drop(set);
        TsRow {
            impl_name: S::NAME,
            mem_bytes,
            load_ms,
            lookup_ms,
            matched,
            iterate_ms,
            walked,
        }
    }
}

fn check_ts(data: &TsData, row: &TsRow) -> Result<(), String> {
    for (i, order) in Order::ALL.into_iter().enumerate() {
        let expected = data.expected_matched(order);
        if row.matched[i] != expected {
            return Err(format!(
                "{} matched in {} {} lookups, expected {expected} (the dead TIDs among them)",
                row.matched[i],
                data.lookups(order),
                order.name()
            ));
        }
    }
    let expected = data.expected_walk();
    if row.walked != expected {
        return Err(format!(
            "iteration saw {:?}, expected {expected:?}",
            row.walked
        ));
    }
    Ok(())
}

/// Measures one SET structure once: builds A and B, then times the union
/// and the intersection, each on a fresh copy of A.
pub struct MeasureSet<'a, I: ?Sized> {
    /// What A is built from.
    pub a: &'a I,
    /// What B is built from.
    pub b: &'a I,
}

impl<I: ?Sized> SetVisitor<I> for MeasureSet<'_, I> {
    type Output = SetRow;

    fn visit<S: SetOps<Input = I>>(self) -> SetRow {
        let a = S::build(self.a);
        let b = S::build(self.b);

        // A ∪= B: the union may consume its argument, so it gets a copy of
        // B, made untimed and (whatever is left of it) dropped untimed.
        let before = live_bytes();
        let mut union = a.copy();
        let theirs = b.copy();
        let start = Instant::now();
        let rest = union.union_with(theirs);
        let union_ms = ms_since(start);
        drop(black_box(rest));
        let union_mem_bytes = memory(union.own_memory(), before);
        let (union_len, union_sum) = (union.count(), union.checksum());
        drop(union);

        // A ∩= B.
        let before = live_bytes();
        let mut intersection = a.copy();
        let start = Instant::now();
        intersection.intersect_with(&b);
        let intersect_ms = ms_since(start);
        black_box(&mut intersection);
        let intersect_mem_bytes = memory(intersection.own_memory(), before);
        let (intersect_len, intersect_sum) = (intersection.count(), intersection.checksum());
        drop(intersection);
        drop(b);
        drop(a);
        SetRow {
            impl_name: S::NAME,
            union_ms,
            intersect_ms,
            union_mem_bytes,
            intersect_mem_bytes,
            union_len,
            intersect_len,
            union_sum,
            intersect_sum,
        }
    }
}

fn check_set(model: &SetModel, row: &SetRow) -> Result<(), String> {
    for (op, len, expected_len, sum, expected_sum) in [
        (
            "union",
            row.union_len,
            model.union_len,
            row.union_sum,
            model.union_sum,
        ),
        (
            "intersection",
            row.intersect_len,
            model.intersect_len,
            row.intersect_sum,
            model.intersect_sum,
        ),
    ] {
        if len != expected_len {
            return Err(format!(
                "the {op} holds {len} elements, expected {expected_len}"
            ));
        }
        if sum != expected_sum {
            return Err(format!(
                "the {op} holds the right number of elements but not the right ones \
                 (checksum {sum:#x}, expected {expected_sum:#x})"
            ));
        }
    }
    Ok(())
}

/// Measures one TB structure once.
pub struct MeasureTb<'a> {
    /// The workload.
    pub case: &'a TbCase,
    /// Its data.
    pub data: &'a TbData,
}

impl TbVisitor for MeasureTb<'_> {
    type Output = TbRow;

    fn visit<B: TidBitmapPeer>(self) -> TbRow {
        match self.case.shape {
            TbShape::Rounds { rounds } => measure_rounds::<B>(self.case, rounds),
            _ => measure_bitmaps::<B>(self.case, self.data),
        }
    }
}

/// TB-1 to TB-5: builds every bitmap (timed), combines them (timed),
/// walks the result (timed), then checks it and, with a budget, traces
/// the memory of a second build.
fn measure_bitmaps<B: TidBitmapPeer>(case: &TbCase, data: &TbData) -> TbRow {
    let mut bitmaps: Vec<B> = Vec::with_capacity(data.sides.len());
    let mut build_ms = 0.0;
    let mut mem_bytes = 0;
    for side in 0..data.sides.len() {
        let before = live_bytes();
        let start = Instant::now();
        let bitmap: B = data.build(case, side);
        build_ms += ms_since(start);
        mem_bytes = mem_bytes.max(memory(bitmap.own_memory(), before));
        bitmaps.push(bitmap);
    }
    let op_ms = (bitmaps.len() > 1).then(|| {
        let start = Instant::now();
        tb::combine(case, &mut bitmaps);
        ms_since(start)
    });
    // The other sides go untimed.
    bitmaps.truncate(1);
    let result = &bitmaps[0];
    let start = Instant::now();
    let walked = black_box(tb::walk(result, case.tpp));
    let iterate_ms = ms_since(start);
    let verified = tb::verify(result, &data.result);
    drop(bitmaps);
    let (peak_bytes, over_budget_adds) = match case.budget {
        Some(budget) => {
            let (peak, over) = trace_budget::<B>(budget, &data.sides[0]);
            (Some(peak), over)
        }
        None => (None, 0),
    };
    TbRow {
        impl_name: B::NAME,
        mem_bytes,
        build_ms,
        op_ms,
        iterate_ms,
        rounds_ms: None,
        walked,
        verified,
        peak_bytes,
        over_budget_adds,
        keeps_budget: B::KEEPS_BUDGET,
    }
}

/// Builds a bitmap within `budget` from `tids`, untimed, reading its
/// memory after every add call: the most it held, and the adds after
/// which it held more than `budget`.
fn trace_budget<B: TidBitmapPeer>(budget: usize, tids: &[Tid]) -> (u64, u64) {
    let before = live_bytes();
    let mut bitmap = B::new(Some(budget));
    let mut peak = memory(bitmap.own_memory(), before);
    let mut over = 0;
    for &tid in tids {
        bitmap.add_tid(tid);
        let now = memory(bitmap.own_memory(), before);
        peak = peak.max(now);
        over += u64::from(now > budget as u64);
    }
    drop(bitmap);
    (peak, over)
}

/// TB-6: its rounds timed without their walks, then with them; then,
/// untimed, every round again with its memory read after every add call
/// and its walk checked.
fn measure_rounds<B: TidBitmapPeer>(case: &TbCase, rounds: u64) -> TbRow {
    let start = Instant::now();
    black_box(tb::rounds::<B, false>(rounds, case.budget));
    let build_ms = ms_since(start);
    let start = Instant::now();
    let walked = black_box(tb::rounds::<B, true>(rounds, case.budget));
    let rounds_ms = ms_since(start);

    let budget = case.budget.map_or(u64::MAX, |b| b as u64);
    let mut peak = 0;
    let mut over = 0;
    let mut verified = Verified::default();
    for r in 0..rounds {
        let tids = tb::round_tids(r);
        let before = live_bytes();
        let mut bitmap = B::new(case.budget);
        for &tid in &tids {
            bitmap.add_tid(tid);
            let now = memory(bitmap.own_memory(), before);
            peak = peak.max(now);
            over += u64::from(now > budget);
        }
        verified.add(&tb::verify(&bitmap, &tids));
    }
    TbRow {
        impl_name: B::NAME,
        mem_bytes: peak,
        build_ms,
        op_ms: None,
        iterate_ms: (rounds_ms - build_ms).max(0.0),
        rounds_ms: Some(rounds_ms),
        walked,
        verified,
        peak_bytes: case.budget.map(|_| peak),
        over_budget_adds: over,
        keeps_budget: B::KEEPS_BUDGET,
    }
}

/// Checks one TB row against the workload's model: the untimed walk found
/// nothing wrong (every match on a page, exact pages exactly their
/// matches, block order); on every workload but TB-3 the measured walk
/// is exactly the model's (no lossy page, no recheck); on TB-3 lossy
/// pages count `tpp` recheck tuples each and exact pages none; and a
/// structure that promises to keep within its budget did after every add
/// call.
pub fn check_tb(case: &TbCase, data: &TbData, row: &TbRow) -> Result<(), String> {
    let v = &row.verified;
    if v.out_of_order > 0 {
        return Err(format!(
            "{} pages came out of block order or twice",
            v.out_of_order
        ));
    }
    if v.missed > 0 {
        return Err(format!("{} matching TIDs are on no page", v.missed));
    }
    if v.wrong_pages > 0 {
        return Err(format!(
            "{} exact pages do not hold exactly their matches",
            v.wrong_pages
        ));
    }
    let w = &row.walked;
    if case.lossy_allowed() {
        if w.pages != w.exact_pages + w.lossy_pages {
            return Err(format!(
                "{} pages but {} exact and {} lossy",
                w.pages, w.exact_pages, w.lossy_pages
            ));
        }
        if w.recheck_tuples != w.lossy_pages * u64::from(case.tpp) {
            return Err(format!(
                "{} recheck tuples, expected {} for {} lossy pages (no TID was added for recheck)",
                w.recheck_tuples,
                w.lossy_pages * u64::from(case.tpp),
                w.lossy_pages
            ));
        }
        if w.tuples > data.expected.tuples || w.pages > data.expected.pages {
            return Err(format!(
                "the walk gave {} pages and {} tuples, more than the {} and {} there are",
                w.pages, w.tuples, data.expected.pages, data.expected.tuples
            ));
        }
    } else {
        if w.lossy_pages > 0 {
            return Err(format!("{} lossy pages, where none may be", w.lossy_pages));
        }
        if *w != data.expected {
            return Err(format!("the walk saw {w:?}, expected {:?}", data.expected));
        }
    }
    if let (Some(budget), true) = (case.budget, row.keeps_budget) {
        if row.over_budget_adds > 0 {
            return Err(format!(
                "memory passed the budget of {budget} bytes after {} add calls (peak {})",
                row.over_budget_adds,
                row.peak_bytes.unwrap_or(0)
            ));
        }
        if row.mem_bytes > budget as u64 {
            return Err(format!(
                "memory after the build, {} bytes, is over the budget of {budget}",
                row.mem_bytes
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::{Size, Sizing, Variant, parse};

    fn tiny(id: &str) -> Case {
        parse(id, Sizing::scaled(Size::Default, 0.001), Variant::default())
            .unwrap()
            .remove(0)
    }

    #[test]
    fn wrong_rt_answers_are_reported() {
        let case = tiny("RT-3");
        let Case::Rt(rt) = &case else { unreachable!() };
        let data = RtData::generate(rt);
        let row = peers::visit_rt("project", MeasureRt { data: &data }).unwrap();
        assert_eq!(check_rt(rt, &data, &row), Ok(()));
        let short = RtRow {
            hits: row.hits - 1,
            ..row.clone()
        };
        assert!(check_rt(rt, &data, &short).is_err());
        let wrong_value = RtRow {
            value_sum: row.value_sum ^ 1,
            ..row
        };
        assert!(check_rt(rt, &data, &wrong_value).is_err());
    }

    #[test]
    fn wrong_rtc_answers_are_reported() {
        let case = tiny("RT-C:1,1");
        let Case::Rtc(rtc) = &case else {
            unreachable!()
        };
        let data = RtcData::generate(rtc);
        let row = peers::visit_rtc(
            "btreemap-rwlock",
            MeasureRtc {
                data: &data,
                case: rtc,
            },
        )
        .unwrap();
        assert_eq!(check_rtc(rtc, &row), Ok(()));
        assert!(row.lookups > 0 && row.writes > 0);
        let lost_tid = RtcRow {
            hits: row.hits - 1,
            ..row.clone()
        };
        assert!(check_rtc(rtc, &lost_tid).is_err());
        let lost_key = RtcRow {
            removed: row.removes + 1,
            ..row.clone()
        };
        assert!(check_rtc(rtc, &lost_key).is_err());
        let idle = RtcRow { writes: 0, ..row };
        assert!(check_rtc(rtc, &idle).is_err());
    }

    #[test]
    fn wrong_ts_answers_are_reported() {
        let case = tiny("TS-1");
        let Case::Ts(ts) = &case else { unreachable!() };
        let data = TsData::prepare(ts);
        let row = peers::visit_ts("array", MeasureTs { data: &data }).unwrap();
        assert_eq!(check_ts(&data, &row), Ok(()));
        let mut wrong = row.clone();
        wrong.matched[1] += 1;
        assert!(check_ts(&data, &wrong).is_err());
        let mut wrong = row;
        wrong.walked.tids -= 1;
        assert!(check_ts(&data, &wrong).is_err());
    }

    #[test]
    fn wrong_tb_answers_are_reported() {
        let sizing = Sizing::scaled(Size::Default, 0.002);
        for id in ["TB-1", "TB-3", "TB-4", "TB-6"] {
            let Case::Tb(tb) = parse(id, sizing, Variant::default()).unwrap().remove(0) else {
                unreachable!()
            };
            let data = TbData::generate(&tb);
            let measure = |name| {
                peers::visit_tb(
                    name,
                    MeasureTb {
                        case: &tb,
                        data: &data,
                    },
                )
                .unwrap()
            };
            let project = measure("project");
            let hash = measure("tbm-hash");
            for row in [&project, &hash] {
                assert_eq!(check_tb(&tb, &data, row), Ok(()), "{id} {}", row.impl_name);
            }
            let wrong = |change: &dyn Fn(&mut TbRow)| {
                let mut row = project.clone();
                change(&mut row);
                check_tb(&tb, &data, &row)
            };
            assert!(wrong(&|r| r.verified.missed += 1).is_err(), "{id}");
            assert!(wrong(&|r| r.verified.wrong_pages += 1).is_err(), "{id}");
            assert!(wrong(&|r| r.verified.out_of_order += 1).is_err(), "{id}");
            assert!(wrong(&|r| r.walked.recheck_tuples += 1).is_err(), "{id}");
            if tb.lossy_allowed() {
                assert!(wrong(&|r| r.walked.pages += 1).is_err(), "{id}");
            } else {
                assert!(wrong(&|r| r.walked.tuples -= 1).is_err(), "{id}");
                assert!(wrong(&|r| r.walked.checksum ^= 1).is_err(), "{id}");
                assert!(
                    wrong(&|r| {
                        r.walked.exact_pages -= 1;
                        r.walked.lossy_pages += 1;
                    })
                    .is_err(),
                    "{id}"
                );
            }
            // Over the budget: wrong for the project, which promises to
            // keep within it; reported, not wrong, for tbm-hash.
            if let Some(budget) = tb.budget {
                let over = |r: &mut TbRow| {
                    r.over_budget_adds = 3;
                    r.peak_bytes = Some(budget as u64 + 1);
                };
                assert!(wrong(&over).is_err(), "{id}");
                let mut hash_over = hash.clone();
                over(&mut hash_over);
                assert_eq!(check_tb(&tb, &data, &hash_over), Ok(()), "{id}");
                assert!(wrong(&|r| r.mem_bytes = budget as u64 + 1).is_err(), "{id}");
            }
        }
    }

    #[test]
    fn croaring_is_not_applicable_where_there_is_a_budget() {
        let opts = RunOptions {
            impls: Some(vec!["croaring".into(), "tbm-hash".into()]),
            ..RunOptions::default()
        };
        let all = RunOptions::default();
        for (id, with_croaring) in [
            ("TB-1", true),
            ("TB-2", true),
            ("TB-3", false),
            ("TB-4", true),
            ("TB-5", true),
            ("TB-6", false),
        ] {
            let case = tiny(id);
            let expected: &[&str] = if with_croaring {
                &["tbm-hash", "croaring"]
            } else {
                &["tbm-hash"]
            };
            assert_eq!(opts.select(&case), expected, "{id}");
            assert_eq!(all.select(&case)[0], "project", "{id}");
            assert_eq!(all.select(&case).len(), expected.len() + 1, "{id}");
        }
        assert!(opts.unknown_impls().is_empty());
    }

    #[test]
    fn repeats_and_impl_selection() {
        let opts = RunOptions {
            impls: Some(vec!["project".into(), "hashset".into(), "btreemap".into()]),
            repeat: 3,
            ..RunOptions::default()
        };
        let case = tiny("TS-2");
        assert_eq!(opts.steps(&case), 6);
        let mut measured = 0;
        let result = run_case(&case, &opts, &mut |e| {
            if let Event::Measured = e {
                measured += 1;
            }
        });
        assert_eq!(measured, 6);
        assert!(result.failures.is_empty());
        let Rows::Ts(rows) = &result.rows else {
            unreachable!()
        };
        let names: Vec<&str> = rows.iter().map(|r| r.impl_name).collect();
        assert_eq!(names, ["project", "hashset"]);
        assert_eq!(result.records().len(), 4);
        let bad = RunOptions {
            impls: Some(vec!["nope".into()]),
            ..RunOptions::default()
        };
        assert_eq!(bad.unknown_impls(), ["nope"]);
    }

    #[test]
    fn a_sampled_shuffled_pass_is_checked_against_its_own_dead_count() {
        let case = tiny("TS-8");
        let opts = RunOptions {
            impls: Some(vec!["project".into(), "array".into()]),
            shuffled_sample: Some(1234),
            ..RunOptions::default()
        };
        let result = run_case(&case, &opts, &mut |_| {});
        assert!(result.failures.is_empty(), "{:?}", result.failures);
        assert_eq!(result.shuffled_lookups, Some(1234));
        let Rows::Ts(rows) = &result.rows else {
            unreachable!()
        };
        let dead = result.dead.unwrap();
        for row in rows {
            assert_eq!(row.matched[0], dead);
            assert!(row.matched[1] > 0 && row.matched[1] < 1234);
        }
        let shuffled = &result.records()[1];
        assert!(shuffled.params.ends_with(",order=shuffled,lookups=1234"));
        assert!(result.markdown().contains("a random 1,234 of them"));
    }

    /// Runs `id` at tiny size with every structure of its family and
    /// checks each one's lengths against the model's.
    fn every_set_peer_agrees_with_the_model(id: &str, impls: &[&str]) {
        let case = tiny(id);
        let Case::Set(set) = &case else {
            unreachable!()
        };
        let model = SetData::generate(set).model();
        assert!(model.intersect_len > 0 && model.union_len > model.a_len.max(model.b_len));
        let opts = RunOptions::default();
        assert_eq!(opts.select(&case), impls);
        let result = run_case(&case, &opts, &mut |_| {});
        assert!(result.failures.is_empty(), "{:?}", result.failures);
        assert_eq!(result.set_model, Some(model));
        let Rows::Set(rows) = &result.rows else {
            unreachable!()
        };
        let names: Vec<&str> = rows.iter().map(|r| r.impl_name).collect();
        assert_eq!(names, impls);
        for row in rows {
            assert_eq!(row.union_len, model.union_len, "{id} {}", row.impl_name);
            assert_eq!(
                row.intersect_len, model.intersect_len,
                "{id} {}",
                row.impl_name
            );
            assert!(
                row.union_mem_bytes > 0 && row.intersect_mem_bytes > 0,
                "{id} {}",
                row.impl_name
            );
            assert_eq!(check_set(&model, row), Ok(()));
        }
        // A wrong length or wrong contents fail the check.
        let mut wrong = rows[0].clone();
        wrong.intersect_len += 1;
        assert!(check_set(&model, &wrong).is_err());
        let mut wrong = rows[0].clone();
        wrong.union_sum ^= 1;
        assert!(check_set(&model, &wrong).is_err());
        // One JSON line per structure, with the SET fields.
        let records = result.records();
        assert_eq!(records.len(), impls.len());
        let json = result.json_lines();
        for field in [
            "union_ms",
            "intersect_ms",
            "union_mem_bytes",
            "intersect_mem_bytes",
            "union_len",
            "intersect_len",
        ] {
            assert_eq!(
                json.matches(&format!("\"{field}\":")).count(),
                impls.len(),
                "{field}"
            );
        }
        assert!(!json.contains("\"mem_bytes\"") && !json.contains("load_ms"));
        assert!(result.markdown().contains("| union ms |"));
    }

    #[test]
    fn set1_peers_agree_with_the_model() {
        every_set_peer_agrees_with_the_model("SET-1", &["project", "croaring", "btreeset"]);
    }

    #[test]
    fn set2_peers_agree_with_the_model() {
        every_set_peer_agrees_with_the_model(
            "SET-2",
            &["project", "project-full", "croaring", "btreemap"],
        );
    }
}
