//! Entry points for the fuzz targets in `fuzz/` (not a public API: no stability promise).
//! Each takes arbitrary bytes, drives one parser the wire reaches, and checks what must hold
//! whatever the input; a panic is a finding.

use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::jsonrpc::{self, Message};
use crate::lowlevel::round::Round;
use crate::lowlevel::Params;
use crate::request_state::{KeyRing, Sealer};

/// The JSON-RPC decoder and era detection: decoding never panics, the engine's one pass over
/// the message (`jsonrpc::decode_borrowed`) reads exactly what serde reads (the same message,
/// or the same error), a decoded request's params are an object or absent, the engine's scan
/// for `params._meta` agrees with serde's reading, and an envelope is validated without
/// panicking.
pub fn decode_message(data: &[u8]) {
    let decoded = jsonrpc::decode(data);
    assert_eq!(one_pass_reading(data), serde_reading(&decoded));
    match decoded {
        Ok(Message::Request { params, .. }) | Ok(Message::Notification { params, .. }) => {
            if let Some(raw) = &params {
                assert!(raw.get().starts_with('{'), "params must be an object");
            }
            // The engine's scan for `_meta` finds what serde finds.
            #[derive(serde::Deserialize)]
            struct Peek {
                #[serde(rename = "_meta", default)]
                meta: Option<crate::types::Meta>,
            }
            let by_serde = params
                .as_deref()
                .and_then(|raw| serde_json::from_str::<Peek>(raw.get()).ok())
                .and_then(|p| p.meta);
            let params = Params::from_raw(params.as_deref().map(serde_json::value::RawValue::get));
            let meta = params.meta();
            assert_eq!(meta, by_serde);
            let _ = crate::era::modern_envelope(meta.as_ref());
        }
        Ok(Message::Response { .. }) => {}
        Err(e) => assert!(matches!(e.error.code(), -32700 | -32600 | -32602)),
    }
}

/// What the engine's decode read, as text: the message's kind, id, method and params (or
/// outcome), or the error it answers.
fn one_pass_reading(data: &[u8]) -> String {
    match jsonrpc::decode_borrowed(data) {
        Ok(jsonrpc::Decoded::Request { id, method, params }) => {
            format!("request {id:?} {method} {:?}", params.map(|p| p.text))
        }
        Ok(jsonrpc::Decoded::Notification { method, params }) => {
            format!("notification {method} {:?}", params.map(|p| p.text))
        }
        Ok(jsonrpc::Decoded::Response { id, outcome }) => format!("response {id:?} {outcome:?}"),
        Err(e) => format!("error {e:?}"),
    }
}

/// [`one_pass_reading`] of what serde read.
fn serde_reading(decoded: &Result<Message, jsonrpc::DecodeError>) -> String {
    match decoded {
        Ok(Message::Request { id, method, params }) => {
            format!(
                "request {id:?} {method} {:?}",
                params.as_deref().map(|p| p.get())
            )
        }
        Ok(Message::Notification { method, params }) => {
            format!(
                "notification {method} {:?}",
                params.as_deref().map(|p| p.get())
            )
        }
        Ok(Message::Response { id, outcome }) => format!("response {id:?} {outcome:?}"),
        Err(e) => format!("error {e:?}"),
    }
}

/// The engine's decode, as the engine runs it (the one pass, and serde where it does not
/// apply): whether `data` is a message. For the decode bench (`bench/benches/engine.rs`).
pub fn decode_in_one_pass(data: &[u8]) -> bool {
    jsonrpc::decode_borrowed(data).is_ok()
}

/// The built-in JSON Schema validator: the first line is a schema, the rest a value (both
/// JSON). Reading any schema and checking any value never panics, and the quick verdict agrees
/// with the complaints (none exactly when valid).
pub fn schema_check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (schema, instance) = text.split_once('\n').unwrap_or((text, "null"));
    let (Ok(schema), Ok(instance)) = (
        serde_json::from_str::<Value>(schema),
        serde_json::from_str::<Value>(instance),
    ) else {
        return;
    };
    crate::validator::check_consistency(&schema, &instance);
}

/// The RFC 6570 matcher: the first line is a template, the rest a URI. A template that parses
/// either matches or not; a match binds only the template's variables.
pub fn uri_template(data: &str) {
    let (template, uri) = data.split_once('\n').unwrap_or((data, ""));
    if let Ok(t) = crate::server::UriTemplate::parse(template) {
        if let Some(vars) = t.matches(uri) {
            for name in vars.keys() {
                assert!(
                    template.contains(name.as_str()),
                    "{name} is not in {template}"
                );
            }
        }
    }
}

