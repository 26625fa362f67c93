//! Table shapes: the named scenarios of WORKLOADS.md ("Vacuum scenarios")
//! and custom ones, and the `--mem` size syntax.

use core::fmt;

use crate::heap::{DeadPattern, Heap};
use crate::order::{IndexOrder, format_index_list};

/// One KiB.
pub const KIB: u64 = 1 << 10;
/// One MiB.
pub const MIB: u64 = 1 << 20;
/// One GiB.
pub const GIB: u64 = 1 << 30;

/// The largest `tuples_per_page`: a TID's offset is at most 2048.
pub const MAX_TUPLES_PER_PAGE: u16 = tidstore::MAX_OFFSET;

/// The shape of a vacuum run: a table, what is dead in it, its indexes and
/// the memory limit for dead TIDs.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// The scenario's id (`VAC-1/10`, …), or `custom` when flags changed a
    /// named scenario's shape.
    pub name: String,
    /// Heap pages.
    pub blocks: u32,
    /// Tuples on each page (1..=2048).
    pub tuples_per_page: u16,
    /// Which tuples are dead.
    pub dead: DeadPattern,
    /// The table's indexes, in the order the index passes visit them.
    pub indexes: Vec<IndexOrder>,
    /// The memory limit for dead TIDs, in bytes (`maintenance_work_mem`).
    /// The array is also capped at 1 GiB; the TID store is not (as in
    /// PostgreSQL 17).
    pub limit: u64,
    /// Seed for the random index orders and the `random:` dead pattern.
    pub seed: u64,
    /// A remark printed in the report header (VAC-1/10's scaled limit).
    pub note: Option<String>,
}

/// The ids of the named scenarios, default first.
pub const SCENARIO_IDS: [&str; 4] = ["VAC-1/10", "VAC-1", "VAC-2", "VAC-3"];

/// The default scenario's id.
pub const DEFAULT_SCENARIO: &str = "VAC-1/10";

/// Why a scenario could not be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScenarioError {
    /// No scenario of that name.
    #[error("unknown scenario `{0}`: expected one of VAC-1/10, VAC-1, VAC-2, VAC-3 (see --list)")]
    Unknown(String),
    /// No pages.
    #[error("the table needs at least one page (--blocks)")]
    NoBlocks,
    /// `tuples_per_page` outside 1..=2048.
    #[error("--tuples-per-page must be from 1 to 2048, not {0}")]
    TuplesPerPage(u16),
    /// No indexes.
    #[error("the table needs at least one index (--indexes)")]
    NoIndexes,
    /// A zero limit.
    #[error("the memory limit (--mem) must be above 0 bytes")]
    NoMemory,
    /// A limit that does not fit in this machine's address space.
    #[error("the memory limit (--mem) of {0} bytes is larger than this machine can address")]
    MemoryTooLarge(u64),
}

impl Scenario {
    /// The named scenario `id` (case-insensitive), exactly as WORKLOADS.md
    /// describes it.
    ///
    /// - `VAC-1`: 6,369,427 pages × 157 tuples (1e9 rows), all dead, 2
    ///   indexes (correlated, random), limit 1 GiB.
    /// - `VAC-1/10`: VAC-1 at a tenth: 636,943 pages × 157, all dead, 2
    ///   indexes, limit 1 GiB / 10 (107,374,182 bytes): the limit is scaled
    ///   with the table so that both stores face the pressure they face at
    ///   full size.
    /// - `VAC-2`: 270,271 pages × 185 (50M rows), all dead, 1 random index,
    ///   limit 32 MiB.
    /// - `VAC-3`: 540,541 pages × 185 (100M rows), the last 20% of pages
    ///   dead, 2 indexes (correlated, random), limit 64 MiB.
    pub fn named(id: &str) -> Result<Self, ScenarioError> {
        let both = vec![IndexOrder::Correlated, IndexOrder::Random];
        let (name, blocks, tuples_per_page, dead, indexes, limit, note) =
            match id.trim().to_ascii_uppercase().as_str() {
                "VAC-1" => ("VAC-1", 6_369_427, 157, DeadPattern::All, both, GIB, None),
                "VAC-1/10" => (
                    "VAC-1/10",
                    636_943,
                    157,
                    DeadPattern::All,
                    both,
                    GIB / 10,
                    Some(
                        "VAC-1 at 1/10 scale: the limit is scaled too (1 GiB / 10), \
                         so both stores face the same pressure as at full size"
                            .to_string(),
                    ),
                ),
                "VAC-2" => (
                    "VAC-2",
                    270_271,
                    185,
                    DeadPattern::All,
                    vec![IndexOrder::Random],
                    32 * MIB,
                    None,
                ),
                "VAC-3" => (
                    "VAC-3",
                    540_541,
                    185,
                    DeadPattern::Tail(0.2),
                    both,
                    64 * MIB,
                    None,
                ),
                _ => return Err(ScenarioError::Unknown(id.to_string())),
            };
        Ok(Self {
            name: name.to_string(),
            blocks,
            tuples_per_page,
            dead,
            indexes,
            limit,
            seed: 0,
            note,
        })
    }

