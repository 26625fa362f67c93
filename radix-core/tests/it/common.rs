//! Shared helpers for the integration suites.
//!
//! - [`tree_config!`] declares a hand-written [`Config`] (the suites do not
//!   use the `radix_tree!` macro, so they test the engine on its own);
//! - [`key`] and [`wide`] convert between `u128` and any key width, using
//!   only the [`Key`] trait, so every suite is written once, generically;
//! - [`TestLayout`] gives every value layout one interface: store the value
//!   derived from a 64-bit *tag*, check a value against its tag, and say
//!   whether a tag's value lives in a leaf and how many leaf bytes it costs;
//! - [`SplitMix64`] is the seeded generator all suites use, so a failure
//!   reproduces from its seed;
//! - [`without_blocks`] is the shrinker of the quickcheck suites' operation
//!   lists.
//!
//! Each suite uses part of it; what only the `serde` suite uses is unused
//! without the feature.
#![allow(dead_code, unused_macros, unused_imports)]

use std::ops::Bound;

use radix_core::mem::LocalMemory;
use radix_core::value::{Inline, VarBytes, Varlen, Word};
use radix_core::{Config, Key, RawTree};

/// Declares `enum $name {}` implementing [`Config`] with local memory and
/// deletion enabled. The size classes default to [`SizeClasses::DEFAULT`].
///
/// ```ignore
/// tree_config!(U64Auto, u64, Auto<u64>);
/// tree_config!(U64Small, u64, Auto<u64>, SizeClasses::new(&[16, 256]));
/// ```
///
/// [`SizeClasses::DEFAULT`]: radix_core::SizeClasses::DEFAULT
macro_rules! tree_config {
    ($name:ident, $key:ty, $layout:ty) => {
        tree_config!($name, $key, $layout, radix_core::SizeClasses::DEFAULT);
    };
    ($name:ident, $key:ty, $layout:ty, $classes:expr) => {
        tree_config!(
            $name,
            $key,
            $layout,
            $classes,
            radix_core::Compression::None
        );
    };
    ($name:ident, $key:ty, $layout:ty, $classes:expr, $compression:expr) => {
        enum $name {}
        impl radix_core::Config for $name {
            type Key = $key;
            type Layout = $layout;
            type Memory = radix_core::mem::LocalMemory;
            const SIZE_CLASSES: radix_core::SizeClasses = $classes;
            const DELETE: bool = true;
            const COMPRESSION: radix_core::Compression = $compression;
        }
    };
}
pub(crate) use tree_config;

/// A non-default class list with every kind present: node4 of 3, node16 of
/// 8 and 32, node48 of 40, node256.
pub const CUSTOM_CAPS: &[u16] = &[3, 8, 32, 40, 256];
/// A class list with only a node16 of 16 and the node256.
pub const TWO_CAPS: &[u16] = &[16, 256];

