//! Doc comments become descriptions: lines of a paragraph are joined with spaces, paragraphs
//! with a blank line, leading and trailing blank lines dropped, one leading space per line
//! removed.

pub(crate) fn doc_text(attrs: &[syn::Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &attr.meta {
            if let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
            {
                for line in s.value().split('\n') {
                    lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
                }
            }
        }
    }
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in &lines {
        if line.trim().is_empty() {
            if !current.is_empty() {
                paragraphs.push(current.join(" "));
                current.clear();
            }
        } else {
            current.push(line.trim());
        }
    }
    if !current.is_empty() {
        paragraphs.push(current.join(" "));
    }
    (!paragraphs.is_empty()).then(|| paragraphs.join("\n\n"))
}

/// A description read from doc attributes: their text, or (when one of them is an expression,
/// such as `#[doc = include_str!("search.md")]`) an expression the compiler evaluates.
#[derive(Clone)]
pub(crate) enum Doc {
    Text(String),
    /// `concat!(...)` of the doc attributes, one per line: a `&'static str`.
    Expr(proc_macro2::TokenStream),
}

impl quote::ToTokens for Doc {
    fn to_tokens(&self, tokens: &mut proc_macro2::TokenStream) {
        match self {
            Doc::Text(text) => text.to_tokens(tokens),
            Doc::Expr(expr) => expr.to_tokens(tokens),
        }
    }
}

impl From<String> for Doc {
    fn from(text: String) -> Self {
        Doc::Text(text)
    }
}

/// The description doc attributes give: [`doc_text`] when they are all literal (`///`
/// comments), else their expressions (`include_str!`, `concat!`) joined by newlines, as written.
pub(crate) fn doc_description(attrs: &[syn::Attribute]) -> Option<Doc> {
    let values: Vec<&syn::Expr> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => Some(&nv.value),
            _ => None,
        })
        .collect();
    let literal = |e: &syn::Expr| {
        matches!(
            e,
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(_),
                ..
            })
        )
    };
    if values.iter().all(|e| literal(e)) {
        return doc_text(attrs).map(Doc::Text);
    }
    let mut parts = Vec::new();
    for (i, e) in values.iter().enumerate() {
        if i > 0 {
            parts.push(quote::quote!("\n"));
        }
        parts.push(match e {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => {
                let line = s.value();
                let line = line
                    .strip_prefix(' ')
                    .unwrap_or(&line)
                    .trim_end()
                    .to_owned();
                quote::quote!(#line)
            }
            other => quote::quote!(#other),
        });
    }
    Some(Doc::Expr(quote::quote!(::std::concat!(#(#parts),*))))
}
