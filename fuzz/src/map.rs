//! One interface over every tree type under test.
//!
//! [`FuzzMap`] is the generated API of a `radix_tree!` type, with values
//! converted to their model representation ([`FuzzValue`]), so one harness
//! drives trees of any key width, value type and layout. It is dyn
//! compatible: the `macro_configs` target drives several trees at once as
//! `Box<dyn FuzzMap>`. [`impl_fuzz_map!`](crate::impl_fuzz_map) implements
//! it for a `radix_tree!` type by calling the type's own methods.
//!
//! The map API (entries, mutable and owning iterators, bulk removal,
//! split and append, cursors, clones, set operations) is here too: the
//! trait methods that a layout lacks return `None`, and the tree-side
//! halves of those operations ([`entry_on_tree`], [`cursor_on_tree`],
//! [`rewrite`], the merge functions, [`clone_report`]) are generic
//! functions the macro calls, whose model-side twins live in the harness.
//!
//! [`FuzzValue`]: crate::FuzzValue

use core::cmp::Ordering;
use core::fmt::Debug;
use core::ops::Bound;
use std::hash::{Hash, Hasher};

use radix_core::config::Removable;
use radix_core::mem::InfallibleMemory;
use radix_core::value::MutableLayout;
use radix_core::{Config, Cursor, Entry, ValueOf};

use crate::keys::KeyInt;
use crate::ops::{EntryAction, Merge, OccupiedAction, Owned, SetKind};
use crate::values::{mix64, FuzzValue, ModelValue};

/// What an insert or remove reported about the previous value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Previous<M> {
    /// There was none.
    Absent,
    /// There was one, and this is it.
    Value(M),
    /// There was one; the layout reports only that (varlen).
    Present,
}

impl<M: PartialEq + Debug> Previous<M> {
    /// `Value` or `Absent`, from what an `Option`-returning method gave.
    pub fn from_option(old: Option<M>) -> Self {
        old.map_or(Previous::Absent, Previous::Value)
    }

    /// `Present` or `Absent`, from what a `bool`-returning method gave.
    pub fn from_bool(present: bool) -> Self {
        if present {
            Previous::Present
        } else {
            Previous::Absent
        }
    }

    /// Asserts that this reports `expected`, the model's previous value.
    ///
    /// # Panics
    ///
    /// On a mismatch, naming `what` was done.
    #[track_caller]
    pub fn assert_is(&self, expected: Option<&M>, what: &dyn Debug) {
        let ok = match (self, expected) {
            (Previous::Absent, None) | (Previous::Present, Some(_)) => true,
            (Previous::Value(got), Some(want)) => got == want,
            _ => false,
        };
        assert!(
            ok,
            "{what:?}: tree reported previous value {self:?}, model had {expected:?}"
        );
    }
}

/// A tree under test, with values in their model representation.
///
/// Every method is the generated method of the same name; the walks
/// consume the generated iterators with [`walk`](crate::walk()) or
/// [`walk_exact`](crate::walk_exact()).
pub trait FuzzMap {
    /// The key type.
    type Key: KeyInt;
    /// The model representation of the values.
    type Model: ModelValue;

    /// The tree type's name, for messages.
    fn name(&self) -> &'static str;
    /// Whether the values are [`Counted`](crate::Counted).
    fn counts_values(&self) -> bool;
    /// `insert`, with the value encoded from `value`.
    fn insert(&mut self, key: Self::Key, value: &Self::Model) -> Previous<Self::Model>;
    /// `remove`.
    fn remove(&mut self, key: Self::Key) -> Previous<Self::Model>;
    /// `get`, decoded.
    fn get(&self, key: Self::Key) -> Option<Self::Model>;
    /// `contains_key`.
    fn contains_key(&self, key: Self::Key) -> bool;
    /// Replaces the value under `key` through `get_mut`, returning whether
    /// the key was found, or `None` when the layout has no `get_mut`.
    fn overwrite(&mut self, key: Self::Key, value: &Self::Model) -> Option<bool>;
    /// `len`.
    fn len(&self) -> usize;
    /// `is_empty`.
    fn is_empty(&self) -> bool;
    /// `clear`.
    fn clear(&mut self);
    /// `verify`.
    fn verify(&self) -> Result<(), String>;
    /// `memory_usage`.
    fn memory_usage(&self) -> usize;
    /// `range((low, high))`, walked with `pattern`.
    fn walk_range(
        &self,
        low: Bound<Self::Key>,
        high: Bound<Self::Key>,
        pattern: u64,
    ) -> Vec<(Self::Key, Self::Model)>;
    /// `iter()`, walked with `pattern`, its length checked at every step.
    fn walk_iter(&self, pattern: u64) -> Vec<(Self::Key, Self::Model)>;
    /// `keys()`, walked with `pattern`, its length checked at every step.
    fn walk_keys(&self, pattern: u64) -> Vec<Self::Key>;
    /// `values()`, walked with `pattern`, its length checked at every step.
    fn walk_values(&self, pattern: u64) -> Vec<Self::Model>;
    /// `first_key_value`.
    fn first(&self) -> Option<(Self::Key, Self::Model)>;
    /// `last_key_value`.
    fn last(&self) -> Option<(Self::Key, Self::Model)>;
    /// The `Debug` output's length (it must not panic).
    fn debug_len(&self) -> usize;
    /// `stats`.
    fn stats(&self) -> radix_core::Stats;
    /// The configuration's compression, which changes what `stats` must
    /// report (see [`crate::harness::expected_height`]).
    fn compression(&self) -> radix_core::Compression;

