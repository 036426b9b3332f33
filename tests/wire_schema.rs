//! Every kind of message the engine writes, in both eras, validated against the official JSON
//! Schema of its revision (`../shared/mcp-schema/<revision>/schema.json`, or `$MCP_SCHEMA_DIR`).
//!
//! One deliberate deviation: an error for a message whose id could not be read carries
//! `"id": null`, as JSON-RPC 2.0 requires; the MCP schema types `id` as string|integer and lets
//! it be omitted instead, so those errors are validated with the null id removed.

#[allow(unreachable_pub)] // the example program's items are `pub` for this test to reach
#[path = "../examples/bookshop.rs"]
mod bookshop;
mod support;

use std::path::PathBuf;

use modelctx::prelude::*;
use modelctx::transport::RawConnection;
use modelctx::types::*;
use serde_json::{json, Value};
use support::*;

struct Schema {
    defs: Value,
}

impl Schema {
    fn load(revision: &str) -> Option<Self> {
        let dir = std::env::var_os("MCP_SCHEMA_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/mcp-schema")
            });
        let path = dir.join(revision).join("schema.json");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                eprintln!(
                    "SKIPPED: no MCP schema at {} ({e}); set MCP_SCHEMA_DIR",
                    path.display()
                );
                return None;
            }
        };
        let schema: Value = serde_json::from_str(&text).expect("schema.json is JSON");
        Some(Self {
            defs: schema["$defs"].clone(),
        })
    }

    fn check(&self, def: &str, instance: &Value) {
        assert!(self.defs.get(def).is_some(), "no $defs/{def} in the schema");
        let wrapper = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$ref": format!("#/$defs/{def}"),
            "$defs": self.defs,
        });
        let validator = jsonschema::validator_for(&wrapper).expect("schema compiles");
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{instance} is not a valid {def}: {errors:#?}"
        );
    }
}

#[allow(unreachable_pub)] // the example program's items are `pub` for this test to reach
#[path = "../examples/signup.rs"]
#[allow(dead_code)]
mod signup;

