//! The `tidbitmap` target: two [`TidBitmap`]s against page models.
//!
//! The model of a bitmap is what `tidstore/src/bitmap/tests.rs` keeps: a
//! `BTreeMap` from each block to its page ([`ModelPage`]: the exact
//! offsets, whether the page is lossy, whether it is to be rechecked),
//! changed as PostgreSQL's `tidbitmap.c` says (an add to a lossy page
//! changes nothing, a lossy page OR anything is lossy, an exact page AND a
//! lossy one keeps the exact offsets for recheck, exact AND exact is the
//! AND of the offsets, empty pages go). Each bitmap of an input, the
//! *main* one and the *second* one that set operations combine it with,
//! has its own model and budget:
//!
//! - **unlimited** (`TidBitmap::unlimited`): its pages must be the model's
//!   exactly, and its `exact_pages`/`lossy_pages` the model's counts, as
//!   long as every bitmap combined into it was exact too;
//! - **a budget** from [`TidBitmap::MIN_BUDGET`] to four times it:
//!   `memory_usage() <= max_bytes()` after every call, and the pages are
//!   *within* the model: every model page is there, lossy, or exact with
//!   at least the model's offsets (exactly them unless marked recheck,
//!   and marked recheck if the model's page is); a model page that is
//!   lossy stays lossy; any page the model lacks is marked recheck.
//!
//! Operations: `add_tids` (offsets in any order, repeated, or invalid: an
//! offset outside `1..=2048` must be refused with
//! `TidBitmapError::OffsetOutOfRange` naming the first such offset, and
//! change nothing), `add_tid`, `add_page`, `add_pages` (up to
//! [`MAX_ADD_PAGES`] blocks, exclusive, inclusive or unbounded at the top
//! of the block space), runs of blocks with the same offsets (equal pages,
//! which the page table stores as range values, split when one changes),
//! `union_with` and `intersect_with` either way, `clone` (equal to its
//! original, then used as the other bitmap), `iter_from`, `clear`; after
//! each, the touched pages are looked up, and every [`BATCH`] operations
//! and at the end both bitmaps are compared in full: walked page by page
//! (ascending, `len`, `exact_pages`, `lossy_pages`), or, for a bitmap with
//! more than [`ITER_LIMIT`] lossy pages (a small budget over pages spread
//! across the block space makes blocks of 2^16 and 2^24 pages lossy),
//! looked up page by page with `iter_from(block).next()` at every model
//! page. Set operations that would walk such a bitmap are skipped.
//!
//! Blocks come mostly from a window of 4096 (sixteen chunks of 256) at a
//! per-input base, so that pages collide and chunks fill, and sometimes
//! from anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::ops::{Bound, RangeBounds};

use arbitrary::Arbitrary;
use tidstore::{BitmapPage, Tid, TidBitmap, TidBitmapError, MAX_OFFSET};

use crate::harness::BATCH;

/// Blocks of [`Block::Near`] lie in this many blocks from the base.
pub const WINDOW: u32 = 4096;

/// The most blocks one `add_pages` or run covers.
pub const MAX_ADD_PAGES: u32 = 700;

/// A bitmap with more lossy pages than this is never walked in full (nor
/// intersected, nor united into another, which walks its lossy chunks).
pub const ITER_LIMIT: usize = 1 << 17;

/// The most pages a model may hold; operations that would add more are
/// skipped.
pub const MAX_MODEL_PAGES: usize = 1 << 16;

/// Pages one input may walk in full comparisons; beyond it, the
/// comparisons before the last look pages up instead.
pub const WALK_BUDGET: usize = 1 << 19;

/// The most pages one [`BitmapOp::IterFrom`] takes.
pub const MAX_ITER_FROM: usize = 256;

/// One input of the `tidbitmap` target.
#[derive(Arbitrary, Clone, Debug)]
pub struct BitmapInput {
    /// The main bitmap's budget.
    pub budget: BitmapBudget,
    /// The second bitmap's budget.
    pub second_budget: BitmapBudget,
    /// The first block of the window of [`Block::Near`] and
    /// [`Block::Chunk`] blocks.
    pub base: u32,
    /// The operations, applied in order.
    pub ops: Vec<BitmapOp>,
}

/// A bitmap's budget.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitmapBudget {
    /// `TidBitmap::unlimited()`.
    Unlimited,
    /// `TidBitmap::new(MIN_BUDGET + n % (3 * MIN_BUDGET + 1))`.
    Limited(u16),
}

