//! The per-block entry: which offsets of one block are dead.
//!
//! An entry is a [`VarlenValue`]: an 8-byte header, optionally followed by
//! bitmap words. It takes one of three forms:
//!
//! | form | header | words | when |
//! |---|---|---|---|
//! | *inline* | up to 3 offsets | none | at most 3 dead offsets (PostgreSQL's embedded entry) |
//! | *run* | first and last offset | none | one contiguous run `a..=b` of any length |
//! | *bitmap* | word count | `max_offset / 64 + 1` | everything else |
//!
//! The first two are 8 bytes, so the tree embeds them in its slot: a block
//! with up to three dead tuples, or with a contiguous run of them, costs no
//! allocation at all. The run form goes beyond PostgreSQL: after a bulk
//! `DELETE`, every page's dead tuples are one run, and the whole store is
//! little more than the tree's nodes.
//!
//! The header's first byte is a flag byte whose lowest bit is reserved for
//! the tree's embedded-value tag ([`radix_core::value::TAG_BIT`]).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::mem::MaybeUninit;
use core::ptr::NonNull;

use radix_core::value::VarlenValue;

use crate::tid::MAX_OFFSET;

/// Flag: the header holds a run `offsets[0]..=offsets[1]`.
const RUN: u8 = 1 << 1;
/// Offsets an inline header holds.
const INLINE_OFFSETS: usize = 3;
/// Bitmap words needed for the largest offset.
pub(crate) const MAX_WORDS: usize = MAX_OFFSET as usize / 64 + 1;

#[repr(C)]
#[derive(Clone, Copy)]
struct Header {
    /// Bit 0: the tree's tag (ignored here). Bit 1: [`RUN`].
    flags: u8,
    /// Bitmap words after the header; 0 for the inline and run forms.
    nwords: u8,
    /// Inline offsets (0 = unused), or a run's first and last offset.
    offsets: [u16; INLINE_OFFSETS],
}

const _: () = assert!(size_of::<Header>() == 8);

impl Header {
    /// The header as the word it occupies, its bytes in memory order. The
    /// encoder stores this one word: five narrow stores of the fields,
    /// which the tree then reads back as one word to copy into its slot,
    /// cannot be forwarded to that read, which waits for them to retire.
    /// Four more instructions, and TID store loads take 0.89x (two
    /// offsets a block) to 0.96x the time.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn to_word(self) -> u64 {
        let [a, b] = self.offsets[0].to_ne_bytes();
        let [c, d] = self.offsets[1].to_ne_bytes();
        let [e, f] = self.offsets[2].to_ne_bytes();
        u64::from_ne_bytes([self.flags, self.nwords, a, b, c, d, e, f])
    }
}

/// The dead offsets of one block.
#[repr(C)]
pub(crate) struct BlockEntry {
    header: Header,
    words: [u64],
}

static_assertions::const_assert_eq!(core::mem::size_of::<Header>(), 8);

// SAFETY: an entry is its 8-byte header (no padding) followed by `nwords`
// initialised words, owns nothing, reads `nwords` from its own header, and
// never looks at bit 0 of the flag byte.
unsafe impl VarlenValue for BlockEntry {
    const ALIGN: usize = 8;

    #[inline]
    fn byte_len(&self) -> usize {
        8 + 8 * self.words.len()
    }

    #[inline]
    unsafe fn from_bytes<'a>(bytes: NonNull<u8>) -> &'a Self {
        // SAFETY: the caller promises these are an entry's bytes, aligned
        // to 8; byte 1 is the word count.
        unsafe {
            let nwords = bytes.add(1).read() as usize;
            let tail =
                core::ptr::slice_from_raw_parts(bytes.as_ptr().cast_const().cast::<u64>(), nwords);
            &*(tail as *const BlockEntry)
        }
    }
}

/// The inline form of one to three offsets, zero-padded. Two reads that
/// are in bounds for every length and two selects: a `copy_from_slice` of
/// a length known only at run time is a call to `memcpy`, which cost a
/// TID store load of two offsets per block a tenth of its instructions.
#[cfg_attr(not(debug_assertions), inline(always))]
fn inline_offsets(offsets: &[u16]) -> [u16; INLINE_OFFSETS] {
    const _: () = assert!(INLINE_OFFSETS == 3);
    let n = offsets.len();
    debug_assert!((1..=INLINE_OFFSETS).contains(&n));
    let second = offsets[1.min(n - 1)];
    let last = offsets[n - 1];
    [
        offsets[0],
        if n >= 2 { second } else { 0 },
        if n == 3 { last } else { 0 },
    ]
}

