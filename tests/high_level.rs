//! The high-level server: free-function tools, error routing, the escape hatch, runtime
//! changes, raw-schema tools and pagination, through the in-memory client.

use std::time::Duration;

use modelctx::prelude::*;
use modelctx::server::{SchemaValidator, ToolDef};
use modelctx::types::*;
use serde_json::{json, Value};

/// Add two integers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Greet someone, politely or not.
#[tool(name = "greet", title = "Greeter", idempotent, open_world = false)]
fn hello(
    /// Who to greet.
    #[arg(length(1..=20), pattern = "^[A-Za-z ]+$")]
    who: String,
    /// Be polite.
    polite: Option<bool>,
) -> String {
    match polite {
        Some(false) => format!("Hey {who}."),
        _ => format!("Good day, {who}."),
    }
}

/// Fail in every way a tool can.
#[tool]
async fn fail(
    /// `tool`, `protocol`, `io` or `panic`.
    how: String,
) -> Result<String, std::io::Error> {
    match how.as_str() {
        "io" => Err(std::io::Error::other("disk on fire")),
        "panic" => panic!("tool exploded"),
        _ => Ok("fine".into()),
    }
}

/// Fail with a protocol error.
#[tool]
async fn refuse() -> modelctx::Result<String> {
    Err(McpError::new(-32099, "refused on purpose"))
}

/// Report progress while counting.
#[tool]
async fn count(ctx: RequestContext, #[arg(range(1..=5))] to: u32) -> Result<String, ToolError> {
    for i in 1..=to {
        ctx.progress(i).total(to).await;
    }
    Ok(format!("counted to {to}"))
}

/// Opens a 2026 `subscriptions/listen` stream with `filter`; returns the connection and the
/// acknowledgement.
async fn listen(
    server: McpServer,
    id: Value,
    filter: Value,
) -> (modelctx::transport::RawConnection, Value) {
    let mut conn = modelctx::transport::RawConnection::open(server)
        .await
        .unwrap();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    conn.send_json(
        &json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": {"_meta": meta, "notifications": filter}}),
    )
    .await
    .unwrap();
    let ack = conn.recv_json().await.unwrap();
    (conn, ack)
}

fn text(result: &CallToolResult) -> &str {
    result.content[0].as_text().unwrap_or("")
}

fn server() -> McpServer {
    McpServer::new("high")
        .version("3.1.4")
        .tool(AddTool)
        .tool(HelloTool)
        .tool(FailTool)
        .tool(RefuseTool)
        .tool(CountTool)
}

#[tokio::test]
async fn free_functions_become_tools_and_stay_callable() {
    assert_eq!(add(2, 3).await, 5, "the function stays a function");
    let client = Client::connect(server()).await.unwrap();
    let listed = client.request("tools/list", json!({})).await.unwrap();
    let greet = &listed["tools"][1];
    assert_eq!(greet["name"], "greet");
    assert_eq!(greet["title"], "Greeter");
    assert_eq!(
        greet["annotations"],
        json!({"idempotentHint": true, "openWorldHint": false})
    );
    assert_eq!(
        greet["inputSchema"]["properties"]["who"],
        json!({"type": "string", "description": "Who to greet.", "minLength": 1, "maxLength": 20, "pattern": "^[A-Za-z ]+$"})
    );
    assert_eq!(
        greet["inputSchema"]["properties"]["polite"],
        json!({"type": "boolean", "description": "Be polite."})
    );
    assert_eq!(greet["inputSchema"]["required"], json!(["who"]));
    assert_eq!(
        listed["tools"][0]["outputSchema"],
        json!({"type": "integer"})
    );

    let sum = client
        .call_tool("add", json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!(42)));
    assert_eq!(text(&sum), "42");
    let hi = client
        .call_tool("greet", json!({"who": "Ada"}))
        .await
        .unwrap();
    assert_eq!(
        text(&hi),
        "Good day, Ada.",
        "a plain fn runs off the executor"
    );
    let bad = client
        .call_tool("greet", json!({"who": "R2-D2"}))
        .await
        .unwrap();
    assert!(bad.is_error);
    assert!(
        text(&bad).starts_with("who: \"R2-D2\" does not match"),
        "{}",
        text(&bad)
    );
    client.close().await;

    // On 2025 a scalar result is wrapped as {"result": ...}.
    let client = Client::builder().legacy().connect(server()).await.unwrap();
    let sum = client
        .call_tool("add", json!({"a": 1, "b": 1}))
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!({"result": 2})));
    client.close().await;
}