impl BitmapBudget {
    /// The budget in bytes, `None` for unlimited.
    pub fn bytes(self) -> Option<usize> {
        match self {
            BitmapBudget::Unlimited => None,
            BitmapBudget::Limited(n) => {
                let min = TidBitmap::MIN_BUDGET;
                Some(min + usize::from(n) % (3 * min + 1))
            }
        }
    }
}

/// A block an operation names.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block {
    /// `base + n % WINDOW` (wrapping).
    Near(u16),
    /// Page `page` of chunk `chunk % 16` of the window: a chunk's edges.
    Chunk {
        /// Which chunk of 256 pages.
        chunk: u8,
        /// The page in it.
        page: u8,
    },
    /// The model's first page at or after `base + at % WINDOW`, or its
    /// last page, plus `delta` (wrapping).
    Existing {
        /// Where to look from, in the window.
        at: u16,
        /// Added to the block found.
        delta: i8,
    },
    /// Any block.
    Far(u32),
}

impl Block {
    /// The block this names, with the window at `base`, in `model`.
    pub fn block(self, base: u32, model: &Model) -> u32 {
        match self {
            Block::Near(n) => base.wrapping_add(u32::from(n) % WINDOW),
            Block::Chunk { chunk, page } => {
                base.wrapping_add(u32::from(chunk % 16) * 256 + u32::from(page))
            }
            Block::Existing { at, delta } => {
                let from = base.wrapping_add(u32::from(at) % WINDOW);
                let found = model
                    .range(from..)
                    .next()
                    .or_else(|| model.last_key_value());
                found
                    .map_or(from, |(&b, _)| b)
                    .wrapping_add_signed(i32::from(delta))
            }
            Block::Far(b) => b,
        }
    }
}

/// Offsets for `add_tids`.
#[derive(Arbitrary, Clone, Debug)]
pub enum BitmapOffsets {
    /// As given: mostly some outside `1..=2048`, in any order.
    Raw(Vec<u16>),
    /// Each `o % 2048 + 1`, in the order given, repeats kept.
    Valid(Vec<u16>),
    /// Each `1 + b % 112`: a page of the small form.
    Small(Vec<u8>),
    /// `start % 2048 + 1`, then `len % 2049` offsets up, clamped to 2048,
    /// descending if `reversed`.
    Run {
        /// The first offset.
        start: u16,
        /// How many.
        len: u16,
        /// Given from the last down.
        reversed: bool,
    },
}

impl BitmapOffsets {
    /// The offsets this describes.
    pub fn offsets(&self) -> Vec<u16> {
        match self {
            BitmapOffsets::Raw(raw) => raw.clone(),
            BitmapOffsets::Valid(raw) => raw.iter().map(|&o| o % MAX_OFFSET + 1).collect(),
            BitmapOffsets::Small(raw) => raw.iter().map(|&b| 1 + u16::from(b % 112)).collect(),
            &BitmapOffsets::Run {
                start,
                len,
                reversed,
            } => {
                let start = start % MAX_OFFSET + 1;
                let end = (start + len % (MAX_OFFSET + 1)).min(MAX_OFFSET + 1);
                let mut offsets: Vec<u16> = (start..end).collect();
                if reversed {
                    offsets.reverse();
                }
                offsets
            }
        }
    }
}

/// How an `add_pages` range is written.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PagesForm {
    /// `start..start + len`.
    Exclusive,
    /// `start..=start + len - 1`.
    Inclusive,
    /// `start..` when that is at most [`MAX_ADD_PAGES`] blocks, else as
    /// `Exclusive`.
    ToTheTop,
}

/// A set operation of [`BitmapOp::Combine`].
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// `union_with`.
    Union,
    /// `intersect_with`.
    Intersect,
}

