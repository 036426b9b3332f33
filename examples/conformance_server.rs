//! The server the official MCP conformance suite drives (`../shared/conformance/REQUIREMENTS.md`),
//! written with the high-level API where it can be and the low-level table where the requirement
//! needs it. Serves both wires at `http://127.0.0.1:PORT/mcp`.
//!
//! Run: `cargo run --example conformance_server -- --port 3001`

use std::time::Duration;

use modelctx::prelude::*;
use modelctx::types::*;

#[path = "conformance_server/tasks.rs"]
mod tasks;
use modelctx::server::{PromptDef, ServerHandle, ToolDef};
use modelctx::transport::HttpConfig;
use serde_json::{json, Value};

/// A 1x1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
/// A tiny WAV.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

/// A simple text response.
#[tool]
async fn test_simple_text() -> String {
    "This is a simple text response for testing.".into()
}

/// An image.
#[tool]
async fn test_image_content() -> ContentBlock {
    ContentBlock::image(PNG, "image/png")
}

/// Audio.
#[tool]
async fn test_audio_content() -> ContentBlock {
    ContentBlock::audio(WAV, "audio/wav")
}

fn embedded(uri: &str, mime: &str, text: &str) -> ContentBlock {
    ContentBlock::Resource(EmbeddedResource::new(
        ResourceContents::text(uri, text).with_mime_type(mime),
    ))
}

/// An embedded resource.
#[tool]
async fn test_embedded_resource() -> ContentBlock {
    embedded(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )
}

/// Several content types.
#[tool]
async fn test_multiple_content_types() -> Vec<ContentBlock> {
    vec![
        ContentBlock::text("Multiple content types test:"),
        ContentBlock::image(PNG, "image/png"),
        embedded(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        ),
    ]
}

/// Always fails, as a tool result.
#[tool]
async fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::new(
        "This tool intentionally returns an error for testing",
    ))
}

/// Reports progress.
#[tool]
async fn test_tool_with_progress(ctx: RequestContext) -> String {
    for step in [0, 50, 100] {
        ctx.progress(step).total(100).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    "Progress test completed".into()
}

/// Logs while it works.
#[tool]
async fn test_tool_with_logging(ctx: RequestContext) -> String {
    for text in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ] {
        let _ = ctx.log(LoggingLevel::Info, text).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    "Logging test completed".into()
}

/// Logs only when the request asked for logs.
#[tool]
async fn test_logging_tool(ctx: RequestContext) -> String {
    let _ = ctx.log(LoggingLevel::Info, "test_logging_tool ran").await;
    "Logging tool completed".into()
}

/// Asks the client's model.
#[tool]
async fn test_sampling(ctx: RequestContext, prompt: String) -> modelctx::Result<String> {
    let params = json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": 100
    });
    Ok(
        match ask(&ctx, "sampling", "sampling/createMessage", params).await? {
            Ok(answer) => format!(
                "LLM response: {}",
                answer["content"]["text"].as_str().unwrap_or("")
            ),
            Err(e) => format!("Sampling failed: {}", e.message()),
        },
    )
}

/// One question to the client in either era: a 2025 request on the call's own stream, or a
/// 2026 `input_required` round (this tool's answer is read from the retry's `inputResponses`;
/// the outer `Err` carries the round). The inner result is the client's answer or its error.
async fn ask(
    ctx: &RequestContext,
    key: &str,
    method: &str,
    params: Value,
) -> modelctx::Result<Result<Value, McpError>> {
    if ctx.era() == Era::Legacy {
        return Ok(ctx.request::<_, Value>(method, params).await);
    }
    if let Some(answer) = ctx.input_response(key) {
        return Ok(Ok(answer.clone()));
    }
    let mut round = InputRequiredResult::new();
    let mut requests = serde_json::Map::new();
    requests.insert(key.into(), json!({"method": method, "params": params}));
    round.input_requests = Some(requests);
    Err(McpError::input_required(round))
}

async fn elicit(ctx: &RequestContext, message: &str, schema: Value) -> modelctx::Result<String> {
    let params = json!({"mode": "form", "message": message, "requestedSchema": schema});
    Ok(
        match ask(ctx, "form", "elicitation/create", params).await? {
            Ok(answer) => {
                let answer: ElicitResult = serde_json::from_value(answer)?;
                format!(
                    "User response: action={}, content={}",
                    answer.action,
                    Value::Object(answer.content.unwrap_or_default())
                )
            }
            Err(e) => format!("Elicitation failed: {}", e.message()),
        },
    )
}

