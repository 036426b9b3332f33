//! `#[resource]` and `#[prompt]`: functions whose parameters are a URI template's variables or
//! a prompt's text arguments.

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{FnArg, LitStr, Pat, Token, Type};

use crate::ast::{context_state, state_param, strip_arg_attrs};
use crate::attrs::{parse_arg_attrs, ArgAttrs, TEXT_ARG_KEYS};
use crate::ctxt::Ctxt;
use crate::definition_builders::{icons_and_meta, scopes};
use crate::docs::{doc_description, doc_text, Doc};
use crate::runtime::RT;
use crate::spelling::{generic_args, last_segment};
use crate::suggest::unknown_key;

const RESOURCE_KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "mime_type",
    "icon",
    "meta",
    "scopes",
];
const PROMPT_KEYS: &[&str] = &["name", "title", "description", "icon", "meta", "scopes"];

#[derive(Default)]
struct Keys {
    uri: Option<LitStr>,
    name: Option<LitStr>,
    title: Option<LitStr>,
    description: Option<LitStr>,
    mime_type: Option<LitStr>,
    /// `icon = ".."`, once per icon.
    icons: Vec<LitStr>,
    /// `meta = r#"{..}"#`, a JSON object.
    meta: Option<LitStr>,
    scopes: Vec<LitStr>,
}

fn parse_keys(
    cx: &Ctxt,
    input: ParseStream<'_>,
    what: &str,
    known: &[&str],
    keys: &mut Keys,
) -> syn::Result<()> {
    let mut seen = HashSet::new();
    while !input.is_empty() {
        let path: syn::Path = input.parse()?;
        let key = path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        input.parse::<Token![=]>()?;
        let value: syn::Expr = input.parse()?;
        if key == "crate" {
            cx.error(&path, crate::runtime::CRATE_ON_A_METHOD);
        } else if !known.contains(&key.as_str()) {
            cx.error(&path, unknown_key(what, &key, known));
        } else if key != "icon" && !seen.insert(key.clone()) {
            cx.error(&path, format!("`{key}` is given twice in #[{what}(...)]"));
        } else if key == "scopes" {
            keys.scopes = crate::attrs::parse_scopes(cx, &value);
        } else {
            let lit: LitStr = syn::parse2(quote!(#value))?;
            if key == "meta" && !crate::json_text::is_object(&lit.value()) {
                cx.error(
                    &lit,
                    "`meta` must be a JSON object, e.g. meta = r#\"{\"vendor/key\": 1}\"#",
                );
            }
            match key.as_str() {
                "icon" => keys.icons.push(lit),
                "meta" => keys.meta = Some(lit),
                "name" => keys.name = Some(lit),
                "title" => keys.title = Some(lit),
                "description" => keys.description = Some(lit),
                _ => keys.mime_type = Some(lit),
            }
        }
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    Ok(())
}

struct Param {
    ident: syn::Ident,
    ty: Type,
    inner: Type,
    optional: bool,
    wire: String,
    description: Option<String>,
    attrs: ArgAttrs,
}

/// A `#[resource]` or `#[prompt]` function (or method of a `#[tools]` impl) as read from its
/// signature.
pub(crate) struct Parsed {
    /// The signature, `#[arg]` attributes stripped.
    sig: syn::Signature,
    params: Vec<Param>,
    /// The state type a `RequestContext<S>` or `State<S>` parameter names (`Some(None)`: a
    /// `RequestContext` without `<S>`, i.e. `()`).
    pub(crate) context: Option<Option<Box<Type>>>,
    docs: Option<Doc>,
    /// Takes `&self` (a method of a `#[tools]` impl).
    receiver: bool,
}

impl Parsed {
    /// Where errors about the whole function land.
    pub(crate) fn span(&self) -> Span {
        self.sig.ident.span()
    }

    /// Takes `&self`: the handler holds a clone of the shared value.
    pub(crate) fn takes_self(&self) -> bool {
        self.receiver
    }
}

/// What a `#[resource(args)]` (its URI) or `#[prompt(args)]` (its `name`, else the function's)
/// registers under, and where to point an error about a second one; `None` when the arguments
/// do not parse (that error comes from the full parse).
pub(crate) fn registered_key(
    what: &str,
    args: &TokenStream,
    ident: &syn::Ident,
) -> Option<(String, Span)> {
    if what == "resource" {
        let parser = |input: ParseStream<'_>| {
            let uri: LitStr = input.parse()?;
            let _: TokenStream = input.parse()?;
            Ok(uri)
        };
        let uri = syn::parse::Parser::parse2(parser, args.clone()).ok()?;
        return Some((uri.value(), uri.span()));
    }
    let parser = syn::punctuated::Punctuated::<syn::MetaNameValue, Token![,]>::parse_terminated;
    let pairs = syn::parse::Parser::parse2(parser, args.clone()).ok()?;
    for pair in pairs {
        if pair.path.is_ident("name") {
            if let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(name),
                ..
            }) = &pair.value
            {
                return Some((name.value(), name.span()));
            }
        }
    }
    Some((
        ident.to_string().trim_start_matches("r#").to_owned(),
        ident.span(),
    ))
}

