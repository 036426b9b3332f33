//! The seed pages' low-level examples (`examples/lowlevel_*.rs`), driven through the in-memory
//! client, asserting what the pages say they print, failure cases included.

#[allow(unreachable_pub)] // the example program's items are `pub` for this test to reach
#[path = "../examples/lowlevel_catalog.rs"]
mod catalog;
#[allow(unreachable_pub)] // the example program's items are `pub` for this test to reach
#[path = "../examples/lowlevel_lifespan.rs"]
mod lifespan;
#[allow(unreachable_pub)] // the example program's items are `pub` for this test to reach
#[path = "../examples/lowlevel_meta.rs"]
mod meta;
#[allow(unreachable_pub)] // the example program's items are `pub` for this test to reach
#[path = "../examples/lowlevel_one_tool.rs"]
mod one_tool;
#[allow(unreachable_pub)] // the example program's items are `pub` for this test to reach
#[path = "../examples/lowlevel_structured_output.rs"]
mod structured;
#[allow(unreachable_pub)] // the example program's items are `pub` for this test to reach
#[path = "../examples/lowlevel_two_tools.rs"]
mod two_tools;
#[allow(unreachable_pub)] // the example program's items are `pub` for this test to reach
#[path = "../examples/lowlevel_vendor_method.rs"]
mod vendor;

use modelctx::lowlevel::RESERVED_INITIALIZE;
use modelctx::prelude::*;
use modelctx::types::*;
use serde_json::json;

fn texts(result: &CallToolResult) -> Vec<&str> {
    result
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect()
}

#[tokio::test]
async fn one_tool_answers_like_the_high_level_version_in_both_eras() {
    for builder in [Client::builder(), Client::builder().legacy()] {
        let client = builder.connect(one_tool::server()).await.unwrap();
        let result = client
            .call_tool("search_books", json!({"query": "dune", "limit": 5}))
            .await
            .unwrap();
        assert_eq!(
            result.content,
            vec![ContentBlock::text(
                "Found 3 books matching 'dune' (showing up to 5)."
            )]
        );
        assert_eq!(
            result.structured_content, None,
            "nothing is wrapped down here"
        );
        assert!(!result.is_error);
        client.close().await;
    }
}

#[tokio::test]
async fn one_tool_lists_the_schema_character_for_character() {
    let client = Client::connect(one_tool::server()).await.unwrap();
    let listed = client.request("tools/list", json!({})).await.unwrap();
    assert_eq!(
        listed["tools"],
        json!([{
            "name": "search_books",
            "description": "Search the catalog by title or author.",
            "inputSchema": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["query", "limit"]
            }
        }])
    );
    assert_eq!(
        serde_json::to_string(&listed["tools"][0]["inputSchema"]).unwrap(),
        r#"{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query","limit"]}"#,
        "key order is kept as written"
    );
    client.close().await;
}

#[tokio::test]
async fn a_call_without_limit_is_a_generic_internal_error() {
    for builder in [Client::builder(), Client::builder().legacy()] {
        let client = builder.connect(one_tool::server()).await.unwrap();
        let err = client
            .call_tool("search_books", json!({"query": "dune"}))
            .await
            .unwrap_err();
        assert_eq!(err.code(), -32603);
        assert_eq!(err.message(), "Internal server error");
        assert_eq!(err.data(), None, "no detail on the wire");
        client.close().await;
    }
}

#[tokio::test]
async fn raise_exceptions_surfaces_the_real_error() {
    let client = Client::builder()
        .raise_exceptions(true)
        .connect(one_tool::server())
        .await
        .unwrap();
    let err = client
        .call_tool("search_books", json!({"query": "dune"}))
        .await
        .unwrap_err();
    assert_eq!(err.code(), -32603);
    assert_eq!(err.message(), "missing field `limit`");
    client.close().await;
}

