//! The entry API: one lookup, then read, change, insert or remove what it
//! found.
//!
//! [`RawTree::entry`] descends once. An [`OccupiedEntry`] keeps the value
//! slot it found, so `get`, `get_mut`, `insert` and `into_mut` touch that
//! slot and nothing else. A [`VacantEntry`] keeps the path of the failed
//! lookup where it can: when the key's last-level node exists (the usual
//! case for dense keys), the lookup leaves the tree's insert hint on that
//! node, and the insert goes straight to it without a second descent.
//! Otherwise (a missing inner node, or a compressed tree, whose insert
//! reshapes prefixes) the insert descends again.
//!
//! Removing an occupied entry descends again: removal must revisit the
//! path to shrink and free nodes bottom-up.

use core::fmt;
use core::ptr::NonNull;

use crate::config::{Config, RefOf, Removable};
use crate::key::{Key, SPAN};
use crate::mem::InfallibleMemory;
use crate::raw::{
    InsertHint, LayoutOf, RawTree, SlotOf, ValueOf, find_slot, find_value_slot, follow,
};
use crate::value::{MutableLayout, ValueLayout};

/// A view into a single key of a tree, present or not. Made by
/// [`RawTree::entry`].
///
/// ```
/// use radix_core::{Entry, RadixMap};
///
/// let mut m: RadixMap<u64, &str> = RadixMap::new();
/// m.insert(1, "one");
/// assert!(matches!(m.entry(1), Entry::Occupied(_)));
/// match m.entry(2) {
///     Entry::Vacant(e) => {
///         e.insert("two");
///     }
///     Entry::Occupied(_) => unreachable!(),
/// }
/// assert_eq!(m[2], "two");
/// ```
pub enum Entry<'a, C: Config> {
    /// The key is absent.
    Vacant(VacantEntry<'a, C>),
    /// The key is present.
    Occupied(OccupiedEntry<'a, C>),
}

/// A view into an absent key. Part of [`Entry`].
///
/// ```
/// use radix_core::{Entry, RadixMap};
///
/// let mut m: RadixMap<u64, u32> = RadixMap::new();
/// if let Entry::Vacant(e) = m.entry(5) {
///     let value = e.insert(1);
///     *value += 1;
/// }
/// assert_eq!(m[5], 2);
/// ```
pub struct VacantEntry<'a, C: Config> {
    tree: &'a mut RawTree<C>,
    key: C::Key,
}

/// A view into a present key, holding its value slot. Part of [`Entry`].
///
/// ```
/// use radix_core::{Entry, RadixMap};
///
/// let mut m: RadixMap<u64, u32> = [(5, 1)].into_iter().collect();
/// if let Entry::Occupied(mut e) = m.entry(5) {
///     *e.get_mut() += 1;
///     assert_eq!(e.remove(), 2);
/// }
/// assert!(m.is_empty());
/// ```
pub struct OccupiedEntry<'a, C: Config> {
    tree: &'a mut RawTree<C>,
    key: C::Key,
    slot: NonNull<SlotOf<C>>,
}

// SAFETY: an occupied entry is the exclusive borrow of its tree plus a
// slot inside it that only this borrow reaches: sending it is sending the
// `&mut RawTree` (`Send` when the tree is), and sharing it shares nothing
// `&RawTree` would not (`Sync` when the tree is). As std's entries.
unsafe impl<C: Config> Send for OccupiedEntry<'_, C> where RawTree<C>: Send {}
// SAFETY: as above.
unsafe impl<C: Config> Sync for OccupiedEntry<'_, C> where RawTree<C>: Sync {}

