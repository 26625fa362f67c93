//! Leak and drop-once tests for the map API that moves values: owning
//! iteration, the entry API, `pop_first`/`pop_last`, `retain`,
//! `split_off`, `append`, `extend` and `Clone`, including user code that
//! panics in the middle of them (a `retain` predicate, a value's `Drop`, a
//! value's `Clone`).
//!
//! Values are [`D`]s: each instance (made new or by `clone`) gets a serial
//! number that a thread-local ledger records as live until the instance is
//! dropped. Dropping an instance that is not live counts as a double drop;
//! the live count must never go negative and must return to zero. The
//! binary's counting allocator keeps per-thread byte totals, so each scenario
//! also checks that every byte the trees allocated (nodes, leaves, clones
//! abandoned by a panic) is given back; the ledger's own allocations are
//! not counted. Where a `Drop` panics, the tree's drop, `clear` and the
//! owning iterators still drop every other value, as std does (the
//! panicking value's leaf may leak); the other scenarios with a panicking
//! `Drop` allow leaks of the values after it, but never a double drop.
//!
//! Every test runs on its own thread, so the ledger and byte totals of
//! parallel tests do not mix.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

use crate::common::*;
use crate::counting::{paused, set_thread_bytes, thread_bytes};
use radix_core::config::Removable;
use radix_core::mem::LocalMemory;
use radix_core::value::{CloneLayout, Embedded, Inline, Leaf, MutableLayout};
use radix_core::{Config, Entry, RawTree, ValueOf};

// --- The ledger of live values. ---

#[derive(Default)]
struct Ledger {
    next_serial: u32,
    live: HashSet<u32>,
    /// The live serials at some point, for comparison.
    snapshot: HashSet<u32>,
    live_count: i64,
    min_live: i64,
    created: u64,
    double_drops: u64,
    /// A value with this tag panics when dropped (once).
    panic_drop_tag: Option<u32>,
    /// `clone` panics when this many more calls have succeeded (once).
    clone_countdown: Option<u64>,
}

thread_local! {
    static LEDGER: RefCell<Ledger> = RefCell::new(Ledger::default());
}

fn ledger<R>(f: impl FnOnce(&mut Ledger) -> R) -> R {
    paused(|| LEDGER.with(|l| f(&mut l.borrow_mut())))
}

fn live() -> usize {
    ledger(|l| {
        assert_eq!(l.live.len() as i64, l.live_count);
        l.live.len()
    })
}

fn created() -> u64 {
    ledger(|l| l.created)
}

fn snapshot_live() {
    ledger(|l| l.snapshot = l.live.clone());
}

/// Whether exactly the values live at the last [`snapshot_live`] are live.
fn live_as_snapshot() -> bool {
    ledger(|l| l.live == l.snapshot)
}

/// Asserts that no value was dropped twice and the count never went
/// negative.
#[track_caller]
fn assert_no_double_drop(at: &str) {
    ledger(|l| {
        assert_eq!(l.double_drops, 0, "{at}: double drops");
        assert!(l.min_live >= 0, "{at}: the live count went negative");
    });
}

/// What a scenario starts from: no live value, and this many bytes.
struct Start(isize);

fn start() -> Start {
    install_quiet_hook();
    ledger(|l| {
        assert!(l.live.is_empty(), "a scenario starts with live values");
        assert_eq!(l.double_drops, 0);
        l.panic_drop_tag = None;
        l.clone_countdown = None;
        l.min_live = l.live_count;
    });
    Start(thread_bytes())
}

impl Start {
    /// Every value dropped exactly once, every byte given back.
    #[track_caller]
    fn clean(self, at: &str) {
        assert_no_double_drop(at);
        assert_eq!(live(), 0, "{at}: values leaked");
        assert_eq!(thread_bytes(), self.0, "{at}: bytes leaked");
    }

    /// No value dropped twice; values (and their bytes) may have leaked:
    /// forget them.
    #[track_caller]
    fn leaky(self, at: &str) {
        assert_no_double_drop(at);
        ledger(|l| {
            l.live.clear();
            l.live_count = 0;
            l.min_live = 0;
            l.panic_drop_tag = None;
        });
        set_thread_bytes(self.0);
    }
}

/// Silences the panics these tests cause on purpose; others still print.
fn install_quiet_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let intentional = info
                .payload()
                .downcast_ref::<&str>()
                .is_some_and(|s| s.starts_with("intentional"));
            if !intentional {
                default(info);
            }
        }));
    });
}

// --- The counted value. ---

/// A counted value: a serial number for the ledger and a tag for checking
/// contents; `PAD` words make it larger (`D<0>` is one word, so it can be
/// embedded).
#[derive(Debug)]
struct D<const PAD: usize> {
    serial: u32,
    tag: u32,
    pad: [u64; PAD],
}

impl<const PAD: usize> D<PAD> {
    fn new(tag: u32) -> Self {
        let serial = ledger(|l| {
            let serial = l.next_serial;
            l.next_serial += 1;
            l.live.insert(serial);
            l.live_count += 1;
            l.created += 1;
            serial
        });
        Self {
            serial,
            tag,
            pad: [tag as u64 | 1 << 40; PAD],
        }
    }
}

impl<const PAD: usize> Clone for D<PAD> {
    fn clone(&self) -> Self {
        assert!(
            self.pad.iter().all(|&p| p == self.tag as u64 | 1 << 40),
            "torn value"
        );
        let panic = ledger(|l| match l.clone_countdown {
            Some(0) => {
                l.clone_countdown = None;
                true
            }
            Some(n) => {
                l.clone_countdown = Some(n - 1);
                false
            }
            None => false,
        });
        if panic {
            panic!("intentional clone panic");
        }
        Self::new(self.tag)
    }
}

