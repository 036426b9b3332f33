//! DNS-rebinding protection: `Host` and `Origin` must name an allowed host.

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::config::HttpConfig;
use super::headers;
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

/// `None` when the request may go on, else the refusal to send.
pub(crate) fn check(config: &HttpConfig, headers: &HeaderMap) -> Option<Response> {
    let allowed = |list: &[String], host: &str| list.iter().any(|a| a.eq_ignore_ascii_case(host));
    if let Some(host) = headers::get(headers, "host") {
        if !allowed(&config.allowed_hosts, host_of(host)) {
            return Some(forbidden("Forbidden: Host is not allowed"));
        }
    }
    if let Some(origin) = headers::get(headers, "origin") {
        let authority = origin.split_once("://").map_or(origin, |(_, rest)| rest);
        let authority = authority.split('/').next().unwrap_or(authority);
        if origin != "null" && !allowed(&config.allowed_origins, host_of(authority)) {
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