/// A server with a handler for every method, which logs, reports progress, publishes list
/// changes and (on 2025) asks the client for roots, a sample and a form.
fn full_server() -> Server {
    let mut server = Server::new("schema-check");
    server
        .version("1.2.3")
        .instructions("Use it well.")
        .enable_logging()
        .tools_list_changed(true)
        .prompts_list_changed(true)
        .resources_list_changed(true)
        .on_list_tools(|_, _| async {
            let tool = Tool::new("t", "A tool.", json!({"type": "object", "properties": {"q": {"type": "string"}}}))
                .with_output_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}}));
            Ok(ListToolsResult::new(vec![tool]).with_next_cursor("2"))
        })
        .on_call_tool(|ctx, p| async move {
            match p.name.as_str() {
                "ask" => {
                    let session = ctx.session().cloned().ok_or_else(|| McpError::internal("no session"))?;
                    let roots: ListRootsResult = session.request("roots/list", json!({})).await?;
                    let sample: CreateMessageResult = session
                        .request("sampling/createMessage", json!({
                            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                            "maxTokens": 10
                        }))
                        .await?;
                    let form: ElicitResult = session
                        .request("elicitation/create", json!({
                            "mode": "form",
                            "message": "Name?",
                            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
                        }))
                        .await?;
                    let _: EmptyResult = session.request("ping", json!({})).await?;
                    Ok(CallToolResult::text(format!("{} {} {}", roots.roots.len(), sample.model, form.action)).into())
                }
                "announce" => {
                    let s = ctx.session().ok_or_else(|| McpError::internal("no session"))?;
                    s.notify("notifications/tools/list_changed", json!({})).await?;
                    s.notify("notifications/prompts/list_changed", json!({})).await?;
                    s.notify("notifications/resources/list_changed", json!({})).await?;
                    s.notify("notifications/resources/updated", json!({"uri": "books://1"})).await?;
                    Ok(CallToolResult::text("announced").into())
                }
                "pause" => Ok(Outcome::InputRequired(
                    InputRequiredResult::new()
                        .with_input_request("name", "elicitation/create", json!({
                            "mode": "form", "message": "Name?",
                            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
                        }))
                        .with_request_state("opaque"),
                )),
                _ => {
                    ctx.log(LoggingLevel::Info, "working").await?;
                    ctx.progress(0.5).total(1).message("half").await;
                    Ok(Outcome::Complete(
                        CallToolResult::new(vec![
                            ContentBlock::text("x"),
                            ContentBlock::image("aGk=", "image/png"),
                            ContentBlock::audio("aGk=", "audio/wav"),
                            ContentBlock::Resource(EmbeddedResource::new(ResourceContents::blob("books://1", "aGk="))),
                            ContentBlock::ResourceLink({
                                let mut link = ResourceLink::new("books://2", "two").with_mime_type("text/plain");
                                link.size = Some(3);
                                link
                            }),
                        ])
                        .with_structured(json!({"n": 1})),
                    ))
                }
            }
        })
        .on_list_resources(|_, _| async {
            Ok(ListResourcesResult::new(vec![Resource::new("books://1", "one").with_mime_type("text/plain")]))
        })
        .on_list_resource_templates(|_, _| async {
            Ok(ListResourceTemplatesResult::new(vec![ResourceTemplate::new("books://{id}", "book")]))
        })
        .on_read_resource(|_, p| async move {
            Ok(ReadResourceResult::new(vec![ResourceContents::text(p.uri, "Dune")]))
        })
        .on_subscribe_resource(|_, _| async { Ok(EmptyResult::default()) })
        .on_unsubscribe_resource(|_, _| async { Ok(EmptyResult::default()) })
        .on_list_prompts(|_, _| async {
            Ok(ListPromptsResult::new(vec![
                Prompt::new("greet").with_argument(PromptArgument::new("who").with_required(true)),
            ]))
        })
        .on_get_prompt(|_, _| async {
            Ok(GetPromptResult::new(vec![PromptMessage::new(Role::Assistant, ContentBlock::text("Hello"))])
                .with_description("A greeting"))
        })
        .on_completion(|_, _| async {
            let mut result = CompleteResult::new(vec!["a".into()]);
            result.completion.total = Some(1);
            result.completion.has_more = Some(false);
            Ok(result)
        })
        .on_subscriptions_listen(|ctx, p| async move {
            ctx.notify("notifications/subscriptions/acknowledged", SubscriptionsAcknowledgedParams::new(p.notifications))
            .await?;
            ctx.notify("notifications/tools/list_changed", json!({})).await?;
            ctx.notify("notifications/resources/updated", json!({"uri": "books://1"})).await?;
            Ok(SubscriptionsListenResult::default())
        });
    server
}

/// Validates a response: the envelope, then the result or error member.
fn check_response(schema: &Schema, answer: &Value, result_def: &str) {
    if answer.get("error").is_some() {
        let mut envelope = answer.clone();
        if envelope["id"].is_null() {
            envelope.as_object_mut().unwrap().remove("id");
        }
        schema.check("JSONRPCErrorResponse", &envelope);
        schema.check("Error", &answer["error"]);
    } else {
        schema.check("JSONRPCResultResponse", answer);
        schema.check(result_def, &answer["result"]);
    }
}

fn check_notification(schema: &Schema, note: &Value) {
    schema.check("JSONRPCNotification", note);
    let def = match note["method"].as_str().unwrap() {
        "notifications/progress" => "ProgressNotification",
        "notifications/message" => "LoggingMessageNotification",
        "notifications/tools/list_changed" => "ToolListChangedNotification",
        "notifications/prompts/list_changed" => "PromptListChangedNotification",
        "notifications/resources/list_changed" => "ResourceListChangedNotification",
        "notifications/resources/updated" => "ResourceUpdatedNotification",
        "notifications/subscriptions/acknowledged" => "SubscriptionsAcknowledgedNotification",
        other => panic!("unexpected notification {other}"),
    };
    schema.check(def, note);
}

/// Sends `line`, validates every notification before the answer, then the answer itself.
async fn exchange(
    schema: &Schema,
    conn: &mut RawConnection,
    line: Value,
    result_def: &str,
) -> (Vec<Value>, Value) {
    conn.send_json(&line).await.unwrap();
    let mut notes = Vec::new();
    loop {
        let msg = conn.recv_json().await.expect("the server answers");
        if msg.get("method").is_some() {
            check_notification(schema, &msg);
            notes.push(msg);
        } else {
            check_response(schema, &msg, result_def);
            return (notes, msg);
        }
    }
}