    // The map API. Methods returning `Option` return `None`, changing
    // nothing, for layouts without the method (`varlen`).

    /// `entry(key)` and `action` (see [`entry_on_tree`]).
    fn entry_op(
        &mut self,
        key: Self::Key,
        action: EntryAction,
        seed: u64,
    ) -> Option<EntryOutcome<Self::Key, Self::Model>>;
    /// `iter_mut()` walked with `pattern`, each value passed through
    /// [`rewrite`] with `seed`; the old values.
    fn walk_iter_mut(&mut self, pattern: u64, seed: u64) -> Option<Vec<(Self::Key, Self::Model)>>;
    /// `values_mut()`, as [`walk_iter_mut`](Self::walk_iter_mut).
    fn walk_values_mut(&mut self, pattern: u64, seed: u64) -> Option<Vec<Self::Model>>;
    /// `range_mut((low, high))`, as [`walk_iter_mut`](Self::walk_iter_mut).
    fn walk_range_mut(
        &mut self,
        low: Bound<Self::Key>,
        high: Bound<Self::Key>,
        pattern: u64,
        seed: u64,
    ) -> Option<Vec<(Self::Key, Self::Model)>>;
    /// An owning iterator of a clone, its first `take` items walked with
    /// `pattern`, then dropped with the rest.
    fn walk_owned(
        &self,
        kind: Owned,
        pattern: u64,
        take: usize,
    ) -> Option<OwnedItems<Self::Key, Self::Model>>;
    /// `into_iter()` of the tree itself, its first `take` items walked
    /// with `pattern` and the rest dropped; the tree is then rebuilt
    /// (`Extend`, on memory with the same options) from the items taken,
    /// which are returned.
    fn consume_self(&mut self, pattern: u64, take: usize) -> Option<Vec<(Self::Key, Self::Model)>>;
    /// `pop_last()` or `pop_first()`.
    fn pop_end(&mut self, back: bool) -> Option<Option<(Self::Key, Self::Model)>>;
    /// `retain`, keeping what [`keeps`] says and, with `rewrite`, giving
    /// the kept entries [`retained`] values; the entries the predicate saw,
    /// with their values as it saw them.
    fn retain_op(
        &mut self,
        seed: u64,
        keep: u8,
        rewrite: bool,
    ) -> Option<Vec<(Self::Key, Self::Model)>>;
    /// `split_off(at)`, then `append` back: see [`SplitReport`].
    fn split_append(
        &mut self,
        at: Self::Key,
        upper_into_lower: bool,
    ) -> Option<SplitReport<Self::Key, Self::Model>>;
    /// `append` of a tree holding `other` (on memory with the same
    /// options); that tree afterwards.
    fn append_other(
        &mut self,
        other: &[(Self::Key, Self::Model)],
    ) -> Option<Snapshot<Self::Key, Self::Model>>;
    /// `union_with`, `intersect_with` or `difference_with` a tree holding
    /// `other`, merging with [`union_merge`] or [`intersect_merge`].
    fn set_op(
        &mut self,
        kind: SetKind,
        other: &[(Self::Key, Self::Model)],
        merge: Merge,
    ) -> Option<SetReport<Self::Key, Self::Model>>;
    /// `first_at_or_after(key)` and `last_at_or_before(key)`.
    fn seek_both(&self, key: Self::Key) -> [Option<(Self::Key, Self::Model)>; 2];
    /// `cursor_at(start)` moved as `steps` say (see [`cursor_on_tree`]).
    fn cursor_walk(
        &self,
        start: Self::Key,
        steps: &[CursorStep<Self::Key>],
    ) -> Vec<Option<(Self::Key, Self::Model)>>;
    /// A clone, compared, then changed at `key` (`value` inserted, or the
    /// key removed): see [`clone_report`].
    fn clone_change(
        &self,
        key: Self::Key,
        value: Option<&Self::Model>,
    ) -> CloneReport<Self::Key, Self::Model>;
    /// With `o` a tree holding `other`: `[self.is_subset(o),
    /// self.is_superset(o), self.is_disjoint(o), o.is_subset(self),
    /// o.is_superset(self), o.is_disjoint(self)]`.
    fn compare_sets(&self, other: &[(Self::Key, Self::Model)]) -> [bool; 6];
}

/// The model representation of a configuration's values.
pub type ModelOf<C> = <ValueOf<C> as FuzzValue>::Model;

/// A tree's state, taken to be compared with a model: a forward walk,
/// `len()`, `verify()` and `memory_usage()`.
#[derive(Clone, Debug)]
pub struct Snapshot<K, M> {
    /// `iter()`.
    pub entries: Vec<(K, M)>,
    /// `len()`.
    pub len: usize,
    /// `verify()`.
    pub verify: Result<(), String>,
    /// `memory_usage()`.
    pub memory: usize,
}

/// Takes a [`Snapshot`] of `tree`.
pub fn snapshot<T: FuzzMap + ?Sized>(tree: &T) -> Snapshot<T::Key, T::Model> {
    Snapshot {
        entries: tree.walk_iter(0),
        len: tree.len(),
        verify: tree.verify(),
        memory: tree.memory_usage(),
    }
}

