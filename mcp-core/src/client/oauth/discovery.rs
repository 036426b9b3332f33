//! Finding the authorization server of an MCP endpoint: Protected Resource Metadata (RFC 9728)
//! from the challenge's `resource_metadata` or the well-known URIs, the resource check, then
//! Authorization Server Metadata (RFC 8414 with path insertion, then OpenID Connect discovery),
//! with the 2025-03-26 fallbacks for servers that publish neither.

use crate::auth::{AuthorizationServerMetadata, BearerChallenge, ProtectedResourceMetadata};
use crate::error::McpError;
use crate::fetch::Fetch;

/// What discovery found for one MCP endpoint.
#[derive(Debug, Clone)]
pub(crate) struct Discovered {
    /// The resource identifier sent as `resource` (RFC 8707): the PRM `resource`, verbatim, or
    /// the endpoint itself when the server publishes no PRM.
    pub(crate) resource: String,
    /// The scopes the PRM lists (`scopes_supported`).
    pub(crate) scopes_supported: Option<Vec<String>>,
    /// The authorization server.
    pub(crate) server: AuthServer,
}

/// An authorization server: its issuer identifier and endpoints.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AuthServer {
    /// The issuer identifier (from the PRM; the endpoint's origin for 2025-03-26 servers).
    pub(crate) issuer: String,
    /// Its metadata; `None` for a 2025-03-26 server without any (default endpoints).
    pub(crate) metadata: Option<AuthorizationServerMetadata>,
    /// Where the user authorizes the client.
    pub(crate) authorization_endpoint: String,
    /// Where codes and refresh tokens are exchanged.
    pub(crate) token_endpoint: String,
    /// Dynamic Client Registration, when the server offers it.
    pub(crate) registration_endpoint: Option<String>,
}

impl AuthServer {
    /// The server's metadata, after the checks that make it usable: `issuer` equal to the
    /// identifier it was discovered for, PKCE `S256` supported.
    fn from_metadata(
        issuer: &str,
        metadata: AuthorizationServerMetadata,
    ) -> Result<Self, McpError> {
        if metadata.issuer != issuer {
            return Err(McpError::internal(format!(
                "the authorization server metadata of `{issuer}` names another issuer (`{}`); \
                 refusing to use it",
                metadata.issuer
            )));
        }
        let s256 = metadata
            .code_challenge_methods_supported
            .as_ref()
            .is_some_and(|methods| methods.iter().any(|m| m == "S256"));
        if !s256 {
            return Err(McpError::internal(format!(
                "the authorization server `{issuer}` does not support PKCE with S256 \
                 (`code_challenge_methods_supported`); refusing to use it"
            )));
        }
        let authorization_endpoint = metadata.authorization_endpoint.clone().ok_or_else(|| {
            McpError::internal(format!(
                "the authorization server `{issuer}` has no `authorization_endpoint`"
            ))
        })?;
        Ok(Self {
            issuer: issuer.to_owned(),
            authorization_endpoint,
            token_endpoint: metadata.token_endpoint.clone(),
            registration_endpoint: metadata.registration_endpoint.clone(),
            metadata: Some(metadata),
        })
    }

    /// The 2025-03-26 defaults for a server without metadata: `/authorize`, `/token` and
    /// `/register` at `origin`.
    fn defaults(origin: &str) -> Self {
        Self {
            issuer: origin.to_owned(),
            metadata: None,
            authorization_endpoint: format!("{origin}/authorize"),
            token_endpoint: format!("{origin}/token"),
            registration_endpoint: Some(format!("{origin}/register")),
        }
    }

    /// Whether the metadata says the authorization response carries `iss` (RFC 9207).
    pub(crate) fn iss_advertised(&self) -> bool {
        self.metadata
            .as_ref()
            .and_then(|m| m.authorization_response_iss_parameter_supported)
            .unwrap_or(false)
    }

    /// The metadata's `scopes_supported`.
    pub(crate) fn scopes_supported(&self) -> Option<&[String]> {
        self.metadata
            .as_ref()
            .and_then(|m| m.scopes_supported.as_deref())
    }
}

/// The parts of an absolute URL that discovery needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UrlParts<'a> {
    /// `http` or `https`, as written.
    pub(crate) scheme: &'a str,
    /// `host[:port]`, as written.
    pub(crate) authority: &'a str,
    /// The path, `""` when there is none.
    pub(crate) path: &'a str,
    /// Whether a `#fragment` follows.
    pub(crate) fragment: bool,
}

