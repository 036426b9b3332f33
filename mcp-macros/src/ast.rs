//! The model of one `#[tool]` function, read from its signature, its doc comments and its
//! attributes, with every mistake recorded in the [`Ctxt`].

use std::collections::HashSet;

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, LitStr, Pat, ReturnType, Type};

use crate::attrs::{parse_arg_attrs, ArgAttrs, ToolAttrs, ARG_KEYS};
use crate::ctxt::Ctxt;
use crate::docs::{doc_description, doc_text, Doc};
use crate::spelling::{generic_args, last_segment};

pub(crate) enum Receiver {
    None,
    Ref,
}

/// How a method takes `self`. The macros accept `&self` only: calls run side by side.
pub(crate) enum SelfTaken {
    Shared,
    Mutably,
    ByValue,
}

/// Reads `&self`, `&mut self` or `self` (any other form: by value) from a receiver.
pub(crate) fn self_taken(r: &syn::Receiver) -> SelfTaken {
    match &r.kind {
        syn::ReceiverKind::Reference(_, _, None) => SelfTaken::Shared,
        syn::ReceiverKind::Reference(_, _, Some(_)) => SelfTaken::Mutably,
        _ => SelfTaken::ByValue,
    }
}

pub(crate) struct ArgParam {
    pub(crate) ident: Ident,
    pub(crate) ty: Type,
    /// `T` for `Option<T>`, else the type itself: what the schema shows.
    pub(crate) schema_ty: Type,
    pub(crate) optional: bool,
    pub(crate) wire: String,
    pub(crate) description: Option<String>,
    pub(crate) attrs: ArgAttrs,
    /// Constraints the macro could not check by the type's spelling: `(key span, marker
    /// trait)` bounds the compiler checks on `schema_ty`.
    pub(crate) checks: Vec<(Span, &'static str)>,
}

pub(crate) enum Param {
    Arg(Box<ArgParam>),
    /// `RequestContext<S>`; `state` is `S` (None: `()` by default).
    Context {
        state: Option<Box<Type>>,
    },
    /// `State<S>`: the server's state, not an argument.
    State {
        state: Box<Type>,
    },
}

pub(crate) enum Ret {
    Plain(Box<Type>),
    Unit,
    /// A return type whose last path segment is `Result` (`Result<T, E>`, `io::Result<T>`,
    /// `anyhow::Result<T>`, `modelctx::Result<T>`); a one-argument alias's error type is read
    /// through `ResultParts`.
    Result {
        full: Box<Type>,
        ok: Box<Type>,
        err: Option<Box<Type>>,
    },
}

pub(crate) struct ToolFn {
    pub(crate) ident: Ident,
    pub(crate) name: String,
    pub(crate) name_span: Span,
    pub(crate) description: Option<Doc>,
    pub(crate) attrs: ToolAttrs,
    pub(crate) receiver: Receiver,
    pub(crate) is_async: bool,
    pub(crate) params: Vec<Param>,
    pub(crate) ret: Ret,
}

/// Strips `#[arg]` attributes from a signature (they are ours, not the compiler's).
pub(crate) fn strip_arg_attrs(sig: &mut syn::Signature) -> Vec<Vec<syn::Attribute>> {
    sig.inputs
        .iter_mut()
        .map(|input| match input {
            FnArg::Typed(pt) => {
                let (ours, theirs): (Vec<_>, Vec<_>) = pt
                    .attrs
                    .drain(..)
                    .partition(|a| a.path().is_ident("arg") || a.path().is_ident("doc"));
                pt.attrs = theirs;
                ours
            }
            FnArg::Receiver(_) => Vec::new(),
        })
        .collect()
}

fn is_valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

pub(crate) fn parse_tool_fn(
    cx: &Ctxt,
    sig: &syn::Signature,
    fn_attrs: &[syn::Attribute],
    param_attrs: &[Vec<syn::Attribute>],
    attrs: ToolAttrs,
) -> ToolFn {
    let ident = sig.ident.clone();
    let (name, name_span) = match &attrs.name {
        Some(lit) => (lit.value(), lit.span()),
        None => (syn::ext::IdentExt::unraw(&ident).to_string(), ident.span()),
    };
    if !is_valid_tool_name(&name) {
        cx.error_at(
            name_span,
            format!("`{name}` is not a valid tool name: use 1 to 128 characters from A-Z, a-z, 0-9, `_`, `-` and `.`"),
        );
    }
    let description = attrs
        .description
        .as_ref()
        .map(|d| Doc::Text(d.value()))
        .or_else(|| doc_description(fn_attrs));
    if description.is_none() {
        cx.error(
            &sig.ident,
            format!("tool `{name}` needs a description: write a doc comment (`/// ...`) above it, or #[tool(description = \"...\")]; the model reads it to decide when to call the tool"),
        );
    }
    if !sig.generics.params.is_empty() {
        cx.error(
            &sig.generics,
            "a tool cannot be generic: its schema is built from concrete parameter types",
        );
    }
    if sig.variadic.is_some() {
        cx.error(&sig.variadic, "a tool cannot be variadic");
    }

    let mut receiver = Receiver::None;
    let mut params = Vec::new();
    let mut has_context = false;
    let mut wires: Vec<(String, Ident)> = Vec::new();
    for (input, extra) in sig.inputs.iter().zip(param_attrs) {
        match input {
            FnArg::Receiver(r) => {
                match self_taken(r) {
                    SelfTaken::Shared => receiver = Receiver::Ref,
                    SelfTaken::Mutably => cx.error(r, "a tool method takes `&self`, not `&mut self`: calls run concurrently; keep mutable state behind a Mutex or an atomic"),
                    SelfTaken::ByValue => cx.error(r, "a tool method takes `&self`: taking `self` by value would consume the state it shares with every other call"),
                }
            }
            FnArg::Typed(pt) => {
                if let Some(state) = state_param(&pt.ty) {
                    params.push(Param::State { state });
                    continue;
                }
                if let Some(state) = context_state(&pt.ty) {
                    if has_context {
                        cx.error(
                            &pt.ty,
                            "a tool takes at most one `RequestContext` parameter",
                        );
                    }
                    has_context = true;
                    params.push(Param::Context { state });
                    continue;
                }
                let Pat::Ident(pat) = &*pt.pat else {
                    cx.error(&pt.pat, "a tool parameter needs a plain name: it becomes the argument's name in the schema");
                    continue;
                };
                let (schema_ty, optional) = match last_segment(&pt.ty) {
                    Some(seg) if seg.ident == "Option" && generic_args(seg).len() == 1 => {
                        (generic_args(seg)[0].clone(), true)
                    }
                    _ => ((*pt.ty).clone(), false),
                };
                if !owned_argument(cx, &schema_ty, optional) {
                    continue;
                }
                let mut arg_attrs = ArgAttrs::default();
                let mut seen = HashSet::new();
                for attr in extra.iter().filter(|a| a.path().is_ident("arg")) {
                    parse_arg_attrs(cx, attr, &mut arg_attrs, &mut seen, ARG_KEYS);
                }
                let checks = crate::constraints::check(cx, &schema_ty, &arg_attrs);
                if optional && arg_attrs.default.is_some() {
                    cx.error(&pt.ty, "a parameter with `#[arg(default = ...)]` is never absent: give it the plain type, not `Option<_>`");
                }
                let ident = pat.ident.clone();
                if ident.to_string().starts_with("__") {
                    cx.error(&ident, "parameter names starting with `__` are reserved for the code #[tool] generates; rename it (and use #[arg(rename = \"...\")] to keep the argument's name)");
                }
                let wire = arg_attrs
                    .rename
                    .as_ref()
                    .map(LitStr::value)
                    .unwrap_or_else(|| ident.to_string().trim_start_matches("r#").to_owned());
                let wire_span = arg_attrs.rename.as_ref().map_or(ident.span(), LitStr::span);
                unique_wire_name(cx, &mut wires, &wire, &ident, wire_span);
                let description = arg_attrs
                    .description
                    .as_ref()
                    .map(LitStr::value)
                    .or_else(|| doc_text(extra));
                params.push(Param::Arg(Box::new(ArgParam {
                    ident,
                    ty: (*pt.ty).clone(),
                    schema_ty,
                    optional: optional || arg_attrs.default.is_some(),
                    wire,
                    description,
                    attrs: arg_attrs,
                    checks,
                })));
            }
        }
    }

    let ret = match &sig.output {
        ReturnType::Default => Ret::Unit,
        ReturnType::Type(_, ty) => match last_segment(ty) {
            Some(seg) if seg.ident == "Result" => {
                let args = generic_args(seg);
                match args.as_slice() {
                    [ok] => Ret::Result {
                        full: ty.clone(),
                        ok: Box::new((*ok).clone()),
                        err: None,
                    },
                    [ok, err] => Ret::Result {
                        full: ty.clone(),
                        ok: Box::new((*ok).clone()),
                        err: Some(Box::new((*err).clone())),
                    },
                    _ => Ret::Plain(ty.clone()),
                }
            }
            _ => Ret::Plain(ty.clone()),
        },
    };

    ToolFn {
        ident,
        name,
        name_span,
        description,
        attrs,
        receiver,
        is_async: sig.asyncness.is_some(),
        params,
        ret,
    }
}

/// Refuses a borrowed or `impl Trait` argument type (also inside `Option`), saying what to write.
pub(crate) fn owned_argument(cx: &Ctxt, ty: &Type, in_option: bool) -> bool {
    match ty {
        Type::Reference(r) => {
            let (wrap, unwrap) = if in_option {
                ("Option<", ">")
            } else {
                ("", "")
            };
            let hint = match &*r.elem {
                Type::Path(p) if p.path.is_ident("str") => {
                    format!("use `{wrap}String{unwrap}` instead of `{wrap}&str{unwrap}`")
                }
                Type::Slice(_) => format!("use `{wrap}Vec<T>{unwrap}` instead of a slice"),
                _ => "take the value itself".to_owned(),
            };
            cx.error(
                ty,
                format!("a tool argument is decoded from JSON and owned by the call: {hint}"),
            );
            false
        }
        Type::ImplTrait(_) => {
            cx.error(ty, "a tool argument needs a concrete type (its JSON Schema is generated from it), not `impl Trait`");
            false
        }
        _ => true,
    }
}

/// Refuses a second parameter with the same argument name (one of the two would never be set).
pub(crate) fn unique_wire_name(
    cx: &Ctxt,
    wires: &mut Vec<(String, Ident)>,
    wire: &str,
    ident: &Ident,
    span: Span,
) {
    if let Some((_, first)) = wires.iter().find(|(w, _)| w == wire) {
        cx.error_at(
            span,
            format!("parameters `{first}` and `{ident}` both take the argument `{wire}`; give one another name with #[arg(rename = \"...\")]"),
        );
    } else {
        wires.push((wire.to_owned(), ident.clone()));
    }
}

/// `Some(state)` when `ty` is `RequestContext` or `RequestContext<S>` (any path).
pub(crate) fn context_state(ty: &Type) -> Option<Option<Box<Type>>> {
    let seg = last_segment(ty)?;
    if seg.ident != "RequestContext" {
        return None;
    }
    Some(generic_args(seg).first().map(|t| Box::new((*t).clone())))
}

/// `Some(S)` when `ty` is `State<S>` (any path): the server state as a parameter.
pub(crate) fn state_param(ty: &Type) -> Option<Box<Type>> {
    let seg = last_segment(ty)?;
    match generic_args(seg).as_slice() {
        [state] if seg.ident == "State" => Some(Box::new((*state).clone())),
        _ => None,
    }
}

impl ToolFn {
    /// The state type its context names, if any (`RequestContext<S>`).
    pub(crate) fn state(&self) -> Option<Option<&Type>> {
        self.params.iter().find_map(|p| match p {
            Param::Context { state } => Some(state.as_deref()),
            Param::State { state } => Some(Some(&**state)),
            Param::Arg(_) => None,
        })
    }

    pub(crate) fn span(&self) -> Span {
        self.ident.span()
    }
}

impl ArgParam {
    /// Where errors about the argument's type land: the type (inside `Option<...>`).
    pub(crate) fn span(&self) -> Span {
        self.schema_ty.span()
    }
}
