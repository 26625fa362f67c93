//! The shared-tree harness: one or two trees in a heap-backed area, with or
//! without a small size limit, driven through their locks against
//! `BTreeMap` models.
//!
//! A [`SharedInput`] chooses the area's limit, which trees it holds (the
//! target declares two configurations of different layouts), how they
//! hold keys (a compression, or range values: [`SharedCompression`];
//! [`shared_pairs!`](crate::shared_pairs) declares a pair for each) and a
//! list of [`SharedOp`]s. Each operation goes to one tree: the ordinary tree
//! operations of [`Op`] (writes under a freshly taken write guard, reads
//! under a read guard; the map API's, from [`Op::Entry`] on, do nothing,
//! as the guards do not offer it), or a shared-only one: reading through two read
//! guards while a writer is refused, attaching a second handle and reading
//! and writing through it, or filling the area until an insert is refused.
//!
//! With a limit, inserts and (rarely) removes fail with
//! [`ShmError::AreaFull`]: a refused operation must change nothing. The
//! key's old value (or its absence), the length and the area's size (no
//! larger) are checked at once, and after the operation every tree is verified and
//! compared with its model in full.
//! Any other error, or any refusal without a limit, is a bug.
//!
//! Every [`BATCH`] operations and at the end every tree is verified and
//! compared in full; the area never passes its limit, and while every model
//! is empty the area is back at its empty size. At the end the trees are
//! drained key by key (or cleared, or destroyed full, as the input says),
//! one refused insert per tree must then succeed, and once every tree is
//! destroyed the area's usage must be its empty size again.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Bound;
use std::sync::OnceLock;

use arbitrary::Arbitrary;
use radix_core::config::Removable;
use radix_core::shm::{Area, AreaOptions, Backing, SharedMemory, SharedTree, ShmError, WriteGuard};
use radix_core::{Compression, Config, ValueOf};

use crate::harness::{check_lazy_leaves, expected_height, same, BATCH, MAX_KEYS};
use crate::keys::{interval, near_bound, run_step, Bases, KeyInt, KeySpec};
use crate::map::Previous;
use crate::ops::{Op, MAX_RUN};
use crate::values::{mix64, ModelValue};
use crate::walk::{nth_key, walk, walk_exact};

/// One input of the `tree_shared` target.
#[derive(Arbitrary, Clone, Debug)]
pub struct SharedInput {
    /// The area's size limit.
    pub limit: AreaLimit,
    /// Which trees the area holds.
    pub trees: TreeSet,
    /// How the trees are emptied at the end.
    pub finish: SharedFinish,
    /// The compression of both trees: which of the target's pairs of
    /// configurations runs the input.
    pub compression: SharedCompression,
    /// The bases of [`KeySpec::Clustered`] keys.
    pub bases: Bases,
    /// The operations, applied in order.
    pub ops: Vec<SharedOp>,
}

/// How the trees hold keys: [`radix_core::Compression`], or range values,
/// decodable from fuzz input.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedCompression {
    /// `compression: none`.
    None,
    /// `compression: lazy`.
    Lazy,
    /// `compression: path`.
    Path,
    /// `compression: full`.
    Full,
    /// `ranges: true` (and so `compression: none`): runs of one value
    /// (see [`run_seed`]) merge into range values, which inserts of other
    /// values and removes split, each split allocating at every level it
    /// opens, where a limited area may refuse it half-way.
    Ranges,
}

impl SharedCompression {
    /// The engine's compression for this choice.
    pub fn get(self) -> Compression {
        match self {
            SharedCompression::None | SharedCompression::Ranges => Compression::None,
            SharedCompression::Lazy => Compression::Lazy,
            SharedCompression::Path => Compression::Path,
            SharedCompression::Full => Compression::Full,
        }
    }

    /// Whether the trees have range values.
    pub fn ranges(self) -> bool {
        self == SharedCompression::Ranges
    }
}

/// The value seed of the `i`-th key of a run whose values come from
/// `seed`: `seed ^ i`, a value per key, except in a tree with range
/// values, where an even `seed` gives the whole run one value, so that the
/// run fills chunks of 256 that merge into ranges.
pub fn run_seed<C: Config>(seed: u64, i: u64) -> u64 {
    if C::RANGES && seed.is_multiple_of(2) {
        mix64(seed)
    } else {
        mix64(seed ^ i)
    }
}

/// The area's size limit.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AreaLimit {
    /// None: segments of 64 KiB doubling to 256 KiB, up to 40 of them.
    Unlimited,
    /// `64 KiB << (n % 3)` above the area's empty size, with segments of
    /// 64 KiB doubling to 256 KiB.
    Small(u8),
}

impl AreaLimit {
    /// Bytes above the empty size the area may grow by, if limited.
    pub fn extra(self) -> Option<usize> {
        match self {
            AreaLimit::Unlimited => None,
            AreaLimit::Small(n) => Some((64 << 10) << (n % 3)),
        }
    }
}

/// Which of the target's two tree configurations the area holds.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeSet {
    /// Only a tree of the first configuration.
    First,
    /// Only a tree of the second configuration.
    Second,
    /// One of each, sharing the area.
    Both,
}

/// How the trees are emptied once the operations are done.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedFinish {
    /// Remove every key (alternating ends), then retry a refused insert in
    /// the empty area, then destroy.
    Drain,
    /// `clear()`, retry a refused insert, destroy.
    Clear,
    /// Destroy the trees with their keys in them.
    Destroy,
}

