//! Results and their two forms: a markdown table per workload case, and
//! one JSON object per line with WORKLOADS.md's field names.
//!
//! TS workloads have two lookup orders; their JSON gives one line per
//! order, the order named in `params` (`...,order=ordered` or
//! `...,order=shuffled`), so every line keeps exactly WORKLOADS.md's
//! fields. The load, memory and iterate figures repeat on both lines.
//!
//! SET workloads give one line per structure with their own fields:
//! `union_ms`, `intersect_ms`, `union_mem_bytes`, `intersect_mem_bytes`,
//! `union_len` and `intersect_len` (no `mem_bytes` or `load_ms`: the
//! builds of A and B are not measured).
//!
//! RT-C gives one line per structure and row, the row in `params`
//! (`readers=R,writers=W`), with `nkeys`, `mem_bytes` (after the load),
//! `reads_per_s` and `writes_per_s` (operations per second of wall clock,
//! all threads together), `hits` and `lookups` (equal in a correct map).
//!
//! TB workloads give one line per structure with WORKLOADS.md's TB
//! fields: `mem_bytes` (after the build; the largest bitmap for TB-4 and
//! TB-5), `build_ms`, `op_ms` (TB-4, TB-5), `iterate_ms`, `pages`,
//! `exact_pages`, `lossy_pages`, `tuples` and `recheck_tuples`.

use std::fmt::Write as _;

use serde::Serialize;

use crate::peers::{self, shared};
use crate::workloads::rt::RtCase;
use crate::workloads::set::SetModel;
use crate::workloads::tb::{self, TbModel, TbShape, Verified};
use crate::workloads::ts::{Order, Walked};
use crate::workloads::{Case, SetCase};

/// One RT structure's figures on one case (medians when repeated).
#[derive(Debug, Clone, PartialEq)]
pub struct RtRow {
    /// The `impl` name.
    pub impl_name: &'static str,
    /// Distinct keys loaded.
    pub nkeys: u64,
    /// Bytes held after the load (RT-6: after the churn).
    pub mem_bytes: u64,
    /// Load time.
    pub load_ms: f64,
    /// Search time (RT-1 to RT-5).
    pub search_ms: Option<f64>,
    /// Churn time (RT-6).
    pub churn_ms: Option<f64>,
    /// Hits: TIDs found (RT-1, RT-2), keys found (RT-3 to RT-5),
    /// successful deletes (RT-6).
    pub hits: u64,
    /// Wrapping sum of the values found, checked against the data.
    pub value_sum: u64,
    /// RT-6: keys present after the churn.
    pub present: Option<u64>,
}

/// One RT-C structure's figures on one row (medians when repeated).
#[derive(Debug, Clone, PartialEq)]
pub struct RtcRow {
    /// The `impl` name.
    pub impl_name: &'static str,
    /// Distinct keys loaded.
    pub nkeys: u64,
    /// Bytes held after the load.
    pub mem_bytes: u64,
    /// Lookups, all readers.
    pub lookups: u64,
    /// Lookups that found their TID.
    pub hits: u64,
    /// Inserts and removes, all writers.
    pub writes: u64,
    /// Removes made.
    pub removes: u64,
    /// Removes that found their key.
    pub removed: u64,
    /// Lookups per second of wall clock, all readers.
    pub reads_per_s: f64,
    /// Inserts and removes per second of wall clock, all writers.
    pub writes_per_s: f64,
}

/// One TS structure's figures on one case (medians when repeated).
#[derive(Debug, Clone, PartialEq)]
pub struct TsRow {
    /// The `impl` name.
    pub impl_name: &'static str,
    /// Bytes held after the load.
    pub mem_bytes: u64,
    /// Load time.
    pub load_ms: f64,
    /// Lookup time, in [`Order::ALL`] order.
    pub lookup_ms: [f64; 2],
    /// Index TIDs found dead, in [`Order::ALL`] order.
    pub matched: [u64; 2],
    /// Iterate time.
    pub iterate_ms: f64,
    /// What the iteration saw.
    pub walked: Walked,
}

/// One SET structure's figures on one case (medians when repeated).
#[derive(Debug, Clone, PartialEq)]
pub struct SetRow {
    /// The `impl` name.
    pub impl_name: &'static str,
    /// `A ∪= B` time, on a fresh copy of A.
    pub union_ms: f64,
    /// `A ∩= B` time, on a fresh copy of A.
    pub intersect_ms: f64,
    /// Bytes the union's result holds.
    pub union_mem_bytes: u64,
    /// Bytes the intersection's result holds.
    pub intersect_mem_bytes: u64,
    /// Elements of the union's result.
    pub union_len: u64,
    /// Elements of the intersection's result.
    pub intersect_len: u64,
    /// Checksum of the union's result, checked against the model.
    pub union_sum: u64,
    /// Checksum of the intersection's result, checked against the model.
    pub intersect_sum: u64,
}

