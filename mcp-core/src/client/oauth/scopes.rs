//! Which scopes to ask for (MCP "Scope Selection Strategy", SEP-2207 for `offline_access`).

/// The scope the client asks for on a `401`: the challenge's `scope` when it names one, else
/// the PRM's `scopes_supported`, else nothing (the `scope` parameter is left out); in every case
/// after the scopes asked for before, so that a new login never loses them.
pub(crate) fn select(
    challenged: Option<&str>,
    scopes_supported: Option<&[String]>,
    previous: &[String],
) -> Vec<String> {
    let from_challenge: Vec<String> = split(challenged.unwrap_or(""));
    let base = if !from_challenge.is_empty() {
        from_challenge
    } else {
        scopes_supported.map(<[String]>::to_vec).unwrap_or_default()
    };
    union(previous, &base)
}

/// The scope for a step-up after `403 insufficient_scope`: the union of `previous` and the
/// challenged scopes; `None` when the challenge names nothing new (asking again would end the
/// same way).
pub(crate) fn step_up(previous: &[String], challenged: Option<&str>) -> Option<Vec<String>> {
    let all = union(previous, &split(challenged.unwrap_or("")));
    (all.len() > previous.len()).then_some(all)
}

/// `scopes` plus `offline_access` when the client wants refresh tokens, the authorization
/// server lists `offline_access` in its `scopes_supported`, and there is a scope to add it to
/// (SEP-2207).
pub(crate) fn with_offline_access(
    scopes: &[String],
    as_supported: Option<&[String]>,
    wanted: bool,
) -> Vec<String> {
    let mut out = scopes.to_vec();
    let supported = as_supported.is_some_and(|s| s.iter().any(|x| x == OFFLINE_ACCESS));
    if wanted && supported && !out.is_empty() && !out.iter().any(|x| x == OFFLINE_ACCESS) {
        out.push(OFFLINE_ACCESS.to_owned());
    }
    out
}

const OFFLINE_ACCESS: &str = "offline_access";

fn split(scope: &str) -> Vec<String> {
    scope.split_whitespace().map(str::to_owned).collect()
}

/// `a` then the members of `b` not in `a`, without duplicates.
fn union(a: &[String], b: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(a.len() + b.len());
    for s in a.iter().chain(b) {
        if !out.contains(s) {
            out.push(s.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn selection_order() {
        let supported = v(&["mcp:profile"]);
        assert_eq!(
            select(Some("mcp:basic"), Some(&supported), &[]),
            v(&["mcp:basic"])
        );
        assert_eq!(
            select(Some("  "), Some(&supported), &[]),
            v(&["mcp:profile"])
        );
        assert_eq!(select(None, Some(&supported), &[]), v(&["mcp:profile"]));
        assert!(select(None, None, &[]).is_empty());
        assert!(select(None, Some(&[]), &[]).is_empty());
        assert_eq!(
            select(Some("b c"), None, &v(&["a", "b"])),
            v(&["a", "b", "c"])
        );
    }

    #[test]
    fn step_up_needs_something_new() {
        assert_eq!(
            step_up(&v(&["mcp:basic"]), Some("mcp:write")),
            Some(v(&["mcp:basic", "mcp:write"]))
        );
        assert_eq!(step_up(&v(&["mcp:admin"]), Some("mcp:admin")), None);
        assert_eq!(step_up(&v(&["a", "b"]), Some("b a")), None);
        assert_eq!(step_up(&v(&["a"]), None), None);
        assert_eq!(step_up(&[], Some("x")), Some(v(&["x"])));
    }

    #[test]
    fn offline_access_only_where_listed() {
        let as_scopes = v(&["mcp:basic", "offline_access"]);
        assert_eq!(
            with_offline_access(&v(&["mcp:basic"]), Some(&as_scopes), true),
            v(&["mcp:basic", "offline_access"])
        );
        assert_eq!(
            with_offline_access(&v(&["mcp:basic"]), Some(&as_scopes), false),
            v(&["mcp:basic"])
        );
        let without = v(&["mcp:basic", "mcp:read"]);
        assert_eq!(
            with_offline_access(&v(&["mcp:basic"]), Some(&without), true),
            v(&["mcp:basic"])
        );
        assert_eq!(
            with_offline_access(&v(&["mcp:basic"]), None, true),
            v(&["mcp:basic"])
        );
        assert!(with_offline_access(&[], Some(&as_scopes), true).is_empty());
        assert_eq!(
            with_offline_access(&v(&["offline_access"]), Some(&as_scopes), true),
            v(&["offline_access"])
        );
    }
}
