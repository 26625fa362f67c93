//! Ready-made generic types for users who need no custom configuration:
//! [`RadixMap<K, V>`] and [`RadixSet<K>`].
//!
//! They are the engine with [`DefaultConfig`]: the `auto` value layout
//! (the value in its slot word when it fits, else a leaf), the default
//! size classes, delete enabled, local memory, and the key type's default
//! compression (none, except full for `u128`), exactly what `radix_tree!`
//! chooses when given only a key and a value. No code is written twice:
//! `RadixMap` *is* [`RawTree`], and `RadixSet` is the [`TreeSet`] wrapper
//! any unit-valued configuration gets.
//!
//! ```
//! use radix_core::{RadixMap, RadixSet};
//!
//! let mut words: RadixMap<u64, &str> = RadixMap::new();
//! words.insert(7, "seven");
//! *words.entry(8).or_insert("eight") = "ocho";
//! assert_eq!(words[8], "ocho");
//!
//! let evens: RadixSet<u32> = (0..100).step_by(2).collect();
//! let threes: RadixSet<u32> = (0..100).step_by(3).collect();
//! let sixes: Vec<u32> = evens.intersection(&threes).collect();
//! assert_eq!(sixes[..4], [0, 6, 12, 18]);
//! ```

use core::convert::Infallible;
use core::marker::PhantomData;

use crate::config::{Config, Removable};
use crate::mem::LocalMemory;
use crate::set::TreeSet;
use crate::value::Auto;
use crate::{Compression, Key, RawTree, SizeClasses};

/// The configuration of [`RadixMap`] and [`RadixSet`]: what `radix_tree!`
/// chooses for key `K` and value `V` when given nothing else.
pub struct DefaultConfig<K, V>(PhantomData<fn() -> (K, V)>, Infallible);

impl<K: Key, V: 'static> Config for DefaultConfig<K, V> {
    type Key = K;
    type Layout = Auto<V>;
    type Memory = LocalMemory;
    const SIZE_CLASSES: SizeClasses = SizeClasses::DEFAULT;
    const DELETE: bool = true;
    const COMPRESSION: Compression = Compression::default_for(K::BITS);
}

impl<K: Key, V: 'static> Removable for DefaultConfig<K, V> {}

/// An ordered map from integer keys to values, in the default
/// configuration: a drop-in for `BTreeMap<K, V>` with keys passed by
/// value. See [`RawTree`] for its methods.
///
/// ```
/// use radix_core::RadixMap;
///
/// let mut ids: RadixMap<u128, &str> = RadixMap::new();
/// ids.insert(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef, "a UUID");
/// assert_eq!(ids.len(), 1);
/// assert_eq!(ids.first_key_value().map(|(_, v)| *v), Some("a UUID"));
/// ```
pub type RadixMap<K, V> = RawTree<DefaultConfig<K, V>>;

/// An ordered set of integer keys, in the default configuration: a drop-in
/// for `BTreeSet<K>` with keys passed by value. See [`TreeSet`] for its
/// methods.
///
/// ```
/// use radix_core::RadixSet;
///
/// let mut seen: RadixSet<u16> = RadixSet::new();
/// assert!(seen.insert(80));
/// assert!(!seen.insert(80));
/// assert_eq!(seen.iter().collect::<Vec<_>>(), [80]);
/// ```
pub type RadixSet<K> = TreeSet<DefaultConfig<K, ()>>;