impl<C: Config> RawTree<C>
where
    C::Memory: InfallibleMemory,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    /// The entry for `key`, for in-place reading, changing, inserting or
    /// removing, with a single descent.
    ///
    /// ```
    /// radix_core::radix_tree! {
    ///     /// Word counts.
    ///     pub struct Counts { key: u64, value: u32 }
    /// }
    ///
    /// let mut c = Counts::new();
    /// for word in [7, 3, 7] {
    ///     *c.entry(word).or_insert(0) += 1;
    /// }
    /// assert_eq!(c.iter().collect::<Vec<_>>(), [(3, &1), (7, &2)]);
    /// ```
    pub fn entry(&mut self, key: C::Key) -> Entry<'_, C> {
        crate::raw::refuse_ranges!(C, "entry");
        match self.find_for_entry(key) {
            Some(slot) => Entry::Occupied(OccupiedEntry {
                tree: self,
                key,
                slot,
            }),
            None => Entry::Vacant(VacantEntry { tree: self, key }),
        }
    }

    /// The entry of the smallest key, if any, for reading, changing or
    /// removing it in place, as `BTreeMap::first_entry`.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m = RadixMap::<u32, u32>::from([(1, 10), (2, 20)]);
    /// if let Some(mut first) = m.first_entry() {
    ///     *first.get_mut() += 1;
    /// }
    /// assert_eq!(m[1], 11);
    /// ```
    pub fn first_entry(&mut self) -> Option<OccupiedEntry<'_, C>> {
        crate::raw::refuse_ranges!(C, "first_entry");
        let (key, _) = self.first_key_value()?;
        self.occupied(key)
    }

    /// The entry of the largest key, if any, as `BTreeMap::last_entry`.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m = RadixMap::<u32, u32>::from([(1, 10), (2, 20)]);
    /// assert_eq!(m.last_entry().map(|e| e.remove_entry()), Some((2, 20)));
    /// assert_eq!(m.len(), 1);
    /// ```
    pub fn last_entry(&mut self) -> Option<OccupiedEntry<'_, C>> {
        crate::raw::refuse_ranges!(C, "last_entry");
        let (key, _) = self.last_key_value()?;
        self.occupied(key)
    }

    /// The entry of `key`, known present.
    fn occupied(&mut self, key: C::Key) -> Option<OccupiedEntry<'_, C>> {
        let slot = self.find(key)?;
        Some(OccupiedEntry {
            tree: self,
            key,
            slot,
        })
    }

    /// [`find`](Self::find), leaving the insert hint on `key`'s last-level
    /// node when the lookup reaches it but not the key, so that inserting
    /// the key next needs no descent.
    fn find_for_entry(&mut self, key: C::Key) -> Option<NonNull<SlotOf<C>>> {
        // A last-level root gets no hint (see `try_insert_with_old`).
        if !C::COMPRESSION.is_none() || self.root_shift == 0 || key.above(self.root_shift) {
            return self.find(key);
        }
        let mut loc: NonNull<RefOf<C>> = NonNull::from(self.root.as_mut()?);
        let mut shift = self.root_shift;
        // SAFETY: as in `try_insert_with_old`: `loc` points at a live slot
        // holding a live node reference; above the last level slots are
        // child references.
        unsafe {
            while shift > 0 {
                let node = follow::<C>(&self.mem, loc.read());
                loc = find_slot::<RefOf<C>>(node, key.chunk(shift))?;
                shift -= SPAN;
            }
            let node = follow::<C>(&self.mem, loc.read());
            let slot = find_value_slot::<C>(node, key.chunk(0));
            if slot.is_none() {
                // `loc` is a child slot (the root is above the last level),
                // and nothing changes the tree before the insert it serves.
                self.hint = InsertHint {
                    prefix: key.clear_below(0),
                    slot: loc,
                };
            }
            slot
        }
    }

    /// Inserts `value` under the absent `key` and returns its slot: from
    /// the last-level node the insert hint names when it names `key`'s (one
    /// node search), otherwise by a lookup.
    fn insert_absent(&mut self, key: C::Key, value: ValueOf<C>) -> NonNull<SlotOf<C>> {
        self.insert(key, LayoutOf::<C>::input(value));
        let slot = match self.hint.get(key.clear_below(0)) {
            // SAFETY: a valid hint holds the live last-level node of keys
            // with this prefix (see `try_insert_with_old`).
            Some(loc) => unsafe {
                find_value_slot::<C>(follow::<C>(&self.mem, loc.read()), key.chunk(0))
            },
            None => self.find(key),
        };
        match slot {
            Some(slot) => slot,
            None => unreachable!("a key just inserted is present"),
        }
    }
}

