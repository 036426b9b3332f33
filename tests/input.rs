//! Asking the client for input in both eras: the same handler code, the 2026 multi-round-trip
//! wire (inputRequests, sealed requestState, inputResponses) and the 2025 server-to-client
//! requests, the client's callbacks, capability checks and refused answers.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use modelctx::client::Client;
use modelctx::input::Elicited;
use modelctx::prelude::*;
use modelctx::request_state::{KeyRing, Sealer};
use modelctx::transport::RawConnection;
use modelctx::types::*;
use serde_json::{json, Value};
use support::{handshake, handshake_with, request, roundtrip};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Color {
    color: String,
}

/// Greets the user by name.
#[tool]
async fn greet(ctx: RequestContext) -> modelctx::Result<String> {
    Ok(
        match ctx
            .elicit::<Name>("user_name", "What is your name?")
            .await?
        {
            Elicited::Accepted(form) => format!("Hello, {}!", form.name),
            Elicited::Declined => "declined".into(),
            Elicited::Cancelled => "cancelled".into(),
        },
    )
}

/// Asks twice in a row.
#[tool]
async fn two_steps(ctx: RequestContext, greeting: String) -> modelctx::Result<String> {
    let name = ctx
        .elicit::<Name>("step1", "Name?")
        .await?
        .accepted()
        .map_or("?".into(), |f| f.name);
    let color = ctx
        .elicit::<Color>("step2", &format!("Colour, {name}?"))
        .await?
        .accepted()
        .map_or("?".into(), |f| f.color);
    Ok(format!("{greeting} {name}: {color}"))
}

/// Asks three things at once.
#[tool]
async fn everything(ctx: RequestContext) -> modelctx::Result<String> {
    let answers = ctx
        .ask(
            Questions::new()
                .elicit::<Name>("who", "Name?")
                .sample("poem", CreateMessageRequestParams::user_text("A poem", 20))
                .list_roots("roots"),
        )
        .await?;
    let who = answers
        .elicited::<Name>("who")?
        .accepted()
        .map_or("?".into(), |f| f.name);
    let poem = answers.sampled("poem")?;
    let roots = answers.roots("roots")?;
    Ok(format!(
        "{who} / {} / {}",
        poem.text().unwrap_or(""),
        roots[0].uri
    ))
}

/// A prompt that asks first.
#[prompt]
async fn framed(ctx: RequestContext) -> modelctx::Result<String> {
    let name = ctx.elicit::<Name>("who", "Name?").await?.accepted();
    Ok(format!(
        "Write for {}",
        name.map_or("nobody".into(), |n| n.name)
    ))
}

/// A resource template that asks first.
#[resource("notes://{id}")]
async fn note(ctx: RequestContext, id: String) -> modelctx::Result<String> {
    let name = ctx.elicit::<Name>("who", "Name?").await?.accepted();
    Ok(format!(
        "note {id} for {}",
        name.map_or("nobody".into(), |n| n.name)
    ))
}

fn server() -> McpServer {
    McpServer::new("asker")
        .tool(GreetTool)
        .tool(TwoStepsTool)
        .tool(EverythingTool)
        .prompt(FramedPrompt)
        .resource(NoteResource)
}

fn accept(content: Value) -> ElicitResult {
    ElicitResult::accept(content)
}

/// A client answering forms from a script: field `name` -> "Ada", `color` -> "green".
fn scripted(
    builder: modelctx::client::ClientBuilder,
    asked: Arc<Mutex<Vec<String>>>,
) -> modelctx::client::ClientBuilder {
    builder
        .on_elicit(move |p| {
            asked.lock().unwrap().push(p.message.clone());
            let props = p.requested_schema.unwrap_or_default();
            let props = props["properties"].as_object().cloned().unwrap_or_default();
            let mut content = serde_json::Map::new();
            if props.contains_key("name") {
                content.insert("name".into(), json!("Ada"));
            }
            if props.contains_key("color") {
                content.insert("color".into(), json!("green"));
            }
            async move { Ok(accept(Value::Object(content))) }
        })
        .on_sample(|p| async move {
            Ok(CreateMessageResult::assistant_text(
                format!(
                    "echo {}",
                    p.messages[0].content["text"].as_str().unwrap_or("")
                ),
                "test-model",
            ))
        })
        .on_list_roots(|| async { Ok(ListRootsResult::new(vec![Root::new("file:///work")])) })
}

