//! Scratch (helper H1; removed before the end).
#[test]
fn scratch() {
    trybuild::TestCases::new().compile_fail("/tmp/h1/cases/*.rs");
}
