//! Unit tests of lazy expansion and path compression: every split and
//! merge, sized to run under Miri.
//!
//! Configurations are declared by hand, for every [`Compression`] mode and
//! every key width from `u16` to `u128` (`u8` too where it is cheap), over
//! one-word values, leaves (`String`, and values that count their drops),
//! inline values and varlen values, with the default classes and with
//! class lists starting at capacity 1 and 3. Every step is checked with
//! `verify()` and against a `BTreeMap` model; where the shape a step must
//! leave is certain (a split, a merge, a collapse into a lazy leaf, the
//! canonical form after removals) `stats()` is compared with it.
//!
//! Keys are written as `u128` and truncated to the width under test; the
//! byte at position `p` is the chunk at shift `8 * p`.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::ops::Bound;

use crate::mem::LocalMemory;
use crate::raw::test_keys::test_config;
use crate::raw::test_keys::{SplitMix64, key, wide};
use crate::value::{Auto, Inline, Leaf, ValueLayout, VarBytes, Varlen, Word};
use crate::{Compression, Config, Key, RawTree, SizeClasses};
use test_depth::pick;

/// Classes starting with a node4 of one child: the node where two keys
/// part is then of class 1, and a node16 left with one entry shrinks back
/// to class 0.
const ONE: SizeClasses = SizeClasses::new(&[1, 8, 32, 40, 256]);
/// Classes starting with a node4 of three children.
const THREE: SizeClasses = SizeClasses::new(&[3, 8, 32, 40, 256]);

// Every mode at every width, one-word values, default classes.
test_config!(NoneU16, u16, Auto<u64>, SizeClasses::DEFAULT, None);
test_config!(NoneU32, u32, Auto<u64>, SizeClasses::DEFAULT, None);
test_config!(NoneU64, u64, Auto<u64>, SizeClasses::DEFAULT, None);
test_config!(NoneU128, u128, Auto<u64>, SizeClasses::DEFAULT, None);
test_config!(LazyU16, u16, Auto<u64>, SizeClasses::DEFAULT, Lazy);
test_config!(LazyU32, u32, Auto<u64>, SizeClasses::DEFAULT, Lazy);
test_config!(LazyU64, u64, Auto<u64>, SizeClasses::DEFAULT, Lazy);
test_config!(LazyU128, u128, Auto<u64>, SizeClasses::DEFAULT, Lazy);
test_config!(PathU16, u16, Auto<u64>, SizeClasses::DEFAULT, Path);
test_config!(PathU32, u32, Auto<u64>, SizeClasses::DEFAULT, Path);
test_config!(PathU64, u64, Auto<u64>, SizeClasses::DEFAULT, Path);
test_config!(PathU128, u128, Auto<u64>, SizeClasses::DEFAULT, Path);
test_config!(FullU16, u16, Auto<u64>, SizeClasses::DEFAULT, Full);
test_config!(FullU32, u32, Auto<u64>, SizeClasses::DEFAULT, Full);
test_config!(FullU64, u64, Auto<u64>, SizeClasses::DEFAULT, Full);
test_config!(FullU128, u128, Auto<u64>, SizeClasses::DEFAULT, Full);
// One-byte keys: a single level, the root at the top shift in every mode.
test_config!(LazyU8, u8, Auto<u64>, SizeClasses::DEFAULT, Lazy);
test_config!(PathU8, u8, Auto<u64>, SizeClasses::DEFAULT, Path);
test_config!(FullU8, u8, Auto<u64>, SizeClasses::DEFAULT, Full);

// Other layouts and class lists.
test_config!(FullU16String, u16, Leaf<String>, SizeClasses::DEFAULT, Full);
test_config!(FullU64One, u64, Auto<u64>, ONE, Full);
test_config!(FullU128Varlen, u128, Varlen<VarBytes>, THREE, Full);
test_config!(PathU128Inline, u128, Inline<[u32; 5]>, THREE, Path);
test_config!(PathU32One, u32, Leaf<u64>, ONE, Path);
test_config!(PathU64String, u64, Leaf<String>, SizeClasses::DEFAULT, Path);
test_config!(LazyU32Varlen, u32, Varlen<VarBytes>, THREE, Lazy);
test_config!(LazyU64One, u64, Leaf<u64>, ONE, Lazy);
test_config!(
    LazyU128Inline,
    u128,
    Inline<[u32; 5]>,
    SizeClasses::DEFAULT,
    Lazy
);
test_config!(NoneU64One, u64, Leaf<String>, ONE, None);

// Values that count themselves, to see each dropped exactly once.
test_config!(
    FullU16Counted,
    u16,
    Leaf<Counted>,
    SizeClasses::DEFAULT,
    Full
);
test_config!(FullU128Counted, u128, Auto<Counted>, ONE, Full);
test_config!(
    LazyU64Counted,
    u64,
    Auto<Counted>,
    SizeClasses::DEFAULT,
    Lazy
);
test_config!(PathU32Fat, u32, Inline<Fat>, THREE, Path);
test_config!(PathU64Counted, u64, Leaf<Counted>, ONE, Path);
test_config!(
    NoneU32Counted,
    u32,
    Auto<Counted>,
    SizeClasses::DEFAULT,
    None
);

// ------------------------------------------------------------ keys

/// The largest key of `C`, as a `u128`.
fn max_of<C: Config>() -> u128 {
    wide(C::Key::MAX)
}

/// Bytes in a key of `C`.
fn width<C: Config>() -> u32 {
    C::Key::BITS / 8
}

/// A key with every byte odd and non-zero (byte 0 of a `u128` is `0x5B`,
/// byte 1 `0x81`, ...): the top byte is set, so trees without path
/// compression are at full height, and flipping bit 0 of a byte makes a
/// smaller key, flipping bit 7 of most bytes a larger one.
fn base<C: Config>() -> u128 {
    let mut x = 0u128;
    for p in 0..16u32 {
        let byte = (0x5Bu32 + 0x25 * p) as u8 | 1;
        x |= u128::from(byte) << (8 * p);
    }
    x & max_of::<C>()
}

/// `bit` (0 to 7) of byte `p`.
fn bit(p: u32, bit: u32) -> u128 {
    1u128 << (8 * p + bit)
}

/// Byte positions `lo..hi`: all of them normally, under Miri only the
/// first and the last (next to a node, and the far end of the longest
/// prefix).
fn positions(lo: u32, hi: u32) -> Vec<u32> {
    if hi <= lo {
        return Vec::new();
    }
    if !cfg!(miri) {
        return (lo..hi).collect();
    }
    let mut out = vec![lo, hi - 1];
    out.dedup();
    out
}

// ------------------------------------------------------------ values