/// One TB structure's figures on one case (medians when repeated).
#[derive(Debug, Clone, PartialEq)]
pub struct TbRow {
    /// The `impl` name.
    pub impl_name: &'static str,
    /// Bytes held after the build: the one bitmap's, the largest of
    /// TB-4's and TB-5's, the largest of TB-6's rounds'.
    pub mem_bytes: u64,
    /// Every add call, over every bitmap (construction included; TB-6:
    /// its rounds without their walks).
    pub build_ms: f64,
    /// TB-4's intersection, TB-5's seven unions.
    pub op_ms: Option<f64>,
    /// The walk of the result (TB-6: its rounds with their walks, less
    /// [`build_ms`](Self::build_ms)).
    pub iterate_ms: f64,
    /// TB-6: its rounds with their walks.
    pub rounds_ms: Option<f64>,
    /// What the measured walk saw.
    pub walked: tb::Walked,
    /// What a second, untimed walk found wrong against the model.
    pub verified: Verified,
    /// With a budget: the most memory the bitmap held after any add call
    /// (read in a second, untimed build).
    pub peak_bytes: Option<u64>,
    /// With a budget: add calls after which memory was over it.
    pub over_budget_adds: u64,
    /// Whether the structure promises to keep within its budget
    /// ([`TidBitmapPeer::KEEPS_BUDGET`](crate::peers::TidBitmapPeer::KEEPS_BUDGET)).
    pub keeps_budget: bool,
}

/// Median of `values` (the mean of the middle two for an even count); 0
/// for none.
pub fn median_f64(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.into_iter().collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Median of `values` (the lower middle for an even count); 0 for none.
pub fn median_u64(values: impl IntoIterator<Item = u64>) -> u64 {
    let mut v: Vec<u64> = values.into_iter().collect();
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    v[(v.len() - 1) / 2]
}

impl RtRow {
    /// Field-wise medians of repeated runs; counts from the first run
    /// (every run is checked on its own).
    pub fn median(runs: &[RtRow]) -> RtRow {
        let first = runs[0].clone();
        RtRow {
            mem_bytes: median_u64(runs.iter().map(|r| r.mem_bytes)),
            load_ms: median_f64(runs.iter().map(|r| r.load_ms)),
            search_ms: first
                .search_ms
                .map(|_| median_f64(runs.iter().filter_map(|r| r.search_ms))),
            churn_ms: first
                .churn_ms
                .map(|_| median_f64(runs.iter().filter_map(|r| r.churn_ms))),
            ..first
        }
    }
}

impl RtcRow {
    /// Field-wise medians of repeated runs; counts from the first run
    /// (every run is checked on its own).
    pub fn median(runs: &[RtcRow]) -> RtcRow {
        let first = runs[0].clone();
        RtcRow {
            mem_bytes: median_u64(runs.iter().map(|r| r.mem_bytes)),
            reads_per_s: median_f64(runs.iter().map(|r| r.reads_per_s)),
            writes_per_s: median_f64(runs.iter().map(|r| r.writes_per_s)),
            ..first
        }
    }
}

impl TsRow {
    /// Field-wise medians of repeated runs; counts from the first run
    /// (every run is checked on its own).
    pub fn median(runs: &[TsRow]) -> TsRow {
        let first = runs[0].clone();
        TsRow {
            mem_bytes: median_u64(runs.iter().map(|r| r.mem_bytes)),
            load_ms: median_f64(runs.iter().map(|r| r.load_ms)),
            lookup_ms: [0, 1].map(|i| median_f64(runs.iter().map(|r| r.lookup_ms[i]))),
            iterate_ms: median_f64(runs.iter().map(|r| r.iterate_ms)),
            ..first
        }
    }
}

impl SetRow {
    /// Field-wise medians of repeated runs; counts from the first run
    /// (every run is checked on its own).
    pub fn median(runs: &[SetRow]) -> SetRow {
        let first = runs[0].clone();
        SetRow {
            union_ms: median_f64(runs.iter().map(|r| r.union_ms)),
            intersect_ms: median_f64(runs.iter().map(|r| r.intersect_ms)),
            union_mem_bytes: median_u64(runs.iter().map(|r| r.union_mem_bytes)),
            intersect_mem_bytes: median_u64(runs.iter().map(|r| r.intersect_mem_bytes)),
            ..first
        }
    }
}

impl TbRow {
    /// Field-wise medians of repeated runs; counts from the first run
    /// (every run is checked on its own).
    pub fn median(runs: &[TbRow]) -> TbRow {
        let first = runs[0].clone();
        TbRow {
            mem_bytes: median_u64(runs.iter().map(|r| r.mem_bytes)),
            build_ms: median_f64(runs.iter().map(|r| r.build_ms)),
            op_ms: first
                .op_ms
                .map(|_| median_f64(runs.iter().filter_map(|r| r.op_ms))),
            iterate_ms: median_f64(runs.iter().map(|r| r.iterate_ms)),
            rounds_ms: first
                .rounds_ms
                .map(|_| median_f64(runs.iter().filter_map(|r| r.rounds_ms))),
            ..first
        }
    }
}

/// The rows of one case.
#[derive(Debug, Clone, PartialEq)]
pub enum Rows {
    /// RT rows.
    Rt(Vec<RtRow>),
    /// RT-C rows.
    Rtc(Vec<RtcRow>),
    /// TS rows.
    Ts(Vec<TsRow>),
    /// SET rows.
    Set(Vec<SetRow>),
    /// TB rows.
    Tb(Vec<TbRow>),
}

/// Everything measured on one case.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseResult {
    /// The case.
    pub case: Case,
    /// Lookups per search (RT) or per lookup pass (TS: the index TIDs).
    pub lookups: u64,
    /// TS: the shuffled pass's lookups when they are a sample, fewer than
    /// the index TIDs.
    pub shuffled_lookups: Option<u64>,
    /// TS: dead TIDs.
    pub dead: Option<u64>,
    /// TS: index TIDs.
    pub index: Option<u64>,
    /// SET: the sizes of A, B and the correct results.
    pub set_model: Option<SetModel>,
    /// TB: the TIDs added and what a correct result holds.
    pub tb_model: Option<TbModel>,
    /// One row per structure, the project first when it ran.
    pub rows: Rows,
    /// Wrong answers, one line each; empty when every structure was right.
    pub failures: Vec<String>,
}