fn text(result: &CallToolResult) -> &str {
    result.content[0].as_text().unwrap_or("")
}

#[tokio::test]
async fn the_same_tool_asks_in_both_eras_through_the_client_callbacks() {
    for legacy in [false, true] {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let mut builder = scripted(Client::builder(), asked.clone());
        if legacy {
            builder = builder.legacy();
        }
        let client = builder.connect(server()).await.unwrap();
        let greeted = client.call_tool("greet", json!({})).await.unwrap();
        assert_eq!(text(&greeted), "Hello, Ada!", "legacy={legacy}");
        let two = client
            .call_tool("two_steps", json!({"greeting": "Hi"}))
            .await
            .unwrap();
        assert_eq!(text(&two), "Hi Ada: green", "legacy={legacy}");
        let all = client.call_tool("everything", json!({})).await.unwrap();
        assert_eq!(
            text(&all),
            "Ada / echo A poem / file:///work",
            "legacy={legacy}"
        );
        let prompt = client
            .get_prompt("framed", Default::default())
            .await
            .unwrap();
        assert_eq!(prompt.messages[0].content.as_text(), Some("Write for Ada"));
        let read = client.read_resource("notes://7").await.unwrap();
        assert_eq!(
            serde_json::to_value(&read.contents[0]).unwrap()["text"],
            "note 7 for Ada"
        );
        // Each question reached the user exactly once, in order (2026 re-runs the handler, but
        // answered questions are not asked again).
        assert_eq!(
            *asked.lock().unwrap(),
            [
                "What is your name?",
                "Name?",
                "Colour, Ada?",
                "Name?",
                "Name?",
                "Name?"
            ],
            "legacy={legacy}"
        );
        client.close().await;
    }
}

fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
    })
}

const ALL_CAPS: &str = r#"{"elicitation": {"form": {}}, "sampling": {}, "roots": {}}"#;

fn call(id: i64, tool: &str, args: Value, extra: Value) -> Value {
    let mut params = json!({"name": tool, "arguments": args, "_meta": meta(serde_json::from_str(ALL_CAPS).unwrap())});
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            params[k] = v;
        }
    }
    request(id, "tools/call", params)
}