/// Asks the client's user.
#[tool]
async fn test_elicitation(ctx: RequestContext, message: String) -> modelctx::Result<String> {
    let schema = json!({
        "type": "object",
        "properties": {"username": {"type": "string"}, "email": {"type": "string"}},
        "required": ["username", "email"]
    });
    elicit(&ctx, &message, schema).await
}

/// Asks with defaults.
#[tool]
async fn test_elicitation_sep1034_defaults(ctx: RequestContext) -> modelctx::Result<String> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": true}
        }
    });
    elicit(&ctx, "Please review your details", schema).await
}

/// Asks with every kind of enum.
#[tool]
async fn test_elicitation_sep1330_enums(ctx: RequestContext) -> modelctx::Result<String> {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"}
            ]},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2"], "enumNames": ["Option One", "Option Two"]},
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}},
            "titledMulti": {"type": "array", "items": {"anyOf": [
                {"const": "x", "title": "Ex"},
                {"const": "y", "title": "Why"}
            ]}}
        }
    });
    elicit(&ctx, "Pick options", schema).await
}

/// Survives a reconnection: closes its SSE stream before answering (2025 SSE polling).
#[tool]
async fn test_reconnection(ctx: RequestContext) -> String {
    ctx.close_stream().await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    "Reconnection test completed".into()
}

/// Needs the client's sampling capability.
#[tool]
async fn test_missing_capability(ctx: RequestContext) -> modelctx::Result<String> {
    if ctx.client_capabilities().sampling.is_none() {
        return Err(McpError::new(
            modelctx::codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
            "Server requires the sampling capability for this request",
        )
        .with_data(json!({"requiredCapabilities": {"sampling": {}}})));
    }
    Ok("sampling is available".into())
}

/// Answers without asking anything on the stream.
#[tool]
async fn test_streaming_elicitation() -> String {
    "Streaming elicitation test completed".into()
}

fn trigger_tool(handle: ServerHandle<()>) -> ToolDef<()> {
    let h = handle.clone();
    ToolDef::from_schema(
        "test_trigger_tool_change",
        json!({"type": "object"}),
        move |_, _| {
            let handle = h.clone();
            async move {
                let temporary = ToolDef::from_schema(
                    "test_temporary_tool",
                    json!({"type": "object"}),
                    |_, _| async { Ok(CallToolResult::text("temporary")) },
                )?
                .description("A tool that comes and goes.");
                handle.add_tool(temporary)?;
                handle.remove_tool("test_temporary_tool");
                Ok(CallToolResult::text("Tool list changed"))
            }
        },
    )
    .map(|t| t.description("Changes the tool list and announces it."))
    .unwrap_or_else(|e| panic!("trigger tool: {e}"))
}

fn trigger_prompt(handle: ServerHandle<()>) -> ToolDef<()> {
    let h = handle.clone();
    ToolDef::from_schema(
        "test_trigger_prompt_change",
        json!({"type": "object"}),
        move |_, _| {
            let handle = h.clone();
            async move {
                handle.add_prompt(
                    PromptDef::new("test_temporary_prompt", |_, _| async {
                        Ok(String::from("temporary").into())
                    })
                    .description("A prompt that comes and goes."),
                )?;
                handle.remove_prompt("test_temporary_prompt");
                Ok(CallToolResult::text("Prompt list changed"))
            }
        },
    )
    .map(|t| t.description("Changes the prompt list and announces it."))
    .unwrap_or_else(|e| panic!("trigger prompt: {e}"))
}

fn json_schema_tool() -> ToolDef<()> {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    });
    ToolDef::from_schema("json_schema_2020_12_tool", schema, |_, args| async move {
        Ok(CallToolResult::text(format!(
            "Received: {}",
            Value::Object(args)
        )))
    })
    .map(|t| t.description("Tool with JSON Schema 2020-12 features"))
    .unwrap_or_else(|e| panic!("json schema tool: {e}"))
}

fn x_mcp_header_tool() -> ToolDef<()> {
    let schema = json!({
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}
    });
    ToolDef::from_schema("test_x_mcp_header", schema, |_, args| async move {
        let region = args
            .get("region")
            .and_then(Value::as_str)
            .unwrap_or("<none>");
        Ok(CallToolResult::text(format!("region={region}")))
    })
    .map(|t| t.description("Mirrors its region argument into the Mcp-Param-Region header."))
    .unwrap_or_else(|e| panic!("x-mcp-header tool: {e}"))
}

/// The static text resource.
#[resource("test://static-text", mime_type = "text/plain")]
async fn static_text() -> String {
    "This is the content of the static text resource.".into()
}

/// The static binary resource.
#[resource("test://static-binary", mime_type = "image/png")]
async fn static_binary() -> ResourceContents {
    ResourceContents::blob("test://static-binary", PNG).with_mime_type("image/png")
}

