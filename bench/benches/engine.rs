//! In-process cost of the engine, criterion-style (warm-up, then many samples of many
//! iterations; median and p99 of the per-iteration time):
//!
//! - one validated `tools/call` through `RunningServer::handle_message` (decode, era and
//!   `_meta` checks, argument validation against the schema, dispatch, stamping, encode);
//! - `tools/list` of a server with 100 tools (served from the prebuilt page);
//! - the decode, validate and encode paths alone (`jsonrpc::decode` of that `tools/call`; its
//!   arguments against their schema; encoding its `CallToolResult` answer), so a regression can
//!   be placed;
//! - registering 100 and 1,000 tools (per tool, schemas compiled beforehand): flat when
//!   registration is linear.
//!
//! Run: `cargo bench --manifest-path bench/Cargo.toml --bench engine` (prints JSON lines);
//! add `-- <text>` to run only the benches whose name contains it (`-- tools/call`).

use std::time::{Duration, Instant};

use modelctx::lowlevel::RunningServer;
use modelctx::prelude::*;
use modelctx::server::ToolDef;
use serde_json::json;

/// Add two numbers.
#[tool]
async fn add(a: i64, b: i64) -> String {
    a.wrapping_add(b).to_string()
}

/// Add two numbers, the second at most 100.
#[tool]
async fn bounded_add(a: i64, #[arg(range(..=100))] b: i64) -> String {
    a.wrapping_add(b).to_string()
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// Whether the bench called `name` runs: every one, or those whose name contains the first
/// argument that is not a flag (`cargo bench --bench engine -- tools/call`).
fn selected(name: &str) -> bool {
    match std::env::args().skip(1).find(|a| !a.starts_with("--")) {
        Some(filter) => name.contains(&filter),
        None => true,
    }
}

fn measure(
    name: &str,
    runtime: &tokio::runtime::Runtime,
    server: &std::sync::Arc<RunningServer<()>>,
    line: &[u8],
    check: &str,
) {
    if !selected(name) {
        return;
    }
    let once = runtime
        .block_on(server.handle_message(line))
        .expect("an answer");
    assert!(once.contains(check), "{name}: {once}");
    let iterations = 2_000;
    let mut samples: Vec<Duration> = Vec::new();
    let warm_until = Instant::now() + Duration::from_secs(1);
    let end = warm_until + Duration::from_secs(4);
    runtime.block_on(async {
        while Instant::now() < end {
            let t = Instant::now();
            for _ in 0..iterations {
                std::hint::black_box(server.handle_message(std::hint::black_box(line)).await);
            }
            if t >= warm_until {
                samples.push(t.elapsed() / iterations);
            }
        }
    });
    samples.sort();
    let at = |p: f64| samples[((samples.len() - 1) as f64 * p) as usize].as_secs_f64() * 1e6;
    println!(
        "{}",
        json!({"bench": name, "samples": samples.len(), "iterations_per_sample": iterations,
               "median_us": at(0.5), "p99_us": at(0.99)})
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    let one = runtime
        .block_on(RunningServer::start(
            McpServer::new("adder").tool(AddTool).into_server(),
        ))
        .unwrap();
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"add","arguments":{{"a":2,"b":3}},{META}}}}}"#
    );
    measure(
        "validated tools/call",
        &runtime,
        &one,
        call.as_bytes(),
        r#""text":"5""#,
    );

    // The same call to a tool with a constrained argument: its arguments are read into a
    // value and checked against the schema before they are decoded.
    let checked = runtime
        .block_on(RunningServer::start(
            McpServer::new("adder").tool(BoundedAddTool).into_server(),
        ))
        .unwrap();
    let bounded_call = call.replace(r#""name":"add""#, r#""name":"bounded_add""#);
    measure(
        "tools/call checked against the schema (a constrained argument)",
        &runtime,
        &checked,
        bounded_call.as_bytes(),
        r#""text":"5""#,
    );

    let mut hundred = McpServer::new("hundred");
    for def in tool_defs(100) {
        hundred = hundred.tool(def);
    }
    let hundred = runtime
        .block_on(RunningServer::start(hundred.into_server()))
        .unwrap();
    let list = format!(r#"{{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{{{META}}}}}"#);
    measure(
        "tools/list, 100 tools",
        &runtime,
        &hundred,
        list.as_bytes(),
        "tool_099",
    );

    micro("decode: jsonrpc::decode of the tools/call line", || {
        std::hint::black_box(
            modelctx::jsonrpc::decode(std::hint::black_box(call.as_bytes())).is_ok(),
        );
    });
    // What the engine runs instead: one pass over the message (params' members and `_meta`
    // found on the way), serde only where that pass does not apply.
    micro("decode: the engine's one pass over the tools/call line", || {
        std::hint::black_box(modelctx_core::fuzzing::decode_in_one_pass(std::hint::black_box(
            call.as_bytes(),
        )));
    });
    let result = CallToolResult::text("5");
    let id = modelctx::jsonrpc::RequestId::Number(7);
    micro("encode: CallToolResult to a response line", || {
        let raw = serde_json::value::to_raw_value(std::hint::black_box(&result)).unwrap();
        std::hint::black_box(modelctx::jsonrpc::encode_result(&id, &raw));
    });

    let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"], "additionalProperties": false});
    let validator = modelctx::server::SchemaValidator::compile(&schema).unwrap();
    let arguments = json!({"a": 2, "b": 3});
    micro(
        "validate: the tools/call arguments against their schema",
        || {
            std::hint::black_box(validator.validate(std::hint::black_box(&arguments)).is_ok());
        },
    );

    for n in [100, 1_000] {
        if !selected(&format!("register {n} tools, per tool")) {
            continue;
        }
        let mut samples = Vec::new();
        for _ in 0..10 {
            let defs = tool_defs(n);
            let t = Instant::now();
            let mut server = McpServer::new("many");
            for def in defs {
                server = server.tool(def);
            }
            samples.push(t.elapsed() / n as u32);
            std::hint::black_box(server);
        }
        samples.sort();
        println!(
            "{}",
            json!({"bench": format!("register {n} tools, per tool"), "samples": samples.len(),
                   "median_us": samples[samples.len() / 2].as_secs_f64() * 1e6})
        );
    }
}

/// Median and p99 of `f` (many samples of 10,000 calls, after a warm-up second).
fn micro(name: &str, mut f: impl FnMut()) {
    if !selected(name) {
        return;
    }
    let iterations = 10_000u32;
    let mut samples: Vec<Duration> = Vec::new();
    let warm_until = Instant::now() + Duration::from_secs(1);
    let end = warm_until + Duration::from_secs(2);
    while Instant::now() < end {
        let t = Instant::now();
        for _ in 0..iterations {
            f();
        }
        if t >= warm_until {
            samples.push(t.elapsed() / iterations);
        }
    }
    samples.sort();
    let at = |p: f64| samples[((samples.len() - 1) as f64 * p) as usize].as_secs_f64() * 1e6;
    println!(
        "{}",
        json!({"bench": name, "samples": samples.len(), "iterations_per_sample": iterations,
               "median_us": at(0.5), "p99_us": at(0.99)})
    );
}

/// `n` tools of the same two-argument schema, named `tool_000`, `tool_001`, ...
fn tool_defs(n: usize) -> Vec<ToolDef<()>> {
    (0..n)
        .map(|i| {
            let schema = json!({"type": "object", "properties": {"q": {"type": "string", "description": "Words to look for."}, "limit": {"type": "integer", "minimum": 1, "maximum": 50}}, "required": ["q"]});
            ToolDef::from_schema(format!("tool_{i:03}"), schema, |_, _| async {
                Ok(CallToolResult::text("ok"))
            })
            .unwrap()
        })
        .collect()
}