/// One line of `--json` output: WORKLOADS.md's field names, absent where
/// they do not apply.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Record {
    /// The workload id.
    pub workload: String,
    /// The structure.
    #[serde(rename = "impl")]
    pub impl_name: String,
    /// The parameters (TS: with the lookup order).
    pub params: String,
    /// Distinct keys (RT).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nkeys: Option<u64>,
    /// Bytes held (RT, TS).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mem_bytes: Option<u64>,
    /// Load time, ms (RT, TS).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_ms: Option<f64>,
    /// Search time, ms (RT-1 to RT-5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search_ms: Option<f64>,
    /// Lookup time, ms (TS, in the order of `params`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lookup_ms: Option<f64>,
    /// Iterate time, ms (TS).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterate_ms: Option<f64>,
    /// Churn time, ms (RT-6).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub churn_ms: Option<f64>,
    /// Hits (RT).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hits: Option<u64>,
    /// Lookups, all readers (RT-C).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lookups: Option<u64>,
    /// Lookups per second, all readers (RT-C).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reads_per_s: Option<f64>,
    /// Inserts and removes per second, all writers (RT-C).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writes_per_s: Option<f64>,
    /// Dead TIDs (TS).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dead: Option<u64>,
    /// Index TIDs (TS).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<u64>,
    /// Index TIDs found dead (TS).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched: Option<u64>,
    /// `A ∪= B` time, ms (SET).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub union_ms: Option<f64>,
    /// `A ∩= B` time, ms (SET).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intersect_ms: Option<f64>,
    /// Bytes the union's result holds (SET).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub union_mem_bytes: Option<u64>,
    /// Bytes the intersection's result holds (SET).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intersect_mem_bytes: Option<u64>,
    /// Elements of the union's result (SET).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub union_len: Option<u64>,
    /// Elements of the intersection's result (SET).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intersect_len: Option<u64>,
    /// Every add call, ms (TB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build_ms: Option<f64>,
    /// The intersection or the unions, ms (TB-4, TB-5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op_ms: Option<f64>,
    /// Pages the walk gave, exact and lossy (TB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages: Option<u64>,
    /// Exact pages the walk gave (TB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact_pages: Option<u64>,
    /// Lossy pages the walk gave (TB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lossy_pages: Option<u64>,
    /// Offsets the exact pages gave (TB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tuples: Option<u64>,
    /// `tpp` per lossy page plus the tuples of exact pages marked
    /// recheck (TB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recheck_tuples: Option<u64>,
}

