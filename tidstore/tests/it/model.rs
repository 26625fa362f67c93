//! Property tests against `BTreeSet<(u32, u16)>`, for both constructors.

use std::collections::BTreeSet;

use quickcheck::{Arbitrary, Gen, quickcheck};
use tidstore::{Tid, TidStore};

#[derive(Clone, Debug)]
enum Op {
    /// Set a block's offsets (possibly invalid: then nothing may change).
    Set(u32, Vec<u16>),
    Probe(u32, u16),
    Clear,
}

fn block(g: &mut Gen) -> u32 {
    match u8::arbitrary(g) % 4 {
        0 => u32::arbitrary(g) % 8,
        1 => u32::MAX - u32::arbitrary(g) % 8,
        2 => (u32::arbitrary(g) % 4) << 24,
        _ => u32::arbitrary(g),
    }
}

fn offsets(g: &mut Gen) -> Vec<u16> {
    let mut offs: Vec<u16> = match u8::arbitrary(g) % 5 {
        0 => {
            let a = u16::arbitrary(g) % 2048 + 1;
            let len = u16::arbitrary(g) % 200;
            (a..=(a + len).min(2048)).collect()
        }
        1 => Vec::<u16>::arbitrary(g)
            .into_iter()
            .map(|o| o % 2049)
            .collect(),
        _ => (0..u8::arbitrary(g) % 8)
            .map(|_| u16::arbitrary(g) % 2048 + 1)
            .collect(),
    };
    if bool::arbitrary(g) {
        offs.sort_unstable();
        offs.dedup();
    }
    offs
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Self {
        match u8::arbitrary(g) % 10 {
            0 => Op::Clear,
            1..=3 => Op::Probe(block(g), u16::arbitrary(g) % 2050),
            _ => Op::Set(block(g), offsets(g)),
        }
    }
}

fn run(mut ts: TidStore, ops: Vec<Op>) -> bool {
    let mut model: BTreeSet<(u32, u16)> = BTreeSet::new();
    for op in ops {
        match op {
            Op::Set(b, offs) => {
                let valid = !offs.is_empty()
                    && offs.iter().all(|&o| (1..=2048).contains(&o))
                    && offs.windows(2).all(|w| w[0] < w[1]);
                assert_eq!(ts.set_block_offsets(b, &offs).is_ok(), valid);
                if valid {
                    model.retain(|&(mb, _)| mb != b);
                    model.extend(offs.iter().map(|&o| (b, o)));
                }
            }
            Op::Probe(b, o) => assert_eq!(ts.is_member(Tid::new(b, o)), model.contains(&(b, o))),
            Op::Clear => {
                ts.clear();
                model.clear();
                assert_eq!(ts.memory_usage(), 0);
            }
        }
    }
    let all: Vec<(u32, u16)> = ts
        .iter()
        .flat_map(|blk| {
            let mut buf = vec![0; blk.len()];
            assert_eq!(blk.copy_offsets(&mut buf), blk.len());
            assert!(buf.iter().copied().eq(blk.offsets()));
            buf.into_iter().map(move |o| (blk.block(), o))
        })
        .collect();
    ts.verify().unwrap();
    ts.num_tids() == model.len() as u64 && all.iter().eq(model.iter())
}

quickcheck! {
    fn replacing_store_matches_model(ops: Vec<Op>) -> bool {
        run(TidStore::new(1 << 30), ops)
    }

    fn insert_only_store_matches_model(ops: Vec<Op>) -> bool {
        run(TidStore::insert_only(1 << 30), ops)
    }
}
