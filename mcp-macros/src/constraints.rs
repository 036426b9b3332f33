//! `range`, `length`, `pattern` and `default` of `#[arg(...)]` against the parameter's type.
//!
//! Where the type is spelled as a known type (`String`, `i32`, `f64`, `Vec<T>`, `bool`, inside
//! `Option` or not) the macro says directly what is wrong; for any other type (an alias, a user
//! type) it asks the compiler, with a bound on a marker trait of `modelctx::__private` at the key's
//! span, whose message reads as the macro's would.

use proc_macro2::Span;
use syn::{Expr, Lit, Type};

use crate::attrs::ArgAttrs;
use crate::ctxt::Ctxt;
use crate::spelling::{generic_args, last_segment};

/// What a type's spelling says about its JSON shape.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    Integer,
    Float,
    Text,
    List,
    Bool,
    /// An alias or a user type: the compiler decides.
    Unknown,
}

/// Whether `minLength`/`maxLength` of `length(..)` become `minItems`/`maxItems`: `ty` is
/// spelled as a list (`Vec`, sets, arrays, a `Box` or `Option` of one).
pub(crate) fn is_list(ty: &Type) -> bool {
    matches!(kind(ty), Kind::List)
}

/// What the macro can tell of `ty` by its spelling.
pub(crate) fn kind(ty: &Type) -> Kind {
    match ty {
        Type::Array(_) | Type::Slice(_) => return Kind::List,
        Type::Paren(p) => return kind(&p.elem),
        Type::Group(g) => return kind(&g.elem),
        _ => {}
    }
    let Some(seg) = last_segment(ty) else {
        return Kind::Unknown;
    };
    let name = seg.ident.to_string();
    match name.as_str() {
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64" | "u128"
        | "usize" => Kind::Integer,
        n if n.starts_with("NonZero") => Kind::Integer,
        "f32" | "f64" => Kind::Float,
        "String" | "str" => Kind::Text,
        "bool" => Kind::Bool,
        "Vec" | "VecDeque" | "HashSet" | "BTreeSet" | "LinkedList" | "BinaryHeap" => Kind::List,
        "Option" | "Box" | "Arc" | "Rc" => match generic_args(seg).as_slice() {
            [inner] => kind(inner),
            _ => Kind::Unknown,
        },
        _ => Kind::Unknown,
    }
}

/// `Vec < String >` -> `Vec<String>`.
pub(crate) fn type_text(ty: &Type) -> String {
    quote::quote!(#ty)
        .to_string()
        .replace(" <", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" ,", ",")
        .replace("& ", "&")
}

/// A literal number, possibly negated.
fn literal_number(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => literal_number(&u.expr).map(|v| -v),
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_digits().parse().ok(),
            Lit::Float(f) => f.base10_digits().parse().ok(),
            _ => None,
        },
        Expr::Paren(p) => literal_number(&p.expr),
        _ => None,
    }
}

/// Reports the constraints that do not fit `ty` (the type inside `Option`), and returns the
/// marker-trait bounds to generate where the spelling does not tell.
pub(crate) fn check(cx: &Ctxt, ty: &Type, attrs: &ArgAttrs) -> Vec<(Span, &'static str)> {
    let mut bounds = Vec::new();
    let kind = kind(ty);
    let name = type_text(ty);
    if let Some(range) = &attrs.range {
        let text = &range.text;
        match kind {
            Kind::Integer if range.float => cx.error_at(
                range.span,
                format!("`{name}` is an integer but `range({text})` has a fractional bound: write whole numbers, or make the parameter `f64`"),
            ),
            Kind::Integer | Kind::Float => {}
            Kind::Text => cx.error_at(
                range.span,
                format!("`range` applies to numbers; `{name}` is text: to limit how many characters it has, write `length(..)`"),
            ),
            Kind::List => cx.error_at(
                range.span,
                format!("`range` applies to numbers; `{name}` is a list: to limit how many items it has, write `length(..)`"),
            ),
            Kind::Bool => cx.error_at(
                range.span,
                format!("`range` applies to numbers; `{name}` is not a number"),
            ),
            Kind::Unknown => bounds.push((
                range.span,
                if range.float { "FloatArgument" } else { "NumberArgument" },
            )),
        }
    }
    if let Some(length) = &attrs.length {
        let text = &length.text;
        match kind {
            Kind::Text | Kind::List => {}
            Kind::Integer | Kind::Float => cx.error_at(
                length.span,
                format!("`length` applies to text and lists; `{name}` is a number: to bound its value, write `range({text})`"),
            ),
            Kind::Bool => cx.error_at(
                length.span,
                format!("`length` applies to text and lists; `{name}` is neither"),
            ),
            Kind::Unknown => bounds.push((length.span, "TextOrListArgument")),
        }
    }
    if let Some(pattern) = &attrs.pattern {
        match kind {
            Kind::Text => {}
            Kind::Integer | Kind::Float => cx.error(
                pattern,
                format!("`pattern` applies to text; `{name}` is a number: to bound its value, use `range(..)`"),
            ),
            Kind::List | Kind::Bool => cx.error(
                pattern,
                format!("`pattern` applies to text; `{name}` is not text"),
            ),
            Kind::Unknown => bounds.push((pattern.span(), "TextArgument")),
        }
    }
    if let Some(default) = &attrs.default {
        check_default(cx, default, attrs);
    }
    bounds
}

/// A literal default must satisfy the arg's own literal constraints.
fn check_default(cx: &Ctxt, default: &Expr, attrs: &ArgAttrs) {
    if let (Some(value), Some(range)) = (literal_number(default), &attrs.range) {
        let below = range.lo.is_some_and(|lo| value < lo);
        let above = range
            .hi
            .is_some_and(|(hi, inclusive)| if inclusive { value > hi } else { value >= hi });
        if below || above {
            cx.error(
                default,
                format!(
                    "the default is outside `range({})`: a value the tool gets when the argument is absent must be one a client may send",
                    range.text
                ),
            );
        }
    }
    if let (
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }),
        Some(length),
    ) = (default, &attrs.length)
    {
        let n = s.value().chars().count() as u64;
        if length.lo.is_some_and(|lo| n < lo) || length.hi.is_some_and(|hi| n > hi) {
            cx.error(
                default,
                format!(
                    "the default is {n} characters long, outside `length({})`: a value the tool gets when the argument is absent must be one a client may send",
                    length.text
                ),
            );
        }
    }
}
