//! The `radix_tree!` macro (placeholder while it is written).
use proc_macro::TokenStream;

/// Declares a radix tree type.
#[proc_macro]
pub fn radix_tree(_input: TokenStream) -> TokenStream {
    "compile_error!(\"radix_tree! is not written yet\");"
        .parse()
        .unwrap()
}
