use modelctx::prelude::*;

struct Shop;

#[tools]
impl Shop {
    /// The logo.
    #[resource("shop://logo")]
    async fn logo(&self) -> String {
        "logo".into()
    }

    /// The logo again.
    #[resource("shop://logo")]
    async fn logo_again(&self) -> String {
        "logo".into()
    }

    /// A review.
    #[prompt]
    async fn review(&self) -> String {
        "Review.".into()
    }

    /// Another review.
    #[prompt(name = "review")]
    async fn other_review(&self) -> String {
        "Review.".into()
    }
}

fn main() {}