#[tokio::test]
async fn errors_take_the_right_channel() {
    let client = Client::connect(server()).await.unwrap();
    for how in ["io", "panic"] {
        let result = client.call_tool("fail", json!({"how": how})).await.unwrap();
        assert!(result.is_error);
        assert_eq!(
            text(&result),
            "Error executing tool fail",
            "no detail for {how}"
        );
    }
    let err = client.call_tool("refuse", json!({})).await.unwrap_err();
    assert_eq!(
        (err.code(), err.message().as_ref()),
        (-32099, "refused on purpose")
    );
    client.close().await;
}

#[tokio::test]
async fn a_context_parameter_is_not_in_the_schema_and_reports_progress() {
    let client = Client::connect(server()).await.unwrap();
    let listed = client.list_tools().await.unwrap();
    let counter = listed.tools.iter().find(|t| t.name == "count").unwrap();
    assert_eq!(
        Value::Object(counter.input_schema.clone()),
        json!({
            "type": "object",
            "properties": {"to": {"type": "integer", "minimum": 1, "maximum": 5}},
            "required": ["to"],
            "additionalProperties": false
        })
    );
    let result = client
        .request(
            "tools/call",
            json!({"name": "count", "arguments": {"to": 3}, "_meta": {"progressToken": "c"}}),
        )
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "counted to 3");
    let notes = client.drain_notifications().await;
    let progress: Vec<_> = notes.iter().map(|n| n.params["progress"].clone()).collect();
    assert_eq!(progress, [json!(1), json!(2), json!(3)]);
    client.close().await;
}

#[tokio::test]
async fn lowlevel_replaces_one_method_and_keeps_the_rest() {
    let mut server = server();
    server.lowlevel().on_list_tools(|_, _| async {
        Ok(ListToolsResult::new(vec![Tool::new(
            "add",
            "Hand-written listing.",
            json!({"type": "object"}),
        )]))
    });
    server
        .lowlevel()
        .add_request_handler("high/version", |ctx, _: Value| async move {
            Ok(json!({"version": ctx.server_info().version}))
        })
        .unwrap();
    let client = Client::connect(server).await.unwrap();
    let listed = client.list_tools().await.unwrap();
    assert_eq!(listed.tools.len(), 1);
    assert_eq!(
        listed.tools[0].description.as_deref(),
        Some("Hand-written listing.")
    );
    let sum = client
        .call_tool("add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(
        sum.structured_content,
        Some(json!(3)),
        "tools/call still served by the registry"
    );
    let version = client.request("high/version", json!({})).await.unwrap();
    assert_eq!(version["version"], "3.1.4");
    client.close().await;

    // The reverse: a hand-written tools/call, the registry's tools/list.
    let mut server = self::server();
    server.lowlevel().on_call_tool(|_, p| async move {
        Ok(CallToolResult::text(format!("by hand: {}", p.name)))
    });
    let client = Client::connect(server).await.unwrap();
    assert_eq!(client.list_tools().await.unwrap().tools.len(), 5);
    let result = client
        .request("tools/call", json!({"name": "add", "arguments": {}}))
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "by hand: add");
    // The client holds the hand-written handler to the schema the registry lists.
    let err = client.call_tool("add", json!({})).await.unwrap_err();
    assert_eq!(
        err.message(),
        "Tool add has an output schema but did not return structured content"
    );
    client.close().await;
}

