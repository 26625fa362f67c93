//! Values in a concurrent tree: embedded in the slot word, or in a cell.
//!
//! A reader copies a value out, or runs a closure on it, while writers may
//! replace it; so a value must be one a single atomic store can replace.
//!
//! - **Embedded** ([`Embedded<V>`](crate::value::Embedded), the default for
//!   word-sized values): `V` is an [`AtomicWord`], converted to and from
//!   the slot word. Replacing it is one store of the slot.
//! - **Leaf** ([`Leaf<V>`](crate::value::Leaf)): any `V: Clone + Send +
//!   Sync`, in an immutable [`Cell`] beside its key, the slot pointing to
//!   it. Replacing it publishes a new cell and retires the old one, which
//!   readers that loaded it go on reading until they leave.
//!
//! A lazy leaf (a subtree of one key, with lazy expansion) is a [`Cell`]
//! in either layout.

use super::reclaim::Reclaim;
use crate::key::Key;
use crate::value::Word;

/// A value that travels as one machine word, so that an embedded slot is
/// replaced with a single atomic store and read with a single load.
///
/// Implemented for the integer types that fit a pointer, `bool`, `f32`,
/// `f64` on 64-bit targets, and `()`. A value of any other type is stored
/// with `layout: leaf`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a word a concurrent tree can embed",
    label = "stored by a `concurrency: rowex` tree with the embedded layout",
    note = "declare the tree with `layout: leaf` to store `{Self}` in a cell behind the slot"
)]
pub trait AtomicWord: Copy + Send + Sync + 'static {
    /// The value as a word.
    fn into_word(self) -> usize;
    /// The value a word made by [`into_word`](AtomicWord::into_word) holds.
    fn from_word(word: usize) -> Self;
}

macro_rules! unsigned_words {
    ($($t:ty),*) => {$(
        impl AtomicWord for $t {
            #[inline(always)]
            fn into_word(self) -> usize {
                self as usize
            }
            #[inline(always)]
            fn from_word(word: usize) -> Self {
                word as $t
            }
        }
    )*};
}

macro_rules! signed_words {
    ($($t:ty => $u:ty),*) => {$(
        impl AtomicWord for $t {
            #[inline(always)]
            fn into_word(self) -> usize {
                self as $u as usize
            }
            #[inline(always)]
            fn from_word(word: usize) -> Self {
                word as $u as $t
            }
        }
    )*};
}

unsigned_words!(u8, u16, u32, usize);
signed_words!(i8 => u8, i16 => u16, i32 => u32, isize => usize);
#[cfg(target_pointer_width = "64")]
unsigned_words!(u64);
#[cfg(target_pointer_width = "64")]
signed_words!(i64 => u64);

impl AtomicWord for bool {
    #[inline(always)]
    fn into_word(self) -> usize {
        usize::from(self)
    }
    #[inline(always)]
    fn from_word(word: usize) -> Self {
        word != 0
    }
}

impl AtomicWord for () {
    #[inline(always)]
    fn into_word(self) -> usize {
        0
    }
    #[inline(always)]
    fn from_word(_: usize) -> Self {}
}

impl AtomicWord for f32 {
    #[inline(always)]
    fn into_word(self) -> usize {
        self.to_bits() as usize
    }
    #[inline(always)]
    fn from_word(word: usize) -> Self {
        f32::from_bits(word as u32)
    }
}

#[cfg(target_pointer_width = "64")]
impl AtomicWord for f64 {
    #[inline(always)]
    fn into_word(self) -> usize {
        self.to_bits() as usize
    }
    #[inline(always)]
    fn from_word(word: usize) -> Self {
        f64::from_bits(word as u64)
    }
}

/// A key and its value, immutable once published: a lazy leaf, or a leaf
/// layout's value. Aligned so that its pointer's tag bits are zero.
#[repr(C, align(8))]
pub(crate) struct Cell<K, V> {
    pub(crate) key: K,
    pub(crate) value: V,
}