thread_local! {
    /// Counted values alive on this thread (each test runs on one thread;
    /// tests compare it with its value when they started).
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn live() -> isize {
    LIVE.with(Cell::get)
}

/// A value that counts how many of it are alive, so a test sees every
/// value dropped exactly once: a double drop makes the count fall below
/// the tree's length, a leak leaves it above.
#[derive(Debug, PartialEq, Eq)]
struct Counted(u64);

impl Counted {
    fn new(tag: u64) -> Self {
        LIVE.with(|l| l.set(l.get() + 1));
        Counted(tag)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        LIVE.with(|l| l.set(l.get() - 1));
    }
}

/// A three-word counted value, for the inline layout.
#[derive(Debug, PartialEq, Eq)]
struct Fat {
    pad: [u64; 2],
    counted: Counted,
}

/// Values made from a 64-bit tag and telling it back.
trait Tagged: Sized {
    /// Whether values of the type count themselves in [`LIVE`].
    const COUNTED: bool = false;
    fn from_tag(tag: u64) -> Self;
    fn tag(&self) -> u64;
}

impl Tagged for u64 {
    fn from_tag(tag: u64) -> Self {
        tag
    }
    fn tag(&self) -> u64 {
        *self
    }
}

impl Tagged for String {
    fn from_tag(tag: u64) -> Self {
        format!("v{tag:x}")
    }
    fn tag(&self) -> u64 {
        u64::from_str_radix(&self[1..], 16).expect("a tagged string")
    }
}

impl Tagged for [u32; 5] {
    fn from_tag(tag: u64) -> Self {
        [tag as u32, (tag >> 32) as u32, !tag as u32, 7, 9]
    }
    fn tag(&self) -> u64 {
        let tag = u64::from(self[0]) | u64::from(self[1]) << 32;
        assert_eq!(*self, Self::from_tag(tag), "torn inline value");
        tag
    }
}

impl Tagged for Counted {
    const COUNTED: bool = true;
    fn from_tag(tag: u64) -> Self {
        Counted::new(tag)
    }
    fn tag(&self) -> u64 {
        self.0
    }
}

impl Tagged for Fat {
    const COUNTED: bool = true;
    fn from_tag(tag: u64) -> Self {
        Fat {
            pad: [!tag, tag.rotate_left(7)],
            counted: Counted::new(tag),
        }
    }
    fn tag(&self) -> u64 {
        let tag = self.counted.0;
        assert_eq!(self.pad, [!tag, tag.rotate_left(7)], "torn inline value");
        tag
    }
}

/// What an insert or remove said about the previous value: `None` for
/// none, `Some(None)` for one whose value the layout does not return
/// (varlen), `Some(Some(tag))` for the value of `tag`.
type Old = Option<Option<u64>>;

/// One interface over the layouts under test.
trait TestLayout: ValueLayout {
    /// Whether the values count themselves in [`LIVE`].
    const COUNTED: bool = false;
    /// Stores the value of `tag` under `k`.
    fn put<C: Config<Layout = Self, Memory = LocalMemory>>(
        t: &mut RawTree<C>,
        k: C::Key,
        tag: u64,
    ) -> Old;
    /// Stores the value of `tag` under `k` with `insert_with_old`, and
    /// asserts that the value it shows is the value of `old`.
    fn put_seen<C: Config<Layout = Self, Memory = LocalMemory>>(
        t: &mut RawTree<C>,
        k: C::Key,
        tag: u64,
        old: Option<u64>,
    ) -> Old;
    /// Removes `k`.
    fn del<C: Config<Layout = Self, Memory = LocalMemory>>(t: &mut RawTree<C>, k: C::Key) -> Old;
    /// Whether `value` is the value of `tag`.
    fn check(value: &Self::Value, tag: u64) -> bool;
}

/// Asserts what `insert_with_old` showed: the old value exactly when
/// there was one.
#[track_caller]
fn assert_seen(seen: Option<bool>, old: Option<u64>) {
    match (seen, old) {
        (None, None) => {}
        (Some(true), Some(_)) => {}
        _ => panic!("insert_with_old showed {seen:?}, the old value's tag is {old:?}"),
    }
}

/// The two layouts of typed values, which store and show the value itself.
macro_rules! typed_test_layout {
    ($([$($generics:tt)*] $layout:ty),* $(,)?) => {$(
        impl<$($generics)*> TestLayout for $layout {
            const COUNTED: bool = V::COUNTED;
            fn put<C: Config<Layout = Self, Memory = LocalMemory>>(
                t: &mut RawTree<C>,
                k: C::Key,
                tag: u64,
            ) -> Old {
                t.insert(k, V::from_tag(tag)).map(|v| Some(v.tag()))
            }
            fn put_seen<C: Config<Layout = Self, Memory = LocalMemory>>(
                t: &mut RawTree<C>,
                k: C::Key,
                tag: u64,
                old: Option<u64>,
            ) -> Old {
                let mut seen = None;
                let got =
                    t.insert_with_old(k, V::from_tag(tag), |v| seen = Some(Some(v.tag()) == old));
                assert_seen(seen, old);
                got.map(|v| Some(v.tag()))
            }
            fn del<C: Config<Layout = Self, Memory = LocalMemory>>(
                t: &mut RawTree<C>,
                k: C::Key,
            ) -> Old {
                t.remove(k).map(|v| Some(v.tag()))
            }
            fn check(value: &V, tag: u64) -> bool {
                value.tag() == tag
            }
        }
    )*};
}

typed_test_layout!([V: Tagged, const EMBED: bool] Word<V, EMBED>, [V: Tagged] Inline<V>);

/// The varlen value of `tag`: 0 to 23 bytes, so about a third are
/// embedded in the slot (up to 7 bytes) and the rest are leaves.
fn var_bytes(tag: u64) -> Box<VarBytes> {
    let len = (tag % 24) as usize;
    let bytes: Vec<u8> = (0..len)
        .map(|i| (tag >> (8 * (i % 8))) as u8 ^ i as u8)
        .collect();
    VarBytes::new(&bytes).expect("at most 23 bytes")
}

impl TestLayout for Varlen<VarBytes> {
    fn put<C: Config<Layout = Self, Memory = LocalMemory>>(
        t: &mut RawTree<C>,
        k: C::Key,
        tag: u64,
    ) -> Old {
        t.insert(k, &var_bytes(tag)).then_some(None)
    }
    fn put_seen<C: Config<Layout = Self, Memory = LocalMemory>>(
        t: &mut RawTree<C>,
        k: C::Key,
        tag: u64,
        old: Option<u64>,
    ) -> Old {
        let mut seen = None;
        let got = t.insert_with_old(k, &var_bytes(tag), |v| {
            seen = Some(old.is_some_and(|old| Self::check(v, old)));
        });
        assert_seen(seen, old);
        got.then_some(None)
    }
    fn del<C: Config<Layout = Self, Memory = LocalMemory>>(t: &mut RawTree<C>, k: C::Key) -> Old {
        t.remove(k).then_some(None)
    }
    fn check(value: &VarBytes, tag: u64) -> bool {
        value.as_bytes() == var_bytes(tag).as_bytes()
    }
}

/// Asserts that an insert or remove reported `want` as the old value.
#[track_caller]
fn assert_old(got: Old, want: Option<u64>, what: &str) {
    let ok = match (got, want) {
        (None, None) | (Some(None), Some(_)) => true,
        (Some(Some(got)), Some(want)) => got == want,
        _ => false,
    };
    assert!(ok, "{what}: reported old value {got:?}, expected {want:?}");
}

// ------------------------------------------------------------ the model

/// A tree of `C` and its model, checked after every step (under Miri,
/// verified after every fourth: `verify` is linear in the tree, and the
/// normal run verifies every step).
struct Model<C: Config<Memory = LocalMemory, Layout: TestLayout>> {
    t: RawTree<C>,
    m: BTreeMap<u128, u64>,
    changes: usize,
}

impl<C: Config<Memory = LocalMemory, Layout: TestLayout>> Model<C> {
    fn new() -> Self {
        Model {
            t: RawTree::new(),
            m: BTreeMap::new(),
            changes: 0,
        }
    }

    /// Inserts `x` (truncated to the key width) with the value of `tag`;
    /// `seen` goes through `insert_with_old`, which must show the old
    /// value. Then verifies, and checks the key.
    #[track_caller]
    fn put(&mut self, x: u128, tag: u64, seen: bool) {
        let x = x & max_of::<C>();
        let want = self.m.insert(x, tag);
        let got = if seen {
            C::Layout::put_seen(&mut self.t, key(x), tag, want)
        } else {
            C::Layout::put(&mut self.t, key(x), tag)
        };
        assert_old(got, want, &format!("insert {x:#x}"));
        self.changes += 1;
        self.verify(&format!("after inserting {x:#x}"));
        self.lookup(x);
    }

    #[track_caller]
    fn ins(&mut self, x: u128, tag: u64) {
        self.put(x, tag, false);
    }

    /// Removes `x`, verifies, and checks it is gone.
    #[track_caller]
    fn rem(&mut self, x: u128) {
        let x = x & max_of::<C>();
        let got = C::Layout::del(&mut self.t, key(x));
        assert_old(got, self.m.remove(&x), &format!("remove {x:#x}"));
        self.changes += 1;
        self.verify(&format!("after removing {x:#x}"));
        self.lookup(x);
    }

    #[track_caller]
    fn verify(&self, what: &str) {
        let sampled_out = cfg!(miri) && !self.changes.is_multiple_of(4);
        if !sampled_out && let Err(e) = self.t.verify() {
            panic!("{what}: verify: {e}");
        }
        assert_eq!(self.t.len(), self.m.len(), "{what}: len");
    }

    /// `get` and `contains_key` agree with the model on `x`.
    #[track_caller]
    fn lookup(&self, x: u128) {
        let x = x & max_of::<C>();
        let k = key::<C::Key>(x);
        match self.m.get(&x) {
            Some(&tag) => {
                let v = self.t.get(k);
                assert!(
                    v.is_some_and(|v| C::Layout::check(v, tag)),
                    "{x:#x}: wrong or no value"
                );
                assert!(self.t.contains_key(k), "{x:#x}: contains_key");
            }
            None => {
                assert!(self.t.get(k).is_none(), "{x:#x}: absent key found");
                assert!(!self.t.contains_key(k), "{x:#x}: absent key contained");
            }
        }
    }

    /// The whole contents, both ways, and the first and last entries.
    #[track_caller]
    fn contents(&self, what: &str) {
        let mut it = self.t.iter();
        assert_eq!(it.len(), self.m.len(), "{what}: iter().len()");
        for (&x, &tag) in &self.m {
            let (k, v) = it.next().expect("iteration ends early");
            assert_eq!(wide(k), x, "{what}: iteration");
            assert!(C::Layout::check(v, tag), "{what}: value at {x:#x}");
        }
        assert!(it.next().is_none(), "{what}: iteration goes on");
        assert!(
            self.t
                .keys()
                .rev()
                .map(wide)
                .eq(self.m.keys().rev().copied()),
            "{what}: backwards"
        );
        assert_eq!(
            self.t.first_key_value().map(|(k, _)| wide(k)),
            self.m.keys().next().copied(),
            "{what}: first_key_value"
        );
        assert_eq!(
            self.t.last_key_value().map(|(k, _)| wide(k)),
            self.m.keys().next_back().copied(),
            "{what}: last_key_value"
        );
    }
}

/// A tree of `C` built from `entries`, in their order.
fn built<'a, C>(entries: impl IntoIterator<Item = (&'a u128, &'a u64)>) -> RawTree<C>
where
    C: Config<Memory = LocalMemory, Layout: TestLayout>,
{
    let mut t = RawTree::new();
    for (&x, &tag) in entries {
        C::Layout::put(&mut t, key(x), tag);
    }
    t.verify().expect("a freshly built tree verifies");
    t
}

/// Asserts that `t` is empty and holds no memory: the empty size of a
/// local tree is 0.
#[track_caller]
fn assert_empty<C: Config<Memory = LocalMemory>>(t: &RawTree<C>) {
    t.verify().expect("an empty tree verifies");
    assert!(t.is_empty());
    assert_eq!(t.height(), 0);
    assert_eq!(t.memory_usage(), 0, "an empty tree holds memory");
    let s = t.stats();
    assert_eq!((s.nodes(), s.lazy_leaves, s.leaves), (0, 0, 0));
    assert!(t.iter().next().is_none());
    assert!(t.first_key_value().is_none());
}

// ------------------------------------------------------------ shapes

/// A tree's shape: what `stats()` says except the bytes held (slab blocks
/// are kept across operations, so two trees of one shape may differ
/// there).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Shape {
    keys: usize,
    height: usize,
    /// `(inner, last-level)` nodes per class.
    classes: Vec<(usize, usize)>,
    leaves: usize,
    lazy_leaves: usize,
}

