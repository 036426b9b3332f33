//! A command-line MCP client for poking at a server.
//!
//! ```text
//! cargo run --example client -- --stdio 'CMD ARGS' tools
//! cargo run --example client -- --url http://127.0.0.1:8080/mcp call NAME '{"json":"args"}'
//! ```
//!
//! Options: `--stdio 'CMD ARGS'` (spawn a server; the command line is split on whitespace, with
//! '...' and "..." quoting) or `--url URL` (Streamable HTTP); `--era 2025-11-25|2026-07-28|auto`
//! (default auto); `--header 'Name: value'` (HTTP, repeatable); `--oauth` (HTTP: log in with
//! OAuth 2.1 when the server asks, in the system browser, the redirect caught on a loopback
//! port); `--timeout SECONDS` (per request, default 60).
//!
//! Commands: `info`, `tools` (each tool's name and description, one per line), `call NAME
//! [JSON]` (the result as JSON), `resources`, `templates`, `read URI`, `prompts`, `prompt NAME
//! [JSON]`. The exit status is 0 on success, 1 with a one-line `error: ...` on stderr when the
//! server cannot be reached or answers with a JSON-RPC error, 2 on a usage mistake. A tool
//! result with `isError` is printed and exits 0: the call worked, the tool reported a failure.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use modelctx::client::{Client, ClientBuilder, EraChoice};
use modelctx::transport::{ChildProcess, HttpClientTransport, Stderr};
use modelctx::McpError;
use serde_json::Value;

const USAGE: &str =
    "usage: client (--stdio 'CMD ARGS' | --url URL) [--era auto|2025-11-25|2026-07-28] \
[--header 'Name: value']... [--oauth] [--timeout SECONDS] (info | tools | call NAME [JSON] | resources | \
templates | read URI | prompts | prompt NAME [JSON])";

struct Options {
    stdio: Option<String>,
    url: Option<String>,
    era: EraChoice,
    headers: Vec<(String, String)>,
    oauth: bool,
    timeout: Duration,
    command: Vec<String>,
}

fn parse(args: Vec<String>) -> Result<Options, String> {
    let mut options = Options {
        stdio: None,
        url: None,
        era: EraChoice::Auto,
        headers: Vec::new(),
        oauth: false,
        timeout: Duration::from_secs(60),
        command: Vec::new(),
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--stdio" => options.stdio = Some(value("--stdio")?),
            "--url" => options.url = Some(value("--url")?),
            "--era" => {
                options.era = match value("--era")?.as_str() {
                    "auto" => EraChoice::Auto,
                    v @ ("2025-11-25" | "2026-07-28" | "2025-06-18" | "2025-03-26"
                    | "2024-11-05") => EraChoice::Pinned(v.to_owned()),
                    other => return Err(format!("unknown era `{other}`")),
                }
            }
            "--header" => {
                let header = value("--header")?;
                let (name, v) = header
                    .split_once(':')
                    .ok_or(format!("--header `{header}` is not `Name: value`"))?;
                options.headers.push((name.trim().into(), v.trim().into()));
            }
            "--timeout" => {
                let secs: f64 = value("--timeout")?
                    .parse()
                    .map_err(|_| "--timeout takes seconds".to_owned())?;
                options.timeout = Duration::from_secs_f64(secs.max(0.001));
            }
            "--oauth" => options.oauth = true,
            "-h" | "--help" => return Err(String::new()),
            _ => {
                options.command.push(arg);
                options.command.extend(args.by_ref());
            }
        }
    }
    if options.stdio.is_some() == options.url.is_some() {
        return Err("give exactly one of --stdio and --url".into());
    }
    if options.command.is_empty() {
        return Err("no command".into());
    }
    Ok(options)
}