    /// All named scenarios, default first.
    pub fn all() -> Vec<Self> {
        SCENARIO_IDS
            .iter()
            .map(|id| Self::named(id).expect("named scenarios exist"))
            .collect()
    }

    /// A custom scenario with no name given yet.
    pub fn custom(
        blocks: u32,
        tuples_per_page: u16,
        dead: DeadPattern,
        indexes: Vec<IndexOrder>,
        limit: u64,
    ) -> Self {
        Self {
            name: "custom".to_string(),
            blocks,
            tuples_per_page,
            dead,
            indexes,
            limit,
            seed: 0,
            note: None,
        }
    }

    /// Checks that the shape can be simulated.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if self.blocks == 0 {
            return Err(ScenarioError::NoBlocks);
        }
        if !(1..=MAX_TUPLES_PER_PAGE).contains(&self.tuples_per_page) {
            return Err(ScenarioError::TuplesPerPage(self.tuples_per_page));
        }
        if self.indexes.is_empty() {
            return Err(ScenarioError::NoIndexes);
        }
        if self.limit == 0 {
            return Err(ScenarioError::NoMemory);
        }
        if usize::try_from(self.limit).is_err() {
            return Err(ScenarioError::MemoryTooLarge(self.limit));
        }
        Ok(())
    }

    /// Tuples in the table, which is also the entries in each index.
    pub fn total_tuples(&self) -> u64 {
        u64::from(self.blocks) * u64::from(self.tuples_per_page)
    }

    /// The heap this scenario describes.
    pub fn heap(&self) -> Heap {
        Heap::new(self.blocks, self.tuples_per_page, self.dead, self.seed)
    }
}

impl fmt::Display for Scenario {
    /// One line: `VAC-2: 270,271 pages × 185 tuples (50,000,135), dead: all,
    /// indexes: random, limit 32 MiB (33,554,432 bytes)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} pages × {} tuples ({} tuples), dead: {}, indexes: {}, limit {}",
            self.name,
            group(u64::from(self.blocks)),
            self.tuples_per_page,
            group(self.total_tuples()),
            self.dead,
            format_index_list(&self.indexes),
            format_size(self.limit),
        )
    }
}

/// `1234567` as `1,234,567`.
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

/// A byte count for people: `32 MiB (33,554,432 bytes)`, or just
/// `1,000 bytes` when it is not a whole number of KiB/MiB/GiB.
pub fn format_size(bytes: u64) -> String {
    let unit = [(GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")]
        .into_iter()
        .find(|&(unit, _)| bytes >= unit && bytes.is_multiple_of(unit));
    match unit {
        Some((unit, name)) => format!("{} {name} ({} bytes)", bytes / unit, group(bytes)),
        None => format!("{} bytes", group(bytes)),
    }
}

/// Why a `--mem` size was not understood.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// Nothing given.
    #[error("empty size: expected a number with an optional unit, such as 64MiB")]
    Empty,
    /// No number, or a malformed one.
    #[error(
        "bad number in size `{0}`: expected digits with an optional fraction, such as 64MiB or 1.5GiB"
    )]
    BadNumber(String),
    /// A unit other than B, KiB, MiB, GiB, KB, MB, GB.
    #[error(
        "unknown unit `{unit}` in size `{text}`: use B, KiB, MiB, GiB (powers of 1024) or KB, MB, GB (powers of 1000)"
    )]
    BadUnit {
        /// The whole input.
        text: String,
        /// The unit part.
        unit: String,
    },
    /// More bytes than a `u64` holds.
    #[error("size `{0}` is too large")]
    TooLarge(String),
    /// Zero bytes.
    #[error("size `{0}` is zero bytes: the limit must be above 0")]
    Zero(String),
}