/// One operation. `second` picks the second bitmap instead of the main.
#[derive(Arbitrary, Clone, Debug)]
pub enum BitmapOp {
    /// `add_tids`.
    AddTids {
        /// On the second bitmap.
        second: bool,
        /// The block.
        block: Block,
        /// The offsets.
        offsets: BitmapOffsets,
        /// The recheck flag.
        recheck: bool,
    },
    /// `add_tid`.
    AddTid {
        /// On the second bitmap.
        second: bool,
        /// The block.
        block: Block,
        /// The offset (any).
        offset: u16,
        /// The recheck flag.
        recheck: bool,
    },
    /// `add_page`.
    AddPage {
        /// On the second bitmap.
        second: bool,
        /// The block.
        block: Block,
    },
    /// `add_pages` of `len % (MAX_ADD_PAGES + 1)` blocks from `start`
    /// (stopping at the top of the block space).
    AddPages {
        /// On the second bitmap.
        second: bool,
        /// The first block.
        start: Block,
        /// How many blocks.
        len: u16,
        /// How the range is written.
        form: PagesForm,
    },
    /// `add_tids` with the same offsets on `count % (MAX_ADD_PAGES + 1)`
    /// blocks from `start` in ascending order: equal pages, which the page
    /// table stores as range values.
    AddRun {
        /// On the second bitmap.
        second: bool,
        /// The first block.
        start: Block,
        /// How many blocks.
        count: u16,
        /// The offsets of each.
        offsets: BitmapOffsets,
        /// The recheck flag.
        recheck: bool,
    },
    /// `union_with` or `intersect_with`: the main bitmap with the second,
    /// or the other way round.
    Combine {
        /// Which.
        kind: Combine,
        /// The second bitmap is changed, by the main one.
        into_second: bool,
    },
    /// `clone()` of one bitmap, compared with it, which then replaces the
    /// other one (model and budget included).
    Clone {
        /// Clone the second bitmap (into the main one).
        from_second: bool,
    },
    /// `iter_from(block)`, at most `take % MAX_ITER_FROM + 1` pages.
    IterFrom {
        /// On the second bitmap.
        second: bool,
        /// Where from.
        block: Block,
        /// How many pages.
        take: u8,
    },
    /// The full comparison of both bitmaps now.
    Iterate,
    /// `clear`.
    Clear {
        /// On the second bitmap.
        second: bool,
    },
}

/// A page of the model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelPage {
    /// The matching offsets of an exact page.
    pub offsets: BTreeSet<u16>,
    /// Every tuple of the page matches, to be rechecked.
    pub lossy: bool,
    /// The matches are to be rechecked.
    pub recheck: bool,
}

impl ModelPage {
    /// A lossy page.
    fn lossy() -> Self {
        ModelPage {
            offsets: BTreeSet::new(),
            lossy: true,
            recheck: true,
        }
    }
}

/// A bitmap's model: block to page.
pub type Model = BTreeMap<u32, ModelPage>;

/// `add_tids(block, offsets, recheck)` on the model (valid offsets).
pub fn model_add(model: &mut Model, block: u32, offsets: &[u16], recheck: bool) {
    if offsets.is_empty() {
        return;
    }
    let page = model.entry(block).or_default();
    if !page.lossy {
        page.offsets.extend(offsets);
        page.recheck |= recheck;
    }
}

/// `add_page(block)` on the model.
pub fn model_lossy(model: &mut Model, block: u32) {
    model.insert(block, ModelPage::lossy());
}

/// `a.union_with(b)` on the models.
pub fn model_union(a: &mut Model, b: &Model) {
    for (&block, page) in b {
        if page.lossy {
            model_lossy(a, block);
        } else {
            let offsets: Vec<u16> = page.offsets.iter().copied().collect();
            model_add(a, block, &offsets, page.recheck);
        }
    }
}

/// `a.intersect_with(b)` on the models.
pub fn model_intersect(a: &Model, b: &Model) -> Model {
    let mut out = Model::new();
    for (&block, ours) in a {
        let Some(theirs) = b.get(&block) else {
            continue;
        };
        let page = match (ours.lossy, theirs.lossy) {
            (true, true) => ModelPage::lossy(),
            (true, false) => ModelPage {
                recheck: true,
                ..theirs.clone()
            },
            (false, true) => ModelPage {
                recheck: true,
                ..ours.clone()
            },
            (false, false) => ModelPage {
                offsets: ours
                    .offsets
                    .intersection(&theirs.offsets)
                    .copied()
                    .collect(),
                lossy: false,
                recheck: ours.recheck || theirs.recheck,
            },
        };
        if page.lossy || !page.offsets.is_empty() {
            out.insert(block, page);
        }
    }
    out
}

/// A page of a bitmap, as its walk gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GotPage {
    /// The offsets, ascending (none for a lossy page).
    pub offsets: Vec<u16>,
    /// `is_lossy()`.
    pub lossy: bool,
    /// `recheck()`.
    pub recheck: bool,
}

impl GotPage {
    /// Whether this is `want` exactly.
    fn is(&self, want: &ModelPage) -> bool {
        self.lossy == want.lossy
            && self.recheck == want.recheck
            && self.offsets.iter().eq(want.offsets.iter())
    }
}

