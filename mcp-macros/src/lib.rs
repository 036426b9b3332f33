//! Procedural macros of the `modelctx` SDK: `#[tool]`, `#[tools]`, `#[resource]` and
//! `#[prompt]`. Depend on the `modelctx` crate, which re-exports them; this crate is not meant
//! to be used alone.
//!
//! The generated code calls generic functions of the runtime through paths of the `modelctx`
//! crate: `::modelctx` by default, the key under which the user's `Cargo.toml` renames the
//! package (`rt = { package = "modelctx", .. }` gives `::rt`), or the path given with
//! `crate = "path"` on the attribute. Every mistake is reported at its own span, and the
//! item is still emitted (with a placeholder registration) so one mistake gives one error.
#![warn(missing_docs)]

mod ast;
mod attrs;
mod constraints;
mod ctxt;
mod definition_builders;
mod docs;
mod expand;
mod features;
mod handle;
mod json_text;
mod pattern;
mod placement;
mod runtime;
mod source_files;
mod spelling;
mod suggest;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;
use syn::spanned::Spanned;

use crate::ast::{parse_tool_fn, strip_arg_attrs, Receiver};
use crate::attrs::parse_tool_attrs;
use crate::ctxt::Ctxt;
use crate::expand::{state_generics, state_type, tool_def, Target};
use crate::handle::{handle_path, handle_struct};
use crate::runtime::{Scope, RT};

/// Turns a function into a tool: its name, doc comment and parameters become the tool's name,
/// description and JSON Schema; every call is validated against that schema before the body
/// runs.
///
/// Keys of `#[tool(..)]`, all optional: `name = ".."` (default: the function's name),
/// `title = ".."`, `description = ".."` (default: the doc comment), the hints `read_only`,
/// `destructive`, `idempotent`, `open_world` (alone for `true`, or `= false`), `icon = "url"`
/// (once per icon), `meta = r#"{..}"#` (the tool's `_meta`, a JSON object),
/// `scopes = [".."]` (what a caller's token needs behind a resource server) and
/// `task = "forbidden" | "optional" | "required"` (whether a 2026 call runs as a task of the
/// tasks extension; default `"forbidden"`; see `modelctx::server::TaskSupport`).
///
/// `crate = "path"` (on `#[tool]`, `#[tools]`, `#[resource]` and `#[prompt]`) says where the
/// `modelctx` crate is, for code that reaches it through a re-export (`crate = "my_sdk::rt"`).
/// Without it the generated code uses the name your `Cargo.toml` gives the `modelctx` package
/// (`rt = { package = "modelctx", .. }` gives `::rt`), else `::modelctx`.
///
/// Keys of `#[arg(..)]` on a parameter: `description = ".."` (default: the parameter's doc
/// comment), `rename = ".."` (the argument's name on the wire), `default = expr` (used when the
/// argument is absent; the argument is then optional), `range(min..=max)` (numbers; `min..`,
/// `..=max` too), `length(min..=max)` (characters of text, items of a list) and
/// `pattern = "regex"` (text).
///
/// ```
/// use modelctx::prelude::*;
///
/// /// Search the catalog by title or author.
/// #[modelctx::tool(
///     name = "search",
///     title = "Search books",
///     read_only,
///     open_world = false,
///     icon = "https://example.com/search.png",
///     meta = r#"{"vendor/cost": "low"}"#,
///     scopes = ["books:read"],
/// )]
/// async fn search_books(
///     /// Words to look for.
///     #[arg(length(1..=200), pattern = "^[^<>]*$")]
///     query: String,
///     #[arg(range(1..=50), default = 10, description = "At most this many books.")]
///     limit: u32,
///     #[arg(rename = "sortBy")]
///     sort_by: Option<String>,
/// ) -> Vec<String> {
///     let _ = (limit, sort_by);
///     vec![query]
/// }
///
/// let server = McpServer::new("books").tool(SearchBooksTool);
/// assert_eq!(server.tool_names(), ["search"]);
/// ```
///
/// The other keys: a description that is not the doc comment, the remaining hints, a task for
/// long work, and the runtime's path through a re-export:
///
/// ```
/// use modelctx::prelude::*;
///
/// mod sdk {
///     pub use modelctx as rt;
/// }
///
/// #[tool(
///     description = "Delete every book of an author.",
///     destructive,
///     idempotent,
///     task = "optional",
///     crate = "crate::sdk::rt",
/// )]
/// async fn purge_author(author: String) -> String {
///     format!("purged {author}")
/// }
///
/// fn main() {
///     let server = McpServer::new("books").tool(PurgeAuthorTool);
///     assert_eq!(server.tool_names(), ["purge_author"]);
/// }
/// ```
///
/// On a free function `search_books`, the function stays as written and a unit struct
/// `SearchBooksTool` is generated for `McpServer::tool(SearchBooksTool)` (declared in a module
/// `search_books_tool` and imported with a glob, with the function's visibility). A type of your
/// own with the same name hides it: registering yours then fails with a note to rename it.
///
/// What the macro checks while compiling, each mistake one error on the token at fault:
///
/// - the description: a doc comment, `#[doc = include_str!("search.md")]` or `concat!(..)`
///   (used as the text it expands to), or `#[tool(description = "...")]`;
/// - `#[arg(range(..))]` only on numbers (whole-number bounds on integers), `length(..)` only on
///   text and lists, `pattern = ".."` only on text and a valid regular expression, a literal
///   `default` inside its own `range`/`length`; on a type alias or a type of your own, the
///   compiler checks the same through a bound at the key;
/// - no two parameters with the same argument name (after `rename`); arguments are owned
///   (`String`, `Option<String>`, not `&str` or `Option<&str>`);
/// - the context is recognized by its name, so write `RequestContext<S>` (not an alias of it)
///   and a fallible tool returns `Result<T, E>` spelled out (`io::Result<T>` and other
///   one-argument `Result` aliases are fine); an alias of either is an error that says so.
///
/// `#[tool]` on a method (`&self`) needs `#[tools]` on its impl block.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    with_runtime(args.into(), |args| expand_free_tool(args, input.into())).into()
}

