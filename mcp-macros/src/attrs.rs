//! The keys of `#[tool(...)]` and `#[arg(...)]`.

use std::collections::HashSet;

use proc_macro2::TokenStream;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Expr, LitBool, LitStr, Token};

use crate::ctxt::Ctxt;
use crate::suggest::unknown_key;

pub(crate) const TOOL_KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "icon",
    "meta",
    "scopes",
    "task",
];

pub(crate) const TEXT_ARG_KEYS: &[&str] = &["complete", "description", "rename"];

pub(crate) const ARG_KEYS: &[&str] = &[
    "default",
    "range",
    "length",
    "pattern",
    "description",
    "rename",
];

/// `#[tool(...)]`.
#[derive(Default)]
pub(crate) struct ToolAttrs {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) hints: Vec<(&'static str, bool)>,
    pub(crate) icons: Vec<LitStr>,
    pub(crate) meta: Option<LitStr>,
    pub(crate) scopes: Vec<LitStr>,
    /// `task = "optional"`: the `TaskSupport` variant, spanned on the user's string.
    pub(crate) task: Option<syn::Ident>,
}

/// `#[arg(...)]`.
#[derive(Default)]
pub(crate) struct ArgAttrs {
    pub(crate) default: Option<Expr>,
    /// `(keyword, JSON number text)` pairs: `minimum`, `exclusiveMaximum`, `minLength`...
    pub(crate) constraints: Vec<(&'static str, String)>,
    pub(crate) pattern: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) rename: Option<LitStr>,
    pub(crate) complete: Option<Expr>,
    /// The `range` key, its bounds as numbers, and whether a bound is written as a float.
    pub(crate) range: Option<RangeKey>,
    /// The `length` key, for errors about the type it is put on.
    pub(crate) length: Option<LengthKey>,
}

/// `range(lo..=hi)` as written: where it is, and its bounds as numbers.
pub(crate) struct RangeKey {
    pub(crate) span: proc_macro2::Span,
    pub(crate) float: bool,
    pub(crate) lo: Option<f64>,
    /// The upper bound and whether it is inclusive.
    pub(crate) hi: Option<(f64, bool)>,
    /// The range as written (`1..=10`), for messages.
    pub(crate) text: String,
}

/// `length(lo..=hi)` as written.
pub(crate) struct LengthKey {
    pub(crate) span: proc_macro2::Span,
    pub(crate) lo: Option<u64>,
    /// The largest length allowed.
    pub(crate) hi: Option<u64>,
    pub(crate) text: String,
}

/// Refuses a key given twice.
fn first_time(
    cx: &Ctxt,
    seen: &mut HashSet<String>,
    meta: &ParseNestedMeta<'_>,
    what: &str,
) -> bool {
    let key = meta
        .path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default();
    if seen.insert(key.clone()) || key == "icon" {
        true
    } else {
        cx.error(
            &meta.path,
            format!("`{key}` is given twice in #[{what}(...)]"),
        );
        false
    }
}

/// Skips the value of a key that was refused, so parsing can go on.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        let _: Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _: proc_macro2::Group = meta.input.parse()?;
    }
    Ok(())
}

fn flag(meta: &ParseNestedMeta<'_>) -> syn::Result<bool> {
    if meta.input.peek(Token![=]) {
        let b: LitBool = meta.value()?.parse()?;
        Ok(b.value)
    } else {
        Ok(true)
    }
}

/// `task = "forbidden" | "optional" | "required"`: the `TaskSupport` variant it names.
fn parse_task(cx: &Ctxt, lit: &LitStr) -> Option<syn::Ident> {
    let variant = match lit.value().as_str() {
        "forbidden" => "Forbidden",
        "optional" => "Optional",
        "required" => "Required",
        _ => {
            cx.error(
                lit,
                "`task` is \"forbidden\", \"optional\" or \"required\" (whether the tool runs \
                 as a task of the tasks extension)",
            );
            return None;
        }
    };
    Some(syn::Ident::new(variant, lit.span()))
}