#[tokio::test]
async fn the_2026_wire_pauses_with_input_requests_and_a_sealed_state() {
    let mut conn = RawConnection::open(server()).await.unwrap();
    let first = roundtrip(&mut conn, &call(1, "greet", json!({}), json!({}))).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(
        result["inputRequests"]["user_name"],
        json!({"method": "elicitation/create", "params": {
            "mode": "form",
            "message": "What is your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        }})
    );
    let state = result["requestState"].as_str().unwrap();
    assert!(state.starts_with("s1."), "{state}");
    assert!(
        !state.contains("user_name") && !state.contains("greet"),
        "sealed, not readable"
    );
    assert!(result["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());

    // Answers with extra keys: the extras are ignored and the call completes.
    let done = roundtrip(
        &mut conn,
        &call(2, "greet", json!({}), json!({
            "requestState": state,
            "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Lin"}}, "other": {"x": 1}}
        })),
    )
    .await;
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Lin!");

    // Only unknown keys: asked again, with a fresh state.
    let again = roundtrip(
        &mut conn,
        &call(
            3,
            "greet",
            json!({}),
            json!({
                "requestState": state,
                "inputResponses": {"wrong_key": {"action": "accept", "content": {"name": "Lin"}}}
            }),
        ),
    )
    .await;
    assert_eq!(again["result"]["resultType"], "input_required");
    assert!(again["result"]["inputRequests"]["user_name"].is_object());
    assert_ne!(again["result"]["requestState"], state);
    conn.close().await;
}

#[tokio::test]
async fn several_rounds_carry_earlier_answers_in_the_state() {
    let mut conn = RawConnection::open(server()).await.unwrap();
    let args = json!({"greeting": "Yo"});
    let r1 = roundtrip(&mut conn, &call(1, "two_steps", args.clone(), json!({}))).await;
    let s1 = r1["result"]["requestState"].as_str().unwrap().to_owned();
    assert!(r1["result"]["inputRequests"]["step1"].is_object());
    let r2 = roundtrip(
        &mut conn,
        &call(2, "two_steps", args.clone(), json!({"requestState": s1, "inputResponses": {"step1": {"action": "accept", "content": {"name": "Bo"}}}})),
    )
    .await;
    let s2 = r2["result"]["requestState"].as_str().unwrap().to_owned();
    assert_ne!(s1, s2);
    assert_eq!(
        r2["result"]["inputRequests"]["step2"]["params"]["message"],
        "Colour, Bo?"
    );
    // Round 3 sends only step2's answer; step1's comes back from the state.
    let r3 = roundtrip(
        &mut conn,
        &call(3, "two_steps", args, json!({"requestState": s2, "inputResponses": {"step2": {"action": "accept", "content": {"color": "red"}}}})),
    )
    .await;
    assert_eq!(r3["result"]["content"][0]["text"], "Yo Bo: red");
    conn.close().await;
}

#[tokio::test]
async fn malformed_answers_are_refused_with_invalid_params() {
    let mut conn = RawConnection::open(server()).await.unwrap();
    let r1 = roundtrip(&mut conn, &call(1, "greet", json!({}), json!({}))).await;
    let state = r1["result"]["requestState"].clone();
    let cases = [
        (
            json!({"user_name": 12345}),
            "Invalid inputResponses: `user_name`: expected an object",
        ),
        (json!(null), "Invalid inputResponses: expected an object"),
        (
            json!({"user_name": {"action": "accept", "content": {"name": 5}}}),
            "Invalid inputResponses: `user_name`: name: 5 is not of type \"string\"",
        ),
        (
            json!({"user_name": {"action": "maybe"}}),
            "Invalid inputResponses: `user_name`: unknown action `maybe`",
        ),
        (
            json!({"user_name": {"content": {}}}),
            "Invalid inputResponses: `user_name`: missing field `action`",
        ),
    ];
    for (i, (responses, message)) in cases.into_iter().enumerate() {
        let answer = roundtrip(
            &mut conn,
            &call(
                10 + i as i64,
                "greet",
                json!({}),
                json!({"requestState": state, "inputResponses": responses}),
            ),
        )
        .await;
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        let got = answer["error"]["message"].as_str().unwrap();
        assert!(
            got.starts_with(message),
            "{got} should start with {message}"
        );
    }
    // The server keeps serving.
    let ok = roundtrip(&mut conn, &call(20, "greet", json!({}), json!({}))).await;
    assert_eq!(ok["result"]["resultType"], "input_required");
    conn.close().await;
}

#[tokio::test]
async fn a_question_the_client_cannot_answer_is_minus_32021_in_both_eras() {
    let mut conn = RawConnection::open(server()).await.unwrap();
    let params =
        json!({"name": "everything", "arguments": {}, "_meta": meta(json!({"sampling": {}}))});
    let answer = roundtrip(&mut conn, &request(1, "tools/call", params)).await;
    assert_eq!(answer["error"]["code"], -32021);
    assert_eq!(
        answer["error"]["message"],
        "Missing required client capability: elicitation, roots"
    );
    assert_eq!(
        answer["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {"form": {}}, "roots": {}})
    );
    conn.close().await;

    // 2025: the session declared roots only.
    let mut conn = RawConnection::open(server()).await.unwrap();
    handshake(&mut conn, "2025-11-25").await;
    let answer = roundtrip(
        &mut conn,
        &request(1, "tools/call", json!({"name": "greet", "arguments": {}})),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32021, "{answer}");
    assert_eq!(
        answer["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {"form": {}}})
    );
    conn.close().await;
}

/// Opens a 2025 session that declares elicitation, calls `greet` (id 1) and returns the
/// `elicitation/create` request the server sends back.
async fn greet_in_a_2025_session(conn: &mut RawConnection) -> Value {
    handshake_with(conn, json!({"elicitation": {}})).await;
    conn.send_json(&request(
        1,
        "tools/call",
        json!({"name": "greet", "arguments": {}}),
    ))
    .await
    .unwrap();
    let asked = conn.recv_json().await.unwrap();
    assert_eq!(asked["method"], "elicitation/create");
    asked
}

#[tokio::test]
async fn the_2025_era_sends_the_request_on_the_stream_and_waits() {
    let mut conn = RawConnection::open(server()).await.unwrap();
    let asked = greet_in_a_2025_session(&mut conn).await;
    assert_eq!(asked["params"]["message"], "What is your name?");
    assert_eq!(
        asked["params"]["requestedSchema"]["required"],
        json!(["name"])
    );
    conn.send_json(&json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"name": "Kim"}}}))
        .await
        .unwrap();
    let done = conn.recv_json().await.unwrap();
    assert_eq!(done["id"], 1);
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Kim!");
    assert!(
        done["result"].get("resultType").is_none(),
        "2025 results are not stamped"
    );
    conn.close().await;
}