impl BlockEntry {
    /// Whether `offset` is in the entry.
    #[inline]
    pub(crate) fn contains(&self, offset: u16) -> bool {
        let h = &self.header;
        if h.flags & RUN != 0 {
            h.offsets[0] <= offset && offset <= h.offsets[1]
        } else if h.nwords == 0 {
            offset != 0 && h.offsets.contains(&offset)
        } else {
            let word = offset as usize / 64;
            word < self.words.len() && (self.words[word] >> (offset % 64)) & 1 != 0
        }
    }

    /// Number of offsets in the entry.
    pub(crate) fn len(&self) -> usize {
        let h = &self.header;
        if h.flags & RUN != 0 {
            (h.offsets[1] - h.offsets[0]) as usize + 1
        } else if h.nwords == 0 {
            h.offsets.iter().filter(|&&o| o != 0).count()
        } else {
            self.words.iter().map(|w| w.count_ones() as usize).sum()
        }
    }

    /// The offsets in ascending order.
    pub(crate) fn offsets(&self) -> Offsets<'_> {
        let h = &self.header;
        let state = if h.flags & RUN != 0 {
            State::Run(h.offsets[0]..=h.offsets[1])
        } else if h.nwords == 0 {
            State::Inline(h.offsets, 0)
        } else {
            State::Bitmap {
                words: &self.words,
                word: 0,
                bits: self.words[0],
            }
        };
        Offsets { state }
    }

    /// Checks that the entry is in the form [`EntryBuf::encode`] would give
    /// its offsets: the smallest form, with no stray bits.
    pub(crate) fn check(&self) -> Result<(), String> {
        let h = &self.header;
        let offsets: Vec<u16> = self.offsets().collect();
        if offsets.is_empty() {
            return Err(format!("{} entry with no offsets", self.form()));
        }
        if offsets.windows(2).any(|w| w[0] >= w[1]) {
            return Err(format!("offsets not strictly ascending: {offsets:?}"));
        }
        let (first, last) = (offsets[0], offsets[offsets.len() - 1]);
        if first == 0 || last > MAX_OFFSET {
            return Err(format!("offset outside 1..={MAX_OFFSET}: {offsets:?}"));
        }
        if h.flags & !(RUN | radix_core::value::TAG_BIT) != 0 {
            return Err(format!("unknown flags {:#04x}", h.flags));
        }
        let contiguous = (last - first) as usize + 1 == offsets.len();
        let expected = if offsets.len() <= INLINE_OFFSETS {
            "inline"
        } else if contiguous {
            "run"
        } else {
            "bitmap"
        };
        if self.form() != expected {
            return Err(format!("{} entry for {offsets:?}", self.form()));
        }
        match expected {
            "inline" if h.offsets[offsets.len()..].iter().any(|&o| o != 0) => {
                Err(format!("inline entry with stray slots {:?}", h.offsets))
            }
            "bitmap" if h.nwords as usize != last as usize / 64 + 1 => Err(format!(
                "bitmap of {} words for largest offset {last}",
                h.nwords
            )),
            "bitmap" if self.words[0] & 1 != 0 => Err("bitmap has offset 0 set".into()),
            "run" | "inline" if h.nwords != 0 => {
                Err(format!("{expected} entry with {} words", h.nwords))
            }
            _ => Ok(()),
        }
    }

    /// The offsets as one run `first..=last`, if they form one (the run
    /// form, or an inline entry of consecutive offsets).
    #[inline]
    pub(crate) fn as_run(&self) -> Option<(u16, u16)> {
        let h = &self.header;
        if h.flags & RUN != 0 {
            return Some((h.offsets[0], h.offsets[1]));
        }
        if h.nwords != 0 {
            return None;
        }
        let len = h.offsets.iter().take_while(|&&o| o != 0).count();
        let (first, last) = (h.offsets[0], h.offsets[len - 1]);
        ((last - first) as usize + 1 == len).then_some((first, last))
    }

    /// Copies the offsets, ascending, into `buf` (as many as fit) and
    /// returns how many the entry has: a heap pass's extraction, form by
    /// form rather than offset by offset. A run is a counting fill the
    /// compiler vectorises; a bitmap is a word at a time, a bit's position
    /// per offset.
    #[inline]
    pub(crate) fn copy_into(&self, buf: &mut [u16]) -> usize {
        let h = &self.header;
        if h.flags & RUN != 0 {
            let (first, last) = (h.offsets[0], h.offsets[1]);
            let n = (last - first) as usize + 1;
            let fits = n.min(buf.len());
            for (i, slot) in buf[..fits].iter_mut().enumerate() {
                *slot = first + i as u16;
            }
            n
        } else if h.nwords == 0 {
            let mut n = 0;
            for &offset in h.offsets.iter().take_while(|&&o| o != 0) {
                if let Some(slot) = buf.get_mut(n) {
                    *slot = offset;
                }
                n += 1;
            }
            n
        } else {
            let mut n = 0;
            for (i, &word) in self.words.iter().enumerate() {
                let base = (i * 64) as u16;
                let mut bits = word;
                while bits != 0 {
                    if let Some(slot) = buf.get_mut(n) {
                        *slot = base + bits.trailing_zeros() as u16;
                    }
                    bits &= bits - 1;
                    n += 1;
                }
            }
            n
        }
    }

    /// Whether `other` holds the same offsets: `==`, in one compare of
    /// the header words (and the bitmap words if both have them), which a
    /// heap pass pays for each block where extracting costs a write per
    /// offset.
    #[inline]
    pub(crate) fn same_offsets(&self, other: &Self) -> bool {
        // The flag byte comes first in memory, as in `to_word`.
        const NOT_TAG: u64 = u64::from_ne_bytes([
            !radix_core::value::TAG_BIT,
            0xFF,
            0xFF,
            0xFF,
            0xFF,
            0xFF,
            0xFF,
            0xFF,
        ]);
        let word = |e: &Self| e.header.to_word() & NOT_TAG;
        word(self) == word(other) && (self.header.nwords == 0 || self.words == other.words)
    }

    /// ORs the entry's offsets into `words`, as bits; returns how many
    /// words its largest offset needs.
    pub(crate) fn or_into(&self, words: &mut [u64; MAX_WORDS]) -> usize {
        let h = &self.header;
        if h.flags & RUN != 0 {
            set_range(words, h.offsets[0], h.offsets[1]);
            h.offsets[1] as usize / 64 + 1
        } else if h.nwords == 0 {
            let mut used = 0;
            for &o in h.offsets.iter().take_while(|&&o| o != 0) {
                words[o as usize / 64] |= 1 << (o % 64);
                used = o as usize / 64 + 1;
            }
            used
        } else {
            for (w, &e) in words.iter_mut().zip(&self.words) {
                *w |= e;
            }
            self.words.len()
        }
    }

    /// The form's name, for `Debug` output and statistics.
    pub(crate) fn form(&self) -> &'static str {
        if self.header.flags & RUN != 0 {
            "run"
        } else if self.header.nwords == 0 {
            "inline"
        } else {
            "bitmap"
        }
    }
}

