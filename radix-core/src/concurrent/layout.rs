//! Values in a concurrent tree: embedded in the slot word, or in memory
//! of their own that never changes once published.
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
//! - **Varlen** ([`Varlen<V>`](crate::value::Varlen)): a [`VarlenValue`]
//!   sized at run time, its bytes in the slot word when they fit one (tag
//!   bit set), else in a leaf of exactly its size, replaced as a cell is.
//!   A reader of an embedded value copies the word and reads the copy.
//!
//! A lazy leaf (a subtree of one key, with lazy expansion) is a [`Cell`]
//! in the sized layouts; varlen trees have none.

use core::alloc::Layout;
use core::ptr::NonNull;

use super::reclaim::Reclaim;
use super::space::Space;
use crate::key::Key;
use crate::value::{TAG_BIT, Varlen, VarlenValue, Word};

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

mod sealed {
    pub trait Sealed {}
}

/// The value layouts a concurrent tree supports: [`Embedded`] for
/// [`AtomicWord`] values, [`Leaf`] for any other `Clone` value, and
/// [`Varlen`] for values sized at run time. Sealed.
///
/// [`Embedded`]: crate::value::Embedded
/// [`Leaf`]: crate::value::Leaf
/// [`Varlen`]: crate::value::Varlen
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a value layout a concurrent tree supports",
    note = "a `concurrency: rowex` tree embeds `AtomicWord` values, stores other values with `layout: leaf`, and `VarlenValue`s with `layout: varlen`"
)]
pub trait ConcurrentLayout: sealed::Sealed + 'static {
    /// The value type: what a lookup lends to its closure.
    type Value: ?Sized + Send + Sync + 'static;
    /// What `insert` takes: the value, or for [`Varlen`](crate::value::Varlen)
    /// a reference to it, whose bytes are copied in.
    type Input<'a>;
    /// What `insert` and `remove` give back for a value they replaced:
    /// `Option<V>`, or for [`Varlen`](crate::value::Varlen) whether there
    /// was one.
    type Old;
    /// Whether values are embedded in last-level slot words, where any
    /// word is a value (otherwise a slot word is never null, and names
    /// memory the tree frees when the value goes).
    const EMBEDS: bool;
    /// Whether the layout's values can sit in lazy leaves.
    #[doc(hidden)]
    const LAZY_LEAVES: bool;

    /// The `Old` meaning "there was none".
    #[doc(hidden)]
    fn absent() -> Self::Old;

    /// The `Old` for a value being replaced or removed.
    #[doc(hidden)]
    fn old(value: &Self::Value) -> Self::Old;

    /// An input that stores `value` again, for a value moving between a
    /// lazy leaf and a slot.
    #[doc(hidden)]
    fn input(value: &Self::Value) -> Self::Input<'_>;

    /// The last-level slot word for `key`'s `value`: the value's word, or
    /// a new cell in `space`.
    #[doc(hidden)]
    fn into_slot<K: Key, S: Space>(
        space: &S,
        key: K,
        value: Self::Input<'_>,
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

    /// Asks for the memory a last-level slot word names, if any, for a
    /// batch that reads the value some lookups later. Reads nothing.
    #[doc(hidden)]
    #[inline(always)]
    fn prefetch_slot<S: Space>(space: &S, word: *mut u8) {
        let _ = (space, word);
    }

    /// Frees what a last-level slot word holds, if anything.
    ///
    /// # Safety
    ///
    /// `word` came from [`into_slot`](ConcurrentLayout::into_slot) with key
    /// type `K` on `space`, no thread can reach it, and it is freed once.
    #[doc(hidden)]
    unsafe fn free_slot<K: Key, S: Space>(space: &S, word: *mut u8);

    /// The layout of a [`Cell`] of this layout's values, if it has cells
    /// of one size.
    #[doc(hidden)]
    fn cell_layout<K: Key>() -> Option<Layout>;

    /// A new lazy leaf holding `key` and `value`, unpublished.
    #[doc(hidden)]
    fn new_cell<K: Key, S: Space>(
        space: &S,
        key: K,
        value: Self::Input<'_>,
    ) -> Result<*mut u8, S::Error>;

    /// The key of a lazy leaf, and `f` called on its value.
    ///
    /// # Safety
    ///
    /// `word` came from [`new_cell`](ConcurrentLayout::new_cell) with key
    /// type `K` on `space` and is protected by a pin (or owned).
    #[doc(hidden)]
    unsafe fn cell_key<K: Key, S: Space>(space: &S, word: *mut u8) -> K;

    /// Calls `f` on a lazy leaf's value.
    ///
    /// # Safety
    ///
    /// As [`cell_key`](ConcurrentLayout::cell_key).
    #[doc(hidden)]
    unsafe fn with_cell<K: Key, S: Space, R>(
        space: &S,
        word: *mut u8,
        f: impl FnOnce(&Self::Value) -> R,
    ) -> R;

    /// Frees a lazy leaf.
    ///
    /// # Safety
    ///
    /// `word` came from [`new_cell`](ConcurrentLayout::new_cell) with key
    /// type `K` on `space`, no thread can reach it, and it is freed once.
    #[doc(hidden)]
    unsafe fn free_cell<K: Key, S: Space>(space: &S, word: *mut u8);
}