#[tokio::test]
async fn a_2025_client_that_never_answers_times_out() {
    let mut server = server();
    server.lowlevel().options_mut().input_timeout = Duration::from_millis(200);
    let mut conn = RawConnection::open(server).await.unwrap();
    greet_in_a_2025_session(&mut conn).await;
    // No answer: the tool fails after the timeout, as a tool error the model reads.
    let done = conn.recv_json().await.unwrap();
    assert_eq!(done["id"], 1);
    assert_eq!(done["result"]["isError"], true);
    assert_eq!(
        done["result"]["content"][0]["text"],
        "Error executing tool greet"
    );
    conn.close().await;
}

/// Captures log events (this thread only) as text.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<String>>>);

struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={:?} ", field.name(), value));
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

impl Capture {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

async fn first_state(conn: &mut RawConnection, tool: &str, args: Value) -> String {
    let r = roundtrip(conn, &call(1, tool, args, json!({}))).await;
    r["result"]["requestState"].as_str().unwrap().to_owned()
}

async fn retry(conn: &mut RawConnection, tool: &str, args: Value, state: &str) -> Value {
    let answers = json!({"user_name": {"action": "accept", "content": {"name": "Eve"}}, "step1": {"action": "accept", "content": {"name": "Eve"}}});
    roundtrip(
        conn,
        &call(
            2,
            tool,
            args,
            json!({"requestState": state, "inputResponses": answers}),
        ),
    )
    .await
}

#[tokio::test(flavor = "current_thread")]
async fn every_bad_state_gets_the_same_error_and_the_real_reason_is_logged() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let key = KeyRing::generate_key();
    let ring = || KeyRing::from_base64(&key).unwrap();
    let mut conn = RawConnection::open(server().seal_request_state(ring()))
        .await
        .unwrap();
    let state = first_state(&mut conn, "greet", json!({})).await;

    // One character of the ciphertext changed (mid-string, so the base64 stays valid).
    let mid = state.len() / 2;
    let flipped = if &state[mid..=mid] == "A" { "B" } else { "A" };
    let tampered = format!("{}{flipped}{}", &state[..mid], &state[mid + 1..]);
    let other_args = first_state(&mut conn, "two_steps", json!({"greeting": "a"})).await;
    let cases: Vec<(&str, String, Value, &str)> = vec![
        ("tampered", tampered, json!({}), "authentication failed"),
        (
            "suffixed",
            format!("{state}-TAMPERED"),
            json!({}),
            "authentication failed",
        ),
        (
            "not ours",
            "hello".into(),
            json!({}),
            "not a sealed requestState",
        ),
        (
            "other tool",
            state.clone(),
            json!({"greeting": "a"}),
            "another tool, prompt or resource",
        ),
        (
            "other arguments",
            other_args,
            json!({"greeting": "b"}),
            "another arguments",
        ),
    ];
    for (what, bad, args, reason) in cases {
        let tool = if args.get("greeting").is_some() {
            "two_steps"
        } else {
            "greet"
        };
        capture.take();
        let answer = retry(&mut conn, tool, args, &bad).await;
        assert_eq!(answer["error"]["code"], -32602, "{what}: {answer}");
        assert_eq!(
            answer["error"]["message"], "Invalid or expired requestState",
            "{what}"
        );
        assert!(
            answer["error"].get("data").is_none(),
            "{what}: no detail on the wire"
        );
        let logs = capture.take().join("\n");
        assert!(
            logs.contains(reason),
            "{what}: log should say {reason:?}: {logs}"
        );
    }
    // The genuine state still works.
    let ok = retry(&mut conn, "greet", json!({}), &state).await;
    assert_eq!(ok["result"]["content"][0]["text"], "Hello, Eve!");
    conn.close().await;

