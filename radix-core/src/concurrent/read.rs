//! Lookups: a walk down with atomic loads, under a pin, taking no lock.

use super::layout::ConcurrentLayout;
use super::node::{Kind, NodeRef, find_tagged, header_of};
use super::reclaim::Pin;
use super::space::{LocalSpace, Space};
use super::{ConcurrentTree, ValueOf};
use crate::config::Config;
use crate::key::Key;

impl<C: Config, S: Space> ConcurrentTree<C, S>
where
    C::Layout: ConcurrentLayout,
{
    /// Finds `key` and calls `f` on its value, under `pin`.
    #[inline(always)]
    pub(super) fn lookup<R>(
        &self,
        pin: &Pin<'_, S::Table>,
        key: C::Key,
        f: impl FnOnce(&ValueOf<C>) -> R,
    ) -> Option<R> {
        // Without path compression a child's shift is its parent's less
        // one chunk, known before the child is loaded; only the root's is
        // read from its header, here, and the shortcut's from its tag.
        let (mut word, mut shift) = match self.shortcut_start(pin, key) {
            Some(start) => start,
            None => {
                let root = pin.load(self.root());
                if root.is_null() {
                    return None;
                }
                let root_is_cell = Self::LAZY && Kind::of(root).is_none();
                if Self::PATH || root_is_cell {
                    (root, 0)
                } else {
                    // SAFETY: a node of this tree, loaded under the pin.
                    let shift = unsafe { header_of::<C::Key>(self.space.resolve(root)) }.shift();
                    if key.above(shift) {
                        return None;
                    }
                    (root, shift)
                }
            }
        };
        loop {
            // Only trees with lazy leaves have cells above the last level.
            // No slot below the root is null: a node's search gives only
            // the slots its presence bits, index or null test find filled.
            if Self::LAZY && Kind::of(word).is_none() {
                // SAFETY: a tag of zero in an inner slot is a lazy leaf, a
                // cell the pin protects.
                return unsafe { (self.cell_key(word) == key).then(|| self.with_cell(word, f)) };
            }
            let node = self.space.resolve(word);
            if Self::PATH {
                // SAFETY: a node of this tree, loaded under the pin.
                let prefix = unsafe { header_of::<C::Key>(node) }.prefix();
                if !key.matches_word(prefix) {
                    return None;
                }
                shift = prefix.word_shift();
            }
            // The last level apart, so that the levels above search with
            // no test for embedded values in a node of 256 (whose slots
            // there hold children, never values).
            if shift == 0 {
                // SAFETY: as above.
                let slot =
                    unsafe { find_tagged::<C::Key>(node, key.chunk(0), pin, Self::values_at(0)) }?;
                // SAFETY: a last-level slot word of this layout, protected.
                return Some(unsafe { self.with_value(slot, f) });
            }
            // SAFETY: as above.
            word = unsafe { find_tagged::<C::Key>(node, key.chunk(shift), pin, false) }?;
            shift -= 8;
        }
    }

    /// The value of `key`, copied out.
    ///
    /// ```
    /// radix_core::radix_tree! {
    ///     pub struct Counts { key: u32, value: u64, concurrency: rowex }
    /// }
    /// let counts = Counts::new();
    /// counts.insert(7, 70);
    /// assert_eq!(counts.get(7), Some(70));
    /// assert_eq!(counts.get(8), None);
    /// ```
    // Inlined into the caller's loop, as the plain tree's lookup is:
    // RT-1's lookups per call took 0.95x the time of a call (alternated).
    #[inline(always)]
    pub fn get(&self, key: C::Key) -> Option<ValueOf<C>>
    where
        ValueOf<C>: Copy,
    {
        self.lookup(&self.reclaimer.pin_scoped(), key, |value| *value)
    }

    /// Calls `f` on the value of `key`, if present, and returns what it
    /// returns: the way to read a value that is not `Copy` without
    /// cloning it. The value stays valid while `f` runs, whatever writers
    /// do meanwhile.
    ///
    /// ```
    /// radix_core::radix_tree! {
    ///     pub struct Names { key: u64, value: String, layout: leaf, concurrency: rowex }
    /// }
    /// let names = Names::new();
    /// names.insert(1, "one".to_string());
    /// assert_eq!(names.get_with(1, |name| name.len()), Some(3));
    /// ```
    #[inline]
    pub fn get_with<R>(&self, key: C::Key, f: impl FnOnce(&ValueOf<C>) -> R) -> Option<R> {
        self.lookup(&self.reclaimer.pin(), key, f)
    }

    /// A clone of the value of `key`.
    pub fn get_cloned(&self, key: C::Key) -> Option<ValueOf<C>>
    where
        ValueOf<C>: Clone,
    {
        self.get_with(key, ValueOf::<C>::clone)
    }

    /// Whether `key` is present.
    #[inline]
    pub fn contains_key(&self, key: C::Key) -> bool {
        self.lookup(&self.reclaimer.pin_scoped(), key, |_| ())
            .is_some()
    }

    /// Looks up a batch of items under one pin, calling `found` with each
    /// item and its key's value, in order. `key` extracts the key from an
    /// item, so items can carry more than the key.
    ///
    /// ```
    /// radix_core::radix_tree! {
    ///     pub struct Squares { key: u32, value: u64, concurrency: rowex }
    /// }
    /// let squares = Squares::new();
    /// for k in 0..100u32 {
    ///     squares.insert(k, u64::from(k * k));
    /// }
    /// let mut sum = 0;
    /// squares.get_each(&[3, 9, 500], |&k| k, |_, value| sum += value.unwrap_or(0));
    /// assert_eq!(sum, 9 + 81);
    /// ```
    pub fn get_each<T>(
        &self,
        items: &[T],
        key: impl Fn(&T) -> C::Key,
        mut found: impl FnMut(&T, Option<ValueOf<C>>),
    ) where
        ValueOf<C>: Copy,
    {
        self.get_each_with(items, key, |item, value| found(item, value.copied()));
    }
}

