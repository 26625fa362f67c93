//! The concurrent engine's nodes: what a reader may find in a node at any
//! moment, and the stores by which a writer changes it.
//!
//! The kinds and capacities are the default configuration's (4, 16, 32,
//! 64 and 256 children), so a concurrent tree takes about the memory of a
//! plain one, but every node is laid out for readers that take no lock:
//!
//! - Every word a reader loads while a writer may store it is an atomic:
//!   chunk words, slots, the live mask, the index, the presence bitmap.
//!   The header's prefix word is written once, before the node is
//!   published, and never again, so it is a plain field.
//! - **Small nodes** (4, 16 and 32 children) are *append-only*. A plain
//!   node keeps its chunks sorted and shifts them to insert, which a
//!   reader would see half done. Here a writer appends at the next unused
//!   position: it stores the chunk byte and the slot, then sets the
//!   position's bit in the *live mask* with a release store. A reader
//!   loads the mask (acquire), copies the chunk words, and compares the
//!   copy against its chunk with one vector compare masked by the live
//!   bits. Removal clears the bit; the position is never used again, so a
//!   reader that found it before the removal still reads the value it
//!   found, never a later key's. When the positions run out the writer
//!   builds a new node (compacted, or of the next kind) and publishes it.
//! - **The 64-child node** maps a chunk through a 256-byte index to a
//!   slot, append-only in the same way: slot first, then the index byte
//!   (release).
//! - **The 256-child node** indexes slots by chunk. Child slots are null
//!   when absent; a reader loads the slot alone. Last-level nodes of
//!   embedded values cannot say "absent" in the slot (every word is a
//!   value), so a presence bitmap does, set after the slot (release) and
//!   cleared on removal. A removed chunk's slot is not reused while the
//!   node lives: re-inserting it rebuilds the node, so a reader that read
//!   the bit before a removal cannot read a value stored after it.
//!
//! Slots hold tagged pointers, as the plain engine's do: the low three
//! bits of a node's address carry its [`Kind`], and zero marks a value
//! [`Cell`](super::layout::Cell) (a lazy leaf, or a leaf layout's value).
//! Embedded values sit in last-level slots as provenance-free pointers
//! (`ptr::without_provenance_mut`), so one atomic pointer type serves
//! every slot and no pointer ever passes through an integer.

use core::alloc::Layout;
use core::marker::PhantomData;
use core::ptr::{self, NonNull};

use super::lock::NodeLock;
use super::reclaim::{Pin, Reclaim, Table};
use super::space::Space;
use super::sync::{AtomicPtr, AtomicU8, AtomicU32, AtomicU64, Ordering};
use crate::key::Key;
use crate::simd::{GROUP_BYTES, eq_mask, prefetch};

/// The pointer bits that carry a child's kind.
const TAG_MASK: usize = 0b111;

/// A node kind; the discriminant is the pointer tag (zero is a cell).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub(crate) enum Kind {
    /// Up to 4 children.
    N4 = 1,
    /// Up to 16 children.
    N16 = 2,
    /// Up to 32 children.
    N32 = 3,
    /// Up to 64 children, through a chunk index.
    N64 = 4,
    /// All 256 children, by chunk.
    N256 = 5,
}

impl Kind {
    /// How many children the kind holds.
    pub(crate) const fn capacity(self) -> usize {
        match self {
            Kind::N4 => 4,
            Kind::N16 => 16,
            Kind::N32 => 32,
            Kind::N64 => 64,
            Kind::N256 => 256,
        }
    }

    /// The smallest kind that holds `len` children.
    pub(crate) const fn for_len(len: usize) -> Kind {
        match len {
            0..=4 => Kind::N4,
            5..=16 => Kind::N16,
            17..=32 => Kind::N32,
            33..=64 => Kind::N64,
            _ => Kind::N256,
        }
    }