/// Reclaims retired value slots of layout `L` in a tree of `K` keys in a
/// space of type `S`.
pub(crate) struct SlotReclaim<L, K, S>(core::marker::PhantomData<(L, K, S)>);

impl<L: ConcurrentLayout, K: Key, S: Space> Reclaim for SlotReclaim<L, K, S> {
    unsafe fn reclaim(space: *const (), word: *mut u8) {
        // SAFETY: `Reclaim::reclaim`'s contract: `space` is the `S` of
        // the tree that retired this slot word, which is unreachable.
        unsafe { L::free_slot::<K, S>(&*space.cast::<S>(), word) }
    }
}

/// Reclaims retired lazy leaves of layout `L` in a tree of `K` keys in a
/// space of type `S`.
pub(crate) struct CellReclaim<L, K, S>(core::marker::PhantomData<(L, K, S)>);

impl<L: ConcurrentLayout, K: Key, S: Space> Reclaim for CellReclaim<L, K, S> {
    unsafe fn reclaim(space: *const (), word: *mut u8) {
        // SAFETY: as for `SlotReclaim`, for a lazy leaf.
        unsafe { L::free_cell::<K, S>(&*space.cast::<S>(), word) }
    }
}

impl<V: AtomicWord> sealed::Sealed for Word<V, true> {}
impl<V: Clone + Send + Sync + 'static> sealed::Sealed for Word<V, false> {}
impl<V: ?Sized + VarlenValue + Send + Sync + 'static> sealed::Sealed for Varlen<V> {}

/// The lazy-leaf half of the sized layouts: a [`Cell`] of the key and the
/// value.
macro_rules! sized_cells {
    () => {
        fn cell_layout<K: Key>() -> Option<Layout> {
            Some(Layout::new::<Cell<K, V>>())
        }

        fn new_cell<K: Key, S: Space>(space: &S, key: K, value: V) -> Result<*mut u8, S::Error> {
            Cell::alloc(space, key, value)
        }

        #[inline(always)]
        unsafe fn cell_key<K: Key, S: Space>(space: &S, word: *mut u8) -> K {
            // SAFETY: the caller's contract: a protected cell of `K`, `V`.
            unsafe { Cell::<K, V>::get(space.resolve(word)) }.key
        }

        #[inline(always)]
        unsafe fn with_cell<K: Key, S: Space, R>(
            space: &S,
            word: *mut u8,
            f: impl FnOnce(&V) -> R,
        ) -> R {
            // SAFETY: as in `cell_key`.
            f(&unsafe { Cell::<K, V>::get(space.resolve(word)) }.value)
        }

        unsafe fn free_cell<K: Key, S: Space>(space: &S, word: *mut u8) {
            // SAFETY: the caller's contract.
            unsafe { Cell::<K, V>::free(space, word) }
        }
    };
}

