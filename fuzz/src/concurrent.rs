//! The concurrent-tree harness: `concurrency: rowex` trees
//! ([`ConcurrentTree`]) driven through `&self` against `BTreeMap` models,
//! by one thread, and in threaded steps by two writer threads on disjoint
//! keys with a reader beside them.
//!
//! A concurrent tree has no `clear`, `verify`, `get_mut` or map API, so it
//! does not implement [`FuzzMap`](crate::FuzzMap); its operations are
//! [`RowexOp`]s, and each tree is a [`RowexSubject`] made by [`subject`]
//! (on the heap) or [`shared_subject`] (in shared memory).
//!
//! **Shared trees** ([`SharedConcurrentTree`], `memory: shared` with
//! `concurrency: rowex`) get the same steps and checks, each in a
//! heap-backed area of its own ([`RowexSpace`] says what differs). Their
//! writes return `Result`s. In an area without a limit, sized well above
//! what the caps let an input build, every write must succeed. In a
//! limited one ([`SMALL_AREA`]) an insert or update may be refused, only
//! with [`ShmError::AreaFull`] (an update's closure run at most once, on
//! the old value), and must then change nothing: the model keeps the
//! key's old value, the key is read back at once, and after a sequential
//! step with a refusal (the first [`REFUSAL_WALKS`] of an input) the
//! whole tree is walked and compared. A removal
//! needs no memory and is never refused. The area must never pass its
//! limit. In a threaded step the second writer and the reader read and
//! write through handles of their own (`attach`), as other processes
//! would. At the end the tree is drained or not, then destroyed (a second
//! handle must then find it gone) and its area dropped. Retired nodes
//! count against the limit until their epoch expires (the reclaimer
//! frees them in batches of 1024 per thread), so a drained tree may still
//! be refused: no insert is expected to succeed after a refusal.
//!
//! **Sequential steps** ([`RowexStep::Op`]) go to every tree, each with
//! its own model (the trees' key widths differ), and every result is
//! compared: the old value from `insert`, `update_or_insert` (whose
//! closure must run once, given the model's old value) and `remove`;
//! `get`, `get_with`, `get_cloned`, `contains_key` and the same through a
//! [`ReadPin`] (`get` and `get_each` where values are `Copy`); `range`
//! walks from both ends; `first_key_value`, `last_key_value`,
//! `first_at_or_after`, `last_at_or_before`, `len`, `is_empty`,
//! `memory_usage` (never zero while a key is in) and `Debug`. After the
//! last step each tree is walked in full from both ends and its `len()`
//! checked; then it is drained key by key (alternating ends, every value
//! compared) or dropped full, as the input says. (A drained tree may
//! still hold retired nodes waiting for their epoch; the counting
//! allocator of the unit tests checks that the drop frees them.)
//!
//! **A threaded step** ([`RowexStep::Threads`]) runs on one tree. Its
//! model is split by two key bits at a position the [`Split`] names: class
//! 0 goes to the first writer, class 1 to the second, classes 2 and 3 are
//! *stable* (nobody writes them). Each writer owns the model of its class
//! and applies its own list of operations with every key forced into its
//! class, so its results are exact: the other writer never touches its
//! keys. Walks, seeks and counts, which meet the other writer's keys, are
//! checked on what the thread knows: keys strictly ascending (descending
//! from the back, the two ends never crossing) and inside the bounds, the
//! keys of its own and the stable classes exactly the models', the
//! nearest key found no further than the nearest known one, `len()` at
//! least the known count. The threads start together at a barrier. An
//! optional reader thread walks the tree and
//! looks stable keys up meanwhile, with the same rules: a key present for
//! a whole walk must appear in it. After the threads join, the tree must
//! be the union of the writers' and the stable models, walked in full,
//! with `len()` its size.
//!
//! **Costs** are capped so that an input takes milliseconds (the shared
//! trees add the creation of their areas, which zeroes their whole
//! reservations: see [`UNLIMITED_SEGMENTS`]): at most
//! [`MAX_STEPS`] steps, [`MAX_THREAD_PHASES`] threaded steps (later ones
//! are skipped), [`MAX_THREAD_OPS`] operations per writer, runs of up to
//! [`MAX_RUN`] keys within [`RUN_BUDGET`] run keys per tree, new keys only
//! while the thread knows fewer than [`MAX_KEYS`], and walks asked for by
//! operations within [`WALK_BUDGET`] items per tree. Walks are what costs:
//! the iterator seeks from the root for every last-level node, scanning
//! the siblings before it, so a walk over keys that each have a node of
//! their own (a run with a step of 256) costs a seek per key.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::fmt;
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Barrier, OnceLock};
use std::thread;

use arbitrary::Arbitrary;
use radix_core::concurrent::{ConcurrentLayout, ConcurrentTree, LocalSpace, ReadPin, Space};
use radix_core::shm::{Area, AreaOptions, Backing, SharedConcurrentTree, SharedSpace, ShmError};
use radix_core::Config;

use crate::harness::same;
use crate::keys::{interval, run_step, Bases, KeyInt, KeySpec};
use crate::ops::{BoundPick, KeyPick, MAX_RUN};
use crate::values::{mix64, ModelValue};

/// The most steps of one input.
pub const MAX_STEPS: usize = 256;

/// The most threaded steps of one input; later ones are skipped.
pub const MAX_THREAD_PHASES: usize = 2;

/// The most operations each writer of a threaded step applies.
pub const MAX_THREAD_OPS: usize = 32;

/// The most keys one [`RowexOp::GetEach`] looks up.
pub const MAX_BATCH: usize = 16;

/// The most rounds a reader thread makes in one threaded step (it stops
/// earlier once both writers are done, after at least one).
pub const MAX_READER_ROUNDS: usize = 3;

/// Operations stop adding new keys once the keys a thread knows number
/// this many.
pub const MAX_KEYS: usize = 256;

/// The items the walking operations ([`RowexOp::Range`],
/// [`RowexOp::Iterate`], the count of [`RowexOp::Ends`]) may cover per
/// tree and input; beyond it they are skipped. Each writer of a threaded
/// step has a quarter of it. The full checks are not counted.
pub const WALK_BUDGET: usize = 1 << 11;

/// The keys [`RowexOp::Run`]s may cover per tree and input; a run beyond
/// it is cut short. Each writer of a threaded step has a quarter of it.
pub const RUN_BUDGET: usize = 1 << 11;

/// Up to this many keys, [`RowexOp::Iterate`] also compares the tree's
/// `Debug` output with the model's.
const MAX_DEBUG_KEYS: usize = 64;

/// The value type of a concurrent configuration.
pub type Val<C> = <<C as Config>::Layout as ConcurrentLayout>::Value;

/// A `concurrency: rowex` configuration the harness can drive: integer
/// keys, values that are their own model. Implemented for every such
/// configuration.
pub trait RowexConfig:
    Config<Key: KeyInt + Send + Sync, Layout: SizedValues<Value: RowexValue>> + 'static
{
}

impl<C> RowexConfig for C where
    C: Config<Key: KeyInt + Send + Sync, Layout: SizedValues<Value: RowexValue>> + 'static
{
}

/// A concurrent layout whose writes take and return values themselves
/// (every layout but `varlen`, whose writes take a reference and return
/// whether a value was replaced), so that the harness drives all of them
/// with one model.
pub trait SizedValues: ConcurrentLayout<Value: Sized> {
    /// The value as `insert` takes it.
    fn input(value: Self::Value) -> Self::Input<'static>;
    /// What `insert` and `remove` returned, as the value they replaced.
    fn replaced(old: Self::Old) -> Option<Self::Value>;
}

impl<V, L> SizedValues for L
where
    V: Send + Sync + 'static,
    L: ConcurrentLayout<Value = V, Old = Option<V>> + for<'a> ConcurrentLayout<Input<'a> = V>,
{
    fn input(value: V) -> V {
        value
    }

    fn replaced(old: Option<V>) -> Option<V> {
        old
    }
}

/// A value a concurrent tree stores, compared as it is (the model holds
/// the same type), with the lookups that need a `Copy` value.
pub trait RowexValue: ModelValue + Send + Sync {
    /// `tree.get(key)`, or `None` if the value is not `Copy`.
    fn get<C, S: Space>(tree: &ConcurrentTree<C, S>, key: C::Key) -> Option<Option<Self>>
    where
        C: Config<Layout: ConcurrentLayout<Value = Self>>;