/// How the generated handler reaches the user's function.
pub(crate) enum Callee<'a> {
    /// A free function, called by name.
    Free,
    /// A method of the `#[tools]` impl of `self_ty`: `__this.f(..)` when it takes `&self`,
    /// `<Type>::f(..)` otherwise; `methods` are the block's `&self` methods a completer may
    /// name as `Self::f`.
    Method(&'a Type, &'a [SelfMethod]),
}

/// A `&self` method of a `#[tools]` impl, as a `complete = Self::f` completer sees it.
pub(crate) struct SelfMethod {
    pub(crate) name: syn::Ident,
    pub(crate) is_async: bool,
    /// Its argument is `&str` (the value typed so far) rather than a `CompletionRequest`.
    pub(crate) takes_text: bool,
    /// The state a `CompletionRequest<S>` argument names (`()` without `<S>`).
    pub(crate) request_state: Option<TokenStream>,
}

impl SelfMethod {
    /// The block's methods that take `&self` and one more parameter.
    pub(crate) fn of(item: &syn::ItemImpl) -> Vec<Self> {
        item.items
            .iter()
            .filter_map(|i| match i {
                syn::ImplItem::Fn(f) => Some(&f.sig),
                _ => None,
            })
            .filter(|sig| {
                matches!(sig.inputs.first(), Some(FnArg::Receiver(_))) && sig.inputs.len() == 2
            })
            .map(|sig| {
                let arg = match sig.inputs.iter().nth(1) {
                    Some(FnArg::Typed(pt)) => Some(&*pt.ty),
                    _ => None,
                };
                let request_state = arg.and_then(last_segment).and_then(|seg| {
                    (seg.ident == "CompletionRequest").then(|| match generic_args(seg).first() {
                        Some(ty) => quote!(#ty),
                        None => quote!(()),
                    })
                });
                Self {
                    name: sig.ident.clone(),
                    is_async: sig.asyncness.is_some(),
                    takes_text: matches!(arg, Some(Type::Reference(_))),
                    request_state,
                }
            })
            .collect()
    }
}

fn parse_fn(
    cx: &Ctxt,
    input: TokenStream,
    what: &str,
) -> Result<(syn::ItemFn, Parsed), TokenStream> {
    let mut item: syn::ItemFn = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            let mut out = syn::Error::new(
                Span::call_site(),
                format!("#[{what}] goes on a function (`async fn` or `fn`)"),
            )
            .to_compile_error();
            out.extend(input);
            return Err(out);
        }
    };
    if let Some(e) = crate::placement::misplaced(&item.sig, what) {
        // Said once; the function is left as written.
        strip_arg_attrs(&mut item.sig);
        let mut out = e.to_compile_error();
        quote::ToTokens::to_tokens(&item, &mut out);
        return Err(out);
    }
    let parsed = parse_sig(cx, &mut item.sig, &item.attrs, what, false);
    Ok((item, parsed))
}