impl<V: AtomicWord> ConcurrentLayout for Word<V, true> {
    type Value = V;
    type Input<'a> = V;
    type Old = Option<V>;
    const EMBEDS: bool = true;
    const LAZY_LEAVES: bool = true;

    #[inline(always)]
    fn absent() -> Option<V> {
        None
    }

    #[inline(always)]
    fn old(value: &V) -> Option<V> {
        Some(*value)
    }

    #[inline(always)]
    fn input(value: &V) -> V {
        *value
    }

    #[inline(always)]
    fn into_slot<K: Key, S: Space>(_: &S, _: K, value: V) -> Result<*mut u8, S::Error> {
        Ok(core::ptr::without_provenance_mut(value.into_word()))
    }

    #[inline(always)]
    unsafe fn with_slot<K: Key, S: Space, R>(_: &S, word: *mut u8, f: impl FnOnce(&V) -> R) -> R {
        f(&V::from_word(word.addr()))
    }

    #[inline(always)]
    unsafe fn free_slot<K: Key, S: Space>(_: &S, _: *mut u8) {}

    sized_cells!();
}

impl<V: Clone + Send + Sync + 'static> ConcurrentLayout for Word<V, false> {
    type Value = V;
    type Input<'a> = V;
    type Old = Option<V>;
    const EMBEDS: bool = false;
    const LAZY_LEAVES: bool = true;

    #[inline(always)]
    fn absent() -> Option<V> {
        None
    }

    #[inline]
    fn old(value: &V) -> Option<V> {
        Some(value.clone())
    }

    #[inline]
    fn input(value: &V) -> V {
        value.clone()
    }

    /// A leaf layout's slot is a cell, key beside value, so that a node
    /// left with one value can give way to that value's cell as a lazy
    /// leaf.
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

    #[inline(always)]
    fn prefetch_slot<S: Space>(space: &S, word: *mut u8) {
        crate::simd::prefetch(space.resolve(word));
    }

    unsafe fn free_slot<K: Key, S: Space>(space: &S, word: *mut u8) {
        // SAFETY: the caller's contract: an unreachable cell.
        unsafe { Cell::<K, V>::free(space, word) }
    }

    sized_cells!();
}

