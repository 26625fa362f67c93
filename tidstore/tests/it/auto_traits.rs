//! `Send` and `Sync` of every public type, each with what it is modelled
//! on: the store is a set of TIDs (`BTreeSet<Tid>` is both), its
//! iterators and views borrow it immutably (both, as `btree_set::Iter`),
//! and errors are both so that they fit `Box<dyn Error + Send + Sync>`.

use static_assertions::assert_impl_all;
use tidstore::{
    ArrayError, BlockOffsets, DeadBlock, DeadItemsArray, ItemPointer, Iter, OrderedLookup, Tid,
    TidStore, TidStoreError,
};

// std: `BTreeSet<T>` is `Send` and `Sync` with `T: Send + Sync`.
assert_impl_all!(TidStore: Send, Sync);
assert_impl_all!(DeadItemsArray: Send, Sync);

// std: `btree_set::Iter<'_, T>` and `Range` are `Send` and `Sync` with
// `T: Sync`; a block and its offsets are views of the same kind.
assert_impl_all!(Iter<'static>: Send, Sync);
assert_impl_all!(DeadBlock<'static>: Send, Sync);
assert_impl_all!(BlockOffsets<'static>: Send, Sync);
assert_impl_all!(OrderedLookup<'static>: Send, Sync);

// Plain data.
assert_impl_all!(Tid: Send, Sync);
assert_impl_all!(ItemPointer: Send, Sync);

// std's own errors (`io::Error`, `TryFromIntError`) are `Send` and `Sync`.
assert_impl_all!(TidStoreError: Send, Sync, std::error::Error);
assert_impl_all!(ArrayError: Send, Sync, std::error::Error);

#[cfg(target_os = "linux")]
mod shared {
    use static_assertions::assert_impl_all;
    use tidstore::shm::{Area, AreaHandle, AreaOptions, ShmError};
    use tidstore::{SharedIter, SharedTidStore, SharedTidStoreHandle};

    // A shared store is used by every thread of every process that
    // attaches: `Send` and `Sync`, as `Arc<RwLock<BTreeSet<Tid>>>` is.
    assert_impl_all!(SharedTidStore: Send, Sync);
    assert_impl_all!(SharedTidStoreHandle: Send, Sync);
    assert_impl_all!(SharedIter<'static>: Send, Sync);
    assert_impl_all!(Area: Send, Sync);
    assert_impl_all!(AreaHandle: Send, Sync);
    assert_impl_all!(AreaOptions: Send, Sync);
    assert_impl_all!(ShmError: Send, Sync, std::error::Error);
}

/// A store filled on one thread is read on others at once, as a
/// `BTreeSet` behind a shared reference is.
#[test]
fn a_store_is_read_from_several_threads() {
    let mut store = TidStore::new(1 << 20);
    store
        .set_block_offsets(7, &[1, 2, 3])
        .expect("offsets in range");
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| assert!(store.is_member(Tid::new(7, 2))));
        }
    });
}
