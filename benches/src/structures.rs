//! What a measured structure is to the workloads: one trait per workload
//! family ([`RtMap`], [`DeadTidSet`], [`SetOps`], [`ConcurrentMap`] for
//! RT-C, and [`TidBitmapPeer`] with its walk's [`PageSink`] for the TB
//! workloads), the data SET-1 hands its structures ([`TidSide`]), and the
//! encodings both sides use.
//!
//! The workloads (`crate::workloads`) drive these traits and the peers
//! (`crate::peers`) implement them; both import this file, and neither
//! imports the other's.

use tidstore::Tid;

use crate::rng::hash64;

/// A map from `K` to `u64`, as the RT workloads use it: `u64` keys for
/// RT-1 to RT-6, `u128` keys for RT-7.
pub trait RtMap<K: Copy = u64> {
    /// The `impl` name in reports (`project`, `btreemap`, ...).
    const NAME: &'static str;

    /// Whether the workloads hand this map its lookups and inserts as
    /// runs, through [`get_each`](Self::get_each) and
    /// [`insert_each`](Self::insert_each), rather than one
    /// [`get`](Self::get) / [`insert`](Self::insert) call per operation:
    /// for a map behind a lock, which takes it once per batch. The
    /// operations and their order are the same either way.
    const BATCHED: bool = false;

    /// An empty map.
    fn new() -> Self;

    /// Inserts or replaces the value of `key`.
    fn insert(&mut self, key: K, value: u64);

    /// Inserts every pair of `pairs`, in order: the load phases' inserts
    /// for a [`BATCHED`](Self::BATCHED) map.
    ///
    /// Provided as one [`insert`](Self::insert) per pair; a shared tree
    /// overrides it to take its write lock once per batch of pairs.
    #[inline(always)]
    fn insert_each<I: IntoIterator<Item = (K, u64)>>(&mut self, pairs: I) {
        for (key, value) in pairs {
            self.insert(key, value);
        }
    }

    /// Ends a load: called once after a workload's inserts, inside the
    /// timed load. A sorted vector sorts here; most maps do nothing.
    #[inline]
    fn seal(&mut self) {}

    /// The value of `key`.
    ///
    /// Every adapter marks this `#[inline(always)]`, so the measured loop
    /// inlines the structure's own lookup as far as its crate allows: the
    /// harness never decides for one structure and not another whether a
    /// lookup is a call.
    fn get(&self, key: K) -> Option<u64>;

    /// Looks up `key(item)` for every item of `items`, in order, and gives
    /// `found` each item with its answer: the search phases' lookups for a
    /// [`BATCHED`](Self::BATCHED) map.
    ///
    /// Provided as one [`get`](Self::get) per item, inlined as `get` is; a
    /// shared tree overrides it to take its read lock once per batch of
    /// items.
    #[inline(always)]
    fn get_each<T: Copy>(
        &self,
        items: &[T],
        key: impl Fn(T) -> K,
        mut found: impl FnMut(T, Option<u64>),
    ) {
        for &item in items {
            found(item, self.get(key(item)));
        }
    }

    /// Removes `key`; whether it was present.
    fn remove(&mut self, key: K) -> bool;

    /// A point between batches of operations where no reference into the
    /// map is held. An epoch-based map (congee) reclaims retired nodes
    /// here; the others do nothing. Called after each churn round (timed)
    /// and before memory is read.
    #[inline]
    fn quiesce(&mut self) {}

    /// Bytes held, for a structure that accounts for its own memory;
    /// `None` to have the counting allocator measure it.
    fn own_memory(&self) -> Option<usize> {
        None
    }
}

/// A set of dead TIDs, as the TS workloads (vacuum's index cleanup) use it.
pub trait DeadTidSet {
    /// The `impl` name in reports (`project`, `array`, ...).
    const NAME: &'static str;

    /// Whether the lookup phases hand this set its lookups as runs, through
    /// [`is_member_each`](Self::is_member_each), rather than one
    /// [`is_member`](Self::is_member) call per TID: for a set behind a
    /// lock, which takes it once per batch. The lookups and their order are
    /// the same either way.
    const BATCHED: bool = false;