/// A bitmap's page, after checking what the page says of itself: a lossy
/// page is rechecked, an exact page's offsets are non-empty, strictly
/// ascending, within `1..=2048` and as many as its iterator's `len()`.
fn page_of(page: &BitmapPage<'_>, what: &dyn fmt::Debug) -> GotPage {
    let block = page.block();
    match page.offsets() {
        None => {
            assert!(
                page.is_lossy(),
                "{what:?}: block {block}: no offsets, not lossy"
            );
            assert!(
                page.recheck(),
                "{what:?}: block {block}: lossy, not rechecked"
            );
            GotPage {
                offsets: Vec::new(),
                lossy: true,
                recheck: true,
            }
        }
        Some(offsets) => {
            assert!(
                !page.is_lossy(),
                "{what:?}: block {block}: lossy with offsets"
            );
            let len = offsets.len();
            let list: Vec<u16> = offsets.collect();
            assert_eq!(list.len(), len, "{what:?}: block {block}: offsets().len()");
            assert!(
                !list.is_empty()
                    && list.windows(2).all(|w| w[0] < w[1])
                    && list.iter().all(|o| (1..=MAX_OFFSET).contains(o)),
                "{what:?}: block {block}: offsets {list:?}"
            );
            GotPage {
                offsets: list,
                lossy: false,
                recheck: page.recheck(),
            }
        }
    }
}

/// Whether the ascending `got` holds every offset of `want`.
fn holds_all(got: &[u16], want: &BTreeSet<u16>) -> bool {
    let mut got = got.iter().peekable();
    want.iter().all(|w| {
        while got.next_if(|&g| g < w).is_some() {}
        got.next_if(|&g| g == w).is_some()
    })
}

/// Checks a page of a bitmap that may have made pages lossy against the
/// model's page for its block (`None`: the model lacks it).
fn check_within(block: u32, got: &GotPage, want: Option<&ModelPage>, what: &dyn fmt::Debug) {
    let Some(want) = want else {
        assert!(
            got.recheck,
            "{what:?}: block {block} invented, not rechecked: {got:?}"
        );
        return;
    };
    if got.lossy {
        return;
    }
    assert!(
        !want.lossy,
        "{what:?}: block {block}: a lossy page came back exact"
    );
    assert!(
        holds_all(&got.offsets, &want.offsets),
        "{what:?}: block {block}: offsets lost: {got:?}, model {want:?}"
    );
    assert!(
        got.offsets.len() == want.offsets.len() || got.recheck,
        "{what:?}: block {block}: offsets added, not rechecked: {got:?}, model {want:?}"
    );
    assert!(
        got.recheck || !want.recheck,
        "{what:?}: block {block}: recheck lost"
    );
}

/// Checks a page against the model's, exactly (`exact`) or within it.
fn check_got(
    block: u32,
    got: Option<&GotPage>,
    want: Option<&ModelPage>,
    exact: bool,
    what: &dyn fmt::Debug,
) {
    match got {
        Some(got) if exact => assert!(
            want.is_some_and(|w| got.is(w)),
            "{what:?}: block {block}: {got:?}, model {want:?}"
        ),
        Some(got) => check_within(block, got, want, what),
        None => assert!(want.is_none(), "{what:?}: block {block} lost"),
    }
}

/// One bitmap and its model.
struct Side {
    bitmap: TidBitmap,
    model: Model,
    /// The pages must be the model's exactly: the bitmap has no budget,
    /// and nothing lossier was combined into it.
    exact: bool,
}

impl Side {
    fn new(budget: BitmapBudget) -> Self {
        let bitmap = match budget.bytes() {
            None => {
                let bitmap = TidBitmap::unlimited();
                assert_eq!(bitmap.max_bytes(), usize::MAX, "unlimited max_bytes()");
                bitmap
            }
            Some(bytes) => match TidBitmap::new(bytes) {
                Ok(bitmap) => bitmap,
                Err(e) => panic!("TidBitmap::new({bytes}) refused: {e}"),
            },
        };
        Self {
            bitmap,
            model: Model::new(),
            exact: budget.bytes().is_none(),
        }
    }

    /// The page of `block`, if the bitmap has it.
    fn page(&self, block: u32, what: &dyn fmt::Debug) -> Option<GotPage> {
        let page = self.bitmap.iter_from(block).next()?;
        assert!(
            page.block() >= block,
            "{what:?}: iter_from({block}) starts at {}",
            page.block()
        );
        (page.block() == block).then(|| page_of(&page, what))
    }

    /// Checks the page of `block` against the model.
    fn check_page(&self, block: u32, what: &dyn fmt::Debug) {
        let got = self.page(block, what);
        check_got(
            block,
            got.as_ref(),
            self.model.get(&block),
            self.exact,
            what,
        );
    }

