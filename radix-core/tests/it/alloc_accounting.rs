//! Allocation accounting: the binary's counting allocator proves that a
//! tree gives back every byte, and that values with `Drop` are dropped
//! exactly once.
//!
//! The counts are per thread, and every check runs inside the one `#[test]`
//! below, one after another, on that test's thread.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::common::*;
use crate::counting::{thread_allocs, thread_bytes};
use radix_core::mem::LocalMemory;
use radix_core::value::{Auto, Inline, Leaf, VarBytes, Varlen};
use radix_core::{Config, RawTree};

/// A tree over local memory, insert-only (leaves in bump arenas) or not.
fn new_tree<C: Config<Memory = LocalMemory>>(insert_only: bool) -> RawTree<C> {
    if insert_only {
        let t = RawTree::<C>::with_memory(LocalMemory::insert_only(
            &RawTree::<C>::pool_specs(),
            64 << 10,
        ));
        assert!(t.memory().is_insert_only());
        t
    } else {
        RawTree::new()
    }
}

/// Live bytes and allocations right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Live {
    bytes: isize,
    allocs: isize,
}

fn live() -> Live {
    Live {
        bytes: thread_bytes(),
        allocs: thread_allocs(),
    }
}

// ---------------------------------------------------------------------
// Every byte comes back.
// ---------------------------------------------------------------------

/// Bookkeeping a tree may keep after it empties: the (empty) lists of slab
/// blocks keep their capacity, at most one buffer per node pool, 8 bytes
/// per block once held. None of it is node or leaf memory.
fn assert_back_to_empty(
    after: Live,
    empty: Live,
    peak_blocks_bytes: usize,
    what: &str,
    round: usize,
    insert_only: bool,
) {
    // At most two pools per size class, five classes; plus the arena list.
    let pools: isize = 10 + insert_only as isize;
    let extra_allocs = after.allocs - empty.allocs;
    let extra_bytes = after.bytes - empty.bytes;
    assert!(
        (0..=pools).contains(&extra_allocs),
        "{what} round {round}: {extra_allocs} allocations more than the empty tree"
    );
    // A block list holds 8 bytes per block and at most doubles.
    let bound = 2 * 8 * peak_blocks_bytes.div_ceil(8192) as isize + 8 * 4 * pools;
    assert!(
        (0..=bound).contains(&extra_bytes),
        "{what} round {round}: {extra_bytes} bytes more than the empty tree (bound {bound})"
    );
}

/// Fills a tree with `n` keys three times, emptying it by `clear`, by
/// removing every key, and by dropping it; checks the allocator's count
/// against `memory_usage()` while full and against the empty tree after.
fn returns_every_byte<C: Config<Layout: TestLayout, Memory = LocalMemory>>(
    n: usize,
    insert_only: bool,
) {
    let max = max_of::<C::Key>();
    let mut rng = SplitMix64::new(0xA110C);
    let keys: Vec<u128> = (0..n)
        .map(|i| match i % 4 {
            0 => i as u128 & max,
            1 => rng.next_u128() & max,
            _ => rng.next_u64() as u128 & 0x07FF_00FF & max,
        })
        .collect();
    let k = |w: u128| key::<C::Key>(w);

    let what = &format!("{} insert_only={insert_only}", std::any::type_name::<C>());
    let before = live();
    let mut t = new_tree::<C>(insert_only);
    let empty = live();
    assert_eq!(t.memory_usage(), 0);

    for round in 0..3 {
        let tags: Vec<u64> = (0..n).map(|i| tag(keys[i], (i + round) as u64)).collect();
        let mut model: BTreeMap<u128, u64> =
            keys.iter().copied().zip(tags.iter().copied()).collect();
        let filling = live();
        for (&w, &tg) in keys.iter().zip(&tags) {
            put(&mut t, k(w), tg);
        }
        assert_eq!(t.len(), model.len());
        // What the tree reports is what it holds: the allocator sees the
        // reported blocks and leaves, the blocks reserved and not handed
        // out yet (at most one extent of 256 KiB a pool), and only the
        // block lists besides.
        let full = live();
        let used = t.memory_usage();
        let reserved = t.memory().bytes_reserved();
        let held = (full.bytes - filling.bytes) as usize;
        assert!(
            held >= used + reserved,
            "{what} round {round}: memory_usage() {used} and {reserved} reserved exceed \
             the {held} bytes allocated"
        );
        assert!(reserved <= RawTree::<C>::pool_specs().len() * (256 << 10));
        // Slack: the block and extent lists, and bumpalo's chunk footers.
        assert!(
            held - used - reserved <= used / 128 + 2048,
            "{what} round {round}: {held} bytes allocated but memory_usage() is {used} \
             and {reserved} reserved"
        );
        let leaf_bytes: usize = model
            .values()
            .map(|&tg| <C::Layout as TestLayout>::leaf_bytes(tg))
            .sum();
        assert!(used >= leaf_bytes, "{what}: leaves not counted");
        match round {
            0 => t.clear(),
            1 => {
                for &w in &keys {
                    assert_old(del(&mut t, k(w)), model.remove(&w), what);
                }
            }
            _ => {
                drop(t);
                drop((tags, model));
                assert_eq!(live(), before, "{what}: drop kept memory");
                return;
            }
        }
        drop((tags, model));
        assert!(t.is_empty());
        assert_eq!(t.memory_usage(), 0, "{what} round {round}: memory_usage()");
        assert_back_to_empty(live(), empty, used, what, round, insert_only);
        t.verify().unwrap();
    }
    unreachable!();
}

