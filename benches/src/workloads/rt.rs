//! The radix tree workloads RT-1 to RT-6: data generation exactly as
//! WORKLOADS.md writes it, and the measured phases, generic over
//! [`RtMap`].

use crate::rng::{SplitMix64, hash64, shuffle};
use crate::structures::RtMap;

use super::{Sizing, Variant, parse_u64};

/// RT-4's filters, the default first.
pub const RT4_FILTERS: [u64; 4] = [0x7F_07FF_00FF, 0xFFFF_0000_003F, 0xFF_FFFF_FFFF, 0xFF_FFFF];

/// RT-5's fanouts.
pub const RT5_FANOUTS: [u64; 9] = [3, 4, 15, 16, 32, 48, 64, 125, 256];

/// RT-5 stops after this many keys.
pub const RT5_KEYS: u64 = 327_680;

/// RT-6's fanouts, the default first.
pub const RT6_FANOUTS: [u64; 3] = [120, 15, 40];

/// RT-6's churn rounds.
pub const RT6_ROUNDS: u64 = 10_000;

/// Offsets per block in RT-1 and RT-2 (`1..=30`).
pub const RT_TIDS_PER_BLOCK: u64 = 30;

/// One radix tree workload with its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RtCase {
    /// RT-1 `seq_search`: TID bitmaps of `blocks` blocks, looked up in
    /// generation order.
    SeqSearch {
        /// Blocks `0..blocks`.
        blocks: u64,
        /// Keep a block only when `prng() & 1 == 1`.
        random_block: bool,
    },
    /// RT-2 `shuffle_search`: as RT-1, looked up in shuffled order.
    ShuffleSearch {
        /// Blocks `0..blocks`.
        blocks: u64,
        /// Keep a block only when `prng() & 1 == 1`.
        random_block: bool,
    },
    /// RT-3 `load_random_int`: `cnt` keys from the PRNG.
    LoadRandomInt {
        /// Number of keys.
        cnt: u64,
    },
    /// RT-4 `search_random_nodes`: `hash64(i) & filter` for `i in 0..cnt`.
    SearchRandomNodes {
        /// Number of keys generated (duplicates included).
        cnt: u64,
        /// The mask.
        filter: u64,
    },
    /// RT-5 `fixed_height_search`: every node of one fanout.
    FixedHeightSearch {
        /// Children per node, `h, i, j, k in 1..=fanout`.
        fanout: u64,
        /// Keys generated before stopping.
        nkeys: u64,
    },
    /// RT-6 `node48_churn`: delete and re-insert one child per node.
    Node48Churn {
        /// `r, h in 1..=fanout`.
        fanout: u64,
        /// Rounds of delete-all then insert-all.
        rounds: u64,
    },
}

impl RtCase {
    /// The WORKLOADS.md id.
    pub fn id(&self) -> &'static str {
        match self {
            RtCase::SeqSearch { .. } => "RT-1",
            RtCase::ShuffleSearch { .. } => "RT-2",
            RtCase::LoadRandomInt { .. } => "RT-3",
            RtCase::SearchRandomNodes { .. } => "RT-4",
            RtCase::FixedHeightSearch { .. } => "RT-5",
            RtCase::Node48Churn { .. } => "RT-6",
        }
    }

    /// The WORKLOADS.md name.
    pub fn name(&self) -> &'static str {
        match self {
            RtCase::SeqSearch { .. } => "seq_search",
            RtCase::ShuffleSearch { .. } => "shuffle_search",
            RtCase::LoadRandomInt { .. } => "load_random_int",
            RtCase::SearchRandomNodes { .. } => "search_random_nodes",
            RtCase::FixedHeightSearch { .. } => "fixed_height_search",
            RtCase::Node48Churn { .. } => "node48_churn",
        }
    }

    /// The parameters, as `name=value` pairs joined by commas.
    pub fn params(&self) -> String {
        match *self {
            RtCase::SeqSearch {
                blocks,
                random_block,
            }
            | RtCase::ShuffleSearch {
                blocks,
                random_block,
            } => format!("blocks={blocks},random_block={}", u8::from(random_block)),
            RtCase::LoadRandomInt { cnt } => format!("cnt={cnt}"),
            RtCase::SearchRandomNodes { cnt, filter } => format!("cnt={cnt},filter={filter:#X}"),
            RtCase::FixedHeightSearch { fanout, nkeys } => format!("fanout={fanout},nkeys={nkeys}"),
            RtCase::Node48Churn { fanout, rounds } => format!("fanout={fanout},rounds={rounds}"),
        }
    }
}