impl<const PAD: usize> Default for D<PAD> {
    fn default() -> Self {
        Self::new(0xDEF)
    }
}

impl<const PAD: usize> Drop for D<PAD> {
    fn drop(&mut self) {
        let serial = self.serial;
        let tag = self.tag;
        let panic = ledger(|l| {
            if !l.live.remove(&serial) {
                l.double_drops += 1;
            }
            l.live_count -= 1;
            l.min_live = l.min_live.min(l.live_count);
            if l.panic_drop_tag == Some(tag) {
                l.panic_drop_tag = None;
                true
            } else {
                false
            }
        });
        if panic {
            panic!("intentional drop panic");
        }
    }
}

/// The counted values the configurations store.
trait Tracked: Clone + Default + std::fmt::Debug {
    fn make(tag: u32) -> Self;
    fn tag(&self) -> u32;
    fn set_tag(&mut self, tag: u32);
}

impl<const PAD: usize> Tracked for D<PAD> {
    fn make(tag: u32) -> Self {
        Self::new(tag)
    }
    fn tag(&self) -> u32 {
        self.tag
    }
    fn set_tag(&mut self, tag: u32) {
        self.tag = tag;
        self.pad = [tag as u64 | 1 << 40; PAD];
    }
}

// --- Helpers. ---

/// Keys as `u128` to their tags.
type Model = BTreeMap<u128, u32>;

fn ins<C>(t: &mut RawTree<C>, k: C::Key, v: ValueOf<C>) -> Option<ValueOf<C>>
where
    C: Config<Memory = LocalMemory>,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized,
{
    <C::Layout as MutableLayout>::old_value(t.insert(k, <C::Layout as MutableLayout>::input(v)))
}

thread_local! {
    /// Whether this test's trees take their leaves from bump arenas.
    static INSERT_ONLY: Cell<bool> = const { Cell::new(false) };
}

/// An empty tree, insert-only when this test's configuration says so.
fn new_tree<C: Config<Memory = LocalMemory>>() -> RawTree<C> {
    if INSERT_ONLY.with(|i| i.get()) {
        let t = RawTree::<C>::with_memory(LocalMemory::insert_only(
            &RawTree::<C>::pool_specs(),
            16 << 10,
        ));
        assert!(t.memory().is_insert_only());
        t
    } else {
        RawTree::new()
    }
}

/// A tree holding `ws` (truncated to the key width), each with a tag of
/// its own starting at `first_tag`.
fn build<C>(ws: &[u128], first_tag: u32) -> (RawTree<C>, Model)
where
    C: Config<Memory = LocalMemory>,
    C::Layout: MutableLayout,
    ValueOf<C>: Tracked,
{
    let max = max_of::<C::Key>();
    let mut t = new_tree::<C>();
    let mut model = Model::new();
    for (i, &w) in ws.iter().enumerate() {
        let w = w & max;
        let tg = first_tag + i as u32;
        ins(&mut t, key(w), <ValueOf<C> as Tracked>::make(tg));
        model.insert(w, tg);
    }
    (t, model)
}

/// The distinct keys `build::<C>(ws, _)` stores, ascending: the model's.
fn model_keys<C: Config>(ws: &[u128]) -> Vec<u128> {
    let max = max_of::<C::Key>();
    let keys: std::collections::BTreeSet<u128> = ws.iter().map(|&w| w & max).collect();
    keys.into_iter().collect()
}

/// Verifies `t` and asserts it holds exactly the model's keys and tags.
#[track_caller]
fn check<C>(t: &RawTree<C>, model: &Model, at: &str)
where
    C: Config<Memory = LocalMemory>,
    ValueOf<C>: Tracked,
{
    if let Err(e) = t.verify() {
        panic!("{at}: verify failed: {e}");
    }
    assert_eq!(t.len(), model.len(), "{at}: len");
    let got: Vec<(u128, u32)> = t.iter().map(|(k, v)| (wide(k), v.tag())).collect();
    let want: Vec<(u128, u32)> = model.iter().map(|(&w, &tg)| (w, tg)).collect();
    if got != want {
        let first = got.iter().zip(&want).position(|(a, b)| a != b);
        panic!(
            "{at}: entries differ: {} in the tree, {} in the model, first difference at {first:?}",
            got.len(),
            want.len()
        );
    }
    if model.is_empty() {
        assert_eq!(t.memory_usage(), 0, "{at}: an empty tree holds memory");
    }
}

/// The key sets each scenario runs over: empty, single keys at either end,
/// small and large dense runs, sparse keys, and a set large enough for
/// `retain` to remove in several batches.
fn key_sets(max: u128) -> Vec<(&'static str, Vec<u128>)> {
    let sparse = |n: u64, seed: u64| -> Vec<u128> {
        (0..n)
            .map(|i| {
                let x = mix64(i ^ seed);
                ((x as u128) << 64 | mix64(x) as u128) & max
            })
            .collect()
    };
    // 1,600 keys by default: `retain` rejects in batches of 1,024, and
    // `positions` adds one past 1,500.
    let big = test_depth::pick(3000, 1200, 50);
    vec![
        ("empty", vec![]),
        ("zero", vec![0]),
        ("max", vec![max]),
        ("dense 17", (0..17).collect()),
        ("dense 300", (1000..1300).map(|w| w & max).collect()),
        ("sparse 300", sparse(300, 7)),
        ("mixed large", {
            let mut v: Vec<u128> = (0..big as u128).map(|w| (w * 3) & max).collect();
            v.extend(sparse(big / 3, 99));
            v
        }),
    ]
}