/// A [`Varlen`] value's word: its bytes with the tag bit set when they
/// fit one (on little-endian targets, as the plain tree embeds them), else
/// a leaf of exactly its size, aligned past the tag bits. Like a leaf
/// layout's cell, a leaf is immutable once published: replacing the value
/// publishes another word and retires the leaf.
///
/// Varlen trees have no lazy leaves (the macro refuses `lazy` and `full`
/// compression with them): a key's value is always in a last-level slot.
impl<V: ?Sized + VarlenValue + Send + Sync + 'static> ConcurrentLayout for Varlen<V> {
    type Value = V;
    type Input<'a> = &'a V;
    type Old = bool;
    const EMBEDS: bool = false;
    const LAZY_LEAVES: bool = false;

    #[inline(always)]
    fn absent() -> bool {
        false
    }

    #[inline(always)]
    fn old(_: &V) -> bool {
        true
    }

    #[inline(always)]
    fn input(value: &V) -> &V {
        value
    }

    #[inline]
    fn into_slot<K: Key, S: Space>(space: &S, _: K, value: &V) -> Result<*mut u8, S::Error> {
        let len = value.byte_len();
        let src = NonNull::from(value).cast::<u8>();
        if Self::travels_in_word(len) {
            let mut bytes = [0u8; WORD];
            // SAFETY: `len <= WORD` initialised bytes of the value.
            unsafe {
                bytes
                    .as_mut_ptr()
                    .copy_from_nonoverlapping(src.as_ptr(), len)
            };
            bytes[0] |= TAG_BIT;
            return Ok(core::ptr::without_provenance_mut(usize::from_ne_bytes(
                bytes,
            )));
        }
        let leaf = space.alloc(Self::concurrent_leaf(len))?;
        // SAFETY: the leaf holds `len` bytes, fresh and owned; the
        // value's are initialised.
        unsafe { leaf.copy_from_nonoverlapping(src, len) };
        Ok(space.word(leaf.as_ptr()))
    }

    #[inline(always)]
    unsafe fn with_slot<K: Key, S: Space, R>(
        space: &S,
        word: *mut u8,
        f: impl FnOnce(&V) -> R,
    ) -> R {
        if Self::is_tagged(word) {
            // The bytes travel in the word: a reader copies it, which no
            // writer can change under it.
            let bytes = Aligned(word.addr().to_ne_bytes());
            // SAFETY: the value's bytes (the tag bit set, which
            // `from_bytes` ignores), aligned to 8 >= `V::ALIGN` (checked
            // by `travels_in_word`), live while `f` runs.
            return f(unsafe { V::from_bytes(NonNull::from(&bytes.0).cast()) });
        }
        // SAFETY: the caller's contract: an untagged word is a leaf of
        // this space, protected by a pin, immutable since published.
        f(unsafe { V::from_bytes(NonNull::new_unchecked(space.resolve(word))) })
    }

    #[inline(always)]
    fn prefetch_slot<S: Space>(space: &S, word: *mut u8) {
        if !Self::is_tagged(word) {
            crate::simd::prefetch(space.resolve(word));
        }
    }

    unsafe fn free_slot<K: Key, S: Space>(space: &S, word: *mut u8) {
        if Self::is_tagged(word) {
            return;
        }
        let addr = space.resolve(word);
        // SAFETY: the caller's contract: an unreachable leaf of this
        // space, freed with the layout its own length gives, as made.
        unsafe {
            let leaf = NonNull::new_unchecked(addr);
            let len = V::from_bytes(leaf).byte_len();
            space.free(leaf, Self::concurrent_leaf(len));
        }
    }

    fn cell_layout<K: Key>() -> Option<Layout> {
        None
    }

    fn new_cell<K: Key, S: Space>(_: &S, _: K, _: &V) -> Result<*mut u8, S::Error> {
        unreachable!("a varlen tree has no lazy leaves")
    }

    unsafe fn cell_key<K: Key, S: Space>(_: &S, _: *mut u8) -> K {
        unreachable!("a varlen tree has no lazy leaves")
    }

    unsafe fn with_cell<K: Key, S: Space, R>(_: &S, _: *mut u8, _: impl FnOnce(&V) -> R) -> R {
        unreachable!("a varlen tree has no lazy leaves")
    }

    unsafe fn free_cell<K: Key, S: Space>(_: &S, _: *mut u8) {
        unreachable!("a varlen tree has no lazy leaves")
    }
}

/// Eight bytes, aligned as a word is, for an embedded varlen value copied
/// out of its slot word.
#[repr(align(8))]
struct Aligned([u8; WORD]);

/// The bytes of a machine word.
const WORD: usize = size_of::<usize>();

impl<V: ?Sized + VarlenValue> Varlen<V> {
    /// Whether a value of `len` bytes travels in its slot word.
    #[inline(always)]
    fn travels_in_word(len: usize) -> bool {
        cfg!(target_endian = "little") && len <= WORD && V::ALIGN <= WORD
    }

    /// Whether a slot word holds the value's bytes (its tag bit is set):
    /// a leaf's word is 8-aligned.
    #[inline(always)]
    fn is_tagged(word: *mut u8) -> bool {
        cfg!(target_endian = "little") && word.addr() & usize::from(TAG_BIT) != 0
    }

    /// The leaf of a value of `len` bytes: at least 8-aligned, so that a
    /// word naming it has clear tag bits.
    #[inline(always)]
    fn concurrent_leaf(len: usize) -> Layout {
        Layout::from_size_align(len.max(1), V::ALIGN.max(8)).expect("value layout")
    }
}
