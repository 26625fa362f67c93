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

use core::alloc::Layout;
use core::ptr::NonNull;

use super::reclaim::Reclaim;
use super::space::Space;
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
    /// A new cell's word (tag zero) in `space`, unpublished.
    pub(crate) fn alloc<S: Space>(space: &S, key: K, value: V) -> Result<*mut u8, S::Error> {
        let addr = space.alloc(Layout::new::<Self>())?.cast::<Self>();
        // SAFETY: fresh memory of this layout, owned here.
        unsafe { addr.write(Self { key, value }) };
        Ok(space.word(addr.as_ptr().cast()))
    }

    /// The cell at a resolved address.
    ///
    /// # Safety
    ///
    /// `addr` is a cell of these types that [`Cell::alloc`] made and that
    /// is not freed for `'a` (a pin protects it, or the caller owns it).
    #[inline(always)]
    pub(crate) unsafe fn get<'a>(addr: *mut u8) -> &'a Self {
        // SAFETY: the caller's contract.
        unsafe { &*addr.cast::<Self>() }
    }

    /// Drops a cell's value and frees it.
    ///
    /// # Safety
    ///
    /// `word` came from [`Cell::alloc`] with these types on `space`, no
    /// thread can reach it any more, and it is freed once.
    pub(crate) unsafe fn free<S: Space>(space: &S, word: *mut u8) {
        let addr = space.resolve(word).cast::<Self>();
        // SAFETY: the caller's contract: a live cell, owned now.
        unsafe {
            core::ptr::drop_in_place(addr);
            space.free(NonNull::new_unchecked(addr).cast(), Layout::new::<Self>());
        }
    }
}

/// Reclaims retired cells of a tree in a space of type `S`.
pub(crate) struct CellReclaim<K, V, S>(core::marker::PhantomData<(K, V, S)>);

impl<K: Key, V, S: Space> Reclaim for CellReclaim<K, V, S> {
    unsafe fn reclaim(space: *const (), word: *mut u8) {
        // SAFETY: `Reclaim::reclaim`'s contract: `space` is the `S` of
        // the tree that retired this cell, and the cell is unreachable.
        unsafe { Cell::<K, V>::free(&*space.cast::<S>(), word) }
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
    /// a new cell in `space`.
    #[doc(hidden)]
    fn into_slot<K: Key, S: Space>(
        space: &S,
        key: K,
        value: Self::Value,
    ) -> Result<*mut u8, S::Error>;

    /// Calls `f` on the value in a last-level slot word.
    ///
    /// # Safety
    ///
    /// `word` came from [`into_slot`](ConcurrentLayout::into_slot) with key
    /// type `K` on `space` and is protected by a pin.
    #[doc(hidden)]
    unsafe fn with_slot<K: Key, S: Space, R>(
        space: &S,
        word: *mut u8,
        f: impl FnOnce(&Self::Value) -> R,
    ) -> R;
}

impl<V: AtomicWord> sealed::Sealed for Word<V, true> {}
impl<V: Clone + Send + Sync + 'static> sealed::Sealed for Word<V, false> {}

impl<V: AtomicWord> ConcurrentLayout for Word<V, true> {
    type Value = V;
    const EMBEDS: bool = true;

    #[inline(always)]
    fn into_slot<K: Key, S: Space>(_: &S, _: K, value: V) -> Result<*mut u8, S::Error> {
        Ok(core::ptr::without_provenance_mut(value.into_word()))
    }

    #[inline(always)]
    unsafe fn with_slot<K: Key, S: Space, R>(_: &S, word: *mut u8, f: impl FnOnce(&V) -> R) -> R {
        f(&V::from_word(word.addr()))
    }
}

impl<V: Clone + Send + Sync + 'static> ConcurrentLayout for Word<V, false> {
    type Value = V;
    const EMBEDS: bool = false;

    fn into_slot<K: Key, S: Space>(space: &S, key: K, value: V) -> Result<*mut u8, S::Error> {
        Cell::alloc(space, key, value)
    }

    #[inline(always)]
    unsafe fn with_slot<K: Key, S: Space, R>(
        space: &S,
        word: *mut u8,
        f: impl FnOnce(&V) -> R,
    ) -> R {
        // SAFETY: the caller's contract: a protected cell of `K` and `V`
        // in `space`.
        f(&unsafe { Cell::<K, V>::get(space.resolve(word)) }.value)
    }
}