/// Positions worth making something happen at among `len`: by default the
/// first, a middle and the last, and past 1,500 a second `retain` batch.
fn positions(len: usize) -> Vec<usize> {
    let mut p = if test_depth::is_full() {
        vec![
            0,
            1,
            len / 3,
            len / 2,
            len.saturating_sub(2),
            len.saturating_sub(1),
        ]
    } else {
        vec![0, len / 2, len.saturating_sub(1)]
    };
    if len > 1500 {
        p.push(1500);
        if test_depth::is_full() {
            p.push(len - 400);
        }
    }
    p.retain(|&i| i < len);
    p.sort_unstable();
    p.dedup();
    p
}

// --- Scenarios. ---

/// The configurations the scenarios run over: local, removable trees of
/// tracked values that can be cloned.
trait Tested:
    Config<Memory = LocalMemory, Layout: MutableLayout + CloneLayout<Value: Tracked>> + Removable
{
}

impl<C> Tested for C where
    C: Config<Memory = LocalMemory, Layout: MutableLayout + CloneLayout<Value: Tracked>>
        + Removable
{
}

/// `retain` whose predicate panics at the `p`-th call: the tree verifies,
/// holds every entry except those rejected in batches completed before the
/// panic (and the kept ones changed), and every value is dropped exactly
/// once; then `retain` of nothing empties it and gives back its memory.
fn retain_panics<C: Tested>(name: &str, ws: &[u128]) {
    let (t0, m0) = build::<C>(ws, 1);
    for p in positions(m0.len()) {
        let at = format!("retain panicking at call {p} over {name}");
        let s = start_with(t0.len());
        {
            let mut t = t0.clone();
            let mut model = m0.clone();
            let mut calls = 0;
            let mut rejected = Vec::new();
            let mut kept = Vec::new();
            let result = catch_unwind(AssertUnwindSafe(|| {
                t.retain(|k, v| {
                    if calls == p {
                        panic!("intentional retain panic");
                    }
                    calls += 1;
                    let w = wide(k);
                    // Reject three keys in four: batches fill before the panic.
                    let keep = mix64(w as u64 ^ v.tag() as u64).is_multiple_of(4);
                    if keep {
                        v.set_tag(v.tag() ^ 0x4000_0000);
                        kept.push(w);
                    } else {
                        rejected.push(w);
                    }
                    keep
                })
            }));
            assert!(result.is_err(), "{at}: no panic");
            assert_eq!(calls, p, "{at}: calls");
            for w in &kept {
                *model.get_mut(w).unwrap() ^= 0x4000_0000;
            }
            let removed = rejected.len() / 1024 * 1024;
            for w in &rejected[..removed] {
                model.remove(w);
            }
            check(&t, &model, &at);
            assert_eq!(live(), t.len() + t0.len(), "{at}: live values");
            t.retain(|_, _| false);
            check(&t, &Model::new(), &format!("{at}, then retain nothing"));
            assert_eq!(live(), t0.len(), "{at}: live values after emptying");
            drop(t);
        }
        s.clean_with(t0.len(), &at);
    }
    let s = start_with(t0.len());
    {
        drop(t0);
    }
    s.clean_with(0, "retain: dropping the original");
}

/// Like [`start`], with `already` values alive (an original kept across
/// the scenario's rounds).
fn start_with(already: usize) -> StartWith {
    install_quiet_hook();
    assert_no_double_drop("start");
    assert_eq!(live(), already, "a round starts with other live values");
    StartWith(thread_bytes())
}

struct StartWith(isize);

impl StartWith {
    #[track_caller]
    fn clean_with(self, still_live: usize, at: &str) {
        assert_no_double_drop(at);
        assert_eq!(live(), still_live, "{at}: values leaked");
        // The original may have been dropped: it gave bytes back.
        if still_live > 0 {
            assert_eq!(thread_bytes(), self.0, "{at}: bytes leaked");
        } else {
            assert!(thread_bytes() <= self.0, "{at}: bytes leaked");
        }
    }
}

/// `into_iter` (and `into_keys`, `into_values`) dropped after taking part
/// of the entries from the front, the back, or both.
fn owned_iter_partial<C: Tested>(name: &str, ws: &[u128]) {
    let len = build::<C>(ws, 1).1.len();
    for (how, pattern) in [
        ("front", 0u64),
        ("back", !0),
        ("mixed", 0x9A5C_3B71_0F0F_6E2D),
    ] {
        for take in [0, len / 2, len] {
            for kind in ["into_iter", "into_keys", "into_values"] {
                let at = format!("{kind} over {name}, {take} from the {how}");
                let s = start();
                {
                    let (t, model) = build::<C>(ws, 1);
                    let want: Vec<(u128, u32)> = model.iter().map(|(&w, &tg)| (w, tg)).collect();
                    let (mut front, mut back) = (0, want.len());
                    match kind {
                        "into_iter" => {
                            let mut it = t.into_iter();
                            for step in 0..take {
                                assert_eq!(it.len(), back - front, "{at}");
                                let (w, tg, (k, v)) = if (pattern >> (step % 64)) & 1 == 1 {
                                    back -= 1;
                                    (want[back].0, want[back].1, it.next_back().unwrap())
                                } else {
                                    front += 1;
                                    (want[front - 1].0, want[front - 1].1, it.next().unwrap())
                                };
                                assert_eq!((wide(k), v.tag()), (w, tg), "{at}: step {step}");
                            }
                            assert_eq!(live(), len - take, "{at}: live after taking");
                        }
                        "into_keys" => {
                            let mut it = t.into_keys();
                            for step in 0..take {
                                let (w, k) = if (pattern >> (step % 64)) & 1 == 1 {
                                    back -= 1;
                                    (want[back].0, it.next_back().unwrap())
                                } else {
                                    front += 1;
                                    (want[front - 1].0, it.next().unwrap())
                                };
                                assert_eq!(wide(k), w, "{at}: step {step}");
                            }
                            assert_eq!(live(), len - take, "{at}: live after taking");
                        }
                        _ => {
                            let mut it = t.into_values();
                            let mut taken = Vec::new();
                            for step in 0..take {
                                let (tg, v) = if (pattern >> (step % 64)) & 1 == 1 {
                                    back -= 1;
                                    (want[back].1, it.next_back().unwrap())
                                } else {
                                    front += 1;
                                    (want[front - 1].1, it.next().unwrap())
                                };
                                assert_eq!(v.tag(), tg, "{at}: step {step}");
                                taken.push(v);
                            }
                            // The values taken outlive the iterator.
                            drop(it);
                            assert_eq!(live(), take, "{at}: live after dropping the iterator");
                        }
                    }
                }
                s.clean(&at);
            }
        }
    }
}