/// A resource clients subscribe to.
#[resource("test://watched-resource", mime_type = "text/plain")]
async fn watched_resource() -> String {
    "Watched resource content.".into()
}

/// Data by id.
#[resource("test://template/{id}/data", mime_type = "application/json")]
async fn template_data(id: String) -> String {
    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
}

/// A simple prompt.
#[prompt]
async fn test_simple_prompt() -> String {
    "This is a simple prompt for testing.".into()
}

fn complete_arg1(prefix: &str) -> Vec<String> {
    ["test", "testing", "tested"]
        .iter()
        .filter(|v| v.starts_with(prefix))
        .map(|v| (*v).to_owned())
        .collect()
}

/// A prompt with arguments.
#[prompt]
async fn test_prompt_with_arguments(
    /// The first argument.
    #[arg(complete = complete_arg1)]
    arg1: String,
    /// The second argument.
    arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// A prompt with an embedded resource.
#[prompt]
async fn test_prompt_with_embedded_resource(
    /// The resource to embed.
    #[arg(rename = "resourceUri")]
    resource_uri: String,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::new(
            Role::User,
            embedded(
                &resource_uri,
                "text/plain",
                "Embedded resource content for testing.",
            ),
        ),
        PromptMessage::new(
            Role::User,
            ContentBlock::text("Please process the embedded resource above."),
        ),
    ]
}

/// A prompt with an image.
#[prompt]
async fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::new(Role::User, ContentBlock::image(PNG, "image/png")),
        PromptMessage::new(
            Role::User,
            ContentBlock::text("Please analyze the image above."),
        ),
    ]
}

