//! Lookups in batches: [`RawTree::get_each`].
//!
//! A lookup in a large tree spends its time waiting for the one cache line
//! it needs at the last level: the levels above are few and stay cached,
//! the last level is most of the tree. Looked up one at a time, keys in
//! random order overlap their misses only as far as the CPU's reorder
//! window reaches, three or four lookups of some seventy instructions
//! each. A batch knows its next keys, so it can do better in two ways.
//!
//! - **Pipelining.** The batch walks each key down to its last-level node
//!   [`DEPTH`] items ahead of finishing it, and prefetches what the
//!   search there will read: the slot itself in a node256, the chunk's
//!   map line in a node48, the header line with the chunks and the next
//!   two in the sorted kinds (see `node::sorted`'s `WALK_LINES` for why
//!   not all five of a large node16). By the time the key's turn comes,
//!   its lines are in flight or have arrived, and [`DEPTH`] keys' misses
//!   are outstanding at once instead of the few the window holds.
//! - **Sharing the walk.** Keys that differ only in their last byte end at
//!   the same last-level node. The batch remembers the last walk's key
//!   prefix and node, and a key with the same prefix skips the walk: keys
//!   in ascending order, or many lookups of one key, pay for one search
//!   per key rather than one descent.
//!
//! Both pay only on trees whose nodes miss the core's caches. A tree under
//! [`BATCH_MIN_BYTES`] stays in them after the first lookups, and each
//! lookup is then short enough (2 to 7 ns) that the batch's bookkeeping
//! costs more than it saves: such trees, and path-compressed ones, are
//! looked up one key at a time. What costs a small tree's lookup is then
//! its instructions and its mispredicted branches, and a batch can cut
//! both:
//!
//! - **Reading the root from a table.** Every lookup starts at the root,
//!   which costs a kind dispatch and a search (a node16's run guess,
//!   vector compare and bit scan: some twenty instructions). A batch of at
//!   least [`TABLE_MIN_ITEMS`] keys copies the root's children into a
//!   table of 256 once ([`RootTable`]), and each key reads its child with
//!   one load; a key whose path ends at the root (one small hot region of
//!   a large table: TS-7's node4 root has two children) finds no child
//!   there and goes no further.
//! - **Selecting into the last level.** Where random keys' paths often end
//!   just above the last level (a sparse set of blocks: a node256 there
//!   with a quarter of its children), the branch on "is there a child"
//!   mispredicts on every third key or so, some fifteen cycles each. A
//!   small tree's batch counts how often that happens on its first
//!   [`SAMPLE`] keys; past [`SELECT_MIN_ENDED`], the rest search a real
//!   last-level node either way, their own or a spare one, and select the
//!   answer (or none) without a branch.
//!
//! A small tree's last-level node is in L2 but seldom in L1, and its
//! search does not prefetch the node16's slot lines as a lookup in a large
//! tree does: most keys of a sparse set miss there and read no slot, and
//! the prefetches cost instructions and L1 space on every key (TS-1's
//! shuffled lookups took 1.13x the time with them).
//!
//! Pipelining also needs the misses to be at the last level: a tree of
//! more than [`PIPELINE_MAX_LEVELS`] levels spreads them over its inner
//! levels (sparse 64-bit keys: a chain of one-child nodes per key), which
//! a last-level prefetch does not reach. Such a tree shares walks, in runs
//! of [`SHARING_RUN`] items where enough neighbours share a prefix, and is
//! looked up key by key elsewhere.
//!
//! A walk that ends above the last level returns [`EMPTY_LAST_LEVEL`], a
//! node with no entries, rather than `None` (see there). In a tree with
//! range values, a walk that meets one returns its cell in place of a
//! last-level node, and the search reads the range's value: keys under a
//! range share its walk as keys of one node do.
//! `benches/RESULTS.md` ("Lookups in batches") has the measurements behind
//! each choice.

use core::marker::PhantomData;
use core::mem::size_of;
use core::ptr::NonNull;

use super::{
    LayoutOf, RawTree, RefOf, SlotOf, ValueOf, descend_to_last_level, entry_at, find_child, follow,
    resolve, search_value_slot,
};
use crate::config::Config;
use crate::key::{Key, SPAN};
use crate::mem::Memory;
use crate::node::{Kind, Node256, NodeKind, dispatch};
use crate::ptr::NodePtr;
use crate::value::ValueLayout;

