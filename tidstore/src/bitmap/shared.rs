//! [`SharedTidBitmap`]: a TID bitmap that the worker processes of a
//! parallel bitmap heap scan walk together, each page by exactly one of
//! them.
//!
//! The leader builds a [`TidBitmap`] as usual (its budget, its lossy
//! chunks), then publishes it into a shared area: one *record* per run of
//! pages that share an entry (a page of its own, a run of equal exact
//! pages, a run of lossy ones), numbered from 0 in block order, in a
//! shared radix tree keyed by that number. Dense numbers make a claim one
//! atomic add: a worker takes the next [`CLAIM`](SharedTidBitmap::CLAIM) records with a
//! fetch-and-add on a word of the tree
//! ([`fetch_add_user_word`](radix_core::shm::SharedTree::fetch_add_user_word)),
//! and no other worker can take them. PostgreSQL's parallel bitmap heap
//! scan takes a lock for every page it hands out; here the only shared
//! write is that add, once per [`CLAIM`](SharedTidBitmap::CLAIM) records, and the reads take the
//! tree's read lock once per walk, beside every other reader.
//!
//! Publishing is a copy, `O(records)`, into memory the area accounts for;
//! the local bitmap may be dropped after it. A walk yields pages in block
//! order within each claim; across workers, the claims interleave.

use core::cell::Cell;
use core::fmt;
use core::mem::MaybeUninit;
use core::ptr::NonNull;

use radix_core::shm::{Area, ShmError};
use radix_core::value::VarlenValue;

use super::TidBitmap;
use super::iter::{BitmapPage, PageRef};
use super::page::{MAX_WORDS, PageEntry};
use crate::shared::SharedTidStoreHandle;

radix_core::radix_tree! {
    /// Record number to a run of a shared bitmap's pages.
    pub(crate) struct RecordTable {
        key: u32,
        value: PageRecord,
        layout: varlen,
        memory: shared,
    }
}

/// The tree's words: the next record to claim, the records, the exact and
/// the lossy pages.
const NEXT: usize = 0;
const RECORDS: usize = 1;
const EXACT: usize = 2;
const LOSSY: usize = 3;

/// Record flags (bit 0 is the tree's embedded tag).
const LOSSY_FLAG: u8 = 1 << 1;
const RECHECK_FLAG: u8 = 1 << 2;

#[repr(C)]
#[derive(Clone, Copy)]
struct RecordHeader {
    flags: u8,
    nwords: u8,
    _pad: [u8; 6],
    first: u32,
    last: u32,
}

const _: () = assert!(size_of::<RecordHeader>() == 16);

/// One run of pages, `first..=last`: lossy, or exact with the same
/// offsets (as bitmap words, offset `o` at bit `o - 1`).
#[repr(C)]
pub(crate) struct PageRecord {
    header: RecordHeader,
    words: [u64],
}

// SAFETY: a record is its 16-byte header (no padding: the pad bytes are
// written as zeros) followed by `nwords` initialised words, owns nothing,
// reads `nwords` from its own header, and never looks at bit 0 of the
// flag byte.
unsafe impl VarlenValue for PageRecord {
    const ALIGN: usize = 8;

    fn byte_len(&self) -> usize {
        size_of::<RecordHeader>() + 8 * self.words.len()
    }

    unsafe fn from_bytes<'a>(bytes: NonNull<u8>) -> &'a Self {
        // SAFETY: the caller promises a record's bytes, aligned to 8; byte 1
        // is the word count.
        unsafe {
            let nwords = bytes.add(1).read() as usize;
            let tail =
                core::ptr::slice_from_raw_parts(bytes.as_ptr().cast_const().cast::<u64>(), nwords);
            &*(tail as *const PageRecord)
        }
    }
}

/// Where a record is encoded before the tree copies it.
struct RecordBuf {
    words: [MaybeUninit<u64>; 2 + MAX_WORDS],
}

impl RecordBuf {
    fn new() -> Self {
        Self {
            words: [MaybeUninit::uninit(); 2 + MAX_WORDS],
        }
    }

    /// The record of pages `first..=last` with `entry`'s offsets (none for
    /// a lossy run).
    fn encode(&mut self, first: u32, last: u32, entry: &PageEntry) -> &PageRecord {
        let words = entry.words();
        let words = words.as_slice();
        let mut flags = 0;
        if entry.is_lossy() {
            flags |= LOSSY_FLAG;
        }
        if entry.recheck() && !entry.is_lossy() {
            flags |= RECHECK_FLAG;
        }
        let header = RecordHeader {
            flags,
            nwords: words.len() as u8,
            _pad: [0; 6],
            first,
            last,
        };
        // SAFETY: the header is 16 bytes of plain integers (two words),
        // written whole; then `nwords` words; `from_bytes` reads exactly
        // those, through a pointer aligned to 8.
        unsafe {
            let base = self.words.as_mut_ptr().cast::<u64>();
            base.cast::<RecordHeader>().write(header);
            base.add(2)
                .copy_from_nonoverlapping(words.as_ptr(), words.len());
            PageRecord::from_bytes(NonNull::new_unchecked(base.cast::<u8>()))
        }
    }
}

