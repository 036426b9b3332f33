//! [`Questions`]: what a handler asks the client in one round.

use serde_json::{json, Value};

use super::form::{form_schema, ElicitForm};
use crate::error::McpError;
use crate::types::{CreateMessageRequestParams, JsonObject};

/// One question: the key its answer comes back under, and the client request it stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub(crate) key: String,
    pub(crate) method: &'static str,
    pub(crate) params: Value,
}

impl Question {
    /// The key the answer comes back under (`inputResponses.<key>` in 2026).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The client method: `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub fn method(&self) -> &str {
        self.method
    }

    /// The request's params.
    pub fn params(&self) -> &Value {
        &self.params
    }

    /// The `{method, params}` object of an `inputRequests` entry.
    pub(crate) fn to_input_request(&self) -> Value {
        json!({ "method": self.method, "params": self.params })
    }

    /// True for a URL-mode elicitation.
    pub(crate) fn is_url(&self) -> bool {
        self.method == "elicitation/create" && self.params.get("mode") == Some(&json!("url"))
    }

    /// The params sent in a 2025 session: a URL-mode elicitation carries its key as its
    /// `elicitationId` there (2026 has no such id).
    pub(crate) fn legacy_params(&self) -> Value {
        let mut params = self.params.clone();
        if self.is_url() {
            if let Value::Object(map) = &mut params {
                map.insert("elicitationId".into(), Value::from(self.key.clone()));
            }
        }
        params
    }

    /// The client capability this question needs.
    pub(crate) fn capability(&self) -> &'static str {
        match self.method {
            "elicitation/create" => "elicitation",
            "sampling/createMessage" => "sampling",
            _ => "roots",
        }
    }
}

/// Several questions asked in one round (2026: one `InputRequiredResult` with every missing
/// one; 2025: sent one after another). Keys are yours; answers come back under them.
///
/// ```
/// use modelctx_core::input::Questions;
/// use modelctx_core::types::CreateMessageRequestParams;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Name { name: String }
///
/// let questions = Questions::new()
///     .elicit::<Name>("user_name", "What is your name?")
///     .sample("greeting", CreateMessageRequestParams::user_text("Say hello", 50))
///     .list_roots("client_roots");
/// assert_eq!(questions.len(), 3);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Questions {
    pub(crate) items: Vec<Question>,
    pub(crate) invalid: Option<String>,
}

impl Questions {
    /// No questions yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A form for the user, its schema derived from `T` (see [`ElicitForm`]).
    pub fn elicit<T: ElicitForm>(self, key: impl Into<String>, message: impl Into<String>) -> Self {
        match form_schema::<T>() {
            Ok(schema) => self.elicit_schema(key, message, schema),
            Err(reason) => self.refuse(reason),
        }
    }

    /// A form with a hand-written `requestedSchema` (a flat object of primitives).
    pub fn elicit_schema(
        self,
        key: impl Into<String>,
        message: impl Into<String>,
        schema: JsonObject,
    ) -> Self {
        let params = json!({
            "mode": "form",
            "message": message.into(),
            "requestedSchema": schema,
        });
        self.push(key.into(), "elicitation/create", params)
    }

    /// A URL for the user to open in their browser (URL-mode elicitation), for what must not
    /// pass through the client: credentials, payments, third-party authorization. The answer is
    /// consent only (see [`Answers::url_elicited`](super::Answers::url_elicited)); the
    /// interaction itself happens out of band, between the user's browser and `url`.
    ///
    /// In a 2025 session the key is also the request's `elicitationId`, the id
    /// [`RequestContext::complete_elicitation`](crate::lowlevel::RequestContext::complete_elicitation)
    /// names: make it unique on this server (a random id your URL also carries, for instance)
    /// and, since a 2026 handler runs again from the top on the client's retry, the same when
    /// it runs again for the same request (derive it from the arguments or the caller, or keep
    /// it in `requestState`). Needs the client's `elicitation.url` capability.
    pub fn elicit_url(
        self,
        key: impl Into<String>,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Self {
        let params = json!({
            "mode": "url",
            "message": message.into(),
            "url": url.into(),
        });
        self.push(key.into(), "elicitation/create", params)
    }

    /// A completion from the client's model.
    pub fn sample(self, key: impl Into<String>, params: CreateMessageRequestParams) -> Self {
        let params = serde_json::to_value(params).unwrap_or_else(|_| json!({}));
        self.push(key.into(), "sampling/createMessage", params)
    }

    /// The client's roots.
    pub fn list_roots(self, key: impl Into<String>) -> Self {
        self.push(key.into(), "roots/list", json!({}))
    }

    /// How many questions.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when there is nothing to ask.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The questions.
    pub fn iter(&self) -> impl Iterator<Item = &Question> {
        self.items.iter()
    }

    fn push(mut self, key: String, method: &'static str, params: Value) -> Self {
        if self.items.iter().any(|q| q.key == key) {
            return self.refuse(format!("two questions use the key `{key}`"));
        }
        self.items.push(Question {
            key,
            method,
            params,
        });
        self
    }

    fn refuse(mut self, reason: String) -> Self {
        self.invalid.get_or_insert(reason);
        self
    }

    /// The questions, or why they cannot be asked (a programming error: logged, -32603).
    pub(crate) fn checked(self) -> Result<Vec<Question>, McpError> {
        match self.invalid {
            Some(reason) => Err(McpError::internal(format!(
                "cannot ask the client: {reason}"
            ))),
            None => Ok(self.items),
        }
    }
}