    /// `pin.get(key)`, or `None` if the value is not `Copy`.
    fn pin_get<C, S: Space>(pin: &ReadPin<'_, C, S>, key: C::Key) -> Option<Option<Self>>
    where
        C: Config<Layout: ConcurrentLayout<Value = Self>>;

    /// `tree.get_each` over `keys`, each item its position and key, as
    /// `(position, key, value)` in the order `found` was called; or
    /// `None` if the value is not `Copy`.
    #[allow(clippy::type_complexity)]
    fn get_each<C, S: Space>(
        tree: &ConcurrentTree<C, S>,
        keys: &[C::Key],
    ) -> Option<Vec<(usize, C::Key, Option<Self>)>>
    where
        C: Config<Layout: ConcurrentLayout<Value = Self>>;
}

/// Implements [`RowexValue`] for `Copy` values: every lookup exists.
macro_rules! copy_rowex_value {
    ($($value:ty),*) => {$(
        impl RowexValue for $value {
            fn get<C, S: Space>(tree: &ConcurrentTree<C, S>, key: C::Key) -> Option<Option<Self>>
            where
                C: Config<Layout: ConcurrentLayout<Value = Self>>,
            {
                Some(tree.get(key))
            }

            fn pin_get<C, S: Space>(pin: &ReadPin<'_, C, S>, key: C::Key) -> Option<Option<Self>>
            where
                C: Config<Layout: ConcurrentLayout<Value = Self>>,
            {
                Some(pin.get(key))
            }

            fn get_each<C, S: Space>(
                tree: &ConcurrentTree<C, S>,
                keys: &[C::Key],
            ) -> Option<Vec<(usize, C::Key, Option<Self>)>>
            where
                C: Config<Layout: ConcurrentLayout<Value = Self>>,
            {
                let items: Vec<(usize, C::Key)> = keys.iter().copied().enumerate().collect();
                let mut found = Vec::with_capacity(items.len());
                tree.get_each(
                    &items,
                    |&(_, key)| key,
                    |&(i, key), value| {
                        found.push((i, key, value));
                    },
                );
                Some(found)
            }
        }
    )*};
}

// `u64` for words in the slot, `[u64; 2]` for leaves in shared memory
// (plain bytes, as a shared tree requires).
copy_rowex_value!(u64, [u64; 2]);

impl RowexValue for Vec<u8> {
    fn get<C, S: Space>(_: &ConcurrentTree<C, S>, _: C::Key) -> Option<Option<Vec<u8>>>
    where
        C: Config<Layout: ConcurrentLayout<Value = Vec<u8>>>,
    {
        None
    }

    fn pin_get<C, S: Space>(_: &ReadPin<'_, C, S>, _: C::Key) -> Option<Option<Vec<u8>>>
    where
        C: Config<Layout: ConcurrentLayout<Value = Vec<u8>>>,
    {
        None
    }

    fn get_each<C, S: Space>(
        _: &ConcurrentTree<C, S>,
        _: &[C::Key],
    ) -> Option<Vec<(usize, C::Key, Option<Vec<u8>>)>>
    where
        C: Config<Layout: ConcurrentLayout<Value = Vec<u8>>>,
    {
        None
    }
}

/// Where a harness tree lives, and what its writes return: the process
/// heap ([`LocalSpace`]), whose writes cannot fail, or a heap-backed
/// area ([`SharedSpace`]), whose inserts a limited area may refuse.
pub trait RowexSpace: Space + Sized {
    /// `tree.insert(key, value)`.
    fn insert<C: RowexConfig>(
        tree: &ConcurrentTree<C, Self>,
        key: C::Key,
        value: Val<C>,
    ) -> Result<Option<Val<C>>, Self::Error>;

    /// `tree.update_or_insert(key, f)`.
    fn update_or_insert<C: RowexConfig>(
        tree: &ConcurrentTree<C, Self>,
        key: C::Key,
        f: impl FnOnce(Option<&Val<C>>) -> Val<C>,
    ) -> Result<Option<Val<C>>, Self::Error>;

    /// `tree.remove(key)`.
    fn remove<C: RowexConfig>(
        tree: &ConcurrentTree<C, Self>,
        key: C::Key,
    ) -> Result<Option<Val<C>>, Self::Error>;

    /// Whether `error` says the area is full: the one refusal a limited
    /// area may make.
    fn is_full(error: &Self::Error) -> bool;

    /// A second handle on the tree, as another process would open it, for
    /// a thread of a threaded step; `None` where trees have no handles.
    fn attach<C: RowexConfig>(tree: &ConcurrentTree<C, Self>) -> Option<ConcurrentTree<C, Self>>;

    /// Checks what the space promises beside the tree, an area that stays
    /// within its limit; the bytes the area holds (0 for the heap).
    fn check_space<C: RowexConfig>(tree: &ConcurrentTree<C, Self>, what: &dyn fmt::Debug) -> usize;

    /// Ends the tree for good: a local tree is dropped; a shared one is
    /// destroyed (a second handle must then find it gone) and its area
    /// dropped with it, so that nothing stays allocated.
    fn end<C: RowexConfig>(tree: ConcurrentTree<C, Self>, what: &dyn fmt::Debug);
}

impl RowexSpace for LocalSpace {
    fn insert<C: RowexConfig>(
        tree: &ConcurrentTree<C>,
        key: C::Key,
        value: Val<C>,
    ) -> Result<Option<Val<C>>, Infallible> {
        Ok(<C::Layout as SizedValues>::replaced(
            tree.insert(key, <C::Layout as SizedValues>::input(value)),
        ))
    }

    fn update_or_insert<C: RowexConfig>(
        tree: &ConcurrentTree<C>,
        key: C::Key,
        f: impl FnOnce(Option<&Val<C>>) -> Val<C>,
    ) -> Result<Option<Val<C>>, Infallible> {
        Ok(<C::Layout as SizedValues>::replaced(
            tree.update_or_insert(key, |old| <C::Layout as SizedValues>::input(f(old))),
        ))
    }

    fn remove<C: RowexConfig>(
        tree: &ConcurrentTree<C>,
        key: C::Key,
    ) -> Result<Option<Val<C>>, Infallible> {
        Ok(<C::Layout as SizedValues>::replaced(tree.remove(key)))
    }

    fn is_full(error: &Infallible) -> bool {
        match *error {}
    }

    fn attach<C: RowexConfig>(_: &ConcurrentTree<C>) -> Option<ConcurrentTree<C>> {
        None
    }

    fn check_space<C: RowexConfig>(_: &ConcurrentTree<C>, _: &dyn fmt::Debug) -> usize {
        0
    }

    fn end<C: RowexConfig>(tree: ConcurrentTree<C>, _: &dyn fmt::Debug) {
        drop(tree);
    }
}

impl RowexSpace for SharedSpace {
    fn insert<C: RowexConfig>(
        tree: &SharedConcurrentTree<C>,
        key: C::Key,
        value: Val<C>,
    ) -> Result<Option<Val<C>>, ShmError> {
        tree.insert(key, <C::Layout as SizedValues>::input(value))
            .map(<C::Layout as SizedValues>::replaced)
    }

    fn update_or_insert<C: RowexConfig>(
        tree: &SharedConcurrentTree<C>,
        key: C::Key,
        f: impl FnOnce(Option<&Val<C>>) -> Val<C>,
    ) -> Result<Option<Val<C>>, ShmError> {
        tree.update_or_insert(key, |old| <C::Layout as SizedValues>::input(f(old)))
            .map(<C::Layout as SizedValues>::replaced)
    }

    fn remove<C: RowexConfig>(
        tree: &SharedConcurrentTree<C>,
        key: C::Key,
    ) -> Result<Option<Val<C>>, ShmError> {
        tree.remove(key).map(<C::Layout as SizedValues>::replaced)
    }

    fn is_full(error: &ShmError) -> bool {
        matches!(error, ShmError::AreaFull { .. })
    }

    fn attach<C: RowexConfig>(tree: &SharedConcurrentTree<C>) -> Option<SharedConcurrentTree<C>> {
        let other = SharedConcurrentTree::attach(tree.area(), tree.handle());
        Some(other.unwrap_or_else(|e| panic!("attaching a second handle: {e}")))
    }

    fn check_space<C: RowexConfig>(tree: &SharedConcurrentTree<C>, what: &dyn fmt::Debug) -> usize {
        let area = tree.area();
        let used = area.memory_usage();
        if let Some(limit) = area.size_limit() {
            assert!(
                used <= limit,
                "{what:?}: the area holds {used} bytes, past its limit {limit}"
            );
        }
        used
    }

    fn end<C: RowexConfig>(tree: SharedConcurrentTree<C>, what: &dyn fmt::Debug) {
        Self::check_space(&tree, what);
        let area = tree.area().clone();
        let handle = tree.handle();
        tree.destroy()
            .unwrap_or_else(|e| panic!("{what:?}: destroy(): {e}"));
        match SharedConcurrentTree::<C>::attach(&area, handle) {
            Err(ShmError::NoSuchTree { .. }) => {}
            Err(e) => panic!("{what:?}: attaching a destroyed tree: {e}"),
            Ok(_) => panic!("{what:?}: a destroyed tree can be attached"),
        }
        // The last handle on the area: its memory goes with it.
        drop(area);
    }
}

/// The area options of a shared subject: heap-backed, one tree, up to
/// `max_segments` data segments from `first` bytes up to 256 KiB (the
/// least largest segment an area may have). A heap-backed area allocates
/// its whole reservation, `(max_segments + 1) * 256 KiB`, and zeroes it
/// (every page touched) when it is created, once per execution here: at
/// about 0.35 ms a MiB, the largest fixed cost of an input, so it is kept
/// small.
fn area_options(first: usize, max_segments: usize) -> AreaOptions {
    AreaOptions::default()
        .backing(Backing::Heap)
        .max_trees(1)
        .init_segment_size(first)
        .max_segment_size(SEGMENT)
        .max_segments(max_segments)
}

/// The largest segment of a shared subject's area.
const SEGMENT: usize = 256 << 10;

/// One input of the `tree_rowex` target.
#[derive(Arbitrary, Clone, Debug)]
pub struct RowexInput {
    /// The compression of the target's leaf-layout tree.
    pub compression: RowexCompression,
    /// How the trees end.
    pub finish: RowexFinish,
    /// The bases of [`KeySpec::Clustered`] keys.
    pub bases: Bases,
    /// The steps, applied in order.
    pub steps: Vec<RowexStep>,
}

/// A compression, decodable from fuzz input: which of the target's
/// leaf-layout trees runs the input.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowexCompression {
    /// `compression: none`.
    None,
    /// `compression: lazy`.
    Lazy,
    /// `compression: path`.
    Path,
    /// `compression: full`.
    Full,
}

/// How the trees end once the steps are done.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowexFinish {
    /// Remove every key, alternating between the smallest and the
    /// largest, comparing each value; the tree must end empty, holding no
    /// memory.
    Drain,
    /// Drop the trees with their keys in them.
    Drop,
}

/// One step of an input.
#[derive(Arbitrary, Clone, Debug)]
pub enum RowexStep {
    /// An operation, applied by this thread to every tree.
    Op(RowexOp),
    /// Two writer threads and perhaps a reader on one tree.
    Threads(ThreadPhase),
}

/// One operation on a tree and its model. Keys are forced into the
/// thread's class in a threaded step; `Existing` picks take the `n %
/// len`-th key of the thread's own model.
#[derive(Arbitrary, Clone, Debug)]
pub enum RowexOp {
    /// `insert(key, value)`: the old value must come back, and the new one
    /// be found.
    Insert {
        /// The key, new or not.
        key: KeyPick,
        /// Seed of the value.
        value: u64,
    },
    /// `update_or_insert(key, f)`: `f` must run once, given the model's
    /// old value; it stores a value seeded from the old value's
    /// fingerprint and `seed`, or from `seed` alone.
    Update {
        /// The key.
        key: KeyPick,
        /// Seed of the new value.
        seed: u64,
    },
    /// `remove(key)`: the old value must come back, and the key be gone.
    Remove(KeyPick),
    /// `get_with`, `get_cloned`, `contains_key` (and `get` for `Copy`
    /// values), then the same through a [`ReadPin`].
    Get(KeyPick),
    /// `get_each` over a batch of up to [`MAX_BATCH`] keys (for `Copy`
    /// values), and lookups of them all under one [`ReadPin`].
    GetEach(Vec<KeyPick>),
    /// `range` between two bounds, walked from both ends as `pattern` says.
    Range {
        /// Start bound.
        low: BoundPick,
        /// End bound.
        high: BoundPick,
        /// Which end each item is taken from (bit `i % 64` set: the back).
        pattern: u64,
    },
    /// `first_at_or_after(key)` and `last_at_or_before(key)`.
    Seek(KeyPick),
    /// `first_key_value`, `last_key_value`, `len`, `is_empty` and
    /// `memory_usage`.
    Ends,
    /// `iter()` walked from both ends as `pattern` says; with few keys
    /// also `Debug`.
    Iterate {
        /// Which end each item is taken from.
        pattern: u64,
    },
    /// Insert, update or remove `start + i * step` for `i < len % 301`:
    /// with a step of 1 a last-level node grows through 4, 16, 32, 64 and
    /// 256 children and shrinks back; with a power of 256, a node higher
    /// up.
    Run {
        /// What each key gets.
        kind: RunKind,
        /// The first key.
        start: KeySpec,
        /// Number of keys, modulo 301.
        len: u16,
        /// The step, see [`run_step`].
        step: u8,
        /// Seed of the values (mixed with `i`).
        value: u64,
    },
    /// Look `key` up through a [`ReadPin`], then, still holding it, insert
    /// a value (or remove the key), and look it up through the pin again:
    /// the pin must see the write.
    PinnedWrite {
        /// The key.
        key: KeyPick,
        /// Seed of the value to insert; `None` removes.
        value: Option<u64>,
    },
}

/// What a [`RowexOp::Run`] does to each key.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunKind {
    /// `insert`.
    Insert,
    /// `update_or_insert`.
    Update,
    /// `remove`.
    Remove,
}