/// A value whose `Drop` panics: in `IntoIter`'s drop of the rest, in the
/// tree's drop, in `clear`, and while `into_keys` drops the values it
/// passes. As with std's `BTreeMap`, every value is dropped exactly once,
/// those after the panicking one included, and the panic then resumes
/// (only the panicking value's own leaf may leak).
fn drop_panics<C: Tested>(name: &str, ws: &[u128]) {
    let len = build::<C>(ws, 1).1.len();
    for victim in positions(len) {
        for taken in [0, victim / 2, victim] {
            let at = format!("into_iter over {name}: {taken} taken, drop panics at {victim}");
            let s = start();
            {
                let (t, model) = build::<C>(ws, 1);
                let tags: Vec<u32> = model.values().copied().collect();
                ledger(|l| l.panic_drop_tag = Some(tags[victim]));
                let mut it = t.into_iter();
                for _ in 0..taken {
                    it.next().unwrap();
                }
                let result = catch_unwind(AssertUnwindSafe(move || drop(it)));
                assert!(result.is_err(), "{at}: no panic");
                // Every value was dropped, once: the ones after the victim
                // too, as std's `IntoIter` does.
                assert_no_double_drop(&at);
                assert_eq!(live(), 0, "{at}: values after the victim still live");
            }
            s.leaky(&at);
        }
        // The tree's own drop, and `clear`.
        for how in ["drop", "clear"] {
            let at = format!("{how} of a tree over {name}, drop panics at {victim}");
            let s = start();
            {
                let (mut t, model) = build::<C>(ws, 1);
                let tags: Vec<u32> = model.values().copied().collect();
                ledger(|l| l.panic_drop_tag = Some(tags[victim]));
                if how == "drop" {
                    let result = catch_unwind(AssertUnwindSafe(move || drop(t)));
                    assert!(result.is_err(), "{at}: no panic");
                    assert_no_double_drop(&at);
                    assert_eq!(live(), 0, "{at}: values after the victim still live");
                } else {
                    let result = catch_unwind(AssertUnwindSafe(|| t.clear()));
                    assert!(result.is_err(), "{at}: no panic");
                    assert_no_double_drop(&at);
                    assert_eq!(live(), 0, "{at}: values after the victim still live");
                    // The tree is empty and usable. (It does not verify
                    // and still holds its nodes until dropped: see
                    // `clear_with_a_panicking_drop_releases_the_nodes`.)
                    assert!(t.is_empty() && t.iter().next().is_none(), "{at}: not empty");
                    ins(&mut t, key(5), <ValueOf<C> as Tracked>::make(5));
                    assert_eq!(t.len(), 1, "{at}: len after reuse");
                    assert_eq!(t.get(key(5)).map(|v| v.tag()), Some(5), "{at}: reuse");
                    drop(t);
                }
            }
            s.leaky(&at);
        }
        // The operations that drop many values one by one: `retain` and the
        // in-place set operations drop the values they remove (the victim
        // and every value after it); `union_with` hands `other`'s values
        // to `merge`, which drops them; `split_off` drops none, and the
        // halves drop theirs. A panic leaves the tree whole, holding what
        // was not yet removed, and every value is dropped once in the end.
        let keys: Vec<u128> = model_keys::<C>(ws);
        for how in [
            "retain",
            "intersect_with",
            "difference_with",
            "union_with",
            "split_off",
        ] {
            let at = format!("{how} over {name}, drop panics at {victim}");
            let s = start();
            {
                let (mut t, model) = build::<C>(ws, 1);
                let tags: Vec<u32> = model.values().copied().collect();
                // `other`'s tags start far above `t`'s, so that only the
                // victim's `Drop` panics.
                let other_keys = match how {
                    "intersect_with" => &keys[..victim],
                    "difference_with" => &keys[victim..],
                    _ => &keys[..],
                };
                let (other, _) = build::<C>(other_keys, 1 << 20);
                let victim_tag = if how == "union_with" {
                    (1 << 20) + victim as u32
                } else {
                    tags[victim]
                };
                ledger(|l| l.panic_drop_tag = Some(victim_tag));
                let mut other = Some(other);
                let result = catch_unwind(AssertUnwindSafe(|| match how {
                    "retain" => t.retain(|_, _| false),
                    "intersect_with" => {
                        t.intersect_with(other.as_ref().unwrap(), |_, _, _| {});
                    }
                    "difference_with" => t.difference_with(other.as_ref().unwrap()),
                    "union_with" => t.union_with(other.take().unwrap(), |_, _, theirs| {
                        drop(theirs);
                    }),
                    _ => {
                        let split = keys[victim.min(keys.len() - 1) / 2];
                        let upper = t.split_off(key(split));
                        drop(upper);
                        let rest = std::mem::replace(&mut t, new_tree::<C>());
                        drop(rest);
                    }
                }));
                assert!(result.is_err(), "{at}: no panic");
                assert_no_double_drop(&at);
                if let Err(e) = t.verify() {
                    panic!("{at}: the tree is not whole after the panic: {e}");
                }
                drop(t);
                drop(other);
                assert_no_double_drop(&at);
                assert_eq!(live(), 0, "{at}: values leaked");
            }
            s.leaky(&at);
        }
        // `into_keys` drops each value as it passes it; the iterator
        // survives the panic and drops the rest exactly once.
        let at = format!("into_keys over {name}, drop panics at {victim}");
        let s = start();
        {
            let (t, model) = build::<C>(ws, 1);
            let tags: Vec<u32> = model.values().copied().collect();
            ledger(|l| l.panic_drop_tag = Some(tags[victim]));
            let mut it = t.into_keys();
            let mut seen = 0;
            let result = catch_unwind(AssertUnwindSafe(|| {
                for _ in it.by_ref() {
                    seen += 1;
                }
            }));
            assert!(result.is_err(), "{at}: no panic");
            assert_eq!(seen, victim, "{at}: keys before the panic");
            assert_eq!(it.len(), len - victim - 1, "{at}: len after the panic");
            drop(it);
        }
        s.clean(&at);
    }
}