    /// The kind below, if any.
    pub(crate) const fn smaller(self) -> Option<Kind> {
        match self {
            Kind::N4 => None,
            Kind::N16 => Some(Kind::N4),
            Kind::N32 => Some(Kind::N16),
            Kind::N64 => Some(Kind::N32),
            Kind::N256 => Some(Kind::N64),
        }
    }

    /// The kind of a tagged child pointer; `None` for a cell.
    ///
    /// By tests of single tag bits rather than a match on the tag: LLVM
    /// makes the match a jump table, an indirect jump at every level whose
    /// target comes from the word just loaded (`benches/RESULTS.md`, "The
    /// concurrent lookup's kind dispatch"). A kind made here and matched
    /// again can still become one; the lookup calls [`find_tagged`]
    /// instead, which branches on the tag bits itself.
    #[inline(always)]
    pub(crate) fn of(word: *mut u8) -> Option<Kind> {
        let tag = word.addr() & TAG_MASK;
        debug_assert!(tag <= 5, "tag {tag} is no kind and no cell");
        Some(if tag & 4 != 0 {
            if tag & 1 != 0 { Kind::N256 } else { Kind::N64 }
        } else if tag & 2 != 0 {
            if tag & 1 != 0 { Kind::N32 } else { Kind::N16 }
        } else if tag & 1 != 0 {
            Kind::N4
        } else {
            return None;
        })
    }
}

/// The start of every node: its lock and its prefix word.
#[repr(C)]
pub(crate) struct Header<K> {
    /// The write lock and obsolete mark.
    pub(crate) lock: NodeLock,
    /// `key.prefix_word(shift)` of every key below: the bits above the
    /// node's chunk, and its shift in the low byte. Immutable.
    prefix: K,
}

impl<K: Key> Header<K> {
    fn new(prefix: K) -> Self {
        Self {
            lock: NodeLock::new(),
            prefix,
        }
    }

    /// The node's prefix word.
    #[inline(always)]
    pub(crate) fn prefix(&self) -> K {
        self.prefix
    }

    /// The shift of the chunk the node consumes.
    #[inline(always)]
    pub(crate) fn shift(&self) -> u32 {
        self.prefix.word_shift()
    }
}

/// A null slot word.
fn null() -> AtomicPtr<u8> {
    AtomicPtr::new(ptr::null_mut())
}

/// An append-only node of `N` children whose chunks fill `W` words.
#[repr(C)]
pub(crate) struct Small<K, const N: usize, const W: usize> {
    header: Header<K>,
    /// Bit `i`: position `i` holds a live child.
    live: AtomicU32,
    /// Positions used so far (writers only).
    used: AtomicU8,
    /// Byte `i` (little-endian across the words) is position `i`'s chunk.
    chunks: [AtomicU64; W],
    slots: [AtomicPtr<u8>; N],
}

impl<K: Key, const N: usize, const W: usize> Small<K, N, W> {
    fn new(prefix: K) -> Self {
        Self {
            header: Header::new(prefix),
            live: AtomicU32::new(0),
            used: AtomicU8::new(0),
            chunks: core::array::from_fn(|_| AtomicU64::new(0)),
            slots: core::array::from_fn(|_| null()),
        }
    }

    /// The live positions whose chunk is `chunk`: at most one bit.
    #[inline(always)]
    fn matches(&self, chunk: u8) -> u32 {
        let live = self.live.load(Ordering::Acquire);
        let mut copy = [0u8; GROUP_BYTES];
        for (word, bytes) in self.chunks.iter().zip(copy.chunks_exact_mut(8)) {
            bytes.copy_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
        }
        // Masked to the node's positions as well, which tells the compiler
        // that a node of 4 or 16 needs only the vector compare of the low
        // half (live bits are below `N` anyway): RT-2's lookups took 152
        // instructions before, 145 after.
        eq_mask(&copy, chunk) & live & Self::POSITIONS
    }

    /// A bit for each of the node's positions.
    const POSITIONS: u32 = u32::MAX >> (32 - N);

    /// Asks for every line of the node.
    #[inline(always)]
    fn prefetch_all(&self) {
        let start = ptr::from_ref(self).cast::<u8>();
        for line in (0..size_of::<Self>()).step_by(64) {
            prefetch(start.wrapping_add(line));
        }
    }