/// Turns a function into a resource (`#[resource("books://{id}")]`): a fixed URI is listed in
/// `resources/list`, a template in `resources/templates/list`, and each template variable is
/// bound to the parameter of the same name (parsed from text). Returning `None` (or an
/// `Option`) answers "resource not found". The handle `CatalogResource` of `fn catalog` is
/// generated as for `#[tool]`; the description may come from `#[doc = include_str!(..)]`. As a
/// `&self` method, it belongs in a `#[tools]` impl block.
///
/// Keys after the URI, all optional: `name = ".."` (default: the function's name),
/// `title = ".."`, `description = ".."` (default: the doc comment), `mime_type = ".."`,
/// `icon = "url"` (once per icon), `meta = r#"{..}"#` (a JSON object), `scopes = [".."]` and
/// `crate = "path"` (as on `#[tool]`). A variable's parameter takes `#[arg(rename = "..")]` (the variable's name),
/// `#[arg(description = "..")]` and `#[arg(complete = f)]` (see `#[prompt]`).
///
/// ```
/// use modelctx::prelude::*;
///
/// /// The shop's logo.
/// #[modelctx::resource(
///     "shop://logo",
///     name = "logo",
///     title = "Logo",
///     mime_type = "image/png",
///     icon = "https://example.com/logo.png",
///     meta = r#"{"vendor/kind": "image"}"#,
///     scopes = ["shop:read"],
/// )]
/// async fn logo() -> Vec<u8> {
///     vec![0x89, b'P', b'N', b'G']
/// }
///
/// /// One book, by author and title.
/// #[modelctx::resource("books://{author}/{title}", mime_type = "text/plain")]
/// async fn book(
///     #[arg(complete = authors)] author: String,
///     title: String,
/// ) -> Option<String> {
///     (author == "Herbert" && title == "Dune").then(|| "Dune, by Frank Herbert.".into())
/// }
///
/// fn authors(typed: &str) -> Vec<String> {
///     ["Austen", "Herbert"].iter().filter(|a| a.starts_with(typed)).map(|a| a.to_string()).collect()
/// }
///
/// let server = McpServer::new("shop").resource(LogoResource).resource(BookResource);
/// ```
#[proc_macro_attribute]
pub fn resource(args: TokenStream, input: TokenStream) -> TokenStream {
    with_runtime(args.into(), |args| {
        features::expand_resource(args, input.into())
    })
    .into()
}