/// `split_off` and `append` move values: the same instances stay live,
/// none is cloned or dropped, except the values `append` replaces, each
/// dropped once. Emptied trees give back their memory.
fn split_and_append<C: Tested>(name: &str, ws: &[u128]) {
    let max = max_of::<C::Key>();
    let (_, m0) = build::<C>(ws, 1);
    let mut at_keys: Vec<u128> = vec![0, max];
    at_keys.extend(
        positions(m0.len())
            .iter()
            .map(|&i| *m0.keys().nth(i).unwrap()),
    );
    at_keys.extend(m0.keys().next_back().map(|&w| w.wrapping_add(1) & max));
    for &split in &at_keys {
        let at = format!("split_off({split:#x}) over {name}");
        let s = start();
        {
            let (mut t, mut model) = build::<C>(ws, 1);
            snapshot_live();
            let made = created();
            let mut upper = t.split_off(key(split));
            let mut mupper = model.split_off(&split);
            check(&t, &model, &format!("{at}: lower"));
            check(&upper, &mupper, &format!("{at}: upper"));
            assert_eq!(created(), made, "{at}: values made");
            assert!(live_as_snapshot(), "{at}: other values live");
            // Back together, the other way round half of the time.
            if split % 2 == 0 {
                t.append(&mut upper);
                model.append(&mut mupper);
                check(&upper, &Model::new(), &format!("{at}: appended upper"));
            } else {
                upper.append(&mut t);
                mupper.append(&mut model);
                check(&t, &Model::new(), &format!("{at}: appended lower"));
                std::mem::swap(&mut t, &mut upper);
                std::mem::swap(&mut model, &mut mupper);
            }
            check(&t, &model, &format!("{at}: rejoined"));
            assert!(live_as_snapshot(), "{at}: other values live after append");
            // An overlapping append: every other key of `t` and new ones.
            let mut other = new_tree::<C>();
            let mut mother = Model::new();
            for (i, &w) in model.keys().enumerate().filter(|(i, _)| i % 2 == 0) {
                let tg = 1_000_000 + i as u32;
                ins(&mut other, key(w), <ValueOf<C> as Tracked>::make(tg));
                mother.insert(w, tg);
                let fresh = w.wrapping_mul(3).wrapping_add(1) & max;
                ins(
                    &mut other,
                    key(fresh),
                    <ValueOf<C> as Tracked>::make(tg + 1),
                );
                mother.insert(fresh, tg + 1);
            }
            let both = live();
            t.append(&mut other);
            let replaced = model.keys().filter(|w| mother.contains_key(w)).count();
            model.append(&mut mother);
            check(&t, &model, &format!("{at}: overlapping append"));
            check(&other, &Model::new(), &format!("{at}: the appended tree"));
            assert_eq!(live(), both - replaced, "{at}: replaced values dropped");
            assert_eq!(live(), t.len(), "{at}: live after append");
            drop((t, upper, other));
        }
        s.clean(&at);
    }
}