/// Reads a `#[resource]`/`#[prompt]` signature; `in_tools`: a method of a `#[tools]` impl,
/// which may take `&self`.
pub(crate) fn parse_sig(
    cx: &Ctxt,
    sig: &mut syn::Signature,
    attrs: &[syn::Attribute],
    what: &str,
    in_tools: bool,
) -> Parsed {
    let param_attrs = strip_arg_attrs(sig);
    if !sig.generics.params.is_empty() {
        cx.error(&sig.generics, format!("a {what} cannot be generic"));
    }
    let mut params = Vec::new();
    let mut context = None;
    let mut has_context = false;
    let mut receiver = false;
    let mut wires = Vec::new();
    for (input, extra) in sig.inputs.iter().zip(&param_attrs) {
        let pt = match input {
            FnArg::Typed(pt) => pt,
            FnArg::Receiver(r) if in_tools => {
                match crate::ast::self_taken(r) {
                    crate::ast::SelfTaken::Shared => {}
                    crate::ast::SelfTaken::Mutably => cx.error(r, format!("a {what} method takes `&self`, not `&mut self`: calls run concurrently; keep mutable state behind a Mutex or an atomic")),
                    crate::ast::SelfTaken::ByValue => cx.error(r, format!("a {what} method takes `&self`: taking `self` by value would consume the value every call shares")),
                }
                receiver = true;
                continue;
            }
            FnArg::Receiver(_) => {
                cx.error(
                    input,
                    format!("#[{what}] goes on a free function, not a method"),
                );
                continue;
            }
        };
        if let Some(state) = state_param(&pt.ty) {
            if !matches!(context, Some(Some(_))) {
                context = Some(Some(state));
            }
            continue;
        }
        if let Some(state) = context_state(&pt.ty) {
            if has_context {
                cx.error(
                    &pt.ty,
                    format!("a {what} takes at most one `RequestContext` parameter"),
                );
            }
            has_context = true;
            if !matches!(context, Some(Some(_))) {
                context = Some(state);
            }
            continue;
        }
        let Pat::Ident(pat) = &*pt.pat else {
            cx.error(&pt.pat, format!("a {what} parameter needs a plain name"));
            continue;
        };
        if pat.ident.to_string().starts_with("__") {
            cx.error(&pat.ident, format!("parameter names starting with `__` are reserved for the code #[{what}] generates; rename it (and use #[arg(rename = \"...\")] to keep the argument's name)"));
        }
        let mut attrs = ArgAttrs::default();
        let mut seen = HashSet::new();
        for attr in extra.iter().filter(|a| a.path().is_ident("arg")) {
            parse_arg_attrs(cx, attr, &mut attrs, &mut seen, TEXT_ARG_KEYS);
        }
        let (inner, optional) = match last_segment(&pt.ty) {
            Some(seg) if seg.ident == "Option" && generic_args(seg).len() == 1 => {
                (generic_args(seg)[0].clone(), true)
            }
            _ => ((*pt.ty).clone(), false),
        };
        let wire = attrs
            .rename
            .as_ref()
            .map(LitStr::value)
            .unwrap_or_else(|| pat.ident.to_string().trim_start_matches("r#").to_owned());
        let wire_span = attrs.rename.as_ref().map_or(pat.ident.span(), LitStr::span);
        crate::ast::unique_wire_name(cx, &mut wires, &wire, &pat.ident, wire_span);
        params.push(Param {
            ident: pat.ident.clone(),
            ty: (*pt.ty).clone(),
            inner,
            optional,
            wire,
            description: attrs
                .description
                .as_ref()
                .map(LitStr::value)
                .or_else(|| doc_text(extra)),
            attrs,
        });
    }
    Parsed {
        sig: sig.clone(),
        params,
        context,
        docs: doc_description(attrs),
        receiver,
    }
}