/// Base64 both ways: decoding never panics, and what decodes re-encodes to the same text.
pub fn base64(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Some(bytes) = crate::base64::decode(&text) {
        assert_eq!(crate::base64::encode(&bytes), text);
    }
    if let Some(bytes) = crate::base64::decode_url(&text) {
        assert_eq!(crate::base64::encode_url(&bytes), text);
    }
    assert_eq!(
        crate::base64::decode(&crate::base64::encode(data)).as_deref(),
        Some(data)
    );
}

/// The key every fuzzing seal uses (fixed, so seed corpora stay valid).
fn sealer() -> &'static Sealer {
    static SEALER: OnceLock<Sealer> = OnceLock::new();
    SEALER.get_or_init(|| {
        let ring = KeyRing::from_keys([[7u8; 32]]).unwrap_or_else(|_| unreachable!("one key"));
        Sealer::new(ring).ttl(std::time::Duration::from_secs(100 * 365 * 24 * 3600))
    })
}

/// A state sealed for `tools/call` of tool `t` without arguments (seed material).
pub fn sample_state(answer: &str) -> String {
    let mut result = json!({
        "resultType": "input_required",
        "inputRequests": {"q": {"method": "roots/list", "params": {}}},
        "requestState": answer,
    });
    let params = Params::from_value(json!({"name": "t"}));
    let round = Round::begin("tools/call", &params, Some(sealer()), None).unwrap_or_default();
    let _ = round.seal(sealer(), "tools/call", &mut result);
    result["requestState"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The requestState unsealer behind a retry: any text as the state (and the rest as answers)
/// is opened or refused with `-32602`, never a panic; only a genuine state opens.
pub fn unseal(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (state, answers) = text.split_once('\n').unwrap_or((&text, "{}"));
    let answers: Value = serde_json::from_str(answers).unwrap_or(Value::Null);
    let params = Params::from_value(json!({
        "name": "t",
        "requestState": state,
        "inputResponses": answers,
    }));
    match Round::begin("tools/call", &params, Some(sealer()), None) {
        Ok(round) => {
            assert!(state.starts_with("s1."), "only a sealed state opens");
            let _ = round;
        }
        Err(e) => assert_eq!(e.code(), -32602),
    }
}

/// The 2026 HTTP checks: the first line is a JSON-RPC body, each later line a `Name: value`
/// header (`=?base64?...?=` values included). Validation answers a status and an error; it
/// never panics, and a header value is decoded the same way every time.
#[cfg(feature = "http")]
pub fn http_headers(data: &[u8]) {
    use axum::http::{HeaderMap, HeaderName, HeaderValue};

    let text = String::from_utf8_lossy(data);
    let mut lines = text.lines();
    let body = lines.next().unwrap_or("");
    let mut headers = HeaderMap::new();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.trim().as_bytes()),
            HeaderValue::from_str(value.trim()),
        ) {
            let decoded =
                crate::transport::http::headers::decode_value(value.to_str().unwrap_or(""));
            assert_eq!(
                decoded,
                crate::transport::http::headers::decode_value(value.to_str().unwrap_or(""))
            );
            headers.append(name, value);
        }
    }
    // As the endpoint reads a body: the one pass, the params kept with what it found.
    let Ok(jsonrpc::Decoded::Request { method, params, .. }) =
        jsonrpc::decode_borrowed(body.as_bytes())
    else {
        return;
    };
    let params = params.map(|found| Params::from_found(Some(found)));
    let mut peeked = crate::lowlevel::peek(params.as_ref().and_then(Params::text));
    let server = http_server();
    peeked.envelope = server.envelopes.read(peeked.meta.as_ref());
    let known = crate::transport::http::headers::Known::read(&headers);
    let checked = crate::transport::http::stateless::validate(
        server,
        &headers,
        &known,
        &method,
        &mut peeked,
        params.as_ref(),
    );
    if let Err((status, e)) = checked {
        assert!(status.is_client_error(), "{status}");
        assert!(
            matches!(e.code(), -32602 | -32601 | -32020 | -32022 | -32600),
            "{}",
            e.code()
        );
    }
}

#[cfg(feature = "http")]
fn http_server() -> &'static crate::lowlevel::RunningServer<()> {
    static SERVER: OnceLock<std::sync::Arc<crate::lowlevel::RunningServer<()>>> = OnceLock::new();
    SERVER.get_or_init(|| {
        let mut server = crate::lowlevel::Server::new("fuzz");
        server.on_list_tools(|_, _| async { Ok(crate::types::ListToolsResult::default()) });
        server.on_call_tool(|_, _| async { Ok(crate::types::CallToolResult::text("")) });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap_or_else(|e| panic!("a runtime for the fuzz server: {e}"));
        runtime
            .block_on(crate::lowlevel::RunningServer::start(server))
            .unwrap_or_else(|e| panic!("the fuzz server starts: {e}"))
    })
}
