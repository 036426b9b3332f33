//! Compile-fail tests of the macros: each mistake gives one error, on the right span, in a
//! sentence a person understands. The `.stderr` snapshots belong to the toolchain pinned in
//! `rust-toolchain.toml`; regenerate with `TRYBUILD=overwrite cargo test --test ui`.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}