/// A threaded step: two writers on disjoint keys of one tree, and
/// perhaps a reader.
#[derive(Arbitrary, Clone, Debug)]
pub struct ThreadPhase {
    /// Which tree (`tree % trees`).
    pub tree: u8,
    /// How keys are split between the writers and the stable class.
    pub split: Split,
    /// A reader thread beside the writers.
    pub reader: Option<ReaderSpec>,
    /// The first writer's operations (at most [`MAX_THREAD_OPS`]).
    pub first: Vec<RowexOp>,
    /// The second writer's operations (at most [`MAX_THREAD_OPS`]).
    pub second: Vec<RowexOp>,
}

/// Where the two class bits of a threaded step lie: class 0 is the first
/// writer's, class 1 the second's, classes 2 and 3 are stable.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// The key's two lowest bits: both writers and the stable keys share
    /// every last-level node, growing and shrinking it together.
    Interleaved,
    /// Bits 8 and 9: the writers own neighbouring last-level nodes under
    /// one parent, which both replace as their nodes grow and shrink.
    Nodes,
    /// The two highest bits: the writers own separate subtrees below the
    /// root, the stable keys the upper half.
    Halves,
}

impl Split {
    /// The position of the lower class bit in a key of type `K`.
    pub fn shift<K: KeyInt>(self) -> u32 {
        match self {
            Split::Interleaved => 0,
            Split::Nodes => 8.min(K::BITS - 2),
            Split::Halves => K::BITS - 2,
        }
    }
}

/// What the reader thread of a threaded step does, round after round
/// until both writers are done: a full walk and a walk between two bounds
/// (from both ends, the pattern rotated each round), the first and last
/// entries and `len()`, seeks from and lookups of stable keys and their
/// neighbours.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub struct ReaderSpec {
    /// Which end each item is taken from.
    pub pattern: u64,
    /// Start bound of the range walk (existing keys are stable keys).
    pub low: BoundPick,
    /// End bound of the range walk.
    pub high: BoundPick,
    /// Look up every `every`-th stable key (at least 1).
    pub every: u8,
}

