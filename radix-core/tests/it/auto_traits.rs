//! `Send` and `Sync` as std gives them to the counterparts of the map's
//! types: each assertion names std's bound. `Cell<u64>` values are `Send`
//! but not `Sync`; `Rc<u64>` values are neither. Types without a std
//! counterpart (statistics, options, handles, shared-memory types) say
//! what they are instead.

use std::cell::Cell;
use std::rc::Rc;

use radix_core::mem::{LocalMemory, MemoryOptions, PoolSpec};
use radix_core::set::{Difference, Intersection, SetRange, SymmetricDifference, Union};
use radix_core::value::VarBytes;
use radix_core::{
    ClassStats, Compression, Cursor, DefaultConfig, Entry, IntoIter, IntoKeys, IntoValues, Iter,
    IterMut, Keys, Kind, OccupiedEntry, RadixMap, RadixSet, Range, RangeMut, SizeClasses, Stats,
    TreeSet, VacantEntry, Values, ValuesMut,
};
use static_assertions::{assert_impl_all, assert_not_impl_any};

type Map<V> = RadixMap<u64, V>;
type Cfg<V> = radix_core::DefaultConfig<u64, V>;

// std: `btree_map::Entry<'_, K, V>` is `Send` with `K: Send, V: Send`,
// `Sync` with `K: Sync, V: Sync` (so are `OccupiedEntry` and `VacantEntry`).
assert_impl_all!(Entry<'static, Cfg<u64>>: Send, Sync);
assert_impl_all!(radix_core::concurrent::ConcurrentTree<Cfg<u64>>: Send, Sync);
assert_impl_all!(radix_core::concurrent::Iter<'static, Cfg<u64>>: Send, Sync);
// A pin belongs to the thread that entered the epoch.
assert_not_impl_any!(radix_core::concurrent::ReadPin<'static, Cfg<u64>>: Send);
assert_impl_all!(OccupiedEntry<'static, Cfg<u64>>: Send, Sync);
assert_impl_all!(VacantEntry<'static, Cfg<u64>>: Send, Sync);
assert_impl_all!(OccupiedEntry<'static, Cfg<Cell<u64>>>: Send);
assert_not_impl_any!(OccupiedEntry<'static, Cfg<Cell<u64>>>: Sync);
assert_not_impl_any!(OccupiedEntry<'static, Cfg<Rc<u64>>>: Send, Sync);

// std: `IterMut`, `ValuesMut` and `RangeMut` are `Send` with `V: Send`
// (not `V: Sync`), `Sync` with `V: Sync`.
assert_impl_all!(IterMut<'static, Cfg<Cell<u64>>>: Send);
assert_impl_all!(ValuesMut<'static, Cfg<Cell<u64>>>: Send);
assert_impl_all!(RangeMut<'static, Cfg<Cell<u64>>>: Send);
assert_not_impl_any!(RangeMut<'static, Cfg<Cell<u64>>>: Sync);
assert_impl_all!(RangeMut<'static, Cfg<u64>>: Send, Sync);
assert_not_impl_any!(RangeMut<'static, Cfg<Rc<u64>>>: Send, Sync);

// std: `BTreeMap<K, V>` is `Send` with `K, V: Send`, `Sync` with `K, V: Sync`.
assert_impl_all!(Map<u64>: Send, Sync);
assert_impl_all!(Map<Cell<u64>>: Send);
assert_not_impl_any!(Map<Cell<u64>>: Sync);
assert_not_impl_any!(Map<Rc<u64>>: Send, Sync);

// std: `Iter`, `Range`, `Keys` and `Values` (shared borrows) are `Send`
// and `Sync` with `K: Sync, V: Sync`.
assert_impl_all!(Iter<'static, Cfg<u64>>: Send, Sync);
assert_impl_all!(Range<'static, Cfg<u64>>: Send, Sync);
assert_impl_all!(Keys<'static, Cfg<u64>>: Send, Sync);
assert_impl_all!(Values<'static, Cfg<u64>>: Send, Sync);
assert_not_impl_any!(Iter<'static, Cfg<Cell<u64>>>: Send, Sync);
assert_not_impl_any!(Range<'static, Cfg<Cell<u64>>>: Send, Sync);
assert_not_impl_any!(Keys<'static, Cfg<Cell<u64>>>: Send, Sync);
assert_not_impl_any!(Values<'static, Cfg<Cell<u64>>>: Send, Sync);

// std: `btree_map::Cursor` is `Send` and `Sync` with `K: Sync, V: Sync`.
assert_impl_all!(Cursor<'static, Cfg<u64>>: Send, Sync);
assert_not_impl_any!(Cursor<'static, Cfg<Cell<u64>>>: Send, Sync);

// std: `IntoIter`, `IntoKeys` and `IntoValues` (owning) are `Send` with
// `K, V: Send`, `Sync` with `K, V: Sync`.
assert_impl_all!(IntoIter<Cfg<u64>>: Send, Sync);
assert_impl_all!(IntoKeys<Cfg<u64>>: Send, Sync);
assert_impl_all!(IntoValues<Cfg<u64>>: Send, Sync);
assert_impl_all!(IntoIter<Cfg<Cell<u64>>>: Send);
assert_impl_all!(IntoValues<Cfg<Cell<u64>>>: Send);
assert_not_impl_any!(IntoIter<Cfg<Cell<u64>>>: Sync);
assert_not_impl_any!(IntoIter<Cfg<Rc<u64>>>: Send, Sync);
assert_not_impl_any!(IntoValues<Cfg<Rc<u64>>>: Send, Sync);

// std: `ValuesMut` is `Sync` with `V: Sync`, as `IterMut`.
assert_impl_all!(IterMut<'static, Cfg<u64>>: Send, Sync);
assert_impl_all!(ValuesMut<'static, Cfg<u64>>: Send, Sync);
assert_not_impl_any!(ValuesMut<'static, Cfg<Cell<u64>>>: Sync);
assert_not_impl_any!(IterMut<'static, Cfg<Rc<u64>>>: Send, Sync);

// std: `BTreeSet<T>` and its iterators (`Range`, `Union`, `Intersection`,
// `Difference`, `SymmetricDifference`, `IntoIter`) are `Send` and `Sync`
// with `T: Send + Sync`: integer keys always are.
assert_impl_all!(RadixSet<u64>: Send, Sync);
assert_impl_all!(TreeSet<DefaultConfig<u128, ()>>: Send, Sync);
assert_impl_all!(SetRange<'static, DefaultConfig<u32, ()>>: Send, Sync);
assert_impl_all!(Union<'static, DefaultConfig<u32, ()>>: Send, Sync);
assert_impl_all!(Intersection<'static, DefaultConfig<u32, ()>>: Send, Sync);
assert_impl_all!(Difference<'static, DefaultConfig<u32, ()>>: Send, Sync);
assert_impl_all!(SymmetricDifference<'static, DefaultConfig<u32, ()>>: Send, Sync);
assert_impl_all!(IntoKeys<DefaultConfig<u32, ()>>: Send, Sync);

// No std counterpart: plain data, `Send` and `Sync`, as std's own plain
// data (`Ordering`, `Layout`) is.
assert_impl_all!(Stats: Send, Sync);
assert_impl_all!(ClassStats: Send, Sync);
assert_impl_all!(SizeClasses: Send, Sync);
assert_impl_all!(Compression: Send, Sync);
assert_impl_all!(Kind: Send, Sync);
assert_impl_all!(MemoryOptions: Send, Sync);
assert_impl_all!(PoolSpec: Send, Sync);
assert_impl_all!(VarBytes: Send, Sync);

// A memory back end owns its slab blocks as a `Vec<u8>` owns its buffer:
// `Send` and `Sync`, so that a tree of `Send` values moves between
// threads with its memory.
assert_impl_all!(LocalMemory: Send, Sync);

// A varlen tree (the TID store's kind) is `Send` and `Sync`: its values
// are bytes.
radix_core::radix_tree! {
    /// Byte strings by id.
    struct Strings { key: u64, value: VarBytes, layout: varlen }
}
assert_impl_all!(Strings: Send, Sync);

/// An entry made on one thread is used on another, as std's can be.
#[test]
fn an_entry_crosses_threads() {
    let mut m: Map<u64> = Map::new();
    let entry = m.entry(7);
    std::thread::scope(|s| {
        s.spawn(move || {
            entry.or_insert(70);
        });
    });
    assert_eq!(m.get(7), Some(&70));
}

#[cfg(target_os = "linux")]
mod shared {
    use radix_core::shm::{
        Area, AreaHandle, AreaOptions, Backing, ReadGuard, SharedTree, ShmError, TreeHandle,
        TreeView, WriteGuard,
    };
    use static_assertions::{assert_impl_all, assert_not_impl_any};

    radix_core::radix_tree! {
        /// A shared tree of words.
        struct Words { key: u64, value: u64, memory: shared }
    }

    // A shared tree is used by every thread of every process that attaches,
    // as an `Arc<RwLock<BTreeMap<K, V>>>` is: `Send` and `Sync` (its values
    // are plain bytes, `ShmSafe`, which are both).
    assert_impl_all!(Words: Send, Sync);
    assert_impl_all!(SharedTree<WordsConfig>: Send, Sync);
    assert_impl_all!(Area: Send, Sync);

    // std: `RwLockReadGuard` and `RwLockWriteGuard` are `Sync` with
    // `T: Sync`, and not `Send`. Here too: threads of one process each
    // take their own guard from the shared `SharedTree`, or share one by
    // reference.
    assert_impl_all!(ReadGuard<'static, WordsConfig>: Sync);
    assert_impl_all!(WriteGuard<'static, WordsConfig>: Sync);
    assert_not_impl_any!(ReadGuard<'static, WordsConfig>: Send);
    assert_not_impl_any!(WriteGuard<'static, WordsConfig>: Send);
    // The view inside both guards: `Sync` for them, never moved alone.
    assert_impl_all!(TreeView<WordsConfig>: Sync);
    assert_not_impl_any!(TreeView<WordsConfig>: Send);
    // std: `btree_map::Iter` and `Range` are `Send` and `Sync` with
    // `K, V: Sync`; a shared tree's, borrowed from a guard, are too.
    assert_impl_all!(radix_core::Iter<'static, WordsConfig>: Send, Sync);
    assert_impl_all!(radix_core::Range<'static, WordsConfig>: Send, Sync);
    assert_impl_all!(radix_core::Cursor<'static, WordsConfig>: Send, Sync);

    // Plain data, and an error that fits `Box<dyn Error + Send + Sync>`.
    assert_impl_all!(AreaHandle: Send, Sync);
    assert_impl_all!(TreeHandle: Send, Sync);
    assert_impl_all!(AreaOptions: Send, Sync);
    assert_impl_all!(Backing: Send, Sync);
    assert_impl_all!(ShmError: Send, Sync, std::error::Error);

    /// One read guard, shared by reference between threads, as std's
    /// `RwLockReadGuard` can be.
    #[test]
    fn a_read_guard_is_read_by_several_threads() {
        let options = AreaOptions::default()
            .backing(Backing::Heap)
            .init_segment_size(64 << 10)
            .max_segment_size(256 << 10)
            .max_segments(8)
            .max_trees(1);
        let area = Area::create(options).expect("an area");
        let tree = Words::create_in(&area).expect("a tree");
        for k in 0..1000 {
            tree.write().insert(k, k * 2).expect("room");
        }
        let guard = tree.read();
        std::thread::scope(|s| {
            for part in 0..2u64 {
                let guard = &guard;
                s.spawn(move || {
                    for k in (part * 500)..(part + 1) * 500 {
                        assert_eq!(guard.get(k), Some(&(k * 2)));
                    }
                });
            }
        });
    }
}