/// One operation of the `tree_shared` target, on the first tree
/// (`second == false`) or the second; with one tree, on that one.
#[derive(Arbitrary, Clone, Debug)]
pub enum SharedOp {
    /// An ordinary tree operation: writes under a write guard taken for
    /// the operation, reads under a read guard.
    Tree {
        /// Which tree.
        second: bool,
        /// The operation.
        op: Op,
    },
    /// Take two read guards at once (a writer must be refused meanwhile)
    /// and walk the tree through both, from both ends as `pattern` says.
    Reread {
        /// Which tree.
        second: bool,
        /// Which end each item is taken from.
        pattern: u64,
    },
    /// Attach a second handle to the tree; read through it beside a read
    /// guard of the first (the `index % len`-th key, the whole contents),
    /// then insert `key` through it and read the key through the first.
    Attach {
        /// Which tree.
        second: bool,
        /// Which existing key to look up.
        index: u16,
        /// The key inserted through the second handle.
        key: KeySpec,
        /// Seed of its value.
        value: u64,
    },
    /// Insert keys from `start` with a stride chosen by `stride` (one key
    /// per node or per leaf node, so memory goes fast) until an insert is
    /// refused, at most [`MAX_FILL`] keys (without a limit, 300).
    Fill {
        /// Which tree.
        second: bool,
        /// The first key.
        start: KeySpec,
        /// The stride, see [`run_step`]; the `i`-th value from
        /// [`run_seed`]`(stride, i)`.
        stride: u8,
    },
}

impl SharedOp {
    /// Whether the operation is for the second tree.
    pub fn second(&self) -> bool {
        match *self {
            SharedOp::Tree { second, .. }
            | SharedOp::Reread { second, .. }
            | SharedOp::Attach { second, .. }
            | SharedOp::Fill { second, .. } => second,
        }
    }
}

/// The most keys one [`SharedOp::Fill`] inserts in a limited area.
pub const MAX_FILL: usize = 16_384;

