//! Invalid `radix_tree!` invocations fail to compile with a message that
//! names the problem. The expected messages are in `tests/ui/*.stderr`;
//! regenerate them with `TRYBUILD=overwrite cargo test -p radix-core --test
//! compile_fail` and read the diff.

#[test]
fn invalid_invocations_fail_to_compile() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