impl<C: Config, S: Space> ConcurrentTree<C, S>
where
    C::Layout: ConcurrentLayout,
{
    /// Looks up a batch of items under one pin, as
    /// [`get_each`](Self::get_each) does, lending `found` each value
    /// instead of copying it: for values that are not `Copy`, such as
    /// varlen ones.
    ///
    /// ```
    /// radix_core::radix_tree! {
    ///     pub struct Names { key: u32, value: String, layout: leaf, concurrency: rowex }
    /// }
    /// let names = Names::new();
    /// names.insert(1, "one".to_string());
    /// let mut lengths = Vec::new();
    /// names.get_each_with(&[1, 2], |&k| k, |_, name| lengths.push(name.map(String::len)));
    /// assert_eq!(lengths, [Some(3), None]);
    /// ```
    pub fn get_each_with<T>(
        &self,
        items: &[T],
        key: impl Fn(&T) -> C::Key,
        mut found: impl FnMut(&T, Option<&ValueOf<C>>),
    ) {
        let pin = self.reclaimer.pin();
        if !Self::PATH && items.len() > RING && self.space.bytes() >= PIPELINE_MIN_BYTES {
            return self.get_each_pipelined(&pin, items, key, found);
        }
        for item in items {
            if self
                .lookup(&pin, key(item), |value| found(item, Some(value)))
                .is_none()
            {
                found(item, None);
            }
        }
    }

    /// [`get_each_with`](Self::get_each_with) in a pipeline: each key is
    /// walked down to its last-level node [`DEPTH`] items before its slot
    /// is read, and its slot read [`DEPTH`] items before its value is, each
    /// step asking for the lines the next will need. A tree without path
    /// compression only, whose last level is known by its shift.
    pub(super) fn get_each_pipelined<T>(
        &self,
        pin: &Pin<'_, S::Table>,
        items: &[T],
        key: impl Fn(&T) -> C::Key,
        mut found: impl FnMut(&T, Option<&ValueOf<C>>),
    ) {
        debug_assert!(!Self::PATH);
        let mut ring = [Stop::Absent; RING];
        // Each round finishes the oldest item before its place in the
        // ring takes the newest.
        for at in 0..items.len() + 2 * DEPTH {
            if let Some(done) = at.checked_sub(2 * DEPTH).filter(|&i| i < items.len()) {
                let item = &items[done];
                // SAFETY: every word of a stop was loaded under `pin`.
                if unsafe {
                    self.finish(pin, ring[done % RING], key(item), |value| {
                        found(item, Some(value))
                    })
                }
                .is_none()
                {
                    found(item, None);
                }
            }
            if let Some(ahead) = at.checked_sub(DEPTH).filter(|&i| i < items.len()) {
                let stop = &mut ring[ahead % RING];
                *stop = self.read_slot(pin, *stop, key(&items[ahead]));
            }
            if let Some(item) = items.get(at) {
                ring[at % RING] = self.descend(pin, key(item));
            }
        }
    }

    /// Walks `key` down to its last-level node and asks for the lines its
    /// search there reads.
    #[inline(always)]
    fn descend<'p>(&self, pin: &'p Pin<'_, S::Table>, key: C::Key) -> Stop<'p, C::Key> {
        let (mut word, mut shift) = match self.shortcut_start(pin, key) {
            Some((start, at)) => (start, Some(at)),
            None => (pin.load(self.root()), None),
        };
        loop {
            if word.is_null() {
                return Stop::Absent;
            }
            let Some(kind) = Kind::of(word) else {
                return Stop::Cell(word);
            };
            // SAFETY: a node of this tree, loaded under the pin.
            let node = unsafe { self.node_at(word, kind) };
            let at = match shift {
                Some(at) => at,
                None => {
                    let at = node.header().shift();
                    if key.above(at) {
                        return Stop::Absent;
                    }
                    at
                }
            };
            if at == 0 {
                node.prefetch_find(key.chunk(0));
                return Stop::Last(node);
            }
            let Some(child) = node.find(key.chunk(at), pin, false) else {
                return Stop::Absent;
            };
            word = child;
            shift = Some(at - 8);
        }
    }

    /// Reads `key`'s slot in the last-level node `stop` names, and asks
    /// for the memory its word names; any other stop as it is.
    #[inline(always)]
    fn read_slot<'p>(
        &self,
        pin: &Pin<'_, S::Table>,
        stop: Stop<'p, C::Key>,
        key: C::Key,
    ) -> Stop<'p, C::Key> {
        let Stop::Last(node) = stop else {
            return stop;
        };
        match node.find(key.chunk(0), pin, Self::values_at(0)) {
            Some(word) => {
                <C::Layout as ConcurrentLayout>::prefetch_slot(&self.space, word);
                Stop::Slot(word)
            }
            None => Stop::Absent,
        }
    }

    /// Calls `f` on `key`'s value where the walk `stop`ped, if it is there.
    ///
    /// # Safety
    ///
    /// The stop's words were loaded under a pin that is still held.
    #[inline(always)]
    unsafe fn finish<R>(
        &self,
        pin: &Pin<'_, S::Table>,
        stop: Stop<'_, C::Key>,
        key: C::Key,
        f: impl FnOnce(&ValueOf<C>) -> R,
    ) -> Option<R> {
        match stop {
            Stop::Last(node) => node
                .find(key.chunk(0), pin, Self::values_at(0))
                // SAFETY: as below.
                .map(|word| unsafe { self.with_value(word, f) }),
            Stop::Absent => None,
            // SAFETY: the caller's contract: a lazy leaf under the pin.
            Stop::Cell(word) => unsafe {
                (self.cell_key(word) == key).then(|| self.with_cell(word, f))
            },
            // SAFETY: as above, a last-level slot word.
            Stop::Slot(word) => Some(unsafe { self.with_value(word, f) }),
        }
    }
}

