//! Our client against another SDK's server: the official TypeScript SDK
//! (`@modelcontextprotocol/sdk`, pinned in `.ci/run`), over stdio and Streamable HTTP.
//!
//! Needs Node and the SDK: `MCP_TEST_TS_SDK_DIR` names a folder whose `node_modules` holds
//! `@modelcontextprotocol/sdk` and `zod` (`.ci/run` installs them and sets it, with
//! `MCP_TEST_REQUIRE_TS_SDK=1`); `MCP_TEST_NODE` the node binary (default `node`). Without them
//! the tests skip with a notice.

mod support;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use modelctx::client::{Client, RequestOptions};
use modelctx::era::Era;
use modelctx::transport::{ChildProcess, HttpClientTransport, Stderr};
use serde_json::json;

/// The SDK's folder with `server.mjs` copied in (ES modules resolve packages next to the file),
/// and the node binary; `None` when the test should skip.
fn sdk() -> Option<(String, PathBuf)> {
    let node = std::env::var("MCP_TEST_NODE").unwrap_or_else(|_| "node".into());
    let dir = std::env::var("MCP_TEST_TS_SDK_DIR").ok().map(PathBuf::from);
    let present = support::runs(&node)
        && dir
            .as_ref()
            .is_some_and(|d| d.join("node_modules/@modelcontextprotocol/sdk").is_dir());
    let how = "install @modelcontextprotocol/sdk and zod with npm into a folder and set \
               MCP_TEST_TS_SDK_DIR to it";
    if !support::outside_program("ts_sdk", present, how) {
        return None;
    }
    let dir = dir?;
    let script = dir.join("server.mjs");
    std::fs::write(&script, include_str!("ts/server.mjs")).expect("server.mjs written");
    Some((node, script))
}

async fn exercise(client: &Client) {
    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    names.sort();
    assert_eq!(names, vec!["add", "slow"]);
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(sum.content[0].as_text(), Some("5"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let options = RequestOptions::new().on_progress(move |p| sink.lock().unwrap().push(p.progress));
    let slow = client
        .call_tool_with("slow", json!({}), &options)
        .await
        .unwrap();
    assert_eq!(slow.content[0].as_text(), Some("done"));
    assert_eq!(*seen.lock().unwrap(), vec![1.0, 2.0, 3.0]);
    let read = client.read_resource("greeting://hello").await.unwrap();
    assert_eq!(
        serde_json::to_value(&read.contents[0]).unwrap()["text"],
        "Hello from TypeScript"
    );
    let prompt = client
        .get_prompt("review", [("code".to_owned(), "x = 1".to_owned())].into())
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&prompt.messages[0]).unwrap()["content"]["text"],
        "Review: x = 1"
    );
    client.ping().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_server_over_stdio() {
    let Some((node, script)) = sdk() else { return };
    let client = Client::connect(ChildProcess::new(node).arg(script).stderr(Stderr::Discard))
        .await
        .unwrap();
    // It answers server/discover with -32601: negotiation falls back to initialize.
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(client.server_info().unwrap().name, "ts-sdk-server");
    exercise(&client).await;
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_server_over_http() {
    use std::io::BufRead;
    let Some((node, script)) = sdk() else { return };
    let mut child = std::process::Command::new(node)
        .arg(script)
        .arg("--http")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("node starts");
    let mut url = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut url)
        .expect("the server prints its URL");
    let client = Client::connect(HttpClientTransport::new(url.trim()).unwrap()).await;
    let outcome = match client {
        Ok(client) => {
            assert_eq!(client.era(), Era::Legacy);
            exercise(&client).await;
            client.close().await;
            Ok(())
        }
        Err(e) => Err(e),
    };
    let _ = child.kill();
    let _ = child.wait();
    outcome.unwrap();
}