// ---------------------------------------------------------------------
// Values with Drop are dropped exactly once.
// ---------------------------------------------------------------------

/// A value that counts its drops in a cell shared with the test. It is one
/// pointer, so `Auto` embeds it.
struct Tracked(Rc<Cell<u32>>);

impl Drop for Tracked {
    fn drop(&mut self) {
        self.0.set(self.0.get() + 1);
    }
}

/// A `Tracked` too large to embed: `Auto` makes it a leaf, `Inline` stores
/// it in leaf nodes.
struct BigTracked {
    tracked: Tracked,
    check: [u64; 2],
}

/// Values built around a fresh drop counter.
trait DropValue: Sized {
    fn new(counter: Rc<Cell<u32>>, salt: u64) -> Self;
    fn counter(&self) -> &Rc<Cell<u32>>;
    fn intact(&self, salt: u64) -> bool;
}

impl DropValue for Tracked {
    fn new(counter: Rc<Cell<u32>>, _salt: u64) -> Self {
        Tracked(counter)
    }
    fn counter(&self) -> &Rc<Cell<u32>> {
        &self.0
    }
    fn intact(&self, _salt: u64) -> bool {
        true
    }
}

impl DropValue for BigTracked {
    fn new(counter: Rc<Cell<u32>>, salt: u64) -> Self {
        BigTracked {
            tracked: Tracked(counter),
            check: [salt, !salt],
        }
    }
    fn counter(&self) -> &Rc<Cell<u32>> {
        &self.tracked.0
    }
    fn intact(&self, salt: u64) -> bool {
        self.check == [salt, !salt]
    }
}

/// One value's drop counter, as the test holds it.
struct Probe {
    drops: Rc<Cell<u32>>,
    salt: u64,
}

impl Probe {
    fn new(salt: u64) -> Self {
        Self {
            drops: Rc::new(Cell::new(0)),
            salt,
        }
    }
    fn value<V: DropValue>(&self) -> V {
        V::new(self.drops.clone(), self.salt)
    }
    /// Alive in the tree: not dropped, and the tree holds the other `Rc`.
    fn alive(&self) -> bool {
        self.drops.get() == 0 && Rc::strong_count(&self.drops) == 2
    }
    /// Dropped exactly once, and no copy of the value remains.
    fn dropped_once(&self) -> bool {
        self.drops.get() == 1 && Rc::strong_count(&self.drops) == 1
    }
}