/// The cases of RT workload `id` (upper case), with optional variant `arg`.
pub(crate) fn cases(
    id: &str,
    arg: Option<&str>,
    sizing: Sizing,
    variant: Variant,
) -> Result<Vec<RtCase>, String> {
    let blocks = sizing.pick(1_000_000, 10_000_000);
    let cnt = sizing.pick(1_000_000, 10_000_000);
    let random_block = variant.random_block;
    let choose = |all: &[u64], default: &[u64]| -> Result<Vec<u64>, String> {
        match arg {
            None => Ok(default.to_vec()),
            Some(a) if a.eq_ignore_ascii_case("all") => Ok(all.to_vec()),
            Some(a) => parse_u64(a).map(|v| vec![v]),
        }
    };
    let no_arg = || match arg {
        None => Ok(()),
        Some(_) => Err(format!("{id} takes no variant")),
    };
    Ok(match id {
        "RT-1" => {
            no_arg()?;
            vec![RtCase::SeqSearch {
                blocks,
                random_block,
            }]
        }
        "RT-2" => {
            no_arg()?;
            vec![RtCase::ShuffleSearch {
                blocks,
                random_block,
            }]
        }
        "RT-3" => {
            no_arg()?;
            vec![RtCase::LoadRandomInt { cnt }]
        }
        "RT-4" => choose(&RT4_FILTERS, &RT4_FILTERS[..1])?
            .into_iter()
            .map(|filter| RtCase::SearchRandomNodes { cnt, filter })
            .collect(),
        "RT-5" => {
            let nkeys = sizing.apply(RT5_KEYS);
            let fanouts = choose(&RT5_FANOUTS, &RT5_FANOUTS)?;
            check_fanouts(&fanouts, 1, 256)?;
            fanouts
                .into_iter()
                .map(|fanout| RtCase::FixedHeightSearch { fanout, nkeys })
                .collect()
        }
        "RT-6" => {
            let rounds = sizing.apply(RT6_ROUNDS);
            let fanouts = choose(&RT6_FANOUTS, &RT6_FANOUTS[..1])?;
            check_fanouts(&fanouts, 1, 255)?;
            fanouts
                .into_iter()
                .map(|fanout| RtCase::Node48Churn { fanout, rounds })
                .collect()
        }
        _ => return Err(format!("unknown workload {id}")),
    })
}

fn check_fanouts(fanouts: &[u64], min: u64, max: u64) -> Result<(), String> {
    match fanouts.iter().find(|&&f| !(min..=max).contains(&f)) {
        Some(f) => Err(format!("fanout {f} is outside {min}..={max}")),
        None => Ok(()),
    }
}

/// A workload's generated data.
#[derive(Debug, Clone)]
pub enum RtData {
    /// RT-1 and RT-2: TIDs (`block << 9 | offset`) in generation order, and
    /// the lookup order when it differs (RT-2's shuffle).
    Tids {
        /// Every TID, block then offset order.
        tids: Vec<u64>,
        /// RT-2's shuffled copy; `None` for RT-1 (look up in `tids` order).
        shuffled: Option<Vec<u64>>,
        /// Number of distinct keys (`tid >> 6`).
        nkeys: u64,
    },
    /// RT-3, RT-4, RT-5: insert `(key, value)` in order, then look up
    /// every key in the same order.
    Pairs {
        /// The inserts, duplicates included (RT-4, and RT-5 at fanout 256,
        /// where a chunk of 256 spills into the next byte).
        pairs: Vec<(u64, u64)>,
        /// Number of distinct keys.
        nkeys: u64,
        /// Wrapping sum, over the lookups, of the value each key holds
        /// after the load (its last insert).
        expected_sum: u64,
    },
    /// RT-6: insert `keys`, then rounds of deleting and re-inserting
    /// `churn`.
    Churn {
        /// The initial inserts, `(key, key)`.
        pairs: Vec<(u64, u64)>,
        /// The keys deleted and re-inserted each round.
        churn: Vec<u64>,
        /// Number of rounds.
        rounds: u64,
    },
}