/// A tree under test with its model, driven by [`check_rowex`]; made by
/// [`subject`].
pub trait RowexSubject {
    /// Applies a sequential operation to the tree and the model.
    fn apply(&mut self, op: &RowexOp, bases: &Bases, step: usize);
    /// Runs a threaded step on the tree.
    fn threads(&mut self, phase: &ThreadPhase, bases: &Bases, step: usize);
    /// Walks the whole tree (from both ends as `pattern` says) and
    /// checks the first and last entries, `is_empty()`, `memory_usage()`
    /// and, if `count`, `len()` against the model.
    fn check_all(&mut self, pattern: u64, count: bool, at: At<'_>);
    /// How many writes the tree's area refused so far.
    fn refusals(&self) -> usize;
    /// The most bytes the tree's area held at a check (0 on the heap).
    fn peak(&self) -> usize;
    /// Ends the tree as `finish` says; a tree in an area is then
    /// destroyed, and the area dropped.
    fn finish(self: Box<Self>, finish: RowexFinish);
}

/// A [`RowexSubject`] for an empty tree of configuration `C`.
pub fn subject<C: RowexConfig>(name: &'static str) -> Box<dyn RowexSubject> {
    Box::new(Checked::<C, LocalSpace> {
        name,
        tree: ConcurrentTree::new(),
        model: BTreeMap::new(),
        budget: Budget::sequential(),
        refusals: Refusals::new(false),
        peak: 0,
        refusal_walks: 0,
    })
}

/// The data segments of an area without a limit, 256 KiB each: 1.25 MiB,
/// about three times what the costliest inputs of the unit tests need
/// (430 KiB: the caps on keys, runs and threaded steps bound it, nodes
/// retired and not yet freed included), so that nothing is refused and
/// writes are unwrapped.
pub const UNLIMITED_SEGMENTS: usize = 5;

/// The limit the `tree_rowex` target gives its limited area, in bytes
/// past the area's empty size: two segments of 64 KiB, the tree's
/// 16 KiB header included. A pool of 256-child nodes, whose span needs a
/// 128 KiB segment, never fits: a node that must grow to 256 children is
/// refused.
pub const SMALL_AREA: usize = 128 << 10;

/// The sequential steps with a refused write after which a limited
/// tree is walked in full, per input (once an area is full most steps
/// with a write are refused, and a walk costs a seek per last-level
/// node); the walk at the end and the key read back after every
/// refusal remain.
pub const REFUSAL_WALKS: usize = 16;

/// The data segments of a limited area, 64 KiB each: two are all that
/// [`SMALL_AREA`] lets it make.
const LIMITED_SEGMENTS: usize = 2;

/// A [`RowexSubject`] for an empty tree of configuration `C` (declared
/// with `memory: shared`) in a heap-backed area of its own, which the
/// tree destroys at the end. With `limit`, the area may grow only that
/// many bytes past its empty size (the control segment): inserts and
/// updates are then refused with [`ShmError::AreaFull`] once it is full,
/// and each refusal must leave the tree as it was. Without, any refusal
/// is a bug.
///
/// # Panics
///
/// If the area or the tree cannot be created.
pub fn shared_subject<C: RowexConfig>(
    name: &'static str,
    limit: Option<usize>,
) -> Box<dyn RowexSubject> {
    let options = match limit {
        None => area_options(SEGMENT, UNLIMITED_SEGMENTS),
        Some(extra) => {
            let options = area_options(64 << 10, LIMITED_SEGMENTS);
            // The control segment's size depends only on the options.
            static EMPTY: OnceLock<usize> = OnceLock::new();
            let empty = *EMPTY.get_or_init(|| {
                Area::create(options.clone())
                    .expect("a heap-backed area")
                    .empty_size()
            });
            options.size_limit(Some(empty + extra))
        }
    };
    let area = Area::create(options).expect("a heap-backed area");
    let tree = SharedConcurrentTree::<C>::create_in(&area)
        .unwrap_or_else(|e| panic!("{name}: creating the tree: {e}"));
    Box::new(Checked::<C, SharedSpace> {
        name,
        tree,
        model: BTreeMap::new(),
        budget: Budget::sequential(),
        refusals: Refusals::new(limit.is_some()),
        peak: 0,
        refusal_walks: REFUSAL_WALKS,
    })
}

/// Runs `input` on `trees` (all empty), panicking at the first
/// difference from a model; what the trees met.
///
/// # Panics
///
/// On any difference, in any thread: that is, on a bug.
pub fn check_rowex(input: &RowexInput, mut trees: Vec<Box<dyn RowexSubject>>) -> RowexSummary {
    assert!(!trees.is_empty(), "no trees to check");
    let mut phases = 0;
    for (index, step) in input.steps.iter().take(MAX_STEPS).enumerate() {
        match step {
            RowexStep::Op(op) => {
                for tree in &mut trees {
                    tree.apply(op, &input.bases, index);
                }
            }
            RowexStep::Threads(phase) => {
                if phases < MAX_THREAD_PHASES {
                    phases += 1;
                    let n = trees.len();
                    trees[usize::from(phase.tree) % n].threads(phase, &input.bases, index);
                }
            }
        }
    }
    for tree in &mut trees {
        tree.check_all(0x5555_5555_5555_5555, true, At::End);
    }
    let summary = RowexSummary {
        refusals: trees.iter().map(|t| t.refusals()).collect(),
        peaks: trees.iter().map(|t| t.peak()).collect(),
    };
    for tree in trees {
        tree.finish(input.finish);
    }
    summary
}

/// What a [`check_rowex`] run met, for tests of the harness itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowexSummary {
    /// Per tree, in the order given, the writes its area refused.
    pub refusals: Vec<usize>,
    /// Per tree, the most bytes its area held at a check (0 for a tree
    /// on the heap).
    pub peaks: Vec<usize>,
}

/// Where a check failed, formatted only when it does.
#[derive(Clone, Copy)]
pub enum At<'a> {
    /// A sequential operation.
    Op {
        /// Its step.
        step: usize,
        /// The operation.
        op: &'a RowexOp,
    },
    /// An operation of a writer thread.
    Writer {
        /// The threaded step.
        step: usize,
        /// The writer: 0 or 1.
        thread: usize,
        /// The operation's position in the writer's list.
        index: usize,
        /// The operation.
        op: &'a RowexOp,
    },
    /// A round of the reader thread.
    Reader {
        /// The threaded step.
        step: usize,
        /// The round.
        round: usize,
    },
    /// After the threads of a threaded step joined.
    Joined(usize),
    /// After a sequential step in which the tree's area refused a write.
    Refused(usize),
    /// After the last step.
    End,
    /// While draining the tree.
    Drain,
    /// Destroying a shared tree, after the drain if any.
    Destroy,
}

impl fmt::Debug for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            At::Op { step, op } => write!(f, "step {step} ({op:?})"),
            At::Writer {
                step,
                thread,
                index,
                op,
            } => write!(f, "step {step}, writer {thread}, op {index} ({op:?})"),
            At::Reader { step, round } => write!(f, "step {step}, reader round {round}"),
            At::Joined(step) => write!(f, "after the threads of step {step}"),
            At::Refused(step) => write!(f, "after a write refused in step {step}"),
            At::End => write!(f, "after the last step"),
            At::Drain => write!(f, "draining"),
            At::Destroy => write!(f, "destroying the tree"),
        }
    }
}

/// A tree's name and where a check is.
#[derive(Clone, Copy)]
struct Ctx<'a> {
    tree: &'static str,
    at: At<'a>,
}

impl fmt::Debug for Ctx<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {:?}", self.tree, self.at)
    }
}

/// The class of `key` under a split at `shift`.
fn class_of<K: KeyInt>(key: K, shift: u32) -> u128 {
    (key.to_u128() >> shift) & 3
}

/// Which keys a view's thread owns (writes, and knows exactly) and which
/// are stable (known exactly, written by nobody).
#[derive(Clone, Copy, Debug)]
enum Part {
    /// The only thread: every key is its own.
    All,
    /// A writer owning class `class` of the split at `shift`.
    Writer { shift: u32, class: u128 },
    /// The reader: it owns nothing, knows the stable classes.
    Reader { shift: u32 },
}

impl Part {
    fn owns<K: KeyInt>(self, key: K) -> bool {
        match self {
            Part::All => true,
            Part::Writer { shift, class } => class_of(key, shift) == class,
            Part::Reader { .. } => false,
        }
    }

    fn stable<K: KeyInt>(self, key: K) -> bool {
        match self {
            Part::All => false,
            Part::Writer { shift, .. } | Part::Reader { shift } => class_of(key, shift) >= 2,
        }
    }

    fn knows<K: KeyInt>(self, key: K) -> bool {
        self.owns(key) || self.stable(key)
    }

    /// `key` with its class bits set to the writer's class.
    fn force<K: KeyInt>(self, key: K) -> K {
        match self {
            Part::Writer { shift, class } => {
                K::from_u128((key.to_u128() & !(3 << shift)) | (class << shift))
            }
            Part::All | Part::Reader { .. } => key,
        }
    }

    /// `d` with two zero bits inserted at the class bits: run offsets that
    /// differ stay different once added to a forced key and forced.
    fn spread(self, d: u128) -> u128 {
        match self {
            Part::Writer { shift, .. } => {
                let low = d & ((1u128 << shift) - 1);
                let high = (d >> shift).checked_shl(shift + 2).unwrap_or(0);
                high | low
            }
            Part::All | Part::Reader { .. } => d,
        }
    }
}

/// A tree as one thread sees it: the model of the keys it owns, the
/// stable model, and the rules of [`Part`].
struct View<'a, C: RowexConfig, S: RowexSpace> {
    tree: &'a ConcurrentTree<C, S>,
    own: &'a mut BTreeMap<C::Key, Val<C>>,
    stable: &'a BTreeMap<C::Key, Val<C>>,
    part: Part,
    bases: Bases,
    budget: &'a mut Budget,
    refusals: &'a Refusals,
}

/// A tree's refused writes: whether its area may refuse them, and how
/// many it did.
struct Refusals {
    allowed: bool,
    count: AtomicUsize,
}

impl Refusals {
    fn new(allowed: bool) -> Self {
        Self {
            allowed,
            count: AtomicUsize::new(0),
        }
    }

    fn count(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }
}

/// What a thread's operations may still spend: items walked, run keys.
struct Budget {
    walk: usize,
    run: usize,
}

impl Budget {
    /// A tree's budget for its sequential operations.
    fn sequential() -> Self {
        Self {
            walk: WALK_BUDGET,
            run: RUN_BUDGET,
        }
    }

    /// A writer's budget in a threaded step.
    fn writer() -> Self {
        Self {
            walk: WALK_BUDGET / 4,
            run: RUN_BUDGET / 4,
        }
    }

