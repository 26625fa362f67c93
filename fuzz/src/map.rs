//! One interface over every tree type under test.
//!
//! [`FuzzMap`] is the generated API of a `radix_tree!` type, with values
//! converted to their model representation ([`FuzzValue`]), so one harness
//! drives trees of any key width, value type and layout. It is dyn
//! compatible: the `macro_configs` target drives several trees at once as
//! `Box<dyn FuzzMap>`. [`impl_fuzz_map!`](crate::impl_fuzz_map) implements
//! it for a `radix_tree!` type by calling the type's own methods.
//!
//! [`FuzzValue`]: crate::FuzzValue

use core::fmt::Debug;
use core::ops::Bound;

use crate::keys::KeyInt;
use crate::values::ModelValue;

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
}

/// The compression of a tree's configuration: how
/// [`impl_fuzz_map!`](crate::impl_fuzz_map) reaches `NAMEConfig`, whose
/// name a `macro_rules!` macro cannot build from the tree's.
pub fn compression_of<C: radix_core::Config>(
    _: &radix_core::RawTree<C>,
) -> radix_core::Compression {
    C::COMPRESSION
}

/// Implements [`FuzzMap`] for a `radix_tree!` type by delegating to its
/// generated methods.
///
/// ```ignore
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
/// and remove return `Option<V>`, `get_mut` exists) or `varlen` (insert
/// takes `&V`, insert and remove return `bool`). It also provides
/// `Tree::create(insert_only)`, a tree over the default memory or over
/// insert-only memory (leaves in bump arenas).
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
        });
    };
    (@impl $tree:ident, $key:ty, $value:ty, { $($methods:tt)* }) => {
        impl $tree {
            /// A tree over the default memory, or over insert-only memory.
            #[allow(dead_code)]
            fn create(insert_only: bool) -> Self {
                if insert_only {
                    let specs = Self::pool_specs();
                    Self::with_memory(::radix_core::mem::LocalMemory::insert_only(
                        &specs,
                        16 << 10,
                    ))
                } else {
                    Self::new()
                }
            }
        }

        impl $crate::FuzzMap for $tree {
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
                $crate::map::compression_of($tree::as_raw(self))
            }
        }
    };
}
