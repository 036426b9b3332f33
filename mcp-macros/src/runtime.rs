//! The path of the runtime crate in generated code.
//!
//! Generated code names the runtime (`modelctx`) by path. Three places decide the path, first
//! match wins:
//! 1. `crate = "path"` on the attribute (`#[tool(crate = "my::reexport")]`), as serde does;
//!    the path is used as written, so a re-export in scope works;
//! 2. the key under which the user's `Cargo.toml` renames the package
//!    (`rt = { package = "modelctx", .. }` gives `::rt`);
//! 3. `::modelctx`.
//!
//! Quote code writes `#RT::server::ToolDef`: [`RT`] prints the path chosen for the macro call
//! being expanded.

use std::cell::RefCell;

use proc_macro2::{TokenStream, TokenTree};
use quote::{quote, ToTokens};

/// The package name of the runtime crate on crates.io.
const PACKAGE: &str = "modelctx";

/// Prints the runtime's path in `quote!`: `#RT::server::ToolDef`.
pub(crate) const RT: Runtime = Runtime;

/// The error for `crate = ..` on a method of a `#[tools]` block (free functions have the key
/// taken out before their attribute is parsed, so a parser that meets it is on a method).
pub(crate) const CRATE_ON_A_METHOD: &str =
    "in a #[tools] impl block, `crate = \"..\"` goes on #[tools], for every method at once";

/// See [`RT`].
pub(crate) struct Runtime;

thread_local! {
    /// The path for the macro call being expanded (set by [`Scope::enter`]).
    static CURRENT: RefCell<Option<TokenStream>> = const { RefCell::new(None) };
}

impl ToTokens for Runtime {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let path = CURRENT
            .with(|c| c.borrow().clone())
            .unwrap_or_else(default_path);
        tokens.extend(path);
    }
}

/// The runtime's path with every token at `span`, for `quote_spanned!` code whose errors
/// must point at the user's token rather than at the attribute.
pub(crate) fn at(span: proc_macro2::Span) -> TokenStream {
    RT.to_token_stream()
        .into_iter()
        .map(|mut token| {
            token.set_span(span);
            token
        })
        .collect()
}

/// While alive, [`RT`] prints the path chosen for one macro call; dropped at the end of the
/// call, so the next call (in the same compiler thread) decides again.
pub(crate) struct Scope {
    previous: Option<TokenStream>,
}