const RESULTS: &[(&str, &str, &str)] = &[
    ("tools/list", "{}", "ListToolsResult"),
    (
        "tools/call",
        r#"{"name":"t","arguments":{"q":"x"}}"#,
        "CallToolResult",
    ),
    ("resources/list", "{}", "ListResourcesResult"),
    (
        "resources/templates/list",
        "{}",
        "ListResourceTemplatesResult",
    ),
    (
        "resources/read",
        r#"{"uri":"books://1"}"#,
        "ReadResourceResult",
    ),
    ("prompts/list", "{}", "ListPromptsResult"),
    (
        "prompts/get",
        r#"{"name":"greet","arguments":{"who":"me"}}"#,
        "GetPromptResult",
    ),
    (
        "completion/complete",
        r#"{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"m"}}"#,
        "CompleteResult",
    ),
];

#[tokio::test]
async fn every_2025_message_validates_against_the_2025_11_25_schema() {
    let Some(schema) = Schema::load("2025-11-25") else {
        return;
    };
    let mut conn = RawConnection::open(full_server()).await.unwrap();
    let init = handshake(&mut conn, "2025-11-25").await;
    check_response(&schema, &init, "InitializeResult");
    assert_eq!(init["result"]["instructions"], "Use it well.");

    let mut id = 1;
    for (method, params, def) in RESULTS {
        let mut params: Value = serde_json::from_str(params).unwrap();
        params["_meta"] = json!({"progressToken": 7});
        let (notes, answer) = exchange(&schema, &mut conn, request(id, method, params), def).await;
        assert!(answer.get("result").is_some(), "{method}: {answer}");
        assert!(
            answer["result"].get("resultType").is_none(),
            "{method} unstamped on 2025"
        );
        if *method == "tools/call" {
            assert_eq!(notes.len(), 2, "a log line and a progress report");
        }
        id += 1;
    }
    for (method, params) in [
        ("ping", json!({})),
        ("logging/setLevel", json!({"level": "debug"})),
        ("resources/subscribe", json!({"uri": "books://1"})),
        ("resources/unsubscribe", json!({"uri": "books://1"})),
    ] {
        let (_, answer) = exchange(
            &schema,
            &mut conn,
            request(id, method, params),
            "EmptyResult",
        )
        .await;
        assert_eq!(answer["result"], json!({}), "{method} answers exactly {{}}");
        id += 1;
    }

    // Server-to-client notifications outside any request.
    let (notes, _) = exchange(
        &schema,
        &mut conn,
        request(id, "tools/call", json!({"name": "announce"})),
        "CallToolResult",
    )
    .await;
    assert_eq!(notes.len(), 4);
    id += 1;

    // Server-to-client requests, answered by the test.
    conn.send_json(&request(id, "tools/call", json!({"name": "ask"})))
        .await
        .unwrap();
    let answers = [
        (
            "roots/list",
            "ListRootsRequest",
            json!({"roots": [{"uri": "file:///tmp", "name": "tmp"}]}),
        ),
        (
            "sampling/createMessage",
            "CreateMessageRequest",
            json!({"role": "assistant", "content": {"type": "text", "text": "yo"}, "model": "m1"}),
        ),
        (
            "elicitation/create",
            "ElicitRequest",
            json!({"action": "accept", "content": {"name": "Ann"}}),
        ),
        ("ping", "PingRequest", json!({})),
    ];
    for (method, def, reply) in answers {
        let req = conn.recv_json().await.unwrap();
        assert_eq!(req["method"], method);
        schema.check("JSONRPCRequest", &req);
        schema.check(def, &req);
        conn.send_json(&json!({"jsonrpc": "2.0", "id": req["id"], "result": reply}))
            .await
            .unwrap();
    }
    let done = conn.recv_json().await.unwrap();
    check_response(&schema, &done, "CallToolResult");
    assert_eq!(done["result"]["content"][0]["text"], "1 m1 accept");
    id += 1;

    // Errors.
    for line in [
        request(id, "nope", json!({})),
        request(id + 1, "tools/call", json!({})),
        request(id + 2, "initialize", json!({})),
    ] {
        let (_, answer) = exchange(&schema, &mut conn, line, "Result").await;
        assert!(answer.get("error").is_some());
    }
    conn.send_bytes(b"{broken").await.unwrap();
    check_response(&schema, &conn.recv_json().await.unwrap(), "Result");
    conn.close().await;
}