/// The splitmix64 generator (Steele, Lea and Flood), seeded explicitly.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The next 128 random bits.
    pub fn next_u128(&mut self) -> u128 {
        ((self.next_u64() as u128) << 64) | self.next_u64() as u128
    }

    /// A number in `0..n` (`n > 0`); the slight modulo bias is irrelevant
    /// here.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True with probability `percent`/100.
    pub fn percent(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// The splitmix64 finaliser: a good 64-bit mix of `x`.
pub fn mix64(x: u64) -> u64 {
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The key of width `K` holding the low bits of `x`.
pub fn key<K: Key>(x: u128) -> K {
    let mut k = K::MIN;
    let mut shift = 0;
    while shift < K::BITS {
        k = k.with_chunk(shift, (x >> shift) as u8);
        shift += 8;
    }
    k
}

/// `k` as a `u128`.
pub fn wide<K: Key>(k: K) -> u128 {
    let mut x = 0u128;
    let mut shift = 0;
    while shift < K::BITS {
        x |= (k.chunk(shift) as u128) << shift;
        shift += 8;
    }
    x
}

/// The largest key of width `K`, as a `u128`.
pub fn max_of<K: Key>() -> u128 {
    wide(K::MAX)
}

/// The tag of the value stored under `key` in generation `generation`:
/// different keys and different generations give different values.
pub fn tag(key: u128, generation: u64) -> u64 {
    mix64(
        (key as u64)
            ^ ((key >> 64) as u64).rotate_left(29)
            ^ generation.wrapping_mul(0xD6E8_FEB8_6659_FD93),
    )
}

/// A tag whose varlen value has exactly `len` data bytes (`len <= 40`); the
/// other layouts see just another tag.
pub fn tag_with_len(len: usize, x: u64) -> u64 {
    assert!(len <= VARLEN_MAX_DATA);
    ((len as u64) << 56) | (x & ((1u64 << 56) - 1))
}

/// The longest varlen value the suites build, in data bytes.
pub const VARLEN_MAX_DATA: usize = 40;
/// The longest varlen value embedded in the slot, in data bytes: one
/// header byte plus seven data bytes fill a 64-bit word.
pub const VARLEN_MAX_EMBEDDED: usize = core::mem::size_of::<usize>() - 1;

/// Data length of the varlen value for `tag`: 0 to 40 bytes, so about a
/// fifth of values are embedded and the rest are leaves.
pub fn varlen_len(tag: u64) -> usize {
    ((tag >> 56) % (VARLEN_MAX_DATA as u64 + 1)) as usize
}

/// The data bytes of the varlen value for `tag`.
pub fn varlen_bytes(tag: u64) -> Vec<u8> {
    (0..varlen_len(tag))
        .map(|i| (tag >> ((i % 7) * 8)) as u8 ^ i as u8)
        .collect()
}

/// The varlen value for `tag`.
pub fn var_bytes(tag: u64) -> Box<VarBytes> {
    VarBytes::new(&varlen_bytes(tag)).expect("at most 40 bytes")
}

/// What an insert or remove reported about the previous value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Old {
    /// There was none.
    Absent,
    /// There was one; its tag when the layout returns the value itself
    /// (`None` for [`Varlen`], which only says whether there was one).
    Present(Option<u64>),
}

impl Old {
    /// Whether this matches the expected previous tag.
    pub fn matches(self, expected: Option<u64>) -> bool {
        match (self, expected) {
            (Old::Absent, None) => true,
            (Old::Present(None), Some(_)) => true,
            (Old::Present(Some(got)), Some(want)) => got == want,
            _ => false,
        }
    }
}

/// Asserts that `old` reports `expected` as the previous tag.
#[track_caller]
pub fn assert_old(old: Old, expected: Option<u64>, what: &str) {
    assert!(
        old.matches(expected),
        "{what}: got {old:?}, expected previous tag {expected:?}"
    );
}

/// One interface over every value layout the suites test.
pub trait TestLayout: radix_core::value::ValueLayout {
    /// Stores the value for `tag` under `key`.
    fn put<C: Config<Layout = Self, Memory = LocalMemory>>(
        t: &mut RawTree<C>,
        key: C::Key,
        tag: u64,
    ) -> Old;
    /// Removes `key`.
    fn del<C: Config<Layout = Self, Memory = LocalMemory>>(t: &mut RawTree<C>, key: C::Key) -> Old;
    /// Whether `value` is the value for `tag`.
    fn check(value: &Self::Value, tag: u64) -> bool;
    /// Whether the value for `tag` lives in a separate leaf allocation.
    fn is_leaf(tag: u64) -> bool;
    /// Bytes of the leaf allocation of the value for `tag` (0 if none).
    fn leaf_bytes(tag: u64) -> usize;
}

impl<const EMBED: bool> TestLayout for Word<u64, EMBED> {
    fn put<C: Config<Layout = Self, Memory = LocalMemory>>(
        t: &mut RawTree<C>,
        key: C::Key,
        tag: u64,
    ) -> Old {
        match t.insert(key, tag) {
            None => Old::Absent,
            Some(v) => Old::Present(Some(v)),
        }
    }
    fn del<C: Config<Layout = Self, Memory = LocalMemory>>(t: &mut RawTree<C>, key: C::Key) -> Old {
        match t.remove(key) {
            None => Old::Absent,
            Some(v) => Old::Present(Some(v)),
        }
    }
    fn check(value: &u64, tag: u64) -> bool {
        *value == tag
    }
    fn is_leaf(_tag: u64) -> bool {
        !Self::EMBEDS
    }
    fn leaf_bytes(_tag: u64) -> usize {
        if Self::EMBEDS { 0 } else { 8 }
    }
}

/// The inline value for `tag`.
pub fn inline_value(tag: u64) -> [u64; 3] {
    [tag, !tag, tag.rotate_left(17)]
}

/// What `insert` or `remove` gave back for a `[u64; 3]` value, checked
/// whole: a torn value would show as parts of different tags.
fn checked_triple(old: Option<[u64; 3]>, what: &str) -> Old {
    match old {
        None => Old::Absent,
        Some(v) => {
            assert_eq!(v, inline_value(v[0]), "{what} value is torn");
            Old::Present(Some(v[0]))
        }
    }
}

impl TestLayout for Inline<[u64; 3]> {
    fn put<C: Config<Layout = Self, Memory = LocalMemory>>(
        t: &mut RawTree<C>,
        key: C::Key,
        tag: u64,
    ) -> Old {
        checked_triple(t.insert(key, inline_value(tag)), "returned inline")
    }
    fn del<C: Config<Layout = Self, Memory = LocalMemory>>(t: &mut RawTree<C>, key: C::Key) -> Old {
        checked_triple(t.remove(key), "removed inline")
    }
    fn check(value: &[u64; 3], tag: u64) -> bool {
        *value == inline_value(tag)
    }
    fn is_leaf(_tag: u64) -> bool {
        false
    }
    fn leaf_bytes(_tag: u64) -> usize {
        0
    }
}

/// `[u64; 3]` in a one-word slot: too large to embed, so always a leaf.
impl<const EMBED: bool> TestLayout for Word<[u64; 3], EMBED> {
    fn put<C: Config<Layout = Self, Memory = LocalMemory>>(
        t: &mut RawTree<C>,
        key: C::Key,
        tag: u64,
    ) -> Old {
        checked_triple(t.insert(key, inline_value(tag)), "returned leaf")
    }
    fn del<C: Config<Layout = Self, Memory = LocalMemory>>(t: &mut RawTree<C>, key: C::Key) -> Old {
        checked_triple(t.remove(key), "removed leaf")
    }
    fn check(value: &[u64; 3], tag: u64) -> bool {
        *value == inline_value(tag)
    }
    fn is_leaf(_tag: u64) -> bool {
        !Self::EMBEDS
    }
    fn leaf_bytes(_tag: u64) -> usize {
        if Self::EMBEDS { 0 } else { 24 }
    }
}

/// Layouts of small or zero-sized values, which cannot hold a whole tag:
/// the value is the tag truncated, and the old value is not compared.
macro_rules! small_layout {
    ($layout:ty, $value:ty, $make:expr, $leaf:expr) => {
        impl TestLayout for $layout {
            fn put<C: Config<Layout = Self, Memory = LocalMemory>>(
                t: &mut RawTree<C>,
                key: C::Key,
                tag: u64,
            ) -> Old {
                let make: fn(u64) -> $value = $make;
                match t.insert(key, make(tag)) {
                    None => Old::Absent,
                    Some(_) => Old::Present(None),
                }
            }
            fn del<C: Config<Layout = Self, Memory = LocalMemory>>(
                t: &mut RawTree<C>,
                key: C::Key,
            ) -> Old {
                match t.remove(key) {
                    None => Old::Absent,
                    Some(_) => Old::Present(None),
                }
            }
            fn check(value: &$value, tag: u64) -> bool {
                let make: fn(u64) -> $value = $make;
                *value == make(tag)
            }
            fn is_leaf(_tag: u64) -> bool {
                $leaf
            }
            fn leaf_bytes(_tag: u64) -> usize {
                0
            }
        }
    };
}

small_layout!(Word<(), true>, (), |_| (), false);
small_layout!(Word<(), false>, (), |_| (), true);
small_layout!(Inline<()>, (), |_| (), false);
small_layout!(Inline<u8>, u8, |tag| tag as u8, false);
small_layout!(Inline<u16>, u16, |tag| (tag >> 8) as u16, false);

impl TestLayout for Varlen<VarBytes> {
    fn put<C: Config<Layout = Self, Memory = LocalMemory>>(
        t: &mut RawTree<C>,
        key: C::Key,
        tag: u64,
    ) -> Old {
        let value = var_bytes(tag);
        if t.insert(key, &value) {
            Old::Present(None)
        } else {
            Old::Absent
        }
    }
    fn del<C: Config<Layout = Self, Memory = LocalMemory>>(t: &mut RawTree<C>, key: C::Key) -> Old {
        if t.remove(key) {
            Old::Present(None)
        } else {
            Old::Absent
        }
    }
    fn check(value: &VarBytes, tag: u64) -> bool {
        value.as_bytes() == varlen_bytes(tag).as_slice()
    }
    fn is_leaf(tag: u64) -> bool {
        varlen_len(tag) > VARLEN_MAX_EMBEDDED
    }
    fn leaf_bytes(tag: u64) -> usize {
        // One header byte and the data, in a leaf of exactly that size.
        if Self::is_leaf(tag) {
            varlen_len(tag) + 1
        } else {
            0
        }
    }
}

/// Stores the value for `tag` under `key`.
pub fn put<C: Config<Layout: TestLayout, Memory = LocalMemory>>(
    t: &mut RawTree<C>,
    k: C::Key,
    tag: u64,
) -> Old {
    <C::Layout as TestLayout>::put(t, k, tag)
}

/// Removes `key`.
pub fn del<C: Config<Layout: TestLayout, Memory = LocalMemory>>(
    t: &mut RawTree<C>,
    k: C::Key,
) -> Old {
    <C::Layout as TestLayout>::del(t, k)
}

/// Whether `key` holds the value for `tag`.
pub fn holds<C: Config<Layout: TestLayout>>(t: &RawTree<C>, k: C::Key, tag: u64) -> bool {
    t.get(k)
        .is_some_and(|v| <C::Layout as TestLayout>::check(v, tag))
}

/// Whether `value` is the value for `tag`.
pub fn check_value<C: Config<Layout: TestLayout>>(
    value: &<C::Layout as radix_core::value::ValueLayout>::Value,
    tag: u64,
) -> bool {
    <C::Layout as TestLayout>::check(value, tag)
}

/// Consumes `it` from both ends, as the bits of `pattern` say (bit `i % 64`
/// set: the `i`-th call is `next_back`), and asserts that it yields exactly
/// `want` (keys with their tags, ascending): the front in ascending order,
/// the back in descending order, never crossing, then nothing from either
/// end.
#[track_caller]
pub fn assert_walk<'a, C, I>(mut it: I, want: &[(u128, u64)], pattern: u64, what: &str)
where
    C: Config<Layout: TestLayout>,
    I: DoubleEndedIterator<Item = (C::Key, &'a radix_core::ValueOf<C>)>,
{
    let (mut front, mut back) = (0, want.len());
    let mut step = 0u32;
    loop {
        let from_back = (pattern >> (step % 64)) & 1 == 1;
        let got = if from_back { it.next_back() } else { it.next() };
        if front == back {
            assert!(
                got.is_none(),
                "{what}: walk (pattern {pattern:#x}) yielded {:#x} past the end",
                wide(got.unwrap().0)
            );
            break;
        }
        let (w, tg) = if from_back {
            back -= 1;
            want[back]
        } else {
            front += 1;
            want[front - 1]
        };
        let (k, v) = got.unwrap_or_else(|| {
            panic!("{what}: walk (pattern {pattern:#x}) ended early, expected {w:#x}")
        });
        assert_eq!(
            wide(k),
            w,
            "{what}: walk (pattern {pattern:#x}) step {step}"
        );
        assert!(check_value::<C>(v, tg), "{what}: value at {w:#x}");
        step += 1;
    }
    assert!(it.next().is_none(), "{what}: not fused at the front");
    assert!(it.next_back().is_none(), "{what}: not fused at the back");
}

/// Patterns for [`assert_walk`]: forwards, backwards, alternating, and
/// irregular mixes derived from `seed`.
pub fn walk_patterns(seed: u64) -> [u64; 5] {
    [
        0,
        !0,
        0xAAAA_AAAA_AAAA_AAAA,
        mix64(seed),
        mix64(seed ^ 0x5555) & mix64(seed ^ 0x7777),
    ]
}

/// Asserts that the tree's entries, in iteration order, are exactly the
/// model's (keys as `u128`, values by tag), and that `len`, `keys`,
/// `values`, `first_key_value` and `last_key_value` agree.
#[track_caller]
pub fn assert_same<C: Config<Layout: TestLayout>>(
    t: &RawTree<C>,
    model: &std::collections::BTreeMap<u128, u64>,
) {
    assert_eq!(t.len(), model.len(), "len");
    assert_eq!(t.is_empty(), model.is_empty(), "is_empty");
    assert_eq!(t.iter().len(), model.len(), "iter().len()");
    let mut it = t.iter();
    for (&k, &tg) in model {
        let (got, v) = it
            .next()
            .unwrap_or_else(|| panic!("iteration ended before key {k:#x}"));
        assert_eq!(wide(got), k, "iteration key");
        assert!(check_value::<C>(v, tg), "iteration value at key {k:#x}");
    }
    assert!(it.next().is_none(), "iteration went past the model");
    assert!(t.keys().map(wide).eq(model.keys().copied()), "keys()");
    assert_eq!(t.values().count(), model.len(), "values().count()");
    assert!(
        t.values()
            .zip(model.values())
            .all(|(v, &tg)| check_value::<C>(v, tg)),
        "values()"
    );
    assert_eq!(
        t.first_key_value().map(|(k, _)| wide(k)),
        model.keys().next().copied(),
        "first_key_value"
    );
    assert_eq!(
        t.last_key_value().map(|(k, _)| wide(k)),
        model.keys().next_back().copied(),
        "last_key_value"
    );
    // Backwards, and from both ends at once.
    assert!(
        t.keys().rev().map(wide).eq(model.keys().rev().copied()),
        "keys().rev()"
    );
    assert_eq!(t.values().rev().count(), model.len(), "values().rev()");
    let want: Vec<(u128, u64)> = model.iter().map(|(&k, &v)| (k, v)).collect();
    for pattern in walk_patterns(model.len() as u64) {
        assert_walk::<C, _>(t.iter(), &want, pattern, "iter()");
    }
    let mut it = t.iter();
    let mut expected_len = model.len();
    while expected_len > 0 {
        assert_eq!(it.len(), expected_len, "iter().len() while walking");
        if expected_len.is_multiple_of(2) {
            it.next_back();
        } else {
            it.next();
        }
        expected_len -= 1;
    }
    assert_eq!(it.len(), 0);
    assert_eq!(
        t.iter().last().map(|(k, _)| wide(k)),
        model.keys().next_back().copied(),
        "iter().last()"
    );
}

/// The index of the smallest class of `C` holding `n` children.
pub fn class_for<C: Config>(n: usize) -> usize {
    let classes = C::SIZE_CLASSES;
    (0..classes.len())
        .find(|&c| classes.capacity(c) >= n)
        .expect("256 holds every count")
}

/// Stats as `(inner, last_level)` per class, for compact comparisons.
pub fn shape(stats: &radix_core::Stats) -> Vec<(usize, usize)> {
    stats
        .classes
        .iter()
        .map(|c| (c.inner, c.last_level))
        .collect()
}

/// Draws keys from four sources: near 0, near the width's maximum,
/// clustered around three bases, uniform.
pub struct KeyGen {
    pub rng: SplitMix64,
    pub bases: [u128; 3],
}

impl KeyGen {
    /// A generator seeded with `seed`, its three bases drawn first: one
    /// anywhere, one below 2^64, one below 2^28.
    pub fn from_seed(seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        let bases = [
            rng.next_u128(),
            rng.next_u128() >> 64,
            rng.next_u128() >> 100,
        ];
        Self { rng, bases }
    }

    pub fn key(&mut self) -> u128 {
        let small = self.rng.below(300) as u128;
        match self.rng.below(8) {
            0 => small,
            1 => u128::MAX - small,
            2..=5 => {
                let base = self.bases[self.rng.below(3) as usize];
                base.wrapping_add(self.rng.below(1024) as u128)
            }
            _ => self.rng.next_u128(),
        }
    }

    pub fn bound(&mut self) -> Bound<u128> {
        match self.rng.below(3) {
            0 => Bound::Included(self.key()),
            1 => Bound::Excluded(self.key()),
            _ => Bound::Unbounded,
        }
    }

    pub fn pattern(&mut self) -> u64 {
        match self.rng.below(4) {
            0 => 0,
            1 => !0,
            _ => self.rng.next_u64(),
        }
    }
}

/// An operation of the model tests that every map under test supports,
/// on keys drawn as `u128` and truncated to the tree's width.
#[derive(Clone, Debug)]
pub enum MapOp {
    Insert(u128, u64),
    /// Overwrites the `n % len`-th key of the model.
    Update(usize, u64),
    Remove(u128),
    /// Removes the `n % len`-th key of the model.
    RemoveExisting(usize),
    Get(u128),
    /// Looks up the `n % len`-th key of the model.
    GetExisting(usize),
    /// A range, consumed from both ends as the pattern's bits say.
    Range(Bound<u128>, Bound<u128>, u64),
    Iterate,
    Clear,
    /// Inserts the run's keys.
    InsertRun(KeyRun, u64),
    /// Removes the run's keys.
    RemoveRun(KeyRun),
}

/// `len` keys from `start`, `step` apart (wrapping): what the model tests'
/// runs of inserts and removals walk, pushing single nodes through every
/// size class and back.
#[derive(Clone, Copy, Debug)]
pub struct KeyRun {
    pub start: u128,
    pub len: u16,
    pub step: u8,
}

impl KeyRun {
    /// Up to 300 keys, 1 to 3 apart, from a key drawn from `keys`.
    pub fn draw(keys: &mut KeyGen) -> Self {
        KeyRun {
            start: keys.key(),
            len: keys.rng.below(300) as u16,
            step: 1 + keys.rng.below(3) as u8,
        }
    }

    /// The run's keys, truncated by `max`.
    pub fn keys(self, max: u128) -> impl Iterator<Item = u128> {
        (0..u128::from(self.len))
            .map(move |j| self.start.wrapping_add(j * u128::from(self.step)) & max)
    }
}

impl MapOp {
    /// An operation drawn from `keys`: inserts and removals (single, of
    /// present keys, and runs of up to 300 keys) twice as often as reads.
    pub fn draw(keys: &mut KeyGen) -> Self {
        let generation = keys.rng.next_u64();
        let n = keys.rng.next_u64() as usize;
        match keys.rng.below(100) {
            0..=29 => MapOp::Insert(keys.key(), generation),
            30..=37 => MapOp::Update(n, generation),
            38..=47 => MapOp::Remove(keys.key()),
            48..=59 => MapOp::RemoveExisting(n),
            60..=69 => MapOp::Get(keys.key()),
            70..=76 => MapOp::GetExisting(n),
            77..=84 => MapOp::Range(keys.bound(), keys.bound(), keys.pattern()),
            85..=87 => MapOp::Iterate,
            88 => MapOp::Clear,
            89..=94 => MapOp::InsertRun(KeyRun::draw(keys), generation),
            _ => MapOp::RemoveRun(KeyRun::draw(keys)),
        }
    }
}

pub fn in_bounds(w: u128, lo: Bound<u128>, hi: Bound<u128>) -> bool {
    (match lo {
        Bound::Included(l) => w >= l,
        Bound::Excluded(l) => w > l,
        Bound::Unbounded => true,
    }) && (match hi {
        Bound::Included(h) => w <= h,
        Bound::Excluded(h) => w < h,
        Bound::Unbounded => true,
    })
}

/// A quickcheck operation sequence: a key generator seeded from `g`, and
/// `1..=2 * g.size() + 1` operations drawn from it by `draw`.
pub fn draw_ops<T>(g: &mut quickcheck::Gen, mut draw: impl FnMut(&mut KeyGen) -> T) -> Vec<T> {
    let mut keys = KeyGen::from_seed(<u64 as quickcheck::Arbitrary>::arbitrary(g));
    let len = 1 + keys.rng.below(2 * g.size() as u64 + 1) as usize;
    (0..len).map(|_| draw(&mut keys)).collect()
}

/// Every copy of `ops` with one block of operations removed, for block
/// sizes halving from half the list down to one: the candidates a
/// quickcheck `shrink` of an operation list offers, coarsest first.
pub fn without_blocks<T: Clone>(ops: &[T]) -> Vec<Vec<T>> {
    let n = ops.len();
    let mut candidates = Vec::new();
    let mut size = n / 2;
    while size > 0 {
        for start in (0..n).step_by(size) {
            let mut fewer = ops.to_vec();
            fewer.drain(start..(start + size).min(n));
            candidates.push(fewer);
        }
        size /= 2;
    }
    candidates
}
