//! What the engine's unit tests share: a configuration declared in one
//! line (with range values too), keys of any width built from and widened to `u128`, and a seeded
//! generator.

use crate::Key;

/// Declares a local-memory test configuration with delete
/// (`Removable`): `test_config!(Name, key, layout, classes)` without
/// compression, or with a `Compression` variant as a fifth argument.
macro_rules! test_config {
    ($name:ident, $key:ty, $layout:ty, $classes:expr) => {
        $crate::raw::test_keys::test_config!($name, $key, $layout, $classes, None);
    };
    ($name:ident, $key:ty, $layout:ty, $classes:expr, $compression:ident) => {
        enum $name {}
        impl $crate::Config for $name {
            type Key = $key;
            type Layout = $layout;
            type Memory = $crate::mem::LocalMemory;
            const SIZE_CLASSES: $crate::SizeClasses = $classes;
            const DELETE: bool = true;
            const COMPRESSION: $crate::Compression = $crate::Compression::$compression;
        }
        impl $crate::config::Removable for $name {}
    };
}
pub(crate) use test_config;

/// Declares a test configuration with range values and delete, on local
/// memory or, with a fourth argument, on another back end:
/// `ranged_config!(Name, key, layout)` or `ranged_config!(Name, key,
/// layout, SharedMemory)`.
macro_rules! ranged_config {
    ($name:ident, $key:ty, $layout:ty) => {
        $crate::raw::test_keys::ranged_config!($name, $key, $layout, $crate::mem::LocalMemory);
    };
    ($name:ident, $key:ty, $layout:ty, $memory:ty) => {
        enum $name {}
        impl $crate::Config for $name {
            type Key = $key;
            type Layout = $layout;
            type Memory = $memory;
            const SIZE_CLASSES: $crate::SizeClasses = $crate::SizeClasses::DEFAULT;
            const DELETE: bool = true;
            const RANGES: bool = true;

            fn same_value(a: &$crate::ValueOf<Self>, b: &$crate::ValueOf<Self>) -> bool {
                a == b
            }

            unsafe fn clone_value_slot(
                slot: core::ptr::NonNull<<$layout as $crate::value::ValueLayout>::Slot>,
                mem: &mut $memory,
            ) -> Result<
                <$layout as $crate::value::ValueLayout>::Slot,
                <$memory as $crate::mem::Memory>::Error,
            > {
                // SAFETY: the engine's contract: a live slot made on `mem`.
                unsafe { <$layout as $crate::value::CloneLayout>::clone_slot_in(slot, mem) }
            }
        }
        impl $crate::config::Removable for $name {}
    };
}
pub(crate) use ranged_config;

/// The key of width `K` holding the low bits of `x`.
pub(crate) fn key<K: Key>(x: u128) -> K {
    let mut k = K::MIN;
    let mut shift = 0;
    while shift < K::BITS {
        k = k.with_chunk(shift, (x >> shift) as u8);
        shift += 8;
    }
    k
}

/// `k` as a `u128`.
pub(crate) fn wide<K: Key>(k: K) -> u128 {
    let mut x = 0u128;
    let mut shift = 0;
    while shift < K::BITS {
        x |= u128::from(k.chunk(shift)) << shift;
        shift += 8;
    }
    x
}

/// The splitmix64 generator, seeded explicitly so every failure
/// reproduces.
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(crate) fn next_u128(&mut self) -> u128 {
        (u128::from(self.next()) << 64) | u128::from(self.next())
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
