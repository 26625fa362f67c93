//! The structures measured: the project's and its peers, behind two small
//! traits, one per workload family.
//!
//! - [`RtMap`]: a `u64 -> u64` map, for the radix tree workloads RT-1 to
//!   RT-6, and as `RtMap<u128>` a `u128 -> u64` map for RT-7;
//! - [`DeadTidSet`]: a set of dead TIDs, for the TID store workloads (TS-*);
//! - [`SetOps`]: a structure combined with another of its type, for the
//!   set-operation workloads (SET-1 over TIDs, SET-2 over `u64` keys).
//!
//! One file per peer family. Every implementation is a thin adapter: the
//! workloads' loops are written once, generically, in
//! [`crate::workloads`], and monomorphised per structure.
//!
//! A structure that is read and written under a lock (the shared-memory
//! structures of [`shared`]) sets `BATCHED`: the measured loops then hand
//! it its lookups (and an RT load its inserts) as one run, through
//! [`RtMap::get_each`], [`RtMap::insert_each`] and
//! [`DeadTidSet::is_member_each`], which it overrides to take its lock
//! once per batch. Every other structure runs the loops as they were
//! written before: one `get` / `insert` / `is_member` per operation,
//! compiled exactly as before. (Routing every structure through the
//! closures of the batch methods changed LLVM's code for some: the
//! sorted vector's RT-1 search took 10% longer.)

pub mod array;
pub mod blart;
pub mod btree;
pub mod congee;
pub mod croaring;
pub mod hash;
pub mod project;
pub mod rart;
pub mod roaring;
pub mod shared;
pub mod sorted_vec;

use tidstore::Tid;

use crate::rng::hash64;
use crate::workloads::set::TidSide;

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
        crate::workloads::ts::lookup(self, tids)
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

/// Every RT structure's name, project first, in report order.
pub const RT_IMPLS: [&str; 10] = [
    project::ProjectMap::NAME,
    project::ProjectMapFull::NAME,
    project::ProjectMapBatched::NAME,
    shared::ProjectSharedMap::NAME,
    <blart::BlartMap as RtMap>::NAME,
    congee::CongeeMap::NAME,
    rart::RartMap::NAME,
    <btree::BTreeMapPeer as RtMap>::NAME,
    <hash::HashbrownMap as RtMap>::NAME,
    sorted_vec::SortedVecMap::NAME,
];

/// Every RT-7 (`u128` key) structure's name, project first, in report
/// order: the peers WORKLOADS.md names for it.
pub const RT128_IMPLS: [&str; 4] = [
    project::ProjectMap128::NAME,
    <blart::BlartMap<u128> as RtMap<u128>>::NAME,
    <btree::BTreeMapPeer<u128> as RtMap<u128>>::NAME,
    <hash::HashbrownMap<u128> as RtMap<u128>>::NAME,
];

/// Every TS structure's name, project first, in report order.
pub const TS_IMPLS: [&str; 8] = [
    project::ProjectStore::NAME,
    project::ProjectStoreBatched::NAME,
    shared::ProjectSharedStore::NAME,
    <tidstore::DeadItemsArray as DeadTidSet>::NAME,
    croaring::CroaringSet::NAME,
    roaring::RoaringSet::NAME,
    btree::BTreeSetPeer::NAME,
    hash::HashSetPeer::NAME,
];

/// Every SET-1 (TID set) structure's name, project first, in report order.
pub const SET_TID_IMPLS: [&str; 3] = [
    project::ProjectSetStore::NAME,
    croaring::CroaringTids::NAME,
    btree::BTreeSetTids::NAME,
];

/// Every SET-2 (`u64` key) structure's name, project first, in report
/// order: `project-full` too, as on RT-3, whose random keys SET-2 shares.
pub const SET_KEY_IMPLS: [&str; 4] = [
    project::ProjectSetTree::NAME,
    project::ProjectSetTreeFull::NAME,
    croaring::CroaringKeys::NAME,
    btree::BTreeMapKeys::NAME,
];

/// The workloads a structure runs on when no `--impls` names it: every
/// RT or TS workload of its family, except `project-shared`, which runs by
/// default only where it is compared with the local project (RT-1, RT-2,
/// TS-2, TS-4), so that the default run is not longer by a copy of the
/// project on every workload. Named explicitly, every structure runs on
/// every workload of its family.
pub fn runs_by_default(name: &str, workload: &str) -> bool {
    name != shared::NAME || SHARED_DEFAULT_WORKLOADS.contains(&workload)
}

/// The workloads `project-shared` runs on by default; see
/// [`runs_by_default`].
pub const SHARED_DEFAULT_WORKLOADS: [&str; 4] = ["RT-1", "RT-2", "TS-2", "TS-4"];

/// Work to do with one RT structure type, chosen at run time by name
/// through [`visit_rt`].
pub trait RtVisitor {
    /// What the work returns.
    type Output;
    /// Does the work with map type `M`.
    fn visit<M: RtMap>(self) -> Self::Output;
}

/// Work to do with one RT-7 structure type (`u128` keys), chosen at run
/// time by name through [`visit_rt128`].
pub trait Rt128Visitor {
    /// What the work returns.
    type Output;
    /// Does the work with map type `M`.
    fn visit<M: RtMap<u128>>(self) -> Self::Output;
}