impl RtData {
    /// Generates the data of `case`.
    pub fn generate(case: &RtCase) -> Self {
        match *case {
            RtCase::SeqSearch {
                blocks,
                random_block,
            } => {
                let (tids, nkeys) = tid_walk(blocks, random_block);
                RtData::Tids {
                    tids,
                    shuffled: None,
                    nkeys,
                }
            }
            RtCase::ShuffleSearch {
                blocks,
                random_block,
            } => {
                let (tids, nkeys) = tid_walk(blocks, random_block);
                let mut shuffled = tids.clone();
                shuffle(&mut shuffled);
                RtData::Tids {
                    tids,
                    shuffled: Some(shuffled),
                    nkeys,
                }
            }
            RtCase::LoadRandomInt { cnt } => {
                let mut rng = SplitMix64::new(0);
                let pairs = (0..cnt)
                    .map(|_| {
                        let key = rng.next_u64();
                        (key, key)
                    })
                    .collect();
                Self::pairs(pairs)
            }
            RtCase::SearchRandomNodes { cnt, filter } => {
                let pairs = (0..cnt)
                    .map(|i| {
                        let key = hash64(i) & filter;
                        (key, key)
                    })
                    .collect();
                Self::pairs(pairs)
            }
            RtCase::FixedHeightSearch { fanout, nkeys } => {
                Self::pairs(fixed_height_keys(fanout, nkeys))
            }
            RtCase::Node48Churn { fanout, rounds } => {
                let pairs = (1..=fanout)
                    .flat_map(|r| (1..=fanout).map(move |h| (r << 8) | h))
                    .map(|key| (key, key))
                    .collect();
                let churn = (1..=fanout).map(|r| (r << 8) | fanout).collect();
                RtData::Churn {
                    pairs,
                    churn,
                    rounds,
                }
            }
        }
    }

    fn pairs(pairs: Vec<(u64, u64)>) -> Self {
        let (nkeys, expected_sum) = pair_answers(&pairs);
        RtData::Pairs {
            nkeys,
            pairs,
            expected_sum,
        }
    }

    /// Number of distinct keys the map holds after the load.
    pub fn nkeys(&self) -> u64 {
        match self {
            RtData::Tids { nkeys, .. } | RtData::Pairs { nkeys, .. } => *nkeys,
            RtData::Churn { pairs, .. } => pairs.len() as u64,
        }
    }

    /// The hits a correct map reports: one per TID (RT-1, RT-2), one per
    /// lookup (RT-3 to RT-5), one per successful delete (RT-6).
    pub fn expected_hits(&self) -> u64 {
        match self {
            RtData::Tids { tids, .. } => tids.len() as u64,
            RtData::Pairs { pairs, .. } => pairs.len() as u64,
            RtData::Churn { churn, rounds, .. } => churn.len() as u64 * rounds,
        }
    }

    /// The wrapping sum of the values a correct map returns to
    /// [`search`](Self::search).
    pub fn expected_sum(&self) -> u64 {
        match self {
            RtData::Tids { tids, .. } => tids.len() as u64,
            RtData::Pairs { expected_sum, .. } => *expected_sum,
            RtData::Churn { pairs, .. } => pairs.iter().fold(0, |s, &(_, v)| s.wrapping_add(v)),
        }
    }

