//! What the harnesses' own tests share: a target's committed seeds,
//! decoded from their whole length as the target reads them; the kind of
//! an operation, by its `Debug` name, to check that the seeds hold every
//! kind; and pseudo-random inputs for the smoke tests.

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::path::PathBuf;

use arbitrary::{Arbitrary, Unstructured};

/// The committed seeds of fuzz target `target` (`seeds/TARGET/`), each
/// with its path, decoded as the target decodes its input.
///
/// # Panics
///
/// If the folder cannot be read or a seed does not decode.
pub(crate) fn decoded<I: for<'a> Arbitrary<'a>>(target: &str) -> Vec<(PathBuf, I)> {
    let dir = format!("{}/seeds/{target}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|file| {
            let path = file.expect("a seed").path();
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
            let input = I::arbitrary_take_rest(Unstructured::new(&bytes))
                .unwrap_or_else(|e| panic!("{path:?} does not decode: {e}"));
            (path, input)
        })
        .collect()
}

/// The kinds of `ops`: each one's `Debug` name up to its first space or
/// bracket (`Insert { .. }` is `Insert`).
pub(crate) fn kinds<'a, T: Debug + 'a>(ops: impl IntoIterator<Item = &'a T>) -> BTreeSet<String> {
    ops.into_iter()
        .map(|op| {
            let name = format!("{op:?}");
            name[..name.find([' ', '(', '{']).unwrap_or(name.len())].to_owned()
        })
        .collect()
}

/// `rounds` pseudo-random inputs from the smoke bytes of `seed`
/// ([`smoke_bytes`](crate::values::smoke_bytes)): an input, then
/// operations decoded one by one into `ops(&mut input)` while bytes are
/// left (a `Vec` decoded from random bytes ends at its first even byte,
/// which would leave most inputs a few operations long).
pub(crate) fn smoke_inputs<I, O>(
    seed: u64,
    rounds: u64,
    ops: impl Fn(&mut I) -> &mut Vec<O>,
) -> Vec<I>
where
    I: for<'a> Arbitrary<'a>,
    O: for<'a> Arbitrary<'a>,
{
    let mut x = seed;
    (0..rounds)
        .filter_map(|round| {
            let bytes = crate::values::smoke_bytes(&mut x, round);
            let mut u = Unstructured::new(&bytes);
            let mut input = I::arbitrary(&mut u).ok()?;
            while let Ok(op) = O::arbitrary(&mut u) {
                if u.is_empty() {
                    break;
                }
                ops(&mut input).push(op);
            }
            Some(input)
        })
        .collect()
}