/// How many items a pipelined batch walks ahead of reading a slot, and
/// reads a slot ahead of its value: enough misses in flight to cover a
/// memory latency. Twice the plain engine's (`raw/batch.rs`), since a
/// value here is a second dependent miss: on VAC-3's random index in two
/// worker processes, a depth of 8 took 1.33-1.42 s, 16 took 1.18-1.24 s
/// and 32 took 1.16-1.22 s (alternated in one session).
const DEPTH: usize = 16;
/// Items a pipelined batch holds at once.
const RING: usize = 2 * DEPTH;
/// Trees smaller than this are looked up one key at a time: they stay in
/// a core's L2, where the pipeline's bookkeeping costs more than it hides.
const PIPELINE_MIN_BYTES: usize = 1 << 20;

/// Where a batch's walk of one key stands.
#[derive(Clone, Copy)]
enum Stop<'p, K> {
    /// The key is not in the tree.
    Absent,
    /// A lazy leaf, whose key may be another.
    Cell(*mut u8),
    /// The last-level node the key's chunk is searched in.
    Last(NodeRef<'p, K>),
    /// The key's last-level slot word.
    Slot(*mut u8),
}

/// A reader's epoch pin on a [`ConcurrentTree`], held across many lookups:
/// from [`ConcurrentTree::pin`].
///
/// Each lookup through the tree pins and unpins by itself: a few
/// instructions and two stores to the thread's own slot, no barrier. Yet
/// a loop of random `get`s in a 10 MB tree (RT-2's) still takes about
/// 1.1x to 1.2x the time of the same lookups under one `ReadPin`
/// (`benches/RESULTS.md`): in a loop that waits on cache misses, the
/// pin's twenty-odd instructions a lookup keep later lookups' misses out
/// of the processor's window. Hold a `ReadPin` across a loop, briefly:
/// memory that writers unlink meanwhile is freed only after it drops. It
/// cannot leave its thread.
///
/// ```
/// radix_core::radix_tree! {
///     pub struct Tree { key: u64, value: u64, concurrency: rowex }
/// }
/// let tree: Tree = (0..1000u64).map(|k| (k, k + 1)).collect();
/// let pin = tree.pin();
/// let sum: u64 = (0..1000).filter_map(|k| pin.get(k)).sum();
/// assert_eq!(sum, 1000 * 1001 / 2);
/// ```
pub struct ReadPin<'a, C: Config, S: Space = LocalSpace>
where
    C::Layout: ConcurrentLayout,
{
    tree: &'a ConcurrentTree<C, S>,
    pin: Pin<'a, S::Table>,
}