#[tokio::test]
async fn every_2026_message_validates_against_the_2026_07_28_schema() {
    let Some(schema) = Schema::load("2026-07-28") else {
        return;
    };
    let mut conn = RawConnection::open(full_server()).await.unwrap();
    let (_, discover) = exchange(
        &schema,
        &mut conn,
        modern(1, "server/discover", json!({})),
        "DiscoverResult",
    )
    .await;
    assert_eq!(
        discover["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );

    let mut id = 2;
    for (method, params, def) in RESULTS {
        let mut line = modern(id, method, serde_json::from_str(params).unwrap());
        line["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("debug");
        line["params"]["_meta"]["progressToken"] = json!("p");
        let (notes, answer) = exchange(&schema, &mut conn, line, def).await;
        assert_eq!(answer["result"]["resultType"], "complete", "{method}");
        if *method == "tools/call" {
            assert_eq!(notes.len(), 2);
        }
        id += 1;
    }

    let (_, paused) = exchange(
        &schema,
        &mut conn,
        modern(id, "tools/call", json!({"name": "pause"})),
        "InputRequiredResult",
    )
    .await;
    assert_eq!(paused["result"]["resultType"], "input_required");
    assert!(
        paused["result"].get("ttlMs").is_none(),
        "input_required carries no cache hints"
    );
    id += 1;

    let (notes, ended) = exchange(
        &schema,
        &mut conn,
        modern(id, "subscriptions/listen", json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["books://1"]}})),
        "SubscriptionsListenResult",
    )
    .await;
    assert_eq!(
        notes[0]["method"],
        "notifications/subscriptions/acknowledged"
    );
    for note in &notes {
        assert_eq!(
            note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            id
        );
    }
    assert_eq!(
        ended["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        id
    );
    id += 1;

    // Errors, each against its own definition.
    let errors = [
        (
            request(
                id,
                "tools/list",
                json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "v9", "io.modelcontextprotocol/clientCapabilities": {}}}),
            ),
            "UnsupportedProtocolVersionError",
        ),
        (
            request(id + 1, "tools/list", json!({})),
            "InvalidParamsError",
        ),
        (modern(id + 2, "ping", json!({})), "MethodNotFoundError"),
        (
            modern(id + 3, "tools/call", json!({"name": "t", "arguments": 5})),
            "InvalidParamsError",
        ),
    ];
    for (line, def) in errors {
        let (_, answer) = exchange(&schema, &mut conn, line, "Result").await;
        if def.ends_with("VersionError") {
            schema.check(def, &answer);
        } else {
            schema.check(def, &answer["error"]);
        }
    }
    let mut internal = full_server();
    internal.on_list_prompts(|_, _| async { Err(McpError::internal("db down")) });
    let mut conn2 = RawConnection::open(internal).await.unwrap();
    let (_, answer) = exchange(
        &schema,
        &mut conn2,
        modern(1, "prompts/list", json!({})),
        "Result",
    )
    .await;
    schema.check("InternalError", &answer["error"]);
    conn2.send_bytes(b"{broken").await.unwrap();
    let parse = conn2.recv_json().await.unwrap();
    schema.check("ParseError", &parse["error"]);
    conn2.send_bytes(b"[1]").await.unwrap();
    let invalid = conn2.recv_json().await.unwrap();
    schema.check("InvalidRequestError", &invalid["error"]);
    conn2.close().await;
    conn.close().await;
}

#[test]
fn the_checker_rejects_what_the_schema_forbids() {
    let Some(schema) = Schema::load("2026-07-28") else {
        return;
    };
    let bad = json!({"content": [{"type": "text"}]});
    let outcome = std::panic::catch_unwind(|| schema.check("CallToolResult", &bad));
    assert!(
        outcome.is_err(),
        "a result without resultType and with a text-less block is refused"
    );
    let Some(schema) = Schema::load("2025-11-25") else {
        return;
    };
    let outcome = std::panic::catch_unwind(|| {
        schema.check(
            "CallToolResult",
            &json!({"content": [], "structuredContent": [1, 2]}),
        )
    });
    assert!(outcome.is_err(), "2025 structuredContent must be an object");
}