    // Another key ring cannot open it; a ring that still holds the old key can (rotation).
    let mut stranger = RawConnection::open(server().seal_request_state(KeyRing::random()))
        .await
        .unwrap();
    capture.take();
    let answer = retry(&mut stranger, "greet", json!({}), &state).await;
    assert_eq!(
        answer["error"]["message"],
        "Invalid or expired requestState"
    );
    assert!(capture.take().join("\n").contains("not in the key ring"));
    stranger.close().await;
    let rotated = KeyRing::from_base64(&format!("{},{key}", KeyRing::generate_key())).unwrap();
    let mut replica = RawConnection::open(server().seal_request_state(rotated))
        .await
        .unwrap();
    let ok = retry(&mut replica, "greet", json!({}), &state).await;
    assert_eq!(ok["result"]["content"][0]["text"], "Hello, Eve!");
    replica.close().await;
}

#[tokio::test(flavor = "current_thread")]
async fn an_expired_state_is_refused() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let sealer = Sealer::new(KeyRing::random()).ttl(Duration::ZERO);
    let mut conn = RawConnection::open(server().seal_request_state(sealer))
        .await
        .unwrap();
    let state = first_state(&mut conn, "greet", json!({})).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    capture.take();
    let answer = retry(&mut conn, "greet", json!({}), &state).await;
    assert_eq!(
        answer["error"]["message"],
        "Invalid or expired requestState"
    );
    assert!(capture.take().join("\n").contains("expired"));
    conn.close().await;
}

#[tokio::test]
async fn a_lowlevel_handler_pauses_by_hand_and_opts_into_sealing_with_one_line() {
    let mut server = Server::new("by-hand");
    server.seal_request_state(KeyRing::random());
    server.on_call_tool(|ctx, _p| async move {
        if let Some(answer) = ctx.input_response("ok") {
            let state = ctx.request_state().unwrap_or("none").to_owned();
            return Ok(Outcome::Complete(CallToolResult::text(format!(
                "{} with {state}",
                answer["action"]
            ))));
        }
        let mut paused = InputRequiredResult::new();
        let mut requests = serde_json::Map::new();
        requests.insert("ok".into(), json!({"method": "elicitation/create", "params": {"message": "OK?", "requestedSchema": {"type": "object", "properties": {}}}}));
        paused.input_requests = Some(requests);
        paused.request_state = Some("plain-text-step-1".into());
        Ok(Outcome::InputRequired(paused))
    });
    let mut conn = RawConnection::open(server).await.unwrap();
    let r1 = roundtrip(&mut conn, &call(1, "any", json!({}), json!({}))).await;
    let state = r1["result"]["requestState"].as_str().unwrap().to_owned();
    assert_eq!(r1["result"]["resultType"], "input_required");
    assert!(
        state.starts_with("s1.") && !state.contains("plain-text"),
        "sealed on the wire: {state}"
    );
    let r2 = roundtrip(
        &mut conn,
        &call(
            2,
            "any",
            json!({}),
            json!({"requestState": state, "inputResponses": {"ok": {"action": "decline"}}}),
        ),
    )
    .await;
    assert_eq!(
        r2["result"]["content"][0]["text"],
        "\"decline\" with plain-text-step-1"
    );
    conn.close().await;
}