    /// An empty set that will receive `ndead` TIDs. Only the dead-tuple
    /// array uses the number: it is allocated at exactly that size.
    fn with_capacity(ndead: u64) -> Self;

    /// Adds the dead `offsets` of `block` (ascending, non-empty), for a
    /// block not yet in the set. Blocks arrive in ascending order. Sets
    /// with no per-block call insert one TID at a time.
    fn set_block_offsets(&mut self, block: u32, offsets: &[u16]);

    /// Calls [`set_block_offsets`](Self::set_block_offsets) for every block
    /// of `blocks`, in order, each with `offsets`: the load phase of a
    /// [`BATCHED`](Self::BATCHED) set.
    ///
    /// Provided as one call per block; a shared store overrides it to take
    /// its write lock once per batch of blocks.
    #[inline(always)]
    fn set_blocks_each(&mut self, blocks: &[u32], offsets: &[u16]) {
        for &block in blocks {
            self.set_block_offsets(block, offsets);
        }
    }

    /// Whether `tid` is in the set. Every adapter marks this
    /// `#[inline(always)]`, as [`RtMap::get`].
    fn is_member(&self, tid: Tid) -> bool;

    /// Asks [`is_member`](Self::is_member) for every TID of `tids`, in
    /// order, and gives `found` each TID with its answer: the lookup
    /// phases of a [`BATCHED`](Self::BATCHED) set.
    ///
    /// Provided as one `is_member` per TID; a shared store overrides it to
    /// take its read lock once per batch of TIDs.
    #[inline(always)]
    fn is_member_each(&self, tids: &[Tid], mut found: impl FnMut(Tid, bool)) {
        for &tid in tids {
            found(tid, self.is_member(tid));
        }
    }

    /// Counts the members among `tids`, which ascend: the in-order lookup
    /// phase. Provided as [`is_member`](Self::is_member) per TID (through
    /// [`is_member_each`](Self::is_member_each) for a
    /// [`BATCHED`](Self::BATCHED) set); a set with a lookup made for
    /// ascending probes overrides it, as the project's store does with
    /// [`TidStore::ordered_lookup`](tidstore::TidStore::ordered_lookup),
    /// the call a caller that probes in order (vacuum's correlated index
    /// pass) makes.
    #[inline(always)]
    fn count_members_ascending(&self, tids: &[Tid]) -> u64
    where
        Self: Sized,
    {
        lookup(self, tids)
    }

    /// Walks the set in block order, giving each block's offsets,
    /// ascending, extracted into a buffer.
    fn for_each_block<F: FnMut(u32, &[u16])>(&self, f: F);

    /// Bytes held, for a structure that accounts for its own memory;
    /// `None` to have the counting allocator measure it.
    fn own_memory(&self) -> Option<usize> {
        None
    }
}

/// A `u64 -> u64` map shared by threads, as RT-C uses it: every operation
/// takes `&self`, and readers and writers run at once.
///
/// A thread makes its operations in runs, holding one
/// [`Guard`](Self::Guard) across each run: the epoch guard that a map
/// whose API takes one explicitly (congee, scc) advises reusing, since
/// pinning costs more than a lookup's share of it. A map that pins or
/// locks inside each call has `Guard = ()` and pays that per operation,
/// as its users do.
pub trait ConcurrentMap: Send + Sync + Sized {
    /// The `impl` name in reports (`project`, `congee`, ...).
    const NAME: &'static str;

    /// What a thread holds across a run of operations; `()` for a map
    /// that needs nothing.
    type Guard;

    /// An empty map.
    fn new() -> Self;

    /// A guard for a run of operations on this thread.
    fn guard(&self) -> Self::Guard;

    /// Inserts or replaces the value of `key`.
    fn insert(&self, key: u64, value: u64, guard: &Self::Guard);

    /// The value of `key`. Every adapter marks this `#[inline(always)]`, as
    /// [`RtMap::get`].
    fn get(&self, key: u64, guard: &Self::Guard) -> Option<u64>;

    /// Removes `key`; whether it was present.
    fn remove(&self, key: u64, guard: &Self::Guard) -> bool;