fn shape<C: Config>(t: &RawTree<C>) -> Shape {
    let s = t.stats();
    Shape {
        keys: s.keys,
        height: s.height,
        classes: s.classes.iter().map(|c| (c.inner, c.last_level)).collect(),
        leaves: s.leaves,
        lazy_leaves: s.lazy_leaves,
    }
}

/// An expected shape: height, lazy leaves, nodes per class.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Want {
    height: usize,
    lazy: usize,
    classes: Vec<(usize, usize)>,
}

impl Want {
    fn new<C: Config>(height: usize, lazy: usize) -> Self {
        Want {
            height,
            lazy,
            classes: vec![(0, 0); C::SIZE_CLASSES.len()],
        }
    }

    /// `n` more nodes of `class`, at the last level or above it.
    fn nodes(mut self, class: usize, last_level: bool, n: usize) -> Self {
        if last_level {
            self.classes[class].1 += n;
        } else {
            self.classes[class].0 += n;
        }
        self
    }

    fn node(self, class: usize, last_level: bool) -> Self {
        self.nodes(class, last_level, 1)
    }

    fn lazy(mut self, lazy: usize) -> Self {
        self.lazy = lazy;
        self
    }
}

#[track_caller]
fn assert_shape<C: Config>(t: &RawTree<C>, want: &Want, what: &str) {
    let s = shape(t);
    let got = Want {
        height: s.height,
        lazy: s.lazy_leaves,
        classes: s.classes,
    };
    assert_eq!(&got, want, "{what}: shape ({})", t.stats());
}