#[tokio::test]
async fn the_client_gives_up_after_its_round_limit() {
    let mut server = Server::new("insistent");
    let rounds = Arc::new(AtomicUsize::new(0));
    let seen = rounds.clone();
    server.on_call_tool(move |_, _| {
        seen.fetch_add(1, Ordering::SeqCst);
        async {
            let mut paused = InputRequiredResult::new();
            let mut requests = serde_json::Map::new();
            requests.insert(
                "again".into(),
                json!({"method": "roots/list", "params": {}}),
            );
            paused.input_requests = Some(requests);
            Ok::<Outcome<CallToolResult>, McpError>(Outcome::InputRequired(paused))
        }
    });
    let client = Client::builder()
        .on_list_roots(|| async { Ok(ListRootsResult::default()) })
        .max_input_rounds(3)
        .raise_exceptions(true)
        .connect(server)
        .await
        .unwrap();
    let err = client.call_tool("x", json!({})).await.unwrap_err();
    assert!(
        err.message()
            .contains("still asked for input after 3 rounds"),
        "{err}"
    );
    assert_eq!(
        rounds.load(Ordering::SeqCst),
        4,
        "the first try plus three answered rounds"
    );
    client.close().await;
}

static FICKLE_CALLS: AtomicUsize = AtomicUsize::new(0);

/// Asks under one key, but the question changes on every run.
#[tool]
async fn fickle(ctx: RequestContext) -> modelctx::Result<String> {
    let n = FICKLE_CALLS.fetch_add(1, Ordering::SeqCst);
    let answer = ctx.elicit::<Name>("q", &format!("Question {n}?")).await?;
    Ok(format!("answered question {n}: {}", answer.is_accepted()))
}

#[tokio::test]
async fn an_answer_counts_only_for_the_question_it_answers() {
    let mut conn = RawConnection::open(McpServer::new("fickle").tool(FickleTool))
        .await
        .unwrap();
    let r1 = roundtrip(&mut conn, &call(1, "fickle", json!({}), json!({}))).await;
    let state = r1["result"]["requestState"].clone();
    assert_eq!(
        r1["result"]["inputRequests"]["q"]["params"]["message"],
        "Question 0?"
    );
    // The answer was for "Question 0?"; the handler now asks "Question 1?" under the same key.
    let answer = json!({"q": {"action": "accept", "content": {"name": "x"}}});
    let r2 = roundtrip(
        &mut conn,
        &call(
            2,
            "fickle",
            json!({}),
            json!({"requestState": state, "inputResponses": answer}),
        ),
    )
    .await;
    assert_eq!(r2["result"]["resultType"], "input_required", "{r2}");
    assert_eq!(
        r2["result"]["inputRequests"]["q"]["params"]["message"],
        "Question 1?"
    );
    conn.close().await;
}

#[tokio::test]
async fn an_answer_sent_without_a_state_counts_for_its_round_only() {
    let mut conn = RawConnection::open(server()).await.unwrap();
    let args = json!({"greeting": "Hey"});
    // step1 answered without any requestState: used now (step2 is asked)...
    let step1 = json!({"step1": {"action": "accept", "content": {"name": "Ann"}}});
    let r1 = roundtrip(
        &mut conn,
        &call(
            1,
            "two_steps",
            args.clone(),
            json!({"inputResponses": step1}),
        ),
    )
    .await;
    assert_eq!(
        r1["result"]["inputRequests"]["step2"]["params"]["message"],
        "Colour, Ann?"
    );
    let state = r1["result"]["requestState"].clone();
    // ...but not carried: it was never checked against a question, so step1 is asked again.
    let step2 = json!({"step2": {"action": "accept", "content": {"color": "teal"}}});
    let r2 = roundtrip(
        &mut conn,
        &call(
            2,
            "two_steps",
            args,
            json!({"requestState": state, "inputResponses": step2}),
        ),
    )
    .await;
    assert_eq!(r2["result"]["resultType"], "input_required", "{r2}");
    assert!(r2["result"]["inputRequests"]["step1"].is_object());
    conn.close().await;
}
