// A concurrent tree embeds values a single atomic store can replace; a
// `String` needs `layout: leaf`, and the error says so.
radix_core::radix_tree! {
    pub struct Names { key: u64, value: String, concurrency: rowex }
}

fn main() {}