    /// The counts and the budget, after any call.
    fn check_counts(&self, what: &dyn fmt::Debug) {
        let b = &self.bitmap;
        assert!(
            b.memory_usage() <= b.max_bytes(),
            "{what:?}: memory_usage() {} over max_bytes() {}",
            b.memory_usage(),
            b.max_bytes()
        );
        assert_eq!(
            b.len(),
            b.exact_pages() + b.lossy_pages(),
            "{what:?}: len()"
        );
        let pages = b.exact_pages() + b.lossy_pages();
        assert_eq!(b.is_empty(), pages == 0, "{what:?}: is_empty()");
        if self.exact {
            assert_eq!(b.len(), self.model.len(), "{what:?}: len()");
        } else {
            assert!(
                b.len() >= self.model.len(),
                "{what:?}: len() below the model's"
            );
        }
        if self.model.is_empty() && self.exact {
            assert_eq!(b.memory_usage(), 0, "{what:?}: empty, memory held");
        }
    }

    /// The full comparison: a walk of every page, or, past
    /// [`ITER_LIMIT`] lossy pages or the walk budget, a lookup of every
    /// model page.
    fn check_full(&self, walks: &mut usize, what: &dyn fmt::Debug) {
        self.check_counts(what);
        let b = &self.bitmap;
        let model_lossy = self.model.values().filter(|p| p.lossy).count();
        if self.exact {
            assert_eq!(b.lossy_pages(), model_lossy, "{what:?}: lossy_pages()");
            assert_eq!(
                b.exact_pages(),
                self.model.len() - model_lossy,
                "{what:?}: exact_pages()"
            );
        } else {
            assert!(b.lossy_pages() >= model_lossy, "{what:?}: lossy_pages()");
        }
        let walkable = b.lossy_pages() <= ITER_LIMIT;
        if walkable && b.len() <= *walks {
            *walks -= b.len();
            self.walk_all(what);
        } else {
            for &block in self.model.keys() {
                self.check_page(block, what);
            }
        }
        assert!(!format!("{b:?}").is_empty(), "{what:?}: Debug");
    }

    /// Walks every page: ascending, the model's (or within it), every
    /// model page met, the counts matching.
    fn walk_all(&self, what: &dyn fmt::Debug) {
        let b = &self.bitmap;
        let (mut pages, mut lossy, mut seen) = (0usize, 0usize, 0usize);
        let mut previous = None;
        for page in b {
            let block = page.block();
            assert!(
                previous < Some(block),
                "{what:?}: block {block} after {previous:?}"
            );
            previous = Some(block);
            pages += 1;
            lossy += usize::from(page.is_lossy());
            let got = page_of(&page, what);
            let want = self.model.get(&block);
            seen += usize::from(want.is_some());
            check_got(block, Some(&got), want, self.exact, what);
        }
        assert_eq!(pages, b.len(), "{what:?}: pages walked, len()");
        assert_eq!(lossy, b.lossy_pages(), "{what:?}: lossy pages walked");
        assert_eq!(seen, self.model.len(), "{what:?}: model pages lost");
    }

    fn clear(&mut self, what: &dyn fmt::Debug) {
        let max = self.bitmap.max_bytes();
        self.bitmap.clear();
        self.model.clear();
        self.exact = max == usize::MAX;
        let b = &self.bitmap;
        assert_eq!(b.max_bytes(), max, "{what:?}: clear changed the budget");
        assert!(
            b.is_empty() && b.memory_usage() == 0 && b.iter().next().is_none(),
            "{what:?}: not empty after clear: {b:?}"
        );
    }
}

/// Where a check failed, formatted only when it does.
struct At<'a>(usize, &'a BitmapOp);

impl fmt::Debug for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "op {} ({:?})", self.0, self.1)
    }
}

/// Runs `input` on two bitmaps and their models, panicking on the first
/// difference.
///
/// # Panics
///
/// On any difference, a bitmap over its budget, a refused call that
/// changed something or a wrong error: that is, on a bug.
pub fn check_tidbitmap(input: &BitmapInput) {
    if let Some(bytes) = input.budget.bytes() {
        let small = bytes % TidBitmap::MIN_BUDGET;
        assert_eq!(
            TidBitmap::new(small).err(),
            Some(TidBitmapError::BudgetTooSmall {
                max_bytes: small,
                min: TidBitmap::MIN_BUDGET
            }),
            "TidBitmap::new({small})"
        );
    }
    let mut sides = [Side::new(input.budget), Side::new(input.second_budget)];
    let mut walks = WALK_BUDGET;
    for (i, op) in input.ops.iter().enumerate() {
        let at = At(i, op);
        apply(&mut sides, input.base, op, &at, &mut walks);
        for side in &sides {
            side.check_counts(&at);
        }
        if i % BATCH == BATCH - 1 {
            for side in &sides {
                side.check_full(&mut walks, &at);
            }
        }
    }
    let mut walks = WALK_BUDGET;
    for (which, side) in sides.iter_mut().enumerate() {
        let what = ("after the last op", which);
        side.check_full(&mut walks, &what);
        side.clear(&what);
    }
}

