//! DNS-rebinding protection: `Host` and `Origin` must name an allowed host.

use axum::http::StatusCode;
use axum::response::Response;

use super::config::HttpConfig;
use super::headers::Known;
use super::response;
use crate::error::McpError;

/// The host part of `host[:port]` (brackets kept for IPv6).
fn host_of(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority
            .split_once(']')
            .map_or(authority, |(h, _)| &authority[..h.len() + 1]);
    }
    authority.rsplit_once(':').map_or(authority, |(h, _)| h)
}

/// `None` when the request may go on, else the refusal to send. An empty allow-list allows any
/// name (what `serve_http_on` uses when bound to a non-loopback address with the defaults).
pub(crate) fn check(config: &HttpConfig, headers: &Known<'_>) -> Option<Response> {
    let allowed = |list: &[String], authority: &str| {
        !authority.contains('@')
            && (list.is_empty()
                || list
                    .iter()
                    .any(|a| a.eq_ignore_ascii_case(host_of(authority))))
    };
    if !config.allowed_hosts.is_empty() {
        match headers.host.map(|h| h.to_str()) {
            Some(Ok(host)) if allowed(&config.allowed_hosts, host) => {}
            // Missing, unreadable or foreign: refused when hosts are restricted.
            _ => return Some(forbidden("Forbidden: Host is not allowed")),
        }
    }
    if let Some(origin) = headers.origin {
        let Ok(origin) = origin.to_str() else {
            return Some(forbidden("Forbidden: Origin is not allowed"));
        };
        let authority = origin.split_once("://").map_or(origin, |(_, rest)| rest);
        let authority = authority.split('/').next().unwrap_or(authority);
        let opaque = origin == "null" || !origin.contains("://");
        if opaque || !allowed(&config.allowed_origins, authority) {
            return Some(forbidden("Forbidden: Origin is not allowed"));
        }
    }
    None
}

fn forbidden(message: &'static str) -> Response {
    let e = McpError::invalid_request(message);
    response::json(
        StatusCode::FORBIDDEN,
        crate::jsonrpc::encode_error(None, &e.to_wire(false)),
    )
}