/// What an entry operation saw, in order: the key of the entry and any
/// other key handed back (by a closure, `into_key` or `remove_entry`),
/// and every value read, returned or replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryOutcome<K, M> {
    /// Whether the entry was occupied.
    pub occupied: bool,
    /// Keys seen.
    pub keys: Vec<K>,
    /// Values seen.
    pub values: Vec<M>,
}

/// The items an owning iterator gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnedItems<K, M> {
    /// `into_iter()`.
    Entries(Vec<(K, M)>),
    /// `into_keys()`.
    Keys(Vec<K>),
    /// `into_values()`.
    Values(Vec<M>),
}

/// A cursor move with its key resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CursorStep<K> {
    /// `next()`.
    Next,
    /// `prev()`.
    Prev,
    /// `peek_next()`.
    PeekNext,
    /// `peek_prev()`.
    PeekPrev,
    /// `seek(key)` (gives `None`).
    Seek(K),
    /// `seek_get(key)` (gives the key with its value).
    SeekGet(K),
    /// Continue with a clone of the cursor (gives `None`).
    Fork,
}

/// The two halves of a `split_off` and what `append` left of the one
/// appended.
#[derive(Clone, Debug)]
pub struct SplitReport<K, M> {
    /// The tree after `split_off`: the keys below `at`.
    pub lower: Snapshot<K, M>,
    /// The tree `split_off` returned: the keys at or after `at`.
    pub upper: Snapshot<K, M>,
    /// The half appended into the other, afterwards: empty.
    pub emptied: Snapshot<K, M>,
}

/// What a set operation's merge function saw, and the second tree after
/// it (but for a union, which consumes it).
#[derive(Clone, Debug)]
pub struct SetReport<K, M> {
    /// `(key, ours, theirs)` per call.
    pub merges: Vec<(K, M, M)>,
    /// The second tree afterwards.
    pub other: Option<Snapshot<K, M>>,
}

/// A clone and what comparing it with its original gave.
#[derive(Clone, Debug)]
pub struct CloneReport<K, M> {
    /// `copy == original` and `original == copy`, before the change.
    pub equal: [bool; 2],
    /// Whether both hash alike (layouts with `Hash`).
    pub hash_equal: Option<bool>,
    /// `stats()` of the copy and of the original.
    pub stats: [radix_core::Stats; 2],
    /// The copy before the change.
    pub copy: Snapshot<K, M>,
    /// `copy == original` and `original == copy`, after the change.
    pub equal_after: [bool; 2],
    /// `copy.cmp(original)` and `copy.partial_cmp(original)`, after the
    /// change (layouts with `Ord`).
    pub order_after: Option<(Ordering, Option<Ordering>)>,
    /// The copy after the change.
    pub copy_after: Snapshot<K, M>,
}

/// Folds a key into 64 bits, to seed values from it.
pub fn fold<K: KeyInt>(key: K) -> u64 {
    let wide = key.to_u128();
    (wide as u64) ^ ((wide >> 64) as u64).rotate_left(32)
}

/// The seed a value of fingerprint `fingerprint` is rewritten with under
/// `seed`, if it is rewritten (three values in four).
pub fn rewrites(seed: u64, fingerprint: u64) -> Option<u64> {
    let h = mix64(seed ^ fingerprint);
    (h & 3 != 0).then(|| mix64(h))
}

/// Rewrites `value` as [`rewrites`] says, returning its old model value.
pub fn rewrite<V: FuzzValue<Input = V>>(value: &mut V, seed: u64) -> V::Model {
    let old = value.decode();
    if let Some(new) = rewrites(seed, old.fingerprint()) {
        *value = V::encode(&V::Model::from_seed(new));
    }
    old
}

/// Whether `retain` keeps `key`: never for `keep == 0`, always for 255,
/// otherwise about `keep` keys in 256.
pub fn keeps<K: KeyInt>(seed: u64, keep: u8, key: K) -> bool {
    match keep {
        0 => false,
        u8::MAX => true,
        _ => mix64(seed ^ fold(key)) & 0xFF < u64::from(keep),
    }
}

/// The value `retain` with `rewrite` gives a kept entry.
pub fn retained<K: KeyInt, M: ModelValue>(seed: u64, key: K, old: &M) -> M {
    M::from_seed(mix64(seed ^ old.fingerprint() ^ fold(key).rotate_left(7)))
}

/// What a merge function leaves under `key`, given both values.
pub fn merged<K: KeyInt, M: ModelValue>(merge: Merge, key: K, ours: &M, theirs: &M) -> M {
    match merge {
        Merge::Ours => ours.clone(),
        Merge::Theirs => theirs.clone(),
        Merge::Mixed => M::from_seed(mix64(
            ours.fingerprint() ^ theirs.fingerprint().rotate_left(1) ^ fold(key),
        )),
    }
}

/// A `union_with` merge function: records the call, then keeps ours,
/// moves theirs in, or stores a mix, as `merge` says.
pub fn union_merge<K: KeyInt, V: FuzzValue<Input = V>>(
    merge: Merge,
    key: K,
    ours: &mut V,
    theirs: V,
) -> (K, V::Model, V::Model) {
    let (o, t) = (ours.decode(), theirs.decode());
    match merge {
        Merge::Ours => drop(theirs),
        Merge::Theirs => *ours = theirs,
        Merge::Mixed => *ours = V::encode(&merged(merge, key, &o, &t)),
    }
    (key, o, t)
}