/// Parses a memory size: a number (digits, optionally with a fraction such
/// as `1.5`), optional spaces, and an optional unit: `B` (or none), `KiB`,
/// `MiB`, `GiB` (powers of 1024) or `KB`, `MB`, `GB` (powers of 1000).
/// Units are case-insensitive; `K`, `M`, `G` alone mean KiB, MiB, GiB.
/// A fraction of a byte is rounded down; the result must be above zero.
///
/// ```
/// use vacuum_sim::scenario::parse_size;
/// assert_eq!(parse_size("64MiB"), Ok(64 << 20));
/// assert_eq!(parse_size("1.5 GiB"), Ok(3 << 29));
/// assert_eq!(parse_size("64MB"), Ok(64_000_000));
/// assert_eq!(parse_size("4096"), Ok(4096));
/// assert!(parse_size("64 furlongs").is_err());
/// ```
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(SizeError::Empty);
    }
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    if number.is_empty() {
        return Err(SizeError::BadNumber(text.to_string()));
    }
    let unit = unit.trim();
    let multiplier: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => KIB,
        "m" | "mib" => MIB,
        "g" | "gib" => GIB,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        _ => {
            return Err(SizeError::BadUnit {
                text: text.to_string(),
                unit: unit.to_string(),
            });
        }
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !all_digits(whole) || !all_digits(fraction) {
        return Err(SizeError::BadNumber(text.to_string()));
    }
    // Exact arithmetic: (whole.fraction) × multiplier, fraction of a byte
    // rounded down.
    let too_large = || SizeError::TooLarge(text.to_string());
    let digits = format!("{whole}{fraction}");
    let mantissa: u128 = if digits.is_empty() {
        0
    } else {
        digits.parse().map_err(|_| too_large())?
    };
    let scale = 10u128
        .checked_pow(u32::try_from(fraction.len()).map_err(|_| too_large())?)
        .ok_or_else(too_large)?;
    let bytes = mantissa
        .checked_mul(u128::from(multiplier))
        .ok_or_else(too_large)?
        / scale;
    let bytes = u64::try_from(bytes).map_err(|_| too_large())?;
    if bytes == 0 {
        return Err(SizeError::Zero(text.to_string()));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_scenarios_match_workloads_md() {
        let vac1 = Scenario::named("VAC-1").unwrap();
        assert_eq!(
            (vac1.blocks, vac1.tuples_per_page, vac1.limit),
            (6_369_427, 157, GIB)
        );
        let tenth = Scenario::named("vac-1/10").unwrap();
        assert_eq!((tenth.blocks, tenth.limit), (636_943, 107_374_182));
        let vac2 = Scenario::named("VAC-2").unwrap();
        assert_eq!(vac2.indexes, [IndexOrder::Random]);
        assert_eq!(vac2.total_tuples(), 50_000_135);
        let vac3 = Scenario::named("VAC-3").unwrap();
        assert_eq!(vac3.dead, DeadPattern::Tail(0.2));
        assert_eq!(vac3.limit, 64 * MIB);
        assert_eq!(Scenario::all().len(), 4);
        assert!(Scenario::all().iter().all(|s| s.validate().is_ok()));
        assert!(matches!(
            Scenario::named("VAC-9"),
            Err(ScenarioError::Unknown(_))
        ));
    }

    #[test]
    fn validation() {
        let ok = Scenario::custom(10, 10, DeadPattern::All, vec![IndexOrder::Random], 1000);
        assert_eq!(ok.validate(), Ok(()));
        let bad = |f: fn(&mut Scenario)| {
            let mut s = ok.clone();
            f(&mut s);
            s.validate().unwrap_err()
        };
        assert_eq!(bad(|s| s.blocks = 0), ScenarioError::NoBlocks);
        assert_eq!(
            bad(|s| s.tuples_per_page = 0),
            ScenarioError::TuplesPerPage(0)
        );
        assert_eq!(
            bad(|s| s.tuples_per_page = 2049),
            ScenarioError::TuplesPerPage(2049)
        );
        assert_eq!(bad(|s| s.indexes.clear()), ScenarioError::NoIndexes);
        assert_eq!(bad(|s| s.limit = 0), ScenarioError::NoMemory);
    }

    #[test]
    fn formatting() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1_000), "1,000");
        assert_eq!(group(107_374_182), "107,374,182");
        assert_eq!(format_size(32 * MIB), "32 MiB (33,554,432 bytes)");
        assert_eq!(format_size(GIB / 10), "107,374,182 bytes");
        assert_eq!(
            Scenario::named("VAC-2").unwrap().to_string(),
            "VAC-2: 270,271 pages × 185 tuples (50,000,135 tuples), dead: all, \
             indexes: random, limit 32 MiB (33,554,432 bytes)"
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("123"), Ok(123));
        assert_eq!(parse_size("123B"), Ok(123));
        assert_eq!(parse_size("2KiB"), Ok(2048));
        assert_eq!(parse_size("2kb"), Ok(2000));
        assert_eq!(parse_size(" 64 MiB "), Ok(64 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_size("0.5K"), Ok(512));
        assert_eq!(parse_size(".5KiB"), Ok(512));
        assert_eq!(parse_size("1.0000001B"), Ok(1));
        assert_eq!(parse_size(""), Err(SizeError::Empty));
        assert!(matches!(parse_size("MiB"), Err(SizeError::BadNumber(_))));
        assert!(matches!(
            parse_size("1.2.3MiB"),
            Err(SizeError::BadNumber(_))
        ));
        assert!(matches!(parse_size("."), Err(SizeError::BadNumber(_))));
        assert!(matches!(parse_size("-5MiB"), Err(SizeError::BadNumber(_))));
        assert!(matches!(
            parse_size("5 TiB"),
            Err(SizeError::BadUnit { .. })
        ));
        assert!(matches!(parse_size("0MiB"), Err(SizeError::Zero(_))));
        assert!(matches!(parse_size("0.1B"), Err(SizeError::Zero(_))));
        assert!(matches!(
            parse_size("99999999999999999999GiB"),
            Err(SizeError::TooLarge(_))
        ));
        assert!(matches!(
            parse_size("9999999999999999999999999999999999999999"),
            Err(SizeError::TooLarge(_))
        ));
    }
}