#[tokio::test]
async fn two_tools_route_on_the_name_and_an_unknown_name_is_internal() {
    let client = Client::connect(two_tools::server()).await.unwrap();
    let tools = client.list_tools().await.unwrap().tools;
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["search_books", "add_book"]);

    let added = client
        .call_tool(
            "add_book",
            json!({"title": "Dune", "author": "Frank Herbert", "year": 1965}),
        )
        .await
        .unwrap();
    assert_eq!(texts(&added), ["Added 'Dune' by Frank Herbert (1965)."]);

    let err = client
        .call_tool("delete_book", json!({}))
        .await
        .unwrap_err();
    assert_eq!(
        (err.code(), err.message().as_ref()),
        (-32603, "Internal server error")
    );
    client.close().await;
}

#[tokio::test]
async fn structured_output_carries_both_representations_and_the_identity_stamp() {
    let client = Client::connect(structured::server()).await.unwrap();
    let result = client
        .request(
            "tools/call",
            json!({"name": "search_books", "arguments": {"query": "dune", "limit": 5}}),
        )
        .await
        .unwrap();
    assert_eq!(
        result,
        json!({
            "content": [{"type": "text", "text": "Found 3 books matching 'dune'."}],
            "structuredContent": {"matches": 3, "query": "dune"},
            "isError": false,
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "Bookshop", "version": "2.0.0"}}
        })
    );
    client.close().await;

    // The 2025 era gets the same result without the 2026 envelope.
    let client = Client::builder()
        .legacy()
        .connect(structured::server())
        .await
        .unwrap();
    let result = client
        .request(
            "tools/call",
            json!({"name": "search_books", "arguments": {"query": "dune", "limit": 5}}),
        )
        .await
        .unwrap();
    assert_eq!(
        result,
        json!({
            "content": [{"type": "text", "text": "Found 3 books matching 'dune'."}],
            "structuredContent": {"matches": 3, "query": "dune"},
            "isError": false
        })
    );
    client.close().await;
}