impl<'a, C: Config> Entry<'a, C>
where
    C::Memory: InfallibleMemory,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    /// The value, inserting `default` first if the key is absent.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m = RadixMap::<u64, u32>::new();
    /// assert_eq!(*m.entry(1).or_insert(10), 10);
    /// *m.entry(1).or_insert(99) += 1; // present: 99 is not used
    /// assert_eq!(m[1], 11);
    /// ```
    pub fn or_insert(self, default: ValueOf<C>) -> &'a mut ValueOf<C> {
        match self {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(entry) => entry.insert(default),
        }
    }

    /// The value, inserting the result of `default` first if the key is
    /// absent.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m = RadixMap::<u64, Vec<u32>>::new();
    /// m.entry(4).or_insert_with(Vec::new).push(1);
    /// m.entry(4).or_insert_with(|| unreachable!()).push(2);
    /// assert_eq!(m[4], [1, 2]);
    /// ```
    pub fn or_insert_with<F: FnOnce() -> ValueOf<C>>(self, default: F) -> &'a mut ValueOf<C> {
        match self {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(entry) => entry.insert(default()),
        }
    }

    /// The value, inserting `default(key)` first if the key is absent.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m = RadixMap::<u64, u64>::new();
    /// assert_eq!(*m.entry(21).or_insert_with_key(|k| k * 2), 42);
    /// assert_eq!(*m.entry(21).or_insert_with_key(|k| k * 3), 42);
    /// ```
    pub fn or_insert_with_key<F: FnOnce(C::Key) -> ValueOf<C>>(
        self,
        default: F,
    ) -> &'a mut ValueOf<C> {
        match self {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(entry) => {
                let value = default(entry.key);
                entry.insert(value)
            }
        }
    }

    /// The value, inserting `V::default()` first if the key is absent.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m = RadixMap::<u64, u32>::new();
    /// for key in [5, 1, 5] {
    ///     *m.entry(key).or_default() += 1;
    /// }
    /// assert_eq!(m.iter().collect::<Vec<_>>(), [(1, &1), (5, &2)]);
    /// ```
    pub fn or_default(self) -> &'a mut ValueOf<C>
    where
        ValueOf<C>: Default,
    {
        self.or_insert_with(Default::default)
    }

    /// Calls `f` on the value if the key is present, and returns the entry.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m = RadixMap::<u64, u32>::new();
    /// m.entry(1).and_modify(|v| *v += 1).or_insert(0);
    /// assert_eq!(m[1], 0);
    /// m.entry(1).and_modify(|v| *v += 1).or_insert(0);
    /// assert_eq!(m[1], 1);
    /// ```
    #[must_use]
    pub fn and_modify<F: FnOnce(&mut ValueOf<C>)>(self, f: F) -> Self {
        match self {
            Entry::Occupied(mut entry) => {
                f(entry.get_mut());
                Entry::Occupied(entry)
            }
            vacant => vacant,
        }
    }

    /// The entry's key.
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut m: RadixMap<u64, u32> = [(1, 10)].into_iter().collect();
    /// assert_eq!(m.entry(1).key(), 1);
    /// assert_eq!(m.entry(2).key(), 2);
    /// ```
    pub fn key(&self) -> C::Key {
        match self {
            Entry::Occupied(entry) => entry.key,
            Entry::Vacant(entry) => entry.key,
        }
    }
}

impl<'a, C: Config> VacantEntry<'a, C>
where
    C::Memory: InfallibleMemory,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    /// The key that would be inserted.
    ///
    /// ```
    /// use radix_core::{Entry, RadixMap};
    ///
    /// let mut m = RadixMap::<u64, u32>::new();
    /// if let Entry::Vacant(e) = m.entry(3) {
    ///     assert_eq!(e.key(), 3);
    /// }
    /// ```
    pub fn key(&self) -> C::Key {
        self.key
    }

    /// The key, giving up the entry.
    ///
    /// ```
    /// use radix_core::{Entry, RadixMap};
    ///
    /// let mut m = RadixMap::<u64, u32>::new();
    /// if let Entry::Vacant(e) = m.entry(3) {
    ///     assert_eq!(e.into_key(), 3);
    /// }
    /// assert!(m.is_empty()); // nothing was inserted
    /// ```
    pub fn into_key(self) -> C::Key {
        self.key
    }

    /// Stores `value` under the entry's key and returns it, mutably.
    ///
    /// ```
    /// use radix_core::{Entry, RadixMap};
    ///
    /// let mut m = RadixMap::<u64, u32>::new();
    /// if let Entry::Vacant(e) = m.entry(3) {
    ///     *e.insert(1) *= 10;
    /// }
    /// assert_eq!(m[3], 10);
    /// ```
    pub fn insert(self, value: ValueOf<C>) -> &'a mut ValueOf<C> {
        let slot = self.tree.insert_absent(self.key, value);
        // SAFETY: the slot is live and the tree exclusively borrowed for 'a.
        unsafe { LayoutOf::<C>::get_mut(slot, &self.tree.mem) }
    }
}