/// `intersect_with` and `difference_with` clone nothing and drop each value
/// they do not keep exactly once; the other tree is only read. When one of
/// those values panics in its `Drop`, nothing drops twice and the tree
/// verifies; an uncompressed tree drops them only after its walk, so it
/// then holds exactly the result, and a compressed one a part of the way
/// there (between the result and the tree before).
fn set_operations<C: Tested>(name: &str, ws: &[u128]) {
    let max = max_of::<C::Key>();
    let (_, m0) = build::<C>(ws, 1);
    // Every third key of ours, and as many of its own.
    let theirs: Vec<u128> = m0
        .keys()
        .step_by(3)
        .flat_map(|&w| [w, w.wrapping_mul(5).wrapping_add(2) & max])
        .collect();
    for op in ["intersect_with", "difference_with"] {
        let keep = |theirs_has: bool| theirs_has == (op == "intersect_with");
        let (_, mother) = build::<C>(&theirs, 1_000_000);
        let want: Model = m0
            .iter()
            .filter(|(w, _)| keep(mother.contains_key(w)))
            .map(|(&w, &tg)| (w, tg))
            .collect();
        let gone: Vec<u32> = m0
            .iter()
            .filter(|(w, _)| !want.contains_key(w))
            .map(|(_, &tg)| tg)
            .collect();
        let victims = std::iter::once(None).chain(positions(gone.len()).into_iter().map(Some));
        for victim in victims {
            let at = format!("{op} over {name}, drop panics at {victim:?}");
            let s = start();
            {
                let (mut t, model) = build::<C>(ws, 1);
                let (other, _) = build::<C>(&theirs, 1_000_000);
                let made = created();
                ledger(|l| l.panic_drop_tag = victim.map(|v| gone[v]));
                let result = catch_unwind(AssertUnwindSafe(|| {
                    if op == "intersect_with" {
                        t.intersect_with(&other, |_, _, _| {});
                    } else {
                        t.difference_with(&other);
                    }
                }));
                assert_eq!(result.is_err(), victim.is_some(), "{at}: the panic");
                assert_no_double_drop(&at);
                assert_eq!(created(), made, "{at}: values made");
                check(&other, &mother, &format!("{at}: the other tree"));
                if victim.is_none() || C::COMPRESSION.is_none() {
                    check(&t, &want, &at);
                } else {
                    if let Err(e) = t.verify() {
                        panic!("{at}: verify failed: {e}");
                    }
                    for (k, v) in t.iter() {
                        assert_eq!(model.get(&wide(k)), Some(&v.tag()), "{at}: an entry");
                    }
                    if op == "intersect_with" {
                        assert!(t.keys().all(|k| want.contains_key(&wide(k))), "{at}");
                    } else {
                        assert!(want.keys().all(|&w| t.contains_key(key(w))), "{at}");
                    }
                }
                if victim.is_none() {
                    assert_eq!(live(), t.len() + other.len(), "{at}: live values");
                }
            }
            if victim.is_none() {
                s.clean(&at);
            } else {
                s.leaky(&at);
            }
        }
    }
}

/// A clone dropped before its original and after it, and a clone whose
/// `Clone` panics on the `n`-th call.
fn clones<C: Tested>(name: &str, ws: &[u128]) {
    let at = format!("clone over {name}");
    let s = start();
    {
        let (t, model) = build::<C>(ws, 1);
        let c = t.clone();
        check(&c, &model, &at);
        assert_eq!(live(), 2 * model.len(), "{at}: live with the clone");
        drop(c);
        check(
            &t,
            &model,
            &format!("{at}: the original after dropping the clone"),
        );
        assert_eq!(live(), model.len(), "{at}: live after dropping the clone");
        let mut c = t.clone();
        drop(t);
        check(
            &c,
            &model,
            &format!("{at}: the clone after dropping the original"),
        );
        assert_eq!(
            live(),
            model.len(),
            "{at}: live after dropping the original"
        );
        // The clone owns its values: changing them is independent.
        for (_, v) in c.iter_mut() {
            *v = <ValueOf<C> as Tracked>::make(v.tag() ^ 1);
        }
        assert_eq!(
            live(),
            model.len(),
            "{at}: live after replacing the clone's values"
        );
        drop(c);
    }
    s.clean(&at);

    let len = build::<C>(ws, 1).1.len();
    for n in positions(len) {
        let at = format!("clone over {name} panicking at call {n}");
        let s = start();
        {
            let (t, model) = build::<C>(ws, 1);
            ledger(|l| l.clone_countdown = Some(n as u64));
            let result = catch_unwind(AssertUnwindSafe(|| t.clone()));
            assert!(result.is_err(), "{at}: no panic");
            assert_no_double_drop(&at);
            assert_eq!(live(), len, "{at}: the partial clone's values not dropped");
            check(&t, &model, &format!("{at}: the original"));
            let c = t.clone();
            check(&c, &model, &format!("{at}: a clone after the failed one"));
            drop((t, c));
        }
        s.clean(&at);
    }
}

