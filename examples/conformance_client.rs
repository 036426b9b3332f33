//! The client the official MCP conformance suite drives (`../shared/conformance/README.md`, "The
//! client suite"): run as `conformance_client <server-url>` with the scenario's name in
//! `MCP_CONFORMANCE_SCENARIO` and its data (JSON) in `MCP_CONFORMANCE_CONTEXT`. The era is
//! negotiated (`server/discover`, then `initialize`), as a host would.
//!
//! The `auth/*` scenarios connect through [`OAuth`] with a headless login (the suite's
//! authorization servers redirect at once), the suite's Client ID Metadata Document URL, and
//! the pre-registered credentials of `MCP_CONFORMANCE_CONTEXT` when it has some; then they list
//! the tools and call `test-tool`.
//!
//! Run: `../shared/conformance/run-client-suite.sh target/debug/examples/conformance_client
//! 2026-07-28` (`ONLY='^auth/'` or `EXCEPT='^auth/'` to split the suite)

use std::process::ExitCode;

use modelctx::client::oauth::{ClientCredentials, HeadlessLogin, OAuth};
use modelctx::client::{Client, ClientBuilder, SkillError};
use modelctx::transport::HttpClientTransport;
use modelctx::types::{ElicitResult, SkillResources, Tool};
use modelctx::McpError;
use serde_json::{json, Map, Value};

/// A form answered the way a user who accepts every default would: each property's `default`,
/// else a value of its type (what `elicitation-sep1034-client-defaults` checks).
fn accept_defaults(schema: &Value) -> Map<String, Value> {
    let mut content = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, property) in properties.into_iter().flatten() {
        let value = match property.get("default") {
            Some(default) => default.clone(),
            None => match property.get("type").and_then(Value::as_str) {
                Some("boolean") => Value::Bool(true),
                Some("integer" | "number") => json!(1),
                _ => match property.get("enum").and_then(|e| e.get(0)) {
                    Some(first) => first.clone(),
                    None => Value::from("conformance"),
                },
            },
        };
        content.insert(name.clone(), value);
    }
    content
}

/// A client that answers every input request: forms with their defaults, sampling with a
/// fixed text, roots with one folder.
fn builder() -> ClientBuilder {
    Client::builder()
        .on_elicit(|params| async move {
            let schema = serde_json::to_value(&params.requested_schema).unwrap_or(Value::Null);
            Ok(ElicitResult::accept(Value::Object(accept_defaults(
                &schema,
            ))))
        })
        .on_sample(|_| async move {
            Ok(serde_json::from_value(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "This is a conformance test answer."},
                "model": "conformance-model",
                "stopReason": "endTurn"
            }))?)
        })
        .on_list_roots(|| async move {
            Ok(serde_json::from_value(
                json!({"roots": [{"uri": "file:///tmp/conformance", "name": "conformance"}]}),
            )?)
        })
}

/// Arguments that satisfy a tool's required properties (strings, numbers, booleans).
fn sample_arguments(tool: &Tool) -> Value {
    let required: Vec<&str> = tool
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object);
    let mut arguments = Map::new();
    for name in required {
        let kind = properties
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str);
        let value = match kind {
            Some("integer" | "number") => json!(1),
            Some("boolean") => json!(true),
            Some("object") => json!({}),
            Some("array") => json!([]),
            _ => json!("us-west1"),
        };
        arguments.insert(name.to_owned(), value);
    }
    Value::Object(arguments)
}

/// Lists everything and exercises each item: every tool called, every resource read, every
/// prompt fetched (with its required arguments).
async fn exercise_everything(client: &Client) -> Result<(), McpError> {
    for tool in client.list_all_tools().await? {
        client
            .call_tool(&tool.name, sample_arguments(&tool))
            .await?;
    }
    if let Ok(resources) = client.list_all_resources().await {
        for resource in resources {
            client.read_resource(&resource.uri).await?;
        }
    }
    if let Ok(prompts) = client.list_all_prompts().await {
        for prompt in prompts {
            let arguments = prompt
                .arguments
                .iter()
                .flatten()
                .filter(|a| a.required == Some(true))
                .map(|a| (a.name.clone(), "conformance".to_owned()))
                .collect();
            client.get_prompt(&prompt.name, arguments).await?;
        }
    }
    Ok(())
}

