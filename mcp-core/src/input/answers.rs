//! [`Answers`] and [`Elicited`]: what the client said.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::McpError;
use crate::lowlevel::round::invalid_answer;
use crate::types::{CreateMessageResult, ElicitResult, ListRootsResult, Root};

/// The user's response to a form.
#[derive(Debug, Clone, PartialEq)]
pub enum Elicited<T> {
    /// The user filled in the form.
    Accepted(T),
    /// The user said no.
    Declined,
    /// The user dismissed the form without choosing.
    Cancelled,
}

impl<T> Elicited<T> {
    /// The form when accepted.
    pub fn accepted(self) -> Option<T> {
        match self {
            Self::Accepted(form) => Some(form),
            _ => None,
        }
    }

    /// True when the user filled in the form.
    pub fn is_accepted(&self) -> bool {
        matches!(self, Self::Accepted(_))
    }
}

/// The answers to one round of [`Questions`](super::Questions), by key. Every answer was
/// checked against its question's shape before the handler sees it.
#[derive(Debug, Clone, Default)]
pub struct Answers {
    pub(crate) map: BTreeMap<String, Value>,
}

impl Answers {
    /// The form answered under `key`, decoded into `T`.
    pub fn elicited<T: DeserializeOwned>(&self, key: &str) -> Result<Elicited<T>, McpError> {
        let result: ElicitResult = self.decode(key)?;
        match result.action.as_str() {
            "accept" => {
                let content = Value::Object(result.content.unwrap_or_default());
                serde_json::from_value(content)
                    .map(Elicited::Accepted)
                    .map_err(|e| invalid_answer(key, &e.to_string()))
            }
            "decline" => Ok(Elicited::Declined),
            _ => Ok(Elicited::Cancelled),
        }
    }

    /// The user's answer to the URL-mode elicitation under `key`: [`Elicited::Accepted`] means
    /// the user agreed to open the URL (not that the interaction there is done).
    pub fn url_elicited(&self, key: &str) -> Result<Elicited<()>, McpError> {
        let result: ElicitResult = self.decode(key)?;
        Ok(match result.action.as_str() {
            "accept" => Elicited::Accepted(()),
            "decline" => Elicited::Declined,
            _ => Elicited::Cancelled,
        })
    }

    /// The model's completion answered under `key`.
    pub fn sampled(&self, key: &str) -> Result<CreateMessageResult, McpError> {
        self.decode(key)
    }

    /// The roots answered under `key`.
    pub fn roots(&self, key: &str) -> Result<Vec<Root>, McpError> {
        Ok(self.decode::<ListRootsResult>(key)?.roots)
    }

    /// The raw result answered under `key`.
    pub fn raw(&self, key: &str) -> Option<&Value> {
        self.map.get(key)
    }

    fn decode<T: DeserializeOwned>(&self, key: &str) -> Result<T, McpError> {
        let value = self
            .map
            .get(key)
            .ok_or_else(|| McpError::internal(format!("no question was asked under `{key}`")))?;
        T::deserialize(value).map_err(|e| invalid_answer(key, &e.to_string()))
    }
}