/// A [`TidBitmap`] published in a shared area, for the worker processes
/// of a parallel bitmap heap scan to walk together: each page goes to one
/// worker, once.
///
/// ```
/// use radix_core::shm::{Area, AreaOptions, Backing};
/// use tidstore::{SharedTidBitmap, TidBitmap};
///
/// let mut bitmap = TidBitmap::new(4 << 20)?;
/// for block in 0..1000 {
///     bitmap.add_tids(block, &[1, 1 + (block % 7) as u16], false)?;
/// }
/// bitmap.add_pages(5000..6000);
/// // A heap-backed area for the example; workers attach to a POSIX one
/// // by `shared.handle()`.
/// let area = Area::create(
///     AreaOptions::default().backing(Backing::Heap).max_segment_size(1 << 20).max_segments(8),
/// )?;
/// let shared = SharedTidBitmap::create_in(&area, &bitmap)?;
/// assert_eq!(shared.len(), 2000);
/// // Two "workers" walk it; between them they see every page once.
/// let (one, two) = (shared.walk(), shared.walk());
/// let mut seen: Vec<u32> = one.pages().take(50).map(|p| p.block()).collect();
/// seen.extend(two.pages().map(|p| p.block()));
/// seen.extend(one.pages().map(|p| p.block())); // its claim goes on
/// seen.sort();
/// assert_eq!(seen, bitmap.iter().map(|p| p.block()).collect::<Vec<_>>());
/// # drop((one, two));
/// # shared.destroy()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SharedTidBitmap {
    table: RecordTable,
}

impl SharedTidBitmap {
    /// Records a worker claims at once: a claim costs one atomic add on a
    /// shared word, and a worker that stops early leaves at most this many
    /// records unwalked.
    pub const CLAIM: u64 = 16;

    /// Publishes `bitmap` in `area`: one record per run of pages with one
    /// entry, in block order. The bitmap is copied; it may be dropped.
    ///
    /// # Errors
    ///
    /// The area has no free tree slot, or no room for the records; the
    /// area is then as it was.
    pub fn create_in(area: &Area, bitmap: &TidBitmap) -> Result<Self, ShmError> {
        let table = RecordTable::create_in(area)?;
        let written = {
            let mut w = table.write();
            let mut buf = RecordBuf::new();
            let mut next = 0u32;
            let mut result = Ok(());
            bitmap.for_each_run(|first, last, entry| {
                if result.is_ok() {
                    result = w.insert(next, buf.encode(first, last, entry)).map(drop);
                    next += 1;
                }
            });
            w.set_user_word(RECORDS, u64::from(next));
            w.set_user_word(EXACT, bitmap.exact_pages() as u64);
            w.set_user_word(LOSSY, bitmap.lossy_pages() as u64);
            result
        };
        if let Err(e) = written {
            table.destroy()?;
            return Err(e);
        }
        Ok(Self { table })
    }

    /// Opens a shared bitmap another process published.
    ///
    /// # Errors
    ///
    /// As [`Area::attach`] and the tree's attach: no such area or tree, or
    /// not a shared bitmap.
    pub fn attach(handle: &SharedTidStoreHandle) -> Result<Self, ShmError> {
        let area = Area::attach(&handle.area())?;
        Ok(Self {
            table: RecordTable::attach(&area, handle.tree())?,
        })
    }

    /// What a worker passes to [`attach`](Self::attach).
    pub fn handle(&self) -> SharedTidStoreHandle {
        SharedTidStoreHandle::new(self.table.area().handle(), self.table.handle())
    }

    /// The bitmap's area.
    pub fn area(&self) -> &Area {
        self.table.area()
    }

    /// Pages: exact and lossy.
    pub fn len(&self) -> usize {
        self.exact_pages() + self.lossy_pages()
    }

    /// Whether the bitmap has no page.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Exact pages.
    pub fn exact_pages(&self) -> usize {
        self.table.read().user_word(EXACT) as usize
    }

    /// Lossy pages.
    pub fn lossy_pages(&self) -> usize {
        self.table.read().user_word(LOSSY) as usize
    }

