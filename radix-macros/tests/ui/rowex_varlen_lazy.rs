// The limits of `concurrency: rowex` are named at the macro call: varlen
// values have no lazy leaves in a concurrent tree.
radix_core::radix_tree! {
    pub struct Entries {
        key: u32,
        value: radix_core::value::VarBytes,
        layout: varlen,
        compression: full,
        concurrency: rowex,
    }
}

fn main() {}