/// Protocol-model types the engine test above does not produce on its own (tasks, URL
/// elicitation, the capability error, sampling content), serialized and validated.
#[test]
fn the_rest_of_the_protocol_model_validates() {
    let Some(v2025) = Schema::load("2025-11-25") else {
        return;
    };
    let Some(v2026) = Schema::load("2026-07-28") else {
        return;
    };
    let task: Task = serde_json::from_value(json!({
        "taskId": "t-1",
        "status": "working",
        "statusMessage": "busy",
        "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:40:00Z",
        "ttl": 60000,
        "pollInterval": 5000
    }))
    .unwrap();
    assert_eq!(task.status, TaskStatus::Working);
    v2025.check(
        "CreateTaskResult",
        &serde_json::to_value(CreateTaskResult::new(task.clone())).unwrap(),
    );
    v2025.check(
        "ListTasksResult",
        &serde_json::to_value(ListTasksResult::new(vec![task])).unwrap(),
    );
    v2025.check(
        "ElicitationCompleteNotification",
        &json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
                "params": ElicitationCompleteParams::new("e-1")}),
    );
    let url = ElicitRequestParams::url("e-1", "Sign in", "https://example.com/connect");
    let error = McpError::new(-32042, "This request requires more information.")
        .with_data(serde_json::to_value(UrlElicitationRequiredData::new(vec![url])).unwrap());
    v2025.check(
        "URLElicitationRequiredError",
        &json!({"jsonrpc": "2.0", "id": 2, "error": error.to_wire(false)}),
    );

    let missing = McpError::new(
        -32021,
        "Server requires the elicitation capability for this request",
    )
    .with_data(
        serde_json::to_value(MissingRequiredClientCapabilityData::new({
            let mut required = ClientCapabilities::default();
            required.elicitation = Some(Default::default());
            required
        }))
        .unwrap(),
    );
    v2026.check(
        "MissingRequiredClientCapabilityError",
        &json!({"jsonrpc": "2.0", "id": 1, "error": missing.to_wire(false)}),
    );
    let tool_use =
        SamplingContent::ToolUse(ToolUseContent::new("u1", "search", json!({"q": "dune"})));
    let tool_result = SamplingContent::ToolResult({
        let mut result = ToolResultContent::new("u1", vec![ContentBlock::text("3 books")]);
        result.is_error = Some(false);
        result
    });
    for schema in [&v2025, &v2026] {
        schema.check("ToolUseContent", &serde_json::to_value(&tool_use).unwrap());
        schema.check(
            "ToolResultContent",
            &serde_json::to_value(&tool_result).unwrap(),
        );
    }
    let mut requests = serde_json::Map::new();
    requests.insert("roots".into(), json!({"method": "roots/list"}));
    requests.insert(
        "sample".into(),
        json!({"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": [serde_json::to_value(&tool_use).unwrap()]}],
            "maxTokens": 5
        }}),
    );
    v2026.check(
        "InputRequiredResult",
        &serde_json::to_value({
            let mut result = InputRequiredResult::new();
            result.input_requests = Some(requests);
            result
        })
        .unwrap(),
    );
}

