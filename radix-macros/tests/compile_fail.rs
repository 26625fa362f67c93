//! Invalid `radix_tree!` invocations, and misuses of the types it emits
//! (an entry or iterator outliving its tree, a tree of `Rc` sent to
//! another thread), fail to compile with a message that names the problem.
//! All of them build as one batch. The expected messages are in `tests/ui/*.stderr`;
//! regenerate them with `TRYBUILD=overwrite cargo test -p radix-macros --test
//! compile_fail` and read the diff.

#[test]
fn invalid_invocations_fail_to_compile() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