/// How many items ahead a pipelined batch walks and prefetches: enough
/// misses in flight to cover a memory latency at a lookup's issue rate,
/// few enough that the prefetched lines are still in L1 when used.
const DEPTH: usize = 8;

/// Trees holding less than this are looked up one key at a time: they fit
/// in a core's L2 (1 MiB on the machines measured), where a lookup is
/// short enough that a batch's bookkeeping costs more than it saves.
const BATCH_MIN_BYTES: usize = 1 << 20;

/// Trees taller than this are not pipelined: four levels hold any 32-bit
/// key (the TID store's block numbers) and any denser key set.
const PIPELINE_MAX_LEVELS: u32 = 4;

/// Items a batch on a tall tree counts its shared prefixes over before
/// deciding whether to share walks ([`RawTree::get_each_sharing`]).
const SHARING_RUN: usize = 64;

/// How many of a batch's first items a small tree's batch looks up first,
/// counting how often their paths end just above the last level
/// ([`RawTree::get_each_small`]).
const SAMPLE: usize = 16;

/// Of the [`SAMPLE`], how many paths must end just above the last level
/// for a small tree's batch to select its way into the last level: an
/// eighth. Below that the branch the select replaces is mostly predicted,
/// and the select costs its search in the spare node.
const SELECT_MIN_ENDED: usize = SAMPLE / 8;

/// Fewest keys, past the [`SAMPLE`], for which a small tree's batch
/// copies its root into a [`RootTable`]: building it reads each of the
/// root's children once and writes 2 KiB, some hundred nanoseconds, which
/// the table repays at a few instructions a key.
const TABLE_MIN_ITEMS: usize = 128;

/// Words of [`EMPTY_LAST_LEVEL`]: a node256's header and bitmap, and 256
/// slots of one word.
const EMPTY_WORDS: usize = Node256::INDEX_END.div_ceil(8) + 256;

/// A node256 with no entries, all zeros: an empty bitmap, and a null word
/// in every slot. A walk whose path ends above the last level returns it
/// rather than `None`, so that the search after it runs the same code
/// as every other, and an absent key costs one unpredictable branch (the
/// search's) rather than two (the walk's, and then the search's skip),
/// which at the ring's distance no predictor correlates.
#[repr(C, align(64))]
struct EmptyNode([u64; EMPTY_WORDS]);

static EMPTY_LAST_LEVEL: EmptyNode = EmptyNode([0; EMPTY_WORDS]);

/// Where a batch's walks start, read once per batch: the tree does not
/// change while the batch borrows it, and the borrow (`'t`) says so: a
/// `Descent` cannot outlive the `&RawTree` it was read from.
struct Descent<'t, C: Config> {
    /// The root, or [`EMPTY_LAST_LEVEL`] for an empty tree (whose height
    /// is then taken as one level).
    root: NodePtr,
    root_shift: u32,
    /// The largest key under the root: a larger one is absent.
    largest: C::Key,
    empty: NodePtr,
    _tree: PhantomData<&'t ()>,
}

impl<C: Config> Descent<'_, C> {
    /// The last-level node on `key`'s path, or [`EMPTY_LAST_LEVEL`] where
    /// the path ends above the last level. The step into the last level
    /// selects without a branch where the node above is a node256.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn last_level_or_empty(&self, mem: &C::Memory, key: C::Key) -> NodePtr {
        self.last_level_or_spare(mem, key, self.empty)
            .map_or(self.empty, |(node, _)| node)
    }
}

impl<C: Config> Descend<C> for Descent<'_, C> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn last_level(&self, mem: &C::Memory, key: C::Key) -> Option<NodePtr> {
        if key > self.largest {
            return None;
        }
        // SAFETY: the root (or the empty node256 for an empty tree, taken
        // as one level) at its shift, which `key` is not above.
        unsafe { descend_to_last_level::<C>(mem, self.root, self.root_shift, key) }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn last_level_or_spare(
        &self,
        mem: &C::Memory,
        key: C::Key,
        spare: NodePtr,
    ) -> Option<(NodePtr, bool)> {
        if key > self.largest {
            return None;
        }
        if self.root_shift == 0 {
            return Some((self.root, true));
        }
        // SAFETY: the root at its shift, which `key` is not above.
        unsafe { last_level_or_spare_below::<C>(mem, self.root, self.root_shift, key, spare) }
    }
}