    /// Runs the map's deferred reclamation on this thread until it stops
    /// freeing memory. An epoch-based map frees a retired node only once
    /// its epoch has moved on: run before memory is read, this keeps
    /// garbage out of the figure; run after a measurement, it keeps that
    /// measurement's garbage from being freed during the next one, on its
    /// thread, where the counting allocator would take it off another
    /// structure's bytes. A map that frees at once does nothing.
    fn quiesce() {}

    /// Bytes held, for a structure that accounts for its own memory;
    /// `None` to have the counting allocator measure it.
    fn own_memory(&self) -> Option<usize> {
        None
    }
}

/// A structure the set-operation workloads combine: SET-1's TID sets
/// (`Input = TidSide`) and SET-2's `u64 -> u64` maps or `u64` sets
/// (`Input = [u64]`, each value being its key).
///
/// The runner builds A and B with [`build`](Self::build) (untimed), then
/// times [`union_with`](Self::union_with) and
/// [`intersect_with`](Self::intersect_with), each on a fresh
/// [`copy`](Self::copy) of A made untimed.
pub trait SetOps: Sized {
    /// The `impl` name in reports.
    const NAME: &'static str;

    /// What a side is built from.
    type Input: ?Sized;

    /// A structure holding `input`, loaded as the TS (SET-1) or RT-3
    /// (SET-2) load phase loads it.
    fn build(input: &Self::Input) -> Self;

    /// A copy of this structure: a clone where the type has one, else a
    /// rebuild from its contents.
    fn copy(&self) -> Self;

    /// `self ∪= other`, keeping `self`'s value where a key is in both.
    /// `other` is a copy made for this call: a structure whose union
    /// consumes its argument takes it, one that only reads it returns it,
    /// so that it is dropped outside the timed region.
    fn union_with(&mut self, other: Self) -> Option<Self>;

    /// `self ∩= other`, keeping `self`'s values.
    fn intersect_with(&mut self, other: &Self);

    /// Elements (keys, or TIDs) held.
    fn count(&self) -> u64;

    /// Wrapping sum of [`element_checksum`] over the contents (TIDs as
    /// `(blk << 16) | off`, a set's value being its key).
    fn checksum(&self) -> u64;

    /// Bytes held, for a structure that accounts for its own memory;
    /// `None` to have the counting allocator measure it.
    fn own_memory(&self) -> Option<usize> {
        None
    }
}

/// What one element adds to a [`SetOps::checksum`]: `hash64(key)` plus
/// `value ^ key`, so that a lost or extra key and a value other than the
/// key (every SET value is its key) both show.
#[inline]
pub fn element_checksum(key: u64, value: u64) -> u64 {
    hash64(key).wrapping_add(value ^ key)
}

/// The `(blk << 16) | off` encoding of a TID that the bitmap and set peers
/// store.
#[inline]
pub fn tid_to_u64(tid: Tid) -> u64 {
    (u64::from(tid.block()) << 16) | u64::from(tid.offset())
}

/// Walks `u64`-encoded TIDs (`(blk << 16) | off`) in ascending order and
/// gives each block's offsets to `f`, as [`DeadTidSet::for_each_block`]
/// wants them.
#[inline]
pub fn group_by_block<I, F>(values: I, mut f: F)
where
    I: IntoIterator<Item = u64>,
    F: FnMut(u32, &[u16]),
{
    let mut buf: Vec<u16> = Vec::with_capacity(usize::from(tidstore::MAX_OFFSET));
    let mut current = None;
    for value in values {
        let block = (value >> 16) as u32;
        if current != Some(block) {
            if let Some(done) = current {
                f(done, &buf);
            }
            buf.clear();
            current = Some(block);
        }
        buf.push(value as u16);
    }
    if let Some(done) = current {
        f(done, &buf);
    }
}

/// One side of SET-1: dead TIDs, the same offsets on every dead block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TidSide {
    /// The TS workload whose dead TIDs these are.
    pub id: &'static str,
    /// Blocks with dead TIDs, ascending.
    pub blocks: Vec<u32>,
    /// The dead offsets of each of those blocks, ascending.
    pub offsets: Vec<u16>,
}

impl TidSide {
    /// Number of TIDs.
    pub fn len(&self) -> u64 {
        self.blocks.len() as u64 * self.offsets.len() as u64
    }

