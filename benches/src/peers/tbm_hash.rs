//! `tbm-hash`: a hash-table TID bitmap built the way PostgreSQL's
//! `src/backend/nodes/tidbitmap.c` is described to work, written here from
//! that description as the stand-in for it on the TB workloads.
//!
//! - **Page table.** An open-addressing hash map from block number to a
//!   fixed 48-byte page entry, as PostgreSQL's `simplehash.h` builds
//!   one: a power-of-two bucket array, fill factor 0.9, linear probing in
//!   Robin Hood order (an entry is never further from its home bucket
//!   than the one it passed), deletion by shifting the rest of the run
//!   back, and growth by doubling when the fill factor is reached (or a
//!   probe runs past 25 buckets, or an insertion would move more than 150
//!   entries, with the table at least 10% full). The hash is the 32-bit
//!   murmur finaliser of the block number, `simplehash`'s `murmurhash32`.
//!   The table starts at 256 buckets (room for 128 entries).
//! - **Entries.** An entry is a block number, an in-use mark, the
//!   `ischunk` and `recheck` flags and five 64-bit words: the bitmap of
//!   offsets `1..=291` for an exact page (PostgreSQL's
//!   `MaxHeapTuplesPerPage` with 8 KiB pages, [`MAX_TUPLES_PER_PAGE`]), or
//!   of the 256 pages of a lossy chunk ([`PAGES_PER_CHUNK`]), keyed by the
//!   chunk's first block, which therefore cannot be exact while its chunk
//!   is lossy. **Offsets above 291 are out of range**: [`TbmHash::add_tid`]
//!   refuses them, as `tbm_add_tuples` does (the TB workloads use
//!   `tpp = 100`).
//! - **One-page mode.** Until a second page arrives (or a page is made
//!   lossy) the bitmap holds its page in a field of its own and allocates
//!   nothing (`TBM_ONE_PAGE`); once it has a table it keeps it.
//! - **Budget.** [`TbmHash::new`] turns a budget into a limit on entries
//!   as `tbm_calculate_entries` does: `maxbytes / (48 + 8 + 8)` (an entry
//!   and the two pointers of the sorted arrays an iteration makes), at
//!   most `i32::MAX - 1` and at least 16. When an add (or a union) leaves
//!   more entries than that, [`lossify`](TbmHash::lossify) walks the table
//!   in hash order, from where the previous round stopped, turning exact
//!   pages lossy (skipping chunks and pages that are their chunk's first
//!   block, which would save nothing) until at most half the limit is
//!   left; if it cannot get there, it doubles the limit (`tbm_lossify`).
//!   So the limit is on entries, not bytes: the table's bucket array is
//!   up to twice the entries over 0.9, and the bitmap may pass its budget,
//!   as `tidbitmap.c` may.
//! - **Set operations** with PostgreSQL's meaning: a union marks every page
//!   of the other side's lossy chunks lossy and ORs exact pages' bits into
//!   pages that are not lossy; an intersection clears a lossy chunk's bits
//!   for pages the other side does not hold at all, keeps an exact page's
//!   bits for recheck where the other side has the page lossy, ANDs two
//!   exact pages' bits (recheck if either had it), and drops pages and
//!   chunks left empty.
//! - **Iteration** ([`TbmHash::iter`]) collects the exact pages and the
//!   chunks in hash order, sorts each list by block (`sort_unstable`, the
//!   stand-in for `qsort`), then merges them in block order: an exact page
//!   with its offsets and recheck flag, or a lossy page (recheck always
//!   set).
//!
//! **Memory** is measured by the harness's counting allocator, as for any
//! peer without its own account: the bucket array (buckets × 48 bytes);
//! the one-page mode holds nothing on the heap. The sorted arrays (8 bytes
//! per entry) live only while an iteration does: `tidbitmap.c` keeps them
//! until the bitmap is freed, but every TB figure of memory is read before
//! the walk. [`TbmHash::table_bytes`] gives the same figure by arithmetic.

use std::fmt;

use tidstore::Tid;

use crate::structures::{PageSink, TidBitmapPeer};

/// Tuple offsets a page holds: PostgreSQL's `MaxHeapTuplesPerPage` for
/// 8 KiB pages. Offsets `1..=291` are valid.
pub const MAX_TUPLES_PER_PAGE: u16 = 291;

/// Pages in a lossy chunk: PostgreSQL's `PAGES_PER_CHUNK` (`BLCKSZ / 32`).
pub const PAGES_PER_CHUNK: u32 = 256;

/// Bits in a bitmap word.
const WORD_BITS: usize = 64;

/// Words of an exact page's bitmap.
pub const WORDS_PER_PAGE: usize = (MAX_TUPLES_PER_PAGE as usize - 1) / WORD_BITS + 1;

/// Words of a lossy chunk's bitmap.
pub const WORDS_PER_CHUNK: usize = (PAGES_PER_CHUNK as usize - 1) / WORD_BITS + 1;

/// Words in an entry: enough for either use.
const WORDS: usize = if WORDS_PER_PAGE > WORDS_PER_CHUNK {
    WORDS_PER_PAGE
} else {
    WORDS_PER_CHUNK
};

/// Bytes of one page table entry (and one bucket).
pub const ENTRY_BYTES: usize = 48;

/// Bytes `tbm_calculate_entries` counts per entry: the entry and two
/// pointers of the arrays an iteration sorts.
pub const BYTES_PER_ENTRY: usize = ENTRY_BYTES + 2 * size_of::<usize>();

/// The largest entry limit, `INT_MAX - 1`.
pub const MAX_ENTRIES: usize = i32::MAX as usize - 1;

/// The smallest entry limit `tbm_calculate_entries` gives.
pub const MIN_ENTRIES: usize = 16;

/// The largest fraction of buckets in use before the table doubles.
const FILL_FACTOR: f64 = 0.9;

/// Entries the table is first sized for (`pagetable_create(.., 128, ..)`).
const INITIAL_ELEMENTS: usize = 128;

/// A probe longer than this grows the table (with [`GROW_MIN_FILL`]).
const GROW_MAX_DIB: usize = 25;

/// An insertion that would move more entries than this grows the table
/// (with [`GROW_MIN_FILL`]).
const GROW_MAX_MOVE: usize = 150;

/// The fill below which long probes do not grow the table.
const GROW_MIN_FILL: f64 = 0.1;

/// One page table entry: an exact page or a lossy chunk.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(C)]
struct PageEntry {
    /// The page, or a chunk's first page (a multiple of
    /// [`PAGES_PER_CHUNK`]).
    blockno: u32,
    /// Whether the bucket holds an entry.
    in_use: bool,
    /// A lossy chunk rather than an exact page.
    ischunk: bool,
    /// An exact page's matches must be rechecked.
    recheck: bool,
    /// Exact page: bit `k` is offset `k + 1`; chunk: bit `k` is page
    /// `blockno + k`.
    words: [u64; WORDS],
}