/// Two entries are equal when they hold the same offsets: entries are in
/// their smallest form ([`BlockEntry::check`]), so that is the same header
/// (the tree's tag bit aside) and the same words. The tree with ranges
/// stores a run of blocks with equal entries as one range value.
impl PartialEq for BlockEntry {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (&self.header, &other.header);
        (a.flags & !radix_core::value::TAG_BIT) == (b.flags & !radix_core::value::TAG_BIT)
            && a.nwords == b.nwords
            && a.offsets == b.offsets
            && self.words == other.words
    }
}

impl Eq for BlockEntry {}

/// An aligned scratch buffer in which an entry is encoded before the tree
/// copies it. It starts uninitialised: `encode` writes the header and the
/// words the entry uses, and nothing reads further (zeroing all 272 bytes
/// on every call cost the TID store's load more than encoding did).
#[repr(C, align(8))]
pub(crate) struct EntryBuf {
    words: [MaybeUninit<u64>; 1 + MAX_WORDS],
}

impl EntryBuf {
    pub(crate) const fn new() -> Self {
        Self {
            words: [MaybeUninit::uninit(); 1 + MAX_WORDS],
        }
    }

    /// Encodes the run `first..=last` (`1 <= first <= last <= MAX_OFFSET`)
    /// in its smallest form: inline up to three offsets, otherwise a run.
    pub(crate) fn encode_run(&mut self, first: u16, last: u16) -> &BlockEntry {
        debug_assert!(1 <= first && first <= last && last <= MAX_OFFSET);
        if last - first < INLINE_OFFSETS as u16 {
            let mut offsets = [0; INLINE_OFFSETS];
            let len = (last - first) as usize + 1;
            for (i, slot) in offsets[..len].iter_mut().enumerate() {
                *slot = first + i as u16;
            }
            return self.encode(&offsets[..len]);
        }
        self.write(Header {
            flags: RUN,
            nwords: 0,
            offsets: [first, last, 0],
        })
    }