/// The class of the node where two keys part: the smallest holding two.
fn pair_class<C: Config>() -> usize {
    usize::from(C::SIZE_CLASSES.capacity(0) < 2)
}

/// The height of a tree without path compression whose largest key is
/// `x`.
fn natural_height<C: Config>(x: u128) -> usize {
    (key::<C::Key>(x).root_shift() / 8) as usize + 1
}

/// The shape of a tree holding only `x`: a lazy leaf (with path
/// compression at the top height, without it at `x`'s), a last-level node
/// with every higher byte in its prefix (path compression alone), or a
/// chain of single-child nodes (no compression).
fn want_single<C: Config>(x: u128) -> Want {
    let (top, natural) = (width::<C>() as usize, natural_height::<C>(x));
    match C::COMPRESSION {
        Compression::Full => Want::new::<C>(top, 1),
        Compression::Lazy => Want::new::<C>(natural, 1),
        Compression::Path => Want::new::<C>(top, 0).node(0, true),
        Compression::None => Want::new::<C>(natural, 0)
            .nodes(0, false, natural - 1)
            .node(0, true),
    }
}

// ------------------------------------------------------------ key sets

/// Keys whose every byte is one of four letters (`00`, `5A`, `A5`, `FF`),
/// each a base (all `5A`, or all zero for a quarter of them) with one to
/// three bytes rewritten: keys part at every level, no node has more than
/// four children (so its class is the same however it got there), and
/// some keys need fewer levels than others.
fn alphabet_keys<C: Config>(rng: &mut SplitMix64, n: usize) -> Vec<u128> {
    const ALPHA: [u8; 4] = [0x00, 0x5A, 0xA5, 0xFF];
    let w = width::<C>();
    let fives = u128::from_ne_bytes([0x5A; 16]) & max_of::<C>();
    (0..n)
        .map(|_| {
            let mut x = if rng.below(4) == 0 { 0 } else { fives };
            for _ in 0..1 + rng.below(3) {
                let p = rng.below(u64::from(w)) as u32;
                let byte = ALPHA[rng.below(4) as usize];
                x = (x & !(0xFF << (8 * p))) | u128::from(byte) << (8 * p);
            }
            x
        })
        .collect()
}

/// Keys from five sources: small (low levels only), near the largest,
/// a cluster sharing a long prefix (full last-level nodes), one bit off a
/// base (splits at every byte), uniform (lazy leaves under a dense top).
fn mixed_keys<C: Config>(rng: &mut SplitMix64, n: usize) -> Vec<u128> {
    let max = max_of::<C>();
    let w = width::<C>();
    let cluster = rng.next_u128() & max;
    (0..n)
        .map(|_| match rng.below(6) {
            0 => u128::from(rng.below(300)) & max,
            1 => max - (u128::from(rng.below(300)) & max),
            2 => cluster.wrapping_add(u128::from(rng.below(600))) & max,
            3 => base::<C>() ^ bit(rng.below(u64::from(w)) as u32, rng.below(8) as u32),
            _ => rng.next_u128() & max,
        })
        .collect()
}

// ------------------------------------------------------------ prefix splits

/// Two keys that agree on every byte above `p` and differ at `p`, for
/// every `p`: with path compression one node at `p` holds both, its
/// prefix word carrying every higher byte. A third key leaving that
/// prefix at `q > p` puts a node at `q` above it, leaving the node at `p`
/// as it was; removing the third key merges the node at `q` away again.
/// The three keys inserted in other orders make the same tree.
fn prefix_split_at_every_byte<C: Config<Memory = LocalMemory, Layout: TestLayout>>() {
    assert!(C::COMPRESSION.path());
    let (w, top) = (width::<C>(), width::<C>() as usize);
    let pair = pair_class::<C>();
    let lazy = C::COMPRESSION.lazy();
    let a = base::<C>();
    for p in positions(0, w) {
        let b = a ^ bit(p, 0);
        let mut m = Model::<C>::new();
        m.ins(a, 1);
        assert_shape(&m.t, &want_single::<C>(a), "one key");
        m.ins(b, 2);
        // At the last level the node holds both values; above it, both
        // keys' lazy leaves (full) or their last-level nodes (path).
        let two = match (p, lazy) {
            (0, _) => Want::new::<C>(top, 0).node(pair, true),
            (_, true) => Want::new::<C>(top, 2).node(pair, false),
            (_, false) => Want::new::<C>(top, 0).node(pair, false).nodes(0, true, 2),
        };
        assert_shape(&m.t, &two, &format!("keys parting at byte {p}"));
        let two_shape = shape(&m.t);
        // Keys leaving the path inside the node's prefix, at its chunk or
        // below it (inside a lazy leaf's key) miss.
        for r in 0..w {
            m.lookup(a ^ bit(r, 3));
            m.lookup(b ^ bit(r, 6));
        }
        for q in positions(p + 1, w) {
            let c = a ^ bit(q, if q % 2 == 0 { 7 } else { 1 });
            m.ins(c, 3);
            let with_c = if lazy {
                let lazy = two.lazy + 1;
                two.clone().lazy(lazy)
            } else {
                two.clone().node(0, true)
            };
            let what = format!("keys parting at bytes {p} and {q}");
            assert_shape(&m.t, &with_c.node(pair, false), &what);
            for r in 0..w {
                m.lookup(c ^ bit(r, 2));
                m.lookup(a ^ bit(r, 5));
            }
            m.contents(&what);
            for order in [[c, b, a], [b, c, a]] {
                let other = built::<C>(order.iter().map(|x| (x, &m.m[x])));
                assert_eq!(shape(&other), shape(&m.t), "{what}, inserted as {order:x?}");
            }
            m.rem(c);
            assert_eq!(shape(&m.t), two_shape, "removing {c:#x} merges back");
        }
        m.rem(a);
        assert_shape(&m.t, &want_single::<C>(b), "one key left");
        m.rem(b);
        assert_empty(&m.t);
    }
}

#[test]
fn path_prefix_splits_at_every_byte() {
    prefix_split_at_every_byte::<PathU8>();
    prefix_split_at_every_byte::<PathU16>();
    prefix_split_at_every_byte::<PathU32>();
    prefix_split_at_every_byte::<PathU64>();
    prefix_split_at_every_byte::<PathU128>();
    prefix_split_at_every_byte::<PathU128Inline>();
    prefix_split_at_every_byte::<PathU64String>();
}

