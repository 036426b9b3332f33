//! `examples/client.rs`, the command-line client, run as a child process against the
//! conformance server (itself a child, over stdio and over HTTP).

mod support;

use std::process::{Command, Output};

use serde_json::Value;
use support::example;

fn cli(args: &[&str]) -> Output {
    Command::new(example("client"))
        .args(args)
        .output()
        .expect("the client runs")
}

fn server_command() -> String {
    format!("{} --stdio", example("conformance_server").display())
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn tools_prints_one_name_and_description_per_line() {
    let out = cli(&["--stdio", &server_command(), "tools"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l == "test_simple_text: A simple text response."),
        "{text}"
    );
    assert!(text.lines().count() > 20, "{text}");
}

/// `call NAME [JSON]` in era `era`, parsed from stdout.
fn call(era: &str, args: &[&str]) -> Value {
    let command = server_command();
    let mut argv = vec!["--stdio", command.as_str(), "--era", era, "call"];
    argv.extend_from_slice(args);
    let out = cli(&argv);
    assert!(out.status.success(), "{era}: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("JSON on stdout")
}

#[test]
fn call_prints_the_result_as_json_in_either_era() {
    for era in ["auto", "2025-11-25", "2026-07-28"] {
        let unknown = call(era, &["test_prompt_tool", r#"{"a": 1}"#]);
        assert_eq!(unknown["isError"], true, "{era}: {unknown}");
        assert_eq!(
            unknown["content"][0]["text"],
            "Unknown tool: test_prompt_tool"
        );
        let simple = call(era, &["test_simple_text"]);
        assert_eq!(
            simple["content"][0]["text"], "This is a simple text response for testing.",
            "{era}"
        );
    }
}

#[test]
fn a_json_rpc_error_exits_non_zero_with_one_line() {
    let out = cli(&["--stdio", &server_command(), "read", "test://no-such-thing"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: Resource not found"), "{err}");
}

#[test]
fn an_unreachable_server_exits_non_zero_with_one_line() {
    let url = format!("http://127.0.0.1:{}/mcp", support::CLOSED_PORT);
    let out = cli(&["--url", &url, "tools"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("error: could not reach {url}")),
        "{err}"
    );
}

#[test]
fn a_usage_mistake_exits_2() {
    let out = cli(&["tools"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("usage: client"));
}