/// Drop accounting for a layout whose values are `V`:
/// - inserting (and the node growth it causes) drops nothing;
/// - replacing a value returns the old one undropped, the caller drops it;
/// - removing returns the value undropped (shrinking drops nothing else);
/// - `clear`, emptying by removal, and dropping the tree drop each value
///   exactly once;
/// - and the allocator is back where it started.
fn drops_once<C, V>(n: usize, insert_only: bool)
where
    C: Config<Memory = LocalMemory>,
    C::Layout: radix_core::value::MutableLayout<Value = V>,
    for<'a> C::Layout: radix_core::value::ValueLayout<Input<'a> = V, Old = Option<V>>,
    V: DropValue,
{
    let what = &format!("{} insert_only={insert_only}", std::any::type_name::<C>());
    let k = |i: usize| key::<C::Key>((i as u128).wrapping_mul(0x1_0001) & max_of::<C::Key>());
    let fill = |t: &mut RawTree<C>, salt: u64| -> Vec<Probe> {
        (0..n)
            .map(|i| {
                let p = Probe::new(salt ^ i as u64);
                assert!(t.insert(k(i), p.value()).is_none());
                p
            })
            .collect()
    };
    let before = live();
    {
        let mut t = new_tree::<C>(insert_only);
        let mut probes = fill(&mut t, 1);
        assert_eq!(t.len(), n);
        assert!(probes.iter().all(Probe::alive), "{what}: insert dropped");
        for (i, p) in probes.iter().enumerate() {
            let v = t.get(k(i)).expect("present");
            assert!(Rc::ptr_eq(v.counter(), &p.drops) && v.intact(p.salt));
        }

        // Replace every third value: the old one comes back alive.
        for i in (0..n).step_by(3) {
            let new = Probe::new(0xFEED ^ i as u64);
            let old = t.insert(k(i), new.value()).expect("replaced");
            assert!(Rc::ptr_eq(old.counter(), &probes[i].drops));
            assert!(old.intact(probes[i].salt), "{what}: returned value torn");
            assert_eq!(probes[i].drops.get(), 0, "{what}: replace dropped old");
            drop(old);
            assert!(
                probes[i].dropped_once(),
                "{what}: old value not dropped once"
            );
            assert!(new.alive());
            probes[i] = new;
        }
        // Change values in place.
        for (i, p) in probes.iter_mut().enumerate().skip(1).step_by(5) {
            let v = t.get_mut(k(i)).expect("present");
            let fresh = Probe::new(0xC0DE ^ i as u64);
            let old = std::mem::replace(v, fresh.value());
            drop(old);
            assert!(p.dropped_once());
            *p = fresh;
        }

        // Remove most values (nodes shrink): only the removed ones drop,
        // and only when the caller drops them.
        for i in (0..n).filter(|i| i % 4 != 0) {
            let v = t.remove(k(i)).expect("present");
            assert!(Rc::ptr_eq(v.counter(), &probes[i].drops));
            assert!(v.intact(probes[i].salt));
            assert_eq!(probes[i].drops.get(), 0, "{what}: remove dropped");
            drop(v);
            assert!(probes[i].dropped_once());
            assert!(t.remove(k(i)).is_none());
        }
        for (i, p) in probes.iter().enumerate() {
            assert_eq!(p.alive(), i % 4 == 0, "{what}: key {i}");
        }
        t.verify().unwrap();

        // Clear drops the rest exactly once.
        t.clear();
        assert!(probes.iter().all(Probe::dropped_once), "{what}: clear");
        assert_eq!(t.memory_usage(), 0);

        // Emptying by removal drops each exactly once.
        let probes = fill(&mut t, 2);
        for i in 0..n {
            drop(t.remove(k(i)).expect("present"));
        }
        assert!(probes.iter().all(Probe::dropped_once), "{what}: remove all");
        assert_eq!(t.memory_usage(), 0);

        // Dropping the tree drops each exactly once.
        let probes = fill(&mut t, 3);
        drop(t);
        assert!(probes.iter().all(Probe::dropped_once), "{what}: drop");
    }
    assert_eq!(live(), before, "{what}: memory after the drop checks");
}