    /// No operations: for full checks and the reader, which bound their
    /// own walks.
    fn none() -> Self {
        Self { walk: 0, run: 0 }
    }
}

type Entry<C> = (<C as Config>::Key, Val<C>);

impl<C: RowexConfig, S: RowexSpace> View<'_, C, S> {
    /// The key a pick names, in the thread's class.
    fn pick(&self, pick: KeyPick) -> C::Key {
        self.part.force(pick.key(&self.bases, &*self.own))
    }

    /// What the key holds, if the thread knows.
    fn expect(&self, key: C::Key) -> Option<Option<&Val<C>>> {
        if self.part.owns(key) {
            Some(self.own.get(&key))
        } else if self.part.stable(key) {
            Some(self.stable.get(&key))
        } else {
            None
        }
    }

    /// The keys the thread knows to be present.
    fn known_len(&self) -> usize {
        self.own.len() + self.stable.len()
    }

    /// Whether `key` may be added: present already, or room under
    /// [`MAX_KEYS`].
    fn room_for(&self, key: C::Key) -> bool {
        self.own.contains_key(&key) || self.known_len() < MAX_KEYS
    }

    /// Charges a walk of up to `items` items to the budget: whether there
    /// was room.
    fn charge(&mut self, items: usize) -> bool {
        let room = items <= self.budget.walk;
        if room {
            self.budget.walk -= items;
        }
        room
    }

    fn apply(&mut self, op: &RowexOp, ctx: &Ctx<'_>) {
        match *op {
            RowexOp::Insert { key, value } => {
                let key = self.pick(key);
                if self.room_for(key) {
                    self.insert(key, Val::<C>::from_seed(value), ctx);
                }
            }
            RowexOp::Update { key, seed } => {
                let key = self.pick(key);
                if self.room_for(key) {
                    self.update(key, seed, ctx);
                }
            }
            RowexOp::Remove(key) => {
                let key = self.pick(key);
                self.remove(key, ctx);
            }
            RowexOp::Get(key) => {
                let key = self.pick(key);
                self.lookup(&[key], ctx);
            }
            RowexOp::GetEach(ref picks) => {
                let keys: Vec<C::Key> = picks
                    .iter()
                    .take(MAX_BATCH)
                    .map(|&pick| self.pick(pick))
                    .collect();
                self.lookup(&keys, ctx);
            }
            RowexOp::Range { low, high, pattern } => {
                let low = low.bound(&self.bases, &*self.own);
                let high = high.bound(&self.bases, &*self.own);
                if self.charge(self.known_len()) {
                    self.check_range(low, high, pattern, ctx);
                }
            }
            RowexOp::Seek(key) => {
                let key = key.key(&self.bases, &*self.own);
                self.check_seeks(key, ctx);
            }
            RowexOp::Ends => {
                let count = self.charge(self.known_len());
                self.check_ends(count, ctx);
            }
            RowexOp::Iterate { pattern } => {
                if self.charge(self.known_len()) {
                    self.check_range(Bound::Unbounded, Bound::Unbounded, pattern, ctx);
                    self.check_debug(ctx);
                }
            }
            RowexOp::Run {
                kind,
                start,
                len,
                step,
                value,
            } => {
                let start = self.part.force(start.key::<C::Key>(&self.bases)).to_u128();
                let step = run_step::<C::Key>(step);
                let len =
                    (len % (MAX_RUN + 1)).min(u16::try_from(self.budget.run).unwrap_or(u16::MAX));
                self.budget.run -= usize::from(len);
                for i in 0..len {
                    let offset = self.part.spread(u128::from(i).wrapping_mul(step));
                    let key = self
                        .part
                        .force(C::Key::from_u128(start.wrapping_add(offset)));
                    let seed = mix64(value ^ u64::from(i));
                    match kind {
                        RunKind::Insert if self.room_for(key) => {
                            self.insert(key, Val::<C>::from_seed(seed), ctx)
                        }
                        RunKind::Update if self.room_for(key) => self.update(key, seed, ctx),
                        RunKind::Insert | RunKind::Update => break,
                        RunKind::Remove => self.remove(key, ctx),
                    }
                }
            }
            RowexOp::PinnedWrite { key, value } => {
                let key = self.pick(key);
                if value.is_none() || self.room_for(key) {
                    self.pinned_write(key, value.map(Val::<C>::from_seed), ctx);
                }
            }
        }
    }

    /// Checks that `key` holds what the model says, through `get_with`.
    fn check_key(&self, key: C::Key, ctx: &Ctx<'_>, what: &str) {
        let want = self.own.get(&key).cloned();
        let got = self.tree.get_with(key, Val::<C>::clone);
        assert_eq!(got, want, "{ctx:?}: get_with({key:?}) after {what}");
    }

    /// A write the tree refused: allowed only in a limited area, and only
    /// because it is full. The model stays as it was, and so must the tree
    /// (the caller checks the key, and the step's checks the rest).
    fn refused(&self, error: &S::Error, key: C::Key, ctx: &Ctx<'_>, what: &str) {
        assert!(
            self.refusals.allowed && S::is_full(error),
            "{ctx:?}: {what}({key:?}) refused: {error}"
        );
        self.refusals.count.fetch_add(1, Ordering::Relaxed);
    }

    fn insert(&mut self, key: C::Key, value: Val<C>, ctx: &Ctx<'_>) {
        match S::insert(self.tree, key, value.clone()) {
            Ok(got) => {
                let want = self.own.insert(key, value);
                assert_eq!(got, want, "{ctx:?}: insert({key:?}) returned");
            }
            Err(e) => self.refused(&e, key, ctx, "insert"),
        }
        self.check_key(key, ctx, "insert");
    }

    fn update(&mut self, key: C::Key, seed: u64, ctx: &Ctx<'_>) {
        let make = |old: Option<&Val<C>>| match old {
            Some(old) => Val::<C>::from_seed(mix64(old.fingerprint() ^ seed)),
            None => Val::<C>::from_seed(seed),
        };
        let old = self.own.get(&key).cloned();
        let new = make(old.as_ref());
        let mut calls = 0;
        let mut given = None;
        let got = S::update_or_insert(self.tree, key, |current| {
            calls += 1;
            given = Some(current.cloned());
            make(current)
        });
        // A refused update may have run `f` (its value is dropped), at most
        // once and on the same old value.
        match got {
            Ok(_) => assert_eq!(calls, 1, "{ctx:?}: update_or_insert({key:?}) ran f"),
            Err(_) => assert!(
                calls <= 1,
                "{ctx:?}: update_or_insert({key:?}) ran f {calls} times"
            ),
        }
        if calls == 1 {
            assert_eq!(
                given,
                Some(old.clone()),
                "{ctx:?}: update_or_insert({key:?}) gave f"
            );
        }
        match got {
            Ok(got) => {
                assert_eq!(got, old, "{ctx:?}: update_or_insert({key:?}) returned");
                self.own.insert(key, new);
            }
            Err(e) => self.refused(&e, key, ctx, "update_or_insert"),
        }
        self.check_key(key, ctx, "update_or_insert");
    }

    fn remove(&mut self, key: C::Key, ctx: &Ctx<'_>) {
        let want = self.own.remove(&key);
        // A removal needs no memory: what it would rebuild smaller it
        // leaves as it is when the area is full. Never refused.
        let got = S::remove(self.tree, key)
            .unwrap_or_else(|e| panic!("{ctx:?}: remove({key:?}) refused: {e}"));
        assert_eq!(got, want, "{ctx:?}: remove({key:?}) returned");
        assert!(
            !self.tree.contains_key(key),
            "{ctx:?}: contains_key({key:?}) after remove"
        );
    }

    /// Every lookup of `keys` the tree offers, one at a time and under one
    /// pin; keys the thread does not know are skipped.
    fn lookup(&self, keys: &[C::Key], ctx: &Ctx<'_>) {
        let tree = self.tree;
        let known: Vec<(C::Key, Option<&Val<C>>)> = keys
            .iter()
            .filter_map(|&key| Some((key, self.expect(key)?)))
            .collect();
        for &(key, want) in &known {
            let want = want.cloned();
            assert_eq!(
                tree.get_with(key, Val::<C>::clone),
                want,
                "{ctx:?}: get_with({key:?})"
            );
            assert_eq!(tree.get_cloned(key), want, "{ctx:?}: get_cloned({key:?})");
            assert_eq!(
                tree.contains_key(key),
                want.is_some(),
                "{ctx:?}: contains_key({key:?})"
            );
            if let Some(got) = Val::<C>::get(tree, key) {
                assert_eq!(got, want, "{ctx:?}: get({key:?})");
            }
        }
        let pin = tree.pin();
        for &(key, want) in &known {
            let want = want.cloned();
            assert_eq!(
                pin.get_with(key, Val::<C>::clone),
                want,
                "{ctx:?}: pin().get_with({key:?})"
            );
            assert_eq!(
                pin.contains_key(key),
                want.is_some(),
                "{ctx:?}: pin().contains_key({key:?})"
            );
            if let Some(got) = Val::<C>::pin_get(&pin, key) {
                assert_eq!(got, want, "{ctx:?}: pin().get({key:?})");
            }
        }
        drop(pin);
        if let Some(found) = Val::<C>::get_each(tree, keys) {
            assert_eq!(
                found.len(),
                keys.len(),
                "{ctx:?}: get_each({keys:?}) called found"
            );
            for (i, &(position, key, ref got)) in found.iter().enumerate() {
                assert_eq!(
                    (position, key),
                    (i, keys[i]),
                    "{ctx:?}: get_each({keys:?}) out of order"
                );
                if let Some(want) = self.expect(key) {
                    assert_eq!(got.as_ref(), want, "{ctx:?}: get_each, key {key:?}");
                }
            }
        }
    }

    fn pinned_write(&mut self, key: C::Key, value: Option<Val<C>>, ctx: &Ctx<'_>) {
        let pin = self.tree.pin();
        let before = self.own.get(&key).cloned();
        assert_eq!(
            pin.get_with(key, Val::<C>::clone),
            before,
            "{ctx:?}: pin().get_with({key:?}) before the write"
        );
        match value {
            Some(value) => self.insert(key, value, ctx),
            None => self.remove(key, ctx),
        }
        let after = self.own.get(&key).cloned();
        assert_eq!(
            pin.get_with(key, Val::<C>::clone),
            after,
            "{ctx:?}: pin().get_with({key:?}) after a write under the pin"
        );
        assert_eq!(
            pin.contains_key(key),
            after.is_some(),
            "{ctx:?}: pin().contains_key({key:?}) after a write under the pin"
        );
    }

    /// The known entries between two bounds, ascending.
    fn expected_range(&self, low: Bound<C::Key>, high: Bound<C::Key>) -> Vec<Entry<C>> {
        let Some((lo, hi)) = interval(low, high) else {
            return Vec::new();
        };
        let mut entries: Vec<Entry<C>> = self
            .own
            .range(lo..=hi)
            .chain(self.stable.range(lo..=hi))
            .map(|(k, v)| (*k, v.clone()))
            .collect();
        if !self.own.is_empty() && !self.stable.is_empty() {
            entries.sort_unstable_by_key(|(k, _)| *k);
        }
        entries
    }

    /// Walks `range(low, high)` from both ends as `pattern` says: keys
    /// strictly ascending from the front, descending from the back, the
    /// ends never crossing, all inside the bounds, and the known ones
    /// exactly the models'.
    fn check_range(&self, low: Bound<C::Key>, high: Bound<C::Key>, pattern: u64, ctx: &Ctx<'_>) {
        let want = self.expected_range(low, high);
        let what = (ctx, "range", low, high, pattern);
        let (front, back) = walk_ends(self.tree.range((low, high)), pattern, &what);
        let got: Vec<Entry<C>> = front.into_iter().chain(back.into_iter().rev()).collect();
        for pair in got.windows(2) {
            assert!(
                pair[0].0 < pair[1].0,
                "{what:?}: keys out of order: {:?} then {:?} (front and back joined)",
                pair[0].0,
                pair[1].0
            );
        }
        match interval(low, high) {
            Some((lo, hi)) => {
                if let (Some(first), Some(last)) = (got.first(), got.last()) {
                    assert!(
                        lo <= first.0 && last.0 <= hi,
                        "{what:?}: keys {:?} to {:?} outside the bounds",
                        first.0,
                        last.0
                    );
                }
            }
            None => assert!(got.is_empty(), "{what:?}: an empty range gives {got:?}"),
        }
        let known: Vec<Entry<C>> = got
            .into_iter()
            .filter(|(k, _)| self.part.knows(*k))
            .collect();
        same(&known, &want, &what);
    }

    /// `first_at_or_after` and `last_at_or_before` of `key`.
    fn check_seeks(&self, key: C::Key, ctx: &Ctx<'_>) {
        let got = self.tree.first_at_or_after(key);
        self.check_nearest(got, Bound::Included(key), true, ctx, "first_at_or_after");
        let got = self.tree.last_at_or_before(key);
        self.check_nearest(got, Bound::Included(key), false, ctx, "last_at_or_before");
    }

    /// Checks an entry found as the nearest at or after (`after`) or at or
    /// before `from`: the known one if the thread knows its key, else one
    /// nearer than the nearest known entry.
    fn check_nearest(
        &self,
        got: Option<Entry<C>>,
        from: Bound<C::Key>,
        after: bool,
        ctx: &Ctx<'_>,
        what: &str,
    ) {
        let range = if after {
            (from, Bound::Unbounded)
        } else {
            (Bound::Unbounded, from)
        };
        fn nearest<K: Ord + Copy, V>(
            model: &BTreeMap<K, V>,
            range: (Bound<K>, Bound<K>),
            after: bool,
        ) -> Option<(&K, &V)> {
            let mut it = model.range(range);
            if after {
                it.next()
            } else {
                it.next_back()
            }
        }
        let want = match (
            nearest(self.own, range, after),
            nearest(self.stable, range, after),
        ) {
            (Some(a), Some(b)) => Some(if (a.0 < b.0) == after { a } else { b }),
            (a, b) => a.or(b),
        }
        .map(|(k, v)| (*k, v.clone()));
        let Some((key, value)) = got else {
            assert_eq!(None, want, "{ctx:?}: {what}({from:?}) found nothing");
            return;
        };
        let inside = match from {
            Bound::Included(from) => (key >= from) == after || key == from,
            Bound::Excluded(_) | Bound::Unbounded => true,
        };
        assert!(inside, "{ctx:?}: {what}({from:?}) gives {key:?}");
        if self.part.knows(key) {
            assert_eq!(Some((key, value)), want, "{ctx:?}: {what}({from:?})");
        } else if let Some((known, _)) = want {
            assert!(
                (key < known) == after,
                "{ctx:?}: {what}({from:?}) gives {key:?}, past {known:?}"
            );
        }
    }

    /// The first and last entries; `len()` if `count`, `is_empty()` and
    /// `memory_usage()`.
    fn check_ends(&self, count: bool, ctx: &Ctx<'_>) {
        let first = self.tree.first_key_value();
        self.check_nearest(first, Bound::Unbounded, true, ctx, "first_key_value");
        let last = self.tree.last_key_value();
        self.check_nearest(last, Bound::Unbounded, false, ctx, "last_key_value");
        let known = self.known_len();
        if count {
            let len = self.tree.len();
            match self.part {
                Part::All => assert_eq!(len, known, "{ctx:?}: len()"),
                _ => assert!(len >= known, "{ctx:?}: len() {len}, {known} keys known"),
            }
        }
        let empty = self.tree.is_empty();
        let memory = self.tree.memory_usage();
        match self.part {
            Part::All => {
                assert_eq!(empty, known == 0, "{ctx:?}: is_empty()");
                assert!(
                    known == 0 || memory > 0,
                    "{ctx:?}: memory_usage() {memory} with {known} keys"
                );
            }
            _ if known > 0 => {
                assert!(!empty, "{ctx:?}: is_empty() with {known} keys known");
                assert!(memory > 0, "{ctx:?}: no memory with {known} keys known");
            }
            _ => {}
        }
    }

    /// With few keys and no other writer, `Debug` prints the model's.
    fn check_debug(&self, ctx: &Ctx<'_>) {
        if matches!(self.part, Part::All) && self.own.len() <= MAX_DEBUG_KEYS {
            assert_eq!(
                format!("{:?}", self.tree),
                format!("{:?}", self.own),
                "{ctx:?}: Debug"
            );
        }
    }
}