impl Record {
    /// A record of `workload` and `impl_name` with only `params` set.
    fn new(workload: &str, impl_name: &str, params: String) -> Self {
        Record {
            workload: workload.to_string(),
            impl_name: impl_name.to_string(),
            params,
            nkeys: None,
            mem_bytes: None,
            load_ms: None,
            search_ms: None,
            lookup_ms: None,
            iterate_ms: None,
            churn_ms: None,
            hits: None,
            lookups: None,
            reads_per_s: None,
            writes_per_s: None,
            dead: None,
            index: None,
            matched: None,
            union_ms: None,
            intersect_ms: None,
            union_mem_bytes: None,
            intersect_mem_bytes: None,
            union_len: None,
            intersect_len: None,
            build_ms: None,
            op_ms: None,
            pages: None,
            exact_pages: None,
            lossy_pages: None,
            tuples: None,
            recheck_tuples: None,
        }
    }
}

/// Rounds a time to the nanosecond, so JSON stays short.
fn round_ms(ms: f64) -> f64 {
    (ms * 1e6).round() / 1e6
}

impl CaseResult {
    /// The JSON records of this case: one per RT, RT-C, SET or TB
    /// structure, two per TS structure (one per lookup order).
    pub fn records(&self) -> Vec<Record> {
        let workload = self.case.id().to_string();
        let params = self.case.params();
        match &self.rows {
            Rows::Rt(rows) => rows
                .iter()
                .map(|r| Record {
                    nkeys: Some(r.nkeys),
                    mem_bytes: Some(r.mem_bytes),
                    load_ms: Some(round_ms(r.load_ms)),
                    search_ms: r.search_ms.map(round_ms),
                    churn_ms: r.churn_ms.map(round_ms),
                    hits: Some(r.hits),
                    ..Record::new(&workload, r.impl_name, params.clone())
                })
                .collect(),
            Rows::Rtc(rows) => rows
                .iter()
                .map(|r| Record {
                    nkeys: Some(r.nkeys),
                    mem_bytes: Some(r.mem_bytes),
                    hits: Some(r.hits),
                    lookups: Some(r.lookups),
                    reads_per_s: Some(r.reads_per_s.round()),
                    writes_per_s: Some(r.writes_per_s.round()),
                    ..Record::new(&workload, r.impl_name, params.clone())
                })
                .collect(),
            Rows::Ts(rows) => rows
                .iter()
                .flat_map(|r| {
                    Order::ALL.into_iter().enumerate().map(|(i, order)| {
                        let params = match (order, self.shuffled_lookups) {
                            (Order::Shuffled, Some(n)) => {
                                format!("{params},order={},lookups={n}", order.name())
                            }
                            _ => format!("{params},order={}", order.name()),
                        };
                        Record {
                            mem_bytes: Some(r.mem_bytes),
                            load_ms: Some(round_ms(r.load_ms)),
                            lookup_ms: Some(round_ms(r.lookup_ms[i])),
                            iterate_ms: Some(round_ms(r.iterate_ms)),
                            dead: self.dead,
                            index: self.index,
                            matched: Some(r.matched[i]),
                            ..Record::new(&workload, r.impl_name, params)
                        }
                    })
                })
                .collect(),
            Rows::Set(rows) => rows
                .iter()
                .map(|r| Record {
                    union_ms: Some(round_ms(r.union_ms)),
                    intersect_ms: Some(round_ms(r.intersect_ms)),
                    union_mem_bytes: Some(r.union_mem_bytes),
                    intersect_mem_bytes: Some(r.intersect_mem_bytes),
                    union_len: Some(r.union_len),
                    intersect_len: Some(r.intersect_len),
                    ..Record::new(&workload, r.impl_name, params.clone())
                })
                .collect(),
            Rows::Tb(rows) => rows
                .iter()
                .map(|r| Record {
                    mem_bytes: Some(r.mem_bytes),
                    build_ms: Some(round_ms(r.build_ms)),
                    op_ms: r.op_ms.map(round_ms),
                    iterate_ms: Some(round_ms(r.iterate_ms)),
                    pages: Some(r.walked.pages),
                    exact_pages: Some(r.walked.exact_pages),
                    lossy_pages: Some(r.walked.lossy_pages),
                    tuples: Some(r.walked.tuples),
                    recheck_tuples: Some(r.walked.recheck_tuples),
                    ..Record::new(&workload, r.impl_name, params.clone())
                })
                .collect(),
        }
    }