    /// Encodes the offsets whose bits are set in `words` in their smallest
    /// form, or `None` when no bit is set. Bit 0 must be clear.
    pub(crate) fn encode_words(&mut self, words: &[u64; MAX_WORDS]) -> Option<&BlockEntry> {
        debug_assert!(words[0] & 1 == 0);
        let first_word = words.iter().position(|&w| w != 0)?;
        let last_word = words.iter().rposition(|&w| w != 0)?;
        let first = (first_word * 64) as u16 + words[first_word].trailing_zeros() as u16;
        let last = (last_word * 64 + 63) as u16 - words[last_word].leading_zeros() as u16;
        let count: u32 = words[first_word..=last_word]
            .iter()
            .map(|w| w.count_ones())
            .sum();
        if (last - first) as u32 + 1 == count {
            return Some(self.encode_run(first, last));
        }
        if count as usize <= INLINE_OFFSETS {
            let mut offsets = [0; INLINE_OFFSETS];
            let mut len = 0;
            for (i, &w) in words[first_word..=last_word].iter().enumerate() {
                let mut bits = w;
                while bits != 0 {
                    offsets[len] = ((first_word + i) * 64) as u16 + bits.trailing_zeros() as u16;
                    len += 1;
                    bits &= bits - 1;
                }
            }
            return Some(self.encode(&offsets[..len]));
        }
        let nwords = last_word + 1;
        for (slot, &w) in self.words[1..=nwords].iter_mut().zip(words) {
            *slot = MaybeUninit::new(w);
        }
        Some(self.write(Header {
            flags: 0,
            nwords: nwords as u8,
            offsets: [0; INLINE_OFFSETS],
        }))
    }

    /// Writes `header` and returns the entry; the words it counts must have
    /// been written.
    fn write(&mut self, header: Header) -> &BlockEntry {
        self.words[0] = MaybeUninit::new(header.to_word());
        let base = NonNull::from(&mut self.words).cast::<u8>();
        // SAFETY: the buffer is 8-aligned and holds a header and
        // `MAX_WORDS` words, the first `header.nwords` of them written by
        // the caller; the entry borrows the buffer.
        unsafe { BlockEntry::from_bytes(base) }
    }

    /// Encodes `offsets`, which must be non-empty, strictly ascending and
    /// within `1..=MAX_OFFSET` (the store validates them first).
    pub(crate) fn encode(&mut self, offsets: &[u16]) -> &BlockEntry {
        debug_assert!(!offsets.is_empty() && offsets.windows(2).all(|w| w[0] < w[1]));
        let (first, last) = (offsets[0], offsets[offsets.len() - 1]);
        let mut header = Header {
            flags: 0,
            nwords: 0,
            offsets: [0; INLINE_OFFSETS],
        };
        if offsets.len() <= INLINE_OFFSETS {
            header.offsets = inline_offsets(offsets);
        } else if (last - first) as usize + 1 == offsets.len() {
            header.flags = RUN;
            header.offsets[0] = first;
            header.offsets[1] = last;
        } else {
            let nwords = last as usize / 64 + 1;
            header.nwords = nwords as u8;
            let words = &mut self.words[1..=nwords];
            words.fill(MaybeUninit::new(0));
            for &o in offsets {
                let word = &mut words[o as usize / 64];
                // SAFETY: every word of the entry was zeroed just above.
                *word = MaybeUninit::new(unsafe { word.assume_init() } | 1 << (o % 64));
            }
        }
        // The header has no padding, and the `nwords` words after it were
        // written above, so every byte of the entry is initialised.
        self.write(header)
    }
}

