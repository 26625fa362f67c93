//! `Serialize` and `Deserialize` (the `serde` feature).
//!
//! # The format
//!
//! A tree is a *map* from key to value, written with its length and its
//! entries in ascending key order: the form `BTreeMap<K, V>` takes, so a
//! tree and a `BTreeMap` of the same entries serialize alike and each
//! reads the other's output. In JSON, whose map keys are strings, the
//! integer keys are written as decimal strings (`{"7": 1, "300": 2}`), as
//! `serde_json` does for every integer-keyed map; binary formats write
//! them as integers.
//!
//! # What deserializing checks
//!
//! Input may come from anywhere, so deserializing goes through the tree's
//! ordinary `insert` and can only ever build a tree that `insert` could
//! have built:
//!
//! - a key that does not fit the key type (`300` for a `u8` key, a
//!   negative number, a string that is no number) fails with the format's
//!   own error for it, as deserializing the bare integer would;
//! - a key given twice fails with an error naming the key (`duplicate key
//!   7 in radix tree map`), where a `BTreeMap` would silently keep the
//!   last value: the input has no single meaning, and a round trip would
//!   not give it back;
//! - keys may come in any order; ascending order is what serializing
//!   writes, not what reading requires;
//! - a value is checked by its own `Deserialize`.
//!
//! On an error the partly built tree is dropped with everything in it. The
//! length the input announces is not trusted: nothing is reserved from
//! it, so a short input cannot make the tree allocate much.
//!
//! Deserializing is offered for process-local trees
//! (`Config<Memory = LocalMemory>`), which it builds with
//! [`RawTree::new`], of sized values ([`MutableLayout`]: every layout but
//! [`Varlen`](crate::value::Varlen)). A varlen tree serializes (a
//! [`VarBytes`] as a byte string) but does not deserialize: its values are
//! unsized, copied into the tree from a reference, so there is no owned
//! value for a generic `Deserialize` to produce, and the one varlen tree
//! that matters, the TID store's, has a compact form of its own that
//! checks its entries (`tidstore`'s `serde` feature).
//!
//! # Sets
//!
//! A [`TreeSet`] (so a [`RadixSet`](crate::RadixSet) and every
//! `radix_set!` type, which are `TreeSet`s) is a *sequence* of its keys in
//! ascending order, the form `BTreeSet<K>` takes. Reading one checks what
//! reading a map does: every key fits the key type, none comes twice
//! (`duplicate key 7 in radix tree set`), any order is accepted.
//!
//! # The generated types
//!
//! A `radix_tree!` type is an alias of [`RawTree`], so these impls are its
//! own, with nothing in the expansion: the macro could not have tested the
//! feature itself, since a `#[cfg(feature = "serde")]` in its expansion
//! would test the *user's* crate's features.

use core::fmt;
use core::marker::PhantomData;

use ::serde::de::{Error as _, MapAccess, SeqAccess, Visitor};
use ::serde::ser::{SerializeMap, SerializeSeq};
use ::serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::config::Config;
use crate::mem::LocalMemory;
use crate::raw::{RawTree, ValueOf};
use crate::set::{SetConfig, TreeSet};
use crate::value::{MutableLayout, VarBytes};

/// Writes the tree as a map of its length, entries in ascending key order.
///
/// Any tree whose values serialize, unsized ones included (a varlen
/// tree's [`VarBytes`] values serialize as byte strings).
impl<C: Config> Serialize for RawTree<C>
where
    C::Key: Serialize,
    ValueOf<C>: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (key, value) in self {
            map.serialize_entry(&key, value)?;
        }
        map.end()
    }
}

/// Reads a map, in any key order, into a new tree; a duplicate key is an
/// error naming it, and a key that does not fit the key type is the
/// format's integer error (see the module documentation of what is
/// checked).
impl<'de, C> Deserialize<'de> for RawTree<C>
where
    C: Config<Memory = LocalMemory>,
    C::Layout: MutableLayout,
    C::Key: Deserialize<'de>,
    ValueOf<C>: Sized + Deserialize<'de>,
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(TreeVisitor(PhantomData))
    }
}

/// The visitor building a tree from a map.
struct TreeVisitor<C: Config>(PhantomData<fn() -> RawTree<C>>);

impl<'de, C> Visitor<'de> for TreeVisitor<C>
where
    C: Config<Memory = LocalMemory>,
    C::Layout: MutableLayout,
    C::Key: Deserialize<'de>,
    ValueOf<C>: Sized + Deserialize<'de>,
{
    type Value = RawTree<C>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a map from distinct u{} keys to values",
            <C::Key as crate::Key>::BITS
        )
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawTree<C>, A::Error> {
        let mut tree = RawTree::<C>::new();
        while let Some(key) = map.next_key::<C::Key>()? {
            // Checked before the value is read: the error then points at
            // the key, and no value is built only to be thrown away.
            if tree.contains_key(key) {
                return Err(A::Error::custom(format_args!(
                    "duplicate key {key:?} in radix tree map"
                )));
            }
            let value = map.next_value::<ValueOf<C>>()?;
            tree.insert(key, <C::Layout as MutableLayout>::input(value));
        }
        Ok(tree)
    }
}

/// Writes the set as a sequence of its keys in ascending order.
impl<C: SetConfig> Serialize for TreeSet<C>
where
    C::Key: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for key in self {
            seq.serialize_element(&key)?;
        }
        seq.end()
    }
}

/// Reads a sequence of keys, in any order, into a new set; a duplicate key
/// is an error naming it, and a key that does not fit the key type is the
/// format's integer error.
impl<'de, C> Deserialize<'de> for TreeSet<C>
where
    C: SetConfig<Memory = LocalMemory>,
    C::Key: Deserialize<'de>,
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(SetVisitor(PhantomData))
    }
}

/// The visitor building a set from a sequence.
struct SetVisitor<C: Config>(PhantomData<fn() -> TreeSet<C>>);

impl<'de, C> Visitor<'de> for SetVisitor<C>
where
    C: SetConfig<Memory = LocalMemory>,
    C::Key: Deserialize<'de>,
{
    type Value = TreeSet<C>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a sequence of distinct u{} keys",
            <C::Key as crate::Key>::BITS
        )
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TreeSet<C>, A::Error> {
        let mut set = TreeSet::<C>::new();
        while let Some(key) = seq.next_element::<C::Key>()? {
            if !set.insert(key) {
                return Err(A::Error::custom(format_args!(
                    "duplicate key {key:?} in radix tree set"
                )));
            }
        }
        Ok(set)
    }
}

/// Writes the bytes as a byte string (`serialize_bytes`): what a varlen
/// tree of `VarBytes` values writes for each value.
impl Serialize for VarBytes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.as_bytes())
    }
}
