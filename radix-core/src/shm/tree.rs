//! Shared trees: a tree in an area, and the guards that read and write it.

use core::fmt;
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::ops::{Deref, RangeBounds};
use core::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

use super::area::AreaInner;
use super::control::{FINGERPRINT_WORDS, TREE_FREE, TREE_LIVE, TreeSlot, USER_WORDS};
use super::lock::PidMutexGuard;
use super::memory::{Offset, init_pools};
use super::{Area, SharedMemory, ShmError, TreeHandle};
use crate::config::{Compression, Config, Removable};
use crate::key::Key;
use crate::mem::PoolSpec;
use crate::raw::{InputOf, LayoutOf, OldOf, ValueOf};
use crate::value::{MutableLayout, ValueLayout};
use crate::{Cursor, Iter, IterMut, Keys, Range, RangeMut, RawTree, Stats, Values, ValuesMut};

/// What a fingerprint's words mean, for error messages.
const PARTS: [&str; FINGERPRINT_WORDS] = [
    "key width",
    "value layout",
    "value size",
    "value alignment",
    "size classes",
    "delete",
    "compression",
    "concurrency",
];

/// The configuration as an area records it: key width, value layout, value
/// size and alignment, size classes, whether delete exists, the
/// compression, and whether the tree is concurrent.
pub(crate) fn fingerprint<C: Config>(concurrent: bool) -> [u64; FINGERPRINT_WORDS] {
    let mut name = [0u8; 8];
    let layout = LayoutOf::<C>::NAME.as_bytes();
    name[..layout.len().min(8)].copy_from_slice(&layout[..layout.len().min(8)]);
    [
        u64::from(C::Key::BITS),
        u64::from_le_bytes(name),
        LayoutOf::<C>::VALUE_SIZE as u64,
        LayoutOf::<C>::VALUE_ALIGN as u64,
        C::SIZE_CLASSES.fingerprint(),
        u64::from(C::DELETE),
        C::COMPRESSION as u64,
        u64::from(concurrent),
    ]
}

/// One fingerprint word, readable.
fn describe(part: usize, word: u64) -> String {
    match part {
        0 => format!("u{word}"),
        1 => String::from_utf8_lossy(&word.to_le_bytes())
            .trim_end_matches('\0')
            .to_string(),
        2 if word == 0 => "run-time sized".to_string(),
        2 | 3 => format!("{word} bytes"),
        4 => format!("class list fingerprint {word:#018x}"),
        6 => [
            Compression::None,
            Compression::Lazy,
            Compression::Path,
            Compression::Full,
        ]
        .into_iter()
        .find(|c| *c as u64 == word)
        .map_or_else(
            || format!("unknown compression {word}"),
            |c| c.name().to_string(),
        ),
        7 => if word == 0 { "none" } else { "rowex" }.to_string(),
        _ => (word != 0).to_string(),
    }
}

/// Takes a free tree slot of the area for a new tree with `fingerprint`,
/// node pools of `specs` and root word `root`: its index and generation.
pub(crate) fn new_tree_slot(
    inner: &AreaInner,
    _lock: &PidMutexGuard<'_>,
    fingerprint: [u64; FINGERPRINT_WORDS],
    specs: &[PoolSpec],
    root: u64,
) -> Result<(usize, u32), ShmError> {
    if inner.control().destroyed.load(Acquire) != 0 {
        return Err(ShmError::AreaDestroyed);
    }
    let max = inner.max_trees();
    let index = (0..max)
        .find(|&i| inner.tree_slot(i).state.load(Acquire) == TREE_FREE)
        .ok_or(ShmError::TooManyTrees { max })?;
    let slot = inner.tree_slot(index);
    slot.lock.reset();
    for (word, value) in slot.fingerprint.iter().zip(fingerprint) {
        word.store(value, Relaxed);
    }
    slot.root.store(root, Relaxed);
    slot.root_shift.store(0, Relaxed);
    slot.len.store(0, Relaxed);
    for word in &slot.user {
        word.store(0, Relaxed);
    }
    init_pools(slot, specs);
    let generation = slot.generation.load(Relaxed).wrapping_add(1).max(1);
    slot.generation.store(generation, Relaxed);
    slot.state.store(TREE_LIVE, Release);
    Ok((index, generation))
}

