//! `WWW-Authenticate: Bearer ...` challenges (RFC 6750 §3, RFC 9728 §5.1): written by the
//! resource server, read by the OAuth client.

use std::fmt;

/// A `Bearer` challenge: what a 401 or 403 tells the client to do.
///
/// ```
/// use modelctx_core::auth::BearerChallenge;
///
/// let header = BearerChallenge::default()
///     .resource_metadata("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
///     .error("insufficient_scope")
///     .scope("books:read books:write")
///     .to_string();
/// assert_eq!(
///     header,
///     "Bearer resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\", \
///      error=\"insufficient_scope\", scope=\"books:read books:write\""
/// );
/// let parsed = BearerChallenge::parse(&header).unwrap();
/// assert_eq!(parsed.scope.as_deref(), Some("books:read books:write"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BearerChallenge {
    /// The Protected Resource Metadata URL (RFC 9728).
    pub resource_metadata: Option<String>,
    /// `invalid_request`, `invalid_token` or `insufficient_scope` (RFC 6750 §3.1).
    pub error: Option<String>,
    /// The scopes to ask for, space-separated.
    pub scope: Option<String>,
    /// A human-readable reason.
    pub error_description: Option<String>,
    /// The protection space.
    pub realm: Option<String>,
}

impl BearerChallenge {
    /// Sets `resource_metadata`.
    pub fn resource_metadata(mut self, url: impl Into<String>) -> Self {
        self.resource_metadata = Some(url.into());
        self
    }

    /// Sets `error`.
    pub fn error(mut self, error: impl Into<String>) -> Self {
        self.error = Some(error.into());
        self
    }

    /// Sets `scope` (space-separated).
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// Sets `error_description`.
    pub fn error_description(mut self, description: impl Into<String>) -> Self {
        self.error_description = Some(description.into());
        self
    }

    /// Reads the `Bearer` challenge of a `WWW-Authenticate` value (other schemes in the same
    /// header are skipped). `None` when there is no `Bearer` challenge.
    pub fn parse(header: &str) -> Option<Self> {
        let params = bearer_params(header)?;
        let mut challenge = Self::default();
        for (name, value) in params {
            let slot = match name.to_ascii_lowercase().as_str() {
                "resource_metadata" => &mut challenge.resource_metadata,
                "error" => &mut challenge.error,
                "scope" => &mut challenge.scope,
                "error_description" => &mut challenge.error_description,
                "realm" => &mut challenge.realm,
                _ => continue,
            };
            slot.get_or_insert(value);
        }
        Some(challenge)
    }
}

impl fmt::Display for BearerChallenge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Bearer")?;
        let fields = [
            ("realm", &self.realm),
            ("resource_metadata", &self.resource_metadata),
            ("error", &self.error),
            ("scope", &self.scope),
            ("error_description", &self.error_description),
        ];
        let mut first = true;
        for (name, value) in fields {
            let Some(value) = value else { continue };
            f.write_str(if first { " " } else { ", " })?;
            first = false;
            write!(f, "{name}=\"")?;
            for c in value.chars() {
                // quoted-string: escape quote and backslash, drop control characters.
                match c {
                    '"' | '\\' => write!(f, "\\{c}")?,
                    c if c.is_control() => {}
                    c => write!(f, "{c}")?,
                }
            }
            f.write_str("\"")?;
        }
        Ok(())
    }
}

/// The auth-params of the first `Bearer` challenge in `header`.
fn bearer_params(header: &str) -> Option<Vec<(String, String)>> {
    let mut rest = header;
    loop {
        let trimmed = rest.trim_start_matches([' ', ',']);
        let scheme_end = trimmed.find([' ', ',']).unwrap_or(trimmed.len());
        let scheme = &trimmed[..scheme_end];
        if scheme.is_empty() {
            return None;
        }
        let (params, after) = read_params(&trimmed[scheme_end..]);
        if scheme.eq_ignore_ascii_case("bearer") {
            return Some(params);
        }
        rest = after;
    }
}

/// Reads `name=value` pairs (tokens or quoted strings) until the next challenge's scheme.
fn read_params(mut rest: &str) -> (Vec<(String, String)>, &str) {
    let mut params = Vec::new();
    loop {
        let trimmed = rest.trim_start_matches([' ', ',', '\t']);
        let Some(eq) = trimmed.find('=') else {
            return (params, trimmed);
        };
        let name = trimmed[..eq].trim();
        if name.is_empty() || name.contains([' ', ',']) {
            // A new scheme starts here.
            return (params, trimmed);
        }
        let value_start = trimmed[eq + 1..].trim_start();
        let (value, after) = if let Some(quoted) = value_start.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            value.push(escaped);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            (value, &quoted[end.min(quoted.len())..])
        } else {
            let end = value_start.find([',', ' ']).unwrap_or(value_start.len());
            (value_start[..end].to_owned(), &value_start[end..])
        };
        params.push((name.to_owned(), value));
        rest = after;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_challenges_among_others() {
        let h = r#"Basic realm="x", Bearer error="invalid_token", scope="a b", resource_metadata="http://h/.well-known/oauth-protected-resource""#;
        let c = BearerChallenge::parse(h).unwrap();
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(c.scope.as_deref(), Some("a b"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://h/.well-known/oauth-protected-resource")
        );
        let bare = BearerChallenge::parse("Bearer").unwrap();
        assert_eq!(bare, BearerChallenge::default());
        let token = BearerChallenge::parse("Bearer error=invalid_token, scope=\"x\\\"y\"").unwrap();
        assert_eq!(token.error.as_deref(), Some("invalid_token"));
        assert_eq!(token.scope.as_deref(), Some("x\"y"));
        assert!(BearerChallenge::parse("Basic realm=\"x\"").is_none());
    }
}