#[tokio::test]
async fn a_raw_schema_is_listed_exactly_and_enforced() {
    let raw = r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"Point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"]}},"properties":{"at":{"$ref":"#/$defs/Point"},"label":{"oneOf":[{"type":"string"},{"type":"null"}]}},"required":["at"],"additionalProperties":false}"##;
    let tool = ToolDef::from_schema(
        "place",
        serde_json::from_str(raw).unwrap(),
        |_, args| async move { Ok(CallToolResult::text(format!("placed at {}", args["at"]))) },
    )
    .unwrap()
    .description("Place a label.");
    let client = Client::connect(McpServer::new("raw").tool(tool))
        .await
        .unwrap();
    let listed = client.request("tools/list", json!({})).await.unwrap();
    assert_eq!(
        serde_json::to_string(&listed["tools"][0]["inputSchema"]).unwrap(),
        raw,
        "byte for byte"
    );
    let ok = client
        .call_tool("place", json!({"at": {"x": 1, "y": 2}}))
        .await
        .unwrap();
    assert_eq!(text(&ok), r#"placed at {"x":1,"y":2}"#);
    let bad = client
        .call_tool("place", json!({"at": {"x": 1}}))
        .await
        .unwrap();
    assert!(bad.is_error);
    assert_eq!(text(&bad), "at: \"y\" is a required property");
    client.close().await;
}

#[tokio::test]
async fn a_hand_written_handler_gets_the_same_validation_text() {
    let schema = json!({
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"]
    });
    let validator = SchemaValidator::compile(&schema).unwrap();
    assert_eq!(
        validator.validate(&json!({"query": 42})).unwrap_err(),
        "query: 42 is not of type \"string\""
    );
    let via_registry = ToolDef::<()>::from_schema("search", schema, |_, _| async {
        Ok(CallToolResult::text("ok"))
    })
    .unwrap()
    .description("Search.");
    let client = Client::connect(McpServer::new("v").tool(via_registry))
        .await
        .unwrap();
    let result = client
        .call_tool("search", json!({"query": 42}))
        .await
        .unwrap();
    assert_eq!(
        text(&result),
        "query: 42 is not of type \"string\"",
        "same text on both paths"
    );
    client.close().await;
}

#[tokio::test]
async fn tools_list_pages_with_a_cursor() {
    for builder in [Client::builder(), Client::builder().legacy()] {
        let client = builder.connect(server().page_size(2)).await.unwrap();
        let mut names = Vec::new();
        let mut pages = 0;
        let mut cursor: Option<String> = None;
        loop {
            let page = client.list_tools_page(cursor.as_deref()).await.unwrap();
            assert!(page.tools.len() <= 2);
            pages += 1;
            names.extend(page.tools.into_iter().map(|t| t.name));
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(pages, 3, "{:?}", client.era());
        assert_eq!(names, ["add", "greet", "fail", "refuse", "count"]);
        let err = client.list_tools_page(Some("nonsense")).await.unwrap_err();
        assert_eq!(err.code(), -32602);
        client.close().await;
    }
}

#[tokio::test]
async fn runtime_changes_update_the_list_and_notify_each_era() {
    let server = McpServer::new("live").tool(AddTool);
    let handle = server.handle();
    let legacy = Client::builder().legacy().connect(server).await.unwrap();
    let init = legacy.initialize_result().unwrap();
    assert_eq!(
        init.capabilities.tools.as_ref().unwrap().list_changed,
        Some(true)
    );
    handle.add_tool(HelloTool).unwrap();
    let note = tokio::time::timeout(Duration::from_secs(5), legacy.next_notification())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(note.method, "notifications/tools/list_changed");
    assert_eq!(legacy.list_tools().await.unwrap().tools.len(), 2);
    assert!(handle.remove_tool("add"));
    assert!(!handle.remove_tool("add"), "already gone");
    let note = tokio::time::timeout(Duration::from_secs(5), legacy.next_notification())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(note.method, "notifications/tools/list_changed");
    let names: Vec<_> = legacy
        .list_tools()
        .await
        .unwrap()
        .tools
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["greet"]);
    legacy.close().await;
}

