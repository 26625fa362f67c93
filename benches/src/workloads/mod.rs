//! The WORKLOADS.md workloads: their parameters, their data and their
//! measured phases.
//!
//! - [`rt`]: the radix tree workloads RT-1 to RT-6 (`u64 -> u64` maps);
//! - [`rt128`]: RT-7, random `u128` keys (`u128 -> u64` maps);
//! - [`rtc`]: RT-C, RT-2's tree shared by reader and writer threads
//!   (concurrent `u64 -> u64` maps);
//! - [`ts`]: the TID store workloads TS-1 to TS-8, TS-D and TS-S;
//! - [`set`]: the set-operation workloads SET-1 (TID stores) and SET-2
//!   (`u64 -> u64` trees);
//! - [`tb`]: the TID bitmap workloads TB-1 to TB-6 (bitmap index and heap
//!   scans).
//!
//! A workload id on the command line may name a variant after a colon:
//! `RT-4:0xFFFFFF` (a filter), `RT-5:16` (a fanout), `RT-6:15`, or `:all`
//! for every variant WORKLOADS.md lists. Without one, RT-4 runs its default
//! filter, RT-5 every fanout, and RT-6 fanout 120. RT-C takes one row of
//! readers and writers as `RT-C:R,W` (`RT-C:1,1`); without one it runs
//! every row WORKLOADS.md lists. RT-7, TS-*, SET-* and TB-* take no
//! variant.

pub mod rt;
pub mod rt128;
pub mod rtc;
pub mod set;
pub mod tb;
pub mod ts;

use std::fmt;

pub use rt::RtCase;
pub use rt128::Rt128Case;
pub use rtc::RtcCase;
pub use set::SetCase;
pub use tb::TbCase;
pub use ts::TsCase;

/// WORKLOADS.md's size column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Size {
    /// The default parameters.
    #[default]
    Default,
    /// The large parameters, where WORKLOADS.md gives them (RT-1 to RT-4,
    /// RT-7 and TS-S; SET-2 takes RT-3's large key count); the others keep
    /// their default (SET-1's TS-6 and TS-8 have one size).
    Large,
}

/// Which parameters to build workloads with: a WORKLOADS.md size and a
/// scale factor applied to the sizes (blocks, key counts, rounds), for
/// tests and short criterion runs. A scale of 1 is the workload exactly as
/// written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizing {
    /// The size column.
    pub size: Size,
    /// Factor on sizes; 1.0 is WORKLOADS.md's.
    pub scale: f64,
}

impl Default for Sizing {
    fn default() -> Self {
        Self::new(Size::Default)
    }
}

impl Sizing {
    /// `size` at scale 1.
    pub const fn new(size: Size) -> Self {
        Self { size, scale: 1.0 }
    }

    /// `size` at `scale`.
    pub const fn scaled(size: Size, scale: f64) -> Self {
        Self { size, scale }
    }

    /// `default` or `large` by size, scaled, at least 1.
    pub fn pick(&self, default: u64, large: u64) -> u64 {
        let n = match self.size {
            Size::Default => default,
            Size::Large => large,
        };
        self.apply(n)
    }

    /// `n` scaled, at least 1.
    pub fn apply(&self, n: u64) -> u64 {
        if self.scale == 1.0 {
            n
        } else {
            ((n as f64 * self.scale).round() as u64).max(1)
        }
    }
}

/// One workload with all its parameters fixed.
#[derive(Debug, Clone, PartialEq)]
pub enum Case {
    /// A radix tree workload with `u64` keys (RT-1 to RT-6).
    Rt(RtCase),
    /// The radix tree workload with `u128` keys (RT-7).
    Rt128(Rt128Case),
    /// One row (readers, writers) of the concurrent workload RT-C.
    Rtc(RtcCase),
    /// A TID store workload.
    Ts(TsCase),
    /// A set-operation workload (SET-1, SET-2).
    Set(SetCase),
    /// A TID bitmap workload (TB-1 to TB-6).
    Tb(TbCase),
}

impl Case {
    /// The WORKLOADS.md id (`RT-1`, `TS-D`, ...).
    pub fn id(&self) -> &'static str {
        match self {
            Case::Rt(c) => c.id(),
            Case::Rt128(c) => c.id(),
            Case::Rtc(c) => c.id(),
            Case::Ts(c) => c.id,
            Case::Set(c) => c.id(),
            Case::Tb(c) => c.id,
        }
    }

    /// The parameters, as `name=value` pairs joined by commas.
    pub fn params(&self) -> String {
        match self {
            Case::Rt(c) => c.params(),
            Case::Rt128(c) => c.params(),
            Case::Rtc(c) => c.params(),
            Case::Ts(c) => c.params(),
            Case::Set(c) => c.params(),
            Case::Tb(c) => c.params(),
        }
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.id(), self.params())
    }
}