const _: () = assert!(size_of::<PageEntry>() == ENTRY_BYTES);

impl PageEntry {
    /// An empty bucket.
    const EMPTY: Self = Self {
        blockno: 0,
        in_use: false,
        ischunk: false,
        recheck: false,
        words: [0; WORDS],
    };

    /// A new exact page with no bit set.
    fn exact(blockno: u32) -> Self {
        Self {
            blockno,
            in_use: true,
            ..Self::EMPTY
        }
    }

    /// A new lossy chunk with no page marked.
    fn chunk(blockno: u32) -> Self {
        Self {
            blockno,
            in_use: true,
            ischunk: true,
            ..Self::EMPTY
        }
    }

    /// Sets bit `bit` of the words.
    #[inline]
    fn set_bit(&mut self, bit: usize) {
        self.words[bit / WORD_BITS] |= 1 << (bit % WORD_BITS);
    }

    /// Whether bit `bit` of the words is set.
    #[inline]
    fn bit(&self, bit: usize) -> bool {
        self.words[bit / WORD_BITS] & (1 << (bit % WORD_BITS)) != 0
    }
}

/// The hash of a block number: the 32-bit murmur finaliser.
#[inline]
fn hash_block(block: u32) -> u32 {
    let mut h = block;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85EB_CA6B);
    h ^= h >> 13;
    h = h.wrapping_mul(0xC2B2_AE35);
    h ^ (h >> 16)
}

/// The open-addressing table from block to entry.
struct PageTable {
    /// The buckets; a power of two of them.
    buckets: Box<[PageEntry]>,
    /// Entries in use.
    members: usize,
    /// Entries at which the next insertion doubles the table.
    grow_threshold: usize,
}

/// What [`PageTable::try_insert`] did.
enum Inserted {
    /// The entry is at this bucket: `true` when it was there before.
    At(usize, bool),
    /// The table must grow first.
    Grow,
}

impl PageTable {
    /// A table sized for `elements` entries: the next power of two of
    /// `elements / 0.9`, at least 2.
    fn for_elements(elements: usize) -> Self {
        let size = ((elements as f64 / FILL_FACTOR).ceil() as usize)
            .max(2)
            .next_power_of_two();
        Self::with_buckets(size)
    }

    /// A table of `size` buckets (a power of two).
    fn with_buckets(size: usize) -> Self {
        debug_assert!(size.is_power_of_two());
        Self {
            buckets: vec![PageEntry::EMPTY; size].into_boxed_slice(),
            members: 0,
            grow_threshold: ((size as f64 * FILL_FACTOR) as usize).min(size - 1),
        }
    }

    /// Buckets.
    #[inline]
    fn size(&self) -> usize {
        self.buckets.len()
    }

    /// `size - 1`.
    #[inline]
    fn mask(&self) -> usize {
        self.buckets.len() - 1
    }

    /// The bucket `block` hashes to.
    #[inline]
    fn home(&self, block: u32) -> usize {
        hash_block(block) as usize & self.mask()
    }

    /// How far bucket `pos` is past the home bucket of its entry.
    #[inline]
    fn distance(&self, pos: usize) -> usize {
        pos.wrapping_sub(self.home(self.buckets[pos].blockno)) & self.mask()
    }

    /// The bucket of `block`'s entry.
    #[inline]
    fn lookup(&self, block: u32) -> Option<usize> {
        let mask = self.mask();
        let mut pos = self.home(block);
        let mut dist = 0;
        loop {
            let entry = &self.buckets[pos];
            if !entry.in_use {
                return None;
            }
            if entry.blockno == block {
                return Some(pos);
            }
            // Robin Hood order: had `block` been here, it would sit before
            // any entry nearer its own home than `block` is to its.
            if self.distance(pos) < dist {
                return None;
            }
            pos = (pos + 1) & mask;
            dist += 1;
        }
    }

    /// The bucket of `block`'s entry, inserting an empty exact page for it
    /// if it has none; whether it was there before.
    fn insert(&mut self, block: u32) -> (usize, bool) {
        loop {
            if self.members >= self.grow_threshold {
                self.grow();
                continue;
            }
            match self.try_insert(block) {
                Inserted::At(pos, found) => return (pos, found),
                Inserted::Grow => self.grow(),
            }
        }
    }

    /// One insertion attempt; [`Inserted::Grow`] when a probe or a move is
    /// too long for a table this full.
    fn try_insert(&mut self, block: u32) -> Inserted {
        let mask = self.mask();
        let may_grow = self.members as f64 / self.size() as f64 >= GROW_MIN_FILL;
        let mut pos = self.home(block);
        let mut dist = 0;
        loop {
            let entry = &self.buckets[pos];
            if !entry.in_use {
                self.buckets[pos] = PageEntry::exact(block);
                self.members += 1;
                return Inserted::At(pos, false);
            }
            if entry.blockno == block {
                return Inserted::At(pos, true);
            }
            if self.distance(pos) < dist {
                // Take this bucket; its entry and the rest of the run move
                // one bucket on, into the first empty one.
                let mut empty = (pos + 1) & mask;
                let mut moves = 1;
                while self.buckets[empty].in_use {
                    empty = (empty + 1) & mask;
                    moves += 1;
                }
                if moves > GROW_MAX_MOVE && may_grow {
                    return Inserted::Grow;
                }
                let mut to = empty;
                while to != pos {
                    let from = to.wrapping_sub(1) & mask;
                    self.buckets[to] = self.buckets[from];
                    to = from;
                }
                self.buckets[pos] = PageEntry::exact(block);
                self.members += 1;
                return Inserted::At(pos, false);
            }
            pos = (pos + 1) & mask;
            dist += 1;
            if dist > GROW_MAX_DIB && may_grow {
                return Inserted::Grow;
            }
        }
    }

    /// Doubles the buckets and puts every entry back.
    fn grow(&mut self) {
        let mut bigger = Self::with_buckets(self.size() * 2);
        for entry in self.buckets.iter().filter(|e| e.in_use) {
            bigger.put(*entry);
        }
        *self = bigger;
    }

    /// Puts `entry` (absent, and room for it) in Robin Hood order, with no
    /// growth: for [`grow`](Self::grow).
    fn put(&mut self, mut entry: PageEntry) {
        let mask = self.mask();
        let mut pos = self.home(entry.blockno);
        let mut dist = 0;
        loop {
            if !self.buckets[pos].in_use {
                self.buckets[pos] = entry;
                self.members += 1;
                return;
            }
            let theirs = self.distance(pos);
            if theirs < dist {
                std::mem::swap(&mut self.buckets[pos], &mut entry);
                dist = theirs;
            }
            pos = (pos + 1) & mask;
            dist += 1;
        }
    }