/// A shared tree configuration the harness drives: a `memory: shared`
/// tree's configuration type with values in their model representation.
/// [`impl_shared_config!`](crate::impl_shared_config) implements it.
pub trait SharedConfig: Config<Memory = SharedMemory, Key: KeyInt> + Removable + Sized {
    /// The model representation of the values.
    type Model: ModelValue;
    /// The configuration's name, for messages.
    const NAME: &'static str;
    /// `insert`, with the value encoded from `value`.
    ///
    /// # Errors
    ///
    /// As the write guard's `insert`.
    fn put(
        w: &mut WriteGuard<'_, Self>,
        key: Self::Key,
        value: &Self::Model,
    ) -> Result<Previous<Self::Model>, ShmError>;
    /// `remove`.
    ///
    /// # Errors
    ///
    /// As the write guard's `remove`.
    fn del(w: &mut WriteGuard<'_, Self>, key: Self::Key)
        -> Result<Previous<Self::Model>, ShmError>;
    /// Replaces the value under `key` through `get_mut`, returning whether
    /// the key was found, or `None` when the layout has no `get_mut`.
    fn overwrite(w: &mut WriteGuard<'_, Self>, key: Self::Key, value: &Self::Model)
        -> Option<bool>;
    /// A stored value in its model representation.
    fn decode(value: &ValueOf<Self>) -> Self::Model;
}

/// Implements [`SharedConfig`] for the configuration type of a
/// `memory: shared` `radix_tree!` (`NAMEConfig`).
///
/// ```ignore
/// radix_core::radix_tree! {
///     struct Words { key: u64, value: u64, layout: embedded, memory: shared }
/// }
/// radix_fuzz::impl_shared_config!(WordsConfig, u64, sized);
/// ```
///
/// The last argument is `sized` (insert and remove return `Option<V>`,
/// `get_mut` exists), `ranged` (as `sized`, without `get_mut`: a tree
/// with range values has none) or `varlen` (insert takes `&V`, insert and
/// remove return `bool`).
#[macro_export]
macro_rules! impl_shared_config {
    ($config:ident, $value:ty, sized) => {
        $crate::impl_shared_config!(@sized $config, $value,
            overwrite(|w, key, value| {
                ::core::option::Option::Some(match w.get_mut(key) {
                    ::core::option::Option::Some(slot) => {
                        *slot = <$value as $crate::FuzzValue>::encode(value);
                        true
                    }
                    ::core::option::Option::None => false,
                })
            })
        );
    };
    ($config:ident, $value:ty, ranged) => {
        $crate::impl_shared_config!(@sized $config, $value,
            overwrite(|_w, _key, _value| { ::core::option::Option::None })
        );
    };
    ($config:ident, $value:ty, varlen) => {
        $crate::impl_shared_config!(@impl $config, $value,
            put(|w, key, value| {
                let value = <$value as $crate::FuzzValue>::encode(value);
                ::core::result::Result::Ok($crate::Previous::from_bool(w.insert(key, &*value)?))
            }),
            del(|w, key| {
                ::core::result::Result::Ok($crate::Previous::from_bool(w.remove(key)?))
            }),
            overwrite(|_w, _key, _value| { ::core::option::Option::None })
        );
    };
    // Insert and remove of values that come back as `Option<V>`.
    (
        @sized $config:ident, $value:ty,
        overwrite(|$ow:ident, $ok:ident, $ov:ident| $overwrite:block)
    ) => {
        $crate::impl_shared_config!(@impl $config, $value,
            put(|w, key, value| {
                let old = w.insert(key, <$value as $crate::FuzzValue>::encode(value))?;
                ::core::result::Result::Ok($crate::Previous::from_option(
                    old.map(|v| <$value as $crate::FuzzValue>::decode(&v)),
                ))
            }),
            del(|w, key| {
                let old = w.remove(key)?;
                ::core::result::Result::Ok($crate::Previous::from_option(
                    old.map(|v| <$value as $crate::FuzzValue>::decode(&v)),
                ))
            }),
            overwrite(|$ow, $ok, $ov| $overwrite)
        );
    };
    (
        @impl $config:ident, $value:ty,
        put(|$pw:ident, $pk:ident, $pv:ident| $put:block),
        del(|$dw:ident, $dk:ident| $del:block),
        overwrite(|$ow:ident, $ok:ident, $ov:ident| $overwrite:block)
    ) => {
        impl $crate::SharedConfig for $config {
            type Model = <$value as $crate::FuzzValue>::Model;
            const NAME: &'static str = stringify!($config);

            fn put(
                $pw: &mut ::radix_core::shm::WriteGuard<'_, Self>,
                $pk: <Self as ::radix_core::Config>::Key,
                $pv: &Self::Model,
            ) -> ::core::result::Result<$crate::Previous<Self::Model>, ::radix_core::shm::ShmError>
            $put

            fn del(
                $dw: &mut ::radix_core::shm::WriteGuard<'_, Self>,
                $dk: <Self as ::radix_core::Config>::Key,
            ) -> ::core::result::Result<$crate::Previous<Self::Model>, ::radix_core::shm::ShmError>
            $del

            fn overwrite(
                $ow: &mut ::radix_core::shm::WriteGuard<'_, Self>,
                $ok: <Self as ::radix_core::Config>::Key,
                $ov: &Self::Model,
            ) -> ::core::option::Option<bool>
            $overwrite

            fn decode(value: &::radix_core::ValueOf<Self>) -> Self::Model {
                <$value as $crate::FuzzValue>::decode(value)
            }
        }
    };
}

/// Declares the `tree_shared` target's configurations, a pair for each
/// [`SharedCompression`], and `fn check_shared_input(&SharedInput) ->
/// Summary`, which runs [`check_shared`] on the pair the input names. The
/// target and this crate's tests expand it, so both run the same trees.
///
/// Each pair is `u64 -> u64` with values in the slot (`layout:
/// embedded`), and `u32 -> VarBytes`, byte strings of 0 to 40 bytes
/// embedded up to 7 bytes and in leaves above (`layout: varlen`).
#[macro_export]
macro_rules! shared_pairs {
    () => {
        $crate::shared_pairs!(@pair none, false, sized:
            Words, WordsConfig, Strings, StringsConfig);
        $crate::shared_pairs!(@pair lazy, false, sized:
            LazyWords, LazyWordsConfig, LazyStrings, LazyStringsConfig);
        $crate::shared_pairs!(@pair path, false, sized:
            PathWords, PathWordsConfig, PathStrings, PathStringsConfig);
        $crate::shared_pairs!(@pair full, false, sized:
            FullWords, FullWordsConfig, FullStrings, FullStringsConfig);
        $crate::shared_pairs!(@pair none, true, ranged:
            RangedWords, RangedWordsConfig, RangedStrings, RangedStringsConfig);

        /// Runs `input` on the pair of configurations its
        /// [`SharedCompression`]($crate::SharedCompression) names.
        fn check_shared_input(input: &$crate::SharedInput) -> $crate::Summary {
            use $crate::SharedCompression as Choice;
            match input.compression {
                Choice::None => $crate::check_shared::<WordsConfig, StringsConfig>(input),
                Choice::Lazy => $crate::check_shared::<LazyWordsConfig, LazyStringsConfig>(input),
                Choice::Path => $crate::check_shared::<PathWordsConfig, PathStringsConfig>(input),
                Choice::Full => $crate::check_shared::<FullWordsConfig, FullStringsConfig>(input),
                Choice::Ranges => {
                    $crate::check_shared::<RangedWordsConfig, RangedStringsConfig>(input)
                }
            }
        }
    };
    (
        @pair $compression:ident, $ranges:literal, $words_access:ident:
        $words:ident, $words_config:ident, $strings:ident, $strings_config:ident
    ) => {
        ::radix_core::radix_tree! {
            /// The pair's first configuration.
            struct $words {
                key: u64,
                value: u64,
                layout: embedded,
                memory: shared,
                compression: $compression,
                ranges: $ranges,
            }
        }

        ::radix_core::radix_tree! {
            /// The pair's second configuration.
            struct $strings {
                key: u32,
                value: ::radix_core::value::VarBytes,
                layout: varlen,
                memory: shared,
                compression: $compression,
                ranges: $ranges,
            }
        }

        $crate::impl_shared_config!($words_config, u64, $words_access);
        $crate::impl_shared_config!($strings_config, ::radix_core::value::VarBytes, varlen);
    };
}

/// The area an input asks for: heap-backed, room for two trees.
///
/// # Panics
///
/// If the area cannot be created.
pub fn make_area(limit: AreaLimit) -> Area {
    let options = AreaOptions::default()
        .backing(Backing::Heap)
        .init_segment_size(64 << 10)
        .max_trees(2);
    let options = match limit.extra() {
        // Each exec zeroes the whole reservation, (slots + 1) times the
        // largest segment: 10 MiB here, twice what the largest trees the
        // operations can build (8192 keys each) take.
        None => options.max_segment_size(256 << 10).max_segments(40),
        Some(extra) => {
            let options = options.max_segment_size(256 << 10).max_segments(16);
            // The control segment's size depends only on the tree slots.
            static EMPTY: OnceLock<usize> = OnceLock::new();
            let empty = *EMPTY.get_or_init(|| {
                Area::create(options.clone())
                    .expect("a heap-backed area")
                    .empty_size()
            });
            options.size_limit(Some(empty + extra))
        }
    };
    Area::create(options).expect("a heap-backed area")
}

/// Runs `input` on a new area holding trees of configurations `A` and `B`
/// (as `input.trees` says) and on their models, panicking on the first
/// difference. Both configurations must have `input.compression`: the
/// caller picks the pair for it.
///
/// # Panics
///
/// On any difference between a tree and its model, a failed `verify()`, a
/// refusal that changed something or was not `AreaFull` in a limited area,
/// an area past its limit, or memory not given back: that is, on a bug.
/// Also when `A` or `B` lacks `input.compression`.
pub fn check_shared<A: SharedConfig, B: SharedConfig>(input: &SharedInput) -> Summary {
    let (compression, ranges) = (input.compression.get(), input.compression.ranges());
    assert!(
        A::COMPRESSION == compression
            && B::COMPRESSION == compression
            && A::RANGES == ranges
            && B::RANGES == ranges,
        "{} and {} do not both have {:?}: the target picked the wrong pair",
        A::NAME,
        B::NAME,
        input.compression
    );
    let area = make_area(input.limit);
    let empty = area.empty_size();
    assert_eq!(area.memory_usage(), empty, "a new area");
    let ctx = Ctx {
        area,
        limited: input.limit.extra().is_some(),
        bases: input.bases,
    };
    let mut trees: Vec<Box<dyn Driven>> = Vec::new();
    let mut ranges = 0;
    if input.trees != TreeSet::Second {
        trees.push(Box::new(Driver::<A>::new(&ctx)));
    }
    if input.trees != TreeSet::First {
        trees.push(Box::new(Driver::<B>::new(&ctx)));
    }
    for (index, op) in input.ops.iter().enumerate() {
        let at = Where::Op { index, op };
        let refused: usize = trees.iter().map(|t| t.refusals()).sum();
        let which = usize::from(op.second()) % trees.len();
        let tree = &mut trees[which];
        match *op {
            SharedOp::Tree { ref op, .. } => tree.apply(op, &ctx, &at),
            SharedOp::Reread { pattern, .. } => tree.reread(pattern, &at),
            SharedOp::Attach {
                index, key, value, ..
            } => tree.attach(&ctx, index, key, value, &at),
            SharedOp::Fill { start, stride, .. } => tree.fill(&ctx, start, stride, &at),
        }
        ctx.check_area(&at);
        for t in &trees {
            t.check_len(&at);
        }
        let refused_now: usize = trees.iter().map(|t| t.refusals()).sum();
        if refused_now > refused || index % BATCH == BATCH - 1 {
            // After a refusal every tree must still equal its model.
            check_all(&ctx, &trees, &at);
            ranges = ranges.max(trees.iter().map(|t| t.ranges()).sum());
        }
    }
    let at = Where::End;
    check_all(&ctx, &trees, &at);
    ranges = ranges.max(trees.iter().map(|t| t.ranges()).sum());
    for t in &trees {
        t.compare_walks(0x5555_5555_5555_5555, &at);
        t.check_stats(&at);
    }

    let summary = Summary {
        refusals: trees.iter().map(|t| t.refusals()).sum(),
        keys: trees.iter().map(|t| t.model_len()).sum(),
        ranges,
    };
    let at = Where::Finish(input.finish);
    match input.finish {
        SharedFinish::Drain | SharedFinish::Clear => {
            for t in &mut trees {
                t.empty(&ctx, input.finish == SharedFinish::Drain, &at);
            }
            check_all(&ctx, &trees, &at);
            assert_eq!(
                ctx.area.memory_usage(),
                empty,
                "{at:?}: emptied trees hold memory"
            );
            for t in &mut trees {
                t.retry_refused(&ctx, &at);
            }
            check_all(&ctx, &trees, &at);
        }
        SharedFinish::Destroy => {}
    }
    // Destroying one tree leaves the other as it was; destroying both
    // gives the area back.
    while let Some(t) = trees.pop() {
        t.destroy(&at);
        check_all(&ctx, &trees, &at);
    }
    assert_eq!(
        ctx.area.memory_usage(),
        empty,
        "{at:?}: memory after destroy"
    );
    assert_eq!(ctx.area.segments(), 0, "{at:?}: segments after destroy");
    summary
}

/// What a [`check_shared`] run met, for tests of the harness itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Inserts and removes refused with `AreaFull`.
    pub refusals: usize,
    /// Keys in the trees after the last operation.
    pub keys: usize,
    /// The most range values the trees held together at one check (after
    /// each refusal, every [`BATCH`] operations and at the end).
    pub ranges: usize,
}

/// What the trees share: the area, whether it is limited, the key bases.
struct Ctx {
    area: Area,
    limited: bool,
    bases: Bases,
}

impl Ctx {
    /// The area is within its limit.
    fn check_area(&self, at: &Where<'_>) {
        if let Some(limit) = self.area.size_limit() {
            let used = self.area.memory_usage();
            assert!(
                used <= limit,
                "{at:?}: area at {used} bytes, past its limit {limit}"
            );
        }
    }

