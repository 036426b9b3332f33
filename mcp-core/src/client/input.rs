//! The client's answers to input requests: callbacks for elicitation, sampling and roots,
//! used for 2025 server-to-client requests and for the 2026 multi-round-trip loop.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::McpError;
use crate::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ListRootsResult,
};

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type Callback = Arc<dyn Fn(Value) -> BoxFuture<Result<Value, McpError>> + Send + Sync>;

/// Rounds of `input_required` a client answers for one request before giving up. Default 8.
pub const DEFAULT_MAX_INPUT_ROUNDS: usize = 8;

/// The client's callbacks, by input method.
#[derive(Clone, Default)]
pub(crate) struct InputHandlers {
    elicit: Option<Callback>,
    sample: Option<Callback>,
    roots: Option<Callback>,
}

impl std::fmt::Debug for InputHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InputHandlers")
            .field("elicit", &self.elicit.is_some())
            .field("sample", &self.sample.is_some())
            .field("roots", &self.roots.is_some())
            .finish()
    }
}

fn erase<P, R, F, Fut>(f: F) -> Callback
where
    P: DeserializeOwned + Send + 'static,
    R: Serialize + 'static,
    F: Fn(P) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, McpError>> + Send + 'static,
{
    let f = Arc::new(f);
    Arc::new(move |params: Value| {
        let f = f.clone();
        Box::pin(async move {
            let params: P = serde_json::from_value(params)
                .map_err(|e| McpError::invalid_params(format!("Invalid params: {e}")))?;
            Ok(serde_json::to_value(f(params).await?)?)
        })
    })
}

impl InputHandlers {
    pub(crate) fn set_elicit<F, Fut>(&mut self, f: F)
    where
        F: Fn(ElicitRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, McpError>> + Send + 'static,
    {
        self.elicit = Some(erase(f));
    }

    pub(crate) fn set_sample<F, Fut>(&mut self, f: F)
    where
        F: Fn(CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, McpError>> + Send + 'static,
    {
        self.sample = Some(erase(f));
    }

    pub(crate) fn set_roots<F, Fut>(&mut self, f: F)
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ListRootsResult, McpError>> + Send + 'static,
    {
        let f = Arc::new(f);
        self.roots = Some(Arc::new(move |_| {
            let f = f.clone();
            Box::pin(async move { Ok(serde_json::to_value(f().await?)?) })
        }));
    }

    pub(crate) fn has(&self, method: &str) -> bool {
        self.callback(method).is_some()
    }

    fn callback(&self, method: &str) -> Option<&Callback> {
        match method {
            "elicitation/create" => self.elicit.as_ref(),
            "sampling/createMessage" => self.sample.as_ref(),
            "roots/list" => self.roots.as_ref(),
            _ => None,
        }
    }

    /// Answers one input request (a 2025 server request or a 2026 `inputRequests` entry).
    pub(crate) async fn answer(&self, method: &str, params: Value) -> Result<Value, McpError> {
        match self.callback(method) {
            Some(callback) => callback(params).await,
            None => Err(McpError::method_not_found(method)),
        }
    }

    /// Answers every entry of an `inputRequests` map.
    pub(crate) async fn answer_all(
        &self,
        requests: &Map<String, Value>,
    ) -> Result<Map<String, Value>, McpError> {
        let mut responses = Map::new();
        for (key, request) in requests {
            let method = request.get("method").and_then(Value::as_str).unwrap_or("");
            if !self.has(method) {
                return Err(McpError::internal(format!(
                    "the server asked for `{key}` ({method}) and this client has no handler for it"
                )));
            }
            let params = request
                .get("params")
                .cloned()
                .unwrap_or(Value::Object(Map::new()));
            responses.insert(key.clone(), self.answer(method, params).await?);
        }
        Ok(responses)
    }
}