    #[inline(always)]
    fn find(&self, chunk: u8, pin: &Pin<'_, impl Table>) -> Option<*mut u8> {
        // The slots of a node of 16 or 32 lie on lines of their own: ask
        // for them while the chunks are compared, so that the two misses
        // of a lookup in a large tree overlap (as the plain engine's
        // last-level node16 does).
        if N >= 16 {
            let slots = self.slots.as_ptr().cast::<u8>();
            for line in (0..N * 8).step_by(64) {
                prefetch(slots.wrapping_add(line));
            }
        }
        let hits = self.matches(chunk);
        // The mask keeps the index below `N` for the compiler, which
        // otherwise tests it against the bounds on every lookup; it
        // changes nothing, since live positions are below `N`, a power of
        // two.
        const { assert!(N.is_power_of_two()) };
        (hits != 0).then(|| pin.load(&self.slots[hits.trailing_zeros() as usize & (N - 1)]))
    }

    fn slot(&self, chunk: u8) -> Option<&AtomicPtr<u8>> {
        let hits = self.matches(chunk);
        (hits != 0).then(|| &self.slots[hits.trailing_zeros() as usize])
    }

    fn chunk_at(&self, at: usize) -> u8 {
        (self.chunks[at / 8].load(Ordering::Relaxed) >> (at % 8 * 8)) as u8
    }

    fn try_append(&self, chunk: u8, word: *mut u8) -> bool {
        let at = usize::from(self.used.load(Ordering::Relaxed));
        if at == N {
            return false;
        }
        let cell = &self.chunks[at / 8];
        let shift = at % 8 * 8;
        let bytes = cell.load(Ordering::Relaxed) & !(0xFF << shift);
        cell.store(bytes | (u64::from(chunk) << shift), Ordering::Relaxed);
        self.slots[at].store(word, Ordering::Relaxed);
        self.used.store(at as u8 + 1, Ordering::Relaxed);
        let live = self.live.load(Ordering::Relaxed);
        // Release: a reader that sees the bit sees the chunk and the slot,
        // and through the slot what it points to.
        self.live.store(live | 1 << at, Ordering::Release);
        true
    }

    fn remove(&self, chunk: u8) {
        let hits = self.matches(chunk);
        debug_assert_eq!(hits.count_ones(), 1);
        let live = self.live.load(Ordering::Relaxed);
        self.live.store(live & !hits, Ordering::Release);
    }

    /// The live children, sorted by chunk.
    fn entries(&self, pin: &Pin<'_, impl Table>, out: &mut Entries) {
        out.clear();
        let mut live = self.live.load(Ordering::Acquire);
        while live != 0 {
            let at = live.trailing_zeros() as usize;
            live &= live - 1;
            out.push(self.chunk_at(at), pin.load(&self.slots[at]));
        }
        out.sort();
    }
}

/// The node of up to 64 children, found through a chunk index.
#[repr(C)]
pub(crate) struct Indexed<K> {
    header: Header<K>,
    /// Slots used so far (writers only).
    used: AtomicU8,
    /// Live children (writers only).
    count: AtomicU8,
    /// One plus the slot of each chunk's child, or zero.
    index: [AtomicU8; 256],
    slots: [AtomicPtr<u8>; 64],
}

impl<K: Key> Indexed<K> {
    fn new(prefix: K) -> Self {
        Self {
            header: Header::new(prefix),
            used: AtomicU8::new(0),
            count: AtomicU8::new(0),
            index: core::array::from_fn(|_| AtomicU8::new(0)),
            slots: core::array::from_fn(|_| null()),
        }
    }

    #[inline(always)]
    fn position(&self, chunk: u8) -> Option<usize> {
        let at = self.index[usize::from(chunk)].load(Ordering::Acquire);
        (at != 0).then(|| usize::from(at) - 1)
    }