    /// Whether there are no TIDs.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The TIDs as `(blk << 16) | off`, ascending.
    pub fn encoded(&self) -> impl Iterator<Item = u64> + '_ {
        self.blocks.iter().flat_map(move |&blk| {
            self.offsets
                .iter()
                .map(move |&off| (u64::from(blk) << 16) | u64::from(off))
        })
    }
}

/// `is_member` for every TID of `tids`; the number matched. A
/// [`DeadTidSet::BATCHED`] set makes the same lookups through
/// [`DeadTidSet::is_member_each`].
#[inline]
pub fn lookup<S: DeadTidSet>(set: &S, tids: &[Tid]) -> u64 {
    let mut matched = 0;
    if S::BATCHED {
        set.is_member_each(tids, |_, member| matched += u64::from(member));
        return matched;
    }
    for &tid in tids {
        matched += u64::from(set.is_member(tid));
    }
    matched
}

/// Where a TID bitmap's walk ([`TidBitmapPeer::walk`]) puts its pages: a
/// bitmap heap scan, which reads an exact page's offsets, or every tuple
/// of a lossy page.
///
/// Each peer hands over an exact page's offsets as its own iterator (the
/// project's `PageOffsets`, the hash bitmap's bit scan, croaring's run of
/// values), so that no peer pays for a copy another does not.
pub trait PageSink {
    /// An exact page: `block`, its offsets (ascending, at least one), and
    /// whether its matches must be rechecked.
    fn exact(&mut self, block: u32, offsets: impl Iterator<Item = u16>, recheck: bool);

    /// A lossy page: every tuple of `block` must be rechecked.
    fn lossy(&mut self, block: u32);
}

/// A TID bitmap, as the TB workloads use it: a bitmap index scan adds the
/// TIDs an index returns one call each, BitmapAnd and BitmapOr combine
/// bitmaps in place, and a bitmap heap scan walks the result in block
/// order (PostgreSQL's `tidbitmap.c`: `tbm_create`, `tbm_add_tuples`,
/// `tbm_intersect`, `tbm_union`, `tbm_iterate`).
///
/// The workloads (`crate::workloads::tb`) drive it; only
/// [`walk`](Self::walk) reads it, and the harness counts what the walk
/// gives (pages, exact and lossy, tuples, recheck tuples) and checks it
/// against a model.
pub trait TidBitmapPeer: Sized {
    /// The `impl` name in reports (`project`, `tbm-hash`, `croaring`).
    const NAME: &'static str;

    /// Whether the bitmap takes a memory budget at all. One that does not
    /// (croaring) runs only on the unlimited workloads; the runner skips it
    /// on the others.
    const BUDGETED: bool;

    /// Whether the bitmap promises that its memory never passes its budget
    /// once an add call returns (the project's). The runner then fails it
    /// when its memory passed the budget after any add; a bitmap without
    /// the promise (`tbm-hash`, as `tidbitmap.c`, which may raise its own
    /// limit and counts entries rather than bytes) has how far it passed
    /// it reported instead.
    const KEEPS_BUDGET: bool;

    /// An empty bitmap limited to `budget` bytes, or unlimited for `None`.
    /// A bitmap that is not [`BUDGETED`](Self::BUDGETED) is only ever
    /// asked for `None`.
    fn new(budget: Option<usize>) -> Self;

    /// Adds one TID (no recheck), one call per TID as a bitmap index scan
    /// makes them. Every adapter marks this `#[inline]`.
    fn add_tid(&mut self, tid: Tid);

    /// `self ∩= other` (BitmapAnd), with PostgreSQL's meaning where pages
    /// are lossy.
    fn intersect_with(&mut self, other: &Self);

    /// `self ∪= other` (BitmapOr), with PostgreSQL's meaning where pages
    /// are lossy.
    fn union_with(&mut self, other: &Self);

    /// Walks the bitmap in block order, each page once, giving `sink` its
    /// block and its exact offsets or the lossy mark.
    fn walk<S: PageSink>(&self, sink: &mut S);

    /// Bytes held, for a structure that accounts for its own memory;
    /// `None` to have the counting allocator measure it.
    fn own_memory(&self) -> Option<usize> {
        None
    }
}