/// Checks that the tree in `slot` was made with the configuration whose
/// fingerprint is `ours`, naming the first part that differs.
pub(crate) fn check_fingerprint(
    slot: &TreeSlot,
    ours: [u64; FINGERPRINT_WORDS],
) -> Result<(), ShmError> {
    for (part, (word, expected)) in slot.fingerprint.iter().zip(ours).enumerate() {
        let found = word.load(Relaxed);
        if found != expected {
            return Err(ShmError::ConfigMismatch {
                part: PARTS[part],
                expected: describe(part, expected),
                found: describe(part, found),
            });
        }
    }
    Ok(())
}

/// A tree in a shared [`Area`], usable from every process that attaches.
///
/// A `radix_tree!` type declared with `memory: shared` is an alias of it;
/// see [`crate::shm`] for an example across processes. Readers and the
/// writer take the tree's process-shared lock through [`read`](Self::read)
/// and [`write`](Self::write), whose guards release it on drop (also while
/// unwinding); iterators borrow their guard.
pub struct SharedTree<C: Config<Memory = SharedMemory>> {
    area: Area,
    index: usize,
    generation: u32,
    _config: PhantomData<fn() -> C>,
}

impl<C: Config<Memory = SharedMemory>> SharedTree<C> {
    /// Creates an empty tree in `area`.
    ///
    /// # Errors
    ///
    /// [`ShmError::TooManyTrees`] when every tree slot of the area is in
    /// use, [`ShmError::AreaDestroyed`], or the area lock's poison.
    pub fn create_in(area: &Area) -> Result<Self, ShmError> {
        let inner = &area.inner;
        let lock = inner.lock()?;
        let (index, generation) = new_tree_slot(
            inner,
            &lock,
            fingerprint::<C>(false),
            &RawTree::<C>::pool_specs(),
            0,
        )?;
        Ok(Self {
            area: area.clone(),
            index,
            generation,
            _config: PhantomData,
        })
    }

    /// Opens the tree `handle` names in `area`, which another process (or
    /// this one) created.
    ///
    /// # Errors
    ///
    /// [`ShmError::NoSuchTree`] when the handle names no live tree, and
    /// [`ShmError::ConfigMismatch`] naming the part of the configuration
    /// that differs from this type's.
    pub fn attach(area: &Area, handle: TreeHandle) -> Result<Self, ShmError> {
        let tree = Self {
            area: area.clone(),
            index: handle.slot as usize,
            generation: handle.generation,
            _config: PhantomData,
        };
        if tree.index >= area.inner.max_trees() || !tree.is_live() {
            return Err(ShmError::NoSuchTree { handle });
        }
        check_fingerprint(tree.slot(), fingerprint::<C>(false))?;
        Ok(tree)
    }

    /// Adds `delta` to caller-defined word `index` (0 to 3; see
    /// [`TreeView::user_word`]) in one atomic step, without the tree's
    /// lock, and returns the word as it was: how the processes sharing a
    /// tree hand out work among themselves (the next batch of a parallel
    /// walk), each taking what no other takes. The word wraps at
    /// `u64::MAX`.
    ///
    /// ```
    /// # use radix_core::shm::{Area, AreaOptions, Backing};
    /// radix_core::radix_tree! {
    ///     /// Items of a shared work list.
    ///     struct Work { key: u32, value: u64, memory: shared }
    /// }
    /// # let area = Area::create(
    /// #     AreaOptions::default().backing(Backing::Heap).max_segment_size(1 << 20).max_segments(4),
    /// # )?;
    /// let work = Work::create_in(&area)?;
    /// // Two workers each take the next four items.
    /// assert_eq!(work.fetch_add_user_word(0, 4), 0);
    /// assert_eq!(work.fetch_add_user_word(0, 4), 4);
    /// assert_eq!(work.read().user_word(0), 8);
    /// # work.destroy()?;
    /// # Ok::<(), radix_core::shm::ShmError>(())
    /// ```
    ///
    /// # Panics
    ///
    /// If `index` is 4 or more.
    pub fn fetch_add_user_word(&self, index: usize, delta: u64) -> u64 {
        assert!(index < USER_WORDS, "user word {index} of {USER_WORDS}");
        self.slot().user[index].fetch_add(delta, AcqRel)
    }