/// The conformance server.
// --- Multi-round-trip input (2026 InputRequiredResult; the same code asks directly in 2025) ---

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct UserName {
    name: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    ok: bool,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct FavouriteColor {
    color: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct UserContext {
    context: String,
}

fn roots_text(roots: &[Root]) -> String {
    let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
    format!("Roots: {}", uris.join(", "))
}

/// Asks the user's name, then greets them.
#[tool]
async fn test_input_required_result_elicitation(ctx: RequestContext) -> modelctx::Result<String> {
    Ok(
        match ctx
            .elicit::<UserName>("user_name", "What is your name?")
            .await?
        {
            Elicited::Accepted(form) => format!("Hello, {}!", form.name),
            _ => "Hello, stranger!".into(),
        },
    )
}

/// Asks the client's model a question.
#[tool]
async fn test_input_required_result_sampling(ctx: RequestContext) -> modelctx::Result<String> {
    let question = CreateMessageRequestParams::user_text("What is the capital of France?", 100);
    let answer = ctx.sample("capital_question", question).await?;
    Ok(format!("Sampled: {}", answer.text().unwrap_or("(no text)")))
}

/// Lists the client's roots.
#[tool]
async fn test_input_required_result_list_roots(ctx: RequestContext) -> modelctx::Result<String> {
    Ok(roots_text(&ctx.list_roots("client_roots").await?))
}

/// Asks for a confirmation; the sealed requestState carries the round.
#[tool]
async fn test_input_required_result_request_state(ctx: RequestContext) -> modelctx::Result<String> {
    let confirmed = ctx.elicit::<Confirm>("confirm", "Proceed?").await?;
    let ok = confirmed.accepted().is_some_and(|c| c.ok);
    Ok(format!("state-ok: confirmed={ok}"))
}

/// Asks three things in one round.
#[tool]
async fn test_input_required_result_multiple_inputs(
    ctx: RequestContext,
) -> modelctx::Result<String> {
    let answers = ctx
        .ask(
            Questions::new()
                .elicit::<UserName>("user_name", "What is your name?")
                .sample(
                    "greeting",
                    CreateMessageRequestParams::user_text("Say hello", 50),
                )
                .list_roots("client_roots"),
        )
        .await?;
    let name = match answers.elicited::<UserName>("user_name")? {
        Elicited::Accepted(form) => form.name,
        _ => "stranger".into(),
    };
    let greeting = answers.sampled("greeting")?;
    let roots = answers.roots("client_roots")?;
    Ok(format!(
        "{name}: {} ({})",
        greeting.text().unwrap_or(""),
        roots_text(&roots)
    ))
}

/// Asks twice in a row: a name, then a colour.
#[tool]
async fn test_input_required_result_multi_round(ctx: RequestContext) -> modelctx::Result<String> {
    let name = ctx
        .elicit::<UserName>("step1", "What is your name?")
        .await?
        .accepted()
        .map_or_else(|| "someone".to_owned(), |f| f.name);
    let color = ctx
        .elicit::<FavouriteColor>("step2", "What is your favourite colour?")
        .await?
        .accepted()
        .map_or_else(|| "nothing".to_owned(), |f| f.color);
    Ok(format!("{name} likes {color}"))
}

/// Asks once; its state is sealed, so a tampered one is refused.
#[tool]
async fn test_input_required_result_tampered_state(
    ctx: RequestContext,
) -> modelctx::Result<String> {
    let confirmed = ctx.elicit::<Confirm>("confirm", "Proceed?").await?;
    Ok(format!("confirmed={}", confirmed.is_accepted()))
}

/// Asks only what the client declared it can answer.
#[tool]
async fn test_input_required_result_capabilities(ctx: RequestContext) -> modelctx::Result<String> {
    let mut questions = Questions::new();
    if ctx.can_sample() {
        questions = questions.sample(
            "capital_question",
            CreateMessageRequestParams::user_text("What is the capital of France?", 100),
        );
    }
    if ctx.can_elicit() {
        questions = questions.elicit::<UserName>("user_name", "What is your name?");
    }
    if questions.is_empty() {
        return Ok("nothing to ask: the client declared neither sampling nor elicitation".into());
    }
    let answers = ctx.ask(questions).await?;
    Ok(format!(
        "answered: {}",
        answers
            .raw("capital_question")
            .or(answers.raw("user_name"))
            .is_some()
    ))
}

/// A prompt that asks for context first.
#[prompt]
async fn test_input_required_result_prompt(ctx: RequestContext) -> modelctx::Result<String> {
    let context = ctx
        .elicit::<UserContext>("user_context", "What context should the prompt use?")
        .await?
        .accepted()
        .map_or_else(|| "none".to_owned(), |f| f.context);
    Ok(format!("Prompt with context: {context}"))
}

pub fn server() -> McpServer {
    let server = McpServer::new("mcp-rust-conformance").version(env!("CARGO_PKG_VERSION"));
    let handle = server.handle();
    tasks::register(server)
        .tool(TestSimpleTextTool)
        .tool(TestImageContentTool)
        .tool(TestAudioContentTool)
        .tool(TestEmbeddedResourceTool)
        .tool(TestMultipleContentTypesTool)
        .tool(TestErrorHandlingTool)
        .tool(TestToolWithProgressTool)
        .tool(json_schema_tool())
        .tool(TestToolWithLoggingTool)
        .tool(TestLoggingToolTool)
        .tool(TestSamplingTool)
        .tool(TestElicitationTool)
        .tool(TestElicitationSep1034DefaultsTool)
        .tool(TestElicitationSep1330EnumsTool)
        .tool(TestReconnectionTool)
        .tool(TestMissingCapabilityTool)
        .tool(TestStreamingElicitationTool)
        .tool(trigger_tool(handle.clone()))
        .tool(trigger_prompt(handle))
        .tool(x_mcp_header_tool())
        .tool(TestInputRequiredResultElicitationTool)
        .tool(TestInputRequiredResultSamplingTool)
        .tool(TestInputRequiredResultListRootsTool)
        .tool(TestInputRequiredResultRequestStateTool)
        .tool(TestInputRequiredResultMultipleInputsTool)
        .tool(TestInputRequiredResultMultiRoundTool)
        .tool(TestInputRequiredResultTamperedStateTool)
        .tool(TestInputRequiredResultCapabilitiesTool)
        .resource(StaticTextResource)
        .resource(StaticBinaryResource)
        .resource(WatchedResourceResource)
        .resource(TemplateDataResource)
        .prompt(TestSimplePromptPrompt)
        .prompt(TestPromptWithArgumentsPrompt)
        .prompt(TestPromptWithEmbeddedResourcePrompt)
        .prompt(TestPromptWithImagePrompt)
        .prompt(TestInputRequiredResultPromptPrompt)
        // The skills extension (SEP-2640): the fixture skills of examples/skills.
        .skills_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/skills"))
        .expect("the examples/skills fixture directory")
}

#[tokio::main]
async fn main() -> modelctx::Result<()> {
    let mut port = 3001u16;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => port = args.next().and_then(|p| p.parse().ok()).unwrap_or(port),
            // The same server on stdin/stdout (what the bridge example runs behind HTTP).
            "--stdio" => return server().serve_stdio().await,
            _ => {}
        }
    }
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let port = listener.local_addr()?.port();
    println!("http://127.0.0.1:{port}/mcp");
    server()
        .serve_http_on(listener, HttpConfig::default(), std::future::pending())
        .await
}