    /// The JSON lines of this case.
    pub fn json_lines(&self) -> String {
        let mut out = String::new();
        for record in self.records() {
            out.push_str(&serde_json::to_string(&record).expect("records serialise"));
            out.push('\n');
        }
        out
    }

    /// The markdown table of this case, with a heading.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let name = match &self.case {
            Case::Rt(rt) => format!("{} {}", rt.id(), rt.name()),
            Case::Rt128(rt) => format!("{} {}", rt.id(), rt.name()),
            Case::Rtc(rtc) => format!("{} {}", rtc.id(), rtc.name()),
            Case::Ts(ts) => ts.id.to_string(),
            Case::Set(set) => format!("{} {}", set.id(), set.name()),
            Case::Tb(tb) => format!("{} {}", tb.id, tb.name()),
        };
        let _ = writeln!(out, "### {name} ({})", self.case.params());
        let _ = writeln!(out);
        match &self.rows {
            Rows::Rt(rows) => self.rt_table(&mut out, rows),
            Rows::Rtc(rows) => self.rtc_table(&mut out, rows),
            Rows::Ts(rows) => self.ts_table(&mut out, rows),
            Rows::Set(rows) => self.set_table(&mut out, rows),
            Rows::Tb(rows) => self.tb_table(&mut out, rows),
        }
        if let Some(line) = self.shared_ratios() {
            let _ = writeln!(out, "\n{line}");
        }
        for failure in &self.failures {
            let _ = writeln!(out, "\n**WRONG**: {failure}");
        }
        out
    }

    /// The line comparing `project-shared` with `project` when both ran:
    /// shared ÷ local for the load and each lookup phase (RT-6: the
    /// churn), and on the workloads of [`peers::SHARED_DEFAULT_WORKLOADS`]
    /// whether [`SHARED_LOAD_TARGET`] and [`SHARED_LOOKUP_TARGET`] are met.
    pub fn shared_ratios(&self) -> Option<String> {
        // (phase, shared ÷ local, whether it is a lookup phase)
        let phases: Vec<(&str, f64, bool)> = match &self.rows {
            Rows::Rt(rows) => {
                let local = rows.iter().find(|r| r.impl_name == "project")?;
                let shared = rows.iter().find(|r| r.impl_name == shared::NAME)?;
                let mut phases = vec![("load", shared.load_ms / local.load_ms, false)];
                if let (Some(s), Some(l)) = (shared.search_ms, local.search_ms) {
                    phases.push(("search", s / l, true));
                }
                if let (Some(s), Some(l)) = (shared.churn_ms, local.churn_ms) {
                    phases.push(("churn", s / l, false));
                }
                phases
            }
            Rows::Ts(rows) => {
                let local = rows.iter().find(|r| r.impl_name == "project")?;
                let shared = rows.iter().find(|r| r.impl_name == shared::NAME)?;
                let mut phases = vec![("load", shared.load_ms / local.load_ms, false)];
                for (i, order) in Order::ALL.into_iter().enumerate() {
                    let name = match order {
                        Order::Ordered => "ordered lookups",
                        Order::Shuffled => "shuffled lookups",
                    };
                    phases.push((name, shared.lookup_ms[i] / local.lookup_ms[i], true));
                }
                phases
            }
            Rows::Rtc(_) | Rows::Set(_) | Rows::Tb(_) => return None,
        };
        let mut line = format!("**{} ÷ project**: ", shared::NAME);
        let figures: Vec<String> = phases
            .iter()
            .map(|(name, r, _)| format!("{name} {r:.2}x"))
            .collect();
        line.push_str(&figures.join(", "));
        if peers::SHARED_DEFAULT_WORKLOADS.contains(&self.case.id()) {
            let missed: Vec<&str> = phases
                .iter()
                .filter(|&&(name, r, lookup)| {
                    let target = if lookup {
                        SHARED_LOOKUP_TARGET
                    } else if name == "load" {
                        SHARED_LOAD_TARGET
                    } else {
                        f64::INFINITY
                    };
                    r.is_nan() || r > target
                })
                .map(|&(name, _, _)| name)
                .collect();
            let _ = write!(
                line,
                " (targets: load at most {SHARED_LOAD_TARGET}x, lookups at most \
                 {SHARED_LOOKUP_TARGET}x; {})",
                if missed.is_empty() {
                    "met".to_string()
                } else {
                    format!("missed: {}", missed.join(", "))
                }
            );
        }
        line.push('.');
        Some(line)
    }

    fn rt_table(&self, out: &mut String, rows: &[RtRow]) {
        let project = rows.iter().find(|r| r.impl_name == "project");
        let churn = matches!(self.case, Case::Rt(RtCase::Node48Churn { .. }));
        if let Some(first) = rows.first() {
            if churn {
                let _ = writeln!(
                    out,
                    "{} keys; {} deletes and as many inserts in the churn; memory after the churn.\n",
                    group(first.nkeys),
                    group(first.hits)
                );
            } else {
                let _ = writeln!(
                    out,
                    "{} keys, {} lookups.\n",
                    group(first.nkeys),
                    group(self.lookups)
                );
            }
        }
        let (op, hits) = if churn {
            ("churn", "deletes")
        } else {
            ("search", "hits")
        };
        let _ = writeln!(
            out,
            "| impl | memory | mem vs project | load ms | load vs project | {op} ms | ns/op | {op} vs project | {hits} |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        for r in rows {
            let t = r.search_ms.or(r.churn_ms).unwrap_or(0.0);
            let ops = if churn { 2 * r.hits } else { self.lookups };
            let pt = project.and_then(|p| p.search_ms.or(p.churn_ms));
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.1} | {} | {:.1} | {} | {} | {} |",
                r.impl_name,
                mb(r.mem_bytes),
                ratio(r.mem_bytes as f64, project.map(|p| p.mem_bytes as f64)),
                r.load_ms,
                ratio(r.load_ms, project.map(|p| p.load_ms)),
                t,
                ns_per(t, ops),
                ratio(t, pt),
                group(r.hits),
            );
        }
    }

    fn ts_table(&self, out: &mut String, rows: &[TsRow]) {
        let project = rows.iter().find(|r| r.impl_name == "project");
        let n = self.index.unwrap_or(0);
        let shuffled_n = self.shuffled_lookups.unwrap_or(n);
        let _ = writeln!(
            out,
            "{} dead TIDs in {} index TIDs{}.\n",
            group(self.dead.unwrap_or(0)),
            group(n),
            match self.shuffled_lookups {
                Some(s) => format!(
                    "; the shuffled pass looks up a random {} of them (the first of the shuffle; \
                     `matched` gives the ordered then the shuffled count)",
                    group(s)
                ),
                None => String::new(),
            }
        );
        let _ = writeln!(
            out,
            "| impl | memory | mem vs project | load ms | load vs project | ordered ms | ns/lookup | ordered vs project | shuffled ms | ns/lookup | shuffled vs project | iterate ms | iterate vs project | matched |"
        );
        let _ = writeln!(
            out,
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
        for r in rows {
            let matched = if r.matched[0] == r.matched[1] {
                group(r.matched[0])
            } else {
                format!("{} / {}", group(r.matched[0]), group(r.matched[1]))
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.1} | {} | {:.1} | {} | {} | {:.1} | {} | {} | {:.1} | {} | {} |",
                r.impl_name,
                mb(r.mem_bytes),
                ratio(r.mem_bytes as f64, project.map(|p| p.mem_bytes as f64)),
                r.load_ms,
                ratio(r.load_ms, project.map(|p| p.load_ms)),
                r.lookup_ms[0],
                ns_per(r.lookup_ms[0], n),
                ratio(r.lookup_ms[0], project.map(|p| p.lookup_ms[0])),
                r.lookup_ms[1],
                ns_per(r.lookup_ms[1], shuffled_n),
                ratio(r.lookup_ms[1], project.map(|p| p.lookup_ms[1])),
                r.iterate_ms,
                ratio(r.iterate_ms, project.map(|p| p.iterate_ms)),
                matched,
            );
        }
    }
}