    /// The handle another process attaches with, beside the area's.
    pub fn handle(&self) -> TreeHandle {
        TreeHandle {
            slot: self.index as u32,
            generation: self.generation,
        }
    }

    /// The area the tree lives in.
    pub fn area(&self) -> &Area {
        &self.area
    }

    fn slot(&self) -> &TreeSlot {
        self.area.inner.tree_slot(self.index)
    }

    fn is_live(&self) -> bool {
        let slot = self.slot();
        slot.state.load(Acquire) == TREE_LIVE && slot.generation.load(Acquire) == self.generation
    }

    /// After taking the lock: the tree still exists and this process maps
    /// every segment it may reach.
    fn check_after_lock(&self) -> Result<(), ShmError> {
        if !self.is_live() {
            return Err(ShmError::NoSuchTree {
                handle: self.handle(),
            });
        }
        self.area.inner.sync()
    }

    fn view(&self) -> TreeView<C> {
        let slot = self.slot();
        let root = Offset::new(slot.root.load(Relaxed));
        let shift = slot.root_shift.load(Relaxed) as u32;
        let len = slot.len.load(Relaxed) as usize;
        // The slot's fingerprint was checked at attach, and the guard that
        // owns the view borrows `self`, which keeps the area mapped.
        // SAFETY: the caller holds the tree's lock, so the slot describes a
        // live tree of this configuration that nobody changes meanwhile.
        let raw = unsafe {
            let mem = SharedMemory::new(&self.area.inner, slot);
            RawTree::from_parts(root, shift, len, mem)
        };
        TreeView {
            raw: ManuallyDrop::new(raw),
        }
    }

    fn lock_read(&self, blocking: bool) -> Result<ReadGuard<'_, C>, ShmError> {
        let reader = self.slot().lock.read(self.area.inner.pid(), blocking)?;
        if let Err(e) = self.check_after_lock() {
            self.slot().lock.read_unlock(reader);
            return Err(e);
        }
        Ok(ReadGuard {
            tree: self,
            view: self.view(),
            reader,
        })
    }

    fn lock_write(&self, blocking: bool) -> Result<WriteGuard<'_, C>, ShmError> {
        self.slot().lock.write(self.area.inner.pid(), blocking)?;
        if let Err(e) = self.check_after_lock() {
            self.slot().lock.write_unlock();
            return Err(e);
        }
        Ok(WriteGuard {
            tree: self,
            view: self.view(),
        })
    }

    /// Takes the read lock, waiting while a writer holds it.
    ///
    /// # Panics
    ///
    /// With the message of [`try_read`](Self::try_read)'s error when the
    /// tree is poisoned (a writer died holding it), destroyed, or a segment
    /// cannot be mapped, as `lock().unwrap()` panics on a poisoned
    /// `std::sync` lock.
    pub fn read(&self) -> ReadGuard<'_, C> {
        self.lock_read(true).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Takes the read lock if no writer holds it.
    ///
    /// # Errors
    ///
    /// [`ShmError::WouldBlock`] while a writer holds the lock (or every
    /// reader slot is taken), [`ShmError::OwnerDied`] once a writer died
    /// holding it, [`ShmError::NoSuchTree`] after the tree was destroyed.
    pub fn try_read(&self) -> Result<ReadGuard<'_, C>, ShmError> {
        self.lock_read(false)
    }

    /// Takes the write lock, waiting for readers and any writer to leave.
    ///
    /// As with `std::sync::RwLock`, a thread that holds a read guard of
    /// this tree and asks for the write lock waits forever.
    ///
    /// # Panics
    ///
    /// As [`read`](Self::read).
    pub fn write(&self) -> WriteGuard<'_, C> {
        self.lock_write(true).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Takes the write lock if nobody holds the lock.
    ///
    /// # Errors
    ///
    /// As [`try_read`](Self::try_read).
    pub fn try_write(&self) -> Result<WriteGuard<'_, C>, ShmError> {
        self.lock_write(false)
    }

    /// Frees every node and leaf of the tree back to the area and removes
    /// the tree; afterwards the area's usage is what it was before the
    /// tree's first insert. Meant for the creator, once no other process
    /// uses the tree; handles others hold then report
    /// [`ShmError::NoSuchTree`].
    ///
    /// # Errors
    ///
    /// [`ShmError::OwnerDied`] for a poisoned tree: its nodes may be
    /// half-linked, so they stay in the area until the area goes.
    pub fn destroy(self) -> Result<(), ShmError> {
        let mut guard = self.lock_write(true)?;
        guard.view.raw.clear();
        let lock = self.area.inner.lock();
        self.slot().state.store(TREE_FREE, Release);
        drop(lock);
        drop(guard);
        Ok(())
    }

    /// The tree itself. Shared `radix_tree!` types were newtypes around
    /// `SharedTree` before they became aliases of it, and had this method
    /// to reach it; it stays so that code written then compiles.
    #[doc(hidden)]
    #[must_use]
    pub fn as_shared(&self) -> &Self {
        self
    }
}