/// The root's children by chunk, which a small tree's batch reads in
/// place of the root: one load where the root's search was a kind
/// dispatch and a search (for a node16, its run guess, vector compare
/// and bit scan). Made only for a root above the last level, from a
/// [`Descent`], whose borrow of the tree (`'t`) it keeps.
struct RootTable<'t, C: Config> {
    root_shift: u32,
    /// Keys above this are absent.
    largest: C::Key,
    /// The root's child for each chunk, if it has one.
    children: [Option<NodePtr>; 256],
    _tree: PhantomData<&'t ()>,
}

impl<C: Config> RootTable<'_, C> {
    /// The table's entry for `key`'s chunk (the root's child, if it has
    /// one); `None` for a key above the root.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn entry(&self, key: C::Key) -> Option<Option<NodePtr>> {
        (key <= self.largest).then(|| self.children[usize::from(key.chunk(self.root_shift))])
    }
}

impl<C: Config> Descend<C> for RootTable<'_, C> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn last_level(&self, mem: &C::Memory, key: C::Key) -> Option<NodePtr> {
        let child = self.entry(key).flatten()?;
        if C::RANGES && child.is_lazy() {
            return Some(child);
        }
        // SAFETY: the root's child on `key`'s path, at the level below
        // the root.
        unsafe { descend_to_last_level::<C>(mem, child, self.root_shift - SPAN, key) }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn last_level_or_spare(
        &self,
        mem: &C::Memory,
        key: C::Key,
        spare: NodePtr,
    ) -> Option<(NodePtr, bool)> {
        let child = self.entry(key)?;
        if C::RANGES && child.is_some_and(NodePtr::is_lazy) {
            return Some((child?, true));
        }
        if self.root_shift == SPAN {
            // The table is the level above the last: select, as a node256
            // there does.
            return Some((child.unwrap_or(spare), child.is_some()));
        }
        // SAFETY: the root's child on `key`'s path, at the level below
        // the root, which is above the last level.
        unsafe { last_level_or_spare_below::<C>(mem, child?, self.root_shift - SPAN, key, spare) }
    }
}

/// Where a small tree's batch starts each walk: the root ([`Descent`]) or
/// a copy of its children ([`RootTable`]).
///
/// In a tree with ranges, a walk that meets a range value returns its cell
/// where it would return a last-level node (with `true` where it says
/// whether it found one): the search after it reads the range's value.
trait Descend<C: Config> {
    /// The last-level node on `key`'s path, if the path gets there: the
    /// walk of [`RawTree::get`].
    fn last_level(&self, mem: &C::Memory, key: C::Key) -> Option<NodePtr>;

    /// The last-level node on `key`'s path and `true`, or `spare` and
    /// `false` where the path ends just above the last level; `None` where
    /// it ends higher. The step into the last level selects between the
    /// child and `spare` without a branch where the node above allows it
    /// (a node256 always does: its child is one load, null when absent).
    fn last_level_or_spare(
        &self,
        mem: &C::Memory,
        key: C::Key,
        spare: NodePtr,
    ) -> Option<(NodePtr, bool)>;
}

/// [`Descend::last_level_or_spare`] from `node`, at `shift`.
///
/// # Safety
///
/// `node` is a live node at `shift > 0` of an uncompressed tree of
/// configuration `C` on `mem` whose chunks above `shift` agree with
/// `key`'s.
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn last_level_or_spare_below<C: Config>(
    mem: &C::Memory,
    mut node: NodePtr,
    mut shift: u32,
    key: C::Key,
    spare: NodePtr,
) -> Option<(NodePtr, bool)> {
    while shift > SPAN {
        // SAFETY: caller's contract: nodes reachable from `node` are live,
        // and above the last level their slots are child references.
        node = unsafe { find_child(mem, node, key.chunk(shift))? };
        if C::RANGES && node.is_lazy() {
            return Some((node, true));
        }
        shift -= SPAN;
    }
    // SAFETY: as above.
    unsafe {
        dispatch!(node, K => {
            let child = K::find_child::<RefOf<C>>(node.addr_as(K::KIND), key.chunk(SPAN));
            Some((child.map_or(spare, |child| resolve(mem, child)), child.is_some()))
        })
    }
}