#[test]
fn full_prefix_splits_at_every_byte() {
    prefix_split_at_every_byte::<FullU8>();
    prefix_split_at_every_byte::<FullU16>();
    prefix_split_at_every_byte::<FullU32>();
    prefix_split_at_every_byte::<FullU64>();
    prefix_split_at_every_byte::<FullU128>();
    prefix_split_at_every_byte::<FullU16String>();
    prefix_split_at_every_byte::<FullU64One>();
    prefix_split_at_every_byte::<FullU128Varlen>();
}

// ------------------------------------------------------------ lazy splits

/// Key `a` in a lazy leaf below the node at byte `d` where it parts from
/// `b` (or `a` alone, a lazy root, when `d` is the key width), met by a
/// key `c` differing from it at byte `e < d`: the last byte, the first
/// byte below the node, and every one between. The leaf gives way to a
/// node at `e` holding `a` and `c` (their lazy leaves, or at the last
/// level their values, the leaf freed) and, without path compression,
/// single-child nodes from `e` up to the node at `d`. Values replaced in
/// lazy leaves come back; removing `c` collapses the node into a lazy
/// leaf again.
fn lazy_leaf_split_at_every_byte<C: Config<Memory = LocalMemory, Layout: TestLayout>>() {
    assert!(C::COMPRESSION.lazy());
    let (w, top) = (width::<C>(), width::<C>() as usize);
    let pair = pair_class::<C>();
    let path = C::COMPRESSION.path();
    let a = base::<C>();
    for d in positions(1, w + 1) {
        let mut m = Model::<C>::new();
        m.ins(a, 1);
        let b = a ^ bit(d.min(w - 1), 0);
        let before = if d < w {
            m.ins(b, 2);
            let node = Want::new::<C>(top, 2).node(pair, false);
            if path {
                node
            } else {
                node.nodes(0, false, (w - 1 - d) as usize)
            }
        } else {
            Want::new::<C>(top, 1)
        };
        assert_shape(&m.t, &before, &format!("a lazy leaf below byte {d}"));
        let before_shape = shape(&m.t);
        for e in positions(0, d) {
            let c = a ^ bit(e, if e % 2 == 0 { 0 } else { 7 });
            m.ins(c, 3);
            let what = format!("a lazy leaf below byte {d} split at byte {e}");
            let lazy = if e == 0 {
                before.lazy - 1
            } else {
                before.lazy + 1
            };
            let want = before.clone().lazy(lazy).node(pair, e == 0);
            let want = if path {
                want
            } else {
                want.nodes(0, false, (d - 1 - e) as usize)
            };
            assert_shape(&m.t, &want, &what);
            for f in 0..w {
                m.lookup(a ^ bit(f, 4));
                m.lookup(c ^ bit(f, 6));
            }
            // Replacing a value (in a lazy leaf, or in the node where a
            // and c part at the last level) returns the old one, shows it
            // to `insert_with_old`, and changes no shape.
            let snapshot = shape(&m.t);
            for x in [a, c].into_iter().chain((d < w).then_some(b)) {
                let tag = m.m[&x];
                m.put(x, tag + 10, true);
                m.put(x, tag, false);
            }
            assert_eq!(shape(&m.t), snapshot, "{what}: replacing values");
            m.contents(&what);
            m.rem(c);
            assert_eq!(shape(&m.t), before_shape, "removing {c:#x} collapses back");
        }
        m.rem(a);
        if d < w {
            assert_shape(&m.t, &want_single::<C>(b), "the other key alone");
            m.rem(b);
        }
        assert_empty(&m.t);
    }
}

#[test]
fn lazy_leaf_splits_at_every_byte() {
    lazy_leaf_split_at_every_byte::<LazyU8>();
    lazy_leaf_split_at_every_byte::<LazyU16>();
    lazy_leaf_split_at_every_byte::<LazyU32>();
    lazy_leaf_split_at_every_byte::<LazyU64>();
    lazy_leaf_split_at_every_byte::<LazyU128>();
    lazy_leaf_split_at_every_byte::<LazyU32Varlen>();
    lazy_leaf_split_at_every_byte::<LazyU64One>();
    lazy_leaf_split_at_every_byte::<LazyU128Inline>();
}

#[test]
fn full_lazy_leaf_splits_at_every_byte() {
    lazy_leaf_split_at_every_byte::<FullU8>();
    lazy_leaf_split_at_every_byte::<FullU16>();
    lazy_leaf_split_at_every_byte::<FullU32>();
    lazy_leaf_split_at_every_byte::<FullU64>();
    lazy_leaf_split_at_every_byte::<FullU128>();
    lazy_leaf_split_at_every_byte::<FullU16String>();
    lazy_leaf_split_at_every_byte::<FullU64One>();
    lazy_leaf_split_at_every_byte::<FullU128Varlen>();
}

// ------------------------------------------------------------ canonical form

/// Removals restore the canonical shape: after each one the tree has the
/// shape (`stats()` but for the bytes held) of a tree built from the
/// remaining keys alone, down to one key (a lazy root, a last-level node,
/// or a chain without compression) and then none, with every byte given
/// back. Inserting the keys backwards makes the same tree too.
fn removal_restores_the_canonical_shape<C: Config<Memory = LocalMemory, Layout: TestLayout>>(
    seed: u64,
) {
    let mut rng = SplitMix64(seed);
    let keys = alphabet_keys::<C>(&mut rng, pick(48, 48, 6));
    let mut m = Model::<C>::new();
    for (i, &x) in keys.iter().enumerate() {
        m.ins(x, i as u64 + 1);
    }
    m.contents("every key");
    assert_eq!(
        shape(&built::<C>(m.m.iter().rev())),
        shape(&m.t),
        "inserted backwards"
    );
    let mut order: Vec<u128> = m.m.keys().copied().collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    for x in order {
        m.rem(x);
        assert_eq!(
            shape(&m.t),
            shape(&built::<C>(&m.m)),
            "after removing {x:#x}: not the shape of a tree of the remaining keys"
        );
        if let (1, Some(&only)) = (m.m.len(), m.m.keys().next()) {
            assert_shape(&m.t, &want_single::<C>(only), "one key left");
        }
    }
    assert_empty(&m.t);
    // The emptied tree takes keys again.
    m.ins(keys[0], 9);
    assert_shape(
        &m.t,
        &want_single::<C>(keys[0]),
        "a key in the emptied tree",
    );
}

/// Seeds per configuration.
fn seeds() -> std::ops::Range<u64> {
    0..pick(16, 2, 1)
}