    /// A refusal is allowed only in a limited area, only `AreaFull`, and
    /// must leave the area no larger than `memory`, what it was before.
    #[track_caller]
    fn refusal_allowed(&self, e: &ShmError, what: &dyn fmt::Debug, memory: usize) {
        assert!(
            self.limited && matches!(e, ShmError::AreaFull { .. }),
            "{what:?}: refused: {e}"
        );
        // It may give back spare spans of earlier operations: no larger.
        assert!(
            self.area.memory_usage() <= memory,
            "{what:?}: a refused operation grew the area"
        );
    }
}

/// Every tree in full; the area back at its empty size when every model
/// is empty.
fn check_all(ctx: &Ctx, trees: &[Box<dyn Driven>], at: &Where<'_>) {
    for t in trees {
        t.check_all(at);
    }
    ctx.check_area(at);
    if trees.iter().all(|t| t.model_is_empty()) {
        assert_eq!(
            ctx.area.memory_usage(),
            ctx.area.empty_size(),
            "{at:?}: empty trees hold area memory"
        );
    }
}

/// Where a check failed, formatted only when it does.
#[derive(Clone, Copy)]
pub enum Where<'a> {
    /// While or after applying an operation.
    Op {
        /// Its position in the input.
        index: usize,
        /// The operation.
        op: &'a SharedOp,
    },
    /// After the last operation.
    End,
    /// While emptying and destroying the trees.
    Finish(SharedFinish),
}