/// Splits a command line on whitespace, keeping '...' and "..." together.
fn split_command(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

async fn connect(options: &Options) -> Result<Client, McpError> {
    let builder = ClientBuilder::default()
        .era_choice(options.era.clone())
        .request_timeout(Some(options.timeout));
    if let Some(line) = &options.stdio {
        let words = split_command(line);
        let Some((program, args)) = words.split_first() else {
            return Err(McpError::invalid_params("--stdio needs a command"));
        };
        let child = ChildProcess::new(program)
            .args(args)
            .stderr(Stderr::Inherit);
        return builder.connect(child).await;
    }
    let mut http = HttpClientTransport::new(options.url.as_deref().unwrap_or_default())?;
    for (name, value) in &options.headers {
        http = http.header(name, value)?;
    }
    if options.oauth {
        let oauth = modelctx::client::oauth::OAuth::builder()
            .client_name("mcp example client")
            .build()?;
        // Log in first: a person in a browser can take longer than a request may.
        oauth
            .login(options.url.as_deref().unwrap_or_default())
            .await?;
        http = http.auth(oauth);
    }
    builder.connect(http).await
}

fn json_arg(arg: Option<&String>) -> Result<Value, McpError> {
    match arg {
        None => Ok(Value::Object(Default::default())),
        Some(text) => serde_json::from_str(text)
            .map_err(|e| McpError::invalid_params(format!("arguments are not JSON: {e}"))),
    }
}

fn first_line(text: Option<&str>) -> &str {
    text.and_then(|t| t.lines().next()).unwrap_or("")
}

fn print_json(value: &impl serde::Serialize) -> Result<(), McpError> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

async fn run(client: &Client, command: &[String]) -> Result<(), McpError> {
    let name = command.get(1);
    let need = |what: &str| McpError::invalid_params(format!("`{}` needs {what}", command[0]));
    match command[0].as_str() {
        "info" => {
            println!("era: {:?} ({})", client.era(), client.protocol_version());
            if let Some(info) = client.server_info() {
                println!("server: {} {}", info.name, info.version);
            }
            if let Some(instructions) = client.instructions() {
                println!("instructions: {instructions}");
            }
            if let Some(capabilities) = client.server_capabilities() {
                println!("capabilities: {}", serde_json::to_string(&capabilities)?);
            }
        }
        "tools" => {
            for tool in client.list_all_tools().await? {
                println!("{}: {}", tool.name, first_line(tool.description.as_deref()));
            }
        }
        "call" => {
            let name = name.ok_or_else(|| need("a tool name"))?;
            let result = client.call_tool(name, json_arg(command.get(2))?).await?;
            print_json(&result)?;
        }
        "resources" => {
            for resource in client.list_all_resources().await? {
                println!("{}: {}", resource.uri, resource.name);
            }
        }
        "templates" => {
            for template in client.list_all_resource_templates().await? {
                println!("{}: {}", template.uri_template, template.name);
            }
        }
        "read" => {
            let uri = name.ok_or_else(|| need("a URI"))?;
            print_json(&client.read_resource(uri).await?)?;
        }
        "prompts" => {
            for prompt in client.list_all_prompts().await? {
                println!(
                    "{}: {}",
                    prompt.name,
                    first_line(prompt.description.as_deref())
                );
            }
        }
        "prompt" => {
            let name = name.ok_or_else(|| need("a prompt name"))?;
            let arguments: BTreeMap<String, String> =
                serde_json::from_value(json_arg(command.get(2))?).map_err(|e| {
                    McpError::invalid_params(format!("prompt arguments are strings: {e}"))
                })?;
            print_json(&client.get_prompt(name, arguments).await?)?;
        }
        other => {
            return Err(McpError::invalid_params(format!(
                "unknown command `{other}`"
            )))
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1).collect()) {
        Ok(options) => options,
        Err(why) => {
            if !why.is_empty() {
                eprintln!("error: {why}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let client = match connect(&options).await {
        Ok(client) => client,
        Err(e) => {
            eprintln!("error: {}", e.message());
            return ExitCode::from(1);
        }
    };
    let outcome = run(&client, &options.command).await;
    client.close().await;
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", one_line(&e));
            ExitCode::from(1)
        }
    }
}

fn one_line(e: &McpError) -> String {
    let text = if e.is_internal() {
        e.message().into_owned()
    } else {
        format!("{} ({})", e.message(), e.code())
    };
    text.lines().collect::<Vec<_>>().join(" ")
}