/// The side `second` names, and the other.
fn pick(sides: &mut [Side; 2], second: bool) -> (&mut Side, &mut Side) {
    let [main, other] = sides;
    if second {
        (other, main)
    } else {
        (main, other)
    }
}

fn apply(sides: &mut [Side; 2], base: u32, op: &BitmapOp, at: &At<'_>, walks: &mut usize) {
    match op {
        &BitmapOp::AddTids {
            second,
            block,
            ref offsets,
            recheck,
        } => {
            let (side, _) = pick(sides, second);
            let block = block.block(base, &side.model);
            add_tids(side, block, &offsets.offsets(), recheck, at);
        }
        &BitmapOp::AddTid {
            second,
            block,
            offset,
            recheck,
        } => {
            let (side, _) = pick(sides, second);
            let block = block.block(base, &side.model);
            let valid = (1..=MAX_OFFSET).contains(&offset);
            if !valid || room(side, 1) {
                let before = snapshot(side, block, at);
                let result = side.bitmap.add_tid(Tid::new(block, offset), recheck);
                after_add(side, block, &[offset], recheck, result, before, at);
            }
        }
        &BitmapOp::AddPage { second, block } => {
            let (side, _) = pick(sides, second);
            let block = block.block(base, &side.model);
            if room(side, 1) {
                side.bitmap.add_page(block);
                model_lossy(&mut side.model, block);
                check_around(side, block, at);
            }
        }
        &BitmapOp::AddPages {
            second,
            start,
            len,
            form,
        } => {
            let (side, _) = pick(sides, second);
            let start = start.block(base, &side.model);
            let len = u32::from(len) % (MAX_ADD_PAGES + 1);
            let end = start.saturating_add(len);
            if !room(side, len as usize + 1) {
                return;
            }
            let to_top = u32::MAX - start < MAX_ADD_PAGES;
            let blocks: (Bound<u32>, Bound<u32>) = match form {
                PagesForm::Exclusive => (Bound::Included(start), Bound::Excluded(end)),
                PagesForm::Inclusive if len == 0 => {
                    (Bound::Excluded(start), Bound::Included(start))
                }
                PagesForm::Inclusive => (Bound::Included(start), Bound::Included(end - 1)),
                PagesForm::ToTheTop if to_top => (Bound::Included(start), Bound::Unbounded),
                PagesForm::ToTheTop => (Bound::Included(start), Bound::Excluded(end)),
            };
            side.bitmap.add_pages(blocks);
            let all: Vec<u32> = (start..=u32::MAX)
                .take(MAX_ADD_PAGES as usize + 2)
                .filter(|b| blocks.contains(b))
                .collect();
            for &b in &all {
                model_lossy(&mut side.model, b);
            }
            check_around(side, start, at);
            if let Some(&last) = all.last() {
                check_around(side, last, at);
            }
        }
        &BitmapOp::AddRun {
            second,
            start,
            count,
            ref offsets,
            recheck,
        } => {
            let (side, _) = pick(sides, second);
            let start = start.block(base, &side.model);
            let count = u32::from(count) % (MAX_ADD_PAGES + 1);
            let blocks: Vec<u32> = (0..count).map_while(|i| start.checked_add(i)).collect();
            add_run(side, &blocks, &offsets.offsets(), recheck, at);
        }
        &BitmapOp::Combine { kind, into_second } => {
            let (side, other) = pick(sides, into_second);
            combine(side, other, kind, at, walks);
        }
        &BitmapOp::Clone { from_second } => {
            let (source, target) = pick(sides, from_second);
            let copy = source.bitmap.clone();
            let what = (at, "clone");
            let b = &source.bitmap;
            assert_eq!(
                (copy.len(), copy.exact_pages(), copy.lossy_pages()),
                (b.len(), b.exact_pages(), b.lossy_pages()),
                "{what:?}: counts"
            );
            assert_eq!(copy.max_bytes(), b.max_bytes(), "{what:?}: max_bytes()");
            assert_eq!(
                copy.memory_usage(),
                b.memory_usage(),
                "{what:?}: memory_usage()"
            );
            if b.lossy_pages() <= ITER_LIMIT && 2 * b.len() <= *walks {
                *walks -= 2 * b.len();
                let equal = b.iter().zip(copy.iter()).all(|(p, q)| {
                    p.block() == q.block() && page_of(&p, &what) == page_of(&q, &what)
                });
                assert!(equal, "{what:?}: the clone's pages differ");
            }
            target.bitmap = copy;
            target.model = source.model.clone();
            target.exact = source.exact;
        }
        &BitmapOp::IterFrom {
            second,
            block,
            take,
        } => {
            let (side, _) = pick(sides, second);
            let block = block.block(base, &side.model);
            iter_from(side, block, usize::from(take) % MAX_ITER_FROM + 1, at);
        }
        BitmapOp::Iterate => {
            for side in sides.iter() {
                side.check_full(walks, at);
            }
        }
        &BitmapOp::Clear { second } => {
            let (side, _) = pick(sides, second);
            side.clear(at);
        }
    }
}

