//! Model tests: random operation sequences against `std::collections::BTreeMap`.
//!
//! Each quickcheck case is a sequence of operations (insert, update, remove,
//! get, range, iterate, clear, runs of consecutive inserts or removes)
//! applied both to a tree and to a `BTreeMap<u128, tag>` model; every
//! operation's result is compared, and every 50 operations (and at the end)
//! the tree is verified and its whole iteration compared with the model.
//!
//! Keys are drawn as `u128` and truncated to the tree's width, from a mix of
//! four sources: near 0, near the width's maximum (`u128::MAX - small`
//! truncates to `MAX - small` at every width), clustered (a few random bases
//! per sequence plus small offsets, so nodes fill up and few distinct
//! chunks appear above them), and uniform. Runs of up to 300 consecutive
//! keys push single nodes through every size class and back.
//!
//! Failing sequences shrink by dropping operations, so a failure reports a
//! short reproduction.

use std::collections::BTreeMap;

use crate::common::*;
use quickcheck::{Arbitrary, Gen, QuickCheck};
use radix_core::mem::LocalMemory;
use radix_core::value::{Auto, Embedded, Inline, Leaf, VarBytes, Varlen};
use radix_core::{Config, RawTree, SizeClasses};

/// The operations these tests draw.
type Op = MapOp;

/// A generated operation sequence.
#[derive(Clone, Debug)]
struct Ops(Vec<Op>);

impl Arbitrary for Ops {
    fn arbitrary(g: &mut Gen) -> Self {
        Ops(draw_ops(g, MapOp::draw))
    }

    /// Drops blocks of operations, halving the block size down to one.
    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        Box::new(crate::common::without_blocks(&self.0).into_iter().map(Ops))
    }
}

#[track_caller]
fn verified<C: Config<Layout: TestLayout, Memory = LocalMemory>>(
    t: &RawTree<C>,
    model: &BTreeMap<u128, u64>,
    at: &str,
) {
    if let Err(e) = t.verify() {
        panic!("verify failed {at}: {e}");
    }
    assert_same(t, model);
    if model.is_empty() {
        assert_eq!(t.memory_usage(), 0, "empty tree holds memory {at}");
    }
}

/// Runs `ops` on a tree and on the model, panicking on any difference.
/// With `INSERT_ONLY`, the tree's leaves come from bump arenas.
fn run<C, const INSERT_ONLY: bool>(ops: Ops) -> bool
where
    C: Config<Layout: TestLayout, Memory = LocalMemory>,
{
    let max = max_of::<C::Key>();
    let k = |w: u128| key::<C::Key>(w & max);
    let mut t = if INSERT_ONLY {
        RawTree::<C>::with_memory(LocalMemory::insert_only(
            &RawTree::<C>::pool_specs(),
            16 << 10,
        ))
    } else {
        RawTree::<C>::new()
    };
    let mut model: BTreeMap<u128, u64> = BTreeMap::new();
    let nth = |model: &BTreeMap<u128, u64>, n: usize| {
        let len = model.len();
        (len > 0).then(|| *model.keys().nth(n % len).unwrap())
    };
    for (i, op) in ops.0.iter().enumerate() {
        let at = format!("at op {i} ({op:?})");
        match *op {
            Op::Insert(w, g) => {
                let w = w & max;
                let tg = tag(w, g);
                assert_old(put(&mut t, k(w), tg), model.insert(w, tg), &at);
            }
            Op::Update(n, g) => {
                if let Some(w) = nth(&model, n) {
                    let tg = tag(w, g);
                    assert_old(put(&mut t, k(w), tg), model.insert(w, tg), &at);
                }
            }
            Op::Remove(w) => {
                let w = w & max;
                assert_old(del(&mut t, k(w)), model.remove(&w), &at);
            }
            Op::RemoveExisting(n) => {
                if let Some(w) = nth(&model, n) {
                    assert_old(del(&mut t, k(w)), model.remove(&w), &at);
                    assert!(!t.contains_key(k(w)), "{at}: still present");
                }
            }
            Op::Get(w) => {
                let w = w & max;
                match model.get(&w) {
                    Some(&tg) => assert!(holds(&t, k(w), tg), "{at}: wrong value"),
                    None => assert!(t.get(k(w)).is_none(), "{at}: absent key found"),
                }
                assert_eq!(t.contains_key(k(w)), model.contains_key(&w), "{at}");
            }
            Op::GetExisting(n) => {
                if let Some(w) = nth(&model, n) {
                    assert!(holds(&t, k(w), model[&w]), "{at}: wrong value");
                }
            }
            Op::Range(lo, hi, pattern) => {
                let (lo, hi) = (lo.map(|w| w & max), hi.map(|w| w & max));
                let want: Vec<(u128, u64)> = model
                    .iter()
                    .filter(|&(&w, _)| in_bounds(w, lo, hi))
                    .map(|(&w, &tg)| (w, tg))
                    .collect();
                assert_walk::<C, _>(t.range((lo.map(k), hi.map(k))), &want, pattern, &at);
            }
            Op::Iterate => assert_same(&t, &model),
            Op::Clear => {
                t.clear();
                model.clear();
                assert!(t.is_empty());
                assert_eq!(t.memory_usage(), 0, "{at}: memory after clear");
            }
            Op::InsertRun(run, generation) => {
                for w in run.keys(max) {
                    let tg = tag(w, generation);
                    assert_old(put(&mut t, k(w), tg), model.insert(w, tg), &at);
                }
            }
            Op::RemoveRun(run) => {
                for w in run.keys(max) {
                    assert_old(del(&mut t, k(w)), model.remove(&w), &at);
                }
            }
        }
        assert_eq!(t.len(), model.len(), "{at}: len");
        if i % 50 == 49 {
            verified(&t, &model, &at);
        }
    }
    verified(&t, &model, "at the end");
    // Empty the tree by removing every key, which must give back all memory.
    // Alternate ends so both the first and the last nodes shrink.
    let mut i = 0;
    while let Some(&w) = if i % 2 == 0 {
        model.keys().next()
    } else {
        model.keys().next_back()
    } {
        assert_old(del(&mut t, k(w)), model.remove(&w), "final delete");
        i += 1;
    }
    verified(&t, &model, "after deleting everything");
    true
}