/// The last walk of a batch: the key bits above the last level, and the
/// last-level node they lead to (or [`EMPTY_LAST_LEVEL`]).
struct Finger<K> {
    prefix: K,
    node: NodePtr,
}

impl<C: Config> RawTree<C> {
    /// Looks up the key of every item of `items`, in order, and calls
    /// `found` with the item and the key's value (or `None`).
    ///
    /// The answers are those of [`get`](Self::get), item by item; only the
    /// speed differs. A batch walks each key to its last-level node a few
    /// items ahead and prefetches what the lookup will read, so that the
    /// cache misses of a large tree overlap, and keys that share a
    /// last-level node with the one before (ascending keys, repeated
    /// keys) share its walk. On trees of up to four levels (32-bit keys,
    /// or denser) and over 1 MiB, random lookups take a third to a half of
    /// the time of a `get` loop; ascending ones about half on any
    /// uncompressed tree over 1 MiB. On a smaller tree, a batch of at
    /// least 144 keys reads the root from a table instead of searching
    /// it: random keys over TID stores of sparse blocks take 0.6 to 0.75
    /// of the time of an `is_member` loop. The module docs of
    /// `raw/batch.rs` explain when each applies.
    ///
    /// `key` extracts the key from an item, so that items can carry more
    /// than the key (the TID store looks up a block and tests an offset).
    ///
    /// ```
    /// use radix_core::RadixMap;
    ///
    /// let mut squares: RadixMap<u32, u64> = RadixMap::new();
    /// for k in 0..1000u32 {
    ///     squares.insert(k, u64::from(k) * u64::from(k));
    /// }
    /// let mut sum = 0;
    /// squares.get_each(&[3, 999, 5000], |&k| k, |_, value| {
    ///     sum += value.copied().unwrap_or(0);
    /// });
    /// assert_eq!(sum, 9 + 999 * 999);
    /// ```
    pub fn get_each<T>(
        &self,
        items: &[T],
        key: impl Fn(&T) -> C::Key,
        found: impl FnMut(&T, Option<&ValueOf<C>>),
    ) {
        if !Self::BATCHES {
            self.get_each_alone(items, key, found);
        } else if self.mem.bytes_held() < BATCH_MIN_BYTES {
            self.get_each_small(items, key, found);
        } else if self.root_shift < PIPELINE_MAX_LEVELS * SPAN {
            self.get_each_pipelined(items, key, found);
        } else {
            self.get_each_sharing(items, key, found);
        }
    }

    // Each mode's loop over a batch is a function of its own
    // (`#[inline(never)]`, one call a batch): inlined into `get_each`,
    // their code moved with unrelated changes, and one build's TS-S
    // shape took 1.19x the time in the same selecting loop, with the same
    // instructions and branches (callgrind).

    /// Whether this configuration can batch at all: uncompressed, with
    /// slots of at most a word (what [`EMPTY_LAST_LEVEL`] holds).
    const BATCHES: bool = C::COMPRESSION.is_none() && size_of::<SlotOf<C>>() <= 8;