impl<C: Config<Memory = SharedMemory>> fmt::Debug for SharedTree<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedTree")
            .field("area", &self.area.handle().to_string())
            .field("tree", &self.handle().to_string())
            .field("poisoned_by", &self.slot().lock.poisoned_by())
            .finish()
    }
}

/// A locked shared tree, read-only: what both guards dereference to.
///
/// Everything here reads the tree as the lock holder sees it; iterators
/// borrow the guard, so none can outlive the lock.
pub struct TreeView<C: Config<Memory = SharedMemory>> {
    raw: ManuallyDrop<RawTree<C>>,
}

impl<C: Config<Memory = SharedMemory>> TreeView<C> {
    /// The value stored under `key`, if any.
    #[inline]
    pub fn get(&self, key: C::Key) -> Option<&ValueOf<C>> {
        self.raw.get(key)
    }

    /// Looks up the key of every item, in order, as
    /// [`RawTree::get_each`] does: pipelined and sharing walks, for a
    /// batch of lookups under one lock.
    #[inline]
    pub fn get_each<T>(
        &self,
        items: &[T],
        key: impl Fn(&T) -> C::Key,
        found: impl FnMut(&T, Option<&ValueOf<C>>),
    ) {
        self.raw.get_each(items, key, found);
    }

    /// Whether `key` is present.
    #[inline]
    pub fn contains_key(&self, key: C::Key) -> bool {
        self.raw.contains_key(key)
    }