impl Scope {
    /// Takes a `crate = "path"` key out of the attribute's arguments and sets the path for
    /// this call. Gives back the other arguments, and the mistakes in the key (not a string,
    /// not a path, given twice), each on the user's tokens.
    pub(crate) fn enter(args: TokenStream) -> (Scope, TokenStream, Vec<syn::Error>) {
        let (rest, chosen, mut errors) = take_crate_key(args);
        let path = match chosen.map(|lit| (lit.parse::<syn::Path>(), lit)) {
            None => default_path(),
            Some((Ok(path), _)) => path.into_token_stream(),
            Some((Err(_), lit)) => {
                errors.push(syn::Error::new(
                    lit.span(),
                    format!(
                        "`crate` takes the path of the `{PACKAGE}` crate, e.g. crate = \"::{PACKAGE}\" or crate = \"my_reexport\""
                    ),
                ));
                default_path()
            }
        };
        let previous = CURRENT.with(|c| c.borrow_mut().replace(path));
        (Scope { previous }, rest, errors)
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

/// Removes the `crate = ..` entry (up to the next top-level comma) from an attribute's
/// arguments: its string, and errors for a value that is not one string or a second `crate`.
fn take_crate_key(args: TokenStream) -> (TokenStream, Option<syn::LitStr>, Vec<syn::Error>) {
    // The arguments split at top-level commas (a group's commas are inside its one token).
    let mut entries: Vec<Vec<TokenTree>> = vec![Vec::new()];
    for token in args.clone() {
        match &token {
            TokenTree::Punct(p) if p.as_char() == ',' => entries.push(Vec::new()),
            _ => {
                if let Some(entry) = entries.last_mut() {
                    entry.push(token);
                }
            }
        }
    }
    let is_key = |entry: &[TokenTree]| {
        matches!(entry.first(), Some(TokenTree::Ident(id)) if id == "crate")
            && matches!(entry.get(1), Some(TokenTree::Punct(p)) if p.as_char() == '=')
    };
    if !entries.iter().any(|entry| is_key(entry)) {
        // Nothing to take: the arguments go on exactly as written.
        return (args, None, Vec::new());
    }
    let mut rest = TokenStream::new();
    let (mut chosen, mut errors) = (None, Vec::new());
    for entry in entries.into_iter().filter(|entry| !entry.is_empty()) {
        if !is_key(&entry) {
            if !rest.is_empty() {
                rest.extend(quote!(,));
            }
            rest.extend(entry);
            continue;
        }
        let value: TokenStream = entry[2..].iter().cloned().collect();
        match syn::parse2::<syn::LitStr>(value.clone()) {
            Ok(_) if chosen.is_some() => {
                errors.push(syn::Error::new_spanned(&entry[0], "`crate` is given twice"))
            }
            Ok(lit) => chosen = Some(lit),
            Err(_) => errors.push(syn::Error::new_spanned(
                if value.is_empty() {
                    entry[1].to_token_stream()
                } else {
                    value
                },
                "`crate` takes a string: crate = \"path::to::modelctx\"",
            )),
        }
    }
    (rest, chosen, errors)
}

/// `::key` for the dependency key that renames the package in the manifest of the crate
/// being compiled, else `::modelctx`.
fn default_path() -> TokenStream {
    let key = std::env::var_os("CARGO_MANIFEST_DIR")
        .and_then(|dir| crate::source_files::read(&std::path::Path::new(&dir).join("Cargo.toml")))
        .and_then(|manifest| renamed_key(&manifest));
    let ident = key
        .and_then(|key| syn::parse_str::<syn::Ident>(&key.replace('-', "_")).ok())
        .unwrap_or_else(|| syn::Ident::new(PACKAGE, proc_macro2::Span::call_site()));
    quote!(::#ident)
}

/// The key of a dependency on the runtime package under another name, read from a manifest's
/// dependency tables (`[dependencies]`, `[dev-dependencies]`, `[build-dependencies]`, their
/// `[target.'..'.*]` forms, and `[dependencies.key]` tables). Cargo's own name rules keep the
/// keys simple, so a line reader is enough; a workspace-inherited rename
/// (`key = { workspace = true }`) is not followed: write `crate = "::key"` there.
fn renamed_key(manifest: &str) -> Option<String> {
    // The table being read: a dependency list, or one dependency's own table.
    enum Table {
        Other,
        List,
        One(String),
    }
    let mut table = Table::Other;
    for line in manifest.lines() {
        let line = without_comment(line).trim();
        if let Some(header) = line.strip_prefix('[') {
            let header = header.trim_start_matches('[').trim_end_matches(']').trim();
            let parts: Vec<&str> = header.split('.').map(|p| unquote(p.trim())).collect();
            let is_list = |s: &str| {
                matches!(
                    s,
                    "dependencies" | "dev-dependencies" | "build-dependencies"
                )
            };
            // The package's own tables only: `[dependencies]`, `[dependencies.key]`, and
            // `[target.'cfg(..)'.dependencies]` (whose middle part may hold dots itself), not
            // `[workspace.dependencies]` or `[package.metadata.*.dependencies]`.
            let own = parts
                .first()
                .is_some_and(|first| is_list(first) || *first == "target");
            table = match parts.as_slice() {
                [.., last] if own && is_list(last) => Table::List,
                [.., list, key] if own && is_list(list) => Table::One((*key).to_owned()),
                _ => Table::Other,
            };
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (key, value) = (unquote(key.trim()), value.trim());
        match &table {
            Table::List if names_package(value) => return Some(key.to_owned()),
            Table::One(dep) if key == "package" && unquote(value) == PACKAGE => {
                return Some(dep.clone())
            }
            _ => {}
        }
    }
    None
}

/// Whether an inline table (`{ package = "modelctx", version = ".." }`) names the package.
fn names_package(value: &str) -> bool {
    let Some(inner) = value.strip_prefix('{') else {
        return false;
    };
    inner.trim_end_matches('}').split(',').any(|pair| {
        pair.split_once('=')
            .is_some_and(|(k, v)| unquote(k.trim()) == "package" && unquote(v.trim()) == PACKAGE)
    })
}

/// The line up to a `#` that is not inside a string.
fn without_comment(line: &str) -> &str {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '#') => return &line[..i],
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
    }
    line
}

fn unquote(s: &str) -> &str {
    s.trim_matches(|c| c == '"' || c == '\'')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plain_dependency_is_not_a_rename() {
        assert_eq!(renamed_key("[dependencies]\nmodelctx = \"0.1\"\n"), None);
        assert_eq!(
            renamed_key("[dependencies]\nmodelctx = { version = \"0.1\" }\n"),
            None
        );
    }

    #[test]
    fn an_inline_rename_gives_its_key() {
        let manifest = "[package]\nname = \"app\"\n\n[dependencies]\nserde = \"1\"\nmcp-rt = { version = \"0.1\", package = \"modelctx\" } # renamed\n";
        assert_eq!(renamed_key(manifest).as_deref(), Some("mcp-rt"));
    }

    #[test]
    fn a_table_rename_gives_its_key() {
        let manifest =
            "[target.'cfg(unix)'.dependencies.rt]\nversion = \"0.1\"\npackage = \"modelctx\"\n";
        assert_eq!(renamed_key(manifest).as_deref(), Some("rt"));
        let manifest = "[dev-dependencies]\nsdk = { path = \"..\", package = 'modelctx' }\n";
        assert_eq!(renamed_key(manifest).as_deref(), Some("sdk"));
    }

    #[test]
    fn workspace_and_metadata_tables_are_not_the_packages_own() {
        let manifest = "[workspace.dependencies]\nrt = { package = \"modelctx\" }\n[package.metadata.x.dependencies]\nrt2 = { package = \"modelctx\" }\n";
        assert_eq!(renamed_key(manifest), None);
        let manifest = "[dependencies]\nrt = { git = \"https://x/y#main\", package = \"modelctx\" } # pinned\n";
        assert_eq!(renamed_key(manifest).as_deref(), Some("rt"));
    }

    #[test]
    fn other_packages_and_tables_are_ignored() {
        let manifest = "[package]\npackage = \"modelctx\"\n[dependencies]\ncore = { package = \"modelctx-core\" }\n";
        assert_eq!(renamed_key(manifest), None);
    }

    #[test]
    fn the_crate_key_is_taken_out_of_the_arguments() {
        let (rest, lit, errors) = take_crate_key(quote!(name = "x", crate = "my::rt", read_only));
        assert_eq!(rest.to_string(), quote!(name = "x", read_only).to_string());
        assert_eq!(lit.map(|l| l.value()).as_deref(), Some("my::rt"));
        assert!(errors.is_empty());
        let (rest, lit, _) = take_crate_key(quote!("books://{id}", crate = "rt",));
        assert_eq!(rest.to_string(), quote!("books://{id}").to_string());
        assert_eq!(lit.map(|l| l.value()).as_deref(), Some("rt"));
        let (rest, lit, _) = take_crate_key(quote!(read_only, icon = "a",));
        assert_eq!(rest.to_string(), quote!(read_only, icon = "a",).to_string());
        assert!(lit.is_none());
        let (rest, lit, _) = take_crate_key(quote!(crate = "rt"));
        assert!(rest.is_empty());
        assert!(lit.is_some());
    }

    #[test]
    fn a_crate_key_that_is_not_one_string_is_an_error() {
        let (rest, lit, errors) = take_crate_key(quote!(crate = my::rt, read_only));
        assert_eq!(rest.to_string(), "read_only");
        assert!(lit.is_none());
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().contains("takes a string"));
        let (_, lit, errors) = take_crate_key(quote!(crate = "a", crate = "b"));
        assert_eq!(lit.map(|l| l.value()).as_deref(), Some("a"));
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().contains("given twice"));
    }
}
