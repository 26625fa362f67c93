//! Variable-length values, embedded in the slot when small at run time.
//!
//! A [`VarlenValue`] knows its byte size at run time. When it fits a
//! pointer-sized word, its bytes are copied into the slot and the slot's
//! lowest bit, [`TAG_BIT`], is set to say so; otherwise it is copied into a
//! leaf allocation of exactly its size and the slot points there. Leaves are
//! at least 2-aligned, so a pointer's lowest bit is always clear and the tag
//! is unambiguous. The value's own layout must leave that bit free, as the
//! TID store's entry header does with a reserved flag bit.
//!
//! Replacing a value may move it between the two forms in either direction.
//! PostgreSQL once read an embedded value's bytes as a pointer after such a
//! replacement; here the tag is checked on every access, and the old slot is
//! released by its own form before the new one is written.
//!
//! Embedding relies on the tag bit being the first byte's lowest bit, which
//! is where a pointer's lowest bit lies on little-endian targets. On
//! big-endian targets every value is stored as a leaf.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::alloc::Layout;
use core::marker::PhantomData;
use core::mem::{MaybeUninit, align_of, size_of};
use core::ptr::NonNull;

use super::ValueLayout;
use super::word::SlotWord;
use crate::mem::Memory;

/// The bit of a value's first byte that the tree uses as the embedded tag.
pub const TAG_BIT: u8 = 1;

const WORD: usize = size_of::<SlotWord>();
const CAN_EMBED: bool = cfg!(target_endian = "little");
/// Leaves are at least this aligned, so their address never has the tag.
const MIN_LEAF_ALIGN: usize = 2;

/// A value whose size is known at run time, stored by copying its bytes.
///
/// # Safety
///
/// Implementors promise that:
/// - the value is exactly [`byte_len`](VarlenValue::byte_len) initialised
///   bytes starting at its address (no padding inside them), owns nothing
///   (no `Drop`), and is still the same value when those bytes are copied
///   to another address aligned to [`ALIGN`](VarlenValue::ALIGN);
/// - bit [`TAG_BIT`] of the first byte carries no information: the tree may
///   set it, and [`from_bytes`](VarlenValue::from_bytes) ignores it;
/// - `from_bytes` reads the size from the bytes themselves.
///
/// # Example
///
/// [`VarBytes`] is a ready-made implementation: a byte string with a
/// one-byte header.
pub unsafe trait VarlenValue {
    /// Alignment the value's bytes need. At most a pointer's alignment for
    /// the value to be embeddable.
    const ALIGN: usize;

    /// Size of this value in bytes.
    fn byte_len(&self) -> usize;

    /// Reinterprets bytes previously copied from a value.
    ///
    /// # Safety
    ///
    /// `bytes` points to a copy of a value's bytes (the tag bit possibly
    /// set), aligned to `ALIGN`, valid and unchanged for `'a`.
    unsafe fn from_bytes<'a>(bytes: NonNull<u8>) -> &'a Self;
}

/// The variable-length layout.
pub struct Varlen<V: ?Sized>(PhantomData<V>);

impl<V: ?Sized + VarlenValue> Varlen<V> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn embeds(len: usize) -> bool {
        CAN_EMBED && len <= WORD && V::ALIGN <= align_of::<SlotWord>()
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn leaf_layout(len: usize) -> Layout {
        Layout::from_size_align(len.max(1), V::ALIGN.max(MIN_LEAF_ALIGN)).expect("value layout")
    }