    /// Number of lookups the search phase makes (0 for RT-6).
    pub fn lookups(&self) -> u64 {
        match self {
            RtData::Tids { tids, .. } => tids.len() as u64,
            RtData::Pairs { pairs, .. } => pairs.len() as u64,
            RtData::Churn { .. } => 0,
        }
    }

    /// Loads `map` (the timed load phase); returns the number of inserts.
    #[inline(never)]
    pub fn load<M: RtMap>(&self, map: &mut M) -> u64 {
        match self {
            RtData::Tids { tids, .. } => load_tids(map, tids),
            RtData::Pairs { pairs, .. } | RtData::Churn { pairs, .. } => load_pairs(map, pairs),
        }
    }

    /// Searches `map` (the timed search phase); returns the hits and the
    /// wrapping sum of the values found (for RT-1/RT-2, the hits again).
    /// RT-6 has no search phase: this checks that every key is present
    /// after the churn, one hit per key.
    #[inline(never)]
    pub fn search<M: RtMap>(&self, map: &M) -> (u64, u64) {
        match self {
            RtData::Tids { tids, shuffled, .. } => {
                let hits = search_tids(map, shuffled.as_deref().unwrap_or(tids));
                (hits, hits)
            }
            RtData::Pairs { pairs, .. } | RtData::Churn { pairs, .. } => search_pairs(map, pairs),
        }
    }

    /// RT-6's churn (the timed churn phase); returns the successful
    /// deletes. Does nothing for the other workloads.
    #[inline(never)]
    pub fn churn<M: RtMap>(&self, map: &mut M) -> u64 {
        match self {
            RtData::Churn { churn, rounds, .. } => churn_rounds(map, churn, *rounds),
            _ => 0,
        }
    }
}

/// What a correct map answers after loading `pairs` in order and looking
/// every key of them up in the same order: the number of distinct keys,
/// and the wrapping sum of the values found (each key's last value, once
/// per lookup of it).
pub(crate) fn pair_answers<K: Copy + Ord>(pairs: &[(K, u64)]) -> (u64, u64) {
    // Sort (key, insert index) to find each key's last value and how many
    // lookups ask for it.
    let mut order: Vec<(K, usize)> = pairs
        .iter()
        .enumerate()
        .map(|(i, &(k, _))| (k, i))
        .collect();
    order.sort_unstable();
    let mut nkeys = 0u64;
    let mut expected_sum = 0u64;
    for run in order.chunk_by(|a, b| a.0 == b.0) {
        nkeys += 1;
        let last_value = pairs[run[run.len() - 1].1].1;
        expected_sum = expected_sum.wrapping_add(last_value.wrapping_mul(run.len() as u64));
    }
    (nkeys, expected_sum)
}

/// RT-1/RT-2's walk: blocks `0..blocks` (each kept only when
/// `prng() & 1 == 1` under `random_block`), offsets `1..=30`, as
/// `block << 9 | offset`. Also returns the number of distinct keys.
pub(crate) fn tid_walk(blocks: u64, random_block: bool) -> (Vec<u64>, u64) {
    let mut rng = SplitMix64::new(0);
    let mut tids = Vec::with_capacity((blocks * RT_TIDS_PER_BLOCK) as usize);
    for block in 0..blocks {
        if random_block && rng.next_u64() & 1 != 1 {
            continue;
        }
        tids.extend((1..=RT_TIDS_PER_BLOCK).map(|offset| (block << 9) | offset));
    }
    let mut nkeys = 0;
    let mut last = None;
    for &tid in &tids {
        if last != Some(tid >> 6) {
            nkeys += 1;
            last = Some(tid >> 6);
        }
    }
    (tids, nkeys)
}

