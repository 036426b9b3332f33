use modelctx::prelude::*;

/// One book.
#[resource("books://{id}{?format}", mime_type = "text/plain")]
async fn book(
    #[arg(complete = ids)]
    id: u32,
    format: Option<String>,
) -> Option<String> {
    Some(format!("{id} {format:?}"))
}

fn ids(prefix: &str) -> Vec<String> {
    vec![format!("{prefix}1")]
}

/// Review a book.
#[prompt(title = "Review")]
fn review(ctx: RequestContext, title: String, tone: Option<String>) -> String {
    let _ = ctx;
    format!("{title} {tone:?}")
}

fn main() {
    let _server = McpServer::new("s").resource(BookResource).prompt(ReviewPrompt);
}