impl CaseResult {
    fn rtc_table(&self, out: &mut String, rows: &[RtcRow]) {
        let Case::Rtc(rtc) = &self.case else {
            return;
        };
        let project = rows.iter().find(|r| r.impl_name == "project");
        let count = |n: u64, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        let _ = writeln!(
            out,
            "{} keys ({} blocks, {} TIDs in a reader's round); {} and {} for {} s after a barrier. \
             Rates are operations per second of wall clock, all threads of a kind together \
             (writes: inserts and removes); memory is after the load.\n",
            group(rows.first().map_or(0, |r| r.nkeys)),
            group(rtc.blocks),
            group(self.lookups),
            count(rtc.readers, "reader"),
            count(rtc.writers, "writer"),
            rtc.duration.as_secs_f64(),
        );
        let _ = writeln!(
            out,
            "| impl | memory | mem vs project | reads M/s | reads vs project | writes M/s | writes vs project | lookups | hits ok |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---|");
        for r in rows {
            let hits_ok = if r.hits == r.lookups {
                "yes".to_string()
            } else {
                format!("**no**: {} of {}", group(r.hits), group(r.lookups))
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.2} | {} | {:.2} | {} | {} | {} |",
                r.impl_name,
                mb(r.mem_bytes),
                ratio(r.mem_bytes as f64, project.map(|p| p.mem_bytes as f64)),
                r.reads_per_s / 1e6,
                ratio(r.reads_per_s, project.map(|p| p.reads_per_s)),
                r.writes_per_s / 1e6,
                ratio(r.writes_per_s, project.map(|p| p.writes_per_s)),
                group(r.lookups),
                hits_ok,
            );
        }
    }

    fn set_table(&self, out: &mut String, rows: &[SetRow]) {
        let project = rows.iter().find(|r| r.impl_name == "project");
        if let Some(m) = &self.set_model {
            let (a_what, b_what) = match &self.case {
                Case::Set(SetCase::Tids { a, b }) => (
                    format!(" TIDs ({}'s dead)", a.id),
                    format!(" ({}'s dead)", b.id),
                ),
                _ => (" keys".to_string(), String::new()),
            };
            let _ = writeln!(
                out,
                "A: {}{a_what}, B: {}{b_what}; A ∪ B: {}, A ∩ B: {}. Each operation on a fresh copy of A; \
                 memory is the result's.\n",
                group(m.a_len),
                group(m.b_len),
                group(m.union_len),
                group(m.intersect_len),
            );
        }
        let _ = writeln!(
            out,
            "| impl | union ms | union vs project | union memory | mem vs project | union len | intersect ms | intersect vs project | intersect memory | mem vs project | intersect len |"
        );
        let _ = writeln!(
            out,
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
        for r in rows {
            let _ = writeln!(
                out,
                "| {} | {:.1} | {} | {} | {} | {} | {:.1} | {} | {} | {} | {} |",
                r.impl_name,
                r.union_ms,
                ratio(r.union_ms, project.map(|p| p.union_ms)),
                mb(r.union_mem_bytes),
                ratio(
                    r.union_mem_bytes as f64,
                    project.map(|p| p.union_mem_bytes as f64)
                ),
                group(r.union_len),
                r.intersect_ms,
                ratio(r.intersect_ms, project.map(|p| p.intersect_ms)),
                mb(r.intersect_mem_bytes),
                ratio(
                    r.intersect_mem_bytes as f64,
                    project.map(|p| p.intersect_mem_bytes as f64)
                ),
                group(r.intersect_len),
            );
        }
    }
}

