//! The project's structures: `radix_tree!` maps with the default layout
//! (values embedded in the slot word), `u64` keys and, for RT-7, `u128`
//! keys, and the insert-only [`TidStore`].
//!
//! Each map has its key type's default compression (none for `u64`, full
//! for `u128`), and `project-full` is the `u64` map declared with
//! `compression: full`, what a user keying by random or hashed ids
//! declares: the RT tables show both on every workload.

use tidstore::{Tid, TidStore};

use super::{DeadTidSet, RtMap};

/// Declares a project tree (`KEY -> u64`, default layout and size classes)
/// and its [`RtMap`] adapter: one per key width the RT workloads use.
macro_rules! project_map {
    ($(#[$doc:meta])* $tree:ident, $map:ident, $key:ident) => {
        project_map!($(#[$doc])* $tree, $map, $key, "project", {});
    };
    ($(#[$doc:meta])* $tree:ident, $map:ident, $key:ident, $name:literal,
        { $($field:ident : $value:ident),* }) => {
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

/// [`TidStore::insert_only`] as a [`DeadTidSet`].
pub struct ProjectStore(TidStore);

impl DeadTidSet for ProjectStore {
    const NAME: &'static str = "project";

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

    fn for_each_block<F: FnMut(u32, &[u16])>(&self, mut f: F) {
        let mut buf = [0u16; tidstore::MAX_OFFSET as usize];
        for block in self.0.iter() {
            let n = block.copy_offsets(&mut buf);
            f(block.block(), &buf[..n]);
        }
    }

    fn own_memory(&self) -> Option<usize> {
        Some(self.0.memory_usage())
    }
}