/// RT-5's keys: `(r << 32) | (h << 24) | (i << 16) | (j << 8) | k` with
/// `h, i, j, k in 1..=fanout` (`k` innermost) and `r = 1, 2, ...`, stopping
/// after `nkeys` keys; the value is the running index.
pub fn fixed_height_keys(fanout: u64, nkeys: u64) -> Vec<(u64, u64)> {
    let mut pairs = Vec::with_capacity(nkeys as usize);
    let mut r = 1u64;
    'outer: loop {
        for h in 1..=fanout {
            for i in 1..=fanout {
                for j in 1..=fanout {
                    for k in 1..=fanout {
                        if pairs.len() as u64 == nkeys {
                            break 'outer;
                        }
                        let key = (r << 32) | (h << 24) | (i << 16) | (j << 8) | k;
                        pairs.push((key, pairs.len() as u64));
                    }
                }
            }
        }
        r += 1;
    }
    pairs
}

/// RT-1/RT-2 load: walk the TIDs, OR each bit into the current key's
/// value, insert once each time the key changes and once at the end.
///
/// A [`RtMap::BATCHED`] map gets the same inserts, in the same order, as
/// [`KeyBitmaps`] through [`RtMap::insert_each`]; every other map runs
/// the loop below, compiled as before the batch methods existed.
#[inline]
pub fn load_tids<M: RtMap>(map: &mut M, tids: &[u64]) -> u64 {
    let mut inserts = 0;
    if M::BATCHED {
        map.insert_each(KeyBitmaps::new(tids).inspect(|_| inserts += 1));
        map.seal();
        return inserts;
    }
    if let Some((&first, rest)) = tids.split_first() {
        let mut key = first >> 6;
        let mut bits = 1u64 << (first & 63);
        for &tid in rest {
            if tid >> 6 != key {
                map.insert(key, bits);
                inserts += 1;
                key = tid >> 6;
                bits = 0;
            }
            bits |= 1 << (tid & 63);
        }
        map.insert(key, bits);
        inserts += 1;
    }
    map.seal();
    inserts
}

/// The inserts of RT-1/RT-2's load, in order: `(key, bits)` each time the
/// key (`tid >> 6`) changes along the TIDs, and once at the end, where
/// `bits` has the bit `tid & 63` of each TID of that key: what
/// [`load_tids`]'s loop inserts.
#[derive(Debug, Clone)]
pub struct KeyBitmaps<'a> {
    tids: core::slice::Iter<'a, u64>,
    /// The key being gathered and its bits so far; `None` once done.
    current: Option<(u64, u64)>,
}

impl<'a> KeyBitmaps<'a> {
    /// The inserts of loading `tids`.
    pub fn new(tids: &'a [u64]) -> Self {
        let mut tids = tids.iter();
        let current = tids.next().map(|&tid| (tid >> 6, 1u64 << (tid & 63)));
        Self { tids, current }
    }
}

impl Iterator for KeyBitmaps<'_> {
    type Item = (u64, u64);

    #[inline]
    fn next(&mut self) -> Option<(u64, u64)> {
        let (key, mut bits) = self.current?;
        for &tid in self.tids.by_ref() {
            if tid >> 6 != key {
                self.current = Some((tid >> 6, 1 << (tid & 63)));
                return Some((key, bits));
            }
            bits |= 1 << (tid & 63);
        }
        self.current = None;
        Some((key, bits))
    }
}

/// RT-1/RT-2 search: look up each TID's key and test its bit; the hits.
/// A [`RtMap::BATCHED`] map makes the same lookups through
/// [`RtMap::get_each`].
#[inline]
pub fn search_tids<M: RtMap>(map: &M, lookups: &[u64]) -> u64 {
    let mut hits = 0;
    if M::BATCHED {
        map.get_each(
            lookups,
            |tid| tid >> 6,
            |tid, found| {
                if let Some(bits) = found {
                    hits += (bits >> (tid & 63)) & 1;
                }
            },
        );
        return hits;
    }
    for &tid in lookups {
        if let Some(bits) = map.get(tid >> 6) {
            hits += (bits >> (tid & 63)) & 1;
        }
    }
    hits
}