/// Takes every item of `it`, from the front or the back as `pattern`
/// says, returning the front's items and the back's, each in the order
/// taken; the iterator must stay exhausted at both ends.
fn walk_ends<I: DoubleEndedIterator>(
    mut it: I,
    pattern: u64,
    what: &dyn fmt::Debug,
) -> (Vec<I::Item>, Vec<I::Item>) {
    let mut front = Vec::new();
    let mut back = Vec::new();
    loop {
        let taken = front.len() + back.len();
        if (pattern >> (taken % 64)) & 1 == 1 {
            match it.next_back() {
                Some(item) => back.push(item),
                None => break,
            }
        } else {
            match it.next() {
                Some(item) => front.push(item),
                None => break,
            }
        }
    }
    assert!(
        it.next().is_none() && it.next_back().is_none(),
        "{what:?}: the iterator yields items after it ended"
    );
    (front, back)
}

/// A tree of configuration `C` in space `S` and its model.
struct Checked<C: RowexConfig, S: RowexSpace> {
    name: &'static str,
    tree: ConcurrentTree<C, S>,
    model: BTreeMap<C::Key, Val<C>>,
    /// What the sequential operations may still spend.
    budget: Budget,
    /// The writes the tree's area refused.
    refusals: Refusals,
    /// The most bytes its area held at a check.
    peak: usize,
    /// How many more sequential steps with a refusal end with a full walk.
    refusal_walks: usize,
}