    /// Removes the entry at bucket `pos`, shifting the rest of its run one
    /// bucket back.
    fn delete_at(&mut self, mut pos: usize) {
        let mask = self.mask();
        loop {
            let next = (pos + 1) & mask;
            if !self.buckets[next].in_use || self.distance(next) == 0 {
                self.buckets[pos] = PageEntry::EMPTY;
                break;
            }
            self.buckets[pos] = self.buckets[next];
            pos = next;
        }
        self.members -= 1;
    }

    /// Removes `block`'s entry; whether it had one.
    fn delete(&mut self, block: u32) -> bool {
        match self.lookup(block) {
            Some(pos) => {
                self.delete_at(pos);
                true
            }
            None => false,
        }
    }

    /// A walk of the table in hash order, from just below an empty bucket
    /// downwards, so that deletions under the walk (which move entries
    /// down from buckets it has visited) neither hide an entry nor show
    /// one twice.
    fn walk(&self) -> HashOrder {
        let start = self.buckets.iter().position(|e| !e.in_use).unwrap_or(0);
        HashOrder::at(start, self.mask())
    }
}

/// A position in a walk of a [`PageTable`] in hash order (downwards, with
/// wrap-around, every bucket once), by index, so that the table may change
/// under it.
struct HashOrder {
    cur: usize,
    end: usize,
    done: bool,
}

impl HashOrder {
    /// A walk starting at bucket `at`.
    fn at(at: usize, mask: usize) -> Self {
        let cur = at & mask;
        Self {
            cur,
            end: cur,
            done: false,
        }
    }

    /// The next bucket in use, if any is left.
    fn next(&mut self, table: &PageTable) -> Option<usize> {
        let mask = table.mask();
        while !self.done {
            let pos = self.cur & mask;
            self.cur = pos.wrapping_sub(1) & mask;
            if self.cur == self.end & mask {
                self.done = true;
            }
            if table.buckets[pos].in_use {
                return Some(pos);
            }
        }
        None
    }
}

/// What the bitmap holds: no page, one page in [`TbmHash::entry1`], or a
/// page table (`TBMStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Empty,
    OnePage,
    Hash,
}

/// Where an entry is: the one-page field or a bucket.
#[derive(Clone, Copy)]
enum Slot {
    One,
    Bucket(usize),
}

/// An offset [`TbmHash::add_tid`] cannot hold: 0 or above
/// [`MAX_TUPLES_PER_PAGE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OffsetOutOfRange {
    /// The TID's block.
    pub block: u32,
    /// The offending offset.
    pub offset: u16,
}

impl fmt::Display for OffsetOutOfRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tuple offset out of range: {} on block {} (1..={MAX_TUPLES_PER_PAGE})",
            self.offset, self.block
        )
    }
}

impl std::error::Error for OffsetOutOfRange {}

/// A hash-table TID bitmap as `tidbitmap.c` builds one (see the module
/// documentation).
///
/// ```
/// use benches::peers::tbm_hash::TbmHash;
/// use tidstore::Tid;
///
/// let mut a = TbmHash::new(4 << 20);
/// a.add_tid(Tid::new(7, 3), false)?;
/// a.add_tid(Tid::new(9, 1), false)?;
/// let mut b = TbmHash::new(4 << 20);
/// b.add_tid(Tid::new(7, 3), false)?;
/// b.add_page(9);
/// a.intersect_with(&b);
/// let pages: Vec<_> = a
///     .iter()
///     .map(|p| (p.block(), p.offsets().map(|o| o.collect::<Vec<_>>()), p.recheck()))
///     .collect();
/// assert_eq!(pages, [(7, Some(vec![3]), false), (9, Some(vec![1]), true)]);
/// # Ok::<(), benches::peers::tbm_hash::OffsetOutOfRange>(())
/// ```
pub struct TbmHash {
    status: Status,
    /// The page table, once the bitmap has needed one.
    table: Option<PageTable>,
    /// The page of the one-page mode.
    entry1: PageEntry,
    /// Entries: exact pages and chunks.
    nentries: usize,
    /// The limit on entries, from the budget (raised by a lossify that
    /// cannot get below half of it).
    maxentries: usize,
    /// Exact pages.
    npages: usize,
    /// Lossy chunks.
    nchunks: usize,
    /// The bucket where the next lossify starts.
    lossify_start: usize,
}

/// `tbm_calculate_entries`: the entries a bitmap may hold within
/// `maxbytes`, `maxbytes / 64` kept within `16..=i32::MAX - 1`.
pub fn calculate_entries(maxbytes: usize) -> usize {
    (maxbytes / BYTES_PER_ENTRY).clamp(MIN_ENTRIES, MAX_ENTRIES)
}

impl TbmHash {
    /// An empty bitmap limited to about `maxbytes` (`tbm_create`): at most
    /// [`calculate_entries`]`(maxbytes)` entries before it lossifies.
    pub fn new(maxbytes: usize) -> Self {
        Self {
            status: Status::Empty,
            table: None,
            entry1: PageEntry::EMPTY,
            nentries: 0,
            maxentries: calculate_entries(maxbytes),
            npages: 0,
            nchunks: 0,
            lossify_start: 0,
        }
    }

    /// An empty bitmap with the largest limit, `i32::MAX - 1` entries: in
    /// effect unlimited.
    pub fn unlimited() -> Self {
        Self::new(usize::MAX)
    }

    /// Entries (exact pages and lossy chunks).
    pub fn entries(&self) -> usize {
        self.nentries
    }

    /// The limit on entries now.
    pub fn max_entries(&self) -> usize {
        self.maxentries
    }

    /// Exact pages.
    pub fn exact_pages(&self) -> usize {
        self.npages
    }

    /// Lossy chunks.
    pub fn chunks(&self) -> usize {
        self.nchunks
    }

    /// Pages marked lossy, over every chunk.
    pub fn lossy_pages(&self) -> usize {
        self.table.as_ref().map_or(0, |t| {
            t.buckets
                .iter()
                .filter(|e| e.in_use && e.ischunk)
                .map(|e| {
                    e.words
                        .iter()
                        .map(|w| w.count_ones() as usize)
                        .sum::<usize>()
                })
                .sum()
        })
    }

    /// Whether the bitmap holds no page.
    pub fn is_empty(&self) -> bool {
        self.nentries == 0
    }

    /// Whether the bitmap has a page table (it is past its one-page mode).
    pub fn has_table(&self) -> bool {
        self.status == Status::Hash
    }

