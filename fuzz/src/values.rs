//! Values: what the trees store, and what the model stores for them.
//!
//! Every tree value type has a *model* representation kept in the
//! `BTreeMap` model ([`FuzzValue::Model`]), made from a 64-bit seed
//! ([`ModelValue::from_seed`]). A tree value is encoded from its model
//! value on insert and decoded back on every read, and the decoded value
//! must equal the model's.

use core::fmt::Debug;

use radix_core::value::VarBytes;

use crate::counted::Counted;

/// A value the model stores, made from a seed.
///
/// Its `Default` is the model of the tree value's `Default` (for
/// `or_default`), and its `Ord` orders as the tree values do (for the
/// trees' `Ord`, compared with the models').
pub trait ModelValue: Clone + Debug + Default + Ord + 'static {
    /// A value derived from `seed`; different seeds give different values
    /// (for byte strings, different lengths too).
    fn from_seed(seed: u64) -> Self;
    /// A 64-bit digest of the value, from which operations that rewrite
    /// values derive the new ones (so that tree and model agree without
    /// knowing where the value came from).
    fn fingerprint(&self) -> u64;
}

/// The splitmix64 finaliser: spreads a seed's bits over all 64.
pub fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A smoke test's input bytes for `round`, drawn from the generator
/// state `x`: 64 to 4,159 of them, a quarter small numbers, which are
/// likelier to hit existing keys and the operations' short lists.
#[cfg(test)]
pub(crate) fn smoke_bytes(x: &mut u64, round: u64) -> Vec<u8> {
    let len = 64 + (mix64(round) % 4096) as usize;
    (0..len)
        .map(|_| {
            *x = mix64(*x);
            if *x & 0x300 == 0 {
                (*x >> 24) as u8 & 0x0F
            } else {
                (*x >> 32) as u8
            }
        })
        .collect()
}

impl ModelValue for u64 {
    fn from_seed(seed: u64) -> Self {
        seed
    }
    fn fingerprint(&self) -> u64 {
        *self
    }
}

impl ModelValue for [u64; 2] {
    fn from_seed(seed: u64) -> Self {
        [seed, mix64(seed)]
    }
    fn fingerprint(&self) -> u64 {
        self[0] ^ self[1].rotate_left(17)
    }
}

/// The longest byte string the varlen target stores: values of up to 7
/// bytes are embedded in the slot, longer ones are leaves.
pub const MAX_BYTES: usize = 40;

impl ModelValue for Vec<u8> {
    fn from_seed(seed: u64) -> Self {
        let len = (seed % (MAX_BYTES as u64 + 1)) as usize;
        let fill = mix64(seed).to_le_bytes();
        (0..len).map(|i| fill[i % 8] ^ i as u8).collect()
    }
    fn fingerprint(&self) -> u64 {
        self.iter()
            .fold(self.len() as u64, |h, &b| mix64(h ^ u64::from(b)))
    }
}

/// A type stored in a tree under test.
pub trait FuzzValue {
    /// The model's representation of a value.
    type Model: ModelValue;
    /// What `insert` is given: the value itself, or for unsized
    /// ([`Varlen`](radix_core::value::Varlen)) values a box to borrow from.
    type Input;
    /// Whether values are [`Counted`]: the harness then checks that the
    /// live values equal the keys stored.
    const COUNTED: bool = false;
    /// A fresh tree value for `model`.
    fn encode(model: &Self::Model) -> Self::Input;
    /// The model value of a value read from a tree.
    fn decode(&self) -> Self::Model;
}

impl FuzzValue for u64 {
    type Model = u64;
    type Input = u64;
    fn encode(model: &u64) -> u64 {
        *model
    }
    fn decode(&self) -> u64 {
        *self
    }
}

/// A 16-byte value, for the inline layout. It orders as its model,
/// `[lo, hi]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pair {
    /// First word.
    pub lo: u64,
    /// Second word.
    pub hi: u64,
}

const _: () = assert!(core::mem::size_of::<Pair>() == 16);

impl FuzzValue for Pair {
    type Model = [u64; 2];
    type Input = Pair;
    fn encode(model: &[u64; 2]) -> Pair {
        Pair {
            lo: model[0],
            hi: model[1],
        }
    }
    fn decode(&self) -> [u64; 2] {
        [self.lo, self.hi]
    }
}

impl FuzzValue for Counted {
    type Model = [u64; 2];
    type Input = Counted;
    const COUNTED: bool = true;
    fn encode(model: &[u64; 2]) -> Counted {
        Counted::new(*model)
    }
    fn decode(&self) -> [u64; 2] {
        self.payload()
    }
}

impl FuzzValue for VarBytes {
    type Model = Vec<u8>;
    type Input = Box<VarBytes>;
    fn encode(model: &Vec<u8>) -> Box<VarBytes> {
        VarBytes::new(model).expect("model byte strings are at most 40 bytes")
    }
    fn decode(&self) -> Vec<u8> {
        self.as_bytes().to_vec()
    }
}