/// The entry API: occupied `insert` returns the old value (dropped once by
/// the caller), `remove_entry` and `remove` hand the value out, a vacant
/// `insert` stores the value given, `or_insert` on an occupied entry drops
/// its unused default at once, `or_insert_with` does not call its
/// closure, `and_modify` replacing the value drops the old one; removing
/// everything through entries gives back the memory.
fn entries<C: Tested>(name: &str, ws: &[u128]) {
    let max = max_of::<C::Key>();
    let at = format!("entries over {name}");
    let s = start();
    {
        let (mut t, mut model) = build::<C>(ws, 1);
        let make = <ValueOf<C> as Tracked>::make;
        let keys: Vec<u128> = model.keys().copied().collect();
        for (i, &w) in keys.iter().enumerate() {
            let n = model.len();
            match i % 4 {
                0 => match t.entry(key(w)) {
                    Entry::Occupied(mut e) => {
                        let old = e.insert(make(77));
                        assert_eq!(old.tag(), model[&w], "{at}: old value");
                        assert_eq!(live(), n + 1, "{at}: old value and new both live");
                        drop(old);
                        assert_eq!(live(), n, "{at}: old value dropped");
                        model.insert(w, 77);
                    }
                    Entry::Vacant(_) => panic!("{at}: vacant"),
                },
                1 => {
                    let made = created();
                    let v = t.entry(key(w)).or_insert(make(88));
                    assert_eq!(v.tag(), model[&w], "{at}: or_insert on occupied");
                    assert_eq!(live(), n, "{at}: or_insert's unused default not dropped");
                    assert_eq!(created(), made + 1);
                    let made = created();
                    let v = t.entry(key(w)).or_insert_with(|| make(99));
                    assert_eq!(v.tag(), model[&w]);
                    let v = t.entry(key(w)).or_default();
                    assert_eq!(v.tag(), model[&w]);
                    assert_eq!(
                        created(),
                        made,
                        "{at}: a default made for an occupied entry"
                    );
                }
                2 => {
                    t.entry(key(w))
                        .and_modify(|v| *v = make(55))
                        .or_insert_with(|| unreachable!());
                    model.insert(w, 55);
                    assert_eq!(live(), n, "{at}: and_modify's replaced value not dropped");
                }
                _ => match t.entry(key(w)) {
                    Entry::Occupied(e) => {
                        let (k, v) = e.remove_entry();
                        assert_eq!((wide(k), v.tag()), (w, model.remove(&w).unwrap()));
                        assert_eq!(live(), n, "{at}: removed value dropped early");
                        drop(v);
                        assert_eq!(live(), n - 1, "{at}: removed value");
                    }
                    Entry::Vacant(_) => panic!("{at}: vacant"),
                },
            }
        }
        check(&t, &model, &at);
        // Vacant entries: insert, or_insert, or_default, or_insert_with_key;
        // `into_key` makes nothing.
        let fresh: Vec<u128> = (0..40u128)
            .map(|i| (i * 7 + 3) & max)
            .filter(|w| !model.contains_key(w))
            .collect();
        for (i, &w) in fresh.iter().enumerate() {
            if model.contains_key(&w) {
                continue;
            }
            let n = model.len();
            let made = created();
            let tg = 5000 + i as u32;
            match i % 5 {
                0 => match t.entry(key(w)) {
                    Entry::Vacant(e) => {
                        let v = e.insert(make(tg));
                        v.set_tag(tg + 1);
                        model.insert(w, tg + 1);
                    }
                    Entry::Occupied(_) => panic!("{at}: occupied"),
                },
                1 => {
                    t.entry(key(w)).or_insert(make(tg));
                    model.insert(w, tg);
                }
                2 => {
                    t.entry(key(w)).or_default();
                    model.insert(w, 0xDEF);
                }
                3 => {
                    t.entry(key(w))
                        .or_insert_with_key(|k| make(wide(k) as u32 ^ tg));
                    model.insert(w, w as u32 ^ tg);
                }
                _ => match t.entry(key(w)) {
                    Entry::Vacant(e) => {
                        assert_eq!(wide(e.into_key()), w);
                        assert_eq!(created(), made, "{at}: into_key made a value");
                        continue;
                    }
                    Entry::Occupied(_) => panic!("{at}: occupied"),
                },
            }
            assert_eq!(created(), made + 1, "{at}: values made by a vacant insert");
            assert_eq!(live(), n + 1, "{at}: live after a vacant insert");
        }
        check(&t, &model, &format!("{at}: after vacant inserts"));
        // Empty the tree through entries.
        while let Some((&w, &tg)) = model.iter().next_back() {
            match t.entry(key(w)) {
                Entry::Occupied(e) => assert_eq!(e.remove().tag(), tg),
                Entry::Vacant(_) => panic!("{at}: vacant"),
            }
            model.remove(&w);
        }
        check(&t, &model, &format!("{at}: emptied through entries"));
        assert_eq!(t.memory_usage(), 0);
        drop(t);
    }
    s.clean(&at);
}

/// `pop_first`/`pop_last` until empty, `retain` of nothing, of everything
/// and of half, `extend` over present keys, and values replaced through
/// `iter_mut`, `values_mut` and `range_mut`: each value dropped once, the
/// memory given back when the tree empties.
fn removals<C: Tested>(name: &str, ws: &[u128]) {
    let make = <ValueOf<C> as Tracked>::make;
    let at = format!("pops over {name}");
    let s = start();
    {
        let (mut t, mut model) = build::<C>(ws, 1);
        let mut i = 0;
        while !model.is_empty() {
            let (got, want) = if i % 3 == 0 {
                (t.pop_last(), model.pop_last())
            } else {
                (t.pop_first(), model.pop_first())
            };
            let (k, v) = got.unwrap();
            assert_eq!(Some((wide(k), v.tag())), want, "{at}");
            assert_eq!(live(), model.len() + 1, "{at}: popped value dropped early");
            drop(v);
            i += 1;
            if i % 97 == 0 {
                check(&t, &model, &at);
            }
        }
        assert!(t.pop_first().is_none() && t.pop_last().is_none());
        check(&t, &model, &at);
        assert_eq!(t.memory_usage(), 0, "{at}: memory after popping everything");
        drop(t);
    }
    s.clean(&at);

    for (what, keep) in [("nothing", 0u64), ("everything", 4), ("half", 2)] {
        let at = format!("retain {what} over {name}");
        let s = start();
        {
            let (mut t, mut model) = build::<C>(ws, 1);
            t.retain(|k, v| {
                let ok = mix64(wide(k) as u64) % 4 < keep;
                if ok {
                    v.set_tag(v.tag() + 1);
                }
                ok
            });
            model.retain(|&w, tg| {
                let ok = mix64(w as u64) % 4 < keep;
                if ok {
                    *tg += 1;
                }
                ok
            });
            check(&t, &model, &at);
            assert_eq!(live(), model.len(), "{at}: live");
            drop(t);
        }
        s.clean(&at);
    }

    let at = format!("replacing values over {name}");
    let s = start();
    {
        let (mut t, mut model) = build::<C>(ws, 1);
        for (k, v) in t.iter_mut() {
            *v = make(wide(k) as u32);
        }
        for v in t.values_mut().rev() {
            let tg = v.tag();
            *v = make(tg ^ 3);
        }
        let mid = model.keys().nth(model.len() / 2).copied().unwrap_or(0);
        for (_, v) in t.range_mut(key::<C::Key>(mid)..).rev() {
            *v = make(v.tag() ^ 8);
        }
        for (&w, tg) in model.iter_mut() {
            *tg = w as u32 ^ 3 ^ if w >= mid { 8 } else { 0 };
        }
        check(&t, &model, &at);
        assert_eq!(live(), model.len(), "{at}: replaced values not dropped");
        // Extend over present and new keys: each replaced value dropped once.
        let extra: Vec<u128> = model.keys().copied().step_by(3).chain([1, 2, 3]).collect();
        t.extend(extra.iter().map(|&w| (key(w), make(9))));
        for &w in &extra {
            model.insert(w & max_of::<C::Key>(), 9);
        }
        check(&t, &model, &format!("{at}: extend"));
        assert_eq!(live(), model.len(), "{at}: extend's replaced values");
        let rebuilt: RawTree<C> = t.into_iter().rev().collect();
        check(&rebuilt, &model, &format!("{at}: collected from into_iter"));
        assert_eq!(live(), model.len(), "{at}: collect");
        drop(rebuilt);
    }
    s.clean(&at);
}