    /// One [`get`](Self::get) per item.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn get_each_alone<T>(
        &self,
        items: &[T],
        key: impl Fn(&T) -> C::Key,
        mut found: impl FnMut(&T, Option<&ValueOf<C>>),
    ) {
        for item in items {
            found(item, self.get(key(item)));
        }
    }

    /// One lookup per item, as [`get`](Self::get) but from `start`, the
    /// batch's root or its table, with the largest key under the root
    /// worked out once for the batch. A node16 at the last level
    /// prefetches its slot lines where `PREFETCH_SLOTS`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn get_each_descending<const PREFETCH_SLOTS: bool, T>(
        &self,
        start: &impl Descend<C>,
        items: &[T],
        key: impl Fn(&T) -> C::Key,
        mut found: impl FnMut(&T, Option<&ValueOf<C>>),
    ) {
        for item in items {
            let key = key(item);
            let node = start.last_level(&self.mem, key);
            found(
                item,
                node.and_then(|node| self.value_in::<PREFETCH_SLOTS>(node, key)),
            );
        }
    }

    /// A small tree's batch: one lookup per item. The first [`SAMPLE`]
    /// items show how often paths end just above the last level; where
    /// often enough to make that branch unpredictable, the rest step into
    /// the last level by a select
    /// ([`get_each_selecting`](Self::get_each_selecting)), else each walks
    /// as a [`get`](Self::get) does. Either walk starts from a
    /// [`RootTable`] where the rest are at least [`TABLE_MIN_ITEMS`].
    fn get_each_small<T>(
        &self,
        items: &[T],
        key: impl Fn(&T) -> C::Key,
        mut found: impl FnMut(&T, Option<&ValueOf<C>>),
    ) {
        let (sample, rest) = items.split_at(items.len().min(SAMPLE));
        let descent = self.descent();
        let mut spare = None;
        let mut ended_above = 0;
        for item in sample {
            let key = key(item);
            let value = match descent.last_level_or_spare(&self.mem, key, descent.empty) {
                Some((node, true)) => {
                    // A spare is a last-level node, never a range's cell.
                    if !(C::RANGES && node.is_lazy()) {
                        spare = Some(node);
                    }
                    self.value_in::<false>(node, key)
                }
                Some((_, false)) => {
                    ended_above += 1;
                    None
                }
                None => None,
            };
            found(item, value);
        }
        if rest.is_empty() {
            return;
        }
        let spare = spare.filter(|_| ended_above >= SELECT_MIN_ENDED);
        let table = if rest.len() >= TABLE_MIN_ITEMS {
            self.root_table(&descent)
        } else {
            None
        };
        match (table, spare) {
            (Some(table), Some(spare)) => {
                self.get_each_selecting(&table, spare, rest, key, found);
            }
            (Some(table), None) => self.get_each_tabled(&table, rest, key, found),
            (None, Some(spare)) => self.get_each_selecting(&descent, spare, rest, key, found),
            (None, None) => self.get_each_descending::<false, _>(&descent, rest, key, found),
        }
    }

    /// One lookup per item, each walk from the root's table.
    #[inline(never)]
    fn get_each_tabled<T>(
        &self,
        table: &RootTable<'_, C>,
        items: &[T],
        key: impl Fn(&T) -> C::Key,
        found: impl FnMut(&T, Option<&ValueOf<C>>),
    ) {
        self.get_each_descending::<false, _>(table, items, key, found);
    }

    /// One lookup per item, whose step into the last level selects
    /// rather than branches: where the path ends there, the search runs
    /// in `spare`, a last-level node of the tree, and its answer is
    /// dropped. A path that ends higher still branches.
    #[inline(never)]
    fn get_each_selecting<T>(
        &self,
        start: &impl Descend<C>,
        spare: NodePtr,
        items: &[T],
        key: impl Fn(&T) -> C::Key,
        mut found: impl FnMut(&T, Option<&ValueOf<C>>),
    ) {
        for item in items {
            let key = key(item);
            let Some((node, present)) = start.last_level_or_spare(&self.mem, key, spare) else {
                found(item, None);
                continue;
            };
            if C::RANGES && node.is_lazy() {
                found(item, self.value_in::<false>(node, key));
                continue;
            }
            // SAFETY: `node` is `spare` or the last-level node on `key`'s
            // path, both found by walks of this tree during the current
            // borrow of `self`, so live last-level nodes.
            let slot = unsafe { search_value_slot::<C, false>(node, key.chunk(0)) };
            let slot = core::hint::select_unpredictable(present, slot, None);
            // SAFETY: the slot is live while `self` is borrowed.
            let value = slot.map(|slot| unsafe { LayoutOf::<C>::get(slot, &self.mem) });
            found(item, value);
        }
    }

    /// Each item's search at its last-level node, the walk there shared
    /// with the item before when they have the same prefix; in runs of
    /// [`SHARING_RUN`] items where a quarter of neighbours share one, and
    /// one [`get`](Self::get) per item in the other runs, whose keys are
    /// too scattered for the finger's bookkeeping to pay.
    pub(super) fn get_each_sharing<T>(
        &self,
        items: &[T],
        key: impl Fn(&T) -> C::Key,
        mut found: impl FnMut(&T, Option<&ValueOf<C>>),
    ) {
        let descent = self.descent();
        for run in items.chunks(SHARING_RUN) {
            let shared = run
                .windows(2)
                .filter(|pair| key(&pair[0]).clear_below(0) == key(&pair[1]).clear_below(0))
                .count();
            if shared < run.len() / 4 {
                self.get_each_descending::<true, _>(&descent, run, &key, &mut found);
                continue;
            }
            let mut finger = self.finger::<false>(&descent, key(&run[0]));
            for item in run {
                let key = key(item);
                let node = self.walk::<false>(&descent, &mut finger, key);
                found(item, self.value_in::<true>(node, key));
            }
        }
    }

    /// As [`get_each_sharing`](Self::get_each_sharing), with each walk
    /// (and its prefetch) [`DEPTH`] items ahead of its search.
    #[inline(never)]
    pub(super) fn get_each_pipelined<T>(
        &self,
        items: &[T],
        key: impl Fn(&T) -> C::Key,
        mut found: impl FnMut(&T, Option<&ValueOf<C>>),
    ) {
        let Some(first) = items.first() else {
            return;
        };
        let descent = self.descent();
        let mut finger = self.finger::<true>(&descent, key(first));
        let mut ahead = [finger.node; DEPTH];
        for (node, item) in ahead.iter_mut().zip(items) {
            *node = self.walk::<true>(&descent, &mut finger, key(item));
        }
        for (i, item) in items.iter().enumerate() {
            let node = ahead[i % DEPTH];
            if let Some(next) = items.get(i + DEPTH) {
                ahead[i % DEPTH] = self.walk::<true>(&descent, &mut finger, key(next));
            }
            found(item, self.value_in::<false>(node, key(item)));
        }
    }

    /// A finger holding `key`'s walk.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn finger<const PREFETCH: bool>(
        &self,
        descent: &Descent<'_, C>,
        key: C::Key,
    ) -> Finger<C::Key> {
        let node = descent.last_level_or_empty(&self.mem, key);
        if PREFETCH && !(C::RANGES && node.is_lazy()) {
            dispatch!(node, K => {
                K::prefetch_lookup::<SlotOf<C>>(node.addr_as(K::KIND), key.chunk(0));
            });
        }
        Finger {
            prefix: key.clear_below(0),
            node,
        }
    }

    /// `key`'s last-level node: the finger's if `key` has its prefix, else
    /// a new walk, which the finger then holds.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn walk<const PREFETCH: bool>(
        &self,
        descent: &Descent<'_, C>,
        finger: &mut Finger<C::Key>,
        key: C::Key,
    ) -> NodePtr {
        if key.clear_below(0) != finger.prefix {
            *finger = self.finger::<PREFETCH>(descent, key);
        }
        finger.node
    }

    /// The root's children as a table, for a root above the last level.
    fn root_table<'t>(&'t self, descent: &Descent<'t, C>) -> Option<RootTable<'t, C>> {
        if descent.root_shift == 0 {
            return None;
        }
        let mut children = [None; 256];
        let mut pos = 0;
        // SAFETY: the root is live while the batch borrows the tree, and
        // above the last level its slots are child references.
        while let Some(e) = unsafe { entry_at::<RefOf<C>>(descent.root, pos) } {
            // SAFETY: as above: a live slot holding a live child's reference.
            children[usize::from(e.chunk)] = Some(follow::<C>(&self.mem, unsafe { e.slot.read() }));
            pos = e.next;
        }
        Some(RootTable {
            root_shift: descent.root_shift,
            largest: descent.largest,
            children,
            _tree: PhantomData,
        })
    }

    /// What every walk of a batch starts from.
    fn descent(&self) -> Descent<'_, C> {
        let empty = NodePtr::new(NonNull::from(&EMPTY_LAST_LEVEL).cast(), Kind::N256);
        let root_shift = self.root.map_or(0, |_| self.root_shift);
        Descent {
            root: self.root.map_or(empty, |root| follow::<C>(&self.mem, root)),
            root_shift,
            largest: C::Key::largest_under(root_shift),
            empty,
            _tree: PhantomData,
        }
    }

    /// `key`'s value in its last-level node `node`; a node16 prefetches
    /// its slot lines while it searches where `PREFETCH_SLOTS` (a
    /// pipelined walk has already asked for them).
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn value_in<const PREFETCH_SLOTS: bool>(
        &self,
        node: NodePtr,
        key: C::Key,
    ) -> Option<&ValueOf<C>> {
        if C::RANGES && node.is_lazy() {
            // SAFETY: a range cell a walk of this tree met during the
            // current borrow: live, its slot with it.
            return Some(unsafe {
                LayoutOf::<C>::get(crate::node::lazy::slot::<SlotOf<C>>(node.addr()), &self.mem)
            });
        }
        // `node` is [`EMPTY_LAST_LEVEL`], a node256 with no entries whose
        // every slot of at most a word (`Self::BATCHES`) is null, or a
        // node a walk of this tree found during the current borrow.
        // SAFETY: either way a live last-level node with the layout's slots.
        let slot = unsafe { search_value_slot::<C, PREFETCH_SLOTS>(node, key.chunk(0)) }?;
        // SAFETY: the slot is live while `self` is borrowed (the empty
        // node has none to return).
        Some(unsafe { LayoutOf::<C>::get(slot, &self.mem) })
    }
}

