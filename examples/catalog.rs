//! Seed 004's catalog, high level: the `search` tool from `#[tool]`, and `resources/subscribe`
//! taken over by hand through `server.lowlevel()`.
//!
//! Run: `cargo run --example catalog` (serves over stdio).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use modelctx::prelude::*;
use modelctx::types::*;

const CATALOG: &[(&str, u32)] = &[("Espresso cup", 12), ("Travel mug", 24), ("Mug rack", 36)];

/// Search the product catalog
#[tool]
async fn search(
    /// Substring to match against product names
    query: String,
) -> String {
    CATALOG
        .iter()
        .filter(|(name, _)| name.contains(&query))
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The URIs clients subscribed to.
pub type Subscriptions = Arc<Mutex<BTreeSet<String>>>;

/// The server of this example, recording subscriptions in `subscriptions`.
pub fn server(subscriptions: Subscriptions) -> McpServer {
    let mut server = McpServer::new("catalog").version("1.0.0").tool(SearchTool);
    // The one method McpServer has no API for, by hand; everything else stays as it was.
    server.lowlevel().on_subscribe_resource(move |_, params| {
        subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(params.uri);
        async { Ok(EmptyResult::default()) }
    });
    server
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<()> {
    server(Subscriptions::default()).serve_stdio().await
}