/// Runs `check::<C>(seed)` for every seed, for each configuration `C`
/// listed.
macro_rules! over_configs {
    ($check:ident, [$($config:ty),+ $(,)?]) => {
        for seed in seeds() {
            $($check::<$config>(seed);)+
        }
    };
    // Under Miri, a subset that still holds every layout and compression
    // of the full list: the widths left out run the same unsafe code (the
    // node kinds, slots and lazy leaves) with other key types, which the
    // subset's other tests and Miri's other modules cover.
    ($check:ident, [$($config:ty),+ $(,)?], miri: [$($under_miri:ty),+ $(,)?]) => {
        for seed in seeds() {
            if cfg!(miri) {
                $($check::<$under_miri>(seed);)+
            } else {
                $($check::<$config>(seed);)+
            }
        }
    };
}

#[test]
fn none_removal_restores_the_canonical_shape() {
    over_configs!(
        removal_restores_the_canonical_shape,
        [NoneU16, NoneU32, NoneU64, NoneU128, NoneU64One], miri: [NoneU32, NoneU64One]
    );
}

#[test]
fn lazy_removal_restores_the_canonical_shape() {
    over_configs!(
        removal_restores_the_canonical_shape,
        [
            LazyU8,
            LazyU16,
            LazyU32,
            LazyU64,
            LazyU128,
            LazyU32Varlen,
            LazyU64One,
            LazyU128Inline
        ], miri: [LazyU16, LazyU32Varlen, LazyU128Inline]
    );
}

#[test]
fn path_removal_restores_the_canonical_shape() {
    over_configs!(
        removal_restores_the_canonical_shape,
        [
            PathU8,
            PathU16,
            PathU32,
            PathU64,
            PathU128,
            PathU128Inline,
            PathU64String
        ], miri: [PathU64, PathU128Inline, PathU64String]
    );
}

#[test]
fn full_removal_restores_the_canonical_shape() {
    over_configs!(
        removal_restores_the_canonical_shape,
        [
            FullU8,
            FullU16,
            FullU32,
            FullU64,
            FullU128,
            FullU16String,
            FullU64One,
            FullU128Varlen
        ], miri: [FullU32, FullU16String, FullU128Varlen]
    );
}

/// Path compression alone with a class list starting at capacity 1: the
/// node where two keys part is a node16 (class 1), and when a removal
/// leaves a last-level node with one value, that node must shrink back
/// to the node4 of one (verify rejects a node16 at or below its shrink
/// threshold).
///
/// A regression test: `repair` once stopped at a last-level node left
/// with one value under path compression alone ("one value under a
/// prefix: canonical without lazy leaves") without calling
/// `shrink_if_sparse`, so the node stayed a node16 of one value and
/// `verify()` failed with "count 1 should have shrunk class 1 into class
/// 0". (`reserve_removal` reserves the class-0 node.)
#[test]
fn path_one_child_classes_shrink_a_last_level_node_left_with_one_value() {
    let mut m = Model::<PathU32One>::new();
    m.ins(0x0102_0304, 1);
    m.ins(0x0102_0305, 2);
    assert_shape(
        &m.t,
        &Want::new::<PathU32One>(4, 0).node(1, true),
        "two values",
    );
    m.rem(0x0102_0305);
    assert_shape(
        &m.t,
        &want_single::<PathU32One>(0x0102_0304),
        "one value left",
    );
    over_configs!(removal_restores_the_canonical_shape, [PathU32One]);
}

// ------------------------------------------------------------ ranges and lookups

fn in_bounds(x: u128, lo: Bound<u128>, hi: Bound<u128>) -> bool {
    (match lo {
        Bound::Included(l) => x >= l,
        Bound::Excluded(l) => x > l,
        Bound::Unbounded => true,
    }) && (match hi {
        Bound::Included(h) => x <= h,
        Bound::Excluded(h) => x < h,
        Bound::Unbounded => true,
    })
}

/// Range bounds for the keys of `m`: 0, the largest key, and keys near
/// stored ones: the key itself, its neighbours (below and above a lazy
/// leaf), the key with one bit flipped (diverging inside a prefix or a
/// lazy leaf's key), the first and last key under the node at a byte.
fn probes<C: Config<Memory = LocalMemory, Layout: TestLayout>>(
    m: &Model<C>,
    rng: &mut SplitMix64,
    n: usize,
) -> Vec<u128> {
    let max = max_of::<C>();
    let w = u64::from(width::<C>());
    let stored: Vec<u128> = m.m.keys().copied().collect();
    let mut out = vec![0, max];
    while out.len() < n {
        let x = match stored.len() {
            0 => rng.next_u128() & max,
            len => stored[rng.below(len as u64) as usize],
        };
        let p = rng.below(w) as u32;
        let below = (1u128 << (8 * p)) - 1;
        out.push(match rng.below(6) {
            0 => x,
            1 => x.saturating_sub(1),
            2 => (x + 1).min(max),
            3 => x ^ bit(p, rng.below(8) as u32),
            4 => x & !below,
            _ => x | below,
        });
    }
    out
}

/// `range` agrees with the model for every pair of probes and every kind
/// of bound, read forwards, backwards and from both ends in turn.
fn ranges_agree<C: Config<Memory = LocalMemory, Layout: TestLayout>>(
    m: &Model<C>,
    rng: &mut SplitMix64,
) {
    let probes = probes(m, rng, pick(12, 12, 4));
    let mut pairs = Vec::new();
    for &lo in &probes {
        for &hi in &probes {
            pairs.push((lo, hi));
        }
    }
    // Under Miri, a third of them, drawn at random.
    while pairs.len() > pick(usize::MAX, usize::MAX, 5) {
        pairs.swap_remove(rng.below(pairs.len() as u64) as usize);
    }
    let k = key::<C::Key>;
    for (lo, hi) in pairs {
        {
            let bounds = [
                (Bound::Included(lo), Bound::Included(hi)),
                (Bound::Included(lo), Bound::Excluded(hi)),
                (Bound::Excluded(lo), Bound::Included(hi)),
                (Bound::Excluded(lo), Bound::Unbounded),
                (Bound::Unbounded, Bound::Excluded(hi)),
            ];
            for (i, (l, h)) in bounds.into_iter().enumerate() {
                let want: Vec<(u128, u64)> =
                    m.m.iter()
                        .filter(|&(&x, _)| in_bounds(x, l, h))
                        .map(|(&x, &tag)| (x, tag))
                        .collect();
                let range = (l.map(k), h.map(k));
                let what = format!("range {l:x?}..{h:x?}");
                let got: Vec<u128> =
                    m.t.range(range)
                        .map(|(key, v)| {
                            let x = wide(key);
                            assert!(C::Layout::check(v, m.m[&x]), "{what}: value at {x:#x}");
                            x
                        })
                        .collect();
                assert!(
                    got.iter().eq(want.iter().map(|(x, _)| x)),
                    "{what}: {got:x?}"
                );
                let back: Vec<u128> = m.t.range(range).rev().map(|(key, _)| wide(key)).collect();
                assert!(
                    back.iter().eq(want.iter().rev().map(|(x, _)| x)),
                    "{what} backwards: {back:x?}"
                );
                if i == 0 {
                    // From both ends in turn, never crossing.
                    let mut it = m.t.range(range);
                    let (mut front, mut end) = (0, want.len());
                    for turn in 0.. {
                        let got = if turn % 2 == 0 {
                            it.next()
                        } else {
                            it.next_back()
                        };
                        if front == end {
                            assert!(got.is_none(), "{what}: both ends crossed");
                            break;
                        }
                        let x = if turn % 2 == 0 {
                            front += 1;
                            want[front - 1].0
                        } else {
                            end -= 1;
                            want[end].0
                        };
                        assert_eq!(
                            got.map(|(key, _)| wide(key)),
                            Some(x),
                            "{what}: turn {turn}"
                        );
                    }
                }
            }
        }
    }
}

