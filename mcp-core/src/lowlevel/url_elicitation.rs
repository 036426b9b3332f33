//! The `-32042` URL-elicitation-required error, sent as the client's era wants it.

use serde_json::{json, Map, Value};

use super::RequestContext;
use crate::era::Era;
use crate::error::{codes, McpError};
use crate::types::InputRequiredResult;

/// What a handler's [`McpError::url_elicitation_required`] becomes for this request's client:
/// `-32021` when it did not declare `elicitation.url`; the error itself in a 2025 session; on
/// the 2026 wire (where `-32042` is retired) an `InputRequiredResult` asking each elicitation,
/// keyed by its id. Every other error is returned as it is.
pub(crate) fn for_client<S: Send + Sync + 'static>(
    e: McpError,
    ctx: &RequestContext<S>,
) -> McpError {
    if e.code() != codes::URL_ELICITATION_REQUIRED {
        return e;
    }
    let entries = match e
        .data()
        .and_then(|d| d.get("elicitations"))
        .and_then(Value::as_array)
    {
        Some(entries) if !entries.is_empty() => entries,
        // Nothing to ask: a mistake of the handler, which 2026 (no `-32042` there) must not see
        // either; 2025 gets it as written.
        _ if ctx.era() == Era::Legacy => return e,
        _ => {
            tracing::error!("url_elicitation_required without elicitations; answered -32603");
            return McpError::internal("url_elicitation_required needs at least one elicitation");
        }
    };
    if !ctx.can_elicit_url() {
        return McpError::new(
            codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
            "Missing required client capability: elicitation",
        )
        .with_data(json!({ "requiredCapabilities": { "elicitation": { "url": {} } } }));
    }
    if ctx.era() == Era::Legacy {
        return e;
    }
    let mut requests = Map::new();
    for (i, entry) in entries.iter().enumerate() {
        let mut params = entry.clone();
        let id = match &mut params {
            Value::Object(map) => map.remove("elicitationId"),
            _ => None,
        };
        let key = match id {
            Some(Value::String(id)) => id,
            _ => format!("url-elicitation-{i}"),
        };
        requests.insert(
            key,
            json!({ "method": "elicitation/create", "params": params }),
        );
    }
    let mut result = InputRequiredResult::new();
    result.input_requests = Some(requests);
    McpError::input_required(result)
}
