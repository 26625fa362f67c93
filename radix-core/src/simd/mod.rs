//! Searching node16's chunk array: one interface, three implementations.
//!
//! A node16 keeps up to 32 chunks sorted in a 32-byte array. Following
//! PostgreSQL's measurements, the search compares the *whole* array against
//! the broadcast key with two 16-byte vector loads instead of looping below
//! the count: no branch depends on the count, and the loads are the same for
//! every class. PostgreSQL then masks the result by the count; here the
//! array is *padded* instead: the bytes past the count repeat the last
//! chunk. A repeat can match only where the last chunk itself matches, and
//! the last chunk comes first, so the lowest set bit of the unmasked
//! result is already the answer, and a lookup never reads the count.
//!
//! - `sse2` on x86-64 (SSE2 is part of the baseline there), and on 32-bit
//!   x86 when SSE2 is enabled;
//! - `neon` on AArch64;
//! - [`generic`] everywhere else, and the reference the others are tested
//!   against.
//!
//! Only the module for the target being built exists.
//!
//! Both operations are exact and unsigned: `find` returns the index of the
//! equal chunk, `lower_bound` the index of the first chunk `>=` the key.
//!
//! The interface also carries the one cache hint the search uses,
//! `prefetch`: SSE has a prefetch instruction, the portable version does
//! nothing (stable Rust has no AArch64 prefetch intrinsic), and neither does
//! Miri.

/// Length of the chunk array every node16 carries.
pub const GROUP_BYTES: usize = 32;

// Where a vector version serves, the portable one is only the reference
// its tests compare against.
#[cfg(any(
    test,
    not(any(
        target_arch = "x86_64",
        all(target_arch = "x86", target_feature = "sse2"),
        all(target_arch = "aarch64", target_endian = "little")
    ))
))]
pub mod generic;

#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "x86", target_feature = "sse2")
))]
pub mod sse2;

#[cfg(all(target_arch = "aarch64", target_endian = "little"))]
pub mod neon;

#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "x86", target_feature = "sse2")
))]
use sse2 as imp;

#[cfg(all(target_arch = "aarch64", target_endian = "little"))]
use neon as imp;

#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "x86", target_feature = "sse2"),
    all(target_arch = "aarch64", target_endian = "little")
)))]
use generic as imp;

/// Asks the CPU to start loading the cache line holding `addr`. A hint: it
/// never faults and reads nothing, so `addr` may lie outside any allocation
/// (compute it with `wrapping_add`).
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn prefetch(addr: *const u8) {
    #[cfg(all(
        not(miri),
        any(
            target_arch = "x86_64",
            all(target_arch = "x86", target_feature = "sse2")
        )
    ))]
    sse2::prefetch(addr);
    #[cfg(not(all(
        not(miri),
        any(
            target_arch = "x86_64",
            all(target_arch = "x86", target_feature = "sse2")
        )
    )))]
    let _ = addr;
}

/// A bit per byte of `chunks` equal to `key`: the search the concurrent
/// engine's small nodes run on a copy of their chunk words, which are
/// neither sorted nor padded (`src/concurrent/node.rs`).
#[cfg(feature = "std")]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn eq_mask(chunks: &[u8; GROUP_BYTES], key: u8) -> u32 {
    imp::eq_mask(chunks, key)
}

/// Index of `key` in a padded chunk array (module docs), if present.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn find(chunks: &[u8; GROUP_BYTES], key: u8) -> Option<usize> {
    let hits = imp::eq_mask(chunks, key);
    (hits != 0).then(|| hits.trailing_zeros() as usize)
}

/// Where `key` is in a padded chunk array, without a branch: whether it is
/// there, and its index if so, else [`GROUP_BYTES`] (one past the array:
/// an address computed from it must be selected away, never read).
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn position(chunks: &[u8; GROUP_BYTES], key: u8) -> (bool, usize) {
    let hits = imp::eq_mask(chunks, key);
    (hits != 0, hits.trailing_zeros() as usize)
}