/// `get`, `contains_key` and `get_mut` agree with the model on keys one
/// bit off stored keys at every byte (diverging inside a node's prefix,
/// at its chunk, or inside a lazy leaf's key), and miss above every
/// stored key and below the smallest; `get_mut` writes where `get` reads.
fn lookups_agree<C: Config<Memory = LocalMemory, Layout = Auto<u64>>>(m: &mut Model<C>) {
    let w = width::<C>();
    let max = max_of::<C>();
    let stored: Vec<u128> = m.m.keys().copied().collect();
    let step = if cfg!(miri) { stored.len() / 3 + 1 } else { 1 };
    let mut probes = Vec::new();
    for &x in stored.iter().step_by(step) {
        for p in 0..w {
            probes.push(x ^ bit(p, 0));
            probes.push(x ^ bit(p, 7));
        }
    }
    if let (Some(&first), Some(&last)) = (stored.first(), stored.last()) {
        let top = 8 * (w - 1);
        let above = [
            last.checked_add(1),
            Some(last | (last >> 1)),
            Some(last.saturating_add(1 << top)),
            ((last >> top) + 1).checked_shl(top),
            Some(max),
        ];
        for y in above
            .into_iter()
            .flatten()
            .filter(|&y| y > last && y <= max)
        {
            probes.push(y);
            assert!(
                m.t.range(key::<C::Key>(y)..).next().is_none(),
                "above {y:#x}"
            );
        }
        if first > 0 {
            probes.extend([first - 1, first >> 1, 0]);
            assert!(
                m.t.range(..key::<C::Key>(first)).next().is_none(),
                "below {first:#x}"
            );
        }
    }
    for y in probes {
        m.lookup(y);
        let k = key::<C::Key>(y);
        match m.m.get(&y).copied() {
            Some(tag) => {
                let v = m.t.get_mut(k).expect("get_mut finds a stored key");
                assert_eq!(*v, tag, "get_mut {y:#x}");
                *v = !tag;
                assert_eq!(m.t.get(k), Some(&!tag), "a write through get_mut {y:#x}");
                *m.t.get_mut(k).expect("still there") = tag;
            }
            None => assert!(m.t.get_mut(k).is_none(), "get_mut found absent {y:#x}"),
        }
    }
}

/// Iteration, ranges and lookups against the model over mixed keys, then
/// again after removing half of them (which merges nodes and collapses
/// subtrees into lazy leaves).
fn ranges_and_lookups_follow_btreemap<C: Config<Memory = LocalMemory, Layout = Auto<u64>>>(
    seed: u64,
) {
    let mut rng = SplitMix64(seed);
    let mut m = Model::<C>::new();
    // An empty tree: nothing anywhere.
    ranges_agree(&m, &mut rng);
    lookups_agree(&mut m);
    m.lookup(0);
    m.lookup(max_of::<C>());
    let keys = mixed_keys::<C>(&mut rng, pick(150, 150, 8));
    for (i, &x) in keys.iter().enumerate() {
        m.ins(x, i as u64);
    }
    m.contents("mixed keys");
    ranges_agree(&m, &mut rng);
    lookups_agree(&mut m);
    let stored: Vec<u128> = m.m.keys().copied().collect();
    for &x in stored.iter().step_by(2) {
        m.rem(x);
    }
    m.contents("half the keys removed");
    ranges_agree(&m, &mut rng);
    lookups_agree(&mut m);
}

#[test]
fn none_ranges_and_lookups_follow_btreemap() {
    over_configs!(
        ranges_and_lookups_follow_btreemap,
        [NoneU16, NoneU32, NoneU64, NoneU128], miri: [NoneU32, NoneU128]
    );
}

#[test]
fn lazy_ranges_and_lookups_follow_btreemap() {
    over_configs!(
        ranges_and_lookups_follow_btreemap,
        [LazyU8, LazyU16, LazyU32, LazyU64, LazyU128], miri: [LazyU16, LazyU128]
    );
}

#[test]
fn path_ranges_and_lookups_follow_btreemap() {
    over_configs!(
        ranges_and_lookups_follow_btreemap,
        [PathU8, PathU16, PathU32, PathU64, PathU128], miri: [PathU32, PathU64]
    );
}

#[test]
fn full_ranges_and_lookups_follow_btreemap() {
    over_configs!(
        ranges_and_lookups_follow_btreemap,
        [FullU8, FullU16, FullU32, FullU64, FullU128, FullU64One], miri: [FullU8, FullU128, FullU64One]
    );
}

// ------------------------------------------------------------ drops

/// Every value is dropped exactly once: on replace (the old value comes
/// back to the caller, from a lazy leaf or a node), on remove, on clear
/// and when the tree is dropped. The count of live values always equals
/// the tree's length (for values that do not count themselves, such as
/// `String`s, a leak or a double free is Miri's to see).
fn drops_each_value_once<C: Config<Memory = LocalMemory, Layout: TestLayout>>(seed: u64) {
    let start = live();
    let alive = |t: &RawTree<C>, what: &str| {
        if C::Layout::COUNTED {
            assert_eq!(live() - start, t.len() as isize, "{what}: values alive");
        }
    };
    let mut rng = SplitMix64(seed);
    let keys = mixed_keys::<C>(&mut rng, pick(60, 60, 8));
    let mut m = Model::<C>::new();
    for (i, &x) in keys.iter().enumerate() {
        m.ins(x, i as u64);
        alive(&m.t, "insert");
    }
    let stored: Vec<u128> = m.m.keys().copied().collect();
    for (i, &x) in stored.iter().enumerate().step_by(3) {
        m.put(x, 1000 + i as u64, i % 2 == 0);
        alive(&m.t, "replace");
    }
    for &x in stored.iter().step_by(2) {
        m.rem(x);
        alive(&m.t, "remove");
        m.rem(x);
        alive(&m.t, "remove of an absent key");
    }
    m.contents("after removals");
    m.t.clear();
    m.m.clear();
    alive(&m.t, "clear");
    assert_empty(&m.t);
    for &x in stored.iter().take(5) {
        m.ins(x, 7);
    }
    alive(&m.t, "inserts after clear");
    drop(m);
    assert_eq!(live(), start, "dropping the tree drops every value once");
}

