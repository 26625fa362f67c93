//! `Serialize` and `Deserialize` for [`TidStore`] (the `serde` feature).
//!
//! # The format
//!
//! A store is a struct of two fields, its budget and its blocks, each block
//! a pair of the block number and its dead offsets, blocks in ascending
//! order and offsets ascending within a block:
//!
//! ```text
//! TidStore { max_bytes: usize, blocks: [(u32, [u16]), ...] }
//! ```
//!
//! In JSON: `{"max_bytes":1048576,"blocks":[[7,[1,2,3]],[9,[5]]]}`. This
//! is the store's content and nothing of its representation: an entry's
//! form (a few inline offsets, a run, a bitmap) is what
//! [`TidStore::set_block_offsets`] chooses again when the store is read
//! back, so the format does not change when the representation does, and
//! an input cannot ask for a malformed entry. It is compact for what vacuum
//! collects: one list per block, no repeated block numbers.
//!
//! # What deserializing checks
//!
//! A store is rebuilt with [`TidStore::new`] and the block's offsets given
//! to [`TidStore::set_block_offsets`], one block at a time, so it is a
//! store that the public API could have built, and [`TidStore::verify`]
//! passes on it. An input is refused with an error that names the block
//! and the rule it breaks when:
//!
//! - a block has no offsets, an offset 0 or above
//!   [`MAX_OFFSET`](crate::MAX_OFFSET), or offsets that are not strictly
//!   ascending (duplicates included): `set_block_offsets`'s own errors
//!   ([`TidStoreError`](crate::TidStoreError)), passed on with their
//!   message;
//! - a block number appears twice, or blocks are not strictly ascending:
//!   serializing writes them ascending, and an input that repeats a block
//!   has no single meaning;
//! - a block number does not fit a `u32`, or an offset a `u16` (the
//!   format's integer errors);
//! - a field is missing, given twice or unknown.
//!
//! The fields may come in either order (JSON objects are unordered): when
//! `blocks` precedes `max_bytes`, the blocks are read into a list first
//! and stored once the budget is known; otherwise each block goes into the
//! store as it is read.
//!
//! # What is not kept
//!
//! The store is read back as a replacing store ([`TidStore::new`]), also
//! when it was written by an insert-only one: the mode is a choice of
//! allocator, not content. Its [`memory_usage`](TidStore::memory_usage) is
//! what the content needs now, which may be less than the original's (an
//! insert-only store keeps replaced entries' space). The budget is kept
//! but not enforced: a store that had passed its budget reads back as one
//! that has ([`is_full`](TidStore::is_full)), as it would have been had it
//! been built directly, and checking that is the caller's part, as ever.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use ::serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use ::serde::ser::{SerializeSeq, SerializeStruct, SerializeTuple};
use ::serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::store::{DeadBlock, TidStore};

/// The struct's name in the format.
const NAME: &str = "TidStore";
/// The field names, in the order serializing writes them.
const FIELDS: &[&str] = &["max_bytes", "blocks"];

/// Writes `{ max_bytes, blocks: [(block, [offsets])...] }`, blocks and
/// offsets ascending (see the module documentation).
impl Serialize for TidStore {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut store = serializer.serialize_struct(NAME, FIELDS.len())?;
        store.serialize_field(FIELDS[0], &self.max_bytes())?;
        store.serialize_field(FIELDS[1], &Blocks(self))?;
        store.end()
    }
}

/// A store's blocks, written as a sequence of its length.
struct Blocks<'a>(&'a TidStore);

impl Serialize for Blocks<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut blocks = serializer.serialize_seq(Some(self.0.num_blocks()))?;
        for block in self.0.iter() {
            blocks.serialize_element(&Block(block))?;
        }
        blocks.end()
    }
}

/// One block, written as the pair `(block, offsets)`.
struct Block<'a>(DeadBlock<'a>);

impl Serialize for Block<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut pair = serializer.serialize_tuple(2)?;
        pair.serialize_element(&self.0.block())?;
        pair.serialize_element(&Offsets(self.0))?;
        pair.end()
    }
}

/// One block's offsets, written as a sequence of its length.
struct Offsets<'a>(DeadBlock<'a>);

impl Serialize for Offsets<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut offsets = serializer.serialize_seq(Some(self.0.len()))?;
        for offset in self.0.offsets() {
            offsets.serialize_element(&offset)?;
        }
        offsets.end()
    }
}

/// Reads the form `Serialize` writes, refusing any input that breaks a
/// rule of [`TidStore::set_block_offsets`] or repeats a block, with an
/// error naming the block (see the module documentation).
impl<'de> Deserialize<'de> for TidStore {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_struct(NAME, FIELDS, StoreVisitor)
    }
}