/// `scopes = ["a", "b"]`: OAuth scope tokens (RFC 6749 §3.3: printable ASCII, no space, `"` or
/// `\\`). Each mistake is reported on its own literal.
pub(crate) fn parse_scopes(cx: &Ctxt, value: &Expr) -> Vec<LitStr> {
    let Expr::Array(array) = value else {
        cx.error(
            value,
            "`scopes` takes a list of scope names, e.g. scopes = [\"books:write\"]",
        );
        return Vec::new();
    };
    let mut scopes = Vec::new();
    for element in &array.elems {
        match element {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(lit),
                ..
            }) => {
                let text = lit.value();
                let valid = !text.is_empty()
                    && text
                        .bytes()
                        .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\');
                if valid {
                    scopes.push(lit.clone());
                } else {
                    cx.error(
                        lit,
                        "a scope is one non-empty word of printable ASCII without spaces, quotes or backslashes (list several as separate strings)",
                    );
                }
            }
            other => cx.error(
                other,
                "a scope must be a string literal, e.g. \"books:write\"",
            ),
        }
    }
    scopes
}

pub(crate) fn parse_tool_attrs(cx: &Ctxt, args: TokenStream) -> ToolAttrs {
    let mut attrs = ToolAttrs::default();
    let mut seen = HashSet::new();
    let parser = syn::meta::parser(|meta| {
        let key = meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        if key == "crate" {
            cx.error(&meta.path, crate::runtime::CRATE_ON_A_METHOD);
            return skip_value(&meta);
        }
        if !TOOL_KEYS.contains(&key.as_str()) {
            cx.error(&meta.path, unknown_key("tool", &key, TOOL_KEYS));
            return skip_value(&meta);
        }
        if !first_time(cx, &mut seen, &meta, "tool") {
            return skip_value(&meta);
        }
        match key.as_str() {
            "name" => attrs.name = Some(meta.value()?.parse()?),
            "title" => attrs.title = Some(meta.value()?.parse()?),
            "description" => attrs.description = Some(meta.value()?.parse()?),
            "icon" => attrs.icons.push(meta.value()?.parse()?),
            "scopes" => attrs.scopes = parse_scopes(cx, &meta.value()?.parse()?),
            "task" => attrs.task = parse_task(cx, &meta.value()?.parse()?),
            "meta" => {
                let lit: LitStr = meta.value()?.parse()?;
                if !crate::json_text::is_object(&lit.value()) {
                    cx.error(
                        &lit,
                        "`meta` must be a JSON object, e.g. meta = r#\"{\"vendor/key\": 1}\"#",
                    );
                }
                attrs.meta = Some(lit);
            }
            "read_only" => attrs.hints.push(("readOnlyHint", flag(&meta)?)),
            "destructive" => attrs.hints.push(("destructiveHint", flag(&meta)?)),
            "idempotent" => attrs.hints.push(("idempotentHint", flag(&meta)?)),
            _ => attrs.hints.push(("openWorldHint", flag(&meta)?)),
        }
        Ok(())
    });
    if let Err(e) = syn::parse::Parser::parse2(parser, args) {
        cx.push(e);
    }
    attrs
}