    /// The entries as `(key, &value)`, in ascending key order.
    pub fn iter(&self) -> Iter<'_, C> {
        self.raw.iter()
    }

    /// The entries whose keys lie in `range`, in ascending key order.
    pub fn range<R: RangeBounds<C::Key>>(&self, range: R) -> Range<'_, C> {
        self.raw.range(range)
    }

    /// The keys, ascending.
    pub fn keys(&self) -> Keys<'_, C> {
        self.raw.keys()
    }

    /// The values, in ascending key order.
    pub fn values(&self) -> Values<'_, C> {
        self.raw.values()
    }

    /// The entry with the smallest key, if any.
    pub fn first_key_value(&self) -> Option<(C::Key, &ValueOf<C>)> {
        self.raw.first_key_value()
    }

    /// The entry with the largest key, if any.
    pub fn last_key_value(&self) -> Option<(C::Key, &ValueOf<C>)> {
        self.raw.last_key_value()
    }

    /// The entry with the smallest key at or after `key`, if any (see
    /// [`RawTree::first_at_or_after`]).
    pub fn first_at_or_after(&self, key: C::Key) -> Option<(C::Key, &ValueOf<C>)> {
        self.raw.first_at_or_after(key)
    }

    /// The entry with the largest key at or before `key`, if any (see
    /// [`RawTree::last_at_or_before`]).
    pub fn last_at_or_before(&self, key: C::Key) -> Option<(C::Key, &ValueOf<C>)> {
        self.raw.last_at_or_before(key)
    }

    /// A cursor in the gap just before the first entry at or after `key`
    /// (see [`RawTree::cursor_at`]): for a worker that probes keys in
    /// ascending order, [`Cursor::seek_get`] starts each lookup from where
    /// the last one ended.
    pub fn cursor_at(&self, key: C::Key) -> Cursor<'_, C> {
        self.raw.cursor_at(key)
    }

    /// A cursor before the first entry.
    pub fn cursor_front(&self) -> Cursor<'_, C> {
        self.raw.cursor_front()
    }

    /// Whether every key of this tree is in `other` (values are not
    /// compared); `other` may be this tree's own view or another tree's.
    pub fn is_subset(&self, other: &TreeView<C>) -> bool {
        self.raw.is_subset(&other.raw)
    }

    /// Whether every key of `other` is in this tree.
    pub fn is_superset(&self, other: &TreeView<C>) -> bool {
        self.raw.is_superset(&other.raw)
    }

    /// Whether this tree and `other` have no key in common.
    pub fn is_disjoint(&self, other: &TreeView<C>) -> bool {
        self.raw.is_disjoint(&other.raw)
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// Whether the tree holds no keys.
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// The area's total segment size, as PostgreSQL reports for a shared
    /// tree: what a memory budget compares with.
    pub fn memory_usage(&self) -> usize {
        self.raw.memory_usage()
    }

    /// The tree's shape: keys, height, nodes per class, leaves. O(n).
    pub fn stats(&self) -> Stats {
        self.raw.stats()
    }

    /// Checks the tree's invariants (see [`RawTree::verify`]). O(n).
    ///
    /// # Errors
    ///
    /// A description of the first broken invariant.
    pub fn verify(&self) -> Result<(), String> {
        self.raw.verify()
    }

    /// Caller-defined word `index` (0 to 3) stored beside the tree, for
    /// metadata that must change with it under the same lock (the shared
    /// TID store keeps its TID count there). 0 in a new tree.
    ///
    /// # Panics
    ///
    /// If `index` is 4 or more.
    pub fn user_word(&self, index: usize) -> u64 {
        assert!(index < USER_WORDS, "user word {index} of {USER_WORDS}");
        self.raw.memory().user_word(index)
    }
}

impl<C: Config<Memory = SharedMemory>> fmt::Debug for TreeView<C>
where
    ValueOf<C>: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.raw, f)
    }
}

/// The read lock of a [`SharedTree`]; released on drop. Dereferences to
/// [`TreeView`] for every read.
pub struct ReadGuard<'a, C: Config<Memory = SharedMemory>> {
    tree: &'a SharedTree<C>,
    view: TreeView<C>,
    reader: usize,
}

impl<C: Config<Memory = SharedMemory>> Deref for ReadGuard<'_, C> {
    type Target = TreeView<C>;

    fn deref(&self) -> &TreeView<C> {
        &self.view
    }
}

impl<C: Config<Memory = SharedMemory>> Drop for ReadGuard<'_, C> {
    fn drop(&mut self) {
        self.tree.slot().lock.read_unlock(self.reader);
    }
}

impl<C: Config<Memory = SharedMemory>> fmt::Debug for ReadGuard<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadGuard")
            .field("tree", self.tree)
            .field("len", &self.len())
            .finish()
    }
}

/// The write lock of a [`SharedTree`]; released on drop, also while
/// unwinding. Dereferences to [`TreeView`] for reads, and adds the writes.
///
/// The guard publishes the tree's root and length for the next lock holder
/// when it is dropped, also while unwinding: every write leaves the tree
/// consistent before it returns, so a writer that panics leaves a usable
/// tree. One that dies while holding the guard leaves the lock poisoned.
pub struct WriteGuard<'a, C: Config<Memory = SharedMemory>> {
    tree: &'a SharedTree<C>,
    view: TreeView<C>,
}

