use modelctx::prelude::*;

struct Shop;

#[tools]
impl Shop {
    /// Close the shop.
    #[tool]
    async fn close(self) -> String {
        "closed".into()
    }
}

fn main() {}