    #[inline(always)]
    fn find(&self, chunk: u8, pin: &Pin<'_, impl Table>) -> Option<*mut u8> {
        // As in `Small::find`: the mask spares a bounds test, and index
        // bytes name slots below 64.
        self.position(chunk)
            .map(|at| pin.load(&self.slots[at & 63]))
    }

    fn slot(&self, chunk: u8) -> Option<&AtomicPtr<u8>> {
        self.position(chunk).map(|at| &self.slots[at])
    }

    fn try_append(&self, chunk: u8, word: *mut u8) -> bool {
        let at = self.used.load(Ordering::Relaxed);
        if usize::from(at) == self.slots.len() {
            return false;
        }
        self.slots[usize::from(at)].store(word, Ordering::Relaxed);
        self.used.store(at + 1, Ordering::Relaxed);
        self.count
            .store(self.count.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        // Release: the slot and its target are visible before the index.
        self.index[usize::from(chunk)].store(at + 1, Ordering::Release);
        true
    }

    fn remove(&self, chunk: u8) {
        self.index[usize::from(chunk)].store(0, Ordering::Release);
        self.count
            .store(self.count.load(Ordering::Relaxed) - 1, Ordering::Relaxed);
    }

    fn entries(&self, pin: &Pin<'_, impl Table>, out: &mut Entries) {
        out.clear();
        for chunk in 0..=255u8 {
            if let Some(at) = self.position(chunk) {
                out.push(chunk, pin.load(&self.slots[at]));
            }
        }
    }
}

/// The node of 256 children, by chunk.
#[repr(C)]
pub(crate) struct Full<K> {
    header: Header<K>,
    /// Live children (writers only).
    count: AtomicU32,
    /// Bit `c`: chunk `c` is present.
    present: [AtomicU64; 4],
    /// Bit `c`: chunk `c`'s embedded value was removed, so its slot may
    /// not take another (writers only; see the module docs).
    removed: [AtomicU64; 4],
    slots: [AtomicPtr<u8>; 256],
}

impl<K: Key> Full<K> {
    fn new(prefix: K) -> Self {
        Self {
            header: Header::new(prefix),
            count: AtomicU32::new(0),
            present: core::array::from_fn(|_| AtomicU64::new(0)),
            removed: core::array::from_fn(|_| AtomicU64::new(0)),
            slots: core::array::from_fn(|_| null()),
        }
    }

    #[inline(always)]
    fn is_present(&self, chunk: u8) -> bool {
        let word = self.present[usize::from(chunk / 64)].load(Ordering::Acquire);
        word & (1 << (chunk % 64)) != 0
    }

    #[inline(always)]
    fn find(&self, chunk: u8, pin: &Pin<'_, impl Table>, values: bool) -> Option<*mut u8> {
        if values {
            self.is_present(chunk)
                .then(|| pin.load(&self.slots[usize::from(chunk)]))
        } else {
            let word = pin.load(&self.slots[usize::from(chunk)]);
            (!word.is_null()).then_some(word)
        }
    }

    fn slot(&self, chunk: u8) -> Option<&AtomicPtr<u8>> {
        self.is_present(chunk)
            .then(|| &self.slots[usize::from(chunk)])
    }