impl<C: RowexConfig, S: RowexSpace> Checked<C, S> {
    /// Runs a reader thread's rounds.
    fn read(
        view: &View<'_, C, S>,
        spec: &ReaderSpec,
        writers_done: &AtomicUsize,
        name: &'static str,
        step: usize,
    ) {
        for round in 0..MAX_READER_ROUNDS {
            let last = writers_done.load(Ordering::Acquire) == 2;
            let ctx = Ctx {
                tree: name,
                at: At::Reader { step, round },
            };
            let pattern = spec.pattern.rotate_left(7 * round as u32);
            if round == 0 {
                view.check_range(Bound::Unbounded, Bound::Unbounded, pattern, &ctx);
            }
            let low = spec.low.bound(&view.bases, view.stable);
            let high = spec.high.bound(&view.bases, view.stable);
            view.check_range(low, high, !pattern, &ctx);
            view.check_ends(false, &ctx);
            let every = usize::from(spec.every.max(1));
            let mut keys = Vec::new();
            for &key in view.stable.keys().skip(round).step_by(every) {
                if keys.len() + 2 > MAX_BATCH {
                    break;
                }
                keys.push(key);
                keys.push(key.offset(1));
            }
            view.lookup(&keys, &ctx);
            if let Some(&key) = keys.first() {
                view.check_seeks(key.offset(-1), &ctx);
                view.check_seeks(key, &ctx);
            }
            if last {
                break;
            }
        }
    }
}

impl<C: RowexConfig, S: RowexSpace> RowexSubject for Checked<C, S> {
    fn apply(&mut self, op: &RowexOp, bases: &Bases, step: usize) {
        let none = BTreeMap::new();
        let refused = self.refusals.count();
        let mut view = View {
            tree: &self.tree,
            own: &mut self.model,
            stable: &none,
            part: Part::All,
            bases: *bases,
            budget: &mut self.budget,
            refusals: &self.refusals,
        };
        let ctx = Ctx {
            tree: self.name,
            at: At::Op { step, op },
        };
        view.apply(op, &ctx);
        self.peak = self.peak.max(S::check_space(&self.tree, &ctx));
        if self.refusals.count() > refused && self.refusal_walks > 0 {
            // A refused write changed nothing anywhere in the tree.
            self.refusal_walks -= 1;
            self.check_all(0x3333_3333_3333_3333, false, At::Refused(step));
        }
    }

    fn threads(&mut self, phase: &ThreadPhase, bases: &Bases, step: usize) {
        let shift = phase.split.shift::<C::Key>();
        let mut owned = [BTreeMap::new(), BTreeMap::new()];
        let mut stable = BTreeMap::new();
        for (key, value) in std::mem::take(&mut self.model) {
            match class_of(key, shift) {
                0 => owned[0].insert(key, value),
                1 => owned[1].insert(key, value),
                _ => stable.insert(key, value),
            };
        }
        let name = self.name;
        let tree = &self.tree;
        let refusals = &self.refusals;
        let stable_ref = &stable;
        let writers_done = AtomicUsize::new(0);
        let done = &writers_done;
        // The threads start together, so that short lists overlap too.
        let start = Barrier::new(2 + usize::from(phase.reader.is_some()));
        let start = &start;
        thread::scope(|s| {
            if let Some(spec) = phase.reader {
                s.spawn(move || {
                    // In an area, the reader and the second writer read
                    // and write through handles of their own, as other
                    // processes do.
                    let attached = S::attach(tree);
                    start.wait();
                    let mut none = BTreeMap::new();
                    let mut budget = Budget::none();
                    let view = View {
                        tree: attached.as_ref().unwrap_or(tree),
                        own: &mut none,
                        stable: stable_ref,
                        part: Part::Reader { shift },
                        bases: *bases,
                        budget: &mut budget,
                        refusals,
                    };
                    Self::read(&view, &spec, done, name, step);
                });
            }
            let [first, second] = &mut owned;
            for (thread, (own, ops)) in [(first, &phase.first), (second, &phase.second)]
                .into_iter()
                .enumerate()
            {
                s.spawn(move || {
                    let attached = if thread == 1 { S::attach(tree) } else { None };
                    start.wait();
                    let mut budget = Budget::writer();
                    let mut view = View {
                        tree: attached.as_ref().unwrap_or(tree),
                        own,
                        stable: stable_ref,
                        part: Part::Writer {
                            shift,
                            class: thread as u128,
                        },
                        bases: *bases,
                        budget: &mut budget,
                        refusals,
                    };
                    for (index, op) in ops.iter().take(MAX_THREAD_OPS).enumerate() {
                        let ctx = Ctx {
                            tree: name,
                            at: At::Writer {
                                step,
                                thread,
                                index,
                                op,
                            },
                        };
                        view.apply(op, &ctx);
                    }
                    done.fetch_add(1, Ordering::Release);
                });
            }
        });
        let [first, second] = owned;
        self.model = stable;
        self.model.extend(first);
        self.model.extend(second);
        self.check_all(0x0F0F_0F0F_0F0F_0F0F, false, At::Joined(step));
    }

    fn check_all(&mut self, pattern: u64, count: bool, at: At<'_>) {
        let none = BTreeMap::new();
        let mut unused = Budget::none();
        let view = View {
            tree: &self.tree,
            own: &mut self.model,
            stable: &none,
            part: Part::All,
            bases: [0; 3],
            budget: &mut unused,
            refusals: &self.refusals,
        };
        let ctx = Ctx {
            tree: self.name,
            at,
        };
        view.check_range(Bound::Unbounded, Bound::Unbounded, pattern, &ctx);
        view.check_ends(count, &ctx);
        self.peak = self.peak.max(S::check_space(&self.tree, &ctx));
    }

    fn refusals(&self) -> usize {
        self.refusals.count()
    }

    fn peak(&self) -> usize {
        self.peak
    }

    fn finish(mut self: Box<Self>, finish: RowexFinish) {
        let ctx = Ctx {
            tree: self.name,
            at: At::Drain,
        };
        if finish == RowexFinish::Drain {
            let mut from_back = false;
            let mut removed = 0;
            while let Some((&key, _)) = if from_back {
                self.model.last_key_value()
            } else {
                self.model.first_key_value()
            } {
                let want = self.model.remove(&key);
                // Each end costs a seek from the root: check the first few
                // and then every 64th.
                if removed < 8 || removed % 64 == 0 {
                    let end = if from_back {
                        self.tree.last_key_value()
                    } else {
                        self.tree.first_key_value()
                    };
                    assert_eq!(
                        end,
                        want.clone().map(|v| (key, v)),
                        "{ctx:?}: the tree's end"
                    );
                }
                let got = S::remove(&self.tree, key)
                    .unwrap_or_else(|e| panic!("{ctx:?}: remove({key:?}) refused: {e}"));
                assert_eq!(got, want, "{ctx:?}: remove({key:?})");
                from_back = !from_back;
                removed += 1;
            }
            assert!(self.tree.is_empty(), "{ctx:?}: is_empty() when drained");
            assert_eq!(self.tree.len(), 0, "{ctx:?}: len() when drained");
            assert_eq!(
                self.tree.first_key_value(),
                None,
                "{ctx:?}: first_key_value() when drained"
            );
        }
        let ctx = Ctx {
            tree: self.name,
            at: At::Destroy,
        };
        let Checked { tree, .. } = *self;
        S::end(tree, &ctx);
    }
}

#[cfg(test)]
mod tests {
    use arbitrary::Unstructured;

    use super::*;

    radix_core::radix_tree! {
        struct Words { key: u64, value: u64, layout: embedded, compression: none, concurrency: rowex }
    }
    radix_core::radix_tree! {
        struct FullWords { key: u64, value: u64, layout: embedded, compression: full, concurrency: rowex }
    }
    radix_core::radix_tree! {
        struct LazyBytes { key: u128, value: Vec<u8>, layout: leaf, compression: lazy, concurrency: rowex }
    }
    radix_core::radix_tree! {
        struct PathBytes { key: u32, value: Vec<u8>, layout: leaf, compression: path, concurrency: rowex }
    }
    radix_core::radix_tree! {
        struct SharedWords { key: u64, value: u64, layout: embedded, memory: shared, compression: none, concurrency: rowex }
    }
    radix_core::radix_tree! {
        struct SharedFullWords { key: u64, value: u64, layout: embedded, memory: shared, compression: full, concurrency: rowex }
    }
    radix_core::radix_tree! {
        struct SharedPairs { key: u128, value: [u64; 2], layout: leaf, memory: shared, compression: none, concurrency: rowex }
    }
    radix_core::radix_tree! {
        struct SharedLazyPairs { key: u128, value: [u64; 2], layout: leaf, memory: shared, compression: lazy, concurrency: rowex }
    }