/// An `intersect_with` merge function: records the call, then keeps
/// ours, stores a clone of theirs, or a mix, as `merge` says.
pub fn intersect_merge<K: KeyInt, V: FuzzValue<Input = V> + Clone>(
    merge: Merge,
    key: K,
    ours: &mut V,
    theirs: &V,
) -> (K, V::Model, V::Model) {
    let (o, t) = (ours.decode(), theirs.decode());
    match merge {
        Merge::Ours => {}
        Merge::Theirs => *ours = theirs.clone(),
        Merge::Mixed => *ours = V::encode(&merged(merge, key, &o, &t)),
    }
    (key, o, t)
}

/// Applies `action` to a tree's entry (the model side is in the harness):
/// `value` is `from_seed(seed)`, `update` is `from_seed(mix64(seed))`, and
/// `or_insert_with_key` seeds its value with `seed ^ fold(key)`.
pub fn entry_on_tree<C>(
    entry: Entry<'_, C>,
    action: EntryAction,
    seed: u64,
) -> EntryOutcome<C::Key, ModelOf<C>>
where
    C: Config + Removable,
    C::Key: KeyInt,
    C::Memory: InfallibleMemory,
    C::Layout: MutableLayout,
    ValueOf<C>: Sized + Default + FuzzValue<Input = ValueOf<C>>,
{
    let value = || <ValueOf<C> as FuzzValue>::encode(&<ModelOf<C> as ModelValue>::from_seed(seed));
    let update =
        || <ValueOf<C> as FuzzValue>::encode(&<ModelOf<C> as ModelValue>::from_seed(mix64(seed)));
    let mut out = EntryOutcome {
        occupied: matches!(entry, Entry::Occupied(_)),
        keys: vec![entry.key()],
        values: Vec::new(),
    };
    let mut called = None;
    match action {
        EntryAction::OrInsert { write } => {
            let r = entry.or_insert(value());
            out.values.push(r.decode());
            if write {
                *r = update();
            }
        }
        EntryAction::OrInsertWith { write } => {
            let key = entry.key();
            let r = entry.or_insert_with(|| {
                called = Some(key);
                value()
            });
            out.values.push(r.decode());
            if write {
                *r = update();
            }
        }
        EntryAction::OrInsertWithKey => {
            let r = entry.or_insert_with_key(|k| {
                called = Some(k);
                <ValueOf<C> as FuzzValue>::encode(&<ModelOf<C> as ModelValue>::from_seed(
                    seed ^ fold(k),
                ))
            });
            out.values.push(r.decode());
        }
        EntryAction::OrDefault { write } => {
            let r = entry.or_default();
            out.values.push(r.decode());
            if write {
                *r = update();
            }
        }
        EntryAction::AndModify { insert } => {
            let mut old = None;
            let entry = entry.and_modify(|v| {
                old = Some(v.decode());
                *v = update();
            });
            out.values.extend(old);
            out.keys.push(entry.key());
            if insert {
                out.values.push(entry.or_insert(value()).decode());
            }
        }
        EntryAction::Match {
            occupied,
            vacant_insert,
            write,
        } => match entry {
            Entry::Occupied(mut o) => {
                out.keys.push(o.key());
                match occupied {
                    OccupiedAction::Get => out.values.push(o.get().decode()),
                    OccupiedAction::GetMut => {
                        *o.get_mut() = update();
                        out.values.push(o.get().decode());
                    }
                    OccupiedAction::IntoMut => {
                        let r = o.into_mut();
                        out.values.push(r.decode());
                        *r = update();
                    }
                    OccupiedAction::Insert => {
                        out.values.push(o.insert(update()).decode());
                        out.values.push(o.get().decode());
                    }
                    OccupiedAction::Remove => out.values.push(o.remove().decode()),
                    OccupiedAction::RemoveEntry => {
                        let (k, v) = o.remove_entry();
                        out.keys.push(k);
                        out.values.push(v.decode());
                    }
                }
            }
            Entry::Vacant(v) => {
                out.keys.push(v.key());
                if vacant_insert {
                    let r = v.insert(value());
                    out.values.push(r.decode());
                    if write {
                        *r = update();
                    }
                } else {
                    out.keys.push(v.into_key());
                }
            }
        },
    }
    out.keys.extend(called);
    out
}

/// Moves `cursor` as `steps` say, giving what each step returned.
pub fn cursor_on_tree<C>(
    mut cursor: Cursor<'_, C>,
    steps: &[CursorStep<C::Key>],
) -> Vec<Option<(C::Key, ModelOf<C>)>>
where
    C: Config,
    C::Key: KeyInt,
    ValueOf<C>: FuzzValue,
{
    let decode = |e: Option<(C::Key, &ValueOf<C>)>| e.map(|(k, v)| (k, v.decode()));
    let mut out = Vec::with_capacity(steps.len());
    for step in steps {
        out.push(match *step {
            CursorStep::Next => decode(cursor.next()),
            CursorStep::Prev => decode(cursor.prev()),
            CursorStep::PeekNext => decode(cursor.peek_next()),
            CursorStep::PeekPrev => decode(cursor.peek_prev()),
            CursorStep::Seek(key) => {
                cursor.seek(key);
                None
            }
            CursorStep::SeekGet(key) => cursor.seek_get(key).map(|v| (key, v.decode())),
            CursorStep::Fork => {
                cursor = cursor.clone();
                None
            }
        });
    }
    out
}