    /// This process's share of a walk: it takes the tree's read lock
    /// (shared with every other reader) for as long as it lives, and its
    /// [`pages`](SharedWalk::pages) claim records as they go.
    pub fn walk(&self) -> SharedWalk<'_> {
        let guard = self.table.read();
        let records = guard.user_word(RECORDS);
        SharedWalk {
            bitmap: self,
            guard,
            records,
            claim: Cell::new((0, 0)),
            run: Cell::new(None),
        }
    }

    /// Starts the claims from the first page again, for another scan. It
    /// takes the write lock, so it waits until no process walks the bitmap.
    pub fn restart(&self) {
        self.table.write().set_user_word(NEXT, 0);
    }

    /// Frees the bitmap's memory back to its area; for the leader, once the
    /// workers are done. Attached processes detach by dropping theirs.
    ///
    /// # Errors
    ///
    /// The tree's lock is poisoned.
    pub fn destroy(self) -> Result<(), ShmError> {
        self.table.destroy()
    }
}

impl fmt::Debug for SharedTidBitmap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedTidBitmap")
            .field("handle", &self.handle().to_string())
            .field("exact_pages", &self.exact_pages())
            .field("lossy_pages", &self.lossy_pages())
            .finish()
    }
}

/// A process's share of a walk of a [`SharedTidBitmap`], holding its read
/// lock. It keeps its claim: [`pages`](Self::pages) may be called again,
/// and goes on where the last left off.
pub struct SharedWalk<'a> {
    bitmap: &'a SharedTidBitmap,
    guard: RecordTableReadGuard<'a>,
    records: u64,
    /// The next record of the current claim, and the claim's end.
    claim: Cell<(u64, u64)>,
    /// The record being walked: its next page, its last, and its number.
    run: Cell<Option<(u32, u32, u32)>>,
}

impl SharedWalk<'_> {
    /// The pages this process gets: claims of [`CLAIM`](SharedTidBitmap::CLAIM) records in turn,
    /// each page of a claim in block order, until no record is left. No
    /// page of this process's claims goes to another.
    pub fn pages(&self) -> SharedPages<'_> {
        SharedPages { walk: self }
    }

    /// The next page of this process's share.
    fn next_page(&self) -> Option<BitmapPage<'_>> {
        loop {
            if let Some((block, last, index)) = self.run.get() {
                let record = self.record(index);
                self.run
                    .set((block != last).then(|| (block + 1, last, index)));
                return Some(BitmapPage::new(block, record_ref(record)));
            }
            let (mut next, mut end) = self.claim.get();
            if next == end {
                let claimed = self
                    .bitmap
                    .table
                    .fetch_add_user_word(NEXT, SharedTidBitmap::CLAIM);
                if claimed >= self.records {
                    return None;
                }
                (next, end) = (
                    claimed,
                    (claimed + SharedTidBitmap::CLAIM).min(self.records),
                );
            }
            let index = next as u32;
            self.claim.set((next + 1, end));
            let record = self.record(index);
            self.run
                .set(Some((record.header.first, record.header.last, index)));
        }
    }

    fn record(&self, index: u32) -> &PageRecord {
        self.guard
            .get(index)
            .expect("records are numbered densely from 0")
    }
}

impl fmt::Debug for SharedWalk<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedWalk")
            .field("records", &self.records)
            .field("claim", &self.claim.get())
            .finish_non_exhaustive()
    }
}

/// The pages of a [`SharedWalk`]: see [`SharedWalk::pages`].
#[derive(Clone, Copy, Debug)]
pub struct SharedPages<'a> {
    walk: &'a SharedWalk<'a>,
}

impl<'a> Iterator for SharedPages<'a> {
    type Item = BitmapPage<'a>;

    #[inline]
    fn next(&mut self) -> Option<BitmapPage<'a>> {
        self.walk.next_page()
    }
}

/// A record's pages as a walk yields them.
fn record_ref(record: &PageRecord) -> PageRef<'_> {
    let flags = record.header.flags;
    if flags & LOSSY_FLAG != 0 {
        PageRef::Lossy
    } else {
        PageRef::Words {
            recheck: flags & RECHECK_FLAG != 0,
            words: &record.words,
        }
    }
}

