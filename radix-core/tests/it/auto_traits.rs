//! `Send` and `Sync` as std gives them to the counterparts of the map's
//! types: each assertion names std's bound. `Cell<u64>` values are `Send`
//! but not `Sync`; `Rc<u64>` values are neither.

use std::cell::Cell;
use std::rc::Rc;

use radix_core::{Entry, IterMut, OccupiedEntry, RadixMap, RangeMut, VacantEntry, ValuesMut};
use static_assertions::{assert_impl_all, assert_not_impl_any};

type Map<V> = RadixMap<u64, V>;
type Cfg<V> = radix_core::DefaultConfig<u64, V>;

// std: `btree_map::Entry<'_, K, V>` is `Send` with `K: Send, V: Send`,
// `Sync` with `K: Sync, V: Sync` (so are `OccupiedEntry` and `VacantEntry`).
assert_impl_all!(Entry<'static, Cfg<u64>>: Send, Sync);
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
