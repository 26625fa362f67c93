//! Small vacuum runs checked against arithmetic and against each other.

use vacuum_sim::{
    DeadItemsArray, DeadPattern, IndexOrder, Progress, RandomOrder, Scenario, StoreKind, run,
};

const BOTH: [IndexOrder; 2] = [IndexOrder::Correlated, IndexOrder::Random];

fn scenario(
    blocks: u32,
    tpp: u16,
    dead: DeadPattern,
    indexes: &[IndexOrder],
    limit: u64,
) -> Scenario {
    Scenario::custom(blocks, tpp, dead, indexes.to_vec(), limit)
}

/// The array's passes are `ceil(dead × 6 / min(limit, 1 GiB))`.
///
/// That is exact only when every pass but the last fills the array to the
/// byte, and page granularity decides whether it does: the array takes a
/// page's dead TIDs whole, and stops for an index pass when the next page's
/// do not fit. With `d` dead TIDs on each page (pages with none are
/// skipped) and a capacity of `c = limit / 6` TIDs, a pass holds
/// `floor(c / d)` pages, that is `c - c mod d` TIDs. When `d` divides `c`
/// nothing is wasted, every pass but the last holds exactly `c` TIDs, and
/// the passes are `ceil(dead / c)`; when the limit is also a multiple of 6,
/// `c × 6 = limit` and that is the formula. Otherwise the `c mod d` slots
/// left empty in each pass can add passes. The shapes below are chosen so
/// that `d` divides `c` and 6 divides the limit.
#[test]
fn array_passes_match_the_formula() {
    // (pattern, tuples per page, dead per dead page). Every limit holds at
    // least one full page (tuples per page × 6 bytes), as the array needs.
    let shapes = [
        (DeadPattern::All, 100, 100),
        (DeadPattern::Every(4), 100, 25),
        (DeadPattern::Tail(0.3), 60, 60),
        (DeadPattern::Every(1), 157, 157),
    ];
    // 2,000 pages at full depth; 600 still take two passes at 599 a pass.
    let large = test_depth::pick(2_000, 600, 600);
    for (dead, tpp, per_page) in shapes {
        for (blocks, pages_per_pass) in [
            (200, 4u64),
            (large, 37),
            (large, 150),
            (large, 599),
            (large, 5_000),
        ] {
            let limit = 6 * per_page * pages_per_pass;
            let s = scenario(blocks, tpp, dead, &[IndexOrder::Random], limit);
            let stats = run(&s, StoreKind::Array, &Progress::hidden()).unwrap();
            let expected = (stats.dead_tids * 6).div_ceil(limit.min(DeadItemsArray::MAX_ALLOC));
            assert_eq!(
                u64::from(stats.index_passes),
                expected,
                "{dead} tpp={tpp} limit={limit}: dead={}",
                stats.dead_tids
            );
            assert_eq!(stats.check(), Ok(()));
            // The array's peak is its allocation: the limit, unless the
            // whole table needs less.
            assert_eq!(stats.peak_bytes, limit.min(6 * s.total_tuples()));
        }
    }
}

/// When the page size does not divide the capacity, page granularity adds
/// passes: 1,000 bytes hold 166 TIDs, 1 page of 100.
#[test]
fn array_wastes_the_tail_of_each_pass() {
    let s = scenario(20, 100, DeadPattern::All, &[IndexOrder::Correlated], 1_000);
    let stats = run(&s, StoreKind::Array, &Progress::hidden()).unwrap();
    assert_eq!((stats.dead_tids * 6).div_ceil(1_000), 12);
    assert_eq!(stats.index_passes, 20);
    assert_eq!(stats.peak_bytes, 996);
    assert_eq!(stats.check(), Ok(()));
}

#[test]
fn array_too_small_for_one_page_is_an_error() {
    let s = scenario(10, 100, DeadPattern::All, &BOTH, 599);
    let err = run(&s, StoreKind::Array, &Progress::hidden()).unwrap_err();
    assert!(err.to_string().contains("at least 600 bytes"), "{err}");
}

/// A dead pattern that repeats page after page (every third tuple) gives
/// every page the same entry: the store holds runs of them as range
/// values, and one pass suffices where the array needs many.
#[test]
fn a_repeating_dead_pattern_is_stored_as_ranges() {
    let limit = 64 << 10;
    let s = scenario(2_000, 100, DeadPattern::Every(3), &BOTH, limit);
    let ts = run(&s, StoreKind::TidStore, &Progress::hidden()).unwrap();
    assert_eq!(ts.check(), Ok(()));
    // One pass. (An insert-only store's entries of 33 offsets are leaves
    // in bump arenas, whose space a merge does not give back: the ranges
    // save the slots and nodes, not the leaves.)
    assert_eq!(ts.index_passes, 1);
    assert!(ts.peak_bytes <= limit, "peak {}", ts.peak_bytes);
    let array = run(&s, StoreKind::Array, &Progress::hidden()).unwrap();
    assert!(array.index_passes > 1);
    assert_eq!(ts.dead_tids, array.dead_tids);
}

