//! 2026 multi-round-trip input: `InputRequiredResult`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Meta;

/// One question for the client: `{method, params}` of `elicitation/create`,
/// `sampling/createMessage` or `roots/list` (not a JSON-RPC message: no `id`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InputRequest {
    /// The method.
    pub method: String,
    /// Its params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// A result that pauses a `tools/call`, `prompts/get` or `resources/read` until the client
/// answers (`resultType: "input_required"`, set by this type's serialization).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InputRequiredResult {
    /// Always `"input_required"`.
    #[serde(default = "input_required")]
    pub result_type: String,
    /// Questions keyed by a server-chosen name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<serde_json::Map<String, Value>>,
    /// Opaque state the client echoes on its retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// `_meta` of this `input_required` result; keys are `prefix/name`. The 2026 engine adds
    /// `io.modelcontextprotocol/serverInfo` here unless the handler already set it.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

fn input_required() -> String {
    "input_required".to_owned()
}

impl Default for InputRequiredResult {
    fn default() -> Self {
        Self::new()
    }
}

impl InputRequiredResult {
    /// An empty `input_required` result (add requests or state before returning it).
    pub fn new() -> Self {
        Self {
            result_type: input_required(),
            input_requests: None,
            request_state: None,
            meta: None,
        }
    }

    /// Adds the request `key` asks of the client: `method` (`elicitation/create`,
    /// `sampling/createMessage`, `roots/list`) with these params. The client answers it under
    /// the same key in `inputResponses`.
    ///
    /// ```
    /// use modelctx_core::types::InputRequiredResult;
    /// use serde_json::json;
    /// let ask = InputRequiredResult::new()
    ///     .with_input_request("name", "elicitation/create", json!({"message": "Name?"}))
    ///     .with_request_state("step-1");
    /// assert_eq!(ask.input_requests.unwrap()["name"]["method"], "elicitation/create");
    /// ```
    pub fn with_input_request(
        mut self,
        key: impl Into<String>,
        method: impl Into<String>,
        params: Value,
    ) -> Self {
        let mut request = serde_json::Map::new();
        request.insert("method".into(), Value::String(method.into()));
        request.insert("params".into(), params);
        self.input_requests
            .get_or_insert_with(Default::default)
            .insert(key.into(), Value::Object(request));
        self
    }
}

/// What `tools/call`, `resources/read` and `prompts/get` handlers may return: the complete
/// result, or an [`InputRequiredResult`] that asks the client for input first (2026).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Outcome<T> {
    /// The finished result.
    Complete(T),
    /// A request for input; the client retries with the answers.
    InputRequired(InputRequiredResult),
}

macro_rules! outcome_from {
    ($($t:ty),*) => {$(
        impl From<$t> for Outcome<$t> {
            fn from(value: $t) -> Self {
                Self::Complete(value)
            }
        }
        impl From<InputRequiredResult> for Outcome<$t> {
            fn from(value: InputRequiredResult) -> Self {
                Self::InputRequired(value)
            }
        }
    )*};
}

outcome_from!(
    super::CallToolResult,
    super::ReadResourceResult,
    super::GetPromptResult
);

option_setters!(InputRequiredResult {
    /// Sets the `requestState` the client echoes back with its answers.
    with_request_state => request_state: String,
});