    /// Runs `input` on the kinds of tree the target has, in its order
    /// (threaded steps name trees by position), the last in a limited
    /// area; then on others.
    fn run_all(input: &RowexInput) -> RowexSummary {
        check_rowex(
            input,
            vec![
                subject::<WordsConfig>("u64 none"),
                subject::<FullWordsConfig>("u64 full"),
                subject::<LazyBytesConfig>("u128 leaf lazy"),
                shared_subject::<SharedWordsConfig>("shared u64 none", None),
                shared_subject::<SharedPairsConfig>("shared u128 leaf none", Some(SMALL_AREA)),
                subject::<PathBytesConfig>("u32 leaf path"),
                shared_subject::<SharedFullWordsConfig>("shared u64 full", None),
                shared_subject::<SharedLazyPairsConfig>("shared u128 leaf lazy", Some(SMALL_AREA)),
            ],
        )
    }

    /// The position of the limited tree in [`run_all`], as in the target.
    const LIMITED: usize = 4;

    /// A run of `len` keys from `start`, `step` as [`run_step`] reads it.
    fn run(kind: RunKind, start: u128, len: u16, step: u8) -> RowexOp {
        RowexOp::Run {
            kind,
            start: KeySpec::Raw(start),
            len,
            step,
            value: start as u64,
        }
    }

    /// Inputs that build the most the caps allow: keys one per subtree
    /// below the root (a chain of nodes each), inserted and removed round
    /// after round so that retired chains wait for reclamation; a node
    /// grown to 256 children and shrunk back, again and again; and the
    /// same by both writers of two threaded steps.
    fn costliest_inputs() -> Vec<RowexInput> {
        // A step of 2^56: each key under a child of its own at the top.
        const SCATTER: u8 = 224 + 7;
        const ONE: u8 = 0;
        let phase = |tree: u8, split: Split, ops: Vec<RowexOp>| {
            RowexStep::Threads(ThreadPhase {
                tree,
                split,
                reader: None,
                first: ops.clone(),
                second: ops,
            })
        };
        let mut inputs = Vec::new();
        for tree in 0..2 {
            let mut churn = Vec::new();
            let mut flap = Vec::new();
            for round in 0..16u128 {
                let start = round * 0x0101_0101_0101_0101 + 0x0123_4567;
                if round < 4 {
                    churn.push(RowexStep::Op(run(RunKind::Insert, start, 300, SCATTER)));
                    churn.push(RowexStep::Op(run(RunKind::Remove, start, 300, SCATTER)));
                }
                flap.push(RowexStep::Op(run(RunKind::Insert, start << 8, 65, ONE)));
                flap.push(RowexStep::Op(run(RunKind::Remove, start << 8, 65, ONE)));
            }
            // Each writer's run keys: chains built and retired twice, or
            // built and left.
            let writer_churn = vec![
                run(RunKind::Insert, 0x0102_0304, 128, SCATTER),
                run(RunKind::Remove, 0x0102_0304, 128, SCATTER),
                run(RunKind::Insert, 0x0506_0708, 128, SCATTER),
                run(RunKind::Remove, 0x0506_0708, 128, SCATTER),
            ];
            let writer_fill = vec![
                run(RunKind::Insert, 0x0102_0304, 128, SCATTER),
                run(RunKind::Remove, 0x0102_0304, 128, SCATTER),
                run(RunKind::Insert, 0x0506_0708, 256, SCATTER),
            ];
            for split in [Split::Halves, Split::Interleaved] {
                churn.push(phase(tree, split, writer_churn.clone()));
                flap.push(phase(tree, split, writer_fill.clone()));
            }
            // Ends with the most keys the caps let stand.
            let full = vec![
                RowexStep::Op(run(RunKind::Insert, 0x0A0B_0C0D, 300, SCATTER)),
                phase(tree, Split::Interleaved, writer_fill.clone()),
                phase(tree, Split::Halves, writer_fill.clone()),
            ];
            for steps in [churn, flap, full] {
                for finish in [RowexFinish::Drain, RowexFinish::Drop] {
                    inputs.push(RowexInput {
                        compression: RowexCompression::None,
                        finish,
                        bases: [0; 3],
                        steps: steps.clone(),
                    });
                }
            }
        }
        inputs
    }

    /// In the limited area 64 keys fit in one node, but it cannot grow to
    /// 256 children, as [`SMALL_AREA`] says.
    #[test]
    fn the_small_area_refuses_a_full_node() {
        let input = RowexInput {
            compression: RowexCompression::None,
            finish: RowexFinish::Drain,
            bases: [0; 3],
            steps: vec![RowexStep::Op(run(RunKind::Insert, 0, 66, 0))],
        };
        let summary = check_rowex(
            &input,
            vec![shared_subject::<SharedPairsConfig>(
                "shared u128 leaf none",
                Some(SMALL_AREA),
            )],
        );
        assert_eq!(summary.refusals, [2]);
    }

    /// The unlimited areas have room to spare for the costliest inputs,
    /// so that their writes can be unwrapped: each such area stays under
    /// half of what its segments can hold.
    #[test]
    fn unlimited_areas_have_room() {
        let capacity = UNLIMITED_SEGMENTS * SEGMENT;
        let mut most = [0; 2];
        for input in costliest_inputs() {
            let summary = check_rowex(
                &input,
                vec![
                    shared_subject::<SharedWordsConfig>("shared u64 none", None),
                    shared_subject::<SharedFullWordsConfig>("shared u64 full", None),
                ],
            );
            for (most, &peak) in most.iter_mut().zip(&summary.peaks) {
                *most = (*most).max(peak);
            }
        }
        eprintln!("peaks {most:?} of {capacity}");
        for peak in most {
            assert!(
                peak <= capacity / 2,
                "an unlimited area reached {peak} of {capacity} bytes"
            );
        }
    }

    /// The `n % len`-th key picks of a class stay in it, and run keys
    /// forced into a class stay distinct.
    #[test]
    fn classes_hold_and_runs_stay_distinct() {
        for shift in [0, 8, 62] {
            for class in 0..2 {
                let part = Part::Writer { shift, class };
                for start in [0u64, 0xFF, 0x3FF, u64::MAX, 1 << 62] {
                    let start = part.force(start).to_u128();
                    let mut keys = std::collections::BTreeSet::new();
                    for step in [1u128, 3, 256, 1 << 16] {
                        keys.clear();
                        for i in 0..300u128 {
                            let key: u64 = part
                                .force(u64::from_u128(start.wrapping_add(part.spread(i * step))));
                            assert!(part.owns(key) && !part.stable(key), "{key:#x}");
                            keys.insert(key);
                        }
                        assert_eq!(keys.len(), 300, "shift {shift} step {step} from {start:#x}");
                    }
                }
            }
        }
    }

    /// The committed seeds decode with every operation kind and a
    /// threaded step, and pass; the `shared_areas` ones fill the limited
    /// area, sequentially and in a threaded step on it.
    #[test]
    fn rowex_seeds_decode_and_pass() {
        let mut kinds = std::collections::BTreeSet::new();
        let mut files = 0;
        let mut shared = 0;
        for (path, input) in crate::seeds::decoded::<RowexInput>("tree_rowex") {
            for step in &input.steps {
                let ops: Vec<&RowexOp> = match step {
                    RowexStep::Op(op) => vec![op],
                    RowexStep::Threads(phase) => {
                        kinds.insert("Threads".to_owned());
                        phase.first.iter().chain(&phase.second).collect()
                    }
                };
                kinds.extend(crate::seeds::kinds(ops));
            }
            let summary = run_all(&input);
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if name.starts_with("shared_areas") {
                shared += 1;
                assert!(
                    summary.refusals[LIMITED] > 0,
                    "{name}: the limited area refused nothing"
                );
                // The same steps without the threaded ones refuse less:
                // the writers of the threaded step on the limited tree
                // were refused too.
                let mut alone = input.clone();
                alone.steps.retain(|step| matches!(step, RowexStep::Op(_)));
                let fewer = run_all(&alone).refusals[LIMITED];
                assert!(
                    fewer < summary.refusals[LIMITED],
                    "{name}: no writer of a threaded step was refused"
                );
            }
            files += 1;
        }
        assert!(files >= 4, "{files} seeds");
        assert_eq!(shared, 2, "the shared_areas seeds");
        assert_eq!(kinds.len(), 12, "kinds in the seeds: {kinds:?}");
    }

    /// Pseudo-random inputs: the harness itself must hold (a smoke test;
    /// the fuzz target does the real search).
    #[test]
    fn random_inputs_run() {
        let mut x = 0x5EED_u64;
        for round in 0..60 {
            let bytes = crate::values::smoke_bytes(&mut x, round);
            let input =
                RowexInput::arbitrary_take_rest(Unstructured::new(&bytes)).expect("decodes");
            run_all(&input);
        }
    }
}