#[cfg(test)]
mod tests {
    use super::Descend;
    use crate::RadixMap;

    /// Keys in ascending runs, repeats, random jumps and absent keys, so
    /// that walks are shared, renewed and end above the last level.
    fn probe_keys(present: &[u64]) -> Vec<u64> {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut keys: Vec<u64> = present.to_vec();
        for _ in 0..present.len() {
            let r = next();
            keys.push(match r % 4 {
                0 => present[(r >> 8) as usize % present.len()],
                1 => r >> 20,
                2 => present[(r >> 8) as usize % present.len()] + 1,
                _ => r,
            });
        }
        keys.extend(present.iter().rev());
        keys
    }

    fn check_every_mode(map: &RadixMap<u64, u64>, keys: &[u64]) {
        let expected: Vec<Option<u64>> = keys.iter().map(|&k| map.get(k).copied()).collect();
        let mut pub_answers = Vec::new();
        map.get_each(keys, |&k| k, |&k, v| pub_answers.push((k, v.copied())));
        let mut sharing = Vec::new();
        map.get_each_sharing(keys, |&k| k, |_, v| sharing.push(v.copied()));
        let mut pipelined = Vec::new();
        map.get_each_pipelined(keys, |&k| k, |_, v| pipelined.push(v.copied()));
        assert_eq!(pub_answers.iter().map(|a| a.0).collect::<Vec<_>>(), keys);
        assert_eq!(
            pub_answers.into_iter().map(|a| a.1).collect::<Vec<_>>(),
            expected
        );
        assert_eq!(sharing, expected);
        assert_eq!(pipelined, expected);
        // A small tree's modes (whatever `get_each_small`'s sample
        // decides): from the root and, above the last level, from its
        // table; walking, and selecting with the first last-level node the
        // keys reach as the spare.
        let descent = map.descent();
        check_small_modes(map, &descent, keys, &expected);
        if let Some(table) = map.root_table(&descent) {
            check_small_modes(map, &table, keys, &expected);
        }
    }