    /// Bytes of the bucket array: buckets × [`ENTRY_BYTES`] (0 without a
    /// table). The counting allocator sees the same.
    pub fn table_bytes(&self) -> usize {
        self.table.as_ref().map_or(0, |t| t.size() * ENTRY_BYTES)
    }

    /// Adds `tids` (`tbm_add_tuples`); with `recheck`, their pages' matches
    /// must be rechecked. Looks a page up once for a run of TIDs on it.
    ///
    /// # Errors
    ///
    /// [`OffsetOutOfRange`] for an offset outside `1..=291`; nothing is
    /// added then.
    pub fn add_tuples(&mut self, tids: &[Tid], recheck: bool) -> Result<(), OffsetOutOfRange> {
        if let Some(bad) = tids
            .iter()
            .find(|t| t.offset() == 0 || t.offset() > MAX_TUPLES_PER_PAGE)
        {
            return Err(OffsetOutOfRange {
                block: bad.block(),
                offset: bad.offset(),
            });
        }
        let mut current: Option<(u32, Option<Slot>)> = None;
        for tid in tids {
            let block = tid.block();
            let slot = match current {
                Some((b, slot)) if b == block => slot,
                _ => {
                    let slot = if self.page_is_lossy(block) {
                        None
                    } else {
                        Some(self.get_pageentry(block))
                    };
                    current = Some((block, slot));
                    slot
                }
            };
            // A lossy page already holds every tuple.
            let Some(slot) = slot else { continue };
            let page = self.entry_mut(slot);
            if page.ischunk {
                // The page is its lossy chunk's first: its own bit.
                page.words[0] |= 1;
            } else {
                page.set_bit(usize::from(tid.offset()) - 1);
            }
            page.recheck |= recheck;
            if self.nentries > self.maxentries {
                self.lossify();
                // The page may have turned lossy: look it up again.
                current = None;
            }
        }
        Ok(())
    }

    /// Adds one TID.
    ///
    /// # Errors
    ///
    /// As for [`add_tuples`](Self::add_tuples).
    #[inline]
    pub fn add_tid(&mut self, tid: Tid, recheck: bool) -> Result<(), OffsetOutOfRange> {
        self.add_tuples(std::slice::from_ref(&tid), recheck)
    }

    /// Adds every tuple of `block`: the page becomes lossy (`tbm_add_page`).
    pub fn add_page(&mut self, block: u32) {
        self.mark_page_lossy(block);
        if self.nentries > self.maxentries {
            self.lossify();
        }
    }

    /// `self ∪= other` (`tbm_union`).
    pub fn union_with(&mut self, other: &Self) {
        if other.nentries == 0 {
            return;
        }
        match (other.status, &other.table) {
            (Status::OnePage, _) => self.union_page(&other.entry1),
            (_, Some(table)) => {
                let mut walk = table.walk();
                while let Some(pos) = walk.next(table) {
                    self.union_page(&table.buckets[pos]);
                }
            }
            (_, None) => {}
        }
    }

