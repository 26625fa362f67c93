//! The TID store, replacing and insert-only, or shared in an area that
//! may be limited, against a `BTreeMap<block, offsets>` model, with
//! invalid offset lists as often as valid ones.

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_fuzz::{check_tidstore, TidInput};

fuzz_target!(|input: TidInput| check_tidstore(&input));