    fn check_small_modes(
        map: &RadixMap<u64, u64>,
        start: &impl Descend<crate::collections::DefaultConfig<u64, u64>>,
        keys: &[u64],
        expected: &[Option<u64>],
    ) {
        let mut descending = Vec::new();
        let record = |answers: &mut Vec<Option<u64>>, v: Option<&u64>| answers.push(v.copied());
        map.get_each_descending::<false, _>(start, keys, |&k| k, |_, v| record(&mut descending, v));
        assert_eq!(descending, expected);
        let empty = map.descent().empty;
        let spare = keys.iter().find_map(|&k| {
            let (node, present) = start.last_level_or_spare(&map.mem, k, empty)?;
            present.then_some(node)
        });
        if let Some(spare) = spare {
            let mut selecting = Vec::new();
            map.get_each_selecting(start, spare, keys, |&k| k, |_, v| record(&mut selecting, v));
            assert_eq!(selecting, expected);
        }
    }

    #[test]
    fn every_mode_answers_as_get_does() {
        // Miri interprets every node search: a fifth of the keys there.
        let n: u64 = if cfg!(miri) { 60 } else { 600 };
        let dense: Vec<u64> = (0..n).collect();
        let sparse: Vec<u64> = (0..n / 2)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let mixed: Vec<u64> = (0..n / 3)
            .flat_map(|i| [i << 16, (i << 16) | 7, i * 3])
            .collect();
        for present in [dense, sparse, mixed] {
            let map: RadixMap<u64, u64> = present.iter().map(|&k| (k, !k)).collect();
            check_every_mode(&map, &probe_keys(&present));
        }
    }