impl<'a, C: Config> OccupiedEntry<'a, C>
where
    C::Memory: InfallibleMemory,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    /// The entry's key.
    ///
    /// ```
    /// use radix_core::{Entry, RadixMap};
    ///
    /// let mut m: RadixMap<u64, u32> = [(3, 30)].into_iter().collect();
    /// let Entry::Occupied(o) = m.entry(3) else { unreachable!() };
    /// assert_eq!(o.key(), 3);
    /// ```
    pub fn key(&self) -> C::Key {
        self.key
    }

    /// The value.
    ///
    /// ```
    /// use radix_core::{Entry, RadixMap};
    ///
    /// let mut m: RadixMap<u64, u32> = [(3, 30)].into_iter().collect();
    /// let Entry::Occupied(o) = m.entry(3) else { unreachable!() };
    /// assert_eq!(o.get(), &30);
    /// ```
    pub fn get(&self) -> &ValueOf<C> {
        // SAFETY: the slot is live while the tree is borrowed by the entry.
        unsafe { LayoutOf::<C>::get(self.slot, &self.tree.mem) }
    }

    /// The value, mutably, for as long as the entry is borrowed.
    ///
    /// ```
    /// use radix_core::{Entry, RadixMap};
    ///
    /// let mut m: RadixMap<u64, u32> = [(3, 30)].into_iter().collect();
    /// let Entry::Occupied(mut o) = m.entry(3) else { unreachable!() };
    /// *o.get_mut() += 1;
    /// *o.get_mut() += 1; // the entry is still usable
    /// assert_eq!(o.get(), &32);
    /// ```
    pub fn get_mut(&mut self) -> &mut ValueOf<C> {
        // SAFETY: the slot is live and the entry borrowed exclusively.
        unsafe { LayoutOf::<C>::get_mut(self.slot, &self.tree.mem) }
    }

    /// The value, mutably, for as long as the tree is borrowed.
    ///
    /// ```
    /// use radix_core::{Entry, RadixMap};
    ///
    /// let mut m: RadixMap<u64, u32> = [(3, 30)].into_iter().collect();
    /// let value: &mut u32 = match m.entry(3) {
    ///     Entry::Occupied(o) => o.into_mut(),
    ///     Entry::Vacant(v) => v.insert(0),
    /// };
    /// *value += 1;
    /// assert_eq!(m[3], 31);
    /// ```
    pub fn into_mut(self) -> &'a mut ValueOf<C> {
        // SAFETY: the slot is live and the tree exclusively borrowed for 'a.
        unsafe { LayoutOf::<C>::get_mut(self.slot, &self.tree.mem) }
    }

    /// Replaces the value, returning the old one. Touches only the slot.
    ///
    /// ```
    /// use radix_core::{Entry, RadixMap};
    ///
    /// let mut m: RadixMap<u64, u32> = [(3, 30)].into_iter().collect();
    /// let Entry::Occupied(mut o) = m.entry(3) else { unreachable!() };
    /// assert_eq!(o.insert(40), 30);
    /// assert_eq!(m[3], 40);
    /// ```
    pub fn insert(&mut self, value: ValueOf<C>) -> ValueOf<C> {
        core::mem::replace(self.get_mut(), value)
    }
}

impl<C: Config> OccupiedEntry<'_, C>
where
    C: Removable,
    C::Memory: InfallibleMemory,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    /// Removes the key, returning its value.
    ///
    /// ```
    /// use radix_core::{Entry, RadixMap};
    ///
    /// let mut m: RadixMap<u64, u32> = [(3, 30)].into_iter().collect();
    /// let Entry::Occupied(o) = m.entry(3) else { unreachable!() };
    /// assert_eq!(o.remove(), 30);
    /// assert!(!m.contains_key(3));
    /// ```
    pub fn remove(self) -> ValueOf<C> {
        self.remove_entry().1
    }

    /// Removes the key, returning it and its value.
    ///
    /// ```
    /// use radix_core::{Entry, RadixMap};
    ///
    /// let mut m: RadixMap<u64, u32> = [(3, 30)].into_iter().collect();
    /// let Entry::Occupied(o) = m.entry(3) else { unreachable!() };
    /// assert_eq!(o.remove_entry(), (3, 30));
    /// assert!(m.is_empty());
    /// ```
    pub fn remove_entry(self) -> (C::Key, ValueOf<C>) {
        match LayoutOf::<C>::old_value(self.tree.remove(self.key)) {
            Some(value) => (self.key, value),
            None => unreachable!("an occupied entry's key is present"),
        }
    }
}

impl<C: Config> fmt::Debug for Entry<'_, C>
where
    C::Memory: InfallibleMemory,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized + fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Entry::Vacant(entry) => f.debug_tuple("Entry").field(entry).finish(),
            Entry::Occupied(entry) => f.debug_tuple("Entry").field(entry).finish(),
        }
    }
}

impl<C: Config> fmt::Debug for VacantEntry<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("VacantEntry").field(&self.key).finish()
    }
}

impl<C: Config> fmt::Debug for OccupiedEntry<'_, C>
where
    C::Memory: InfallibleMemory,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized + fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OccupiedEntry")
            .field("key", &self.key)
            .field("value", self.get())
            .finish()
    }
}