fn all<C: Tested>() {
    // A first caught panic, so that whatever the panic machinery sets up
    // once per thread is not counted as a leak.
    install_quiet_hook();
    let _ = catch_unwind(|| panic!("intentional warm-up panic"));
    for (name, ws) in key_sets(max_of::<C::Key>()) {
        retain_panics::<C>(name, &ws);
        owned_iter_partial::<C>(name, &ws);
        if !ws.is_empty() {
            drop_panics::<C>(name, &ws);
        }
        split_and_append::<C>(name, &ws);
        set_operations::<C>(name, &ws);
        clones::<C>(name, &ws);
        entries::<C>(name, &ws);
        removals::<C>(name, &ws);
    }
    let _ = start();
}

macro_rules! drop_tests {
    ($($name:ident: $key:ty, $layout:ty, $compression:ident $(, $insert_only:ident)?;)*) => {$(
        #[test]
        fn $name() {
            tree_config!(
                Cfg,
                $key,
                $layout,
                radix_core::SizeClasses::DEFAULT,
                radix_core::Compression::$compression
            );
            impl Removable for Cfg {}
            $(
                let _ = stringify!($insert_only);
                INSERT_ONLY.with(|i| i.set(true));
            )?
            all::<Cfg>();
        }
    )*};
}

drop_tests! {
    embedded_u32: u32, Embedded<D<0>>, None;
    embedded_u64_full: u64, Embedded<D<0>>, Full;
    leaf_u16: u16, Leaf<D<0>>, None;
    leaf_u32_full: u32, Leaf<D<2>>, Full;
    leaf_u128_lazy: u128, Leaf<D<0>>, Lazy;
    inline_u64: u64, Inline<D<2>>, None;
    inline_u8_full: u8, Inline<D<2>>, Full;
    inline_u128_path: u128, Inline<D<1>>, Path;
    leaf_u64_insert_only: u64, Leaf<D<0>>, None, insert_only;
    inline_u32_full_insert_only: u32, Inline<D<2>>, Full, insert_only;
}

// `D<0>` fits the slot word, so the embedded layout really embeds it.
const _: () = assert!(Embedded::<D<0>>::EMBEDS && !Leaf::<D<0>>::EMBEDS);

/// A `clear` interrupted by a value's panicking `Drop` must still leave an
/// empty tree holding no nodes. (It once kept them: `clear` detached the
/// root, dropped the values, and only then released the slab blocks, which
/// the panic skipped, so `verify` reported "empty tree with live nodes".
/// A guard now releases them while unwinding.)
#[test]
fn clear_with_a_panicking_drop_releases_the_nodes() {
    tree_config!(Cfg, u32, Leaf<D<0>>);
    install_quiet_hook();
    let mut t = RawTree::<Cfg>::new();
    for w in 0..100u32 {
        ins(&mut t, w, D::new(w));
    }
    ledger(|l| l.panic_drop_tag = Some(50));
    assert!(catch_unwind(AssertUnwindSafe(|| t.clear())).is_err());
    assert!(t.is_empty());
    assert_eq!(t.verify(), Ok(()));
    assert_eq!(t.memory_usage(), 0);
}

/// The counts std's `BTreeMap` gives when one value's `Drop` panics: every
/// value is dropped, the panicking one and those after it included, and
/// the panic then resumes (before `DropsAll`, this crate dropped 4 of 5,
/// 1 of 12, 1 of 100 and 2 of 3 here).
#[test]
fn a_panicking_drop_stops_no_other_drop_as_in_std() {
    thread_local!(static DROPS: Cell<usize> = const { Cell::new(0) });
    /// Counts its drop, and panics in it if told to.
    struct Fuse(bool);
    impl Drop for Fuse {
        fn drop(&mut self) {
            DROPS.with(|d| d.set(d.get() + 1));
            if self.0 {
                panic!("intentional drop panic");
            }
        }
    }
    install_quiet_hook();
    let map = |n: u64, victim: u64| -> radix_core::RadixMap<u64, Fuse> {
        (0..n).map(|k| (k, Fuse(k == victim))).collect()
    };
    let drops = |f: &mut dyn FnMut()| {
        DROPS.with(|d| d.set(0));
        assert!(catch_unwind(AssertUnwindSafe(f)).is_err(), "no panic");
        DROPS.with(Cell::get)
    };
    assert_eq!(drops(&mut || map(5, 3).into_iter().for_each(drop)), 5);
    assert_eq!(drops(&mut || map(12, 0).into_iter().for_each(drop)), 12);
    assert_eq!(drops(&mut || drop(map(5, 3).into_iter())), 5);
    assert_eq!(drops(&mut || drop(map(100, 0))), 100);
    let mut three = map(3, 1);
    assert_eq!(drops(&mut || three.clear()), 3);
    assert!(three.is_empty());
}