    /// Whether a slot holds an embedded value (its tag bit is set).
    ///
    /// # Safety
    ///
    /// `slot` holds a slot word made by `into_slot`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn is_embedded(slot: NonNull<SlotWord>) -> bool {
        // SAFETY: every slot word is fully initialised by `into_slot`, either
        // as a stored leaf reference or as zero-padded value bytes; only the
        // address bits are looked at.
        let word = unsafe { slot.cast::<*mut u8>().read() };
        CAN_EMBED && word.addr() & TAG_BIT as usize != 0
    }

    /// The leaf a slot refers to, or `None` when the value is embedded.
    ///
    /// # Safety
    ///
    /// `slot` holds a slot word made by `into_slot` on `mem`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn leaf<M: Memory>(slot: NonNull<SlotWord>, mem: &M) -> Option<NonNull<u8>> {
        // SAFETY: the caller's contract; an untagged word is a stored leaf
        // reference, one word long.
        unsafe {
            if Self::is_embedded(slot) {
                None
            } else {
                Some(mem.resolve(slot.cast::<M::Ref>().read()))
            }
        }
    }

    /// Frees `leaf`, a leaf holding a value, with the layout its size
    /// gives.
    ///
    /// # Safety
    ///
    /// `leaf` is a live leaf made by `into_slot` on `mem`, not used again.
    #[inline]
    unsafe fn free_leaf<M: Memory>(leaf: NonNull<u8>, mem: &mut M) {
        // SAFETY: the leaf holds a live value copied by `into_slot`, with
        // the layout recomputed from its own size.
        unsafe {
            let len = V::from_bytes(leaf).byte_len();
            mem.free_leaf(leaf, Self::leaf_layout(len));
        }
    }
}

impl<V: ?Sized + VarlenValue> crate::sealed::Sealed for Varlen<V> {}

// SAFETY: values are copied byte for byte into the slot or a leaf of their
// own size, and leaves are freed with the layout they were allocated with.
unsafe impl<V: ?Sized + VarlenValue> ValueLayout for Varlen<V> {
    type Value = V;
    type Slot = SlotWord;
    type Input<'a>
        = &'a V
    where
        Self: 'a;
    type Old = bool;
    const NAME: &'static str = "varlen";
    const VISIT_ON_DROP: bool = true;
    /// An embedded value has its tag bit set and the rest of the word
    /// zeroed; a leaf pointer is never null.
    const NONNULL_SLOT: bool = true;
    const DROPS_VALUES: bool = false;
    const VALUE_SIZE: usize = 0;
    const VALUE_ALIGN: usize = V::ALIGN;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn absent() -> bool {
        false
    }

    #[inline]
    fn into_slot<M: Memory>(value: &V, mem: &mut M) -> Result<SlotWord, M::Error> {
        const { assert!(size_of::<M::Ref>() == WORD) };
        let len = value.byte_len();
        let src = NonNull::from(value).cast::<u8>();
        let mut word = MaybeUninit::<*mut u8>::uninit();
        if Self::embeds(len) {
            let dst = word.as_mut_ptr().cast::<u8>();
            // A value of a whole word (the TID store's entries) is one
            // unaligned load rather than a call to copy a run-time length.
            // SAFETY: `len <= WORD` bytes of the value are initialised; the
            // word is zeroed first so all of it is initialised.
            unsafe {
                if len == WORD {
                    dst.cast::<[u8; WORD]>()
                        .write(src.cast::<[u8; WORD]>().read_unaligned());
                } else {
                    dst.write_bytes(0, WORD);
                    dst.copy_from_nonoverlapping(src.as_ptr(), len);
                }
                *dst |= TAG_BIT;
            }
        } else {
            let leaf = mem.alloc_leaf(Self::leaf_layout(len))?;
            // SAFETY: the leaf holds `len` bytes; the value's are
            // initialised; a stored reference is one word (asserted above).
            unsafe {
                leaf.copy_from_nonoverlapping(src, len);
                word.as_mut_ptr().cast::<M::Ref>().write(mem.to_ref(leaf));
            }
        }
        Ok(SlotWord(word))
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn get<'a, M: Memory>(slot: NonNull<SlotWord>, mem: &M) -> &'a V {
        // SAFETY: an embedded value's bytes are the slot's, a leaf's are the
        // leaf's; both are suitably aligned and live while the slot is.
        unsafe {
            match Self::leaf(slot, mem) {
                None => V::from_bytes(slot.cast()),
                Some(leaf) => V::from_bytes(leaf),
            }
        }
    }

    #[inline]
    unsafe fn take<M: Memory>(slot: SlotWord, mem: &mut M) -> bool {
        let mut slot = slot;
        // SAFETY: the slot value is live; its leaf is freed exactly once.
        unsafe {
            if let Some(leaf) = Self::leaf(NonNull::from(&mut slot), mem) {
                Self::free_leaf(leaf, mem);
            }
        }
        true
    }

    #[inline]
    unsafe fn drop_slot<M: Memory>(slot: NonNull<SlotWord>, mem: &mut M) {
        // SAFETY: the slot value is live; its leaf is freed exactly once.
        unsafe {
            if let Some(leaf) = Self::leaf(slot, mem) {
                Self::free_leaf(leaf, mem);
            }
        }
    }

    #[inline]
    unsafe fn is_leaf(slot: NonNull<SlotWord>) -> bool {
        // SAFETY: forwarded contract.
        unsafe { !Self::is_embedded(slot) }
    }

    /// An untagged slot must hold an aligned leaf reference to a value too
    /// large to embed. (A tagged slot's length is not checked: reading it
    /// would trust the very header under suspicion.)
    unsafe fn check_slot<M: Memory>(slot: NonNull<SlotWord>, mem: &M) -> Result<(), &'static str> {
        // SAFETY: forwarded contract; every slot word is initialised.
        let word = unsafe { slot.cast::<*mut u8>().read() };
        if CAN_EMBED && word.addr() & TAG_BIT as usize != 0 {
            return Ok(());
        }
        // A stored reference keeps an address's low bits, so alignment
        // shows in either form.
        if word.is_null() || word.addr() % Self::leaf_layout(1).align() != 0 {
            return Err("varlen slot is neither tagged nor an aligned leaf reference");
        }
        // SAFETY: forwarded contract: an aligned, non-null leaf reference.
        let len = unsafe { Self::get(slot, mem) }.byte_len();
        if Self::embeds(len) {
            return Err("varlen value in a leaf although it fits the slot");
        }
        Ok(())
    }
}

