//! With the `validation` feature off (`cargo test -p modelctx --no-default-features --test
//! without_validation`), serde's checks still apply; ranges and unknown arguments are no longer
//! refused. `.ci/run` runs this file that way; with default features it is empty.
#![cfg(not(feature = "validation"))]

use modelctx::prelude::*;
use serde_json::json;

/// Search books.
#[tool]
async fn search(query: String, #[arg(range(1..=50))] limit: u32) -> String {
    format!("{query} {limit}")
}

#[tokio::test]
async fn serde_checks_remain_and_schema_rules_are_lost() {
    let client = Client::connect(McpServer::new("plain").tool(SearchTool))
        .await
        .unwrap();
    let wrong_type = client
        .call_tool("search", json!({"query": 5, "limit": 1}))
        .await
        .unwrap();
    assert!(wrong_type.is_error);
    assert!(wrong_type.content[0]
        .as_text()
        .unwrap()
        .starts_with("query: invalid type"));
    let missing = client
        .call_tool("search", json!({"limit": 1}))
        .await
        .unwrap();
    assert!(
        missing.is_error,
        "a required argument is still required (null does not decode)"
    );
    let out_of_range = client
        .call_tool("search", json!({"query": "q", "limit": 80, "extra": true}))
        .await
        .unwrap();
    assert_eq!(
        out_of_range.content[0].as_text(),
        Some("q 80"),
        "range and unknown arguments not enforced"
    );
    client.close().await;
}
