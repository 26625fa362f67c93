// The limits of `concurrency: rowex` are named at the macro call.
radix_core::radix_tree! {
    pub struct Entries { key: u32, value: [u8], layout: varlen, concurrency: rowex }
}

fn main() {}