    /// Trees whose node4 or node16 root most keys miss, at every height
    /// (the root the last level, too), looked up through `get_each` in
    /// batches long enough for a root table where the root is above the
    /// last level.
    #[test]
    fn keys_that_mostly_miss_at_the_root() {
        for (present, shift) in [
            (vec![3u64, 200], 0),
            (vec![0, 1, 2, 0x0F_0000, 0x0F_0001], 16),
            ((0..20u64).map(|i| (i * 9) << 40).collect(), 40),
        ] {
            let map: RadixMap<u64, u64> = present.iter().map(|&k| (k, k ^ 0x55)).collect();
            assert_eq!(map.root_shift, shift);
            assert_eq!(map.root_table(&map.descent()).is_some(), shift > 0);
            let mut keys: Vec<u64> = (0..300u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (56 - shift))
                .collect();
            keys.extend(&present);
            keys.extend([u64::MAX, (1 << (shift + 8)) - 1, 1 << (shift + 8)]);
            check_every_mode(&map, &keys);
        }
    }

    #[test]
    fn empty_trees_and_batches() {
        let empty: RadixMap<u64, u64> = RadixMap::new();
        check_every_mode(&empty, &[0, 1, u64::MAX]);
        let one: RadixMap<u64, u64> = [(5, 6)].into_iter().collect();
        check_every_mode(&one, &[]);
        check_every_mode(&one, &[5, 5, 4, 5, 6, u64::MAX]);
    }

    #[test]
    fn compressed_trees_answer_one_key_at_a_time() {
        let keys: Vec<u128> = (0..300u128)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) << 40)
            .collect();
        let map: RadixMap<u128, u128> = keys.iter().map(|&k| (k, k + 1)).collect();
        let probes: Vec<u128> = keys.iter().flat_map(|&k| [k, k + 1]).collect();
        let mut answers = Vec::new();
        map.get_each(&probes, |&k| k, |&k, v| answers.push((k, v.copied())));
        let expected: Vec<(u128, Option<u128>)> =
            probes.iter().map(|&k| (k, map.get(k).copied())).collect();
        assert_eq!(answers, expected);
    }

    #[test]
    fn batches_shorter_and_longer_than_the_pipeline_and_the_sample() {
        // Three levels, and two: there the root is the level above the
        // last, which a long batch's root table then selects from. Eight
        // keys to a last-level node, so that a spare searched in place of
        // an absent one would match some of the probes.
        for count in [100u64, 50] {
            let map: RadixMap<u64, u64> = (0..count)
                .flat_map(|k| (0..8).map(move |j| (k * 1000 + j * 31, k + j)))
                .collect();
            assert_eq!(map.root_shift, if count == 100 { 16 } else { 8 });
            check_batch_lengths(&map);
        }
    }

    fn check_batch_lengths(map: &RadixMap<u64, u64>) {
        for len in [
            1,
            2,
            super::DEPTH - 1,
            super::DEPTH,
            super::DEPTH + 1,
            3 * super::DEPTH,
            // Longer than a small tree's sample, which on these keys
            // (three in four paths end above the last level) selects,
            // and long enough for a root table.
            super::SAMPLE + 1,
            super::SAMPLE + super::TABLE_MIN_ITEMS,
            20 * super::SAMPLE,
        ] {
            let keys: Vec<u64> = (0..len as u64).map(|i| (i * 7919) % 100_000).collect();
            check_every_mode(map, &keys);
        }
    }
}
