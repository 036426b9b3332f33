use modelctx::prelude::*;

struct Counter {
    n: u64,
}

#[tools]
impl Counter {
    /// Count one more.
    #[tool]
    async fn bump(&mut self) -> u64 {
        self.n += 1;
        self.n
    }
}

fn main() {}