/// The redirect URI the auth scenarios' authorization servers redirect to (nothing listens:
/// the headless login reads the redirect's `Location`).
const REDIRECT_URI: &str = "http://localhost:3000/callback";
/// The Client ID Metadata Document URL the `auth/basic-cimd` scenario expects as `client_id`.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The OAuth provider of the `auth/*` scenarios: headless login, the suite's CIMD URL, and the
/// pre-registered credentials of the scenario's context when it has some.
fn oauth(context: &Value) -> Result<OAuth, McpError> {
    let mut oauth = OAuth::builder()
        .login(HeadlessLogin::new(REDIRECT_URI))
        .client_name("mcp conformance client")
        .client_metadata_url(CLIENT_METADATA_URL);
    if let Some(id) = context.get("client_id").and_then(Value::as_str) {
        let credentials = match context.get("client_secret").and_then(Value::as_str) {
            Some(secret) => ClientCredentials::confidential(id, secret),
            None => ClientCredentials::public(id),
        };
        oauth = match context.get("issuer").and_then(Value::as_str) {
            Some(issuer) => oauth.client_for(issuer, credentials),
            None => oauth.client(credentials),
        };
    }
    oauth.build()
}

/// An `auth/*` scenario: connect through OAuth, list the tools, call one (step-up scenarios
/// need the call; the migration scenario needs two authenticated requests).
async fn run_auth(url: &str, context: &Value) -> Result<(), McpError> {
    let http = HttpClientTransport::new(url)?.auth(oauth(context)?);
    let client = builder().connect(http).await?;
    let outcome = async {
        client.list_tools().await?;
        client.call_tool("test-tool", json!({})).await?;
        Ok(())
    }
    .await;
    client.close().await;
    outcome
}

async fn run(scenario: &str, url: &str, context: &Value) -> Result<(), McpError> {
    if scenario.starts_with("auth/") {
        return run_auth(url, context).await;
    }
    let client = builder().connect(HttpClientTransport::new(url)?).await?;
    let outcome = scenario_steps(&client, scenario, context).await;
    client.close().await;
    outcome
}

async fn scenario_steps(client: &Client, scenario: &str, context: &Value) -> Result<(), McpError> {
    match scenario {
        // The handshake (or the probe) is the whole test.
        "initialize" | "request-metadata" => {
            client.list_tools().await?;
        }
        "tools_call" => {
            client
                .call_tool("add_numbers", json!({"a": 5, "b": 3}))
                .await?;
        }
        "elicitation-sep1034-client-defaults" => {
            client
                .call_tool("test_client_elicitation_defaults", json!({}))
                .await?;
        }
        "sse-retry" => {
            client.list_tools().await?;
            client.call_tool("test_reconnection", json!({})).await?;
        }
        "sep-2322-client-request-state" => {
            for tool in [
                "test_mrtr_echo_state",
                "test_mrtr_no_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_result_type",
            ] {
                client.call_tool(tool, json!({})).await?;
            }
        }
        "http-custom-headers" => {
            client.list_all_tools().await?;
            let calls = context
                .get("toolCalls")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for call in calls {
                let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
                let arguments = call.get("arguments").cloned().unwrap_or(json!({}));
                client.call_tool(name, arguments).await?;
            }
        }
        "json-schema-2020-12-preservation" => {
            let tools = client.list_all_tools().await?;
            let focal = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .ok_or_else(|| McpError::internal("the focal tool is not listed"))?;
            let schema = Value::Object(focal.input_schema.clone());
            client
                .call_tool("json_schema_echo", json!({ "schema": schema }))
                .await?;
        }
        // Listing is the test: the client must not fetch what a `$ref` points at.
        "json-schema-ref-no-deref" => {
            client.list_all_tools().await?;
        }
        // The skills extension (SEP-2640): listing reads no file (no prefetch).
        "sep-2640-client-no-prefetch" => {
            client.list_skills().await?;
        }
        // Load the first skill: its SKILL.md is fetched and verified (size, digest,
        // frontmatter); only a verified skill has its other files read. The suite serves a
        // tampered SKILL.md, so refusing it, and reading nothing more, is the pass.
        "sep-2640-client-verify-digest"
        | "sep-2640-client-verify-size"
        | "sep-2640-client-verify-frontmatter" => {
            let skills = client.list_skills().await?;
            let skill = skills
                .first()
                .ok_or_else(|| McpError::internal("the server lists no skill"))?;
            match client.load_skill(skill).await {
                Ok(loaded) => {
                    if let SkillResources::Files(files) = &loaded.entry().resources {
                        for file in files.iter().filter(|f| f.uri != skill.uri) {
                            client
                                .read_skill_file(loaded.entry(), &file.uri)
                                .await
                                .map_err(|e| McpError::internal(e.to_string()))?;
                        }
                    }
                }
                Err(SkillError::Request(e)) => return Err(e),
                Err(refused) => eprintln!("skill refused: {refused}"),
            }
        }
        // Tools with invalid x-mcp-header annotations are dropped by the listing; the rest
        // are called. Standard headers: every kind of request once.
        _ => exercise_everything(client).await?,
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().nth(1) else {
        eprintln!(
            "usage: conformance_client <server-url> (MCP_CONFORMANCE_SCENARIO names the scenario)"
        );
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    match run(&scenario, &url, &context).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{scenario}: {e}");
            ExitCode::from(1)
        }
    }
}