/// RT-3 to RT-7 load: insert every pair in order (a [`RtMap::BATCHED`]
/// map through [`RtMap::insert_each`]).
#[inline]
pub fn load_pairs<K: Copy, M: RtMap<K>>(map: &mut M, pairs: &[(K, u64)]) -> u64 {
    if M::BATCHED {
        map.insert_each(pairs.iter().copied());
        map.seal();
        return pairs.len() as u64;
    }
    for &(key, value) in pairs {
        map.insert(key, value);
    }
    map.seal();
    pairs.len() as u64
}

/// RT-3 to RT-5 and RT-7 search: look up every key in insertion order; the
/// number found, and the wrapping sum of their values. A
/// [`RtMap::BATCHED`] map makes the same lookups through
/// [`RtMap::get_each`].
#[inline]
pub fn search_pairs<K: Copy, M: RtMap<K>>(map: &M, pairs: &[(K, u64)]) -> (u64, u64) {
    let mut hits = 0;
    let mut sum = 0u64;
    if M::BATCHED {
        map.get_each(
            pairs,
            |(key, _)| key,
            |_, found| {
                if let Some(value) = found {
                    hits += 1;
                    sum = sum.wrapping_add(value);
                }
            },
        );
        return (hits, sum);
    }
    for &(key, _) in pairs {
        if let Some(value) = map.get(key) {
            hits += 1;
            sum = sum.wrapping_add(value);
        }
    }
    (hits, sum)
}