impl<C: Config<Memory = SharedMemory>> WriteGuard<'_, C> {
    /// Makes the tree's root and length visible to the next lock holder.
    fn publish(&mut self) {
        let (root, shift, len) = self.view.raw.parts();
        let slot = self.tree.slot();
        slot.root.store(root.map_or(0, |r| r.get() as u64), Relaxed);
        slot.root_shift.store(u64::from(shift), Relaxed);
        slot.len.store(len as u64, Relaxed);
    }

    /// After a write: a failed one may have reserved nodes it did not use.
    #[inline]
    fn settle<T>(&mut self, result: Result<T, ShmError>) -> Result<T, ShmError> {
        if result.is_err() {
            self.view.raw.memory_mut().clear_reservations();
        }
        result
    }

    /// Stores `value` under `key`, returning the previous value (for
    /// `varlen` layouts: whether there was one).
    ///
    /// # Errors
    ///
    /// [`ShmError::AreaFull`] (or [`ShmError::TooLarge`]) when the area
    /// cannot provide the memory; the tree is unchanged and holds every
    /// earlier key, and the area is no larger than before.
    #[inline]
    pub fn insert(&mut self, key: C::Key, value: InputOf<'_, C>) -> Result<OldOf<C>, ShmError> {
        let result = self.view.raw.try_insert(key, value);
        self.settle(result)
    }

    /// Stores `value` under `key` as [`insert`](Self::insert) does, first
    /// showing the value it replaces, if any, to `old` (for `varlen`
    /// layouts, whose insert only says whether there was one).
    ///
    /// # Errors
    ///
    /// As [`insert`](Self::insert).
    pub fn insert_with_old(
        &mut self,
        key: C::Key,
        value: InputOf<'_, C>,
        old: impl FnOnce(&ValueOf<C>),
    ) -> Result<OldOf<C>, ShmError> {
        let result = self.view.raw.try_insert_with_old(key, value, old);
        self.settle(result)
    }

    /// Removes `key`, returning its value (for `varlen` layouts: whether it
    /// was present).
    ///
    /// # Errors
    ///
    /// [`ShmError::AreaFull`] in the rare case that a node left sparse
    /// cannot get the smaller node it shrinks into; nothing changed.
    pub fn remove(&mut self, key: C::Key) -> Result<OldOf<C>, ShmError>
    where
        C: Removable,
    {
        let result = self.view.raw.try_remove(key);
        self.settle(result)
    }

    /// The value stored under `key`, mutably.
    pub fn get_mut(&mut self, key: C::Key) -> Option<&mut ValueOf<C>>
    where
        C::Layout: MutableLayout,
    {
        self.view.raw.get_mut(key)
    }

    /// The entries as `(key, &mut value)`, in ascending key order.
    pub fn iter_mut(&mut self) -> IterMut<'_, C>
    where
        C::Layout: MutableLayout,
    {
        self.view.raw.iter_mut()
    }

    /// The entries whose keys lie in `range` as `(key, &mut value)`, in
    /// ascending key order.
    pub fn range_mut<R: RangeBounds<C::Key>>(&mut self, range: R) -> RangeMut<'_, C>
    where
        C::Layout: MutableLayout,
    {
        self.view.raw.range_mut(range)
    }

    /// The values, mutably, in ascending key order.
    pub fn values_mut(&mut self) -> ValuesMut<'_, C>
    where
        C::Layout: MutableLayout,
    {
        self.view.raw.values_mut()
    }

    /// Removes every key, returning all node and leaf memory to the area.
    pub fn clear(&mut self) {
        self.view.raw.clear();
    }

    /// Sets caller-defined word `index` (0 to 3); see
    /// [`TreeView::user_word`].
    ///
    /// # Panics
    ///
    /// If `index` is 4 or more.
    pub fn set_user_word(&mut self, index: usize, value: u64) {
        assert!(index < USER_WORDS, "user word {index} of {USER_WORDS}");
        self.view.raw.memory().set_user_word(index, value);
    }
}

impl<C: Config<Memory = SharedMemory>> Deref for WriteGuard<'_, C> {
    type Target = TreeView<C>;

    fn deref(&self) -> &TreeView<C> {
        &self.view
    }
}

impl<C: Config<Memory = SharedMemory>> Drop for WriteGuard<'_, C> {
    fn drop(&mut self) {
        self.publish();
        self.tree.slot().lock.write_unlock();
    }
}

impl<C: Config<Memory = SharedMemory>> fmt::Debug for WriteGuard<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteGuard")
            .field("tree", self.tree)
            .field("len", &self.len())
            .finish()
    }
}

// The engine's pools must fit the area's pool table.
const _: () = assert!(super::control::NODE_POOLS >= crate::config::MAX_POOLS);
