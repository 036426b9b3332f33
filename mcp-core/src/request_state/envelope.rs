//! What a sealed `requestState` holds, and the checks made when it comes back.

use std::collections::BTreeMap;
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The request a state was issued for: method, target (tool or prompt name, resource URI) and
/// a digest of the arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Binding {
    #[serde(rename = "m")]
    pub(crate) method: String,
    #[serde(rename = "t")]
    pub(crate) target: String,
    #[serde(rename = "a")]
    pub(crate) arguments: String,
    /// A digest of the principal's identity, on a protected endpoint.
    #[serde(rename = "p", default, skip_serializing_if = "Option::is_none")]
    pub(crate) caller: Option<String>,
}

/// An answer kept for later rounds, with the digest of the question it answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Answer {
    #[serde(rename = "q", default, skip_serializing_if = "Option::is_none")]
    pub(crate) question: Option<String>,
    #[serde(rename = "r")]
    pub(crate) value: Value,
}

/// The plaintext of a sealed state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Envelope {
    #[serde(flatten)]
    pub(crate) binding: Binding,
    /// Unix seconds after which the state is refused.
    #[serde(rename = "e")]
    pub(crate) expires: u64,
    /// The questions of the round that issued this state: key -> digest of `{method, params}`.
    #[serde(rename = "q", default)]
    pub(crate) asked: BTreeMap<String, String>,
    /// Answers from earlier rounds.
    #[serde(rename = "k", default)]
    pub(crate) answers: BTreeMap<String, Answer>,
    /// The handler's own state string.
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub(crate) state: Option<String>,
}

impl Envelope {
    /// Refuses an expired state or one issued for another request.
    pub(crate) fn check(&self, binding: &Binding, now: u64) -> Result<(), OpenError> {
        if now > self.expires {
            return Err(OpenError::Expired {
                seconds_ago: now - self.expires,
            });
        }
        if self.binding.method != binding.method {
            return Err(OpenError::OtherRequest("method"));
        }
        if self.binding.target != binding.target {
            return Err(OpenError::OtherRequest("tool, prompt or resource"));
        }
        if self.binding.arguments != binding.arguments {
            return Err(OpenError::OtherRequest("arguments"));
        }
        if self.binding.caller != binding.caller {
            return Err(OpenError::OtherRequest("caller"));
        }
        Ok(())
    }
}

/// Why a state was refused (logged; the wire always shows the same message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OpenError {
    /// Not a state this SDK sealed (prefix, base64 or length).
    Malformed,
    /// Sealed with a key that is not in the ring (rotated out, or another deployment).
    UnknownKey(String),
    /// The authentication tag does not match: the state was changed.
    Tampered,
    /// Past its TTL.
    Expired { seconds_ago: u64 },
    /// Issued for a different request; names what differs.
    OtherRequest(&'static str),
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Malformed => {
                f.write_str("not a sealed requestState (bad prefix, encoding or length)")
            }
            Self::UnknownKey(id) => write!(f, "sealed with key {id}, which is not in the key ring"),
            Self::Tampered => f.write_str("authentication failed: the state was altered"),
            Self::Expired { seconds_ago } => write!(f, "expired {seconds_ago} s ago"),
            Self::OtherRequest(what) => write!(f, "issued for a request with another {what}"),
        }
    }
}

/// Seconds since the Unix epoch.
pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