    /// Merges one entry of the other side into this bitmap.
    fn union_page(&mut self, theirs: &PageEntry) {
        if theirs.ischunk {
            for (w, &word) in theirs.words[..WORDS_PER_CHUNK].iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let bit = bits.trailing_zeros();
                    bits &= bits - 1;
                    self.mark_page_lossy(theirs.blockno + (w * WORD_BITS) as u32 + bit);
                }
            }
        } else if self.page_is_lossy(theirs.blockno) {
            // Already every tuple.
            return;
        } else {
            let slot = self.get_pageentry(theirs.blockno);
            let page = self.entry_mut(slot);
            if page.ischunk {
                page.words[0] |= 1;
            } else {
                for w in 0..WORDS_PER_PAGE {
                    page.words[w] |= theirs.words[w];
                }
                page.recheck |= theirs.recheck;
            }
        }
        if self.nentries > self.maxentries {
            self.lossify();
        }
    }

    /// `self ∩= other` (`tbm_intersect`).
    pub fn intersect_with(&mut self, other: &Self) {
        if self.nentries == 0 {
            return;
        }
        if self.status == Status::OnePage {
            let mut page = self.entry1;
            if intersect_page(&mut page, other) {
                self.npages -= 1;
                self.nentries -= 1;
                self.status = Status::Empty;
            } else {
                self.entry1 = page;
            }
            return;
        }
        let Some(table) = self.table.as_mut() else {
            return;
        };
        let mut walk = table.walk();
        while let Some(pos) = walk.next(table) {
            let mut page = table.buckets[pos];
            if intersect_page(&mut page, other) {
                if page.ischunk {
                    self.nchunks -= 1;
                } else {
                    self.npages -= 1;
                }
                self.nentries -= 1;
                table.delete_at(pos);
            } else {
                table.buckets[pos] = page;
            }
        }
    }

    /// The pages in block order (`tbm_begin_iterate`, then `tbm_iterate`):
    /// the exact pages and the chunks are collected and each list sorted
    /// first.
    pub fn iter(&self) -> TbmIter<'_> {
        let mut iter = TbmIter {
            one: None,
            spages: Vec::new(),
            schunks: Vec::new(),
            spageptr: 0,
            schunkptr: 0,
            schunkbit: 0,
        };
        match (self.status, &self.table) {
            (Status::OnePage, _) => iter.one = Some(&self.entry1),
            (Status::Hash, Some(table)) => {
                iter.spages.reserve_exact(self.npages);
                iter.schunks.reserve_exact(self.nchunks);
                let mut walk = table.walk();
                while let Some(pos) = walk.next(table) {
                    let entry = &table.buckets[pos];
                    if entry.ischunk {
                        iter.schunks.push(entry);
                    } else {
                        iter.spages.push(entry);
                    }
                }
                iter.spages.sort_unstable_by_key(|e| e.blockno);
                iter.schunks.sort_unstable_by_key(|e| e.blockno);
            }
            _ => {}
        }
        iter
    }

    /// The entry at `slot`.
    #[inline]
    fn entry_mut(&mut self, slot: Slot) -> &mut PageEntry {
        match slot {
            Slot::One => &mut self.entry1,
            Slot::Bucket(pos) => &mut self.table.as_mut().expect("a table").buckets[pos],
        }
    }

    /// Makes the page table, moving the one-page mode's page into it
    /// (`tbm_create_pagetable`).
    fn create_pagetable(&mut self) {
        debug_assert!(self.status != Status::Hash);
        let mut table = PageTable::for_elements(INITIAL_ELEMENTS);
        if self.status == Status::OnePage {
            let (pos, found) = table.insert(self.entry1.blockno);
            debug_assert!(!found);
            table.buckets[pos] = self.entry1;
        }
        self.table = Some(table);
        self.status = Status::Hash;
    }

    /// The entry of `block`, a new exact page if it has none
    /// (`tbm_get_pageentry`). May leave more entries than the limit.
    fn get_pageentry(&mut self, block: u32) -> Slot {
        match self.status {
            Status::Empty => {
                self.entry1 = PageEntry::exact(block);
                self.status = Status::OnePage;
                self.nentries += 1;
                self.npages += 1;
                return Slot::One;
            }
            Status::OnePage if self.entry1.blockno == block => return Slot::One,
            Status::OnePage => self.create_pagetable(),
            Status::Hash => {}
        }
        let table = self.table.as_mut().expect("a table");
        let (pos, found) = table.insert(block);
        if !found {
            self.nentries += 1;
            self.npages += 1;
        }
        Slot::Bucket(pos)
    }

    /// The exact page of `block` (`tbm_find_pageentry`).
    fn find_pageentry(&self, block: u32) -> Option<&PageEntry> {
        if self.nentries == 0 {
            return None;
        }
        match (self.status, &self.table) {
            (Status::OnePage, _) => (self.entry1.blockno == block).then_some(&self.entry1),
            (_, Some(table)) => {
                let entry = &table.buckets[table.lookup(block)?];
                (!entry.ischunk).then_some(entry)
            }
            (_, None) => None,
        }
    }

    /// Whether `block` is marked lossy (`tbm_page_is_lossy`).
    #[inline]
    fn page_is_lossy(&self, block: u32) -> bool {
        if self.nchunks == 0 {
            return false;
        }
        let Some(table) = &self.table else {
            return false;
        };
        let bit = block % PAGES_PER_CHUNK;
        match table.lookup(block - bit) {
            Some(pos) => {
                let chunk = &table.buckets[pos];
                chunk.ischunk && chunk.bit(bit as usize)
            }
            None => false,
        }
    }

    /// Marks `block` lossy: drops its exact page and sets its bit in its
    /// chunk, making the chunk (or turning its first page into it) if need
    /// be (`tbm_mark_page_lossy`). May leave more entries than the limit.
    fn mark_page_lossy(&mut self, block: u32) {
        if self.status != Status::Hash {
            self.create_pagetable();
        }
        let bit = block % PAGES_PER_CHUNK;
        let chunk_block = block - bit;
        let table = self.table.as_mut().expect("a table");
        // The chunk's first page is the chunk's own entry: handled below.
        if bit != 0 && table.delete(block) {
            self.nentries -= 1;
            self.npages -= 1;
        }
        let (pos, found) = table.insert(chunk_block);
        let chunk = &mut table.buckets[pos];
        if !found {
            *chunk = PageEntry::chunk(chunk_block);
            self.nentries += 1;
            self.nchunks += 1;
        } else if !chunk.ischunk {
            // The chunk's first page was exact: it becomes lossy, and it
            // had tuples.
            *chunk = PageEntry::chunk(chunk_block);
            chunk.words[0] = 1;
            self.nchunks += 1;
            self.npages -= 1;
        }
        chunk.set_bit(bit as usize);
    }

    /// Turns exact pages lossy, in hash order from where the last call
    /// stopped, until at most half the limit of entries is left; doubles
    /// the limit if that cannot be done (`tbm_lossify`).
    pub fn lossify(&mut self) {
        let Some(table) = &self.table else {
            return;
        };
        let mut walk = HashOrder::at(self.lossify_start, table.mask());
        loop {
            let table = self.table.as_ref().expect("a table");
            let Some(pos) = walk.next(table) else { break };
            let entry = &table.buckets[pos];
            // A chunk already; or a chunk's first page, whose chunk would
            // take its entry and save nothing.
            if entry.ischunk || entry.blockno.is_multiple_of(PAGES_PER_CHUNK) {
                continue;
            }
            let block = entry.blockno;
            self.mark_page_lossy(block);
            if self.nentries <= self.maxentries / 2 {
                // Enough: the next round starts here, so that rounds go
                // around the table evenly.
                self.lossify_start = walk.cur;
                break;
            }
        }
        // Entries that cannot be made fewer: admit it, and raise the limit
        // so as not to come back at once.
        if self.nentries > self.maxentries / 2 {
            self.maxentries = self.nentries.min((MAX_ENTRIES - 1) / 2) * 2;
        }
    }
}

/// ANDs `ours` with the other bitmap; whether it is left empty
/// (`tbm_intersect_page`).
fn intersect_page(ours: &mut PageEntry, other: &TbmHash) -> bool {
    if ours.ischunk {
        let mut empty = true;
        for w in 0..WORDS_PER_CHUNK {
            let mut bits = ours.words[w];
            let mut kept = bits;
            while bits != 0 {
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                let page = ours.blockno + (w * WORD_BITS) as u32 + bit;
                if !other.page_is_lossy(page) && other.find_pageentry(page).is_none() {
                    // Not in the other bitmap at all.
                    kept &= !(1 << bit);
                }
            }
            ours.words[w] = kept;
            if kept != 0 {
                empty = false;
            }
        }
        empty
    } else if other.page_is_lossy(ours.blockno) {
        // Which of our tuples the other side matches is not known: they
        // are candidates.
        ours.recheck = true;
        false
    } else {
        let mut empty = true;
        if let Some(theirs) = other.find_pageentry(ours.blockno) {
            for w in 0..WORDS_PER_PAGE {
                ours.words[w] &= theirs.words[w];
                if ours.words[w] != 0 {
                    empty = false;
                }
            }
            ours.recheck |= theirs.recheck;
        }
        empty
    }
}

/// The pages of a [`TbmHash`] in block order.
pub struct TbmIter<'a> {
    /// The one-page mode's page, not yet given.
    one: Option<&'a PageEntry>,
    /// Exact pages, by block.
    spages: Vec<&'a PageEntry>,
    /// Lossy chunks, by block.
    schunks: Vec<&'a PageEntry>,
    /// The next exact page.
    spageptr: usize,
    /// The chunk being walked.
    schunkptr: usize,
    /// The next page bit of that chunk to look at.
    schunkbit: usize,
}

/// One page of a [`TbmHash`] walk.
#[derive(Clone, Copy)]
pub struct TbmPage<'a> {
    block: u32,
    recheck: bool,
    words: Option<&'a [u64; WORDS]>,
}

impl<'a> TbmPage<'a> {
    /// The block.
    pub fn block(&self) -> u32 {
        self.block
    }

    /// Whether the page's tuples must be rechecked (always for a lossy
    /// page).
    pub fn recheck(&self) -> bool {
        self.recheck
    }

    /// Whether the page is lossy: every tuple on it must be rechecked.
    pub fn is_lossy(&self) -> bool {
        self.words.is_none()
    }