impl fmt::Debug for Where<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Where::Op { index, op } => write!(f, "op {index} ({op:?})"),
            Where::End => write!(f, "after the last op"),
            Where::Finish(finish) => write!(f, "finishing with {finish:?}"),
        }
    }
}

/// One tree and its model, behind a trait object so that trees of
/// different configurations share the operation loop.
trait Driven {
    fn refusals(&self) -> usize;
    fn model_is_empty(&self) -> bool;
    fn model_len(&self) -> usize;
    fn ranges(&self) -> usize;
    fn apply(&mut self, op: &Op, ctx: &Ctx, at: &Where<'_>);
    fn reread(&self, pattern: u64, at: &Where<'_>);
    fn attach(&mut self, ctx: &Ctx, index: u16, key: KeySpec, value: u64, at: &Where<'_>);
    fn fill(&mut self, ctx: &Ctx, start: KeySpec, stride: u8, at: &Where<'_>);
    fn check_len(&self, at: &Where<'_>);
    fn check_all(&self, at: &Where<'_>);
    fn compare_walks(&self, pattern: u64, at: &Where<'_>);
    fn check_stats(&self, at: &Where<'_>);
    fn empty(&mut self, ctx: &Ctx, drain: bool, at: &Where<'_>);
    fn retry_refused(&mut self, ctx: &Ctx, at: &Where<'_>);
    fn destroy(self: Box<Self>, at: &Where<'_>);
}

/// A tree of configuration `C` and its model.
struct Driver<C: SharedConfig> {
    tree: SharedTree<C>,
    st: State<C>,
}

/// The model of a tree and what was refused; apart from the tree, so that
/// it changes while a guard borrows the tree.
struct State<C: SharedConfig> {
    model: BTreeMap<C::Key, C::Model>,
    refusals: usize,
    /// The first refused insert, retried once the area is empty.
    first_refused: Option<(C::Key, C::Model)>,
}

impl<C: SharedConfig> Driver<C> {
    fn new(ctx: &Ctx) -> Self {
        let tree = SharedTree::<C>::create_in(&ctx.area).expect("a tree slot");
        assert!(
            tree.read().is_empty(),
            "{}: a new tree is not empty",
            C::NAME
        );
        Self {
            tree,
            st: State {
                model: BTreeMap::new(),
                refusals: 0,
                first_refused: None,
            },
        }
    }

    fn nth(&self, index: u16) -> Option<C::Key> {
        nth_key(&self.st.model, index)
    }

    fn get(&self, key: C::Key, at: &Where<'_>) {
        let r = self.tree.read();
        let expected = self.st.model.get(&key);
        assert_eq!(
            r.get(key).map(C::decode).as_ref(),
            expected,
            "{at:?}: {}: get({key:?})",
            C::NAME
        );
        assert_eq!(
            r.contains_key(key),
            expected.is_some(),
            "{at:?}: {}: contains_key({key:?})",
            C::NAME
        );
    }

    fn range(&self, low: Bound<C::Key>, high: Bound<C::Key>, pattern: u64, at: &Where<'_>) {
        let expected = match interval(low, high) {
            Some((first, last)) => walk(
                self.st
                    .model
                    .range(first..=last)
                    .map(|(k, v)| (*k, v.clone())),
                pattern,
            ),
            None => Vec::new(),
        };
        let r = self.tree.read();
        let got = walk(
            r.range((low, high)).map(|(k, v)| (k, C::decode(v))),
            pattern,
        );
        same(&got, &expected, &(at, C::NAME, "range", low, high, pattern));
    }
}

impl<C: SharedConfig> State<C> {
    /// Checks a refused insert or remove of `key`: allowed here (an
    /// `AreaFull` under a limit, the area no larger), and the tree's
    /// length and the key's value as the model has them.
    fn refused(
        &mut self,
        ctx: &Ctx,
        w: &WriteGuard<'_, C>,
        key: C::Key,
        e: &ShmError,
        memory: usize,
        what: &dyn fmt::Debug,
    ) {
        ctx.refusal_allowed(e, what, memory);
        assert_eq!(w.len(), self.model.len(), "{what:?}: len changed");
        assert_eq!(
            w.get(key).map(C::decode).as_ref(),
            self.model.get(&key),
            "{what:?}: the key changed"
        );
        self.refusals += 1;
    }

    /// Inserts under `w`; on a refusal checks that the key still holds
    /// what the model holds. Returns whether the insert was refused.
    fn insert(
        &mut self,
        ctx: &Ctx,
        w: &mut WriteGuard<'_, C>,
        key: C::Key,
        value: C::Model,
        at: &Where<'_>,
    ) -> bool {
        let memory = ctx.area.memory_usage();
        match C::put(w, key, &value) {
            Ok(old) => {
                let what = (at, C::NAME, "insert", key);
                old.assert_is(self.model.insert(key, value).as_ref(), &what);
                false
            }
            Err(e) => {
                self.refused(
                    ctx,
                    w,
                    key,
                    &e,
                    memory,
                    &(at, C::NAME, "refused insert", key),
                );
                if self.first_refused.is_none() {
                    self.first_refused = Some((key, value));
                }
                true
            }
        }
    }

    /// Removes under `w`; on a refusal checks that the key is still there
    /// with its value. Returns whether the remove was refused.
    fn remove(
        &mut self,
        ctx: &Ctx,
        w: &mut WriteGuard<'_, C>,
        key: C::Key,
        at: &Where<'_>,
    ) -> bool {
        let memory = ctx.area.memory_usage();
        match C::del(w, key) {
            Ok(old) => {
                let what = (at, C::NAME, "remove", key);
                old.assert_is(self.model.remove(&key).as_ref(), &what);
                assert!(!w.contains_key(key), "{what:?}: removed key still present");
                false
            }
            Err(e) => {
                self.refused(
                    ctx,
                    w,
                    key,
                    &e,
                    memory,
                    &(at, C::NAME, "refused remove", key),
                );
                true
            }
        }
    }
}

impl<C: SharedConfig> Driven for Driver<C> {
    fn refusals(&self) -> usize {
        self.st.refusals
    }

    fn model_is_empty(&self) -> bool {
        self.st.model.is_empty()
    }

    fn model_len(&self) -> usize {
        self.st.model.len()
    }

    fn ranges(&self) -> usize {
        self.tree.read().stats().ranges
    }

    fn apply(&mut self, op: &Op, ctx: &Ctx, at: &Where<'_>) {
        let bases = &ctx.bases;
        match *op {
            Op::Insert { key, value } => {
                let mut w = self.tree.write();
                self.st
                    .insert(ctx, &mut w, key.key(bases), C::Model::from_seed(value), at);
            }
            Op::Replace { index, value } => {
                if let Some(key) = self.nth(index) {
                    let mut w = self.tree.write();
                    self.st
                        .insert(ctx, &mut w, key, C::Model::from_seed(value), at);
                }
            }
            Op::Modify { index, value } => {
                if let Some(key) = self.nth(index) {
                    let value = C::Model::from_seed(value);
                    let mut w = self.tree.write();
                    match C::overwrite(&mut w, key, &value) {
                        Some(found) => {
                            assert!(found, "{at:?}: {}: get_mut({key:?}) found nothing", C::NAME);
                            self.st.model.insert(key, value);
                        }
                        None => {
                            self.st.insert(ctx, &mut w, key, value, at);
                        }
                    }
                }
            }
            Op::Remove(key) => {
                let mut w = self.tree.write();
                self.st.remove(ctx, &mut w, key.key(bases), at);
            }
            Op::RemoveExisting(index) => {
                if let Some(key) = self.nth(index) {
                    let mut w = self.tree.write();
                    self.st.remove(ctx, &mut w, key, at);
                }
            }
            Op::Get(key) => self.get(key.key(bases), at),
            Op::GetNear { index, delta } => {
                if let Some(key) = self.nth(index) {
                    self.get(key.offset(i128::from(delta)), at);
                }
            }
            Op::Range { low, high, pattern } => {
                self.range(low.bound(bases), high.bound(bases), pattern, at)
            }
            Op::RangeNear {
                from,
                from_delta,
                from_excluded,
                to,
                to_delta,
                to_excluded,
                pattern,
            } => {
                if let (Some(from), Some(to)) = (self.nth(from), self.nth(to)) {
                    let low = near_bound(from, from_delta, from_excluded);
                    let high = near_bound(to, to_delta, to_excluded);
                    self.range(low, high, pattern, at);
                }
            }
            Op::Iterate { pattern } => {
                self.compare_walks(pattern, at);
                self.check_stats(at);
            }
            Op::Clear => {
                self.tree.write().clear();
                self.st.model.clear();
                self.check_all(at);
            }
            Op::InsertRun {
                start,
                len,
                step,
                value,
            } => {
                let start = start.key::<C::Key>(bases).to_u128();
                let step = run_step::<C::Key>(step);
                let mut w = self.tree.write();
                for i in 0..len % (MAX_RUN + 1) {
                    let key =
                        C::Key::from_u128(start.wrapping_add(u128::from(i).wrapping_mul(step)));
                    if self.st.model.len() >= MAX_KEYS && !self.st.model.contains_key(&key) {
                        break;
                    }
                    let seed = run_seed::<C>(value, u64::from(i));
                    self.st
                        .insert(ctx, &mut w, key, C::Model::from_seed(seed), at);
                }
            }
            Op::RemoveRun { start, len, step } => {
                let start = start.key::<C::Key>(bases).to_u128();
                let step = run_step::<C::Key>(step);
                let mut w = self.tree.write();
                for i in 0..len % (MAX_RUN + 1) {
                    let key =
                        C::Key::from_u128(start.wrapping_add(u128::from(i).wrapping_mul(step)));
                    self.st.remove(ctx, &mut w, key, at);
                }
            }
            Op::Verify => self.check_all(at),
            // The map API of local trees, which a shared tree's guards do
            // not offer: nothing to do.
            Op::Entry { .. }
            | Op::IterMut { .. }
            | Op::RangeMut { .. }
            | Op::IntoIter { .. }
            | Op::Pop { .. }
            | Op::Retain { .. }
            | Op::SplitAppend { .. }
            | Op::Append(_)
            | Op::Seek(_)
            | Op::Cursor { .. }
            | Op::CloneChange { .. }
            | Op::SetOp { .. }
            | Op::Compare(_) => {}
        }
    }

    fn reread(&self, pattern: u64, at: &Where<'_>) {
        let r1 = self.tree.read();
        let r2 = self.tree.try_read().expect("readers share the lock");
        assert!(
            matches!(self.tree.try_write(), Err(ShmError::WouldBlock)),
            "{at:?}: {}: a writer got in beside readers",
            C::NAME
        );
        let want = walk(self.st.model.iter().map(|(k, v)| (*k, v.clone())), pattern);
        let got = walk_exact(r2.iter().map(|(k, v)| (k, C::decode(v))), pattern);
        same(
            &got,
            &want,
            &(at, C::NAME, "second reader's iter()", pattern),
        );
        assert_eq!(r1.len(), r2.len(), "{at:?}: {}: readers disagree", C::NAME);
        let keys = walk_exact(r1.keys(), !pattern);
        let want = walk(self.st.model.keys().copied(), !pattern);
        same(
            &keys,
            &want,
            &(at, C::NAME, "first reader's keys()", !pattern),
        );
    }

    fn attach(&mut self, ctx: &Ctx, index: u16, key: KeySpec, value: u64, at: &Where<'_>) {
        let other = SharedTree::<C>::attach(&ctx.area, self.tree.handle()).expect("attach");
        assert_eq!(
            other.handle(),
            self.tree.handle(),
            "{at:?}: attached handle"
        );
        {
            let mine = self.tree.read();
            let theirs = other.read();
            if let Some(k) = self.nth(index) {
                assert_eq!(
                    theirs.get(k).map(C::decode).as_ref(),
                    self.st.model.get(&k),
                    "{at:?}: {}: get({k:?}) through the second handle",
                    C::NAME
                );
                assert_eq!(
                    mine.get(k).map(C::decode),
                    theirs.get(k).map(C::decode),
                    "{at:?}: {}: the handles disagree",
                    C::NAME
                );
            }
            let pattern = mix64(u64::from(index));
            let want = walk(self.st.model.iter().map(|(k, v)| (*k, v.clone())), pattern);
            let got = walk_exact(theirs.iter().map(|(k, v)| (k, C::decode(v))), pattern);
            same(
                &got,
                &want,
                &(at, C::NAME, "iter() through the second handle", pattern),
            );
            assert_eq!(mine.len(), theirs.len(), "{at:?}: {}: len()", C::NAME);
        }
        let key = key.key::<C::Key>(&ctx.bases);
        {
            let mut theirs = other.write();
            assert!(
                matches!(self.tree.try_read(), Err(ShmError::WouldBlock)),
                "{at:?}: {}: a reader got in beside the writer",
                C::NAME
            );
            self.st
                .insert(ctx, &mut theirs, key, C::Model::from_seed(value), at);
        }
        drop(other);
        self.get(key, at);
    }

    fn fill(&mut self, ctx: &Ctx, start: KeySpec, stride: u8, at: &Where<'_>) {
        let start = start.key::<C::Key>(&ctx.bases).to_u128();
        // A stride of a power of 256 puts every key in a node of its own
        // at some level; small strides fill last-level nodes.
        let step = run_step::<C::Key>(stride.wrapping_add(224));
        let most = if ctx.limited { MAX_FILL } else { 300 };
        let mut w = self.tree.write();
        for i in 0..most {
            let offset = (i as u128).wrapping_mul(step) ^ (i as u128 >> 6);
            let key = C::Key::from_u128(start.wrapping_add(offset));
            let seed = run_seed::<C>(u64::from(stride), i as u64);
            if self
                .st
                .insert(ctx, &mut w, key, C::Model::from_seed(seed), at)
            {
                break;
            }
        }
    }

    fn check_len(&self, at: &Where<'_>) {
        let r = self.tree.read();
        assert_eq!(r.len(), self.st.model.len(), "{at:?}: {}: len()", C::NAME);
        assert_eq!(
            r.is_empty(),
            self.st.model.is_empty(),
            "{at:?}: {}: is_empty()",
            C::NAME
        );
    }

    fn check_all(&self, at: &Where<'_>) {
        let r = self.tree.read();
        if let Err(e) = r.verify() {
            panic!("{at:?}: {}: verify failed: {e}", C::NAME);
        }
        assert_eq!(r.len(), self.st.model.len(), "{at:?}: {}: len()", C::NAME);
        let want: Vec<_> = self.st.model.iter().map(|(k, v)| (*k, v.clone())).collect();
        let got = walk_exact(r.iter().map(|(k, v)| (k, C::decode(v))), 0);
        same(&got, &want, &(at, C::NAME, "iter()"));
    }

    fn compare_walks(&self, pattern: u64, at: &Where<'_>) {
        let r = self.tree.read();
        let entries = walk(self.st.model.iter().map(|(k, v)| (*k, v.clone())), pattern);
        let keys = walk(self.st.model.keys().copied(), pattern);
        let values = walk(self.st.model.values().cloned(), pattern);
        let name = C::NAME;
        same(
            &walk_exact(r.iter().map(|(k, v)| (k, C::decode(v))), pattern),
            &entries,
            &(at, name, "iter()", pattern),
        );
        same(
            &walk_exact(r.keys(), pattern),
            &keys,
            &(at, name, "keys()", pattern),
        );
        same(
            &walk_exact(r.values().map(C::decode), pattern),
            &values,
            &(at, name, "values()", pattern),
        );
        let first = self.st.model.iter().next().map(|(k, v)| (*k, v.clone()));
        let last = self
            .st
            .model
            .iter()
            .next_back()
            .map(|(k, v)| (*k, v.clone()));
        assert_eq!(
            r.first_key_value().map(|(k, v)| (k, C::decode(v))),
            first,
            "{at:?}: {name}: first_key_value()"
        );
        assert_eq!(
            r.last_key_value().map(|(k, v)| (k, C::decode(v))),
            last,
            "{at:?}: {name}: last_key_value()"
        );
    }

    fn check_stats(&self, at: &Where<'_>) {
        let height = expected_height(self.st.model.keys().next_back().copied(), C::COMPRESSION);
        let r = self.tree.read();
        let stats = r.stats();
        let name = C::NAME;
        assert_eq!(
            stats.keys,
            self.st.model.len(),
            "{at:?}: {name}: stats().keys"
        );
        if C::RANGES {
            // A range value sits in the slot of the level above its span:
            // a span of keys 0..=255 alone makes a tree of height 2.
            assert!(
                (height..=height + 1).contains(&stats.height),
                "{at:?}: {name}: stats().height {} for a largest key of height {height}",
                stats.height
            );
        } else {
            assert_eq!(stats.height, height, "{at:?}: {name}: stats().height");
        }
        check_lazy_leaves(&stats, C::COMPRESSION, &(at, name));
        assert_eq!(
            stats.memory_bytes,
            r.memory_usage(),
            "{at:?}: {name}: stats().memory_bytes"
        );
        assert_eq!(
            r.memory_usage(),
            self.tree.area().memory_usage(),
            "{at:?}: {name}: memory_usage() is the area's"
        );
        assert!(
            format!("{:?}", self.tree).contains("SharedTree"),
            "{at:?}: {name}: Debug"
        );
    }

    fn empty(&mut self, ctx: &Ctx, drain: bool, at: &Where<'_>) {
        if drain {
            // Alternate ends; a refused remove leaves its key for the next
            // pass, and after three passes the rest is cleared.
            for _ in 0..3 {
                let keys: Vec<C::Key> = self.st.model.keys().copied().collect();
                let (mut front, mut back) = (0, keys.len());
                let mut w = self.tree.write();
                while front < back {
                    let key = if (front + keys.len() - back) % 2 == 0 {
                        front += 1;
                        keys[front - 1]
                    } else {
                        back -= 1;
                        keys[back]
                    };
                    self.st.remove(ctx, &mut w, key, at);
                }
                drop(w);
                if self.st.model.is_empty() {
                    break;
                }
                self.check_all(at);
            }
        }
        if !self.st.model.is_empty() {
            self.tree.write().clear();
            self.st.model.clear();
        }
        self.check_all(at);
    }

    fn retry_refused(&mut self, ctx: &Ctx, at: &Where<'_>) {
        if let Some((key, value)) = self.st.first_refused.take() {
            let mut w = self.tree.write();
            let refusals = self.st.refusals;
            self.st.insert(ctx, &mut w, key, value, at);
            assert_eq!(
                self.st.refusals,
                refusals,
                "{at:?}: {}: the refused insert of {key:?} is refused in an empty area",
                C::NAME
            );
            assert!(
                !self.st.remove(ctx, &mut w, key, at),
                "{at:?}: {}: removing the retried key {key:?} was refused",
                C::NAME
            );
        }
    }

    fn destroy(self: Box<Self>, at: &Where<'_>) {
        let other = SharedTree::<C>::attach(self.tree.area(), self.tree.handle())
            .expect("attach before destroy");
        let Self { tree, .. } = *self;
        tree.destroy()
            .unwrap_or_else(|e| panic!("{at:?}: {}: destroy: {e}", C::NAME));
        assert!(
            matches!(other.try_read(), Err(ShmError::NoSuchTree { .. })),
            "{at:?}: {}: a handle of a destroyed tree still reads",
            C::NAME
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbitrary::Unstructured;

    crate::shared_pairs!();

    fn replay(bytes: &[u8]) -> (SharedInput, Summary) {
        let input = SharedInput::arbitrary_take_rest(Unstructured::new(bytes)).expect("decodes");
        let summary = check_shared_input(&input);
        (input, summary)
    }

    /// The committed seeds decode to what make_seeds.py meant: the limited
    /// ones reach their limit, and every one leaves keys to finish with,
    /// on the uncompressed pair and (names prefixed) on each compressed
    /// one and the one with ranges, whose own seed forms range values.
    #[test]
    fn seeds_reach_what_they_aim_at() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/seeds/tree_shared");
        for (prefix, compression) in [
            ("", SharedCompression::None),
            ("lazy_", SharedCompression::Lazy),
            ("path_", SharedCompression::Path),
            ("full_", SharedCompression::Full),
            ("ranges_", SharedCompression::Ranges),
        ] {
            let mut seeds = vec![
                ("fill_both_limited", true),
                ("one_node_per_key", true),
                ("varlen_limited", true),
                ("two_trees_destroyed_full", false),
            ];
            if compression.ranges() {
                seeds.push(("split_refused", true));
            }
            for (seed, limited) in seeds {
                let name = format!("{prefix}{seed}");
                let bytes = std::fs::read(format!("{dir}/{name}"))
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                let (input, summary) = replay(&bytes);
                assert_eq!(input.compression, compression, "{name}: {input:?}");
                assert_eq!(input.limit.extra().is_some(), limited, "{name}: {input:?}");
                assert_eq!(summary.refusals > 0, limited, "{name}: {summary:?}");
                assert!(summary.keys > 0, "{name}: {summary:?}");
                if seed == "split_refused" {
                    assert!(summary.ranges > 0, "{name}: {summary:?}");
                }
            }
        }
    }

    /// Pseudo-random inputs on every pair, the one with ranges included:
    /// the harness itself must hold (a smoke test; the fuzz target does
    /// the real search).
    #[test]
    fn random_inputs_run_on_every_pair() {
        let mut pairs = std::collections::BTreeSet::new();
        for input in crate::seeds::smoke_inputs(0x5EED_0004, 60, |i: &mut SharedInput| &mut i.ops) {
            check_shared_input(&input);
            pairs.insert(format!("{:?}", input.compression));
        }
        assert_eq!(pairs.len(), 5, "pairs the inputs chose: {pairs:?}");
    }

    #[test]
    fn limits_are_small() {
        assert_eq!(AreaLimit::Unlimited.extra(), None);
        assert_eq!(AreaLimit::Small(0).extra(), Some(64 << 10));
        assert_eq!(AreaLimit::Small(4).extra(), Some(128 << 10));
        assert_eq!(AreaLimit::Small(255).extra(), Some(64 << 10));
    }
}