fn check<C, const INSERT_ONLY: bool>()
where
    C: Config<Layout: TestLayout, Memory = LocalMemory>,
{
    QuickCheck::new()
        .rng(Gen::new(test_depth::pick(100, 100, 8)))
        .tests(test_depth::cases(300, 15, 2))
        .quickcheck(run::<C, INSERT_ONLY> as fn(Ops) -> bool);
}

const DEFAULT: SizeClasses = SizeClasses::DEFAULT;
const CUSTOM: SizeClasses = SizeClasses::new(CUSTOM_CAPS);
const TWO: SizeClasses = SizeClasses::new(TWO_CAPS);

macro_rules! model_tests {
    ($($name:ident: $key:ty, $layout:ty, $classes:expr, insert_only = $insert_only:expr
        $(, compression = $compression:ident)?;)*) => {$(
        #[test]
        fn $name() {
            tree_config!(Cfg, $key, $layout, $classes
                $(, radix_core::Compression::$compression)?);
            check::<Cfg, $insert_only>();
        }
    )*};
}

model_tests! {
    u8_auto: u8, Auto<u64>, DEFAULT, insert_only = false;
    u8_varlen: u8, Varlen<VarBytes>, DEFAULT, insert_only = false;
    u16_auto: u16, Auto<u64>, DEFAULT, insert_only = false;
    u16_embedded: u16, Embedded<u64>, DEFAULT, insert_only = false;
    u16_leaf: u16, Leaf<u64>, DEFAULT, insert_only = false;
    u16_inline: u16, Inline<[u64; 3]>, DEFAULT, insert_only = false;
    u16_varlen: u16, Varlen<VarBytes>, DEFAULT, insert_only = false;
    u32_auto: u32, Auto<u64>, DEFAULT, insert_only = false;
    u32_embedded: u32, Embedded<u64>, DEFAULT, insert_only = false;
    u32_leaf: u32, Leaf<u64>, DEFAULT, insert_only = false;
    u32_inline: u32, Inline<[u64; 3]>, DEFAULT, insert_only = false;
    u32_varlen: u32, Varlen<VarBytes>, DEFAULT, insert_only = false;
    u64_auto: u64, Auto<u64>, DEFAULT, insert_only = false;
    u64_embedded: u64, Embedded<u64>, DEFAULT, insert_only = false;
    u64_leaf: u64, Leaf<u64>, DEFAULT, insert_only = false;
    u64_inline: u64, Inline<[u64; 3]>, DEFAULT, insert_only = false;
    u64_varlen: u64, Varlen<VarBytes>, DEFAULT, insert_only = false;
    u128_auto: u128, Auto<u64>, DEFAULT, insert_only = false;
    u128_embedded: u128, Embedded<u64>, DEFAULT, insert_only = false;
    u128_leaf: u128, Leaf<u64>, DEFAULT, insert_only = false;
    u128_inline: u128, Inline<[u64; 3]>, DEFAULT, insert_only = false;
    u128_varlen: u128, Varlen<VarBytes>, DEFAULT, insert_only = false;
    u32_auto_custom_classes: u32, Auto<u64>, CUSTOM, insert_only = false;
    u64_varlen_custom_classes: u64, Varlen<VarBytes>, CUSTOM, insert_only = false;
    u16_inline_two_classes: u16, Inline<[u64; 3]>, TWO, insert_only = false;
    u64_leaf_two_classes: u64, Leaf<u64>, TWO, insert_only = false;
    u32_leaf_insert_only: u32, Leaf<u64>, DEFAULT, insert_only = true;
    u64_varlen_insert_only: u64, Varlen<VarBytes>, DEFAULT, insert_only = true;
    u128_auto_insert_only: u128, Auto<[u64; 3]>, DEFAULT, insert_only = true;
    // Zero-sized and sub-word values: the slot arrays of leaf nodes are
    // empty or narrower than a pointer.
    u64_unit_auto: u64, Auto<()>, DEFAULT, insert_only = false;
    u32_unit_leaf: u32, Leaf<()>, DEFAULT, insert_only = false;
    u16_unit_inline: u16, Inline<()>, DEFAULT, insert_only = false;
    u32_u8_inline: u32, Inline<u8>, DEFAULT, insert_only = false;
    u64_u16_inline: u64, Inline<u16>, CUSTOM, insert_only = false;
    // Lazy expansion and path compression, alone and together, at every
    // key width, with values in words, leaves, inline nodes and varlen
    // slots, and with class lists that start below two children.
    u8_auto_full: u8, Auto<u64>, DEFAULT, insert_only = false, compression = Full;
    u16_auto_lazy: u16, Auto<u64>, DEFAULT, insert_only = false, compression = Lazy;
    u16_inline_path: u16, Inline<[u64; 3]>, TWO, insert_only = false, compression = Path;
    u32_leaf_full: u32, Leaf<u64>, CUSTOM, insert_only = false, compression = Full;
    u32_varlen_path: u32, Varlen<VarBytes>, DEFAULT, insert_only = false, compression = Path;
    u64_auto_full: u64, Auto<u64>, DEFAULT, insert_only = false, compression = Full;
    u64_auto_lazy: u64, Auto<u64>, DEFAULT, insert_only = false, compression = Lazy;
    u64_auto_path: u64, Auto<u64>, DEFAULT, insert_only = false, compression = Path;
    u64_varlen_full: u64, Varlen<VarBytes>, CUSTOM, insert_only = false, compression = Full;
    u64_inline_lazy: u64, Inline<[u64; 3]>, TWO, insert_only = false, compression = Lazy;
    u128_auto_full: u128, Auto<u64>, DEFAULT, insert_only = false, compression = Full;
    u128_leaf_path: u128, Leaf<u64>, CUSTOM, insert_only = false, compression = Path;
    u128_inline_lazy: u128, Inline<[u64; 3]>, DEFAULT, insert_only = false, compression = Lazy;
    u128_varlen_full: u128, Varlen<VarBytes>, TWO, insert_only = false, compression = Full;
    u64_unit_full: u64, Auto<()>, DEFAULT, insert_only = false, compression = Full;
    u32_u8_inline_full: u32, Inline<u8>, DEFAULT, insert_only = false, compression = Full;
    u64_auto_full_insert_only: u64, Auto<u64>, DEFAULT, insert_only = true, compression = Full;
}

/// A tree is `Send` and `Sync` when its values are: readers on several
/// threads see the same entries, and the tree can move to another thread.
#[test]
fn readers_on_threads_see_the_same_tree() {
    tree_config!(Cfg, u64, Varlen<VarBytes>);
    let mut t = RawTree::<Cfg>::new();
    let mut model = BTreeMap::new();
    let mut rng = SplitMix64::new(0x7EAD);
    for i in 0..test_depth::pick(5000, 1000, 50) {
        let w = rng.next_u64() as u128 & 0x07FF_00FF;
        let tg = tag(w, i as u64);
        put(&mut t, w as u64, tg);
        model.insert(w, tg);
    }
    std::thread::scope(|s| {
        for reader in 0..2u64 {
            let (t, model) = (&t, &model);
            s.spawn(move || {
                for (&w, &tg) in model.iter().skip(reader as usize) {
                    assert!(holds(t, w as u64, tg));
                }
                assert_same(t, model);
            });
        }
    });
    let len = std::thread::spawn(move || {
        t.verify().unwrap();
        t.len()
    })
    .join()
    .unwrap();
    assert_eq!(len, model.len());
}