pub(crate) fn parse_arg_attrs(
    cx: &Ctxt,
    attr: &syn::Attribute,
    into: &mut ArgAttrs,
    seen: &mut HashSet<String>,
    known: &[&str],
) {
    let result = attr.parse_nested_meta(|meta| {
        let key = meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        if !known.contains(&key.as_str()) {
            cx.error(&meta.path, unknown_key("arg", &key, known));
            return skip_value(&meta);
        }
        if !first_time(cx, seen, &meta, "arg") {
            return skip_value(&meta);
        }
        match key.as_str() {
            "default" => into.default = Some(meta.value()?.parse()?),
            "pattern" => {
                let lit: LitStr = meta.value()?.parse()?;
                if let Err(message) = crate::pattern::check(&lit.value()) {
                    cx.error(&lit, message);
                }
                into.pattern = Some(lit);
            }
            "description" => into.description = Some(meta.value()?.parse()?),
            "rename" => into.rename = Some(meta.value()?.parse()?),
            "complete" => into.complete = Some(meta.value()?.parse()?),
            "range" => {
                let content;
                syn::parenthesized!(content in meta.input);
                let expr: Expr = content.parse()?;
                match parse_range(&expr, true) {
                    Ok((lo, hi)) => {
                        into.range = Some(RangeKey {
                            span: meta.path.span(),
                            float: lo
                                .iter()
                                .chain(hi.iter())
                                .any(|(t, _)| t.contains(['.', 'e', 'E'])),
                            lo: lo.as_ref().and_then(|(t, _)| t.parse().ok()),
                            hi: hi
                                .as_ref()
                                .and_then(|(t, inclusive)| Some((t.parse().ok()?, *inclusive))),
                            text: quote::ToTokens::to_token_stream(&expr)
                                .to_string()
                                .replace(' ', ""),
                        });
                        if let Some((v, _)) = lo {
                            into.constraints.push(("minimum", v));
                        }
                        if let Some((v, inclusive)) = hi {
                            into.constraints.push((
                                if inclusive {
                                    "maximum"
                                } else {
                                    "exclusiveMaximum"
                                },
                                v,
                            ));
                        }
                    }
                    Err(message) => cx.error(&expr, message),
                }
            }
            _ => {
                let content;
                syn::parenthesized!(content in meta.input);
                let expr: Expr = content.parse()?;
                match parse_range(&expr, false) {
                    Ok((lo, hi)) => {
                        into.length = Some(LengthKey {
                            span: meta.path.span(),
                            lo: lo.as_ref().and_then(|(t, _)| t.parse().ok()),
                            hi: hi.as_ref().and_then(|(t, inclusive)| {
                                let v: u64 = t.parse().ok()?;
                                Some(if *inclusive { v } else { v.saturating_sub(1) })
                            }),
                            text: quote::ToTokens::to_token_stream(&expr)
                                .to_string()
                                .replace(' ', ""),
                        });
                        if let Some((v, _)) = lo {
                            into.constraints.push(("minLength", v));
                        }
                        if let Some((v, inclusive)) = hi {
                            let max = if inclusive {
                                v
                            } else {
                                (v.parse::<u64>().unwrap_or(1).saturating_sub(1)).to_string()
                            };
                            into.constraints.push(("maxLength", max));
                        }
                    }
                    Err(message) => cx.error(&expr, message),
                }
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        cx.push(e);
    }
}

type Bound = Option<(String, bool)>;

/// A range of literal numbers: `1..=50`, `1..50`, `1..`, `..=50`. For lengths, integers >= 0.
fn parse_range(expr: &Expr, signed: bool) -> Result<(Bound, Bound), String> {
    const SHAPE: &str =
        "malformed range: expected literal bounds such as `1..=50`, `1..` or `..=50`";
    let Expr::Range(range) = expr else {
        return Err(SHAPE.into());
    };
    let number = |e: &Expr| -> Result<(String, f64), String> {
        let (negative, inner) = match e {
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) && signed => (true, &*u.expr),
            other => (false, other),
        };
        let text = match inner {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => i.base10_digits().to_owned(),
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Float(f),
                ..
            }) if signed => f.base10_digits().to_owned(),
            _ => return Err(SHAPE.into()),
        };
        let text = if negative { format!("-{text}") } else { text };
        let value: f64 = text.parse().map_err(|_| SHAPE.to_owned())?;
        // `1.` or `1e3` are Rust, not JSON: write floats the way JSON does.
        let text = if text.contains(['.', 'e', 'E']) {
            crate::json_text::float(value).ok_or_else(|| SHAPE.to_owned())?
        } else {
            text
        };
        Ok((text, value))
    };
    let lo = range.start.as_deref().map(number).transpose()?;
    let hi = range.end.as_deref().map(number).transpose()?;
    let inclusive = matches!(range.limits, syn::RangeLimits::Closed(_));
    if lo.is_none() && hi.is_none() {
        return Err("malformed range: give at least one bound, e.g. `1..` or `..=50`".into());
    }
    if let (Some((a, x)), Some((b, y))) = (&lo, &hi) {
        if x > y || (!inclusive && x >= y) {
            return Err(format!(
                "malformed range: `{a}` is not below `{b}`, so no value fits"
            ));
        }
    }
    Ok((lo.map(|(t, _)| (t, true)), hi.map(|(t, _)| (t, inclusive))))
}
