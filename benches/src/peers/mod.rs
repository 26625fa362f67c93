//! The structures measured: the project's and its peers, behind two small
//! traits, one per workload family.
//!
//! - [`RtMap`]: a `u64 -> u64` map, for the radix tree workloads (RT-*).
//! - [`DeadTidSet`]: a set of dead TIDs, for the TID store workloads (TS-*).
//!
//! One file per peer family. Every implementation is a thin adapter: the
//! workloads' loops are written once, generically, in
//! [`crate::workloads`], and monomorphised per structure.

pub mod array;
pub mod blart;
pub mod btree;
pub mod congee;
pub mod croaring;
pub mod hash;
pub mod project;
pub mod rart;
pub mod roaring;
pub mod sorted_vec;

use tidstore::Tid;

/// A map from `u64` to `u64`, as the RT workloads use it.
pub trait RtMap {
    /// The `impl` name in reports (`project`, `btreemap`, ...).
    const NAME: &'static str;

    /// An empty map.
    fn new() -> Self;

    /// Inserts or replaces the value of `key`.
    fn insert(&mut self, key: u64, value: u64);

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
    fn get(&self, key: u64) -> Option<u64>;

    /// Removes `key`; whether it was present.
    fn remove(&mut self, key: u64) -> bool;

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

    /// An empty set that will receive `ndead` TIDs. Only the dead-tuple
    /// array uses the number: it is allocated at exactly that size.
    fn with_capacity(ndead: u64) -> Self;

    /// Adds the dead `offsets` of `block` (ascending, non-empty), for a
    /// block not yet in the set. Blocks arrive in ascending order. Sets
    /// with no per-block call insert one TID at a time.
    fn set_block_offsets(&mut self, block: u32, offsets: &[u16]);

    /// Whether `tid` is in the set. Every adapter marks this
    /// `#[inline(always)]`, as [`RtMap::get`].
    fn is_member(&self, tid: Tid) -> bool;

    /// Walks the set in block order, giving each block's offsets,
    /// ascending, extracted into a buffer.
    fn for_each_block<F: FnMut(u32, &[u16])>(&self, f: F);

    /// Bytes held, for a structure that accounts for its own memory;
    /// `None` to have the counting allocator measure it.
    fn own_memory(&self) -> Option<usize> {
        None
    }
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
pub const RT_IMPLS: [&str; 7] = [
    project::ProjectMap::NAME,
    blart::BlartMap::NAME,
    congee::CongeeMap::NAME,
    rart::RartMap::NAME,
    btree::BTreeMapPeer::NAME,
    hash::HashbrownMap::NAME,
    sorted_vec::SortedVecMap::NAME,
];

/// Every TS structure's name, project first, in report order.
pub const TS_IMPLS: [&str; 6] = [
    project::ProjectStore::NAME,
    <tidstore::DeadItemsArray as DeadTidSet>::NAME,
    croaring::CroaringSet::NAME,
    roaring::RoaringSet::NAME,
    btree::BTreeSetPeer::NAME,
    hash::HashSetPeer::NAME,
];

/// Work to do with one RT structure type, chosen at run time by name
/// through [`visit_rt`].
pub trait RtVisitor {
    /// What the work returns.
    type Output;
    /// Does the work with map type `M`.
    fn visit<M: RtMap>(self) -> Self::Output;
}

/// Work to do with one TS structure type, chosen at run time by name
/// through [`visit_ts`].
pub trait TsVisitor {
    /// What the work returns.
    type Output;
    /// Does the work with set type `S`.
    fn visit<S: DeadTidSet>(self) -> Self::Output;
}

/// Runs `visitor` with the RT structure called `name` (one of
/// [`RT_IMPLS`]); `None` for an unknown name.
pub fn visit_rt<V: RtVisitor>(name: &str, visitor: V) -> Option<V::Output> {
    Some(match name {
        project::ProjectMap::NAME => visitor.visit::<project::ProjectMap>(),
        blart::BlartMap::NAME => visitor.visit::<blart::BlartMap>(),
        congee::CongeeMap::NAME => visitor.visit::<congee::CongeeMap>(),
        rart::RartMap::NAME => visitor.visit::<rart::RartMap>(),
        btree::BTreeMapPeer::NAME => visitor.visit::<btree::BTreeMapPeer>(),
        hash::HashbrownMap::NAME => visitor.visit::<hash::HashbrownMap>(),
        sorted_vec::SortedVecMap::NAME => visitor.visit::<sorted_vec::SortedVecMap>(),
        _ => return None,
    })
}

/// Runs `visitor` with the TS structure called `name` (one of
/// [`TS_IMPLS`]); `None` for an unknown name.
pub fn visit_ts<V: TsVisitor>(name: &str, visitor: V) -> Option<V::Output> {
    Some(match name {
        project::ProjectStore::NAME => visitor.visit::<project::ProjectStore>(),
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