/// The high-level server's answers (derived schemas, structured results, tool errors, the 2025
/// wrapping of array results) validate in both revisions.
#[tokio::test]
async fn the_high_level_server_validates_in_both_revisions() {
    for (revision, legacy) in [("2025-11-25", true), ("2026-07-28", false)] {
        let Some(schema) = Schema::load(revision) else {
            return;
        };
        let mut conn = RawConnection::open(bookshop::server()).await.unwrap();
        let line = |id: i64, method: &str, params: Value| {
            if legacy {
                request(id, method, params)
            } else {
                modern(id, method, params)
            }
        };
        if legacy {
            let init = handshake(&mut conn, revision).await;
            check_response(&schema, &init, "InitializeResult");
        } else {
            exchange(
                &schema,
                &mut conn,
                line(0, "server/discover", json!({})),
                "DiscoverResult",
            )
            .await;
        }
        let calls = [
            (line(1, "tools/list", json!({})), "ListToolsResult"),
            (
                line(
                    2,
                    "tools/call",
                    json!({"name": "search_books", "arguments": {"query": "dune"}}),
                ),
                "CallToolResult",
            ),
            (
                line(
                    3,
                    "tools/call",
                    json!({"name": "search_books", "arguments": {"limit": 99}}),
                ),
                "CallToolResult",
            ),
            (
                line(
                    4,
                    "tools/call",
                    json!({"name": "add_book", "arguments": {"title": "Dune", "author": "F", "year": 1}}),
                ),
                "CallToolResult",
            ),
            (
                line(5, "tools/call", json!({"name": "nope"})),
                "CallToolResult",
            ),
            (line(6, "resources/list", json!({})), "ListResourcesResult"),
            (
                line(7, "resources/templates/list", json!({})),
                "ListResourceTemplatesResult",
            ),
            (line(8, "prompts/list", json!({})), "ListPromptsResult"),
            (
                line(
                    9,
                    "completion/complete",
                    json!({"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": ""}}),
                ),
                "CompleteResult",
            ),
            (
                line(10, "resources/read", json!({"uri": "nowhere://x"})),
                "Result",
            ),
        ];
        for (call, def) in calls {
            let (_, answer) = exchange(&schema, &mut conn, call, def).await;
            assert!(
                answer.get("result").is_some() || def == "Result",
                "{revision}: {answer}"
            );
        }
        conn.close().await;
    }
}

#[tokio::test]
async fn input_requests_from_rust_forms_validate_in_both_revisions() {
    // 2026: the InputRequiredResult and each elicitation it carries.
    if let Some(schema) = Schema::load("2026-07-28") {
        let mut conn = RawConnection::open(signup::server().unwrap())
            .await
            .unwrap();
        let mut params = json!({"name": "sign_up", "arguments": {}});
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}
        });
        let (_, first) = exchange(
            &schema,
            &mut conn,
            request(1, "tools/call", params.clone()),
            "InputRequiredResult",
        )
        .await;
        let person = &first["result"]["inputRequests"]["person"];
        schema.check("InputRequest", person);
        schema.check("ElicitRequestFormParams", &person["params"]);
        params["requestState"] = first["result"]["requestState"].clone();
        params["inputResponses"] = json!({"person": {"action": "accept", "content": {"name": "Ada", "email": "ada@example.com"}}});
        let (_, second) = exchange(
            &schema,
            &mut conn,
            request(2, "tools/call", params.clone()),
            "InputRequiredResult",
        )
        .await;
        let plan = &second["result"]["inputRequests"]["plan"];
        schema.check("ElicitRequestFormParams", &plan["params"]);
        assert_eq!(
            plan["params"]["requestedSchema"]["properties"]["plan"]["oneOf"],
            json!([{"const": "free", "title": "Free: one project"}, {"const": "pro", "title": "Pro: unlimited projects"}])
        );
        params["requestState"] = second["result"]["requestState"].clone();
        params["inputResponses"] =
            json!({"plan": {"action": "accept", "content": {"plan": "pro", "newsletter": true}}});
        let (_, done) = exchange(
            &schema,
            &mut conn,
            request(3, "tools/call", params),
            "CallToolResult",
        )
        .await;
        assert_eq!(
            done["result"]["content"][0]["text"],
            "Signed up Ada <ada@example.com> for Pro, with newsletter."
        );
        conn.close().await;
    }
    // 2025: the server's elicitation/create request.
    if let Some(schema) = Schema::load("2025-11-25") {
        let mut conn = RawConnection::open(signup::server().unwrap())
            .await
            .unwrap();
        handshake_with(&mut conn, json!({"elicitation": {}})).await;
        conn.send_json(&request(
            1,
            "tools/call",
            json!({"name": "sign_up", "arguments": {}}),
        ))
        .await
        .unwrap();
        let asked = conn.recv_json().await.unwrap();
        schema.check("ElicitRequest", &asked);
        conn.close().await;
    }
}