/// Whether the model has room for `pages` new pages.
fn room(side: &Side, pages: usize) -> bool {
    side.model.len() + pages <= MAX_MODEL_PAGES
}

/// What a refused call must leave as it was: the counts, the memory, and
/// the page of the block.
type Snapshot = (usize, usize, usize, usize, Option<GotPage>);

fn snapshot(side: &Side, block: u32, what: &dyn fmt::Debug) -> Snapshot {
    let b = &side.bitmap;
    (
        b.len(),
        b.exact_pages(),
        b.lossy_pages(),
        b.memory_usage(),
        side.page(block, what),
    )
}

/// `add_tids(block, offsets, recheck)` on the side and its model.
fn add_tids(side: &mut Side, block: u32, offsets: &[u16], recheck: bool, at: &At<'_>) {
    let valid = offsets.iter().all(|o| (1..=MAX_OFFSET).contains(o));
    if valid && !room(side, 1) {
        return;
    }
    let before = snapshot(side, block, at);
    let result = side.bitmap.add_tids(block, offsets, recheck);
    after_add(side, block, offsets, recheck, result, before, at);
}

/// `add_tids` with the same offsets on every block of `blocks`: each call
/// checked as [`after_add`] does but for the pages, which are looked up at
/// the run's ends, middle and neighbours (the full comparisons see the
/// rest); a refused run must change nothing.
fn add_run(side: &mut Side, blocks: &[u32], offsets: &[u16], recheck: bool, at: &At<'_>) {
    let (Some(&first), Some(&last)) = (blocks.first(), blocks.last()) else {
        return;
    };
    let what = (at, "a run of add_tids", first, last, offsets, recheck);
    let invalid = offsets
        .iter()
        .copied()
        .find(|o| !(1..=MAX_OFFSET).contains(o));
    if invalid.is_none() && !room(side, blocks.len()) {
        return;
    }
    let before = snapshot(side, first, &what);
    // The page a block without one gets, made once.
    let mut fresh = Model::new();
    model_add(&mut fresh, first, offsets, recheck);
    let page = fresh.remove(&first);
    for &block in blocks {
        let result = side.bitmap.add_tids(block, offsets, recheck);
        let expected = match invalid {
            Some(offset) => Err(TidBitmapError::OffsetOutOfRange { block, offset }),
            None => Ok(()),
        };
        assert_eq!(result, expected, "{what:?}: block {block}");
        let b = &side.bitmap;
        assert!(
            b.memory_usage() <= b.max_bytes(),
            "{what:?}: block {block}: over budget"
        );
        if invalid.is_some() {
            continue;
        }
        match (&page, side.model.contains_key(&block)) {
            (Some(page), false) => {
                side.model.insert(block, page.clone());
            }
            _ => model_add(&mut side.model, block, offsets, recheck),
        }
    }
    if invalid.is_some() || offsets.is_empty() {
        assert_eq!(
            snapshot(side, first, &what),
            before,
            "{what:?}: a refused or empty run changed the bitmap"
        );
    }
    for block in [first, blocks[blocks.len() / 2], last] {
        check_around(side, block, &what);
    }
}

/// Checks an add's result: refused with the first invalid offset (or
/// accepted, when all are valid), nothing changed by a refusal or by no
/// offsets; the model takes an accepted add.
fn after_add(
    side: &mut Side,
    block: u32,
    offsets: &[u16],
    recheck: bool,
    result: Result<(), TidBitmapError>,
    before: Snapshot,
    at: &At<'_>,
) {
    let what = (at, "add_tids", block, offsets, recheck);
    let invalid = offsets
        .iter()
        .copied()
        .find(|o| !(1..=MAX_OFFSET).contains(o));
    match invalid {
        Some(offset) => assert_eq!(
            result,
            Err(TidBitmapError::OffsetOutOfRange { block, offset }),
            "{what:?}"
        ),
        None => assert_eq!(result, Ok(()), "{what:?}"),
    }
    if invalid.is_some() || offsets.is_empty() {
        assert_eq!(
            snapshot(side, block, &what),
            before,
            "{what:?}: a refused or empty add changed the bitmap"
        );
    } else {
        model_add(&mut side.model, block, offsets, recheck);
    }
    check_around(side, block, &what);
}

