//! This SDK's client against a stdio server: `client-ours <in_flight> <calls> -- <server...>`.
//! Prints one JSON line of figures.

use std::sync::Arc;

use mcp_bench::client_load::{measure, sum_of};
use modelctx::client::Client;
use modelctx::transport::{ChildProcess, Stderr};
use serde_json::json;

#[tokio::main]
async fn main() {
    let (in_flight, n, cmd) = mcp_bench::client_load::args();
    let server = ChildProcess::new(&cmd[0])
        .args(&cmd[1..])
        .stderr(Stderr::Discard);
    // The raw server speaks 2025 only: pin the era (no probe).
    let client = Arc::new(
        Client::builder()
            .legacy()
            .connect(server)
            .await
            .expect("connects"),
    );
    let figures = measure(
        client.clone(),
        |client: Arc<Client>, i| async move {
            let result = client
                .call_tool("add", json!({"a": i, "b": 1}))
                .await
                .expect("call");
            sum_of(result.content.first().and_then(|c| c.as_text()))
        },
        n,
        in_flight,
    )
    .await;
    println!("{figures}");
    if let Ok(client) = Arc::try_unwrap(client) {
        client.close().await;
    }
}