/// A byte string of up to [`VarBytes::MAX_LEN`] bytes, usable as a
/// [`Varlen`] value: one header byte (the length, shifted past the tag bit)
/// followed by the bytes. Strings of up to 7 bytes on 64-bit targets are
/// embedded in the slot.
///
/// ```
/// use radix_core::value::VarBytes;
/// let v = VarBytes::new(b"hello").unwrap();
/// assert_eq!(v.as_bytes(), b"hello");
/// assert!(VarBytes::new(&[0; 200]).is_none());
/// ```
#[repr(C)]
pub struct VarBytes {
    header: u8,
    data: [u8],
}

impl VarBytes {
    /// The longest string a `VarBytes` holds.
    pub const MAX_LEN: usize = 127;

    /// A boxed copy of `bytes`, or `None` if it is longer than
    /// [`MAX_LEN`](Self::MAX_LEN).
    pub fn new(bytes: &[u8]) -> Option<Box<Self>> {
        if bytes.len() > Self::MAX_LEN {
            return None;
        }
        let mut raw = Vec::with_capacity(bytes.len() + 1);
        raw.push((bytes.len() as u8) << 1);
        raw.extend_from_slice(bytes);
        let raw = Box::into_raw(raw.into_boxed_slice());
        let tail = core::ptr::slice_from_raw_parts_mut(raw.cast::<u8>(), bytes.len());
        // SAFETY: the allocation is `1 + len` bytes with alignment 1, which
        // is exactly the layout of a `VarBytes` with a `len`-byte tail.
        Some(unsafe { Box::from_raw(tail as *mut VarBytes) })
    }

    /// The string.
    pub fn as_bytes(&self) -> &[u8] {
        &self.data
    }
}

impl core::fmt::Debug for VarBytes {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "VarBytes({:?})", &self.data)
    }
}

impl PartialEq for VarBytes {
    fn eq(&self, other: &Self) -> bool {
        self.data == other.data
    }
}

impl Eq for VarBytes {}

// SAFETY: `VarBytes` is `1 + len` initialised bytes with alignment 1, owns
// nothing, reads its length from its header and ignores the header's tag
// bit.
unsafe impl VarlenValue for VarBytes {
    const ALIGN: usize = 1;

    #[inline]
    fn byte_len(&self) -> usize {
        1 + self.data.len()
    }

    #[inline]
    unsafe fn from_bytes<'a>(bytes: NonNull<u8>) -> &'a Self {
        // SAFETY: the caller promises the bytes are a copied `VarBytes`.
        unsafe {
            let len = (bytes.read() >> 1) as usize;
            let tail = core::ptr::slice_from_raw_parts(bytes.as_ptr().cast_const(), len);
            &*(tail as *const VarBytes)
        }
    }
}
