//! `get_each` gives `get`'s answers in every mode it picks: pipelined
//! (a tree of at most four levels over 1 MiB), sharing walks (a taller
//! one), and one key at a time (small or path-compressed trees), and
//! through a `radix_tree!` type.

use radix_core::RadixMap;

radix_core::radix_tree! {
    /// Block number to a word, as a user declares it.
    struct BlockWords {
        key: u32,
        value: u64,
    }
}

fn scramble(keys: &mut [u64]) {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    for i in (1..keys.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        keys.swap(i, (state % (i as u64 + 1)) as usize);
    }
}

/// The keys in ascending order, then scrambled, then each plus one (mostly
/// absent), then keys far outside the tree.
fn probes(keys: &[u64]) -> Vec<u64> {
    let mut scrambled = keys.to_vec();
    scramble(&mut scrambled);
    let neighbours = scrambled.iter().map(|k| k + 1);
    let far = [u64::MAX, 1 << 40, 1 << 33, 12345];
    keys.iter()
        .copied()
        .chain(scrambled.clone())
        .chain(neighbours)
        .chain(far)
        .collect()
}

fn check(map: &RadixMap<u64, u64>, probes: &[u64]) {
    let mut answers = Vec::with_capacity(probes.len());
    map.get_each(probes, |&k| k, |&k, v| answers.push((k, v.copied())));
    let expected: Vec<(u64, Option<u64>)> =
        probes.iter().map(|&k| (k, map.get(k).copied())).collect();
    assert_eq!(answers, expected);
    assert!(answers.iter().any(|a| a.1.is_some()) && answers.iter().any(|a| a.1.is_none()));
}

#[test]
fn a_large_shallow_tree_pipelines_the_same_answers() {
    // 24-bit keys with every other run of 1,000 absent: three levels, over
    // 1 MiB, walks ending above the last level about half the time.
    let keys: Vec<u64> = (0..600_000u64).filter(|k| k / 1000 % 2 == 0).collect();
    let map: RadixMap<u64, u64> = keys.iter().map(|&k| (k, k * 3)).collect();
    assert!(map.memory_usage() > 1 << 20 && map.height() <= 4);
    check(&map, &probes(&keys));
}

#[test]
fn a_large_tall_tree_shares_walks_with_the_same_answers() {
    // RT-5's shape at fanout 64: five levels, over 1 MiB.
    let keys: Vec<u64> = (1..=64u64)
        .flat_map(|i| {
            (1..=64u64)
                .flat_map(move |j| (1..=64u64).map(move |k| (1 << 32) | (i << 16) | (j << 8) | k))
        })
        .collect();
    let map: RadixMap<u64, u64> = keys.iter().map(|&k| (k, !k)).collect();
    assert!(map.memory_usage() > 1 << 20 && map.height() > 4);
    check(&map, &probes(&keys));
}

#[test]
fn small_and_compressed_trees_answer_one_key_at_a_time() {
    let keys: Vec<u64> = (0..500u64).map(|k| k * 977).collect();
    let map: RadixMap<u64, u64> = keys.iter().map(|&k| (k, k)).collect();
    check(&map, &probes(&keys));

    let wide: Vec<u128> = (0..2000u128)
        .map(|k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835))
        .collect();
    let map: RadixMap<u128, u32> = wide
        .iter()
        .enumerate()
        .map(|(i, &k)| (k, i as u32))
        .collect();
    let mut answers = Vec::new();
    let probes: Vec<u128> = wide.iter().flat_map(|&k| [k, k ^ 1]).collect();
    map.get_each(&probes, |&k| k, |_, v| answers.push(v.copied()));
    let expected: Vec<Option<u32>> = probes.iter().map(|&k| map.get(k).copied()).collect();
    assert_eq!(answers, expected);
}

#[test]
fn a_declared_type_has_get_each() {
    let mut words = BlockWords::new();
    for block in (0..300_000u32).step_by(3) {
        words.insert(block, u64::from(block) << 1);
    }
    let probes: Vec<u32> = (0..300_000u32).rev().step_by(7).collect();
    let mut hits = 0;
    words.get_each(
        &probes,
        |&b| b,
        |&b, v| {
            assert_eq!(v.copied(), (b % 3 == 0).then_some(u64::from(b) << 1));
            hits += usize::from(v.is_some());
        },
    );
    assert_eq!(hits, probes.iter().filter(|&&b| b % 3 == 0).count());
}