impl<'a> UrlParts<'a> {
    /// Splits `scheme://authority/path?query#fragment`; `None` without a scheme or host.
    pub(crate) fn parse(url: &'a str) -> Option<Self> {
        let (scheme, rest) = url.split_once("://")?;
        if scheme.is_empty()
            || !scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            return None;
        }
        let (before_fragment, fragment) = match rest.split_once('#') {
            Some((before, _)) => (before, true),
            None => (rest, false),
        };
        let without_query = before_fragment
            .split_once('?')
            .map_or(before_fragment, |(before, _)| before);
        let (authority, path) = match without_query.find('/') {
            Some(slash) => (&without_query[..slash], &without_query[slash..]),
            None => (without_query, ""),
        };
        if authority.is_empty() {
            return None;
        }
        Some(Self {
            scheme,
            authority,
            path,
            fragment,
        })
    }

    /// `scheme://authority`.
    pub(crate) fn origin(&self) -> String {
        format!("{}://{}", self.scheme, self.authority)
    }

    /// The scheme, lowercased, and the authority with the host lowercased and the default port
    /// of the scheme removed: what two URLs of the same origin share.
    fn normalized_origin(&self) -> (String, String) {
        let scheme = self.scheme.to_ascii_lowercase();
        let authority = self.authority.to_ascii_lowercase();
        let default = match scheme.as_str() {
            "http" => ":80",
            "https" => ":443",
            _ => "",
        };
        let authority = match authority.strip_suffix(default) {
            Some(host) if !default.is_empty() && !host.ends_with(':') => host.to_owned(),
            _ => authority,
        };
        (scheme, authority)
    }
}

