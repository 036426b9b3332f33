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
    /// this call. Gives back the other arguments, and an error on the string when it is not a
    /// path.
    pub(crate) fn enter(args: TokenStream) -> (Scope, TokenStream, Option<syn::Error>) {
        let (rest, chosen) = take_crate_key(args);
        let (path, error) = match chosen {
            None => (default_path(), None),
            Some(lit) => match lit.parse::<syn::Path>() {
                Ok(path) => (path.into_token_stream(), None),
                Err(_) => (
                    default_path(),
                    Some(syn::Error::new(
                        lit.span(),
                        format!(
                            "`crate` takes the path of the `{PACKAGE}` crate, e.g. crate = \"::{PACKAGE}\" or crate = \"my_reexport\""
                        ),
                    )),
                ),
            },
        };
        let previous = CURRENT.with(|c| c.borrow_mut().replace(path));
        (Scope { previous }, rest, error)
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

/// Removes `crate = "..."` (and the comma after it) from the top level of an attribute's
/// arguments.
fn take_crate_key(args: TokenStream) -> (TokenStream, Option<syn::LitStr>) {
    let tokens: Vec<TokenTree> = args.into_iter().collect();
    let mut rest = Vec::with_capacity(tokens.len());
    let mut chosen = None;
    let mut i = 0;
    while i < tokens.len() {
        let is_key = matches!(&tokens[i], TokenTree::Ident(id) if id == "crate")
            && matches!(tokens.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '=');
        let lit = match (is_key, tokens.get(i + 2)) {
            (true, Some(TokenTree::Literal(lit))) => {
                syn::parse2::<syn::LitStr>(TokenTree::Literal(lit.clone()).into()).ok()
            }
            _ => None,
        };
        match lit {
            Some(lit) => {
                chosen = Some(lit);
                i += 3;
                if matches!(tokens.get(i), Some(TokenTree::Punct(p)) if p.as_char() == ',') {
                    i += 1;
                } else if matches!(rest.last(), Some(TokenTree::Punct(p)) if p.as_char() == ',') {
                    rest.pop();
                }
            }
            None => {
                rest.push(tokens[i].clone());
                i += 1;
            }
        }
    }
    (rest.into_iter().collect(), chosen)
}

/// `::key` for the dependency key that renames the package in the manifest of the crate
/// being compiled, else `::modelctx`.
fn default_path() -> TokenStream {
    let key = std::env::var_os("CARGO_MANIFEST_DIR")
        .and_then(|dir| std::fs::read_to_string(std::path::Path::new(&dir).join("Cargo.toml")).ok())
        .and_then(|manifest| renamed_key(&manifest));
    let name = key.unwrap_or_else(|| PACKAGE.to_owned()).replace('-', "_");
    let ident = syn::Ident::new(&name, proc_macro2::Span::call_site());
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
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(header) = line.strip_prefix('[') {
            let header = header.trim_start_matches('[').trim_end_matches(']').trim();
            let parts: Vec<&str> = header.split('.').map(str::trim).collect();
            let is_list = |s: &str| {
                matches!(
                    s,
                    "dependencies" | "dev-dependencies" | "build-dependencies"
                )
            };
            table = match parts.as_slice() {
                [.., last] if is_list(last) => Table::List,
                [.., list, key] if is_list(list) => Table::One(unquote(key).to_owned()),
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
    fn other_packages_and_tables_are_ignored() {
        let manifest = "[package]\npackage = \"modelctx\"\n[dependencies]\ncore = { package = \"modelctx-core\" }\n";
        assert_eq!(renamed_key(manifest), None);
    }

    #[test]
    fn the_crate_key_is_taken_out_of_the_arguments() {
        let (rest, lit) = take_crate_key(quote!(name = "x", crate = "my::rt", read_only));
        assert_eq!(rest.to_string(), quote!(name = "x", read_only).to_string());
        assert_eq!(lit.map(|l| l.value()).as_deref(), Some("my::rt"));
        let (rest, lit) = take_crate_key(quote!("books://{id}", crate = "rt"));
        assert_eq!(rest.to_string(), quote!("books://{id}").to_string());
        assert_eq!(lit.map(|l| l.value()).as_deref(), Some("rt"));
        let (rest, lit) = take_crate_key(quote!(read_only));
        assert_eq!(rest.to_string(), "read_only");
        assert!(lit.is_none());
    }
}