/// Turns a function into a prompt: its text parameters (`String`, or `Option<String>` for an
/// optional one) are the prompt's arguments, its doc comments their descriptions. The handle
/// `SummarizePrompt` of `fn summarize` is generated as for `#[tool]`; as a `&self` method, it
/// belongs in a `#[tools]` impl block.
///
/// Keys, all optional: `name = ".."` (default: the function's name), `title = ".."`,
/// `description = ".."` (default: the doc comment), `icon = "url"` (once per icon),
/// `meta = r#"{..}"#` (a JSON object), `scopes = [".."]` and `crate = "path"` (as on
/// `#[tool]`).
///
/// A parameter takes `#[arg(description = "..")]` (default: its doc comment),
/// `#[arg(rename = "..")]` (the argument's name) and `#[arg(complete = f)]`, which names the
/// function that suggests values for `completion/complete`: `fn(&str) -> Vec<String>` (the
/// text typed so far), or a function, plain or `async`, taking `CompletionRequest<S>` (also
/// the other arguments already filled in, and `state()`; `S` is the prompt's state, so a
/// completer reading a `Shop` needs a prompt with a `State<Shop>` or `RequestContext<Shop>`
/// parameter). At most 100 values are sent.
///
/// ```
/// use modelctx::prelude::*;
///
/// struct Shop { titles: Vec<(String, String)> }   // (author, title)
///
/// fn authors(typed: &str) -> Vec<String> {
///     ["Austen", "Herbert"].iter().filter(|a| a.starts_with(typed)).map(|a| a.to_string()).collect()
/// }
///
/// /// The titles of the author filled in already, if the client says which.
/// async fn titles_by(req: CompletionRequest<Shop>) -> Vec<String> {
///     let author = req.arguments.get("author");
///     req.state().titles.iter()
///         .filter(|(a, t)| author.is_none_or(|x| x == a) && t.starts_with(&req.value))
///         .map(|(_, t)| t.clone())
///         .collect()
/// }
///
/// /// Ask for a review of one book.
/// #[modelctx::prompt(
///     name = "review",
///     title = "Review a book",
///     icon = "https://example.com/review.png",
///     meta = r#"{"vendor/audience": "editors"}"#,
///     scopes = ["reviews:write"],
/// )]
/// async fn review_book(
///     shop: State<Shop>,
///     #[arg(complete = authors)] author: String,
///     #[arg(complete = titles_by, rename = "book", description = "The book.")] title: String,
///     /// The tone, e.g. "enthusiastic".
///     tone: Option<String>,
/// ) -> String {
///     let known = shop.titles.iter().any(|(_, t)| *t == title);
///     format!("Review {title} by {author} ({}), in stock: {known}.", tone.unwrap_or_default())
/// }
///
/// let shop = Shop { titles: vec![("Herbert".into(), "Dune".into())] };
/// let server = McpServer::with_state("shop", shop).prompt(ReviewBookPrompt);
/// ```
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    with_runtime(args.into(), |args| {
        features::expand_prompt(args, input.into())
    })
    .into()
}

