//! The structures measured: the project's and its peers, behind the
//! traits of [`crate::structures`], one per workload family.
//!
//! - [`RtMap`]: a `u64 -> u64` map, for the radix tree workloads RT-1 to
//!   RT-6, and as `RtMap<u128>` a `u128 -> u64` map for RT-7;
//! - [`DeadTidSet`]: a set of dead TIDs, for the TID store workloads (TS-*);
//! - [`SetOps`]: a structure combined with another of its type, for the
//!   set-operation workloads (SET-1 over TIDs, SET-2 over `u64` keys);
//! - [`ConcurrentMap`]: a `u64 -> u64` map shared by threads, for RT-C
//!   (every one in [`concurrent`]);
//! - [`TidBitmapPeer`]: a TID bitmap (adds, BitmapAnd, BitmapOr, a walk in
//!   block order into a [`PageSink`]), for the TB workloads: the project's
//!   ([`bitmap`]), [`tbm_hash`] (the stand-in for PostgreSQL's
//!   `tidbitmap.c`) and croaring.
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
pub mod bitmap;
pub mod blart;
pub mod btree;
pub mod concurrent;
pub mod congee;
pub mod croaring;
pub mod hash;
pub mod project;
pub mod rart;
pub mod roaring;
pub mod shared;
pub mod sorted_vec;
pub mod tbm_hash;

pub use crate::structures::{
    ConcurrentMap, DeadTidSet, PageSink, RtMap, SetOps, TidBitmapPeer, TidSide, element_checksum,
    group_by_block, tid_to_u64,
};

/// Every RT structure's name, project first, in report order.
pub const RT_IMPLS: [&str; 11] = [
    project::ProjectMap::NAME,
    project::ProjectMapFull::NAME,
    project::ProjectMapBatched::NAME,
    concurrent::ProjectRowex::NAME,
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

/// Every RT-C structure's name, in report order: the project's concurrent
/// tree (uncompressed, then in shared memory, then fully compressed), its
/// plain tree behind a lock, then the peers WORKLOADS.md names.
pub const RTC_IMPLS: [&str; 8] = [
    concurrent::ProjectConcurrent::NAME,
    concurrent::ProjectConcurrentShared::NAME,
    concurrent::ProjectConcurrentFull::NAME,
    concurrent::ProjectRwLock::NAME,
    concurrent::CongeeConcurrent::NAME,
    concurrent::SccTreeIndex::NAME,
    concurrent::CrossbeamSkipMap::NAME,
    concurrent::BTreeMapRwLock::NAME,
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

/// Every TB (TID bitmap) structure's name, project first, in report
/// order: the project's `TidBitmap`, the hash-table bitmap built as
/// `tidbitmap.c` is, then croaring (on the unlimited workloads only; see
/// [`tb_runs_on`]).
pub const TB_IMPLS: [&str; 3] = [
    bitmap::ProjectBitmap::NAME,
    tbm_hash::TbmHash::NAME,
    croaring::CroaringBitmap::NAME,
];

/// Whether the TB structure `name` runs on a workload with (`budgeted`)
/// or without a memory budget: a structure that takes none
/// ([`TidBitmapPeer::BUDGETED`] false: croaring) is not applicable to
/// TB-3 and TB-6, whether or not `--impls` names it.
pub fn tb_runs_on(name: &str, budgeted: bool) -> bool {
    struct TakesBudget;
    impl TbVisitor for TakesBudget {
        type Output = bool;
        fn visit<B: TidBitmapPeer>(self) -> bool {
            B::BUDGETED
        }
    }
    !budgeted || visit_tb(name, TakesBudget).unwrap_or(false)
}

/// The workloads a structure runs on when no `--impls` names it: every
/// RT or TS workload of its family, except `project-shared`, which runs by
/// default only where it is compared with the local project (RT-1, RT-2,
/// TS-2, TS-4, and every row of RT-C, as `project` does), so that the
/// default run is not longer by a copy of the project on every workload.
/// Named explicitly, every structure runs on every workload of its family.
pub fn runs_by_default(name: &str, workload: &str) -> bool {
    name != shared::NAME || workload == "RT-C" || SHARED_DEFAULT_WORKLOADS.contains(&workload)
}

/// The RT and TS workloads `project-shared` runs on by default (it also
/// runs on RT-C's every row); see [`runs_by_default`].
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

/// Work to do with one RT-C structure type, chosen at run time by name
/// through [`visit_rtc`].
pub trait RtcVisitor {
    /// What the work returns.
    type Output;
    /// Does the work with map type `M`.
    fn visit<M: ConcurrentMap>(self) -> Self::Output;
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

/// Work to do with one TB structure type, chosen at run time by name
/// through [`visit_tb`].
pub trait TbVisitor {
    /// What the work returns.
    type Output;
    /// Does the work with bitmap type `B`.
    fn visit<B: TidBitmapPeer>(self) -> Self::Output;
}

/// Runs `visitor` with the TB structure called `name` (one of
/// [`TB_IMPLS`]); `None` for an unknown name.
pub fn visit_tb<V: TbVisitor>(name: &str, visitor: V) -> Option<V::Output> {
    Some(match name {
        bitmap::ProjectBitmap::NAME => visitor.visit::<bitmap::ProjectBitmap>(),
        tbm_hash::TbmHash::NAME => visitor.visit::<tbm_hash::TbmHash>(),
        croaring::CroaringBitmap::NAME => visitor.visit::<croaring::CroaringBitmap>(),
        _ => return None,
    })
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
        concurrent::ProjectRowex::NAME => visitor.visit::<concurrent::ProjectRowex>(),
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

/// Runs `visitor` with the RT-C structure called `name` (one of
/// [`RTC_IMPLS`]); `None` for an unknown name.
pub fn visit_rtc<V: RtcVisitor>(name: &str, visitor: V) -> Option<V::Output> {
    Some(match name {
        concurrent::ProjectConcurrent::NAME => visitor.visit::<concurrent::ProjectConcurrent>(),
        concurrent::ProjectConcurrentShared::NAME => {
            visitor.visit::<concurrent::ProjectConcurrentShared>()
        }
        concurrent::ProjectConcurrentFull::NAME => {
            visitor.visit::<concurrent::ProjectConcurrentFull>()
        }
        concurrent::ProjectRwLock::NAME => visitor.visit::<concurrent::ProjectRwLock>(),
        concurrent::CongeeConcurrent::NAME => visitor.visit::<concurrent::CongeeConcurrent>(),
        concurrent::SccTreeIndex::NAME => visitor.visit::<concurrent::SccTreeIndex>(),
        concurrent::CrossbeamSkipMap::NAME => visitor.visit::<concurrent::CrossbeamSkipMap>(),
        concurrent::BTreeMapRwLock::NAME => visitor.visit::<concurrent::BTreeMapRwLock>(),
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