/// With a tight limit the TID store needs several passes too, but fewer
/// than the array, whose TIDs cost 6 bytes each.
#[test]
fn tidstore_passes_under_a_tight_limit() {
    for dead in [DeadPattern::Random(0.3), DeadPattern::Random(0.6)] {
        let limit = 64 << 10;
        let s = scenario(2_000, 100, dead, &BOTH, limit);
        let ts = run(&s, StoreKind::TidStore, &Progress::hidden()).unwrap();
        assert_eq!(ts.check(), Ok(()));
        assert!(ts.index_passes > 1, "{dead}: {} passes", ts.index_passes);
        // It ran a pass because it went over the limit.
        assert!(ts.peak_bytes > limit, "{dead}: peak {}", ts.peak_bytes);
        let array = run(&s, StoreKind::Array, &Progress::hidden()).unwrap();
        assert_eq!(array.check(), Ok(()));
        assert!(
            ts.index_passes < array.index_passes,
            "{dead}: tidstore {} passes, array {}",
            ts.index_passes,
            array.index_passes
        );
        assert_eq!(ts.dead_tids, array.dead_tids);
    }
    // Roomy limit: one pass.
    let s = scenario(2_000, 100, DeadPattern::All, &BOTH, 64 << 20);
    let ts = run(&s, StoreKind::TidStore, &Progress::hidden()).unwrap();
    assert_eq!(ts.index_passes, 1);
    assert!(ts.peak_bytes < 64 << 20);
}

/// Every store, index set and pressure for one dead pattern: the index
/// passes find every dead TID once per index. One test per pattern, so
/// that they run in parallel.
fn found_equals_dead_times_indexes(dead: DeadPattern) {
    let index_sets: [&[IndexOrder]; 3] = [
        &BOTH,
        &[IndexOrder::Random],
        &[
            IndexOrder::Random,
            IndexOrder::Correlated,
            IndexOrder::Random,
        ],
    ];
    // By default 1,000 pages, and the tight limit for the array only: on
    // fewer than 2,000 it sits below the TID store's smallest size, which
    // then passes after every page (hundreds of index passes).
    let blocks = test_depth::pick(2_000, 1_000, 1_000);
    let tight_kinds = test_depth::pick(
        &StoreKind::ALL[..],
        &[StoreKind::Array],
        &[StoreKind::Array],
    );
    for indexes in index_sets {
        let expected_dead = scenario(blocks, 120, dead, indexes, 1).heap().count_dead();
        // About four array passes; 16 KiB, several TID store passes
        // (the array would need too many for a quick test); and room
        // for everything.
        let tight = (expected_dead * 6 / 4).max(120 * 6);
        let runs: [(u64, &[StoreKind]); 3] = [
            (tight, tight_kinds),
            (16 << 10, &[StoreKind::TidStore]),
            (1 << 20, &StoreKind::ALL),
        ];
        for (limit, kinds) in runs {
            let s = scenario(blocks, 120, dead, indexes, limit);
            for &kind in kinds {
                let stats = run(&s, kind, &Progress::hidden()).unwrap();
                let what = format!("{kind} {dead} {indexes:?} limit={limit}");
                assert_eq!(stats.dead_tids, expected_dead, "{what}");
                assert_eq!(stats.found, expected_dead * indexes.len() as u64, "{what}");
                assert!(
                    stats.found_per_index.iter().all(|&f| f == expected_dead),
                    "{what}"
                );
                assert_eq!(stats.heap_vacuumed, expected_dead, "{what}");
                assert_eq!(stats.check(), Ok(()), "{what}");
            }
        }
    }
}

#[test]
fn found_equals_dead_times_indexes_all_dead() {
    found_equals_dead_times_indexes(DeadPattern::All);
}

#[test]
fn found_equals_dead_times_indexes_tail() {
    found_equals_dead_times_indexes(DeadPattern::Tail(0.2));
}

#[test]
fn found_equals_dead_times_indexes_random() {
    found_equals_dead_times_indexes(DeadPattern::Random(0.05));
}

#[test]
fn found_equals_dead_times_indexes_every_third() {
    found_equals_dead_times_indexes(DeadPattern::Every(3));
}

#[test]
fn found_equals_dead_times_indexes_every_500th() {
    found_equals_dead_times_indexes(DeadPattern::Every(500));
}

#[test]
fn nothing_dead_means_no_pass() {
    let s = scenario(100, 10, DeadPattern::Tail(0.0), &BOTH, 1 << 20);
    for kind in StoreKind::ALL {
        let stats = run(&s, kind, &Progress::hidden()).unwrap();
        assert_eq!(
            (stats.index_passes, stats.dead_tids, stats.found),
            (0, 0, 0)
        );
        assert_eq!(stats.bytes_per_dead_tid(), None);
        assert_eq!(stats.check(), Ok(()));
    }
}

#[test]
fn random_order_is_a_permutation() {
    for n in [1u64, 2, 3, 5, 64, 100, 1_000, 4_097, 65_537] {
        for seed in [0, 1, 0xDEAD_BEEF] {
            let order = RandomOrder::new(n, seed);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let p = order.get(i) as usize;
                assert!(!seen[p], "n={n} seed={seed}: {p} twice");
                seen[p] = true;
            }
            assert!(seen.iter().all(|&s| s));
        }
    }
}

#[test]
fn named_scenarios_are_as_documented() {
    let vac2 = Scenario::named("VAC-2").unwrap();
    // PostgreSQL 16's array needed 9 index passes for VAC-2: 32 MiB hold
    // 5,592,405 TIDs, 30,229 pages of 185.
    let capacity = DeadItemsArray::capacity_for(vac2.limit, vac2.total_tuples());
    let pages_per_pass = capacity / 185;
    assert_eq!(u64::from(vac2.blocks).div_ceil(pages_per_pass), 9);
    let tenth = Scenario::named("VAC-1/10").unwrap();
    assert_eq!(tenth.limit, (1u64 << 30) / 10);
    assert!(tenth.note.unwrap().contains("scaled"));
}