#[tokio::test]
async fn a_server_without_a_version_reports_an_empty_string() {
    let client = Client::connect(one_tool::server()).await.unwrap();
    let listed = client.request("tools/list", json!({})).await.unwrap();
    assert_eq!(
        listed["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "Bookshop", "version": ""})
    );
    client.close().await;
}

#[tokio::test]
async fn meta_rides_along_for_the_application() {
    let client = Client::connect(meta::server()).await.unwrap();
    let result = client
        .call_tool("search_books", json!({"query": "dune", "limit": 5}))
        .await
        .unwrap();
    let meta = result.meta.expect("_meta is returned");
    assert_eq!(
        meta["bookshop/record_ids"],
        json!(["bk_17", "bk_42", "bk_99"])
    );
    assert_eq!(
        result.structured_content,
        Some(json!({"matches": 3, "query": "dune"}))
    );
    client.close().await;
}

#[tokio::test]
async fn capabilities_follow_the_handlers() {
    let client = Client::builder()
        .legacy()
        .connect(one_tool::server())
        .await
        .unwrap();
    let init = client.initialize_result().unwrap();
    assert_eq!(
        serde_json::to_value(&init.capabilities).unwrap(),
        json!({"tools": {"listChanged": false}})
    );
    client.close().await;

    let client = Client::connect(one_tool::server()).await.unwrap();
    let discover = client.discover().await.unwrap();
    assert_eq!(
        serde_json::to_value(&discover.capabilities).unwrap(),
        json!({"tools": {"listChanged": false}})
    );
    client.close().await;
}

#[tokio::test]
async fn the_lifespan_state_is_typed_in_handlers() {
    let client = Client::connect(lifespan::server()).await.unwrap();
    let result = client
        .call_tool("search_books", json!({"query": "dune"}))
        .await
        .unwrap();
    assert_eq!(
        texts(&result),
        ["Found 3 books: Dune, Dune Messiah, Children of Dune."]
    );
    let result = client
        .call_tool("search_books", json!({"query": "messiah"}))
        .await
        .unwrap();
    assert_eq!(texts(&result), ["Found 1 books: Dune Messiah."]);
    client.close().await;
}

#[tokio::test]
async fn a_vendor_method_gets_typed_params_validated_before_it_runs() {
    let client = Client::connect(vendor::server().unwrap()).await.unwrap();
    let result = client
        .request("bookshop/reindex", json!({"full": true}))
        .await
        .unwrap();
    assert_eq!(result["indexed"], 3);
    let result = client.request("bookshop/reindex", json!({})).await.unwrap();
    assert_eq!(result["indexed"], 3, "full defaults to false");

    let err = client
        .request("bookshop/reindex", json!({"full": "yes"}))
        .await
        .unwrap_err();
    assert_eq!(err.code(), -32602);
    assert_eq!(
        err.message(),
        "Invalid params: invalid type: string \"yes\", expected a boolean"
    );
    client.close().await;

    // Same on the 2025 wire, where the result carries no envelope.
    let client = Client::builder()
        .legacy()
        .connect(vendor::server().unwrap())
        .await
        .unwrap();
    let result = client
        .request("bookshop/reindex", json!({"full": true}))
        .await
        .unwrap();
    assert_eq!(result, json!({"indexed": 3}));
    client.close().await;
}

#[test]
fn initialize_cannot_be_claimed() {
    let mut server = Server::new("Bookshop");
    let err = server
        .add_request_handler("initialize", |_, _: RequestParams| async {
            Ok(EmptyResult::default())
        })
        .expect_err("initialize is reserved");
    assert_eq!(err.message(), RESERVED_INITIALIZE);
    assert!(err.message().contains("use Server::middleware"));
    // ping and server/discover are yours to replace.
    assert!(server
        .add_request_handler("ping", |_, _: RequestParams| async {
            Ok(json!({"pong": true}))
        })
        .is_ok());
    assert!(server
        .add_request_handler("server/discover", |_, _: RequestParams| async {
            Ok(json!({}))
        })
        .is_ok());
}

#[tokio::test]
async fn catalog_unchecked_crashes_into_a_protocol_error() {
    let client = Client::connect(catalog::unchecked_server()).await.unwrap();
    let hits = client
        .call_tool("search", json!({"query": "mug"}))
        .await
        .unwrap();
    assert_eq!(
        hits.content,
        vec![ContentBlock::text("Travel mug\nMug rack")]
    );

    let err = client
        .call_tool("search", json!({"query": 42}))
        .await
        .unwrap_err();
    assert_eq!(
        (err.code(), err.message().as_ref()),
        (-32603, "Internal server error")
    );
    client.close().await;
}

#[tokio::test]
async fn catalog_checked_returns_tool_errors_the_model_can_read() {
    let client = Client::connect(catalog::server().unwrap()).await.unwrap();
    let listed = client.list_tools().await.unwrap();
    assert_eq!(
        listed.tools[0].input_schema["properties"]["query"]["description"],
        "Substring to match against product names"
    );
    let hits = client
        .call_tool("search", json!({"query": "mug"}))
        .await
        .unwrap();
    assert_eq!(
        hits.content,
        vec![ContentBlock::text("Travel mug\nMug rack")]
    );
    assert!(!hits.is_error);

    let bad = client
        .call_tool("search", json!({"query": 42}))
        .await
        .unwrap();
    assert!(bad.is_error);
    assert_eq!(texts(&bad), ["query: 42 is not of type \"string\""]);

    let unknown = client.call_tool("checkout", json!({})).await.unwrap();
    assert!(unknown.is_error);
    assert_eq!(texts(&unknown), ["Unknown tool: checkout"]);
    client.close().await;
}

#[tokio::test]
async fn the_client_checks_structured_content_against_the_declared_schema() {
    let mut server = structured::server();
    server.on_call_tool(|_, _| async {
        Ok(CallToolResult::text("Found three books.")
            .with_structured(json!({"matches": "three", "query": "dune"})))
    });
    let client = Client::connect(server).await.unwrap();
    let err = client
        .call_tool("search_books", json!({"query": "dune", "limit": 5}))
        .await
        .unwrap_err();
    assert!(
        err.message()
            .starts_with("Invalid structured content returned by tool search_books"),
        "{}",
        err.message()
    );
    assert!(
        err.message()
            .contains("\"three\" is not of type \"integer\""),
        "{}",
        err.message()
    );
    // The raw request is not checked: the server never compares the two fields.
    let raw = client
        .request(
            "tools/call",
            json!({"name": "search_books", "arguments": {"query": "dune", "limit": 5}}),
        )
        .await
        .unwrap();
    assert_eq!(raw["structuredContent"]["matches"], "three");
    client.close().await;
}