/// Checks the pages at and next to `block`.
fn check_around(side: &Side, block: u32, what: &dyn fmt::Debug) {
    for b in [block.wrapping_sub(1), block, block.wrapping_add(1)] {
        side.check_page(b, what);
    }
}

/// `iter_from(block)`, at most `take` pages: ascending from `block`, each
/// the model's (or within it), and every model page up to the last one
/// seen (or to the end, if the walk ended) among them.
fn iter_from(side: &Side, block: u32, take: usize, at: &At<'_>) {
    let what = (at, "iter_from", block);
    let mut seen = Vec::new();
    let mut previous: Option<u32> = None;
    for page in side.bitmap.iter_from(block).take(take) {
        let b = page.block();
        assert!(
            b >= block && previous < Some(b),
            "{what:?}: block {b} after {previous:?}"
        );
        previous = Some(b);
        let got = page_of(&page, &what);
        check_got(b, Some(&got), side.model.get(&b), side.exact, &what);
        seen.push(b);
    }
    let end = match seen.last() {
        Some(&last) if seen.len() == take => last,
        _ => u32::MAX,
    };
    let missing = side
        .model
        .range(block..=end)
        .map(|(&b, _)| b)
        .find(|b| seen.binary_search(b).is_err());
    assert_eq!(missing, None, "{what:?}: a model page not walked");
}

/// `union_with` or `intersect_with` of `other` into `side`, unless it
/// would walk a bitmap past [`ITER_LIMIT`] lossy pages or grow the model
/// past [`MAX_MODEL_PAGES`].
fn combine(side: &mut Side, other: &Side, kind: Combine, at: &At<'_>, walks: &mut usize) {
    let what = (at, kind);
    match kind {
        Combine::Union => {
            let affordable = other.bitmap.lossy_pages() <= ITER_LIMIT
                && side.model.len() + other.model.len() <= MAX_MODEL_PAGES;
            if !affordable {
                return;
            }
            side.bitmap.union_with(&other.bitmap);
            model_union(&mut side.model, &other.model);
        }
        Combine::Intersect => {
            if side.bitmap.len() > ITER_LIMIT {
                return;
            }
            side.bitmap.intersect_with(&other.bitmap);
            side.model = model_intersect(&side.model, &other.model);
        }
    }
    side.exact &= other.exact;
    side.check_full(walks, &what);
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn offsets_forms() {
        let run = BitmapOffsets::Run {
            start: 2046,
            len: 9,
            reversed: true,
        };
        assert_eq!(run.offsets(), [2048, 2047]);
        assert_eq!(
            BitmapOffsets::Valid(vec![0, 2047, 2048]).offsets(),
            [1, 2048, 1]
        );
        assert_eq!(
            BitmapOffsets::Small(vec![0, 111, 112]).offsets(),
            [1, 112, 1]
        );
        assert_eq!(
            BitmapBudget::Limited(0).bytes(),
            Some(TidBitmap::MIN_BUDGET)
        );
        let model: Model = [(9, ModelPage::lossy())].into_iter().collect();
        assert_eq!(Block::Existing { at: 0, delta: -1 }.block(5, &model), 8);
        assert_eq!(Block::Near(4096).block(u32::MAX, &model), u32::MAX);
    }

    /// The committed seeds decode to what make_seeds.py meant (every
    /// operation kind present) and pass.
    #[test]
    fn seeds_decode_and_pass() {
        let mut kinds = std::collections::BTreeSet::new();
        for (_, input) in crate::seeds::decoded::<BitmapInput>("tidbitmap") {
            kinds.extend(crate::seeds::kinds(&input.ops));
            check_tidbitmap(&input);
        }
        assert_eq!(kinds.len(), 10, "operation kinds in the seeds: {kinds:?}");
    }

    /// Pseudo-random inputs: the harness itself must hold (a smoke test;
    /// the fuzz target does the real search).
    #[test]
    fn random_inputs_run() {
        for input in crate::seeds::smoke_inputs(0x5EED_0003, 150, |i: &mut BitmapInput| &mut i.ops)
        {
            check_tidbitmap(&input);
        }
    }
}