/// Marks an impl block whose `#[tool]`, `#[resource]` and `#[prompt]` methods share one value
/// through `&self`; the value is given to `McpServer::tools` (or an `Arc` of it to
/// `McpServer::tools_shared`) and every method is registered, once.
///
/// Methods take `&self` (never `self` or `&mut self`: calls run concurrently) or no receiver
/// at all (an associated function). Every method of the block serves one state type `S`, the
/// one a `RequestContext<S>` or `State<S>` parameter names (any `S` when none does). A
/// `#[arg(complete = Self::f)]` names a `&self` method of the block as a completer:
/// `fn f(&self, typed: &str) -> Vec<String>` or `fn f(&self, req: CompletionRequest<S>)`,
/// plain or `async`.
///
/// `#[tools]` takes one key, `crate = "path"` (as on `#[tool]`), for every method of the block;
/// each method is configured with its own `#[tool(..)]`, `#[resource(..)]` or `#[prompt(..)]`.
///
/// ```
/// use std::sync::Mutex;
///
/// struct Shop { books: Mutex<Vec<String>> }
///
/// #[modelctx::tools]
/// impl Shop {
///     /// Adds a book.
///     #[modelctx::tool]
///     async fn add(&self, title: String) -> usize {
///         let mut books = self.books.lock().unwrap();
///         books.push(title);
///         books.len()
///     }
///
///     /// One book by position.
///     #[modelctx::resource("shop://books/{index}")]
///     async fn book(&self, #[arg(complete = Self::positions)] index: usize) -> Option<String> {
///         self.books.lock().unwrap().get(index).cloned()
///     }
///
///     /// Asks for a review.
///     #[modelctx::prompt]
///     async fn review(&self, title: String) -> String {
///         format!("Review {title}.")
///     }
///
///     fn positions(&self, typed: &str) -> Vec<String> {
///         let count = self.books.lock().unwrap().len();
///         (0..count).map(|i| i.to_string()).filter(|i| i.starts_with(typed)).collect()
///     }
/// }
///
/// let server = modelctx::server::McpServer::new("shop").tools(Shop { books: Mutex::new(Vec::new()) });
/// ```
#[proc_macro_attribute]
pub fn tools(args: TokenStream, input: TokenStream) -> TokenStream {
    with_runtime(args.into(), |args| expand_tools_impl(args, input.into())).into()
}

/// Runs one expansion with the runtime's path chosen from `crate = ".."` in `args` (taken out
/// before `expand` sees them) or from the user's manifest; see [`runtime`].
fn with_runtime(
    args: TokenStream2,
    expand: impl FnOnce(TokenStream2) -> TokenStream2,
) -> TokenStream2 {
    let (_scope, args, errors) = Scope::enter(args);
    let mut out = expand(args);
    for error in errors {
        out.extend(error.to_compile_error());
    }
    out
}

fn expand_free_tool(args: TokenStream2, input: TokenStream2) -> TokenStream2 {
    let cx = Ctxt::default();
    let scope = quote!(#args #input);
    let mut item: syn::ItemFn = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            let span = match syn::parse2::<syn::Item>(input.clone()) {
                Ok(item) => item_keyword_span(&item),
                Err(_) => proc_macro2::Span::call_site(),
            };
            let e = syn::Error::new(
                span,
                "#[tool] goes on a function (`async fn` or `fn`); for methods that share state, put #[tools] on the impl block and #[tool] on each method",
            );
            let mut out = e.to_compile_error();
            out.extend(input);
            return out;
        }
    };
    let attrs = parse_tool_attrs(&cx, args);
    let param_attrs = strip_arg_attrs(&mut item.sig);
    if let Some(e) = placement::misplaced(&item.sig, "tool") {
        // Said once; the function is left as written.
        let mut out = e.to_compile_error();
        quote::ToTokens::to_tokens(&item, &mut out);
        return out;
    }
    let tool = parse_tool_fn(&cx, &item.sig, &item.attrs, &param_attrs, attrs);

    let ident = &item.sig.ident;
    let (impl_generics, state_ty) = state_generics(state_type(&tool), &scope);
    let body = if cx.has_errors() {
        quote!(::std::unreachable!("this tool did not compile"))
    } else {
        tool_def(&tool, Target::Free(ident), &state_ty)
    };
    let errors = cx.into_compile_errors();
    let handle = handle_struct(&item.vis, ident, "tool");
    let handle_path = handle_path(ident, "tool");
    quote! {
        #errors
        #item
        #handle

        // A bare impl (not in `const _`): should the function sit in an impl block after all
        // (a source `placement` could not read), it is dropped with the handle, so nothing
        // else fails there.
        #[diagnostic::do_not_recommend]
        impl #impl_generics #RT::server::IntoTool<#state_ty> for #handle_path {
            fn into_tool(self) -> #RT::server::ToolDef<#state_ty> {
                #body
            }
        }
    }
}