impl<K: Key, V> Cell<K, V> {
    /// A new cell's pointer (tag zero), unpublished.
    pub(crate) fn alloc(key: K, value: V) -> *mut u8 {
        Box::into_raw(Box::new(Self { key, value })).cast()
    }

    /// The cell a slot word points to.
    ///
    /// # Safety
    ///
    /// `word` came from [`Cell::alloc`] with these types and is not freed
    /// for `'a` (a pin protects it, or the caller owns it).
    #[inline(always)]
    pub(crate) unsafe fn get<'a>(word: *mut u8) -> &'a Self {
        // SAFETY: the caller's contract.
        unsafe { &*word.cast::<Self>() }
    }

    /// Frees a cell.
    ///
    /// # Safety
    ///
    /// As [`Cell::get`], and no thread can reach it any more; freed once.
    pub(crate) unsafe fn free(word: *mut u8) {
        // SAFETY: the caller's contract; `alloc` boxed it.
        drop(unsafe { Box::from_raw(word.cast::<Self>()) });
    }
}

/// Reclaims retired cells.
pub(crate) struct CellReclaim<K, V>(core::marker::PhantomData<(K, V)>);

impl<K: Key, V> Reclaim for CellReclaim<K, V> {
    unsafe fn reclaim(ptr: *mut u8) {
        // SAFETY: `Reclaim::reclaim`'s contract is `Cell::free`'s.
        unsafe { Cell::<K, V>::free(ptr) }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// The value layouts a concurrent tree supports: [`Embedded`] for
/// [`AtomicWord`] values and [`Leaf`] for the others. Sealed.
///
/// [`Embedded`]: crate::value::Embedded
/// [`Leaf`]: crate::value::Leaf
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a value layout a concurrent tree supports",
    note = "a `concurrency: rowex` tree embeds `AtomicWord` values and stores others with `layout: leaf`"
)]
pub trait ConcurrentLayout: sealed::Sealed + 'static {
    /// The value type.
    type Value: Clone + Send + Sync + 'static;
    /// Whether values are embedded in last-level slot words (otherwise
    /// each is a cell, key beside value, that the slot points to).
    const EMBEDS: bool;

    /// The last-level slot word for `key`'s `value`: the value's word, or
    /// a new cell.
    #[doc(hidden)]
    fn into_slot<K: Key>(key: K, value: Self::Value) -> *mut u8;

    /// Calls `f` on the value in a last-level slot word.
    ///
    /// # Safety
    ///
    /// `word` came from [`into_slot`](ConcurrentLayout::into_slot) with key
    /// type `K` and is protected by a pin.
    #[doc(hidden)]
    unsafe fn with_slot<K: Key, R>(word: *mut u8, f: impl FnOnce(&Self::Value) -> R) -> R;
}

impl<V: AtomicWord> sealed::Sealed for Word<V, true> {}
impl<V: Clone + Send + Sync + 'static> sealed::Sealed for Word<V, false> {}

impl<V: AtomicWord> ConcurrentLayout for Word<V, true> {
    type Value = V;
    const EMBEDS: bool = true;

    #[inline(always)]
    fn into_slot<K: Key>(_: K, value: V) -> *mut u8 {
        core::ptr::without_provenance_mut(value.into_word())
    }

    #[inline(always)]
    unsafe fn with_slot<K: Key, R>(word: *mut u8, f: impl FnOnce(&V) -> R) -> R {
        f(&V::from_word(word.addr()))
    }
}

impl<V: Clone + Send + Sync + 'static> ConcurrentLayout for Word<V, false> {
    type Value = V;
    const EMBEDS: bool = false;

    fn into_slot<K: Key>(key: K, value: V) -> *mut u8 {
        Cell::alloc(key, value)
    }

    #[inline(always)]
    unsafe fn with_slot<K: Key, R>(word: *mut u8, f: impl FnOnce(&V) -> R) -> R {
        // SAFETY: the caller's contract: a protected cell of `K` and `V`.
        f(&unsafe { Cell::<K, V>::get(word) }.value)
    }
}