/// Sets `chunks[from..]` to `key` (`from <= 32`), keeping the bytes
/// before: how the padding is rewritten when a node gains or loses its last
/// chunk. A few vector stores or a blend, where `fill` of a run-time
/// length is a call to `memset` and a byte loop becomes a chain of
/// compares.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn pad(chunks: &mut [u8; GROUP_BYTES], from: usize, key: u8) {
    debug_assert!(from <= GROUP_BYTES);
    imp::pad(chunks, from, key)
}

/// Index of the first chunk `>= key` in a padded chunk array of `count`
/// sorted chunks (module docs), or `count` if none is.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn lower_bound(chunks: &[u8; GROUP_BYTES], count: usize, key: u8) -> usize {
    let ge = imp::ge_mask(chunks, key);
    if ge == 0 {
        count
    } else {
        ge.trailing_zeros() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::quickcheck;

    /// A padded group of the distinct values of `raw` (at least one).
    fn sorted_group(mut raw: Vec<u8>, first: u8) -> ([u8; GROUP_BYTES], usize) {
        raw.push(first);
        raw.sort_unstable();
        raw.dedup();
        raw.truncate(GROUP_BYTES);
        let mut group = [0u8; GROUP_BYTES];
        group[..raw.len()].copy_from_slice(&raw);
        let last = raw[raw.len() - 1];
        group[raw.len()..].fill(last);
        (group, raw.len())
    }

    fn reference_find(g: &[u8; GROUP_BYTES], n: usize, key: u8) -> Option<usize> {
        g[..n].iter().position(|&c| c == key)
    }

    fn reference_lower_bound(g: &[u8; GROUP_BYTES], n: usize, key: u8) -> usize {
        g[..n].iter().position(|&c| c >= key).unwrap_or(n)
    }

    quickcheck! {
        fn selected_matches_reference(raw: Vec<u8>, first: u8, key: u8) -> bool {
            let (g, n) = sorted_group(raw, first);
            find(&g, key) == reference_find(&g, n, key)
                && lower_bound(&g, n, key) == reference_lower_bound(&g, n, key)
        }

        fn vector_masks_equal_generic_masks(raw: Vec<u8>, first: u8, key: u8) -> bool {
            let (g, _) = sorted_group(raw, first);
            imp::eq_mask(&g, key) == generic::eq_mask(&g, key)
                && imp::ge_mask(&g, key) == generic::ge_mask(&g, key)
        }
    }

    /// Every SIMD path against the scalar one and the padded search
    /// against the reference, on every key and every count, including
    /// chunks with the high bit set (the signedness trap).
    #[test]
    fn pad_rewrites_exactly_the_tail() {
        let original: [u8; GROUP_BYTES] = core::array::from_fn(|i| i as u8 * 3 + 1);
        for from in 0..=GROUP_BYTES {
            let mut vector = original;
            pad(&mut vector, from, 0xEE);
            let mut portable = original;
            generic::pad(&mut portable, from, 0xEE);
            let mut expected = original;
            expected[from..].fill(0xEE);
            assert_eq!(vector, expected, "from {from}");
            assert_eq!(portable, expected, "from {from}");
        }
    }

    #[test]
    fn padded_search_on_every_count_and_key() {
        let full: Vec<u8> = (0..GROUP_BYTES as u8).map(|i| i * 8 + 1).collect(); // 1..=249
        // Under Miri, every key but a sample of counts around the halves.
        let counts: Vec<usize> = if cfg!(miri) {
            vec![1, 15, 16, 17, 31, 32]
        } else {
            (1..=GROUP_BYTES).collect()
        };
        for &n in &counts {
            let (g, len) = sorted_group(full[..n].to_vec(), full[0]);
            assert_eq!(len, n);
            for key in 0..=255u8 {
                assert_eq!(imp::eq_mask(&g, key), generic::eq_mask(&g, key), "eq {key}");
                assert_eq!(imp::ge_mask(&g, key), generic::ge_mask(&g, key), "ge {key}");
                assert_eq!(
                    find(&g, key),
                    reference_find(&g, n, key),
                    "find {key} in {n}"
                );
                assert_eq!(
                    lower_bound(&g, n, key),
                    reference_lower_bound(&g, n, key),
                    "lower_bound {key} in {n}"
                );
            }
        }
    }
}
