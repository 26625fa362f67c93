//! The TID bitmap (`tidstore::TidBitmap`): two bitmaps, each unlimited or
//! within a budget of one to four times `TidBitmap::MIN_BUDGET`, built by
//! adds of TIDs, pages and page ranges and combined with `union_with` and
//! `intersect_with`, against page models (see `radix_fuzz::bitmap`).

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_fuzz::{check_tidbitmap, BitmapInput};

fuzz_target!(|input: BitmapInput| check_tidbitmap(&input));
