//! The concurrent tree through `radix_tree!`: the guarantees its docs
//! give, under threads.
//!
//! - one writer inserts ascending keys while readers check that what they
//!   see is a prefix with every value right, by point lookups and by
//!   iteration;
//! - writers of disjoint ranges end with exactly the model's contents;
//! - dropping the tree gives back every byte, retired nodes included.
//!
//! Linearizability of recorded histories, and a planted bug caught, are
//! the engine's unit tests (`src/concurrent/tests.rs`), where the bug can
//! be planted.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::counting::{thread_allocs, thread_bytes};

radix_core::radix_tree! {
    /// Dense keys, embedded values.
    struct Dense { key: u64, value: u64, concurrency: rowex }
}

radix_core::radix_tree! {
    /// Sparse wide keys, values in cells.
    struct Wide { key: u128, value: String, layout: leaf, concurrency: rowex }
}

/// The value the ascending writer stores under `key`.
fn value_of(key: u64) -> u64 {
    key.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1
}

#[test]
fn readers_see_a_prefix_of_ascending_inserts() {
    let n: u64 = test_depth::pick(200_000, 30_000, 300);
    let stride: u64 = 37; // spreads keys over several last-level nodes
    let tree = Dense::new();
    // How many keys the writer has inserted, stored after each insert.
    let done = AtomicU64::new(0);
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..n {
                tree.insert(i * stride, value_of(i * stride));
                done.store(i + 1, Ordering::Release);
            }
        });
        for reader in 0..3u64 {
            let (tree, done) = (&tree, &done);
            s.spawn(move || {
                let mut probes = 0;
                while done.load(Ordering::Acquire) < n {
                    let before = done.load(Ordering::Acquire);
                    // Point reads, from above the mark downwards: once a key
                    // is present, every smaller one is.
                    let mut seen_present = false;
                    let top = (before + 50).min(n);
                    for i in (before.saturating_sub(200)..top).rev() {
                        match tree.get(i * stride) {
                            Some(v) => {
                                assert_eq!(v, value_of(i * stride), "reader {reader} key {i}");
                                seen_present = true;
                            }
                            None => assert!(
                                !seen_present && i >= before,
                                "reader {reader}: key {i} missing below a present key (mark {before})"
                            ),
                        }
                    }
                    // Iteration: ascending, each key once, every key
                    // inserted before it began, right values, nothing
                    // the writer has not reached.
                    if probes % 16 == 0 {
                        let mut next = 0;
                        for (key, value) in tree.range(..before.saturating_mul(stride)) {
                            assert_eq!(key, next * stride, "reader {reader}: iteration skipped or repeated");
                            assert_eq!(value, value_of(key));
                            next += 1;
                        }
                        assert_eq!(next, before, "reader {reader}: iteration missed keys present throughout");
                    }
                    probes += 1;
                }
            });
        }
    });
    assert_eq!(tree.len(), n as usize);
}

#[test]
fn disjoint_writers_end_at_the_model() {
    let per: u64 = test_depth::pick(50_000, 8_000, 100);
    let tree = Wide::new();
    std::thread::scope(|s| {
        for w in 0..3u128 {
            let tree = &tree;
            s.spawn(move || {
                let mut x = w as u64 + 1;
                for i in 0..per {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let key = w << 100 | u128::from(x);
                    tree.insert(key, i.to_string());
                    if i % 3 == 0 {
                        tree.update_or_insert(key, |old| format!("{}!", old.unwrap()));
                    }
                    if i % 5 == 0 {
                        assert_eq!(
                            tree.remove(key)
                                .map(|v| v.trim_end_matches('!').to_string()),
                            Some(i.to_string())
                        );
                    }
                }
            });
        }
    });
    let mut model = BTreeMap::new();
    for w in 0..3u128 {
        let mut x = w as u64 + 1;
        for i in 0..per {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = w << 100 | u128::from(x);
            let value = if i % 3 == 0 {
                format!("{i}!")
            } else {
                i.to_string()
            };
            model.insert(key, value);
            if i % 5 == 0 {
                model.remove(&key);
            }
        }
    }
    assert!(tree.iter().eq(model.clone()));
    assert!(tree.iter().rev().eq(model.into_iter().rev()));
}

#[test]
fn dropping_gives_back_every_byte() {
    let (bytes, allocs) = (thread_bytes(), thread_allocs());
    {
        // One thread, so that the counts (per thread) see every free.
        let tree = Wide::new();
        for i in 0..test_depth::pick(20_000u64, 5_000, 200) {
            let key = u128::from(i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            tree.insert(key, i.to_string());
            tree.insert(key, format!("{i}+"));
            if i % 2 == 0 {
                tree.remove(key);
            }
        }
        assert!(tree.memory_usage() > 0);
        let dense = Dense::new();
        for i in 0..5_000 {
            dense.insert(i, i);
        }
        for i in 0..5_000 {
            dense.remove(i);
        }
        // Emptied, it may still hold retired nodes waiting for their
        // epoch; the drop must give back those too.
        assert!(dense.is_empty());
    }
    assert_eq!(thread_bytes(), bytes, "bytes still held after drop");
    assert_eq!(thread_allocs(), allocs, "allocations still held after drop");
}