/// `tree`'s hash under the standard hasher.
pub fn hash_of<T: Hash + ?Sized>(tree: &T) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    tree.hash(&mut h);
    h.finish()
}

/// A function giving `a.cmp(b)` and `a.partial_cmp(b)`.
pub type OrderFn<T> = fn(&T, &T) -> (Ordering, Option<Ordering>);

/// `a.cmp(b)` and `a.partial_cmp(b)`.
pub fn order_of<T: Ord>(a: &T, b: &T) -> (Ordering, Option<Ordering>) {
    (a.cmp(b), a.partial_cmp(b))
}

/// Clones `tree`, compares the copy with it (`==` both ways, `hash` if
/// given, `stats()`), changes the copy at `key` (inserting `value`, or
/// removing the key when `None`) and compares again (`==`, and `order` if
/// given).
pub fn clone_report<T>(
    tree: &T,
    key: T::Key,
    value: Option<&T::Model>,
    hash: Option<fn(&T) -> u64>,
    order: Option<OrderFn<T>>,
) -> CloneReport<T::Key, T::Model>
where
    T: FuzzMap + Clone + PartialEq,
{
    let mut copy = tree.clone();
    let equal = [copy == *tree, *tree == copy];
    let hash_equal = hash.map(|h| h(&copy) == h(tree));
    let stats = [copy.stats(), tree.stats()];
    let before = snapshot(&copy);
    match value {
        Some(v) => drop(copy.insert(key, v)),
        None => drop(copy.remove(key)),
    }
    CloneReport {
        equal,
        hash_equal,
        stats,
        copy: before,
        equal_after: [copy == *tree, *tree == copy],
        order_after: order.map(|o| o(&copy, tree)),
        copy_after: snapshot(&copy),
    }
}

/// The compression of a tree's configuration: how
/// [`impl_fuzz_map!`](crate::impl_fuzz_map) reaches `NAMEConfig`, whose
/// name a `macro_rules!` macro cannot build from the tree's.
pub fn compression_of<C: radix_core::Config>(
    _: &radix_core::RawTree<C>,
) -> radix_core::Compression {
    C::COMPRESSION
}

/// Declares `UnderTest<T>`, the local wrapper [`impl_fuzz_map!`] implements
/// [`FuzzMap`] on: a `radix_tree!` type is an alias of `radix_core`'s
/// `RawTree`, which a fuzz target, a third crate, may not implement this
/// crate's traits for. Invoke it once per fuzz target, before
/// [`impl_fuzz_map!`] ([`trees_per_compression!`](crate::trees_per_compression)
/// does). It dereferences to the tree, and compares, orders, hashes and
/// clones as the tree does.
#[macro_export]
macro_rules! under_test {
    () => {
        /// A tree under test.
        #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        struct UnderTest<T>(T);

        impl<T> ::core::ops::Deref for UnderTest<T> {
            type Target = T;

            fn deref(&self) -> &T {
                &self.0
            }
        }

        impl<T> ::core::ops::DerefMut for UnderTest<T> {
            fn deref_mut(&mut self) -> &mut T {
                &mut self.0
            }
        }
    };
}