    /// An exact page's offsets, ascending; `None` for a lossy page.
    pub fn offsets(&self) -> Option<TbmOffsets<'a>> {
        self.words.map(|words| TbmOffsets {
            words,
            word: 0,
            bits: words[0],
        })
    }
}

/// The offsets of an exact [`TbmPage`], ascending: a scan of its bits.
#[derive(Clone)]
pub struct TbmOffsets<'a> {
    words: &'a [u64; WORDS],
    word: usize,
    bits: u64,
}

impl Iterator for TbmOffsets<'_> {
    type Item = u16;

    #[inline]
    fn next(&mut self) -> Option<u16> {
        while self.bits == 0 {
            self.word += 1;
            if self.word >= WORDS_PER_PAGE {
                return None;
            }
            self.bits = self.words[self.word];
        }
        let bit = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some((self.word * WORD_BITS + bit + 1) as u16)
    }
}

impl<'a> Iterator for TbmIter<'a> {
    type Item = TbmPage<'a>;

    fn next(&mut self) -> Option<TbmPage<'a>> {
        if let Some(page) = self.one.take() {
            return Some(TbmPage {
                block: page.blockno,
                recheck: page.recheck,
                words: Some(&page.words),
            });
        }
        // Move to the next lossy page bit, if a chunk has one left.
        while let Some(chunk) = self.schunks.get(self.schunkptr) {
            match next_bit(&chunk.words[..WORDS_PER_CHUNK], self.schunkbit) {
                Some(bit) => {
                    self.schunkbit = bit;
                    break;
                }
                None => {
                    self.schunkptr += 1;
                    self.schunkbit = 0;
                }
            }
        }
        // The earlier of the next lossy page and the next exact page.
        if let Some(chunk) = self.schunks.get(self.schunkptr) {
            let block = chunk.blockno + self.schunkbit as u32;
            if self
                .spages
                .get(self.spageptr)
                .is_none_or(|page| block < page.blockno)
            {
                self.schunkbit += 1;
                return Some(TbmPage {
                    block,
                    recheck: true,
                    words: None,
                });
            }
        }
        let page = self.spages.get(self.spageptr)?;
        self.spageptr += 1;
        Some(TbmPage {
            block: page.blockno,
            recheck: page.recheck,
            words: Some(&page.words),
        })
    }
}

/// The first set bit at or after `from` in `words`.
#[inline]
fn next_bit(words: &[u64], from: usize) -> Option<usize> {
    let mut w = from / WORD_BITS;
    if w >= words.len() {
        return None;
    }
    let mut bits = words[w] & (u64::MAX << (from % WORD_BITS));
    loop {
        if bits != 0 {
            return Some(w * WORD_BITS + bits.trailing_zeros() as usize);
        }
        w += 1;
        if w >= words.len() {
            return None;
        }
        bits = words[w];
    }
}

impl TidBitmapPeer for TbmHash {
    const NAME: &'static str = "tbm-hash";
    const BUDGETED: bool = true;
    const KEEPS_BUDGET: bool = false;

    fn new(budget: Option<usize>) -> Self {
        match budget {
            Some(bytes) => TbmHash::new(bytes),
            None => TbmHash::unlimited(),
        }
    }

    #[inline]
    fn add_tid(&mut self, tid: Tid) {
        if let Err(e) = TbmHash::add_tid(self, tid, false) {
            panic!("the workload gave tbm-hash a TID it cannot hold: {e}");
        }
    }

    fn intersect_with(&mut self, other: &Self) {
        TbmHash::intersect_with(self, other);
    }

    fn union_with(&mut self, other: &Self) {
        TbmHash::union_with(self, other);
    }

