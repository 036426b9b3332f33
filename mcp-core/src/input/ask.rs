//! The input methods of [`RequestContext`]: one API, served per era.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::answers::{Answers, Elicited};
use super::form::ElicitForm;
use super::questions::{Question, Questions};
use crate::era::Era;
use crate::error::{codes, McpError};
use crate::lowlevel::round::{invalid_answer, Round};
use crate::lowlevel::RequestContext;
use crate::request_state::digest_json;
use crate::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitResult, ElicitationCompleteParams,
    InputRequiredResult, ListRootsResult, Root,
};

impl<S: Send + Sync + 'static> RequestContext<S> {
    /// Asks the user to fill in form `T` (its schema derived by [`form_schema`](super::form_schema)).
    /// `key` names the question (the `inputRequests` key in 2026). See [`input`](crate::input).
    pub async fn elicit<T: ElicitForm>(
        &self,
        key: &str,
        message: &str,
    ) -> Result<Elicited<T>, McpError> {
        self.ask(Questions::new().elicit::<T>(key, message))
            .await?
            .elicited(key)
    }

    /// Asks the user to open `url` in their browser (URL-mode elicitation; see
    /// [`Questions::elicit_url`] for the key's rules). Returns whether the user agreed to open
    /// it; the interaction itself happens out of band. Fails with `-32021` when the client did
    /// not declare `elicitation.url`.
    ///
    /// ```no_run
    /// # use modelctx_core::lowlevel::RequestContext;
    /// # use modelctx_core::input::Elicited;
    /// async fn connect(ctx: RequestContext, user: String) -> modelctx_core::Result<String> {
    ///     let id = format!("connect-{user}");
    ///     let url = format!("https://example.com/connect?session={id}");
    ///     match ctx.elicit_url(&id, "Connect your account", &url).await? {
    ///         Elicited::Accepted(()) => Ok("Finish in your browser, then ask again.".into()),
    ///         _ => Ok("Not connected.".into()),
    ///     }
    /// }
    /// ```
    pub async fn elicit_url(
        &self,
        key: &str,
        message: &str,
        url: &str,
    ) -> Result<Elicited<()>, McpError> {
        self.ask(Questions::new().elicit_url(key, message, url))
            .await?
            .url_elicited(key)
    }

    /// Tells the client that the out-of-band interaction of the URL-mode elicitation `key` is
    /// done (`notifications/elicitation/complete`, on the session's stream: the request that
    /// asked may be over), so it can retry what waited for it. 2025 sessions only: the 2026
    /// wire has no such notification (the client learns by retrying), and there this does
    /// nothing. The session outlives the request: keep `ctx.session().cloned()` and call
    /// [`Session::notify`](crate::lowlevel::Session::notify) to send it later.
    pub async fn complete_elicitation(&self, key: &str) -> Result<(), McpError> {
        if self.era() != Era::Legacy {
            return Ok(());
        }
        let params = ElicitationCompleteParams {
            elicitation_id: key.to_owned(),
        };
        match self.session() {
            Some(session) => {
                session
                    .notify("notifications/elicitation/complete", params)
                    .await
            }
            None => Ok(()),
        }
    }

    /// Asks the client's model for a completion.
    pub async fn sample(
        &self,
        key: &str,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, McpError> {
        self.ask(Questions::new().sample(key, params))
            .await?
            .sampled(key)
    }

    /// Asks the client for its roots.
    pub async fn list_roots(&self, key: &str) -> Result<Vec<Root>, McpError> {
        self.ask(Questions::new().list_roots(key)).await?.roots(key)
    }

    /// Asks several questions in one round and returns every answer (2026: one
    /// `InputRequiredResult` holding each question not answered yet; 2025: the requests are
    /// sent one after another). Fails with `-32021` when the client lacks a capability a
    /// question needs, and with `-32602` when an answer does not fit its question.
    pub async fn ask(&self, questions: Questions) -> Result<Answers, McpError> {
        let questions = questions.checked()?;
        self.require_capabilities(&questions)?;
        let mut answers = BTreeMap::new();
        match self.era() {
            Era::Legacy => {
                let timeout = self.info.server.server.options.input_timeout;
                for q in &questions {
                    let call = self.request::<_, Value>(q.method, q.legacy_params());
                    let answer = tokio::time::timeout(timeout, call).await.map_err(|_| {
                        McpError::internal(format!(
                            "the client did not answer {} within {} s",
                            q.method,
                            timeout.as_secs()
                        ))
                    })??;
                    check_answer(q, &answer)?;
                    answers.insert(q.key.clone(), answer);
                }
            }
            Era::Modern => {
                let empty = Round::default();
                let round = self.info.round.get().map_or(&empty, |round| &**round);
                let mut missing = Map::new();
                for q in &questions {
                    let request = q.to_input_request();
                    match round.answer(&q.key, &digest_json(&request)) {
                        Some(answer) => {
                            check_answer(q, answer)?;
                            answers.insert(q.key.clone(), answer.clone());
                        }
                        None => {
                            missing.insert(q.key.clone(), request);
                        }
                    }
                }
                if !missing.is_empty() {
                    let mut result = InputRequiredResult::new();
                    result.input_requests = Some(missing);
                    return Err(McpError::input_required(result));
                }
            }
        }
        Ok(Answers { map: answers })
    }

    /// True when the client declared form elicitation.
    pub fn can_elicit(&self) -> bool {
        match &self.client_capabilities().elicitation {
            None => false,
            // `{}` means form; a client that lists modes must list `form`.
            Some(modes) => modes.is_empty() || modes.contains_key("form"),
        }
    }

    /// True when the client declared URL-mode elicitation (`elicitation.url`).
    pub fn can_elicit_url(&self) -> bool {
        self.client_capabilities()
            .elicitation
            .as_ref()
            .is_some_and(|modes| modes.contains_key("url"))
    }

    /// True when the client declared sampling.
    pub fn can_sample(&self) -> bool {
        self.client_capabilities().sampling.is_some()
    }

    /// True when the client declared roots.
    pub fn can_list_roots(&self) -> bool {
        self.client_capabilities().roots.is_some()
    }

    /// A 2026 retry's answer under `key`, as the client sent it (or as an earlier round's
    /// sealed state carried it). For low-level handlers that build their own
    /// `InputRequiredResult`.
    pub fn input_response(&self, key: &str) -> Option<&Value> {
        Some(&self.info.round.get()?.answers.get(key)?.value)
    }

    /// The `requestState` of a 2026 retry as the handler wrote it (opened, when the server
    /// seals states).
    pub fn request_state(&self) -> Option<&str> {
        self.info.round.get()?.state.as_deref()
    }

    fn require_capabilities(&self, questions: &[Question]) -> Result<(), McpError> {
        let mut missing = Map::new();
        for q in questions {
            let declared = match q.capability() {
                "elicitation" if q.is_url() => self.can_elicit_url(),
                "elicitation" => self.can_elicit(),
                "sampling" => self.can_sample(),
                _ => self.can_list_roots(),
            };
            if !declared {
                let needed = missing
                    .entry(q.capability().to_owned())
                    .or_insert_with(|| json!({}));
                if q.capability() == "elicitation" {
                    let mode = if q.is_url() { "url" } else { "form" };
                    needed[mode] = json!({});
                }
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        let names: Vec<&str> = missing.keys().map(String::as_str).collect();
        Err(McpError::new(
            codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
            format!("Missing required client capability: {}", names.join(", ")),
        )
        .with_data(json!({ "requiredCapabilities": missing })))
    }
}

/// Refuses an answer that does not fit its question (`-32602`).
fn check_answer(q: &Question, answer: &Value) -> Result<(), McpError> {
    match q.method {
        "elicitation/create" => {
            let result = ElicitResult::deserialize(answer)
                .map_err(|e| invalid_answer(&q.key, &e.to_string()))?;
            match result.action.as_str() {
                "accept" => {
                    let content = Value::Object(result.content.unwrap_or_default());
                    check_form(q, &content)
                }
                "decline" | "cancel" => Ok(()),
                other => Err(invalid_answer(
                    &q.key,
                    &format!("unknown action `{other}` (expected accept, decline or cancel)"),
                )),
            }
        }
        "sampling/createMessage" => CreateMessageResult::deserialize(answer)
            .map(drop)
            .map_err(|e| invalid_answer(&q.key, &e.to_string())),
        _ => ListRootsResult::deserialize(answer)
            .map(drop)
            .map_err(|e| invalid_answer(&q.key, &e.to_string())),
    }
}

/// Checks accepted form content against the requested schema (without the `validation`
/// feature, only decoding into the form type checks it).
fn check_form(q: &Question, content: &Value) -> Result<(), McpError> {
    let Some(schema) = q.params.get("requestedSchema") else {
        return Ok(());
    };
    crate::validator::SchemaValidator::compile(schema)?
        .validate(content)
        .map_err(|reason| invalid_answer(&q.key, &reason))
}