/// Implements [`FuzzMap`] for `UnderTest<TREE>` (see [`under_test!`]),
/// TREE a `radix_tree!` type, by delegating to its methods.
///
/// ```ignore
/// radix_fuzz::under_test!();
/// radix_core::radix_tree! { struct Tree { key: u64, value: u64 } }
/// radix_fuzz::impl_fuzz_map!(Tree, u64, u64, sized);
///
/// radix_core::radix_tree! {
///     struct Strings { key: u64, value: VarBytes, layout: varlen }
/// }
/// radix_fuzz::impl_fuzz_map!(Strings, u64, VarBytes, varlen);
/// ```
///
/// The last argument says which signatures the type has: `sized` (insert
/// and remove return `Option<V>`, `get_mut` and the rest of the map API
/// exist: entries, `*_mut` and owning iterators, pops, `retain`,
/// `split_off`, `append`, `union_with` and its siblings, `Ord` and `Hash`)
/// or `varlen` (insert takes `&V`, insert and remove return `bool`; of the
/// map API only seeking, cursors, `Clone`, `==` and the key-set
/// comparisons). The value type of a `sized` tree must be `Clone`,
/// `Default`, `Ord` and `Hash`, each agreeing with its model. It also
/// provides `UnderTest::<Tree>::create(insert_only)`, a tree over the default memory or
/// over insert-only memory (leaves in bump arenas), and
/// `tree.fuzz_other(entries)`, a second tree on memory with the same
/// options.
#[macro_export]
macro_rules! impl_fuzz_map {
    ($tree:ident, $key:ty, $value:ty, sized) => {
        $crate::impl_fuzz_map!(@impl $tree, $key, $value, {
            fn insert(&mut self, key: $key, value: &Self::Model) -> $crate::Previous<Self::Model> {
                let old = $tree::insert(self, key, <$value as $crate::FuzzValue>::encode(value));
                $crate::Previous::from_option(old.map(|v| $crate::FuzzValue::decode(&v)))
            }

            fn remove(&mut self, key: $key) -> $crate::Previous<Self::Model> {
                let old = $tree::remove(self, key);
                $crate::Previous::from_option(old.map(|v| $crate::FuzzValue::decode(&v)))
            }

            fn overwrite(&mut self, key: $key, value: &Self::Model) -> Option<bool> {
                Some(match $tree::get_mut(self, key) {
                    Some(slot) => {
                        *slot = <$value as $crate::FuzzValue>::encode(value);
                        true
                    }
                    None => false,
                })
            }

            fn entry_op(
                &mut self,
                key: $key,
                action: $crate::ops::EntryAction,
                seed: u64,
            ) -> Option<$crate::map::EntryOutcome<$key, Self::Model>> {
                Some($crate::map::entry_on_tree($tree::entry(self, key), action, seed))
            }

            fn walk_iter_mut(&mut self, pattern: u64, seed: u64) -> Option<Vec<($key, Self::Model)>> {
                let it = $tree::iter_mut(self).map(|(k, v)| (k, $crate::map::rewrite(v, seed)));
                Some($crate::walk_exact(it, pattern))
            }

            fn walk_values_mut(&mut self, pattern: u64, seed: u64) -> Option<Vec<Self::Model>> {
                let it = $tree::values_mut(self).map(|v| $crate::map::rewrite(v, seed));
                Some($crate::walk_exact(it, pattern))
            }

            fn walk_range_mut(
                &mut self,
                low: ::core::ops::Bound<$key>,
                high: ::core::ops::Bound<$key>,
                pattern: u64,
                seed: u64,
            ) -> Option<Vec<($key, Self::Model)>> {
                let it = $tree::range_mut(self, (low, high))
                    .map(|(k, v)| (k, $crate::map::rewrite(v, seed)));
                Some($crate::walk(it, pattern))
            }

            fn walk_owned(
                &self,
                kind: $crate::ops::Owned,
                pattern: u64,
                take: usize,
            ) -> Option<$crate::map::OwnedItems<$key, Self::Model>> {
                use $crate::map::OwnedItems;
                use $crate::ops::Owned;
                use $crate::walk::walk_exact_partial;
                let copy = ::core::clone::Clone::clone(&self.0);
                Some(match kind {
                    Owned::Entries => OwnedItems::Entries(walk_exact_partial(
                        ::core::iter::IntoIterator::into_iter(copy)
                            .map(|(k, v)| (k, $crate::FuzzValue::decode(&v))),
                        pattern,
                        take,
                    )),
                    Owned::Keys => OwnedItems::Keys(walk_exact_partial(
                        $tree::into_keys(copy),
                        pattern,
                        take,
                    )),
                    Owned::Values => OwnedItems::Values(walk_exact_partial(
                        $tree::into_values(copy).map(|v| $crate::FuzzValue::decode(&v)),
                        pattern,
                        take,
                    )),
                })
            }

            fn consume_self(&mut self, pattern: u64, take: usize) -> Option<Vec<($key, Self::Model)>> {
                let memory = self.memory().empty_like();
                let tree = ::core::mem::replace(&mut self.0, $tree::with_memory(memory));
                let taken = $crate::walk::walk_exact_partial(
                    ::core::iter::IntoIterator::into_iter(tree),
                    pattern,
                    take,
                );
                let seen = taken
                    .iter()
                    .map(|(k, v)| (*k, $crate::FuzzValue::decode(v)))
                    .collect();
                ::core::iter::Extend::<($key, $value)>::extend(&mut self.0, taken);
                Some(seen)
            }

            fn pop_end(&mut self, back: bool) -> Option<Option<($key, Self::Model)>> {
                let popped = if back {
                    $tree::pop_last(self)
                } else {
                    $tree::pop_first(self)
                };
                Some(popped.map(|(k, v)| (k, $crate::FuzzValue::decode(&v))))
            }

            fn retain_op(
                &mut self,
                seed: u64,
                keep: u8,
                rewrite: bool,
            ) -> Option<Vec<($key, Self::Model)>> {
                let mut seen = Vec::new();
                $tree::retain(self, |k, v| {
                    let old = $crate::FuzzValue::decode(&*v);
                    let kept = $crate::map::keeps(seed, keep, k);
                    if kept && rewrite {
                        *v = <$value as $crate::FuzzValue>::encode(
                            &$crate::map::retained(seed, k, &old),
                        );
                    }
                    seen.push((k, old));
                    kept
                });
                Some(seen)
            }

            fn split_append(
                &mut self,
                at: $key,
                upper_into_lower: bool,
            ) -> Option<$crate::map::SplitReport<$key, Self::Model>> {
                use $crate::map::snapshot;
                let mut upper = UnderTest($tree::split_off(self, at));
                let lower_snap = snapshot(self);
                let upper_snap = snapshot(&upper);
                let emptied = if upper_into_lower {
                    $tree::append(self, &mut upper);
                    snapshot(&upper)
                } else {
                    $tree::append(&mut upper, self);
                    ::core::mem::swap(self, &mut upper);
                    snapshot(&upper)
                };
                Some($crate::map::SplitReport {
                    lower: lower_snap,
                    upper: upper_snap,
                    emptied,
                })
            }

            fn append_other(
                &mut self,
                other: &[($key, Self::Model)],
            ) -> Option<$crate::map::Snapshot<$key, Self::Model>> {
                let mut other = self.fuzz_other(other);
                $tree::append(self, &mut other);
                Some($crate::map::snapshot(&other))
            }

            fn set_op(
                &mut self,
                kind: $crate::ops::SetKind,
                other: &[($key, Self::Model)],
                merge: $crate::ops::Merge,
            ) -> Option<$crate::map::SetReport<$key, Self::Model>> {
                use $crate::ops::SetKind;
                let other = self.fuzz_other(other);
                let mut merges = Vec::new();
                let other = match kind {
                    SetKind::Union => {
                        $tree::union_with(self, other.0, |k, ours, theirs| {
                            merges.push($crate::map::union_merge(merge, k, ours, theirs))
                        });
                        None
                    }
                    SetKind::Intersect => {
                        $tree::intersect_with(self, &other, |k, ours, theirs| {
                            merges.push($crate::map::intersect_merge(merge, k, ours, theirs))
                        });
                        Some($crate::map::snapshot(&other))
                    }
                    SetKind::Difference => {
                        $tree::difference_with(self, &other);
                        Some($crate::map::snapshot(&other))
                    }
                };
                Some($crate::map::SetReport { merges, other })
            }

            fn clone_change(
                &self,
                key: $key,
                value: Option<&Self::Model>,
            ) -> $crate::map::CloneReport<$key, Self::Model> {
                $crate::map::clone_report(
                    self,
                    key,
                    value,
                    Some($crate::map::hash_of::<Self>),
                    Some($crate::map::order_of::<Self>),
                )
            }
        });
    };
    ($tree:ident, $key:ty, $value:ty, varlen) => {
        $crate::impl_fuzz_map!(@impl $tree, $key, $value, {
            fn insert(&mut self, key: $key, value: &Self::Model) -> $crate::Previous<Self::Model> {
                let value = <$value as $crate::FuzzValue>::encode(value);
                $crate::Previous::from_bool($tree::insert(self, key, &value))
            }

            fn remove(&mut self, key: $key) -> $crate::Previous<Self::Model> {
                $crate::Previous::from_bool($tree::remove(self, key))
            }

            fn overwrite(&mut self, _key: $key, _value: &Self::Model) -> Option<bool> {
                None
            }

            fn entry_op(
                &mut self,
                _key: $key,
                _action: $crate::ops::EntryAction,
                _seed: u64,
            ) -> Option<$crate::map::EntryOutcome<$key, Self::Model>> {
                None
            }

            fn walk_iter_mut(&mut self, _: u64, _: u64) -> Option<Vec<($key, Self::Model)>> {
                None
            }

            fn walk_values_mut(&mut self, _: u64, _: u64) -> Option<Vec<Self::Model>> {
                None
            }

            fn walk_range_mut(
                &mut self,
                _: ::core::ops::Bound<$key>,
                _: ::core::ops::Bound<$key>,
                _: u64,
                _: u64,
            ) -> Option<Vec<($key, Self::Model)>> {
                None
            }

            fn walk_owned(
                &self,
                _: $crate::ops::Owned,
                _: u64,
                _: usize,
            ) -> Option<$crate::map::OwnedItems<$key, Self::Model>> {
                None
            }

            fn consume_self(&mut self, _: u64, _: usize) -> Option<Vec<($key, Self::Model)>> {
                None
            }

            fn pop_end(&mut self, _: bool) -> Option<Option<($key, Self::Model)>> {
                None
            }

            fn retain_op(&mut self, _: u64, _: u8, _: bool) -> Option<Vec<($key, Self::Model)>> {
                None
            }

            fn split_append(
                &mut self,
                _: $key,
                _: bool,
            ) -> Option<$crate::map::SplitReport<$key, Self::Model>> {
                None
            }

            fn append_other(
                &mut self,
                _: &[($key, Self::Model)],
            ) -> Option<$crate::map::Snapshot<$key, Self::Model>> {
                None
            }

            fn set_op(
                &mut self,
                _: $crate::ops::SetKind,
                _: &[($key, Self::Model)],
                _: $crate::ops::Merge,
            ) -> Option<$crate::map::SetReport<$key, Self::Model>> {
                None
            }

            fn clone_change(
                &self,
                key: $key,
                value: Option<&Self::Model>,
            ) -> $crate::map::CloneReport<$key, Self::Model> {
                $crate::map::clone_report(self, key, value, None, None)
            }
        });
    };
    (@impl $tree:ident, $key:ty, $value:ty, { $($methods:tt)* }) => {
        impl UnderTest<$tree> {
            /// A tree over the default memory, or over insert-only memory.
            #[allow(dead_code)]
            fn create(insert_only: bool) -> Self {
                if insert_only {
                    let specs = $tree::pool_specs();
                    UnderTest($tree::with_memory(::radix_core::mem::LocalMemory::insert_only(
                        &specs,
                        16 << 10,
                    )))
                } else {
                    UnderTest($tree::new())
                }
            }

            /// A second tree holding `entries`, on memory with this one's
            /// options.
            #[allow(dead_code)]
            fn fuzz_other(
                &self,
                entries: &[($key, <$value as $crate::FuzzValue>::Model)],
            ) -> Self {
                let mut other = UnderTest($tree::with_memory(self.memory().empty_like()));
                for (k, v) in entries {
                    <Self as $crate::FuzzMap>::insert(&mut other, *k, v);
                }
                other
            }
        }

        impl $crate::FuzzMap for UnderTest<$tree> {
            type Key = $key;
            type Model = <$value as $crate::FuzzValue>::Model;

            fn name(&self) -> &'static str {
                stringify!($tree)
            }

            fn counts_values(&self) -> bool {
                <$value as $crate::FuzzValue>::COUNTED
            }

            $($methods)*

            fn get(&self, key: $key) -> Option<Self::Model> {
                $tree::get(self, key).map($crate::FuzzValue::decode)
            }

            fn contains_key(&self, key: $key) -> bool {
                $tree::contains_key(self, key)
            }

            fn len(&self) -> usize {
                $tree::len(self)
            }

            fn is_empty(&self) -> bool {
                $tree::is_empty(self)
            }

            fn clear(&mut self) {
                $tree::clear(self)
            }

            fn verify(&self) -> Result<(), String> {
                $tree::verify(self)
            }

            fn memory_usage(&self) -> usize {
                $tree::memory_usage(self)
            }

            fn walk_range(
                &self,
                low: ::core::ops::Bound<$key>,
                high: ::core::ops::Bound<$key>,
                pattern: u64,
            ) -> Vec<($key, Self::Model)> {
                let it = $tree::range(self, (low, high));
                $crate::walk(it.map(|(k, v)| (k, $crate::FuzzValue::decode(v))), pattern)
            }

            fn walk_iter(&self, pattern: u64) -> Vec<($key, Self::Model)> {
                let it = $tree::iter(self);
                $crate::walk_exact(it.map(|(k, v)| (k, $crate::FuzzValue::decode(v))), pattern)
            }

            fn walk_keys(&self, pattern: u64) -> Vec<$key> {
                $crate::walk_exact($tree::keys(self), pattern)
            }

            fn walk_values(&self, pattern: u64) -> Vec<Self::Model> {
                $crate::walk_exact($tree::values(self).map($crate::FuzzValue::decode), pattern)
            }

            fn first(&self) -> Option<($key, Self::Model)> {
                $tree::first_key_value(self).map(|(k, v)| (k, $crate::FuzzValue::decode(v)))
            }

            fn last(&self) -> Option<($key, Self::Model)> {
                $tree::last_key_value(self).map(|(k, v)| (k, $crate::FuzzValue::decode(v)))
            }

            fn debug_len(&self) -> usize {
                format!("{self:?}").len()
            }

            fn stats(&self) -> ::radix_core::Stats {
                $tree::stats(self)
            }

            fn compression(&self) -> ::radix_core::Compression {
                $crate::map::compression_of(self)
            }

            fn seek_both(&self, key: $key) -> [Option<($key, Self::Model)>; 2] {
                [
                    $tree::first_at_or_after(self, key)
                        .map(|(k, v)| (k, $crate::FuzzValue::decode(v))),
                    $tree::last_at_or_before(self, key)
                        .map(|(k, v)| (k, $crate::FuzzValue::decode(v))),
                ]
            }

            fn cursor_walk(
                &self,
                start: $key,
                steps: &[$crate::map::CursorStep<$key>],
            ) -> Vec<Option<($key, Self::Model)>> {
                $crate::map::cursor_on_tree($tree::cursor_at(self, start), steps)
            }

            fn compare_sets(&self, other: &[($key, Self::Model)]) -> [bool; 6] {
                let o = self.fuzz_other(other);
                [
                    $tree::is_subset(self, &o),
                    $tree::is_superset(self, &o),
                    $tree::is_disjoint(self, &o),
                    $tree::is_subset(&o, self),
                    $tree::is_superset(&o, self),
                    $tree::is_disjoint(&o, self),
                ]
            }
        }
    };
}