#[tokio::test]
async fn a_2026_listen_stream_hears_tool_changes() {
    let server = McpServer::new("live").tool(AddTool);
    let handle = server.handle();
    let filter = json!({"toolsListChanged": true, "resourceSubscriptions": ["shop://about"]});
    let (mut conn, ack) = listen(server, json!("L"), filter).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["shop://about"]}),
        "only what is honoured"
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "L"
    );
    handle.add_tool(HelloTool).unwrap();
    let changed = tokio::time::timeout(Duration::from_secs(5), conn.recv_json())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "L"
    );
    conn.close().await;
}

/// The shop's motto.
#[resource("shop://motto")]
async fn motto() -> String {
    "Read more.".into()
}

/// Quote the shop's motto, read from the server's own resources.
#[tool(
    icon = "https://example.com/quote.png",
    meta = r#"{"vendor/tier": "free"}"#
)]
async fn quote(ctx: RequestContext) -> modelctx::Result<String> {
    let contents = ctx.read_resource("shop://motto").await?;
    let value = serde_json::to_value(&contents.contents[0])?;
    Ok(format!(
        "\"{}\"",
        value["text"].as_str().unwrap_or_default()
    ))
}

/// Draw a dot.
#[tool]
async fn dot() -> Vec<ContentBlock> {
    vec![
        ContentBlock::text("a dot:"),
        ContentBlock::image("iVBORw==", "image/png"),
    ]
}

#[tokio::test]
async fn context_reads_resources_content_passes_through_and_attributes_are_listed() {
    let server = McpServer::new("ctx")
        .resource(MottoResource)
        .tool(QuoteTool)
        .tool(DotTool);
    let client = Client::connect(server).await.unwrap();
    let quoted = client.call_tool("quote", json!({})).await.unwrap();
    assert_eq!(text(&quoted), "\"Read more.\"");
    let drawn = client.call_tool("dot", json!({})).await.unwrap();
    assert_eq!(
        serde_json::to_value(&drawn.content).unwrap(),
        json!([{"type": "text", "text": "a dot:"}, {"type": "image", "data": "iVBORw==", "mimeType": "image/png"}])
    );
    assert!(
        drawn.structured_content.is_none(),
        "content passes through untouched"
    );
    let listed = client.request("tools/list", json!({})).await.unwrap();
    assert_eq!(
        listed["tools"][0]["icons"],
        json!([{"src": "https://example.com/quote.png"}])
    );
    assert_eq!(listed["tools"][0]["_meta"], json!({"vendor/tier": "free"}));
    client.close().await;
}

#[tokio::test]
async fn output_that_breaks_its_schema_never_leaves() {
    let liar = ToolDef::<()>::from_schema("liar", json!({"type": "object"}), |_, _| async {
        Ok(CallToolResult::text("{}").with_structured(json!({"count": "many"})))
    })
    .unwrap()
    .description("Promise an integer, return a string.")
    .output_schema(
        json!({"type": "object", "properties": {"count": {"type": "integer"}}}),
        true,
    )
    .unwrap();
    let client = Client::connect(McpServer::new("o").tool(liar))
        .await
        .unwrap();
    let result = client.call_tool("liar", json!({})).await.unwrap();
    assert!(result.is_error);
    assert_eq!(text(&result), "Error executing tool liar");
    assert!(
        result.structured_content.is_none(),
        "never a corrupt result"
    );
    client.close().await;
}

/// Read a file's size, the std way.
#[tool]
async fn r#type(
    /// The text.
    r#in: String,
) -> std::io::Result<usize> {
    if r#in == "bad" {
        return Err(std::io::Error::other("cannot read"));
    }
    Ok(r#in.len())
}