    fn try_append(&self, chunk: u8, word: *mut u8, values: bool) -> bool {
        let (at, bit) = (usize::from(chunk / 64), 1u64 << (chunk % 64));
        if values && self.removed[at].load(Ordering::Relaxed) & bit != 0 {
            return false;
        }
        self.slots[usize::from(chunk)].store(word, Ordering::Release);
        let present = self.present[at].load(Ordering::Relaxed);
        self.present[at].store(present | bit, Ordering::Release);
        self.count
            .store(self.count.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        true
    }

    fn remove(&self, chunk: u8, values: bool) {
        let (at, bit) = (usize::from(chunk / 64), 1u64 << (chunk % 64));
        let present = self.present[at].load(Ordering::Relaxed);
        self.present[at].store(present & !bit, Ordering::Release);
        if values {
            let removed = self.removed[at].load(Ordering::Relaxed);
            self.removed[at].store(removed | bit, Ordering::Relaxed);
        } else {
            self.slots[usize::from(chunk)].store(ptr::null_mut(), Ordering::Release);
        }
        self.count
            .store(self.count.load(Ordering::Relaxed) - 1, Ordering::Relaxed);
    }

    fn entries(&self, pin: &Pin<'_, impl Table>, out: &mut Entries, values: bool) {
        out.clear();
        for (at, present) in self.present.iter().enumerate() {
            let mut bits = present.load(Ordering::Acquire);
            while bits != 0 {
                let chunk = (at * 64) as u8 + bits.trailing_zeros() as u8;
                bits &= bits - 1;
                let word = pin.load(&self.slots[usize::from(chunk)]);
                // A child removed after its bit was read is gone.
                if values || !word.is_null() {
                    out.push(chunk, word);
                }
            }
        }
    }
}

/// A node's children as `(chunk, slot word)`, sorted by chunk: a reader's
/// snapshot, or what a writer copies into a rebuilt node.
pub(crate) struct Entries {
    len: usize,
    chunks: [u8; 256],
    words: [*mut u8; 256],
}

impl Entries {
    /// No entries.
    pub(crate) fn new() -> Self {
        Self {
            len: 0,
            chunks: [0; 256],
            words: [ptr::null_mut(); 256],
        }
    }

    fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends an entry.
    pub(crate) fn push(&mut self, chunk: u8, word: *mut u8) {
        self.chunks[self.len] = chunk;
        self.words[self.len] = word;
        self.len += 1;
    }

    fn sort(&mut self) {
        // Insertion sort: a small node has at most 32 entries.
        for i in 1..self.len {
            let (chunk, word) = (self.chunks[i], self.words[i]);
            let mut j = i;
            while j > 0 && self.chunks[j - 1] > chunk {
                self.chunks[j] = self.chunks[j - 1];
                self.words[j] = self.words[j - 1];
                j -= 1;
            }
            self.chunks[j] = chunk;
            self.words[j] = word;
        }
    }

