//! Writes seed states for the `unseal` target (sealed with the fixed fuzzing key) into the
//! directory given as the first argument.

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "corpus/unseal".into());
    std::fs::create_dir_all(&dir).expect("the corpus directory");
    for (i, state) in ["", "step-1", "{\"k\":[1,2,3]}"].iter().enumerate() {
        let sealed = modelctx_core::fuzzing::sample_state(state);
        let answers = r#"{"q":{"roots":[{"uri":"file:///x"}]}}"#;
        std::fs::write(format!("{dir}/state-{i}"), format!("{sealed}\n{answers}"))
            .expect("a seed file");
    }
}