/// Greet with defaults, float bounds, list bounds and any JSON.
#[tool]
fn settings(
    #[arg(default = "friend")] name: String,
    #[arg(range(0.0..=1.), default = 0.5)] ratio: f64,
    #[arg(length(1..=3))] tags: Vec<String>,
    /// Anything at all.
    extra: serde_json::Value,
    polite: Option<bool>,
) -> String {
    if name == "panic" {
        panic!("blocking tool exploded");
    }
    format!("{name} {ratio} {} {extra} {polite:?}", tags.join(","))
}

#[tokio::test]
async fn aliases_raw_names_defaults_bounds_and_nulls() {
    let server = McpServer::new("misc").tool(TypeTool).tool(SettingsTool);
    let client = Client::connect(server).await.unwrap();
    let listed = client.request("tools/list", json!({})).await.unwrap();
    assert_eq!(
        listed["tools"][0]["name"], "type",
        "a raw identifier loses its r#"
    );
    assert_eq!(listed["tools"][0]["inputSchema"]["required"], json!(["in"]));
    let props = &listed["tools"][1]["inputSchema"]["properties"];
    assert_eq!(props["name"]["default"], "friend");
    assert_eq!(
        (
            props["ratio"]["minimum"].clone(),
            props["ratio"]["maximum"].clone()
        ),
        (json!(0.0), json!(1.0))
    );
    assert_eq!(
        (
            props["tags"]["minItems"].clone(),
            props["tags"]["maxItems"].clone()
        ),
        (json!(1), json!(3))
    );
    assert_eq!(props["extra"], json!({"description": "Anything at all."}));

    let len = client
        .call_tool("type", json!({"in": "four"}))
        .await
        .unwrap();
    assert_eq!(len.structured_content, Some(json!(4)));
    let failed = client
        .call_tool("type", json!({"in": "bad"}))
        .await
        .unwrap();
    assert_eq!(
        text(&failed),
        "Error executing tool type",
        "io::Error is internal"
    );

    let ok = client
        .call_tool(
            "settings",
            json!({"tags": ["a"], "extra": [1], "polite": null}),
        )
        .await
        .unwrap();
    assert_eq!(
        text(&ok),
        "friend 0.5 a [1] None",
        "defaults apply, null is None"
    );
    let too_many = client
        .call_tool(
            "settings",
            json!({"tags": ["a", "b", "c", "d"], "extra": 1}),
        )
        .await
        .unwrap();
    assert!(too_many.is_error);
    assert!(text(&too_many).starts_with("tags: "), "{}", text(&too_many));
    let blown = client
        .call_tool(
            "settings",
            json!({"name": "panic", "tags": ["a"], "extra": 1}),
        )
        .await
        .unwrap();
    assert_eq!(
        text(&blown),
        "Error executing tool settings",
        "a panic in a plain fn"
    );
    client.close().await;
}

#[tokio::test]
async fn a_2026_listen_stream_hears_prompt_and_resource_changes_it_asked_for() {
    let server = McpServer::new("live").tool(AddTool);
    let handle = server.handle();
    let filter = json!({"promptsListChanged": true, "resourcesListChanged": true});
    let (mut conn, ack) = listen(server, json!(5), filter).await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"promptsListChanged": true, "resourcesListChanged": true})
    );
    handle.add_tool(HelloTool).unwrap(); // not asked for: not delivered
    handle
        .add_prompt(modelctx::server::PromptDef::<()>::new("p", |_, _| async {
            Ok(String::from("x").into())
        }))
        .unwrap();
    handle.add_resource(MottoResource).unwrap();
    let first = tokio::time::timeout(Duration::from_secs(5), conn.recv_json())
        .await
        .unwrap()
        .unwrap();
    let second = tokio::time::timeout(Duration::from_secs(5), conn.recv_json())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first["method"], "notifications/prompts/list_changed");
    assert_eq!(second["method"], "notifications/resources/list_changed");
    assert_eq!(
        second["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        5
    );
    conn.close().await;
}
