//! Micro-benchmarks of the project's tree alone (criterion):
//!
//! - `RT-5/insert/F` and `RT-5/lookup/F`: WORKLOADS.md's RT-5
//!   (`fixed_height_search`, 327,680 keys) at every fanout F, so each
//!   node kind and size class is measured on its own;
//! - `RT-6/churn/F`: RT-6 (`node48_churn`) at every fanout F, 100 rounds
//!   of deletes and re-inserts per iteration (WORKLOADS.md: 10,000);
//! - `layout/insert/L` and `layout/lookup/L`: the same keys (fanout 16)
//!   with each value layout L: `embedded` (`u64` in the slot word), `leaf`
//!   (`u64` in its own allocation), `inline` (a 24-byte value in leaf
//!   nodes), `varlen-6` and `varlen-16` (`VarBytes` of 6 bytes, embedded,
//!   and of 16 bytes, a leaf).
//! - `bulk/split_off/L`, `bulk/append-disjoint/L`, `bulk/union-disjoint/L`
//!   and `bulk/append-interleaved/L`: 262,144 keys (every third integer,
//!   so last-level nodes are node48s) moved between two trees, with value
//!   layouts `embedded` and `leaf`: split at the middle key; the upper
//!   half appended to (or united with) the lower; the odd-numbered keys
//!   appended to the even-numbered ones, where every last-level node meets
//!   its counterpart. `bulk/difference-upper/L` and
//!   `bulk/difference-odd/L` remove the upper half and the odd-numbered
//!   keys from the whole set; `bulk/intersect-upper/L` and
//!   `bulk/intersect-odd/L` keep only them.

mod common;

use std::hint::black_box;

use benches::peers::RtMap;
use benches::peers::project::ProjectMap;
use benches::workloads::RtCase;
use benches::workloads::rt::{RT5_FANOUTS, RT5_KEYS, RT6_FANOUTS, RtData, fixed_height_keys};
use criterion::measurement::WallTime;
use criterion::{BatchSize, BenchmarkGroup, Criterion, criterion_group, criterion_main};
use radix_core::value::VarBytes;

radix_core::radix_tree! {
    /// `u64` values embedded in the slot word.
    struct Embedded {
        key: u64,
        value: u64,
        layout: embedded,
    }
}

radix_core::radix_tree! {
    /// `u64` values, each in its own leaf allocation.
    struct Leaf {
        key: u64,
        value: u64,
        layout: leaf,
    }
}

/// A 24-byte value.
#[derive(Debug, Clone, PartialEq)]
struct Triple {
    a: u64,
    b: u64,
    c: u64,
}

radix_core::radix_tree! {
    /// 24-byte values inline in leaf nodes.
    struct Inline {
        key: u64,
        value: Triple,
        layout: inline,
    }
}

radix_core::radix_tree! {
    /// Variable-length byte strings: embedded up to 7 bytes, else a leaf.
    struct Varlen {
        key: u64,
        value: VarBytes,
        layout: varlen,
    }
}

radix_core::radix_tree! {
    /// `u64` values embedded in the slot word, with removal.
    struct MovableEmbedded {
        key: u64,
        value: u64,
        layout: embedded,
        delete: true,
    }
}

radix_core::radix_tree! {
    /// `u64` values in leaves of their own, with removal.
    struct MovableLeaf {
        key: u64,
        value: u64,
        layout: leaf,
        delete: true,
    }
}

/// The fanout the layout benchmarks use.
const LAYOUT_FANOUT: u64 = 16;

fn rt5(c: &mut Criterion) {
    let mut group = c.benchmark_group("RT-5");
    common::configure(&mut group);
    for fanout in RT5_FANOUTS {
        let pairs = fixed_height_keys(fanout, RT5_KEYS);
        group.bench_function(format!("insert/{fanout}"), |b| {
            b.iter_with_large_drop(|| {
                let mut tree = Embedded::new();
                for &(k, v) in &pairs {
                    tree.insert(k, v);
                }
                tree
            })
        });
        let tree: Embedded = pairs.iter().copied().collect();
        group.bench_function(format!("lookup/{fanout}"), |b| {
            b.iter(|| {
                let mut sum = 0u64;
                for &(k, _) in &pairs {
                    sum = sum.wrapping_add(*tree.get(k).expect("every key present"));
                }
                black_box(sum)
            })
        });
    }
    group.finish();
}

/// RT-6 churn rounds per iteration.
const RT6_ROUNDS: u64 = 100;

fn rt6(c: &mut Criterion) {
    let mut group = c.benchmark_group("RT-6");
    common::configure(&mut group);
    for fanout in RT6_FANOUTS {
        let data = RtData::generate(&RtCase::Node48Churn {
            fanout,
            rounds: RT6_ROUNDS,
        });
        let mut map = ProjectMap::new();
        data.load(&mut map);
        group.bench_function(format!("churn/{fanout}"), |b| {
            b.iter(|| black_box(data.churn(&mut map)))
        });
    }
    group.finish();
}

/// Insert and lookup benchmarks for one layout: `build` makes a tree from
/// the keys, `probe` looks one key up and returns a number from its value.
fn layout_pair<T>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    keys: &[u64],
    build: impl Fn(&[u64]) -> T,
    probe: impl Fn(&T, u64) -> u64,
) {
    group.bench_function(format!("insert/{name}"), |b| {
        b.iter_with_large_drop(|| build(keys))
    });
    let tree = build(keys);
    group.bench_function(format!("lookup/{name}"), |b| {
        b.iter(|| {
            let mut sum = 0u64;
            for &k in keys {
                sum = sum.wrapping_add(probe(&tree, k));
            }
            black_box(sum)
        })
    });
}