    /// How many entries there are.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The entries in chunk order.
    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = (u8, *mut u8)> + '_ {
        self.chunks[..self.len]
            .iter()
            .copied()
            .zip(self.words[..self.len].iter().copied())
    }
}

/// A node, seen through a tagged pointer that a pin protects.
#[derive(Clone, Copy)]
pub(crate) enum NodeRef<'a, K> {
    N4(&'a Small<K, 4, 1>),
    N16(&'a Small<K, 16, 2>),
    N32(&'a Small<K, 32, 4>),
    N64(&'a Indexed<K>),
    N256(&'a Full<K>),
}

/// The header of the node a tagged word names: every kind starts with it
/// (`#[repr(C)]`), so no kind is needed to read it.
///
/// # Safety
///
/// As for [`NodeRef::new`]: `word` is a resolved, tagged pointer to a node
/// that stays allocated for `'a`.
#[inline(always)]
pub(crate) unsafe fn header_of<'a, K>(word: *mut u8) -> &'a Header<K> {
    // SAFETY: the caller's contract; the header is at offset 0 of every
    // node kind.
    unsafe { &*word.map_addr(|a| a & !TAG_MASK).cast::<Header<K>>() }
}

/// [`NodeRef::find`] on the node a tagged word names, its kind read from
/// the tag bits. Each branch calls its own kind's search, with no kind
/// value between the test and the call: given a `Kind`, LLVM rebuilt the
/// tests into a kind index and the match on it into a jump table, an
/// indirect jump at every level whose target waits on the word just
/// loaded.
///
/// # Safety
///
/// As for [`NodeRef::new`]: `word` is a resolved pointer, tagged with a
/// node kind, to a node that stays allocated while `pin` lives.
#[inline(always)]
pub(crate) unsafe fn find_tagged<K: Key>(
    word: *mut u8,
    chunk: u8,
    pin: &Pin<'_, impl Table>,
    values: bool,
) -> Option<*mut u8> {
    let tag = word.addr() & TAG_MASK;
    debug_assert!((1..=5).contains(&tag), "tag {tag} is no node kind");
    // Within each branch the tag is a known constant, so the node is the
    // word less its kind: a subtraction the field loads fold into their
    // displacements, where masking the tag off took two instructions at
    // every level.
    let node = |kind: Kind| word.wrapping_byte_sub(kind as usize);
    // SAFETY: the caller's contract; the tag names the node's kind, as
    // `Kind::of` reads it, so the word less the kind is the node.
    unsafe {
        if tag & 4 != 0 {
            if tag & 1 != 0 {
                (*node(Kind::N256).cast::<Full<K>>()).find(chunk, pin, values)
            } else {
                (*node(Kind::N64).cast::<Indexed<K>>()).find(chunk, pin)
            }
        } else if tag & 2 != 0 {
            if tag & 1 != 0 {
                (*node(Kind::N32).cast::<Small<K, 32, 4>>()).find(chunk, pin)
            } else {
                (*node(Kind::N16).cast::<Small<K, 16, 2>>()).find(chunk, pin)
            }
        } else {
            (*node(Kind::N4).cast::<Small<K, 4, 1>>()).find(chunk, pin)
        }
    }
}

/// Runs `$body` with `$n` bound to the node of whichever kind `$node` is.
macro_rules! each_kind {
    ($node:expr, $n:ident => $body:expr) => {
        match $node {
            NodeRef::N4($n) => $body,
            NodeRef::N16($n) => $body,
            NodeRef::N32($n) => $body,
            NodeRef::N64($n) => $body,
            NodeRef::N256($n) => $body,
        }
    };
}

impl<'a, K: Key> NodeRef<'a, K> {
    /// The node a tagged pointer of kind `kind` points to.
    ///
    /// # Safety
    ///
    /// `word` is a tagged pointer to a live or retired (not yet freed)
    /// node of `kind`, protected for `'a` by a pin, or owned.
    #[inline(always)]
    pub(crate) unsafe fn new(word: *mut u8, kind: Kind) -> Self {
        let addr = word.map_addr(|a| a & !TAG_MASK);
        // SAFETY: the caller's contract: the untagged address is a node of
        // `kind` that stays allocated for `'a`.
        unsafe {
            match kind {
                Kind::N4 => NodeRef::N4(&*addr.cast()),
                Kind::N16 => NodeRef::N16(&*addr.cast()),
                Kind::N32 => NodeRef::N32(&*addr.cast()),
                Kind::N64 => NodeRef::N64(&*addr.cast()),
                Kind::N256 => NodeRef::N256(&*addr.cast()),
            }
        }
    }

    /// The node's kind.
    pub(crate) fn kind(self) -> Kind {
        match self {
            NodeRef::N4(_) => Kind::N4,
            NodeRef::N16(_) => Kind::N16,
            NodeRef::N32(_) => Kind::N32,
            NodeRef::N64(_) => Kind::N64,
            NodeRef::N256(_) => Kind::N256,
        }
    }

    /// The node's address, to recognise it by.
    pub(crate) fn addr(self) -> usize {
        ptr::from_ref(self.header()).addr()
    }

    /// The header.
    #[inline(always)]
    pub(crate) fn header(self) -> &'a Header<K> {
        each_kind!(self, n => &n.header)
    }

    /// The slot word of `chunk`'s child, if present. `values`: the node's
    /// slots hold embedded values, whose presence the node records apart.
    #[inline(always)]
    pub(crate) fn find(
        self,
        chunk: u8,
        pin: &Pin<'_, impl Table>,
        values: bool,
    ) -> Option<*mut u8> {
        match self {
            NodeRef::N4(n) => n.find(chunk, pin),
            NodeRef::N16(n) => n.find(chunk, pin),
            NodeRef::N32(n) => n.find(chunk, pin),
            NodeRef::N64(n) => n.find(chunk, pin),
            NodeRef::N256(n) => n.find(chunk, pin, values),
        }
    }

    /// Asks for the lines a [`find`](Self::find) of `chunk` will read,
    /// for a batch that finds it some lookups later: the chunks and the
    /// slots of a small node, the index byte of an indexed one, the
    /// presence word and the slot of a full one. Reads nothing.
    #[inline(always)]
    pub(crate) fn prefetch_find(self, chunk: u8) {
        let chunk = usize::from(chunk);
        match self {
            NodeRef::N4(n) => prefetch(ptr::from_ref(n).cast()),
            NodeRef::N16(n) => n.prefetch_all(),
            NodeRef::N32(n) => n.prefetch_all(),
            NodeRef::N64(n) => {
                prefetch(ptr::from_ref(n).cast());
                prefetch(ptr::from_ref(&n.index[chunk]).cast());
            }
            NodeRef::N256(n) => {
                prefetch(ptr::from_ref(&n.present[chunk / 64]).cast());
                prefetch(ptr::from_ref(&n.slots[chunk]).cast());
            }
        }
    }

    /// The slot of `chunk`'s child, to store a replacement into. Writers
    /// only, under the node's lock.
    pub(crate) fn slot(self, chunk: u8) -> Option<&'a AtomicPtr<u8>> {
        each_kind!(self, n => n.slot(chunk))
    }

    /// Adds `chunk`'s child in place, if the node has an unused position
    /// for it. Writers only, under the node's lock; `chunk` is absent.
    pub(crate) fn try_append(self, chunk: u8, word: *mut u8, values: bool) -> bool {
        match self {
            NodeRef::N4(n) => n.try_append(chunk, word),
            NodeRef::N16(n) => n.try_append(chunk, word),
            NodeRef::N32(n) => n.try_append(chunk, word),
            NodeRef::N64(n) => n.try_append(chunk, word),
            NodeRef::N256(n) => n.try_append(chunk, word, values),
        }
    }

    /// Whether [`try_append`](Self::try_append) would find a position for
    /// `chunk`. Writers only, under the node's lock.
    pub(crate) fn has_room(self, chunk: u8, values: bool) -> bool {
        match self {
            NodeRef::N4(n) => usize::from(n.used.load(Ordering::Relaxed)) < 4,
            NodeRef::N16(n) => usize::from(n.used.load(Ordering::Relaxed)) < 16,
            NodeRef::N32(n) => usize::from(n.used.load(Ordering::Relaxed)) < 32,
            NodeRef::N64(n) => usize::from(n.used.load(Ordering::Relaxed)) < 64,
            NodeRef::N256(n) => {
                let bit = 1u64 << (chunk % 64);
                !values || n.removed[usize::from(chunk / 64)].load(Ordering::Relaxed) & bit == 0
            }
        }
    }

    /// How many children the node has. Writers only, under the lock.
    pub(crate) fn len(self) -> usize {
        match self {
            NodeRef::N4(n) => n.live.load(Ordering::Relaxed).count_ones() as usize,
            NodeRef::N16(n) => n.live.load(Ordering::Relaxed).count_ones() as usize,
            NodeRef::N32(n) => n.live.load(Ordering::Relaxed).count_ones() as usize,
            NodeRef::N64(n) => usize::from(n.count.load(Ordering::Relaxed)),
            NodeRef::N256(n) => n.count.load(Ordering::Relaxed) as usize,
        }
    }

    /// Removes `chunk`'s child. Writers only, under the node's lock;
    /// `chunk` is present.
    pub(crate) fn remove(self, chunk: u8, values: bool) {
        match self {
            NodeRef::N4(n) => n.remove(chunk),
            NodeRef::N16(n) => n.remove(chunk),
            NodeRef::N32(n) => n.remove(chunk),
            NodeRef::N64(n) => n.remove(chunk),
            NodeRef::N256(n) => n.remove(chunk, values),
        }
    }

    /// The node's children in chunk order.
    pub(crate) fn entries(self, pin: &Pin<'_, impl Table>, out: &mut Entries, values: bool) {
        match self {
            NodeRef::N4(n) => n.entries(pin, out),
            NodeRef::N16(n) => n.entries(pin, out),
            NodeRef::N32(n) => n.entries(pin, out),
            NodeRef::N64(n) => n.entries(pin, out),
            NodeRef::N256(n) => n.entries(pin, out, values),
        }
    }
}

/// Allocates a node of `kind` in `space` holding `entries`, and returns
/// its tagged word, unpublished. `values`: as for [`NodeRef::find`].
pub(crate) fn build<K: Key, S: Space>(
    space: &S,
    kind: Kind,
    prefix: K,
    entries: &Entries,
    values: bool,
) -> Result<*mut u8, S::Error> {
    debug_assert!(entries.len() <= kind.capacity());
    fn place<T, S: Space>(space: &S, node: T, kind: Kind) -> Result<*mut u8, S::Error> {
        let addr = space.alloc(Layout::new::<T>())?.cast::<T>();
        // SAFETY: fresh memory of `T`'s layout, owned here.
        unsafe { addr.write(node) };
        Ok(addr.as_ptr().cast::<u8>().map_addr(|a| a | kind as usize))
    }
    let tagged = match kind {
        Kind::N4 => place(space, Small::<K, 4, 1>::new(prefix), kind),
        Kind::N16 => place(space, Small::<K, 16, 2>::new(prefix), kind),
        Kind::N32 => place(space, Small::<K, 32, 4>::new(prefix), kind),
        Kind::N64 => place(space, Indexed::<K>::new(prefix), kind),
        Kind::N256 => place(space, Full::<K>::new(prefix), kind),
    }?;
    // SAFETY: just allocated, owned here until published.
    let node = unsafe { NodeRef::<K>::new(tagged, kind) };
    for (chunk, child) in entries.iter() {
        let appended = node.try_append(chunk, child, values);
        debug_assert!(appended);
    }
    Ok(space.word(tagged))
}

/// The layouts of the five node kinds, smallest first.
#[cfg(all(feature = "shm", target_os = "linux"))]
pub(crate) fn layouts<K>() -> [Layout; 5] {
    [Kind::N4, Kind::N16, Kind::N32, Kind::N64, Kind::N256].map(layout::<K>)
}

/// The memory layout of a node of `kind`.
const fn layout<K>(kind: Kind) -> Layout {
    match kind {
        Kind::N4 => Layout::new::<Small<K, 4, 1>>(),
        Kind::N16 => Layout::new::<Small<K, 16, 2>>(),
        Kind::N32 => Layout::new::<Small<K, 32, 4>>(),
        Kind::N64 => Layout::new::<Indexed<K>>(),
        Kind::N256 => Layout::new::<Full<K>>(),
    }
}

/// Frees a node (not its children). Nodes hold only atomics and plain
/// words, so there is nothing to drop.
///
/// # Safety
///
/// `word` is a tagged word [`build`] returned on `space`, unreachable by
/// every thread, freed once.
pub(crate) unsafe fn free<K: Key, S: Space>(space: &S, word: *mut u8) {
    let kind = Kind::of(word).expect("a node word carries its kind");
    let addr = space.resolve(word).map_addr(|a| a & !TAG_MASK);
    // SAFETY: the caller's contract: `build` placed a node of this kind,
    // with this layout, at this address.
    unsafe { space.free(NonNull::new_unchecked(addr), layout::<K>(kind)) };
}

/// Reclaims retired nodes of key type `K` in a space of type `S`.
pub(crate) struct NodeReclaim<K, S>(PhantomData<(K, S)>);

impl<K: Key, S: Space> Reclaim for NodeReclaim<K, S> {
    unsafe fn reclaim(space: *const (), word: *mut u8) {
        // SAFETY: `Reclaim::reclaim`'s contract: `space` is the `S` of
        // the tree that retired this node, and the node is unreachable.
        unsafe { free::<K, S>(&*space.cast::<S>(), word) }
    }
}
