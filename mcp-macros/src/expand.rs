//! Code generation: a `ToolDef` per tool, reached through paths of the runtime crate only
//! (`#RT`, see `runtime.rs`).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::ast::{Param, Receiver, Ret, ToolFn};
use crate::definition_builders::{icons_and_meta, scopes};
use crate::runtime::RT;

/// How the generated handler reaches the user's function.
pub(crate) enum Target<'a> {
    /// `function(args)` (a free function).
    Free(&'a syn::Ident),
    /// `__this.method(args)` or `Type::method(args)`.
    Method(&'a syn::Type),
}

/// The state type a tool's handler is generic over, or fixed to.
pub(crate) fn state_type(tool: &ToolFn) -> Option<TokenStream> {
    match tool.state() {
        Some(Some(ty)) => Some(quote!(#ty)),
        Some(None) => Some(quote!(())),
        None => None,
    }
}

/// The impl generics and the state type of a registration: fixed when the function names its
/// `RequestContext<S>`, generic over any state otherwise. `scope` is what the user wrote (the
/// item and its attribute's arguments): the generic is named `S`, as the SDK's messages call
/// the state, unless the user's code already uses that name.
pub(crate) fn state_generics(
    state: Option<TokenStream>,
    scope: &TokenStream,
) -> (TokenStream, TokenStream) {
    match state {
        Some(s) => (quote!(), s),
        None => {
            let s = generic_state_name(scope);
            (
                quote!(<#s: ::std::marker::Send + ::std::marker::Sync + 'static>),
                quote!(#s),
            )
        }
    }
}

/// `S`, or another readable name the user's code does not use: compiler messages about a
/// registration that is generic over the server's state show it (`IntoCompleter<S, _>`).
fn generic_state_name(scope: &TokenStream) -> proc_macro2::Ident {
    fn uses(tokens: &TokenStream, name: &str) -> bool {
        tokens.clone().into_iter().any(|t| match t {
            proc_macro2::TokenTree::Ident(i) => i == name,
            proc_macro2::TokenTree::Group(g) => uses(&g.stream(), name),
            _ => false,
        })
    }
    let name = ["S", "AnyState", "ServerState", "__S"]
        .into_iter()
        .find(|name| !uses(scope, name))
        .unwrap_or("__S");
    proc_macro2::Ident::new(name, proc_macro2::Span::call_site())
}

/// An expression of type `::modelctx::server::ToolDef<#state>`.
pub(crate) fn tool_def(tool: &ToolFn, target: Target<'_>, state: &TokenStream) -> TokenStream {
    let name = &tool.name;
    let mut schema_args = Vec::new();
    let mut takes = Vec::new();
    let mut call_args = Vec::new();
    for (index, param) in tool.params.iter().enumerate() {
        let decoder = quote::format_ident!("__decode{}", index);
        match param {
            Param::Context { .. } => call_args.push(quote!(__ctx.clone())),
            Param::State { .. } => call_args.push(quote!(#RT::server::State::of(&__ctx))),
            Param::Arg(arg) => {
                let (ident, ty, schema_ty, wire) = (&arg.ident, &arg.ty, &arg.schema_ty, &arg.wire);
                let span = arg.span();
                let description = match &arg.description {
                    Some(d) => quote!(::std::option::Option::Some(::std::string::String::from(#d))),
                    None => quote!(::std::option::Option::None),
                };
                let optional = arg.optional;
                let nullable = arg.optional && arg.attrs.default.is_none();
                // A string literal default for a `String` parameter needs a conversion.
                let default_expr = arg.attrs.default.as_ref().map(|expr| match expr {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(_),
                        ..
                    }) => {
                        quote!(::std::convert::From::from(#expr))
                    }
                    other => quote!(#other),
                });
                let default = match &default_expr {
                    Some(expr) => quote!({
                        let __d: #ty = #expr;
                        #RT::__private::default_json(&__d)
                    }),
                    None => quote!(::std::option::Option::None),
                };
                let collection = crate::constraints::is_list(schema_ty);
                // A type the macro cannot read (an alias) gets both keywords: each applies only
                // to its own JSON type.
                let unknown = arg
                    .checks
                    .iter()
                    .any(|(_, marker)| *marker == "TextOrListArgument");
                let mut constraints: Vec<(String, String)> = Vec::new();
                for (k, v) in &arg.attrs.constraints {
                    let items = match *k {
                        "minLength" => Some("minItems"),
                        "maxLength" => Some("maxItems"),
                        _ => None,
                    };
                    match items {
                        Some(items) if collection => {
                            constraints.push((items.to_owned(), v.clone()))
                        }
                        Some(items) if unknown => {
                            constraints.push(((*k).to_owned(), v.clone()));
                            constraints.push((items.to_owned(), v.clone()));
                        }
                        _ => constraints.push(((*k).to_owned(), v.clone())),
                    }
                }
                if let Some(p) = &arg.attrs.pattern {
                    constraints.push(("pattern".into(), crate::json_text::string(&p.value())));
                }
                let constraints_json = format!(
                    "{{{}}}",
                    constraints
                        .iter()
                        .map(|(k, v)| format!("\"{k}\":{v}"))
                        .collect::<Vec<_>>()
                        .join(",")
                );
                for (key_span, marker) in &arg.checks {
                    let marker = syn::Ident::new(marker, *key_span);
                    schema_args.push(quote_spanned!(*key_span=>
                        let _: () = <#schema_ty as #RT::server::checks::#marker>::FITS;
                    ));
                }
                schema_args.push(quote_spanned!(span=>
                    (&&#RT::server::checks::ArgProbe::<#schema_ty>::new()).context_check();
                    let #decoder = <#schema_ty as #RT::server::checks::ToolArgument>::declare(&mut __schema, #wire, #RT::server::ArgSpec {
                        description: #description,
                        optional: #optional,
                        default: #default,
                        constraints: #RT::__private::json_object(#constraints_json),
                    }, #nullable);
                ));
                takes.push(match &default_expr {
                    Some(expr) => quote_spanned!(span=>
                        let #ident: #ty = #decoder.take_or(&mut __args, #wire, || -> #ty { #expr })?;
                    ),
                    None if arg.optional => quote_spanned!(span=>
                        let #ident: #ty = #decoder.take_opt(&mut __args, #wire)?;
                    ),
                    None => quote_spanned!(span=>
                        let #ident: #ty = #decoder.take(&mut __args, #wire)?;
                    ),
                });
                call_args.push(quote!(#ident));
            }
        }
    }

    let fn_ident = &tool.ident;
    let (capture, callee) = match (&target, &tool.receiver) {
        // Bound before the arguments, which may be named like the function.
        (Target::Free(path), _) => (quote!(let __function = #path;), quote!(__function)),
        (Target::Method(_), Receiver::Ref) => (
            quote!(let __this = __this.clone();),
            quote!(__this.#fn_ident),
        ),
        (Target::Method(ty), Receiver::None) => (quote!(), quote!(<#ty>::#fn_ident)),
    };
    let invoke = if tool.is_async {
        quote!(#callee(#(#call_args),*).await)
    } else {
        quote!(#RT::__private::run_blocking(move || #callee(#(#call_args),*)).await?)
    };
    let probe = quote!(#RT::server::output::Probe);
    let (convert, ok_ty, route) = match &tool.ret {
        Ret::Unit => (
            quote!(::std::result::Result::Ok(__convert(__ret))),
            quote!(()),
            quote!(),
        ),
        Ret::Plain(ty) => (
            quote!(::std::result::Result::Ok(__convert(__ret))),
            quote!(#ty),
            quote!(),
        ),
        Ret::Result { full, ok, err } => {
            let err_ty = match err {
                Some(e) => quote!(#e),
                None => quote!(<#full as #RT::__private::ResultParts>::Err),
            };
            let err_span = err.as_ref().map_or_else(
                || syn::spanned::Spanned::span(ok),
                syn::spanned::Spanned::span,
            );
            (
                quote!(match __ret {
                    ::std::result::Result::Ok(__v) => ::std::result::Result::Ok(__convert(__v)),
                    ::std::result::Result::Err(__e) => ::std::result::Result::Err(__route(__e)),
                }),
                quote!(#ok),
                {
                    let rt = crate::runtime::at(err_span);
                    let call = quote_spanned!(err_span=> (&&&#probe::<#err_ty>::new()).route(<#err_ty as #rt::server::output::ToolFailure>::logged()));
                    quote!(
                        let __route: #RT::server::output::Route<#err_ty> = {
                            #[allow(unused_imports)]
                            use #RT::server::output::{ProbeToolError as _, ProbeMcpError as _, ProbeFailure as _};
                            #call
                        };
                    )
                },
            )
        }
    };
    let ok_span = match &tool.ret {
        Ret::Plain(ty) | Ret::Result { ok: ty, .. } => syn::spanned::Spanned::span(ty),
        Ret::Unit => tool.span(),
    };
    let conversion = {
        let call = quote_spanned!(ok_span=> (&&&#probe::<#ok_ty>::new()).conversion());
        quote!(
            let (__convert, __output): #RT::server::output::Conversion<#ok_ty> = {
                #[allow(unused_imports)]
                use #RT::server::output::{ProbeResultAlias as _, ProbeContent as _, ProbeStructured as _};
                #call
            };
        )
    };

    let description = match &tool.description {
        Some(d) => quote!(#d),
        None => quote!(""),
    };
    let mut builders = vec![quote!(.description(#description))];
    if let Some(title) = &tool.attrs.title {
        builders.push(quote!(.title(#title)));
    }
    if !tool.attrs.hints.is_empty() {
        let setters = tool.attrs.hints.iter().map(|(k, v)| {
            let setter = syn::Ident::new(
                match *k {
                    "readOnlyHint" => "with_read_only",
                    "destructiveHint" => "with_destructive",
                    "idempotentHint" => "with_idempotent",
                    _ => "with_open_world",
                },
                proc_macro2::Span::call_site(),
            );
            quote!(.#setter(#v))
        });
        builders.push(quote!(.annotations(
            #RT::types::ToolAnnotations::new() #(#setters)*
        )));
    }
    builders.extend(icons_and_meta(&tool.attrs.icons, tool.attrs.meta.as_ref()));
    builders.extend(scopes(&tool.attrs.scopes));
    if let Some(task) = &tool.attrs.task {
        builders.push(quote!(.task_support(#RT::server::TaskSupport::#task)));
    }

    quote!({
        #conversion
        #route
        let mut __schema = #RT::server::ArgsSchema::new();
        #[allow(unused_imports)]
        use #RT::server::checks::{ProbeArg as _, ProbeContextArg as _};
        #(#schema_args)*
        let __handler: #RT::server::ToolHandler<#state> = ::std::sync::Arc::new(
            move |__ctx: #RT::lowlevel::RequestContext<#state>, mut __args: #RT::server::Arguments| {
                #capture
                ::std::boxed::Box::pin(async move {
                    #(#takes)*
                    let _ = &__ctx;
                    let _ = &mut __args;
                    let __ret = #invoke;
                    #convert
                })
            },
        );
        let __def = #RT::__private::tool_def::<#state>(#name, __schema, __handler) #(#builders)*;
        match __output {
            ::std::option::Option::Some((__out, __is_object)) => #RT::__private::with_output(__def, __out, __is_object),
            ::std::option::Option::None => __def,
        }
    })
}