impl<C: Config, S: Space> ConcurrentTree<C, S>
where
    C::Layout: ConcurrentLayout,
{
    /// Pins the current epoch for a run of lookups; see [`ReadPin`].
    pub fn pin(&self) -> ReadPin<'_, C, S> {
        ReadPin {
            tree: self,
            pin: self.reclaimer.pin(),
        }
    }
}

impl<C: Config, S: Space> ReadPin<'_, C, S>
where
    C::Layout: ConcurrentLayout,
{
    /// The value of `key`, copied out, as [`ConcurrentTree::get`].
    #[inline]
    pub fn get(&self, key: C::Key) -> Option<ValueOf<C>>
    where
        ValueOf<C>: Copy,
    {
        self.tree.lookup(&self.pin, key, |value| *value)
    }

    /// Calls `f` on the value of `key`, as [`ConcurrentTree::get_with`].
    #[inline]
    pub fn get_with<R>(&self, key: C::Key, f: impl FnOnce(&ValueOf<C>) -> R) -> Option<R> {
        self.tree.lookup(&self.pin, key, f)
    }

    /// Whether `key` is present.
    #[inline]
    pub fn contains_key(&self, key: C::Key) -> bool {
        self.tree.lookup(&self.pin, key, |_| ()).is_some()
    }
}

impl<C: Config, S: Space> core::fmt::Debug for ReadPin<'_, C, S>
where
    C::Layout: ConcurrentLayout,
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ReadPin").finish_non_exhaustive()
    }
}
