//! Reading the claims that JWT payloads (RFC 7519 §4.1) and introspection answers (RFC 7662
//! §2.2) share, and building the [`Principal`] from them.
//!
//! Claim values can come from anyone who can send a token, so a reason that quotes one goes
//! through [`quoted`]: escaped and cut short.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use super::{Principal, VerifyError};

/// The longest token looked at (64 KiB); anything longer is refused unread.
pub(super) const MAX_TOKEN: usize = 64 * 1024;

/// Seconds since the Unix epoch, now.
pub(super) fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// A claim value for a log line: debug-escaped and at most 80 characters.
pub(super) fn quoted(text: &str) -> String {
    const MAX: usize = 80;
    match text.char_indices().nth(MAX) {
        Some((end, _)) => format!("{:?}...", &text[..end]),
        None => format!("{text:?}"),
    }
}

/// A NumericDate claim (`exp`, `nbf`, `iat`): `None` when absent; refused when present but not
/// a finite number.
pub(super) fn numeric_date(
    claims: &Map<String, Value>,
    name: &str,
) -> Result<Option<f64>, VerifyError> {
    match claims.get(name) {
        None => Ok(None),
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|v| v.is_finite())
            .map(Some)
            .ok_or_else(|| VerifyError::invalid(format!("`{name}` is not a usable number"))),
        Some(_) => Err(VerifyError::invalid(format!("`{name}` is not a number"))),
    }
}

/// `secs` after the Unix epoch, when that is a representable time.
pub(super) fn system_time(secs: f64) -> Option<SystemTime> {
    if secs < 0.0 {
        return None;
    }
    Duration::try_from_secs_f64(secs)
        .ok()
        .and_then(|d| UNIX_EPOCH.checked_add(d))
}

/// A string claim: `None` when absent; refused when present but not a string.
pub(super) fn string(
    claims: &Map<String, Value>,
    name: &str,
) -> Result<Option<String>, VerifyError> {
    match claims.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(VerifyError::invalid(format!("`{name}` is not a string"))),
    }
}

/// A claim that is one string or an array of strings (`aud`, `scp`); `None` when absent.
pub(super) fn string_or_list(
    claims: &Map<String, Value>,
    name: &str,
) -> Result<Option<Vec<String>>, VerifyError> {
    let not_strings =
        || VerifyError::invalid(format!("`{name}` is not a string or an array of strings"));
    match claims.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(vec![s.clone()])),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(str::to_owned).ok_or_else(not_strings))
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(not_strings()),
    }
}

/// The granted scopes: `scope` (a space-separated string, RFC 8693 §4.2 / RFC 7662), else
/// `scp` (an array, or a space-separated string, as some issuers write it).
pub(super) fn scopes(claims: &Map<String, Value>) -> Result<Vec<String>, VerifyError> {
    for name in ["scope", "scp"] {
        if let Some(list) = string_or_list(claims, name)? {
            return Ok(list
                .iter()
                .flat_map(|s| s.split_whitespace())
                .map(str::to_owned)
                .collect());
        }
    }
    Ok(Vec::new())
}

/// Checks that `audiences` (the token's `aud`, `None` when it has none) names one of
/// `accepted`. A missing `aud` passes only when `optional`.
pub(super) fn check_audience(
    audiences: Option<&[String]>,
    accepted: &[String],
    optional: bool,
) -> Result<(), VerifyError> {
    match audiences {
        None if optional => Ok(()),
        None => Err(VerifyError::invalid("the token names no audience (`aud`)")),
        Some(list) if list.iter().any(|a| accepted.contains(a)) => Ok(()),
        Some(list) => Err(VerifyError::invalid(format!(
            "the token is for {}, not for this resource",
            match list {
                [] => "no audience".to_owned(),
                [one] => quoted(one),
                [first, ..] => format!("{} and {} more", quoted(first), list.len() - 1),
            }
        ))),
    }
}

/// The principal of verified `claims`: `sub`, `iss`, `client_id` (or `azp`), the scopes, `aud`
/// and `exp`, with every claim kept.
pub(super) fn principal(
    claims: Map<String, Value>,
    audiences: Option<Vec<String>>,
    expires: Option<f64>,
) -> Result<Principal, VerifyError> {
    let mut principal = match string(&claims, "sub")? {
        Some(subject) => Principal::new(subject),
        None => Principal::anonymous(),
    };
    if let Some(issuer) = string(&claims, "iss")? {
        principal = principal.issuer(issuer);
    }
    if let Some(client) = string(&claims, "client_id")?.or(string(&claims, "azp")?) {
        principal = principal.client_id(client);
    }
    if let Some(at) = expires.and_then(system_time) {
        principal = principal.expires_at(at);
    }
    Ok(principal
        .scopes(scopes(&claims)?)
        .audience(audiences.unwrap_or_default())
        .claims(claims))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn reads_scopes_audiences_and_dates() {
        let claims = map(json!({
            "sub": "alice", "azp": "app", "scp": ["a", "b c"], "aud": "x", "exp": 1.5e9
        }));
        let who = principal(claims.clone(), Some(vec!["x".into()]), Some(1.5e9)).unwrap();
        assert_eq!(who.subject(), Some("alice"));
        assert_eq!(who.client(), Some("app"));
        assert_eq!(who.granted_scopes(), ["a", "b", "c"]);
        assert_eq!(who.audiences(), ["x"]);
        assert_eq!(who.expiry(), system_time(1.5e9));
        let scope = map(json!({"scope": "read  write", "scp": ["ignored"]}));
        assert_eq!(scopes(&scope).unwrap(), ["read", "write"]);
        assert!(scopes(&map(json!({"scope": 5}))).is_err());
        assert!(string_or_list(&map(json!({"aud": ["a", 1]})), "aud").is_err());
        assert!(numeric_date(&map(json!({"exp": "soon"})), "exp").is_err());
        assert_eq!(numeric_date(&map(json!({})), "exp").unwrap(), None);
        assert_eq!(system_time(-1.0), None);
    }

    #[test]
    fn audiences_must_meet() {
        let accepted = ["https://mcp".to_owned()];
        assert!(check_audience(Some(&["https://mcp".into()]), &accepted, false).is_ok());
        assert!(check_audience(Some(&["other".into()]), &accepted, true).is_err());
        assert!(check_audience(None, &accepted, false).is_err());
        assert!(check_audience(None, &accepted, true).is_ok());
        assert_eq!(quoted(&"x".repeat(100)).len(), 80 + 2 + 3);
    }
}