/// Sets the bits of offsets `first..=last` in `words`.
fn set_range(words: &mut [u64; MAX_WORDS], first: u16, last: u16) {
    let (fw, lw) = (first as usize / 64, last as usize / 64);
    let low = u64::MAX << (first % 64);
    let high = u64::MAX >> (63 - last % 64);
    if fw == lw {
        words[fw] |= low & high;
    } else {
        words[fw] |= low;
        words[fw + 1..lw].fill(u64::MAX);
        words[lw] |= high;
    }
}

/// The offsets of one entry, ascending.
pub(crate) struct Offsets<'a> {
    state: State<'a>,
}

enum State<'a> {
    Run(core::ops::RangeInclusive<u16>),
    Inline([u16; INLINE_OFFSETS], usize),
    Bitmap {
        words: &'a [u64],
        word: usize,
        /// The bits of `words[word]` not yet produced.
        bits: u64,
    },
}

impl Iterator for Offsets<'_> {
    type Item = u16;

    #[inline]
    fn next(&mut self) -> Option<u16> {
        match &mut self.state {
            State::Run(range) => range.next(),
            State::Inline(offsets, i) => {
                let o = *offsets.get(*i).filter(|&&o| o != 0)?;
                *i += 1;
                Some(o)
            }
            State::Bitmap { words, word, bits } => loop {
                if *bits != 0 {
                    let bit = bits.trailing_zeros();
                    *bits &= *bits - 1;
                    return Some((*word * 64) as u16 + bit as u16);
                }
                *word += 1;
                *bits = *words.get(*word)?;
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(offsets: &[u16]) -> &'static str {
        let mut buf = EntryBuf::new();
        let entry = buf.encode(offsets);
        assert_eq!(entry.offsets().collect::<Vec<_>>(), offsets);
        assert_eq!(entry.len(), offsets.len());
        for o in 0..=MAX_OFFSET + 1 {
            // (Sorted: a binary search keeps this quick under Miri.)
            assert_eq!(entry.contains(o), offsets.binary_search(&o).is_ok(), "{o}");
        }
        entry.form()
    }

    #[test]
    fn check_accepts_encoded_entries_and_names_bad_ones() {
        let mut buf = EntryBuf::new();
        for offsets in [
            &[7][..],
            &[7, 9],
            &[1, 2, 3, 4],
            &[1, 2, 3, 4, 100],
            &[2048],
        ] {
            assert_eq!(buf.encode(offsets).check(), Ok(()), "{offsets:?}");
        }
        // A bitmap holding a run must have been encoded as a run.
        let mut bad = EntryBuf::new();
        bad.encode(&[1, 2, 3, 4, 100]);
        bad.words[2] = MaybeUninit::new(0);
        // SAFETY: the buffer holds an encoded entry, 8-aligned.
        let entry = unsafe { BlockEntry::from_bytes(NonNull::from(&bad.words).cast()) };
        assert!(entry.check().unwrap_err().contains("bitmap entry"));
        // An inline entry with a stray slot after its end.
        bad.encode(&[9]);
        // SAFETY: the header word was written by `encode`.
        bad.words[0] = MaybeUninit::new(unsafe { bad.words[0].assume_init() } | 5 << 48);
        // SAFETY: as above.
        let entry = unsafe { BlockEntry::from_bytes(NonNull::from(&bad.words).cast()) };
        assert!(entry.check().is_err());
    }

    #[test]
    fn forms_follow_the_offsets() {
        assert_eq!(round_trip(&[1]), "inline");
        assert_eq!(round_trip(&[7, 2048]), "inline");
        assert_eq!(round_trip(&[1, 2, 3]), "inline");
        assert_eq!(round_trip(&[5, 900, 2048]), "inline");
        assert_eq!(round_trip(&[1, 2, 3, 4]), "run");
        assert_eq!(round_trip(&(1..=2048).collect::<Vec<_>>()), "run");
        assert_eq!(round_trip(&[1, 2, 3, 4, 100]), "bitmap");
        assert_eq!(round_trip(&[63, 64, 65, 127, 128, 2048]), "bitmap");
    }

    #[test]
    fn word_count_is_max_offset_over_64_plus_one() {
        let mut buf = EntryBuf::new();
        assert_eq!(buf.encode(&[1, 3, 5, 63]).byte_len(), 16);
        assert_eq!(buf.encode(&[1, 3, 5, 64]).byte_len(), 24);
        assert_eq!(buf.encode(&[1, 3, 5, 2048]).byte_len(), 8 + 8 * 33);
    }
}