/// Declares the tree under test once per compression (`Tree`: none,
/// `LazyTree`: lazy, `PathTree`: path, `FullTree`: full), each with
/// [`impl_fuzz_map!`], and `fn trees(insert_only)`, one of each, for
/// [`check_trees`](crate::check_trees): the body of every `tree_*` target.
/// The uncompressed tree names its compression too, so that it stays
/// uncompressed whatever the macro's default for the key.
///
/// ```ignore
/// radix_fuzz::trees_per_compression!(key: u64, value: u64, layout: embedded, sized);
/// fuzz_target!(|input: Input| check_trees(&input, trees(input.insert_only)));
/// ```
#[macro_export]
macro_rules! trees_per_compression {
    (key: $key:ty, value: $value:ty, layout: $layout:ident, $api:ident) => {
        $crate::trees_per_compression!(@each $key, $value, $layout, $api;
            Tree: none; LazyTree: lazy; PathTree: path; FullTree: full;);
    };
    (@each $key:ty, $value:ty, $layout:ident, $api:ident;
        $($name:ident: $compression:ident;)*) => {
        $crate::under_test!();

        $(
            radix_core::radix_tree! {
                /// A tree under test.
                struct $name {
                    key: $key,
                    value: $value,
                    layout: $layout,
                    compression: $compression,
                }
            }
            $crate::impl_fuzz_map!($name, $key, $value, $api);
        )*

        /// One tree of each compression.
        fn trees(
            insert_only: bool,
        ) -> Vec<$crate::DynMap<$key, <$value as $crate::FuzzValue>::Model>> {
            vec![$(Box::new(UnderTest::<$name>::create(insert_only))),*]
        }
    };
}