impl CaseResult {
    fn tb_table(&self, out: &mut String, rows: &[TbRow]) {
        let Case::Tb(case) = &self.case else {
            return;
        };
        let project = rows.iter().find(|r| r.impl_name == "project");
        let model = self.tb_model.unwrap_or_default();
        let e = &model.expected;
        let what = match case.shape {
            TbShape::One { order, .. } => format!(
                "{} TIDs added in {} order, one call each, into one bitmap",
                group(model.adds),
                order.name()
            ),
            TbShape::And { .. } => format!(
                "{} TIDs added in random order, one call each, into A and B; A ∩= B",
                group(model.adds)
            ),
            TbShape::Or { seeds, .. } => format!(
                "{} TIDs added in random order, one call each, into {seeds} bitmaps; \
                 the other {} OR-ed into the first",
                group(model.adds),
                seeds - 1
            ),
            TbShape::Rounds { rounds } => format!(
                "{} rounds of a new bitmap, {} TIDs added one call each, a walk and a drop; \
                 build: the rounds without their walks, iterate: the rounds with them \
                 less that",
                group(rounds),
                tb::TB6_OFFSETS
            ),
        };
        let _ = write!(
            out,
            "{what}. A correct result: {} pages, {} tuples. Memory: after the build{}.",
            group(e.pages),
            group(e.tuples),
            match case.shape {
                TbShape::And { .. } | TbShape::Or { .. } => ", the largest bitmap",
                TbShape::Rounds { .. } => ", the largest of a round's bitmaps",
                TbShape::One { .. } => "",
            }
        );
        if let Some(budget) = case.budget {
            let _ = write!(
                out,
                " Budget {} bytes: memory is read after every add call, in a second, untimed \
                 build; the project must keep within it, `tbm-hash` may pass it (it limits \
                 entries, as `tidbitmap.c` does).",
                group(budget as u64)
            );
            if case.lossy_allowed() {
                let _ = write!(
                    out,
                    " Lossy pages are allowed: every match must be on a page, and every exact \
                     page must hold exactly its matches."
                );
            }
            if !peers::TB_IMPLS.iter().all(|n| peers::tb_runs_on(n, true)) {
                let _ = write!(out, " `croaring` has no budget and does not run.");
            }
        }
        let _ = writeln!(out, "\n");
        let op = rows.iter().any(|r| r.op_ms.is_some());
        let budget = case.budget.is_some();
        let mut head = String::from(
            "| impl | memory | mem vs project | build ms | ns/add | build vs project |",
        );
        let mut rule = String::from("|---|---:|---:|---:|---:|---:|");
        if op {
            head.push_str(" op ms | op vs project |");
            rule.push_str("---:|---:|");
        }
        head.push_str(
            " iterate ms | iterate vs project | pages | exact | lossy | tuples | recheck tuples |",
        );
        rule.push_str("---:|---:|---:|---:|---:|---:|---:|");
        if budget {
            head.push_str(" peak memory | over budget |");
            rule.push_str("---:|---|");
        }
        let _ = writeln!(out, "{head}");
        let _ = writeln!(out, "{rule}");
        for r in rows {
            let w = &r.walked;
            let mut line = format!(
                "| {} | {} | {} | {:.1} | {} | {} |",
                r.impl_name,
                mb(r.mem_bytes),
                ratio(r.mem_bytes as f64, project.map(|p| p.mem_bytes as f64)),
                r.build_ms,
                ns_per(r.build_ms, model.adds),
                ratio(r.build_ms, project.map(|p| p.build_ms)),
            );
            if op {
                let t = r.op_ms.unwrap_or(0.0);
                let _ = write!(
                    line,
                    " {t:.1} | {} |",
                    ratio(t, project.and_then(|p| p.op_ms))
                );
            }
            let _ = write!(
                line,
                " {:.1} | {} | {} | {} | {} | {} | {} |",
                r.iterate_ms,
                ratio(r.iterate_ms, project.map(|p| p.iterate_ms)),
                group(w.pages),
                group(w.exact_pages),
                group(w.lossy_pages),
                group(w.tuples),
                group(w.recheck_tuples),
            );
            if let (true, Some(limit)) = (budget, case.budget) {
                let peak = r.peak_bytes.unwrap_or(0);
                let over = if r.over_budget_adds == 0 {
                    "no".to_string()
                } else {
                    format!(
                        "{}after {} adds, peak {:.2}x the budget",
                        if r.keeps_budget { "**yes**: " } else { "yes: " },
                        group(r.over_budget_adds),
                        peak as f64 / limit as f64
                    )
                };
                let _ = write!(line, " {} | {over} |", mb(peak));
            }
            let _ = writeln!(out, "{line}");
        }
    }
}