fn item_keyword_span(item: &syn::Item) -> proc_macro2::Span {
    match item {
        syn::Item::Struct(s) => s.struct_token.span,
        syn::Item::Enum(e) => e.enum_token.span,
        syn::Item::Impl(i) => i.impl_token.span,
        syn::Item::Mod(m) => m.mod_token.span,
        syn::Item::Trait(t) => t.trait_token.span,
        syn::Item::Const(c) => c.const_token.span,
        syn::Item::Static(s) => s.static_token.span,
        syn::Item::Type(t) => t.type_token.span,
        syn::Item::Use(u) => u.use_token.span,
        other => other.span(),
    }
}

/// A state type as compared between the methods of one block: its last path segment
/// (`crate::Shop` and `Shop` are one state; rustc checks the rest).
fn state_key(ty: &TokenStream2) -> String {
    match syn::parse2::<syn::Type>(ty.clone()) {
        Ok(syn::Type::Path(p)) => p
            .path
            .segments
            .last()
            .map(|seg| quote!(#seg).to_string())
            .unwrap_or_default(),
        _ => ty.to_string(),
    }
}

/// `#[name]` or a path ending in it (`#[modelctx::name]`).
fn attr_named(attr: &syn::Attribute, name: &str) -> bool {
    attr.path().segments.last().is_some_and(|s| s.ident == name)
}

/// A `#[resource]` or `#[prompt]` method of a `#[tools]` impl.
enum Other {
    Resource,
    Prompt,
}

fn expand_tools_impl(args: TokenStream2, input: TokenStream2) -> TokenStream2 {
    let cx = Ctxt::default();
    if !args.is_empty() {
        cx.error(
            &args,
            "#[tools] takes no arguments but `crate = \"path\"`; configure each tool with #[tool(...)]",
        );
    }
    let mut item: syn::ItemImpl = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            let mut out = syn::Error::new(
                proc_macro2::Span::call_site(),
                "#[tools] goes on an impl block: `#[tools] impl MyServer { #[tool] async fn ... }`",
            )
            .to_compile_error();
            out.extend(input);
            return out;
        }
    };
    if item.trait_.is_some() {
        cx.error(
            &item.self_ty,
            "#[tools] goes on an inherent impl block (`impl MyServer`), not a trait impl",
        );
    }
    if !item.generics.params.is_empty() {
        cx.error(
            &item.generics,
            "#[tools] does not support generic impl blocks",
        );
    }
    let self_ty = (*item.self_ty).clone();
    let mut tools = Vec::new();
    let mut others = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let (mut resource_keys, mut prompt_keys) = (Vec::<String>::new(), Vec::<String>::new());
    for impl_item in &mut item.items {
        let syn::ImplItem::Fn(method) = impl_item else {
            continue;
        };
        let Some(pos) = method.attrs.iter().position(|a| {
            ["tool", "resource", "prompt"]
                .iter()
                .any(|what| attr_named(a, what))
        }) else {
            continue;
        };
        let attr = method.attrs.remove(pos);
        let args = match &attr.meta {
            syn::Meta::List(list) => list.tokens.clone(),
            _ => TokenStream2::new(),
        };
        if !attr_named(&attr, "tool") {
            let kind = if attr_named(&attr, "resource") {
                Other::Resource
            } else {
                Other::Prompt
            };
            let what = match kind {
                Other::Resource => "resource",
                Other::Prompt => "prompt",
            };
            let parsed = features::parse_sig(&cx, &mut method.sig, &method.attrs, what, true);
            if let Some((key, span)) = features::registered_key(what, &args, &method.sig.ident) {
                let seen = match kind {
                    Other::Resource => &mut resource_keys,
                    Other::Prompt => &mut prompt_keys,
                };
                if seen.contains(&key) {
                    let message = match kind {
                        Other::Resource => format!("two resources in this impl block have the URI `{key}`; a URI (or template) is served by one resource"),
                        Other::Prompt => format!("two prompts in this impl block are named `{key}`; rename one with #[prompt(name = \"...\")]"),
                    };
                    cx.error_at(span, message);
                }
                seen.push(key);
            }
            others.push((kind, parsed, args));
            continue;
        }
        let attrs = parse_tool_attrs(&cx, args);
        let param_attrs = strip_arg_attrs(&mut method.sig);
        let tool = parse_tool_fn(&cx, &method.sig, &method.attrs, &param_attrs, attrs);
        if names.contains(&tool.name) {
            cx.error_at(
                tool.name_span,
                format!("two tools in this impl block are named `{}`; rename one with #[tool(name = \"...\")]", tool.name),
            );
        }
        names.push(tool.name.clone());
        tools.push(tool);
    }
    if tools.is_empty() && others.is_empty() && !cx.has_errors() {
        cx.error(
            &item.self_ty,
            "this #[tools] impl block has no #[tool], #[resource] or #[prompt] method",
        );
    }

    // Every tool, resource and prompt of the block serves the same state type.
    let mut state: Option<TokenStream2> = None;
    let states = tools
        .iter()
        .map(|t| (state_type(t), t.span()))
        .chain(others.iter().map(|(_, parsed, _)| {
            let ty = parsed.context.as_ref().map(|s| match s {
                Some(ty) => quote!(#ty),
                None => quote!(()),
            });
            (ty, parsed.span())
        }));
    // A `&self` completer taking `CompletionRequest<S>` serves the same state.
    let self_methods = features::SelfMethod::of(&item);
    let states = states.chain(
        self_methods
            .iter()
            .map(|m| (m.request_state.clone(), m.name.span())),
    );
    for (s, span) in states {
        if let Some(s) = s {
            match &state {
                Some(prev) if state_key(prev) != state_key(&s) => cx.error_at(
                    span,
                    format!("every method of one #[tools] impl block serves the same state; this one takes `{s}`, an earlier one `{prev}`"),
                ),
                _ => state = Some(s),
            }
        }
    }
    let (impl_generics, state_ty) = state_generics(state, &input);
    let callee = features::Callee::Method(&self_ty, &self_methods);
    let mut resources = Vec::new();
    let mut prompts = Vec::new();
    for (kind, parsed, args) in others {
        let def = match kind {
            Other::Resource => features::resource_def(&cx, &parsed, args, &callee, &state_ty),
            Other::Prompt => features::prompt_def(&cx, &parsed, args, &callee, &state_ty),
        };
        let def = if parsed.takes_self() {
            quote!({ let __this = __this.clone(); #def })
        } else {
            def
        };
        match kind {
            Other::Resource => resources.push(def),
            Other::Prompt => prompts.push(def),
        }
    }
    let body = if cx.has_errors() {
        quote!(::std::unreachable!("these tools did not compile"))
    } else {
        let defs = tools.iter().map(|t| {
            let needs_this = matches!(t.receiver, Receiver::Ref);
            let def = tool_def(t, Target::Method(&self_ty), &state_ty);
            if needs_this {
                quote!({ let __this = __this.clone(); #def })
            } else {
                def
            }
        });
        quote!(#RT::server::Features::new(
            ::std::vec![#(#defs),*],
            ::std::vec![#(#resources),*],
            ::std::vec![#(#prompts),*],
        ))
    };
    let errors = cx.into_compile_errors();
    quote! {
        #errors
        #item

        const _: () = {
            impl #impl_generics #RT::server::ToolSet<#state_ty> for #self_ty {
                #[allow(unused_variables)]
                fn features(__this: ::std::sync::Arc<Self>) -> #RT::server::Features<#state_ty> {
                    #body
                }
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use proc_macro2::TokenTree;

    use super::*;

    fn idents(tokens: TokenStream2, out: &mut Vec<String>) {
        for token in tokens {
            match token {
                TokenTree::Group(group) => idents(group.stream(), out),
                TokenTree::Ident(ident) => out.push(ident.to_string()),
                _ => {}
            }
        }
    }

    /// Every path the expansion writes to the runtime goes through `crate = ".."`: a site that
    /// wrote `::modelctx` itself would compile in the ui tests (where that crate is there) and
    /// break a user who reaches the crate only through a re-export.
    fn only_through(expanded: TokenStream2) {
        let mut names = Vec::new();
        idents(expanded.clone(), &mut names);
        assert!(
            !names.iter().any(|n| n == "modelctx"),
            "a path that ignores `crate`: {expanded}"
        );
        assert!(names.iter().any(|n| n == "zz"), "{expanded}");
    }

    #[test]
    fn every_generated_path_goes_through_the_crate_key() {
        // A tool with context, constraints, a default, a Result with a tool error, and hints.
        only_through(with_runtime(
            quote!(crate = "zz", read_only, icon = "https://x/i.png"),
            |args| {
                expand_free_tool(
                    args,
                    quote! {
                        /// Search.
                        async fn search(
                            ctx: RequestContext,
                            #[arg(range(1..=10), default = 5)] limit: u8,
                            #[arg(pattern = "^[a-z]+$")] query: String,
                        ) -> Result<Vec<String>, ToolError> {
                            Ok(vec![])
                        }
                    },
                )
            },
        ));
        // A templated resource with a completer, and a plain one.
        only_through(with_runtime(quote!("notes://{id}", crate = "zz"), |args| {
            features::expand_resource(
                args,
                quote! {
                    /// A note.
                    async fn note(#[arg(complete = ids)] id: String) -> Result<String, ToolError> {
                        Ok(id)
                    }
                },
            )
        }));
        // A prompt with a completer.
        only_through(with_runtime(quote!(crate = "zz"), |args| {
            features::expand_prompt(
                args,
                quote! {
                    /// Review.
                    async fn review(#[arg(complete = langs)] lang: String) -> Vec<PromptMessage> {
                        vec![]
                    }
                },
            )
        }));
        // A #[tools] block with a tool, a resource, a prompt and a `&self` completer.
        only_through(with_runtime(quote!(crate = "zz"), |args| {
            expand_tools_impl(
                args,
                quote! {
                    impl Shop {
                        /// Count.
                        #[tool(idempotent)]
                        async fn count(&self, #[arg(length(max = 3))] tag: String) -> usize {
                            0
                        }
                        /// A book.
                        #[resource("shop://books/{index}")]
                        async fn book(&self, #[arg(complete = Self::positions)] index: usize) -> Option<String> {
                            None
                        }
                        /// Greet.
                        #[prompt]
                        async fn greet(&self, name: String) -> String {
                            name
                        }
                        fn positions(&self, typed: &str) -> Vec<String> {
                            vec![]
                        }
                    }
                },
            )
        }));
    }
}