/// Work to do with one TS structure type, chosen at run time by name
/// through [`visit_ts`].
pub trait TsVisitor {
    /// What the work returns.
    type Output;
    /// Does the work with set type `S`.
    fn visit<S: DeadTidSet>(self) -> Self::Output;
}

/// Work to do with one SET structure type whose sides are built from `I`,
/// chosen at run time by name through [`visit_set_tids`] or
/// [`visit_set_keys`].
pub trait SetVisitor<I: ?Sized> {
    /// What the work returns.
    type Output;
    /// Does the work with structure type `S`.
    fn visit<S: SetOps<Input = I>>(self) -> Self::Output;
}

/// Runs `visitor` with the SET-1 structure called `name` (one of
/// [`SET_TID_IMPLS`]); `None` for an unknown name.
pub fn visit_set_tids<V: SetVisitor<TidSide>>(name: &str, visitor: V) -> Option<V::Output> {
    Some(match name {
        project::ProjectSetStore::NAME => visitor.visit::<project::ProjectSetStore>(),
        croaring::CroaringTids::NAME => visitor.visit::<croaring::CroaringTids>(),
        btree::BTreeSetTids::NAME => visitor.visit::<btree::BTreeSetTids>(),
        _ => return None,
    })
}

/// Runs `visitor` with the SET-2 structure called `name` (one of
/// [`SET_KEY_IMPLS`]); `None` for an unknown name.
pub fn visit_set_keys<V: SetVisitor<[u64]>>(name: &str, visitor: V) -> Option<V::Output> {
    Some(match name {
        project::ProjectSetTree::NAME => visitor.visit::<project::ProjectSetTree>(),
        project::ProjectSetTreeFull::NAME => visitor.visit::<project::ProjectSetTreeFull>(),
        croaring::CroaringKeys::NAME => visitor.visit::<croaring::CroaringKeys>(),
        btree::BTreeMapKeys::NAME => visitor.visit::<btree::BTreeMapKeys>(),
        _ => return None,
    })
}

/// Runs `visitor` with the RT structure called `name` (one of
/// [`RT_IMPLS`]); `None` for an unknown name.
pub fn visit_rt<V: RtVisitor>(name: &str, visitor: V) -> Option<V::Output> {
    Some(match name {
        project::ProjectMap::NAME => visitor.visit::<project::ProjectMap>(),
        project::ProjectMapFull::NAME => visitor.visit::<project::ProjectMapFull>(),
        project::ProjectMapBatched::NAME => visitor.visit::<project::ProjectMapBatched>(),
        shared::ProjectSharedMap::NAME => visitor.visit::<shared::ProjectSharedMap>(),
        <blart::BlartMap as RtMap>::NAME => visitor.visit::<blart::BlartMap>(),
        congee::CongeeMap::NAME => visitor.visit::<congee::CongeeMap>(),
        rart::RartMap::NAME => visitor.visit::<rart::RartMap>(),
        <btree::BTreeMapPeer as RtMap>::NAME => visitor.visit::<btree::BTreeMapPeer>(),
        <hash::HashbrownMap as RtMap>::NAME => visitor.visit::<hash::HashbrownMap>(),
        sorted_vec::SortedVecMap::NAME => visitor.visit::<sorted_vec::SortedVecMap>(),
        _ => return None,
    })
}

/// Runs `visitor` with the RT-7 structure called `name` (one of
/// [`RT128_IMPLS`]); `None` for an unknown name.
pub fn visit_rt128<V: Rt128Visitor>(name: &str, visitor: V) -> Option<V::Output> {
    Some(match name {
        project::ProjectMap128::NAME => visitor.visit::<project::ProjectMap128>(),
        <blart::BlartMap<u128> as RtMap<u128>>::NAME => visitor.visit::<blart::BlartMap<u128>>(),
        <btree::BTreeMapPeer<u128> as RtMap<u128>>::NAME => {
            visitor.visit::<btree::BTreeMapPeer<u128>>()
        }
        <hash::HashbrownMap<u128> as RtMap<u128>>::NAME => {
            visitor.visit::<hash::HashbrownMap<u128>>()
        }
        _ => return None,
    })
}

/// Runs `visitor` with the TS structure called `name` (one of
/// [`TS_IMPLS`]); `None` for an unknown name.
pub fn visit_ts<V: TsVisitor>(name: &str, visitor: V) -> Option<V::Output> {
    Some(match name {
        project::ProjectStore::NAME => visitor.visit::<project::ProjectStore>(),
        project::ProjectStoreBatched::NAME => visitor.visit::<project::ProjectStoreBatched>(),
        shared::ProjectSharedStore::NAME => visitor.visit::<shared::ProjectSharedStore>(),
        <tidstore::DeadItemsArray as DeadTidSet>::NAME => {
            visitor.visit::<tidstore::DeadItemsArray>()
        }
        croaring::CroaringSet::NAME => visitor.visit::<croaring::CroaringSet>(),
        roaring::RoaringSet::NAME => visitor.visit::<roaring::RoaringSet>(),
        btree::BTreeSetPeer::NAME => visitor.visit::<btree::BTreeSetPeer>(),
        hash::HashSetPeer::NAME => visitor.visit::<hash::HashSetPeer>(),
        _ => return None,
    })
}