/// The most a `project-shared` load may take, as a multiple of the local
/// project's, on the workloads of [`peers::SHARED_DEFAULT_WORKLOADS`].
pub const SHARED_LOAD_TARGET: f64 = 1.5;

/// The most a `project-shared` lookup phase may take, as a multiple of the
/// local project's, on the same workloads.
pub const SHARED_LOOKUP_TARGET: f64 = 1.25;

/// Bytes as decimal megabytes, as REFERENCE.md gives them (kilobytes
/// below 1 MB).
pub fn mb(bytes: u64) -> String {
    let mb = bytes as f64 / 1e6;
    if mb < 1.0 {
        format!("{:.1} kB", bytes as f64 / 1e3)
    } else if mb < 100.0 {
        format!("{mb:.2} MB")
    } else {
        format!("{mb:.1} MB")
    }
}

/// `value / project` as `1.23x`, or `-` without a project figure.
pub fn ratio(value: f64, project: Option<f64>) -> String {
    match project {
        Some(p) if p > 0.0 => format!("{:.2}x", value / p),
        _ => "-".to_string(),
    }
}

/// Nanoseconds per operation.
fn ns_per(ms: f64, ops: u64) -> String {
    if ops == 0 {
        "-".to_string()
    } else {
        format!("{:.1}", ms * 1e6 / ops as f64)
    }
}

/// An integer with thousands separators.
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median_f64([3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_f64([4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median_u64([5, 1, 9]), 5);
        assert_eq!(median_f64([]), 0.0);
    }

    #[test]
    fn formatting() {
        assert_eq!(group(1_234_567), "1,234,567");
        assert_eq!(group(12), "12");
        assert_eq!(mb(9_990_000), "9.99 MB");
        assert_eq!(mb(250_000), "250.0 kB");
        assert_eq!(ratio(2.0, Some(1.0)), "2.00x");
        assert_eq!(ratio(2.0, None), "-");
    }
}