fn layouts(c: &mut Criterion) {
    let keys: Vec<u64> = fixed_height_keys(LAYOUT_FANOUT, RT5_KEYS)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    let short: Vec<Box<VarBytes>> = keys
        .iter()
        .map(|k| VarBytes::new(&k.to_le_bytes()[..6]).expect("short"))
        .collect();
    let long: Vec<Box<VarBytes>> = keys
        .iter()
        .map(|k| {
            let mut bytes = [0u8; 16];
            bytes[..8].copy_from_slice(&k.to_le_bytes());
            bytes[8..].copy_from_slice(&k.to_be_bytes());
            VarBytes::new(&bytes).expect("16 bytes")
        })
        .collect();

    let mut group = c.benchmark_group("layout");
    common::configure(&mut group);
    layout_pair(
        &mut group,
        "embedded",
        &keys,
        |keys| {
            let mut t = Embedded::new();
            for &k in keys {
                t.insert(k, k);
            }
            t
        },
        |t, k| *t.get(k).expect("present"),
    );
    layout_pair(
        &mut group,
        "leaf",
        &keys,
        |keys| {
            let mut t = Leaf::new();
            for &k in keys {
                t.insert(k, k);
            }
            t
        },
        |t, k| *t.get(k).expect("present"),
    );
    layout_pair(
        &mut group,
        "inline",
        &keys,
        |keys| {
            let mut t = Inline::new();
            for &k in keys {
                t.insert(
                    k,
                    Triple {
                        a: k,
                        b: !k,
                        c: k >> 1,
                    },
                );
            }
            t
        },
        |t, k| {
            let v = t.get(k).expect("present");
            v.a ^ v.b ^ v.c
        },
    );
    for (name, values) in [("varlen-6", &short), ("varlen-16", &long)] {
        layout_pair(
            &mut group,
            name,
            &keys,
            |keys| {
                let mut t = Varlen::new();
                for (&k, v) in keys.iter().zip(values) {
                    t.insert(k, v);
                }
                t
            },
            |t, k| u64::from(t.get(k).expect("present").as_bytes()[0]),
        );
    }
    group.finish();
}

/// Keys the bulk benchmarks move.
const BULK_KEYS: u64 = 1 << 18;

/// The operations the bulk benchmarks time, for one tree type.
struct BulkOps<T> {
    /// Builds a tree from keys (each key its own value).
    make: fn(&mut dyn Iterator<Item = u64>) -> T,
    split_off: fn(&mut T, u64) -> T,
    append: fn(&mut T, &mut T),
    union: fn(&mut T, T),
    difference: fn(&mut T, &T),
    intersect: fn(&mut T, &T),
}

/// The [`BulkOps`] of a generated map type of `u64` values.
macro_rules! bulk_ops {
    ($tree:ty) => {
        BulkOps {
            make: |keys| keys.map(|k| (k, k)).collect::<$tree>(),
            split_off: |t, k| t.split_off(k),
            append: |a, b| a.append(b),
            union: |a, b| a.union_with(b, |_, ours, theirs| *ours ^= theirs),
            difference: |a, b| a.difference_with(b),
            intersect: |a, b| a.intersect_with(b, |_, ours, theirs| *ours ^= theirs),
        }
    };
}

/// The bulk benchmarks for one tree type.
fn bulk_of<T: Clone>(group: &mut BenchmarkGroup<'_, WallTime>, name: &str, ops: BulkOps<T>) {
    let BulkOps {
        make,
        split_off,
        append,
        union,
        difference,
        intersect,
    } = ops;
    let key = |i: u64| i * 3;
    let whole = make(&mut (0..BULK_KEYS).map(key));
    let low = make(&mut (0..BULK_KEYS / 2).map(key));
    let high = make(&mut (BULK_KEYS / 2..BULK_KEYS).map(key));
    let even = make(&mut (0..BULK_KEYS).step_by(2).map(key));
    let odd = make(&mut (1..BULK_KEYS).step_by(2).map(key));
    let middle = key(BULK_KEYS / 2);
    group.bench_function(format!("split_off/{name}"), |b| {
        b.iter_batched(
            || whole.clone(),
            |mut t| {
                let upper = split_off(&mut t, middle);
                (t, upper)
            },
            BatchSize::LargeInput,
        )
    });
    for (case, a, b) in [
        ("append-disjoint", &low, &high),
        ("append-interleaved", &even, &odd),
    ] {
        group.bench_function(format!("{case}/{name}"), |bench| {
            bench.iter_batched(
                || (a.clone(), b.clone()),
                |(mut a, mut b)| {
                    append(&mut a, &mut b);
                    (a, b)
                },
                BatchSize::LargeInput,
            )
        });
    }
    let subtractions = [("difference", difference), ("intersect", intersect)];
    for (op, subtract) in subtractions {
        for (case, b) in [("upper", &high), ("odd", &odd)] {
            group.bench_function(format!("{op}-{case}/{name}"), |bench| {
                bench.iter_batched(
                    || whole.clone(),
                    |mut a| {
                        subtract(&mut a, b);
                        a
                    },
                    BatchSize::LargeInput,
                )
            });
        }
    }
    group.bench_function(format!("union-disjoint/{name}"), |bench| {
        bench.iter_batched(
            || (low.clone(), high.clone()),
            |(mut a, b)| {
                union(&mut a, b);
                a
            },
            BatchSize::LargeInput,
        )
    });
}

fn bulk(c: &mut Criterion) {
    let mut group = c.benchmark_group("bulk");
    common::configure(&mut group);
    bulk_of(&mut group, "embedded", bulk_ops!(MovableEmbedded));
    bulk_of(&mut group, "leaf", bulk_ops!(MovableLeaf));
    group.finish();
}

criterion_group!(micro, rt5, rt6, layouts, bulk);
criterion_main!(micro);
