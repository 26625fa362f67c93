//! The TID store's set operations (`union_with`, `intersect_with`,
//! `difference_with`, chained, and over tiny budgets that refuse them with
//! `OverBudget`), `is_subset` and `ordered_lookup`, on two stores whose
//! blocks meet, against `BTreeSet<(block, offset)>` models.

#![no_main]

use libfuzzer_sys::fuzz_target;
use radix_fuzz::{check_tidstore_set_ops, SetOpsInput};

fuzz_target!(|input: SetOpsInput| check_tidstore_set_ops(&input));