/// The function as written, plus the unit struct that registers it.
fn unit_struct(item: &syn::ItemFn, what: &str) -> TokenStream {
    let handle = crate::handle::handle_struct(&item.vis, &item.sig.ident, what);
    quote! {
        #item
        #handle
    }
}

fn state_of(
    context: &Option<Option<Box<Type>>>,
    scope: &TokenStream,
) -> (TokenStream, TokenStream) {
    let state = context.as_ref().map(|state| match state {
        Some(ty) => quote!(#ty),
        None => quote!(()),
    });
    crate::expand::state_generics(state, scope)
}

fn call_args(sig: &syn::Signature, params: &[Param]) -> Vec<TokenStream> {
    let mut out = Vec::new();
    let mut it = params.iter();
    for input in &sig.inputs {
        if let FnArg::Typed(pt) = input {
            if state_param(&pt.ty).is_some() {
                out.push(quote!(#RT::server::State::of(&__ctx)));
            } else if context_state(&pt.ty).is_some() {
                out.push(quote!(__ctx.clone()));
            } else if let Some(p) = it.next() {
                let ident = &p.ident;
                out.push(quote!(#ident));
            }
        }
    }
    out
}

fn invoke(parsed: &Parsed, callee: &Callee<'_>, args: &[TokenStream]) -> TokenStream {
    let ident = &parsed.sig.ident;
    let path = match callee {
        Callee::Free => quote!(__function),
        Callee::Method(..) if parsed.receiver => quote!(__this.#ident),
        Callee::Method(ty, _) => quote!(<#ty>::#ident),
    };
    if parsed.sig.asyncness.is_some() {
        quote!(#path(#(#args),*).await)
    } else {
        quote!(#RT::__private::run_blocking_plain(move || #path(#(#args),*)).await?)
    }
}

/// What a handler closure does first: a method taking `&self` clones the shared value; a free
/// function is bound before the arguments, which may be named like it.
fn capture(parsed: &Parsed, callee: &Callee<'_>) -> TokenStream {
    let ident = &parsed.sig.ident;
    match callee {
        Callee::Free => quote!(let __function = #ident;),
        Callee::Method(..) if parsed.receiver => {
            quote!(let __this = ::std::clone::Clone::clone(&__this);)
        }
        Callee::Method(..) => quote!(),
    }
}

fn completers(params: &[Param], callee: &Callee<'_>, state: &TokenStream) -> Vec<TokenStream> {
    params
        .iter()
        .filter_map(|p| {
            let f = p.attrs.complete.as_ref()?;
            let wire = &p.wire;
            if let Some(bound) = self_completer(f, callee, state) {
                return Some(quote_spanned!(f.span()=> .complete(#wire, #bound)));
            }
            Some(quote_spanned!(f.span()=> .complete(#wire, #f)))
        })
        .collect()
}

/// `complete = Self::f` naming a `&self` method of the `#[tools]` impl: a closure holding a
/// clone of the shared value that calls it (with the typed value or the whole request, plain or
/// `async`, as its signature says).
fn self_completer(f: &syn::Expr, callee: &Callee<'_>, state: &TokenStream) -> Option<TokenStream> {
    let Callee::Method(ty, methods) = callee else {
        return None;
    };
    let syn::Expr::Path(path) = f else {
        return None;
    };
    let segments: Vec<_> = path.path.segments.iter().collect();
    let [first, name] = segments.as_slice() else {
        return None;
    };
    if first.ident != "Self" {
        return None;
    }
    let found = methods.iter().find(|m| m.name == name.ident)?;
    let ident = &found.name;
    let request = quote!(#RT::server::CompletionRequest<#state>);
    // Errors about the method's signature point at `Self::f`.
    let method = quote_spanned!(f.span()=> <#ty>::#ident);
    let call = match (found.is_async, found.takes_text) {
        (false, true) => quote!(move |__value: &str| -> ::std::vec::Vec<::std::string::String> {
            #method(&__this, __value)
        }),
        (false, false) => quote!(move |__request: #request| #method(&__this, __request)),
        (true, true) => quote!(move |__request: #request| {
            let __this = ::std::clone::Clone::clone(&__this);
            async move { #method(&__this, &__request.value).await }
        }),
        (true, false) => quote!(move |__request: #request| {
            let __this = ::std::clone::Clone::clone(&__this);
            async move { #method(&__this, __request).await }
        }),
    };
    Some(quote!({
        let __this = ::std::clone::Clone::clone(&__this);
        #call
    }))
}

struct ResourceArgs {
    keys: Keys,
}

/// Template variables (names) of an RFC 6570 template, with the same rules as the runtime
/// parser: one operator at most, several variables only in `{?a,b}`.
fn template_variables(text: &str) -> Result<Vec<String>, String> {
    let mut vars = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let close = rest[open..]
            .find('}')
            .ok_or("unclosed `{` in the URI template")?
            + open;
        let whole = &rest[open + 1..close];
        let (op, expr) = match whole.chars().next() {
            Some(c @ ('+' | '/' | '?' | '#')) => (Some(c), &whole[1..]),
            _ => (None, whole),
        };
        let names: Vec<&str> = expr.split(',').map(str::trim).collect();
        if names
            .iter()
            .any(|n| n.is_empty() || !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        {
            return Err(format!("`{{{whole}}}` is not a valid template expression"));
        }
        if names.len() > 1 && op != Some('?') {
            return Err(format!(
                "`{{{whole}}}` names several variables; only a query expression (`{{?a,b}}`) may"
            ));
        }
        vars.extend(names.into_iter().map(str::to_owned));
        rest = &rest[close + 1..];
    }
    Ok(vars)
}

pub(crate) fn expand_resource(args: TokenStream, input: TokenStream) -> TokenStream {
    expand_free(args, input, "resource", "Resource", resource_def)
}

/// A free `#[resource]` or `#[prompt]` function: the function, its handle, and the handle's
/// `IntoResource`/`IntoPrompt` impl whose body `def` writes.
fn expand_free(
    args: TokenStream,
    input: TokenStream,
    what: &str,
    kind: &str,
    def: fn(&Ctxt, &Parsed, TokenStream, &Callee<'_>, &TokenStream) -> TokenStream,
) -> TokenStream {
    let cx = Ctxt::default();
    let scope = quote!(#args #input);
    let (item, parsed) = match parse_fn(&cx, input, what) {
        Ok(p) => p,
        Err(out) => return out,
    };
    let (impl_generics, state) = state_of(&parsed.context, &scope);
    let body = def(&cx, &parsed, args, &Callee::Free, &state);
    let out = unit_struct(&item, what);
    let handle = crate::handle::handle_path(&item.sig.ident, what);
    registration(cx, out, (impl_generics, state), &handle, kind, body)
}

/// An expression of type `ResourceDef<#state>` for a parsed `#[resource(args)]` function.
pub(crate) fn resource_def(
    cx: &Ctxt,
    parsed: &Parsed,
    args: TokenStream,
    callee: &Callee<'_>,
    state: &TokenStream,
) -> TokenStream {
    let mut resource = ResourceArgs {
        keys: Keys::default(),
    };
    let parser = |input: ParseStream<'_>| -> syn::Result<()> {
        if input.is_empty() {
            return Err(
                input.error("#[resource] needs its URI first: #[resource(\"books://{id}\")]")
            );
        }
        resource.keys.uri = Some(input.parse()?);
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
            parse_keys(cx, input, "resource", RESOURCE_KEYS, &mut resource.keys)?;
        }
        Ok(())
    };
    if let Err(e) = syn::parse::Parser::parse2(parser, args) {
        cx.push(e);
    }
    let Parsed { params, docs, .. } = parsed;
    let uri = resource.keys.uri.clone();
    if let Some(uri) = &uri {
        match template_variables(&uri.value()) {
            Err(message) => cx.error(uri, message),
            Ok(vars) => {
                for var in &vars {
                    if !params.iter().any(|p| &p.wire == var) {
                        cx.error(uri, format!("URI template variable `{{{var}}}` has no parameter named `{var}`; add `{var}: String` (or any type that parses from text) to the function"));
                    }
                }
                for p in params {
                    if !vars.contains(&p.wire) {
                        cx.error(
                            &p.ident,
                            format!(
                                "parameter `{}` is not a variable of the URI template `{}`",
                                p.wire,
                                uri.value()
                            ),
                        );
                    }
                }
            }
        }
    }
    let ident = &parsed.sig.ident;
    match (&uri, cx.has_errors()) {
        (Some(uri), false) => {
            let name = resource
                .keys
                .name
                .as_ref()
                .map(LitStr::value)
                .unwrap_or_else(|| ident.to_string());
            let description = resource
                .keys
                .description
                .as_ref()
                .map(|d| Doc::Text(d.value()))
                .or_else(|| docs.clone());
            let mime = resource.keys.mime_type.as_ref().map(LitStr::value);
            let mime_tokens = match &mime {
                Some(m) => quote!(::std::option::Option::Some(#m)),
                None => quote!(::std::option::Option::None),
            };
            let takes = params.iter().map(|p| {
                let (ident, ty, inner, wire) = (&p.ident, &p.ty, &p.inner, &p.wire);
                let f = if p.optional { quote!(uri_var_opt) } else { quote!(uri_var) };
                let rt = crate::runtime::at(inner.span());
                quote_spanned!(inner.span()=> let #ident: #ty = #rt::__private::#f::<#inner>(&mut __vars, #wire)?;)
            });
            let args = call_args(&parsed.sig, params);
            let call = invoke(parsed, callee, &args);
            let capture = capture(parsed, callee);
            let mut builders = Vec::new();
            if let Some(d) = description {
                builders.push(quote!(.description(#d)));
            }
            if let Some(t) = &resource.keys.title {
                builders.push(quote!(.title(#t)));
            }
            if let Some(m) = &mime {
                builders.push(quote!(.mime_type(#m)));
            }
            builders.extend(icons_and_meta(
                &resource.keys.icons,
                resource.keys.meta.as_ref(),
            ));
            builders.extend(scopes(&resource.keys.scopes));
            builders.extend(completers(params, callee, state));
            let ret_span = return_span(&parsed.sig);
            let rt = crate::runtime::at(ret_span);
            let convert = quote_spanned!(ret_span=> #rt::server::IntoReadResult::into_read_result(__ret, &__uri, #mime_tokens));
            quote!({
                let __handler: #RT::server::ResourceHandler<#state> = { #capture ::std::sync::Arc::new(
                    move |__ctx: #RT::lowlevel::RequestContext<#state>, __uri: ::std::string::String, mut __vars: ::std::collections::BTreeMap<::std::string::String, ::std::string::String>| {
                        #capture
                        ::std::boxed::Box::pin(async move {
                            #(#takes)*
                            let _ = (&__ctx, &mut __vars);
                            let __ret = #call;
                            #convert
                        })
                    },
                ) };
                #RT::__private::resource_def::<#state>(#uri, #name, __handler) #(#builders)*
            })
        }
        _ => quote!(::std::unreachable!("this resource did not compile")),
    }
}

/// The errors, the function and its unit struct, and `impl IntoX<S> for Handle { body }`.
fn registration(
    cx: Ctxt,
    out: TokenStream,
    (impl_generics, state): (TokenStream, TokenStream),
    handle: &TokenStream,
    kind: &str,
    body: TokenStream,
) -> TokenStream {
    let errors = cx.into_compile_errors();
    let trait_name = format_ident!("Into{kind}");
    let method = format_ident!("into_{}", kind.to_lowercase());
    let def = format_ident!("{kind}Def");
    quote! {
        #errors
        #out
        #[diagnostic::do_not_recommend]
        impl #impl_generics #RT::server::#trait_name<#state> for #handle {
            fn #method(self) -> #RT::server::#def<#state> {
                #body
            }
        }
    }
}

/// Where errors about the return type land.
fn return_span(sig: &syn::Signature) -> Span {
    match &sig.output {
        syn::ReturnType::Type(_, ty) => ty.span(),
        syn::ReturnType::Default => sig.ident.span(),
    }
}

pub(crate) fn expand_prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    expand_free(args, input, "prompt", "Prompt", prompt_def)
}

/// An expression of type `PromptDef<#state>` for a parsed `#[prompt(args)]` function.
pub(crate) fn prompt_def(
    cx: &Ctxt,
    parsed: &Parsed,
    args: TokenStream,
    callee: &Callee<'_>,
    state: &TokenStream,
) -> TokenStream {
    let mut keys = Keys::default();
    let parser = |input: ParseStream<'_>| parse_keys(cx, input, "prompt", PROMPT_KEYS, &mut keys);
    if let Err(e) = syn::parse::Parser::parse2(parser, args) {
        cx.push(e);
    }
    let Parsed { params, docs, .. } = parsed;
    for p in params {
        let is_string = last_segment(&p.inner).is_some_and(|s| s.ident == "String");
        if !is_string {
            cx.error(
                &p.ty,
                "a prompt argument is text: use `String`, or `Option<String>` for an optional one",
            );
        }
    }
    let ident = &parsed.sig.ident;
    if cx.has_errors() {
        quote!(::std::unreachable!("this prompt did not compile"))
    } else {
        let name = keys
            .name
            .as_ref()
            .map(LitStr::value)
            .unwrap_or_else(|| ident.to_string());
        let takes = params.iter().map(|p| {
            let (ident, wire) = (&p.ident, &p.wire);
            if p.optional {
                quote!(let #ident = __args.remove(#wire);)
            } else {
                quote!(let #ident = __args.remove(#wire).unwrap_or_default();)
            }
        });
        let args = call_args(&parsed.sig, params);
        let call = invoke(parsed, callee, &args);
        let capture = capture(parsed, callee);
        let mut builders = Vec::new();
        if let Some(d) = keys
            .description
            .as_ref()
            .map(|d| Doc::Text(d.value()))
            .or_else(|| docs.clone())
        {
            builders.push(quote!(.description(#d)));
        }
        if let Some(t) = &keys.title {
            builders.push(quote!(.title(#t)));
        }
        builders.extend(icons_and_meta(&keys.icons, keys.meta.as_ref()));
        builders.extend(scopes(&keys.scopes));
        for p in params {
            let wire = &p.wire;
            let required = !p.optional;
            let description = match &p.description {
                Some(d) => quote!(::std::option::Option::Some(#d)),
                None => quote!(::std::option::Option::None),
            };
            builders.push(quote!(.argument(#wire, #description, #required)));
        }
        builders.extend(completers(params, callee, state));
        let ret_span = return_span(&parsed.sig);
        let rt = crate::runtime::at(ret_span);
        let convert =
            quote_spanned!(ret_span=> #rt::server::IntoPromptResult::into_prompt_result(__ret));
        quote!({
            let __handler: #RT::server::PromptHandler<#state> = { #capture ::std::sync::Arc::new(
                move |__ctx: #RT::lowlevel::RequestContext<#state>, mut __args: ::std::collections::BTreeMap<::std::string::String, ::std::string::String>| {
                    #capture
                    ::std::boxed::Box::pin(async move {
                        #(#takes)*
                        let _ = (&__ctx, &mut __args);
                        let __ret = #call;
                        #convert
                    })
                },
            ) };
            #RT::server::PromptDef::<#state>::with_handler(#name, __handler) #(#builders)*
        })
    }
}