// ---------------------------------------------------------------------
// Varlen: leaves and embedded values, replaced in both directions.
// ---------------------------------------------------------------------

/// Replacing varlen values between embedded and leaf sizes allocates and
/// frees exactly the leaves: after each step the allocator's live bytes are
/// the nodes plus the current leaves.
fn varlen_replacements<C: Config<Layout = Varlen<VarBytes>, Memory = LocalMemory>>() {
    let k = |w: u128| key::<C::Key>(w);
    let before = live();
    let mut t = RawTree::<C>::new();
    put(&mut t, k(7), tag_with_len(2, 0));
    let base = live().bytes;
    let base_usage = t.memory_usage();
    for (step, len) in (0..=VARLEN_MAX_DATA)
        .chain((0..VARLEN_MAX_DATA).rev())
        .chain([3, 30, 7, 8, 0, 40])
        .enumerate()
    {
        let tg = tag_with_len(len, step as u64);
        let value = var_bytes(tg);
        assert!(
            t.insert(k(7), &value),
            "replacement reports a previous value"
        );
        drop(value);
        let leaf = <C::Layout as TestLayout>::leaf_bytes(tg) as isize;
        assert_eq!(live().bytes - base, leaf, "len {len}: live bytes");
        assert_eq!(t.memory_usage() - base_usage, leaf as usize, "len {len}");
        assert!(holds(&t, k(7), tg));
    }
    drop(t);
    assert_eq!(live(), before, "varlen replacements leaked");
}

// ---------------------------------------------------------------------
// The one test.
// ---------------------------------------------------------------------

tree_config!(U64Auto, u64, Auto<u64>);
tree_config!(U64Leaf, u64, Leaf<u64>);
tree_config!(U64Inline, u64, Inline<[u64; 3]>);
tree_config!(U64Varlen, u64, Varlen<VarBytes>);
tree_config!(U16Leaf, u16, Leaf<u64>);
tree_config!(U32Inline, u32, Inline<[u64; 3]>);
tree_config!(U128Varlen, u128, Varlen<VarBytes>);
tree_config!(U128Auto, u128, Auto<u64>);

tree_config!(U64AutoTracked, u64, Auto<Tracked>);
tree_config!(U64LeafTracked, u64, Leaf<Tracked>);
tree_config!(U32AutoBigTracked, u32, Auto<BigTracked>);
tree_config!(U64InlineBigTracked, u64, Inline<BigTracked>);
tree_config!(U16InlineTracked, u16, Inline<Tracked>);
tree_config!(U128LeafBigTracked, u128, Leaf<BigTracked>);

#[test]
fn every_byte_and_every_drop_is_accounted_for() {
    let start = live();
    let n = test_depth::pick(20_000, 5_000, 150);
    for insert_only in [false, true] {
        returns_every_byte::<U64Auto>(n, insert_only);
        returns_every_byte::<U64Leaf>(n, insert_only);
        returns_every_byte::<U64Inline>(n, insert_only);
        returns_every_byte::<U64Varlen>(n, insert_only);
        returns_every_byte::<U16Leaf>(n, insert_only);
        returns_every_byte::<U32Inline>(n, insert_only);
        returns_every_byte::<U128Varlen>(n, insert_only);
        returns_every_byte::<U128Auto>(n, insert_only);
    }

    let n = test_depth::pick(3_000, 1_000, 100);
    for insert_only in [false, true] {
        drops_once::<U64AutoTracked, Tracked>(n, insert_only);
        drops_once::<U64LeafTracked, Tracked>(n, insert_only);
        drops_once::<U32AutoBigTracked, BigTracked>(n, insert_only);
        drops_once::<U64InlineBigTracked, BigTracked>(n, insert_only);
        drops_once::<U16InlineTracked, Tracked>(n, insert_only);
        drops_once::<U128LeafBigTracked, BigTracked>(n, insert_only);
    }

    varlen_replacements::<U64Varlen>();
    varlen_replacements::<U128Varlen>();

    assert_eq!(live(), start, "the whole test leaked");
}