/// A store under construction: blocks must come strictly ascending.
struct Builder {
    store: TidStore,
    last: Option<u32>,
}

impl Builder {
    fn new(max_bytes: usize) -> Self {
        Self {
            store: TidStore::new(max_bytes),
            last: None,
        }
    }

    /// Stores `block`'s offsets, or says why the input is refused.
    fn add<E: de::Error>(&mut self, block: u32, offsets: &[u16]) -> Result<(), E> {
        match self.last {
            Some(last) if block == last => {
                return Err(E::custom(format_args!(
                    "invalid TID store: block {block} appears twice"
                )));
            }
            Some(last) if block < last => {
                return Err(E::custom(format_args!(
                    "invalid TID store: block {block} follows block {last} \
                     (blocks must be strictly ascending)"
                )));
            }
            _ => {}
        }
        self.store
            .set_block_offsets(block, offsets)
            .map_err(|e| E::custom(format_args!("invalid TID store: {e}")))?;
        self.last = Some(block);
        Ok(())
    }
}

/// The visitor of the whole store: a map (self-describing formats) or a
/// sequence of the two fields in order (compact ones).
struct StoreVisitor;

impl<'de> Visitor<'de> for StoreVisitor {
    type Value = TidStore;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a TID store: { max_bytes, blocks: [(block, [offsets])...] }")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TidStore, A::Error> {
        let max_bytes: usize = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let mut builder = Builder::new(max_bytes);
        seq.next_element_seed(BlocksSeed(&mut builder))?
            .ok_or_else(|| de::Error::invalid_length(1, &self))?;
        Ok(builder.store)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TidStore, A::Error> {
        let mut max_bytes: Option<usize> = None;
        // The blocks, stored (when the budget came first) or read ahead.
        let mut built: Option<Builder> = None;
        let mut early: Option<Vec<(u32, Vec<u16>)>> = None;
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::MaxBytes => {
                    if max_bytes.is_some() {
                        return Err(de::Error::duplicate_field(FIELDS[0]));
                    }
                    max_bytes = Some(map.next_value()?);
                }
                Field::Blocks => {
                    if built.is_some() || early.is_some() {
                        return Err(de::Error::duplicate_field(FIELDS[1]));
                    }
                    match max_bytes {
                        Some(max_bytes) => {
                            let mut builder = Builder::new(max_bytes);
                            map.next_value_seed(BlocksSeed(&mut builder))?;
                            built = Some(builder);
                        }
                        None => early = Some(map.next_value()?),
                    }
                }
            }
        }
        let max_bytes = max_bytes.ok_or_else(|| de::Error::missing_field(FIELDS[0]))?;
        match (built, early) {
            (Some(builder), _) => Ok(builder.store),
            (None, Some(blocks)) => {
                let mut builder = Builder::new(max_bytes);
                for (block, offsets) in blocks {
                    builder.add(block, &offsets)?;
                }
                Ok(builder.store)
            }
            (None, None) => Err(de::Error::missing_field(FIELDS[1])),
        }
    }
}

/// The two field names; any other is an error.
enum Field {
    MaxBytes,
    Blocks,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_identifier(FieldVisitor)
    }
}

/// Reads a field name as a string, bytes or index.
struct FieldVisitor;

impl Visitor<'_> for FieldVisitor {
    type Value = Field;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("`max_bytes` or `blocks`")
    }

    fn visit_u64<E: de::Error>(self, index: u64) -> Result<Field, E> {
        match index {
            0 => Ok(Field::MaxBytes),
            1 => Ok(Field::Blocks),
            _ => Err(E::invalid_value(de::Unexpected::Unsigned(index), &self)),
        }
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<Field, E> {
        match name {
            "max_bytes" => Ok(Field::MaxBytes),
            "blocks" => Ok(Field::Blocks),
            _ => Err(E::unknown_field(name, FIELDS)),
        }
    }

    fn visit_bytes<E: de::Error>(self, name: &[u8]) -> Result<Field, E> {
        match name {
            b"max_bytes" => Ok(Field::MaxBytes),
            b"blocks" => Ok(Field::Blocks),
            _ => Err(E::unknown_field(&String::from_utf8_lossy(name), FIELDS)),
        }
    }
}

/// Reads the blocks sequence straight into a store under construction.
struct BlocksSeed<'a>(&'a mut Builder);

impl<'de> DeserializeSeed<'de> for BlocksSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for BlocksSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence of (block, [offsets]) pairs")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some((block, offsets)) = seq.next_element::<(u32, Vec<u16>)>()? {
            self.0.add(block, &offsets)?;
        }
        Ok(())
    }
}