#[test]
fn every_value_is_dropped_once() {
    over_configs!(
        drops_each_value_once,
        [
            FullU16Counted,
            FullU128Counted,
            LazyU64Counted,
            PathU32Fat,
            NoneU32Counted,
            FullU16String,
            PathU64String
        ]
    );
}

/// As above with path compression and a class list starting at capacity
/// 1.
///
/// A regression test for the bug of
/// `path_one_child_classes_shrink_a_last_level_node_left_with_one_value`.
#[test]
fn path_one_child_classes_drop_every_value_once() {
    over_configs!(drops_each_value_once, [PathU64Counted]);
}

// ------------------------------------------------------------ lazy heights

/// Lazy expansion alone keeps the uncompressed tree's height rule (the
/// largest key's), a lazy root standing for any height: a much larger key
/// meeting a lazy root makes just the node where the two part, at the
/// larger key's top; meeting a node root, it adds single-child levels up
/// to its own and its lazy leaf beside the old tree in the topmost.
/// Removing it drops the levels again.
fn lazy_height_follows_the_largest_key<C: Config<Memory = LocalMemory, Layout: TestLayout>>() {
    assert_eq!(C::COMPRESSION, Compression::Lazy);
    let (w, top) = (width::<C>(), width::<C>() as usize);
    assert!(w > 1);
    let pair = pair_class::<C>();
    let (small, big) = (5u128, 0x10u128 << (8 * (w - 1)));
    let mut m = Model::<C>::new();
    m.ins(small, 1);
    let alone = Want::new::<C>(1, 1);
    assert_shape(&m.t, &alone, "a small key alone");
    m.ins(big, 2);
    let parted = Want::new::<C>(top, 2).node(pair, false);
    assert_shape(&m.t, &parted, "a lazy root met by a larger key");
    m.rem(big);
    assert_shape(&m.t, &alone, "the larger key removed");

    m.ins(small + 1, 3);
    let low = Want::new::<C>(1, 0).node(pair, true);
    assert_shape(&m.t, &low, "two small keys");
    m.ins(big, 2);
    let raised = Want::new::<C>(top, 1)
        .node(pair, true)
        .nodes(0, false, top - 2)
        .node(pair, false);
    assert_shape(&m.t, &raised, "a node root met by a larger key");
    m.rem(big);
    assert_shape(&m.t, &low, "the larger key removed");
    m.ins(big, 2);
    // The last-level node collapses into a lazy leaf and the chain above
    // it with it, up to the top node.
    m.rem(small);
    let collapsed = Want::new::<C>(top, 2).node(pair, false);
    assert_shape(
        &m.t,
        &collapsed,
        "a small key removed under the raised levels",
    );
    m.rem(big);
    assert_shape(&m.t, &alone, "one small key left");
    m.rem(small + 1);
    assert_empty(&m.t);

    // One key per height, removed from the top down: the height follows
    // the largest key down, and the shape is always the canonical one.
    for level in (0..w).rev() {
        m.ins(0x21 << (8 * level), u64::from(level));
        assert_eq!(m.t.height(), top, "keys up to the top");
    }
    let compare = positions(0, w);
    for level in (0..w).rev() {
        m.rem(0x21 << (8 * level));
        assert_eq!(m.t.height(), level as usize, "the largest key gone");
        if compare.contains(&level) {
            let canonical = shape(&built::<C>(&m.m));
            assert_eq!(shape(&m.t), canonical, "after removing level {level}");
        }
    }
    assert_empty(&m.t);
}

#[test]
fn lazy_height_follows_the_largest_key_at_every_width() {
    lazy_height_follows_the_largest_key::<LazyU16>();
    lazy_height_follows_the_largest_key::<LazyU32>();
    lazy_height_follows_the_largest_key::<LazyU64>();
    lazy_height_follows_the_largest_key::<LazyU128>();
    lazy_height_follows_the_largest_key::<LazyU32Varlen>();
    lazy_height_follows_the_largest_key::<LazyU64One>();
    lazy_height_follows_the_largest_key::<LazyU128Inline>();
}

// ------------------------------------------------------------ reported engine bugs

/// Removals whose repair rewrites the tree's root reference: a root
/// last-level node collapsing into a lazy root (full), a root node left
/// with one lazy leaf collapsing into it (lazy), a root left with one
/// child merging into it (path).
///
/// A regression test for a borrow bug Miri found: `remove_compressed`
/// recorded `loc = NonNull::from(self.root.as_mut())` in its path and
/// then called `self.repair(..)`, whose `&mut self`, retagged on entry,
/// invalidated `loc` (Stacked and Tree Borrows alike) before `repair`
/// wrote the new root through it (the lazy collapse and the path merge).
/// `repair` now borrows the memory back end alone, as the uncompressed
/// removal does.
#[test]
fn removals_that_rewrite_the_root_reference() {
    let mut full = Model::<FullU64>::new();
    full.ins(1, 1);
    full.ins(2, 2);
    full.rem(2);
    assert_shape(&full.t, &want_single::<FullU64>(1), "full: a lazy root");
    let mut lazy = Model::<LazyU32>::new();
    lazy.ins(0x0100_0000, 1);
    lazy.ins(0x0200_0000, 2);
    lazy.rem(0x0200_0000);
    let want = want_single::<LazyU32>(0x0100_0000);
    assert_shape(&lazy.t, &want, "lazy: a lazy root");
    let mut path = Model::<PathU16>::new();
    path.ins(0x0101, 1);
    path.ins(0x0201, 2);
    path.rem(0x0201);
    assert_shape(
        &path.t,
        &want_single::<PathU16>(0x0101),
        "path: a merged root",
    );
}

/// Removing the last key must take its value out before the memory back
/// end releases everything.
///
/// A regression test (natively the bug mostly passed by luck; Miri
/// reported the use after free): `remove_compressed` once called
/// `self.mem.release_all()` when the tree became empty and only then
/// `LayoutOf::take(slot, ..)`, which reads the value's leaf and frees it.
/// With leaves in insert-only bump arenas (released by `release_all`) the
/// value was read from freed memory; in a shared area the leaf was freed
/// a second time, which corrupted the area (`tests/it/model_shared.rs` has
/// the shared cases). The removal now takes the value first, as the
/// uncompressed removal does.
#[test]
fn removing_the_last_key_takes_its_value_before_releasing_memory() {
    let mem = LocalMemory::insert_only(&RawTree::<FullU16String>::pool_specs(), 4096);
    let mut t = RawTree::<FullU16String>::with_memory(mem);
    t.insert(7, "seven".repeat(3));
    assert_eq!(t.remove(7).as_deref(), Some("sevensevenseven"));
    assert_empty(&t);
}
