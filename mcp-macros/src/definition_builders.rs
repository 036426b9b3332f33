//! The builder calls every definition takes from its attribute alike (`#[tool]`, `#[resource]`
//! and `#[prompt]`): icons, `_meta`, scopes.

use proc_macro2::TokenStream;
use quote::quote;
use syn::LitStr;

use crate::runtime::RT;

/// `.icons(..)` and `.meta(..)` when the attribute gives them.
pub(crate) fn icons_and_meta(icons: &[LitStr], meta: Option<&LitStr>) -> Vec<TokenStream> {
    let mut out = Vec::new();
    if !icons.is_empty() {
        // A local: quote binds each name used in a repetition, and `RT` is a const.
        let rt = RT;
        out.push(quote!(.icons(::std::vec![#(#rt::types::Icon::new(#icons)),*])));
    }
    if let Some(meta) = meta {
        out.push(quote!(.meta(#RT::__private::json_object(#meta))));
    }
    out
}

/// `.scopes([...])` when the attribute lists scopes.
pub(crate) fn scopes(scopes: &[LitStr]) -> Option<TokenStream> {
    (!scopes.is_empty()).then(|| quote!(.scopes([#(#scopes),*])))
}
