//! The engine's side of a 2026 multi-round-trip request: what a retry brings in
//! (`inputResponses`, `requestState`) and sealing the state of an `input_required` result.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::{echo_capped, McpError};
use crate::lowlevel::Params;
use crate::request_state::{digest_json, Answer, Binding, Envelope, Sealer};

/// The methods whose results may be `input_required`.
pub(crate) const INPUT_METHODS: &[&str] = &["tools/call", "prompts/get", "resources/read"];

/// The message every refused `requestState` gets, whatever the reason.
pub(crate) const INVALID_STATE: &str = "Invalid or expired requestState";

/// What one round of a request knows: answers (this round's and, when sealed, earlier ones'),
/// the handler's own state, and what sealing the next state needs.
#[derive(Debug, Default)]
pub(crate) struct Round {
    pub(crate) answers: BTreeMap<String, Answer>,
    pub(crate) state: Option<String>,
    binding: Option<Binding>,
    /// The params (sharing the request's text), kept to compute the binding only if a state
    /// has to be sealed.
    saved: Option<Params>,
    /// Who is asking (the principal's identity), bound into the state.
    caller: Option<String>,
}

impl Round {
    /// Reads a retry's `inputResponses` and `requestState` (opening the state when `sealer` is
    /// set). A request without either costs nothing more: the scan that found its `_meta` told.
    pub(crate) fn begin(
        method: &str,
        params: &Params,
        sealer: Option<&Sealer>,
        caller: Option<String>,
    ) -> Result<Self, McpError> {
        if !params.may_be_a_retry() {
            return Ok(Self {
                saved: sealer.map(|_| params.duplicate()),
                caller,
                ..Self::default()
            });
        }
        let value = params.to_value();
        let binding = binding(method, &value, caller.as_deref());
        let mut round = Self {
            caller,
            ..Self::default()
        };
        let mut asked: Option<BTreeMap<String, String>> = None;
        match (value.get("requestState"), sealer) {
            (None | Some(Value::Null), _) => {}
            (Some(Value::String(sealed)), Some(sealer)) => match sealer.open(sealed, &binding) {
                Ok(envelope) => {
                    round.answers = envelope.answers;
                    round.state = envelope.state;
                    asked = Some(envelope.asked);
                }
                Err(reason) => {
                    tracing::warn!(method, %reason, "requestState refused");
                    return Err(McpError::invalid_params(INVALID_STATE));
                }
            },
            (Some(Value::String(plain)), None) => round.state = Some(plain.clone()),
            (Some(_), _) => {
                tracing::warn!(method, "requestState refused: not a string");
                return Err(McpError::invalid_params(INVALID_STATE));
            }
        }
        match value.get("inputResponses") {
            None => {}
            Some(Value::Object(fresh)) => {
                for (key, answer) in fresh {
                    let question = match &asked {
                        // Only answers to what was asked; extra keys are ignored.
                        Some(asked) => match asked.get(key) {
                            Some(digest) => Some(digest.clone()),
                            None => continue,
                        },
                        None => None,
                    };
                    if !answer.is_object() {
                        return Err(invalid_answer(
                            key,
                            "expected an object (the client's result for that input request)",
                        ));
                    }
                    round.answers.insert(
                        key.clone(),
                        Answer {
                            question,
                            value: answer.clone(),
                        },
                    );
                }
            }
            Some(_) => {
                return Err(McpError::invalid_params(
                    "Invalid inputResponses: expected an object mapping each input request's key \
                     to the client's result",
                ))
            }
        }
        round.binding = sealer.map(|_| binding);
        Ok(round)
    }

    /// The answer under `key`, if it answers `question` (a digest; answers whose question is
    /// unknown, because no sealed state came back, are taken as they are).
    pub(crate) fn answer(&self, key: &str, question: &str) -> Option<&Value> {
        let answer = self.answers.get(key)?;
        match &answer.question {
            Some(asked) if asked != question => None,
            _ => Some(&answer.value),
        }
    }

    /// Seals the `requestState` of an `input_required` result: the handler's own state (if it
    /// set one), every answer so far, and a digest of each question now asked.
    pub(crate) fn seal(
        &self,
        sealer: &Sealer,
        method: &str,
        result: &mut Value,
    ) -> Result<(), McpError> {
        let Value::Object(map) = result else {
            return Ok(());
        };
        let binding = match (&self.binding, &self.saved) {
            (Some(binding), _) => binding.clone(),
            (None, Some(params)) => binding(method, &params.to_value(), self.caller.as_deref()),
            (None, None) => return Ok(()),
        };
        let asked = match map.get("inputRequests") {
            Some(Value::Object(requests)) => requests
                .iter()
                .map(|(key, request)| (key.clone(), digest_json(request)))
                .collect(),
            _ => BTreeMap::new(),
        };
        let state = match map.get("requestState") {
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        };
        // Only answers known to answer their question are carried into later rounds: an
        // answer sent without a state (so never checked against a question) counts for this
        // round only.
        let answers = self
            .answers
            .iter()
            .filter(|(_, a)| a.question.is_some())
            .map(|(k, a)| (k.clone(), a.clone()))
            .collect();
        let envelope = Envelope {
            binding,
            expires: 0,
            asked,
            answers,
            state,
        };
        map.insert("requestState".into(), Value::from(sealer.seal(envelope)?));
        Ok(())
    }
}

/// What a state is bound to: the method, the tool or prompt name (or the resource URI), a
/// digest of the arguments, and a digest of who asked (on a protected endpoint).
fn binding(method: &str, params: &Value, caller: Option<&str>) -> Binding {
    let target = match method {
        "resources/read" => params.get("uri"),
        _ => params.get("name"),
    };
    let target = match target {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => digest_json(&Value::Object(Default::default())),
        Some(args) => digest_json(args),
    };
    Binding {
        method: method.to_owned(),
        target,
        arguments,
        caller: caller.map(|c| digest_json(&Value::from(c))),
    }
}

/// `-32602 Invalid inputResponses: <key>: <reason>`.
pub(crate) fn invalid_answer(key: &str, reason: &str) -> McpError {
    McpError::invalid_params(format!(
        "Invalid inputResponses: `{}`: {}",
        echo_capped(key),
        echo_capped(reason)
    ))
}
