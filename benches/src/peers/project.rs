//! The project's structures: `radix_tree!` maps with the default layout
//! (values embedded in the slot word), `u64` keys and, for RT-7, `u128`
//! keys, and the insert-only [`TidStore`].
//!
//! Each map has its key type's default compression (none for `u64`, full
//! for `u128`), and `project-full` is the `u64` map declared with
//! `compression: full`, what a user keying by random or hashed ids
//! declares: the RT tables show both on every workload.
//!
//! For the set-operation workloads, SET-2 combines the same two `u64`
//! trees (`union_with`, `intersect_with`), and SET-1 stores made with
//! [`TidStore::new`] (entries replaceable, as a store that is combined
//! rather than filled once by vacuum would be) and the same 1 GiB budget.

use tidstore::{Tid, TidStore};

use crate::structures::TidSide;

use super::{DeadTidSet, RtMap, SetOps, element_checksum, tid_to_u64};

/// Declares a project tree (`KEY -> u64`, default layout and size classes)
/// and its [`RtMap`] adapter: one per key width the RT workloads use.
///
/// A map named with `batched` sets [`RtMap::BATCHED`]: the workloads then
/// hand it its lookups in runs, which it answers with the tree's
/// pipelined `get_each`.
macro_rules! project_map {
    ($(#[$doc:meta])* $tree:ident, $map:ident, $key:ident) => {
        project_map!($(#[$doc])* $tree, $map, $key, "project", {});
    };
    ($(#[$doc:meta])* $tree:ident, $map:ident, $key:ident, $name:literal,
        { $($field:ident : $value:ident),* }) => {
        project_map!($(#[$doc])* $tree, $map, $key, $name, { $($field: $value),* }, false);
    };
    ($(#[$doc:meta])* $tree:ident, $map:ident, $key:ident, $name:literal,
        { $($field:ident : $value:ident),* }, $batched:literal) => {
        radix_core::radix_tree! {
            $(#[$doc])*
            pub struct $tree {
                key: $key,
                value: u64,
                $($field: $value,)*
            }
        }

        #[doc = concat!("[`", stringify!($tree), "`] as an `RtMap<", stringify!($key), ">`.")]
        pub struct $map($tree);

        impl RtMap<$key> for $map {
            const NAME: &'static str = $name;
            const BATCHED: bool = $batched;

            fn new() -> Self {
                Self($tree::new())
            }

            #[inline]
            fn insert(&mut self, key: $key, value: u64) {
                self.0.insert(key, value);
            }

            #[inline(always)]
            fn get(&self, key: $key) -> Option<u64> {
                self.0.get(key).copied()
            }

            #[inline(always)]
            fn get_each<T: Copy>(
                &self,
                items: &[T],
                key: impl Fn(T) -> $key,
                mut found: impl FnMut(T, Option<u64>),
            ) {
                self.0.get_each(items, |&item| key(item), |&item, value| {
                    found(item, value.copied())
                });
            }

            #[inline]
            fn remove(&mut self, key: $key) -> bool {
                self.0.remove(key).is_some()
            }

            fn own_memory(&self) -> Option<usize> {
                Some(self.0.memory_usage())
            }
        }
    };
}

project_map!(
    /// The project's tree for RT-1 to RT-6: `u64 -> u64`, default layout
    /// and size classes.
    ProjectTree,
    ProjectMap,
    u64
);

project_map!(
    /// The project's tree for RT-1 to RT-6 as a user with sparse keys
    /// declares it: `u64 -> u64`, default layout and size classes,
    /// `compression: full`.
    ProjectTreeFull,
    ProjectMapFull,
    u64,
    "project-full",
    { compression: full }
);

project_map!(
    /// The project's tree for RT-1 to RT-6 as [`ProjectTree`], measured
    /// with its lookups handed over in runs: `get_each`, pipelined on the
    /// trees it pays on (see `radix-core`'s `raw/batch.rs`).
    ProjectTreeBatched,
    ProjectMapBatched,
    u64,
    "project-batched",
    {},
    true
);

project_map!(
    /// The project's tree for RT-7: `u128 -> u64`, default layout and size
    /// classes (and so full compression, `u128`'s default).
    ProjectTree128,
    ProjectMap128,
    u128
);

/// The budget given to the project's store: 1 GiB, the limit of
/// WORKLOADS.md's VAC-1 (it also sets the largest allocation block, a
/// sixteenth of it). No TS workload comes near it.
pub const STORE_MAX_BYTES: usize = 1 << 30;

/// Declares a [`TidStore::insert_only`] adapter as a [`DeadTidSet`]; with
/// `batched`, one whose shuffled lookups go through
/// [`TidStore::is_member_each`].
macro_rules! project_store {
    ($(#[$doc:meta])* $store:ident, $name:literal, $batched:literal) => {
        $(#[$doc])*
        pub struct $store(TidStore);

        impl DeadTidSet for $store {
            const NAME: &'static str = $name;
            const BATCHED: bool = $batched;

            fn with_capacity(_ndead: u64) -> Self {
                Self(TidStore::insert_only(STORE_MAX_BYTES))
            }

            #[inline]
            fn set_block_offsets(&mut self, block: u32, offsets: &[u16]) {
                if let Err(e) = self.0.set_block_offsets(block, offsets) {
                    panic!("the workload gave the store bad offsets: {e}");
                }
            }

            #[inline(always)]
            fn is_member(&self, tid: Tid) -> bool {
                self.0.is_member(tid)
            }

            #[inline(always)]
            fn is_member_each(&self, tids: &[Tid], found: impl FnMut(Tid, bool)) {
                self.0.is_member_each(tids, found);
            }

            fn count_members_ascending(&self, tids: &[Tid]) -> u64 {
                let mut dead = self.0.ordered_lookup();
                tids.iter().map(|&tid| u64::from(dead.is_member(tid))).sum()
            }

            fn for_each_block<F: FnMut(u32, &[u16])>(&self, f: F) {
                self.0.for_each_block_offsets(f);
            }

            fn own_memory(&self) -> Option<usize> {
                Some(self.0.memory_usage())
            }
        }
    };
}

project_store!(
    /// [`TidStore::insert_only`] as a [`DeadTidSet`], asked one TID at a
    /// time.
    ProjectStore,
    "project",
    false
);

project_store!(
    /// [`TidStore::insert_only`] as a [`DeadTidSet`], asked for the
    /// shuffled lookups in runs through [`TidStore::is_member_each`].
    ProjectStoreBatched,
    "project-batched",
    true
);

/// Declares the [`SetOps`] adapter of a project `u64 -> u64` tree for
/// SET-2.
macro_rules! project_set_tree {
    ($(#[$doc:meta])* $adapter:ident, $tree:ident, $name:literal) => {
        $(#[$doc])*
        pub struct $adapter($tree);

        impl SetOps for $adapter {
            const NAME: &'static str = $name;
            type Input = [u64];

            fn build(keys: &[u64]) -> Self {
                let mut tree = $tree::new();
                for &key in keys {
                    tree.insert(key, key);
                }
                Self(tree)
            }

            fn copy(&self) -> Self {
                Self(self.0.clone())
            }

            fn union_with(&mut self, other: Self) -> Option<Self> {
                // On a shared key, A's value stays: the merge leaves it.
                self.0.union_with(other.0, |_, _, _| {});
                None
            }

            fn intersect_with(&mut self, other: &Self) {
                self.0.intersect_with(&other.0, |_, _, _| {});
            }

            fn count(&self) -> u64 {
                self.0.len() as u64
            }

            fn checksum(&self) -> u64 {
                self.0
                    .iter()
                    .fold(0, |sum, (key, &value)| sum.wrapping_add(element_checksum(key, value)))
            }

            fn own_memory(&self) -> Option<usize> {
                Some(self.0.memory_usage())
            }
        }
    };
}

project_set_tree!(
    /// SET-2's project tree: [`ProjectTree`] (`u64 -> u64`, default layout).
    ProjectSetTree,
    ProjectTree,
    "project"
);

project_set_tree!(
    /// SET-2's project tree with `compression: full`: [`ProjectTreeFull`].
    ProjectSetTreeFull,
    ProjectTreeFull,
    "project-full"
);

/// SET-1's project store: [`TidStore::new`] with budget
/// [`STORE_MAX_BYTES`], which no SET-1 result comes near.
pub struct ProjectSetStore(TidStore);

impl ProjectSetStore {
    fn empty() -> TidStore {
        TidStore::new(STORE_MAX_BYTES)
    }
}

impl SetOps for ProjectSetStore {
    const NAME: &'static str = "project";
    type Input = TidSide;

    fn build(side: &TidSide) -> Self {
        let mut store = Self::empty();
        for &block in &side.blocks {
            if let Err(e) = store.set_block_offsets(block, &side.offsets) {
                panic!("the workload gave the store bad offsets: {e}");
            }
        }
        Self(store)
    }

    /// `TidStore` has no `Clone`: a new store given each block's offsets,
    /// in block order, as the original was built.
    fn copy(&self) -> Self {
        let mut store = Self::empty();
        let mut buf = [0u16; tidstore::MAX_OFFSET as usize];
        for block in self.0.iter() {
            let n = block.copy_offsets(&mut buf);
            if let Err(e) = store.set_block_offsets(block.block(), &buf[..n]) {
                panic!("copying a store: {e}");
            }
        }
        Self(store)
    }

    fn union_with(&mut self, other: Self) -> Option<Self> {
        if let Err(e) = self.0.union_with(&other.0) {
            panic!("the store refused the union: {e}");
        }
        Some(other)
    }

    fn intersect_with(&mut self, other: &Self) {
        if let Err(e) = self.0.intersect_with(&other.0) {
            panic!("the store refused the intersection: {e}");
        }
    }

    fn count(&self) -> u64 {
        self.0.num_tids()
    }

    fn checksum(&self) -> u64 {
        let mut sum = 0u64;
        for block in self.0.iter() {
            for offset in block.offsets() {
                let key = tid_to_u64(Tid::new(block.block(), offset));
                sum = sum.wrapping_add(element_checksum(key, key));
            }
        }
        sum
    }

    fn own_memory(&self) -> Option<usize> {
        Some(self.0.memory_usage())
    }
}