    fn walk<S: PageSink>(&self, sink: &mut S) {
        for page in self.iter() {
            match page.offsets() {
                Some(offsets) => sink.exact(page.block, offsets, page.recheck),
                None => sink.lossy(page.block),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet, HashMap};

    use super::*;
    use crate::alloc::{bytes_since, live_bytes};
    use crate::rng::SplitMix64;

    /// A page of the model: exact offsets and recheck, or lossy.
    #[derive(Clone, Debug, PartialEq, Eq)]
    enum Page {
        Exact(BTreeSet<u16>, bool),
        Lossy,
    }

    type Model = BTreeMap<u32, Page>;

    /// What a bitmap's walk gives, as a model.
    fn walked(bitmap: &TbmHash) -> Model {
        let mut out = Model::new();
        let mut last = None;
        for page in bitmap.iter() {
            assert!(last < Some(page.block()), "pages out of order");
            last = Some(page.block());
            let entry = match page.offsets() {
                Some(offsets) => {
                    let offsets: BTreeSet<u16> = offsets.collect();
                    assert!(!offsets.is_empty(), "an empty exact page");
                    Page::Exact(offsets, page.recheck())
                }
                None => {
                    assert!(page.recheck(), "a lossy page without recheck");
                    Page::Lossy
                }
            };
            out.insert(page.block(), entry);
        }
        out
    }

    /// `tidbitmap.c`'s one rule the pages do not show: a chunk's first
    /// page is the chunk's entry, so once any page of a chunk is lossy,
    /// its first page, if it has one, is lossy too.
    fn normalize(model: &mut Model) {
        let heads: Vec<u32> = model
            .iter()
            .filter(|(_, page)| **page == Page::Lossy)
            .map(|(&block, _)| block - block % PAGES_PER_CHUNK)
            .collect();
        for head in heads {
            if let Some(page) = model.get_mut(&head) {
                *page = Page::Lossy;
            }
        }
    }

    fn model_add(model: &mut Model, tid: Tid, recheck: bool) {
        match model
            .entry(tid.block())
            .or_insert_with(|| Page::Exact(BTreeSet::new(), false))
        {
            Page::Exact(offsets, r) => {
                offsets.insert(tid.offset());
                *r |= recheck;
            }
            Page::Lossy => {}
        }
        normalize(model);
    }

    fn model_union(a: &mut Model, b: &Model) {
        for (&block, theirs) in b {
            match (a.get_mut(&block), theirs) {
                (None, _) => {
                    a.insert(block, theirs.clone());
                }
                (Some(ours), Page::Lossy) => *ours = Page::Lossy,
                (Some(Page::Lossy), _) => {}
                (Some(Page::Exact(ours, r)), Page::Exact(t, tr)) => {
                    ours.extend(t);
                    *r |= tr;
                }
            }
        }
        normalize(a);
    }

    fn model_intersect(a: &mut Model, b: &Model) {
        a.retain(|block, ours| match (ours, b.get(block)) {
            (_, None) => false,
            (Page::Lossy, Some(_)) => true,
            (Page::Exact(_, r), Some(Page::Lossy)) => {
                *r = true;
                true
            }
            (Page::Exact(o, r), Some(Page::Exact(t, tr))) => {
                o.retain(|x| t.contains(x));
                *r |= tr;
                !o.is_empty()
            }
        });
    }

    /// Random TIDs over `blocks` blocks, offsets `1..=max_off`.
    fn random_tids(rng: &mut SplitMix64, n: usize, blocks: u32, max_off: u16) -> Vec<Tid> {
        (0..n)
            .map(|_| {
                let r = rng.next_u64();
                Tid::new(
                    (r % u64::from(blocks)) as u32,
                    ((r >> 32) % u64::from(max_off)) as u16 + 1,
                )
            })
            .collect()
    }

    #[test]
    fn entry_limits_follow_tbm_calculate_entries() {
        assert_eq!(calculate_entries(4 << 20), 65_536);
        assert_eq!(calculate_entries(64 * 1000 + 63), 1000);
        assert_eq!(calculate_entries(0), MIN_ENTRIES);
        assert_eq!(calculate_entries(usize::MAX), MAX_ENTRIES);
        assert_eq!(TbmHash::new(4 << 20).max_entries(), 65_536);
        assert_eq!(size_of::<PageEntry>(), 48);
        assert_eq!((WORDS_PER_PAGE, WORDS_PER_CHUNK), (5, 4));
    }

    #[test]
    fn the_table_is_a_map() {
        let mut rng = SplitMix64::new(3);
        let mut table = PageTable::for_elements(INITIAL_ELEMENTS);
        assert_eq!(table.size(), 256);
        let mut model: HashMap<u32, u64> = HashMap::new();
        for step in 0..60_000u64 {
            let block = (rng.next_u64() % 5_000) as u32;
            if rng.next_u64().is_multiple_of(3) {
                assert_eq!(table.delete(block), model.remove(&block).is_some());
            } else {
                let (pos, found) = table.insert(block);
                assert_eq!(found, model.contains_key(&block));
                table.buckets[pos].words[0] = step;
                model.insert(block, step);
            }
            assert_eq!(table.members, model.len());
            assert!(table.members <= table.grow_threshold);
        }
        for block in 0..5_000 {
            let got = table.lookup(block).map(|pos| table.buckets[pos].words[0]);
            assert_eq!(got, model.get(&block).copied(), "block {block}");
        }
        // A walk in hash order sees every entry once.
        let mut walk = table.walk();
        let mut seen = BTreeSet::new();
        while let Some(pos) = walk.next(&table) {
            assert!(seen.insert(table.buckets[pos].blockno));
        }
        assert_eq!(seen.len(), model.len());
        // The fill factor holds: more than 0.9 of the buckets are never in
        // use.
        assert!(table.members as f64 <= table.size() as f64 * FILL_FACTOR);
    }

    #[test]
    fn adds_unions_and_intersections_match_the_model() {
        let mut rng = SplitMix64::new(11);
        for round in 0..20 {
            let blocks = [3u32, 40, 700, 5_000][round % 4];
            let mut sides = Vec::new();
            for side in 0..2 {
                let mut bitmap = TbmHash::unlimited();
                let mut model = Model::new();
                for tid in random_tids(&mut rng, 2_000, blocks, MAX_TUPLES_PER_PAGE) {
                    let recheck = rng.next_u64().is_multiple_of(50);
                    bitmap.add_tid(tid, recheck).unwrap();
                    model_add(&mut model, tid, recheck);
                }
                // Some whole pages, as a lossy index would give.
                for _ in 0..(round + side) % 5 {
                    let block = (rng.next_u64() % u64::from(blocks)) as u32;
                    bitmap.add_page(block);
                    model.insert(block, Page::Lossy);
                    normalize(&mut model);
                }
                assert_eq!(walked(&bitmap), model, "round {round} side {side}");
                sides.push((bitmap, model));
            }
            let (b, b_model) = sides.pop().unwrap();
            let (a, a_model) = sides.pop().unwrap();

            let mut union = TbmHash::unlimited();
            union.union_with(&a);
            union.union_with(&b);
            let mut union_model = a_model.clone();
            model_union(&mut union_model, &b_model);
            assert_eq!(walked(&union), union_model, "round {round}: union");

            let mut inter = TbmHash::unlimited();
            inter.union_with(&a);
            inter.intersect_with(&b);
            let mut inter_model = a_model.clone();
            model_intersect(&mut inter_model, &b_model);
            assert_eq!(walked(&inter), inter_model, "round {round}: intersection");
            assert_eq!(inter.exact_pages() + inter.lossy_pages(), inter_model.len());
        }
    }

    #[test]
    fn set_operations_follow_postgresql_where_pages_are_lossy() {
        let exact = |tids: &[(u32, u16)], recheck: bool| {
            let mut b = TbmHash::unlimited();
            for &(blk, off) in tids {
                b.add_tid(Tid::new(blk, off), recheck).unwrap();
            }
            b
        };
        // Exact AND lossy: the exact bits, for recheck.
        let mut a = exact(&[(1, 3), (1, 5), (2, 1)], false);
        let mut b = exact(&[(2, 2)], false);
        b.add_page(1);
        a.intersect_with(&b);
        let mut want = Model::new();
        want.insert(1, Page::Exact([3, 5].into(), true));
        assert_eq!(
            walked(&a),
            want,
            "exact page 2 AND exact page 2 without common bits"
        );
        // Exact AND exact: the AND of the bits, recheck if either had it.
        let mut a = exact(&[(4, 1), (4, 2)], false);
        let b = exact(&[(4, 2), (4, 9)], true);
        a.intersect_with(&b);
        let mut want = Model::new();
        want.insert(4, Page::Exact([2].into(), true));
        assert_eq!(walked(&a), want);
        // Lossy AND exact: stays lossy; lossy AND absent: dropped.
        let mut a = TbmHash::unlimited();
        a.add_page(10);
        a.add_page(11);
        let b = exact(&[(10, 7)], false);
        a.intersect_with(&b);
        let mut want = Model::new();
        want.insert(10, Page::Lossy);
        assert_eq!(walked(&a), want);
        assert_eq!((a.chunks(), a.lossy_pages()), (1, 1));
        // Lossy OR exact, exact OR lossy: lossy.
        let mut a = exact(&[(20, 1)], false);
        let mut b = exact(&[(21, 1)], false);
        b.add_page(20);
        a.union_with(&b);
        let mut c = exact(&[(21, 4)], false);
        c.add_page(300);
        let mut l = TbmHash::unlimited();
        l.add_page(21);
        c.union_with(&l);
        assert_eq!(
            walked(&a),
            Model::from([(20, Page::Lossy), (21, Page::Exact([1].into(), false))])
        );
        assert_eq!(
            walked(&c),
            Model::from([(21, Page::Lossy), (300, Page::Lossy)])
        );
        // A chunk's first page that was exact becomes the chunk's entry
        // when another page of the chunk goes lossy: it is lossy too.
        let mut a = exact(&[(512, 2), (600, 1)], false);
        a.add_page(513);
        assert_eq!(
            walked(&a),
            Model::from([
                (512, Page::Lossy),
                (513, Page::Lossy),
                (600, Page::Exact([1].into(), false))
            ])
        );
        assert_eq!((a.entries(), a.exact_pages(), a.chunks()), (2, 1, 1));
        // A TID added to a lossy page changes nothing.
        a.add_tid(Tid::new(513, 9), false).unwrap();
        a.add_tid(Tid::new(512, 9), false).unwrap();
        assert_eq!((a.entries(), a.lossy_pages()), (2, 2));
        // An emptied bitmap is empty.
        let mut a = exact(&[(1, 1), (2, 2)], false);
        a.intersect_with(&TbmHash::unlimited());
        assert!(a.is_empty() && a.iter().next().is_none());
    }

    #[test]
    fn one_page_mode_allocates_nothing() {
        let before = live_bytes();
        let mut a = TbmHash::new(4 << 20);
        for off in [5, 1, 3, 291] {
            a.add_tid(Tid::new(77, off), false).unwrap();
        }
        assert!(!a.has_table());
        assert_eq!(a.table_bytes(), 0);
        assert_eq!(bytes_since(before), 0, "the one-page mode allocated");
        assert_eq!(
            walked(&a),
            Model::from([(77, Page::Exact([1, 3, 5, 291].into(), false))])
        );
        // AND in one-page mode, with a one-page other side.
        let mut b = TbmHash::new(4 << 20);
        b.add_tid(Tid::new(77, 3), true).unwrap();
        a.intersect_with(&b);
        assert!(!a.has_table());
        assert_eq!(
            walked(&a),
            Model::from([(77, Page::Exact([3].into(), true))])
        );
        // Emptied, then given another page: one-page mode again.
        let mut c = TbmHash::new(4 << 20);
        c.add_tid(Tid::new(78, 1), false).unwrap();
        a.intersect_with(&c);
        assert!(a.is_empty());
        a.add_tid(Tid::new(5, 5), false).unwrap();
        assert!(!a.has_table());
        // A second page makes the table, with the first page in it.
        a.add_tid(Tid::new(6, 6), false).unwrap();
        assert!(a.has_table());
        assert_eq!(a.table_bytes(), 256 * ENTRY_BYTES);
        assert_eq!(
            walked(&a),
            Model::from([
                (5, Page::Exact([5].into(), false)),
                (6, Page::Exact([6].into(), false))
            ])
        );
        // Out-of-range offsets are refused, and change nothing.
        assert_eq!(
            a.add_tid(Tid::new(9, 292), false),
            Err(OffsetOutOfRange {
                block: 9,
                offset: 292
            })
        );
        assert!(a.add_tid(Tid::new(9, 0), false).is_err());
        assert_eq!(a.entries(), 2);
    }

    #[test]
    fn a_small_budget_makes_pages_lossy_and_keeps_every_tid() {
        let mut rng = SplitMix64::new(5);
        // 1024 bytes: the least limit, 16 entries.
        for (budget, blocks) in [(1024, 3_000u32), (64 * 200, 20_000), (64 * 1000, 2_000)] {
            let mut bitmap = TbmHash::new(budget);
            let limit = bitmap.max_entries();
            let mut model = Model::new();
            let tids = random_tids(&mut rng, 20_000, blocks, 100);
            for &tid in &tids {
                bitmap.add_tid(tid, false).unwrap();
                model_add(&mut model, tid, false);
                // After every add, within the limit, or the limit raised.
                assert!(bitmap.entries() <= bitmap.max_entries());
            }
            // The counting allocator sees the bucket array, and nothing
            // else, after every add.
            let before = live_bytes();
            let mut again = TbmHash::new(budget);
            for &tid in &tids {
                again.add_tid(tid, false).unwrap();
                assert_eq!(again.table_bytes(), bytes_since(before));
            }
            assert_eq!(again.entries(), bitmap.entries());
            drop(again);
            assert!(bitmap.chunks() > 0, "budget {budget}: nothing lossy");
            let walk = walked(&bitmap);
            for (block, page) in &model {
                match walk.get(block) {
                    Some(Page::Lossy) => {}
                    Some(exact) => assert_eq!(exact, page, "block {block}"),
                    None => panic!("budget {budget}: block {block} lost"),
                }
            }
            // Lossy pages are pages that had TIDs.
            assert!(walk.keys().all(|b| model.contains_key(b)));
            assert_eq!(
                walk.values().filter(|p| **p == Page::Lossy).count(),
                bitmap.lossy_pages()
            );
            let exact = walk.values().filter(|p| **p != Page::Lossy).count();
            assert_eq!(exact, bitmap.exact_pages());
            assert_eq!(bitmap.entries(), bitmap.exact_pages() + bitmap.chunks());
            assert!(bitmap.max_entries() >= limit);
            // The table holds the entries at under 0.9 of its buckets.
            assert!(bitmap.entries() as f64 <= bitmap.table_bytes() as f64 / 48.0 * 0.9);
        }
    }

    #[test]
    fn a_limit_that_cannot_be_met_is_doubled() {
        // Chunks' first pages cannot be lossified away: 40 of them with a
        // limit of 16 entries.
        let mut bitmap = TbmHash::new(0);
        assert_eq!(bitmap.max_entries(), 16);
        for i in 0..40 {
            bitmap
                .add_tid(Tid::new(i * PAGES_PER_CHUNK, 1), false)
                .unwrap();
        }
        assert_eq!(bitmap.chunks(), 0);
        assert_eq!(bitmap.exact_pages(), 40);
        // Raised at 17 entries to 34, then at 35 to 70.
        assert_eq!(bitmap.max_entries(), 70);
        // A 41st page fits under the raised limit.
        bitmap.add_tid(Tid::new(1, 1), false).unwrap();
        let walk = walked(&bitmap);
        assert_eq!(walk.len(), 41);
    }

    #[test]
    fn lossify_resumes_where_it_stopped() {
        // 100 entries; 9,000 blocks are 36 chunks, under half of them.
        let mut bitmap = TbmHash::new(64 * 100);
        let mut starts = BTreeSet::new();
        for blk in 1..3_000u32 {
            bitmap.add_tid(Tid::new(blk * 3, 1), false).unwrap();
            starts.insert(bitmap.lossify_start);
        }
        // Several rounds, each starting where the one before stopped.
        assert!(starts.len() > 3, "{starts:?}");
        assert_eq!(bitmap.max_entries(), 100);
        assert!(bitmap.entries() <= 100);
    }
}