/// The ids run when none are named: every RT, TS, SET and TB workload.
pub const DEFAULT_WORKLOADS: [&str; 26] = [
    "RT-1", "RT-2", "RT-3", "RT-4", "RT-5", "RT-6", "RT-7", "RT-C", "TS-1", "TS-2", "TS-3", "TS-4",
    "TS-5", "TS-6", "TS-7", "TS-8", "TS-D", "TS-S", "SET-1", "SET-2", "TB-1", "TB-2", "TB-3",
    "TB-4", "TB-5", "TB-6",
];

/// Options that change a workload's data beyond its size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Variant {
    /// RT-1/RT-2's `random_block` variant: keep a block only when
    /// `prng() & 1 == 1`.
    pub random_block: bool,
}

/// The cases a workload id (with an optional `:variant`) stands for.
pub fn parse(spec: &str, sizing: Sizing, variant: Variant) -> Result<Vec<Case>, String> {
    let (id, arg) = match spec.split_once(':') {
        Some((id, arg)) => (id, Some(arg)),
        None => (spec, None),
    };
    let id = id.to_ascii_uppercase();
    if id == "RT-7" {
        rt128::case(arg, sizing).map(|c| vec![Case::Rt128(c)])
    } else if id == "RT-C" {
        rtc::cases(arg, sizing).map(|v| v.into_iter().map(Case::Rtc).collect())
    } else if id.starts_with("RT-") {
        rt::cases(&id, arg, sizing, variant).map(|v| v.into_iter().map(Case::Rt).collect())
    } else if id.starts_with("TS-") {
        if arg.is_some() {
            return Err(format!("{id} takes no variant"));
        }
        ts::case(&id, sizing)
            .map(|c| vec![Case::Ts(c)])
            .ok_or_else(|| format!("unknown workload {spec}"))
    } else if id.starts_with("SET-") {
        if arg.is_some() {
            return Err(format!("{id} takes no variant"));
        }
        set::case(&id, sizing)
            .map(|c| vec![Case::Set(c)])
            .ok_or_else(|| format!("unknown workload {spec}"))
    } else if id.starts_with("TB-") {
        if arg.is_some() {
            return Err(format!("{id} takes no variant"));
        }
        tb::case(&id, sizing)
            .map(|c| vec![Case::Tb(c)])
            .ok_or_else(|| format!("unknown workload {spec}"))
    } else {
        Err(format!("unknown workload {spec}"))
    }
}

/// Parses an unsigned integer written in decimal or with a `0x` prefix.
pub(crate) fn parse_u64(text: &str) -> Result<u64, String> {
    let t = text.replace('_', "");
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse(),
    };
    parsed.map_err(|e| format!("bad number {text}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_workload_parses() {
        for id in DEFAULT_WORKLOADS {
            let cases = parse(id, Sizing::default(), Variant::default()).unwrap();
            assert!(!cases.is_empty());
            assert!(cases.iter().all(|c| c.id() == id));
        }
    }

    #[test]
    fn variants() {
        let v = Variant::default();
        let s = Sizing::default();
        assert_eq!(parse("RT-4", s, v).unwrap().len(), 1);
        assert_eq!(parse("RT-4:all", s, v).unwrap().len(), 4);
        assert_eq!(parse("rt-4:0xFFFFFF", s, v).unwrap().len(), 1);
        assert_eq!(parse("RT-5", s, v).unwrap().len(), 9);
        assert_eq!(parse("RT-5:48", s, v).unwrap().len(), 1);
        assert_eq!(parse("RT-6", s, v).unwrap().len(), 1);
        assert_eq!(parse("RT-6:all", s, v).unwrap().len(), 3);
        assert_eq!(parse("rt-7", s, v).unwrap().len(), 1);
        assert!(parse("RT-7:all", s, v).is_err());
        assert!(parse("RT-9", s, v).is_err());
        assert_eq!(parse("RT-C", s, v).unwrap().len(), 5);
        assert_eq!(
            parse("rt-c:0,2", s, v).unwrap()[0].params(),
            "readers=0,writers=2"
        );
        assert!(parse("RT-C:0,0", s, v).is_err());
        assert!(parse("TS-1:x", s, v).is_err());
        assert_eq!(parse("set-1", s, v).unwrap().len(), 1);
        assert_eq!(parse("SET-2", s, v).unwrap()[0].id(), "SET-2");
        assert!(parse("SET-2:x", s, v).is_err());
        assert!(parse("SET-3", s, v).is_err());
        assert_eq!(parse("tb-3", s, v).unwrap()[0].id(), "TB-3");
        assert_eq!(
            parse("TB-6", s, v).unwrap()[0].params(),
            "rounds=1000000,budget=4194304"
        );
        assert!(parse("TB-1:x", s, v).is_err());
        assert!(parse("TB-7", s, v).is_err());
        assert!(parse("XX", s, v).is_err());
    }

    #[test]
    fn sizing() {
        let s = Sizing::new(Size::Large);
        assert_eq!(s.pick(1, 10), 10);
        let s = Sizing::scaled(Size::Default, 0.001);
        assert_eq!(s.pick(1_000_000, 10), 1000);
        assert_eq!(s.apply(10), 1);
    }
}