impl TidBitmap {
    /// Shows `run` each run of pages that share one entry, in block
    /// order: a page, a run of equal exact pages, a run of lossy ones (a
    /// lossy chunk's marked parts, run by run).
    pub(super) fn for_each_run(&self, mut run: impl FnMut(u32, u32, &PageEntry)) {
        if let Some((block, entry)) = &self.single {
            run(*block, *block, entry);
            return;
        }
        let Some(tree) = &self.tree else { return };
        for (blocks, entry) in tree.spans() {
            let Some(parts) = entry.parts() else {
                run(*blocks.start(), *blocks.end(), entry);
                continue;
            };
            let (span, _) = tree.get_span(*blocks.start()).expect("a range's own span");
            let part_pages = span.key_count() / 256;
            let mut part = 0;
            while part < 256 {
                if parts[part / 64] & (1 << (part % 64)) == 0 {
                    part += 1;
                    continue;
                }
                let first = part;
                while part < 256 && parts[part / 64] & (1 << (part % 64)) != 0 {
                    part += 1;
                }
                let start = u128::from(span.start());
                let low = (start + first as u128 * part_pages) as u32;
                let high = (start + part as u128 * part_pages - 1) as u32;
                run(low, high, &PageEntry::LossyPage);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! A heap-backed area, small enough for Miri; the same walk across
    //! real processes is in `tests/shared_processes.rs`.

    use alloc::vec::Vec;

    use radix_core::shm::{Area, AreaOptions, Backing};

    use super::SharedTidBitmap;
    use crate::TidBitmap;

    type Page = (u32, bool, bool, Vec<u16>);

    fn page_of(p: super::BitmapPage<'_>) -> Page {
        let offsets = p.offsets().map(|o| o.collect()).unwrap_or_default();
        (p.block(), p.is_lossy(), p.recheck(), offsets)
    }

    fn area(limit: Option<usize>) -> Area {
        Area::create(
            AreaOptions::default()
                .backing(Backing::Heap)
                .init_segment_size(256 << 10)
                .max_segment_size(256 << 10)
                .max_segments(16)
                .size_limit(limit),
        )
        .unwrap()
    }

    /// Exact pages (small and large, with recheck), a run of equal pages,
    /// a lossy run and lossy chunks made by the budget.
    fn bitmap() -> TidBitmap {
        // Under Miri, a budget below the public minimum, so that few pages
        // make chunks lossy.
        let mut b = if cfg!(miri) {
            TidBitmap::with_budget(6 << 10)
        } else {
            TidBitmap::new(TidBitmap::MIN_BUDGET).unwrap()
        };
        let pages: u32 = if cfg!(miri) { 450 } else { 6000 };
        for block in 0..pages {
            b.add_tids(block, &[1, 1 + (block % 90) as u16], block % 5 == 0)
                .unwrap();
        }
        for block in 10_000..10_300 {
            b.add_tids(block, &[4, 5], false).unwrap();
        }
        b.add_tids(20_000, &[3, 200, 2048], false).unwrap();
        let lossy_run = if cfg!(miri) { 60 } else { 700 };
        b.add_pages(30_000..30_000 + lossy_run);
        assert!(
            b.lossy_pages() > lossy_run as usize && b.exact_pages() > 200,
            "{b:?}"
        );
        assert!(
            b.iter().any(|p| p.is_lossy() && p.block() < 10_000),
            "a lossy chunk"
        );
        b
    }

    #[test]
    fn walks_share_the_pages_each_once() {
        let b = bitmap();
        let want: Vec<Page> = b.iter().map(page_of).collect();
        let area = area(None);
        let shared = SharedTidBitmap::create_in(&area, &b).unwrap();
        assert_eq!(
            (shared.len(), shared.exact_pages(), shared.lossy_pages()),
            (b.len(), b.exact_pages(), b.lossy_pages())
        );
        let walks = [shared.walk(), shared.walk(), shared.walk()];
        let mut seen: Vec<Page> = Vec::new();
        // The walks take turns, a few pages each, as workers would.
        'turns: loop {
            let mut any = false;
            for walk in &walks {
                for page in walk.pages().take(if cfg!(miri) { 150 } else { 37 }) {
                    any = true;
                    seen.push(page_of(page));
                }
            }
            if !any {
                break 'turns;
            }
        }
        drop(walks);
        seen.sort();
        assert_eq!(seen, want);
        // Another scan of the same bitmap, by one walk.
        shared.restart();
        let again: Vec<Page> = shared.walk().pages().map(page_of).collect();
        assert_eq!(again, want);
        shared.destroy().unwrap();
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "fills a 256 KiB segment; shm's own tests cover a full area"
    )]
    fn a_full_area_refuses_the_bitmap_and_keeps_nothing() {
        // More records than one 256 KiB segment holds (a leaf of 24 bytes
        // and a slot each, no two pages alike).
        let mut b = TidBitmap::unlimited();
        for block in 0..if cfg!(miri) { 9_000 } else { 20_000 } {
            b.add_tids(block, &[1, 1 + (block % 99) as u16], false)
                .unwrap();
        }
        let area = area(Some(256 << 10));
        let before = area.memory_usage();
        assert!(SharedTidBitmap::create_in(&area, &b).is_err());
        assert_eq!(area.memory_usage(), before);
        // A bitmap of one page fits.
        let mut one = TidBitmap::unlimited();
        one.add_tids(9, &[1], true).unwrap();
        let shared = SharedTidBitmap::create_in(&area, &one).unwrap();
        let pages: Vec<Page> = shared.walk().pages().map(page_of).collect();
        assert_eq!(pages, [(9, false, true, vec![1])]);
        shared.destroy().unwrap();
    }
}
