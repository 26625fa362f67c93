//! One-word slots: embedded values and single-value leaves.
//!
//! The slot is one pointer-sized word. A value that fits a word (size and
//! alignment at most a pointer's) is stored in it directly; any other value
//! lives in a leaf allocation and the word points to it. Which one applies
//! is a constant per value type, so the branch disappears when compiled.

use core::alloc::Layout;
use core::marker::PhantomData;
use core::mem::{MaybeUninit, align_of, needs_drop, size_of};
use core::ptr::NonNull;

use super::{MutableLayout, ValueLayout};
use crate::mem::Memory;

/// A pointer-sized slot holding either a value's bytes or a pointer to its
/// leaf. It is `MaybeUninit` because an embedded value may have padding.
#[repr(transparent)]
pub struct SlotWord(pub(crate) MaybeUninit<*mut u8>);

/// The one-word layout. `EMBED` allows embedding values that fit;
/// use the aliases [`Auto`], [`Embedded`] and [`Leaf`].
pub struct Word<V, const EMBED: bool>(PhantomData<V>);

/// Embedded when `V` fits a word, otherwise a leaf.
pub type Auto<V> = Word<V, true>;

/// `V` stored in the slot word itself. The `radix_tree!` macro checks at
/// compile time that `V` fits; PostgreSQL calls this an embedded value.
pub type Embedded<V> = Word<V, true>;

/// Every `V` in its own leaf allocation, the slot pointing to it.
pub type Leaf<V> = Word<V, false>;

impl<V, const EMBED: bool> Word<V, EMBED> {
    /// Whether values are stored in the slot word rather than in leaves.
    pub const EMBEDS: bool = EMBED
        && size_of::<V>() <= size_of::<SlotWord>()
        && align_of::<V>() <= align_of::<SlotWord>();

    /// The leaf a slot refers to.
    ///
    /// # Safety
    ///
    /// The slot holds a stored leaf reference that `into_slot` wrote on
    /// `mem`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn leaf<M: Memory>(slot: NonNull<SlotWord>, mem: &M) -> NonNull<V> {
        // SAFETY: the caller's contract; a stored reference is one word.
        unsafe { mem.resolve(slot.cast::<M::Ref>().read()).cast() }
    }
}

impl<V, const EMBED: bool> crate::sealed::Sealed for Word<V, EMBED> {}

// SAFETY: embedded values live in the slot and are read/dropped exactly
// once; leaves are allocated with `Layout::new::<V>()` and freed with it,
// and the slot holds the back end's stored reference to the leaf.
unsafe impl<V, const EMBED: bool> ValueLayout for Word<V, EMBED> {
    type Value = V;
    type Slot = SlotWord;
    type Input<'a>
        = V
    where
        Self: 'a;
    type Old = Option<V>;
    const NAME: &'static str = if Self::EMBEDS { "embedded" } else { "leaf" };
    const VISIT_ON_DROP: bool = !Self::EMBEDS || needs_drop::<V>();
    /// A leaf reference is never null (an embedded value may be all zeros).
    const NONNULL_SLOT: bool = !Self::EMBEDS;
    const DROPS_VALUES: bool = needs_drop::<V>();
    const VALUE_SIZE: usize = size_of::<V>();
    const VALUE_ALIGN: usize = align_of::<V>();

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn absent() -> Option<V> {
        None
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn into_slot<M: Memory>(value: V, mem: &mut M) -> Result<SlotWord, M::Error> {
        const { assert!(size_of::<M::Ref>() == size_of::<SlotWord>()) };
        let mut word = MaybeUninit::<*mut u8>::uninit();
        if Self::EMBEDS {
            // SAFETY: `V` fits the word in size and alignment.
            unsafe { word.as_mut_ptr().cast::<V>().write(value) };
        } else {
            let leaf = mem.alloc_leaf(Layout::new::<V>())?.cast::<V>();
            // SAFETY: a fresh allocation for one `V`; a stored reference is
            // one word, as the assertion above checks.
            unsafe {
                leaf.write(value);
                word.as_mut_ptr()
                    .cast::<M::Ref>()
                    .write(mem.to_ref(leaf.cast()));
            }
        }
        Ok(SlotWord(word))
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn get<'a, M: Memory>(slot: NonNull<SlotWord>, mem: &M) -> &'a V {
        // SAFETY: the slot holds a live value, embedded or in its leaf.
        unsafe {
            if Self::EMBEDS {
                slot.cast::<V>().as_ref()
            } else {
                Self::leaf(slot, mem).as_ref()
            }
        }
    }

    #[inline]
    unsafe fn take<M: Memory>(slot: SlotWord, mem: &mut M) -> Option<V> {
        // SAFETY: the caller's contract is `into_value`'s.
        Some(unsafe { <Self as MutableLayout>::into_value(slot, mem) })
    }

    #[inline]
    unsafe fn drop_slot<M: Memory>(slot: NonNull<SlotWord>, mem: &mut M) {
        // SAFETY: the slot value is live and dropped here exactly once.
        unsafe {
            if Self::EMBEDS {
                slot.cast::<V>().drop_in_place();
            } else {
                let leaf = Self::leaf(slot, mem);
                leaf.drop_in_place();
                mem.free_leaf(leaf.cast(), Layout::new::<V>());
            }
        }
    }

    #[inline]
    unsafe fn is_leaf(_slot: NonNull<SlotWord>) -> bool {
        !Self::EMBEDS
    }
}

// SAFETY: as `get`, with exclusive access promised by the caller.
unsafe impl<V, const EMBED: bool> MutableLayout for Word<V, EMBED> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn get_mut<'a, M: Memory>(slot: NonNull<SlotWord>, mem: &M) -> &'a mut V {
        // SAFETY: the slot holds a live value; access is exclusive.
        unsafe {
            if Self::EMBEDS {
                slot.cast::<V>().as_mut()
            } else {
                Self::leaf(slot, mem).as_mut()
            }
        }
    }

    #[inline]
    unsafe fn into_value<M: Memory>(slot: SlotWord, mem: &mut M) -> V {
        // SAFETY: the slot value is live and consumed here exactly once.
        unsafe {
            if Self::EMBEDS {
                slot.0.as_ptr().cast::<V>().read()
            } else {
                let mut slot = slot;
                let leaf = Self::leaf(NonNull::from(&mut slot), mem);
                let value = leaf.read();
                mem.free_leaf(leaf.cast(), Layout::new::<V>());
                value
            }
        }
    }

    #[inline]
    unsafe fn move_slot<M: crate::mem::InfallibleMemory>(
        slot: SlotWord,
        src: &mut M,
        dst: &mut M,
    ) -> SlotWord {
        // SAFETY: the caller's contract: a live slot value made on `src`;
        // a leaf handed over is `dst`'s from then on, referred to by a
        // reference remade on `dst`.
        unsafe {
            let mut slot = slot;
            if !Self::EMBEDS {
                let leaf = Self::leaf(NonNull::from(&mut slot), src);
                if src.hand_over_leaf(dst, leaf.cast(), Layout::new::<V>()) {
                    let mut word = MaybeUninit::<*mut u8>::uninit();
                    word.as_mut_ptr()
                        .cast::<M::Ref>()
                        .write(dst.to_ref(leaf.cast()));
                    return SlotWord(word);
                }
            }
            let value = Self::into_value(slot, src);
            let Ok(slot) = Self::into_slot(value, dst);
            slot
        }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn input<'a>(value: V) -> V
    where
        Self: 'a,
    {
        value
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn old_value(old: Option<V>) -> Option<V> {
        old
    }
}