/// Whether the PRM's `resource` may stand for the MCP `endpoint`: the same scheme, host and
/// port, no fragment, and a path that is the endpoint's path or one of its parent paths (so
/// `https://h` and `https://h/mcp` both stand for `https://h/mcp`, `https://h/mc` does not).
pub(crate) fn resource_matches(resource: &str, endpoint: &str) -> bool {
    let (Some(r), Some(e)) = (UrlParts::parse(resource), UrlParts::parse(endpoint)) else {
        return false;
    };
    if r.fragment || r.normalized_origin() != e.normalized_origin() {
        return false;
    }
    let resource_path = r.path.trim_end_matches('/');
    let endpoint_path = e.path.trim_end_matches('/');
    resource_path.is_empty()
        || endpoint_path == resource_path
        || endpoint_path
            .strip_prefix(resource_path)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Where to look for the Protected Resource Metadata of `endpoint`, in order: the challenge's
/// `resource_metadata` alone when it names one; else the path-inserted well-known URI, then the
/// root one.
pub(crate) fn prm_candidates(endpoint: &str, resource_metadata: Option<&str>) -> Vec<String> {
    if let Some(url) = resource_metadata {
        return vec![url.to_owned()];
    }
    let Some(parts) = UrlParts::parse(endpoint) else {
        return Vec::new();
    };
    let origin = parts.origin();
    let path = parts.path.trim_end_matches('/');
    let root = format!("{origin}/.well-known/oauth-protected-resource");
    if path.is_empty() {
        vec![root]
    } else {
        vec![format!("{root}{path}"), root]
    }
}

/// Where to look for the metadata of the authorization server `issuer`, in order (MCP
/// 2025-11-25 "Authorization Server Metadata Discovery"): for an issuer with a path `/p`,
/// `/.well-known/oauth-authorization-server/p`, `/.well-known/openid-configuration/p`,
/// `/p/.well-known/openid-configuration`; without a path, `/.well-known/oauth-authorization-server`
/// then `/.well-known/openid-configuration`. The root document is never tried for an issuer
/// with a path: it would describe another issuer.
pub(crate) fn as_metadata_candidates(issuer: &str) -> Vec<String> {
    let Some(parts) = UrlParts::parse(issuer) else {
        return Vec::new();
    };
    let origin = parts.origin();
    let path = parts.path.trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// Discovery for `endpoint` after a refusal carrying `challenge`.
///
/// - PRM: the challenge's `resource_metadata`, else the well-known URIs; a PRM whose `resource`
///   does not stand for the endpoint is refused before anything else happens.
/// - No PRM anywhere: the 2025-03-26 rules (the authorization server lives at the endpoint's
///   origin; default endpoints when it publishes no metadata).
pub(crate) async fn discover(
    fetch: &Fetch,
    endpoint: &str,
    challenge: Option<&BearerChallenge>,
) -> Result<Discovered, McpError> {
    let header = challenge.and_then(|c| c.resource_metadata.as_deref());
    match fetch_prm(fetch, endpoint, header).await? {
        Some(prm) => {
            if !resource_matches(&prm.resource, endpoint) {
                return Err(McpError::internal(format!(
                    "the protected resource metadata names the resource `{}`, which is not \
                     `{endpoint}`; refusing to authorize",
                    prm.resource
                )));
            }
            let issuer = prm.authorization_servers.first().ok_or_else(|| {
                McpError::internal(format!(
                    "the protected resource metadata of `{endpoint}` names no authorization server"
                ))
            })?;
            let metadata = fetch_as_metadata(fetch, issuer).await?.ok_or_else(|| {
                McpError::internal(format!(
                    "no authorization server metadata found for `{issuer}`"
                ))
            })?;
            let server = AuthServer::from_metadata(issuer, metadata)?;
            check_server(&server)?;
            Ok(Discovered {
                server,
                resource: prm.resource,
                scopes_supported: prm.scopes_supported,
            })
        }
        None => {
            let parts = UrlParts::parse(endpoint)
                .ok_or_else(|| McpError::invalid_params(format!("invalid URL `{endpoint}`")))?;
            let origin = parts.origin();
            tracing::debug!(%endpoint, "no protected resource metadata; 2025-03-26 discovery");
            let server = match fetch_as_metadata(fetch, &origin).await? {
                Some(metadata) => AuthServer::from_metadata(&origin, metadata)?,
                None => AuthServer::defaults(&origin),
            };
            check_server(&server)?;
            let resource = endpoint.split('#').next().unwrap_or(endpoint).to_owned();
            Ok(Discovered {
                resource,
                scopes_supported: None,
                server,
            })
        }
    }
}

/// Refuses a URL the client must not send people or credentials to: anything but `https://`,
/// except `http://` to this machine (loopback names and addresses), as OAuth 2.1 requires. A
/// malicious MCP server names its authorization server; without this, its "authorization
/// endpoint" could be a `file:` or custom-scheme URL handed to the system's URL opener.
pub(crate) fn check_secure_url(url: &str, what: &str) -> Result<(), McpError> {
    let refuse = || {
        McpError::internal(format!(
            "the {what} `{}` is neither https nor http on this machine; refusing to use it",
            crate::error::echo_capped(&url.escape_debug().to_string())
        ))
    };
    if url.chars().any(char::is_control) {
        return Err(refuse());
    }
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("https://") {
        return Ok(());
    }
    let Some(rest) = lower.strip_prefix("http://") else {
        return Err(refuse());
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Err(refuse());
    }
    let host = if authority.starts_with('[') {
        authority
            .split(']')
            .next()
            .map(|h| format!("{h}]"))
            .unwrap_or_default()
    } else {
        authority
            .rsplit_once(':')
            .map_or(authority, |(h, _)| h)
            .to_owned()
    };
    let loopback = host == "localhost"
        || host == "[::1]"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback());
    if loopback {
        Ok(())
    } else {
        Err(refuse())
    }
}

/// Every URL of `server` the client will use (see [`check_secure_url`]).
fn check_server(server: &AuthServer) -> Result<(), McpError> {
    check_secure_url(&server.issuer, "authorization server")?;
    check_secure_url(&server.authorization_endpoint, "authorization endpoint")?;
    check_secure_url(&server.token_endpoint, "token endpoint")?;
    if let Some(url) = &server.registration_endpoint {
        check_secure_url(url, "registration endpoint")?;
    }
    Ok(())
}

/// The first PRM document found (`None`: none of the candidates has one). A `resource_metadata`
/// URL that does not answer with a document is an error: the server said where it is.
async fn fetch_prm(
    fetch: &Fetch,
    endpoint: &str,
    header: Option<&str>,
) -> Result<Option<ProtectedResourceMetadata>, McpError> {
    if let Some(url) = header {
        check_secure_url(url, "resource metadata URL")?;
    }
    for url in prm_candidates(endpoint, header) {
        let fetched = match fetch.get(&url).await {
            Ok(fetched) => fetched,
            Err(e) if header.is_none() => {
                tracing::debug!(%url, error = %e.message(), "protected resource metadata");
                continue;
            }
            Err(e) => return Err(e),
        };
        if fetched.status.is_success() {
            tracing::debug!(%url, "protected resource metadata found");
            return fetched.json("protected resource metadata", &url).map(Some);
        }
        if header.is_some() {
            return Err(McpError::internal(format!(
                "the protected resource metadata at {url} answered {}",
                fetched.status
            )));
        }
        tracing::debug!(%url, status = %fetched.status, "no protected resource metadata here");
    }
    Ok(None)
}

/// The first authorization server metadata document found for `issuer` (`None`: none).
async fn fetch_as_metadata(
    fetch: &Fetch,
    issuer: &str,
) -> Result<Option<AuthorizationServerMetadata>, McpError> {
    let candidates = as_metadata_candidates(issuer);
    if candidates.is_empty() {
        return Err(McpError::internal(format!(
            "the authorization server `{issuer}` is not an absolute URL"
        )));
    }
    for url in candidates {
        let fetched = match fetch.get(&url).await {
            Ok(fetched) => fetched,
            Err(e) => {
                tracing::debug!(%url, error = %e.message(), "authorization server metadata");
                continue;
            }
        };
        if fetched.status.is_success() {
            tracing::debug!(%url, "authorization server metadata found");
            return fetched
                .json("authorization server metadata", &url)
                .map(Some);
        }
        tracing::debug!(%url, status = %fetched.status, "no authorization server metadata here");
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_https_or_loopback_http_is_used() {
        for ok in [
            "https://auth.example.com/authorize",
            "http://127.0.0.1:8080/token",
            "http://localhost/authorize",
            "http://[::1]:9000/x",
            "HTTPS://Auth.Example.com",
        ] {
            assert!(check_secure_url(ok, "endpoint").is_ok(), "{ok}");
        }
        for bad in [
            "http://auth.example.com/authorize",
            "file:///etc/passwd",
            "ms-msdt:/id PCWDiagnostic",
            "http://127.0.0.1@evil.example.com/",
            "https://auth.example.com/\u{1b}[2J",
            "javascript:alert(1)",
        ] {
            assert!(check_secure_url(bad, "endpoint").is_err(), "{bad:?}");
        }
    }

    use super::*;

    #[test]
    fn prm_order() {
        assert_eq!(
            prm_candidates("http://h:1/mcp", None),
            [
                "http://h:1/.well-known/oauth-protected-resource/mcp",
                "http://h:1/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            prm_candidates("http://h:1/", None),
            ["http://h:1/.well-known/oauth-protected-resource"]
        );
        assert_eq!(
            prm_candidates("http://h/a/b?x=1", None),
            [
                "http://h/.well-known/oauth-protected-resource/a/b",
                "http://h/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            prm_candidates("http://h/mcp", Some("http://h/custom.json")),
            ["http://h/custom.json"]
        );
    }

    #[test]
    fn as_metadata_order() {
        assert_eq!(
            as_metadata_candidates("http://a:2"),
            [
                "http://a:2/.well-known/oauth-authorization-server",
                "http://a:2/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            as_metadata_candidates("http://a:2/"),
            as_metadata_candidates("http://a:2")
        );
        assert_eq!(
            as_metadata_candidates("http://a:2/tenant1"),
            [
                "http://a:2/.well-known/oauth-authorization-server/tenant1",
                "http://a:2/.well-known/openid-configuration/tenant1",
                "http://a:2/tenant1/.well-known/openid-configuration"
            ]
        );
        assert!(as_metadata_candidates("not a url").is_empty());
    }

    #[test]
    fn resource_rules() {
        let endpoint = "http://localhost:9/mcp";
        assert!(resource_matches("http://localhost:9/mcp", endpoint));
        assert!(resource_matches("http://localhost:9", endpoint));
        assert!(resource_matches("http://localhost:9/", endpoint));
        assert!(resource_matches("HTTP://LOCALHOST:9/mcp", endpoint));
        assert!(resource_matches("https://h/mcp", "https://h:443/mcp"));
        assert!(!resource_matches("https://evil.example.com/mcp", endpoint));
        assert!(!resource_matches("http://localhost:8/mcp", endpoint));
        assert!(!resource_matches("https://localhost:9/mcp", endpoint));
        assert!(!resource_matches("http://localhost:9/mc", endpoint));
        assert!(!resource_matches("http://localhost:9/mcp/x", endpoint));
        assert!(!resource_matches("http://localhost:9/mcp#f", endpoint));
        assert!(!resource_matches("localhost:9/mcp", endpoint));
    }

    fn metadata(issuer: &str) -> AuthorizationServerMetadata {
        AuthorizationServerMetadata {
            issuer: issuer.to_owned(),
            authorization_endpoint: Some(format!("{issuer}/authorize")),
            token_endpoint: format!("{issuer}/token"),
            code_challenge_methods_supported: Some(vec!["S256".into()]),
            ..Default::default()
        }
    }

    #[test]
    fn metadata_checks() {
        let server = AuthServer::from_metadata("http://a", metadata("http://a")).unwrap();
        assert_eq!(server.token_endpoint, "http://a/token");
        assert!(!server.iss_advertised());
        // The issuer must be exactly the one discovery started from.
        assert!(
            AuthServer::from_metadata("http://a", metadata("https://attacker.example.com"))
                .is_err()
        );
        assert!(AuthServer::from_metadata("http://a", metadata("http://a/")).is_err());
        let mut plain = metadata("http://a");
        plain.code_challenge_methods_supported = Some(vec!["plain".into()]);
        assert!(AuthServer::from_metadata("http://a", plain).is_err());
        let mut silent = metadata("http://a");
        silent.code_challenge_methods_supported = None;
        assert!(AuthServer::from_metadata("http://a", silent).is_err());
    }
}