/// RT-6 churn: `rounds` times, delete every key of `churn`, then insert
/// them all back (`(key, key)`); the successful deletes.
#[inline]
pub fn churn_rounds<M: RtMap>(map: &mut M, churn: &[u64], rounds: u64) -> u64 {
    let mut deleted = 0;
    for _ in 0..rounds {
        for &key in churn {
            deleted += u64::from(map.remove(key));
        }
        for &key in churn {
            map.insert(key, key);
        }
        map.quiesce();
    }
    deleted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rt1_walk() {
        let (tids, nkeys) = tid_walk(3, false);
        assert_eq!(tids.len(), 90);
        assert_eq!(nkeys, 3);
        assert_eq!(tids[0], 1);
        assert_eq!(tids[30], (1 << 9) | 1);
        let (tids, nkeys) = tid_walk(1000, true);
        assert_eq!(tids.len() as u64, nkeys * 30);
        // Blocks kept where prng() & 1 == 1, one PRNG for the walk.
        let mut rng = SplitMix64::new(0);
        let kept: Vec<u64> = (0..1000).filter(|_| rng.next_u64() & 1 == 1).collect();
        assert_eq!(nkeys, kept.len() as u64);
        assert_eq!(tids[0] >> 9, kept[0]);
    }

    /// Records every insert and lookup, unbatched or batched.
    struct Recorder<const B: bool> {
        inserts: Vec<(u64, u64)>,
        gets: std::cell::RefCell<Vec<u64>>,
    }

    impl<const B: bool> RtMap for Recorder<B> {
        const NAME: &'static str = "recorder";
        const BATCHED: bool = B;
        fn new() -> Self {
            Self {
                inserts: Vec::new(),
                gets: Default::default(),
            }
        }
        fn insert(&mut self, key: u64, value: u64) {
            self.inserts.push((key, value));
        }
        fn get(&self, key: u64) -> Option<u64> {
            self.gets.borrow_mut().push(key);
            Some(key)
        }
        fn remove(&mut self, _key: u64) -> bool {
            false
        }
    }

    #[test]
    fn batched_maps_get_the_same_operations_in_the_same_order() {
        for case in [
            RtCase::ShuffleSearch {
                blocks: 300,
                random_block: true,
            },
            RtCase::SearchRandomNodes {
                cnt: 3000,
                filter: 0xFFF,
            },
        ] {
            let data = RtData::generate(&case);
            let (mut plain, mut batched) = (Recorder::<false>::new(), Recorder::<true>::new());
            assert_eq!(data.load(&mut plain), data.load(&mut batched));
            assert_eq!(plain.inserts, batched.inserts, "{case:?}");
            assert_eq!(data.search(&plain), data.search(&batched));
            assert_eq!(plain.gets, batched.gets, "{case:?}");
            assert_eq!(plain.gets.borrow().len() as u64, data.lookups());
        }
    }

    #[test]
    fn key_bitmaps_insert_once_per_key_change() {
        let tids = [1, 2, 63, 64, 65, (1 << 9) | 1, (1 << 9) | 30];
        let inserts: Vec<(u64, u64)> = KeyBitmaps::new(&tids).collect();
        assert_eq!(
            inserts,
            [
                (0, (1 << 1) | (1 << 2) | (1 << 63)),
                (1, 0b11),
                (8, (1 << 1) | (1 << 30)),
            ]
        );
        assert_eq!(KeyBitmaps::new(&[]).count(), 0);
        assert_eq!(KeyBitmaps::new(&[5]).collect::<Vec<_>>(), [(0, 1 << 5)]);
        // A key that comes back after another is inserted again, as the
        // load's loop does.
        assert_eq!(KeyBitmaps::new(&[1, 64, 2]).count(), 3);
        let (tids, nkeys) = tid_walk(1000, true);
        assert_eq!(KeyBitmaps::new(&tids).count() as u64, nkeys);
    }

    #[test]
    fn rt2_shuffles_with_its_own_prng() {
        let data = RtData::generate(&RtCase::ShuffleSearch {
            blocks: 10,
            random_block: true,
        });
        let RtData::Tids { tids, shuffled, .. } = data else {
            unreachable!()
        };
        let mut expected = tids.clone();
        shuffle(&mut expected);
        assert_eq!(shuffled.unwrap(), expected);
    }

    #[test]
    fn rt5_keys() {
        let pairs = fixed_height_keys(3, RT5_KEYS);
        assert_eq!(pairs.len() as u64, RT5_KEYS);
        assert_eq!(
            pairs[0],
            ((1 << 32) | (1 << 24) | (1 << 16) | (1 << 8) | 1, 0)
        );
        assert_eq!(pairs[1].0, (1 << 32) | (1 << 24) | (1 << 16) | (1 << 8) | 2);
        assert_eq!(
            pairs[81].0,
            (2 << 32) | (1 << 24) | (1 << 16) | (1 << 8) | 1
        );
        let big = fixed_height_keys(256, RT5_KEYS);
        assert_eq!(
            big.last().unwrap().0,
            (1 << 32) | (1 << 24) | (5 << 16) | (256 << 8) | 256
        );
        // A chunk of 256 spills into the byte above: keys repeat, as
        // written in WORKLOADS.md.
        let data = RtData::generate(&RtCase::FixedHeightSearch {
            fanout: 256,
            nkeys: RT5_KEYS,
        });
        assert!(data.nkeys() < RT5_KEYS);
        let data = RtData::generate(&RtCase::FixedHeightSearch {
            fanout: 16,
            nkeys: RT5_KEYS,
        });
        assert_eq!(data.nkeys(), RT5_KEYS);
        assert_eq!(data.expected_sum(), RT5_KEYS * (RT5_KEYS - 1) / 2);
    }

    #[test]
    fn rt6_keys() {
        let data = RtData::generate(&RtCase::Node48Churn {
            fanout: 15,
            rounds: 2,
        });
        let RtData::Churn { pairs, churn, .. } = &data else {
            unreachable!()
        };
        assert_eq!(pairs.len(), 225);
        assert_eq!(churn.len(), 15);
        assert_eq!(churn[0], (1 << 8) | 15);
        assert_eq!(data.expected_hits(), 30);
    }

    #[test]
    fn rt4_counts_distinct_keys() {
        let data = RtData::generate(&RtCase::SearchRandomNodes {
            cnt: 10_000,
            filter: 0xFF,
        });
        assert_eq!(data.nkeys(), 256);
        assert_eq!(data.expected_hits(), 10_000);
    }
}
