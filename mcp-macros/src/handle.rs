//! The handle of a free `#[tool]`, `#[resource]` or `#[prompt]` function: the unit struct
//! (`SearchBooksTool` for `fn search_books`) that registers it, declared in a module of its own
//! and glob-imported beside the function.

use proc_macro2::TokenStream as TokenStream2;
use quote::quote;

/// `search_books` -> `SearchBooksTool` (or `...Resource`, `...Prompt`): the value that registers
/// the function.
pub(crate) fn handle_ident(ident: &syn::Ident, what: &str) -> syn::Ident {
    let name = ident.to_string();
    let pascal: String = name
        .trim_start_matches("r#")
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
                None => String::new(),
            }
        })
        .collect();
    let suffix = match what {
        "tool" => "Tool",
        "resource" => "Resource",
        _ => "Prompt",
    };
    syn::Ident::new(&format!("{pascal}{suffix}"), ident.span())
}

/// The unit struct that stands for a function registered with the server (the function itself
/// stays an ordinary function).
///
/// It is declared in a module of its own (`add_tool`) and glob-imported, so a type of the user's with the same
/// name silently shadows it instead of clashing; registering that type then fails with the
/// `IntoTool` message, which says to rename it. The `impl IntoTool` names it by
/// [`handle_path`].
pub(crate) fn handle_struct(vis: &syn::Visibility, ident: &syn::Ident, what: &str) -> TokenStream2 {
    let handle = handle_ident(ident, what);
    let module = handle_module(ident, what);
    let doc = format!(
        "The {what} [`{ident}`](super::{ident}), to register with the server: `.{what}({handle})`."
    );
    let inner_vis = vis_in_child_module(vis);
    quote! {
        #[allow(non_snake_case)]
        mod #module {
            #[doc = #doc]
            #[derive(Clone, Copy, Debug, Default)]
            #inner_vis struct #handle;
        }
        #[allow(unused_imports)]
        #vis use #module::*;
    }
}

/// `add` -> `add_tool`: the module that holds the handle. Compiler messages name the handle
/// by it (`add_tool::AddTool`), so it reads like the handle, not like generated code.
fn handle_module(ident: &syn::Ident, what: &str) -> syn::Ident {
    let name = ident.to_string();
    let name = name.trim_start_matches("r#");
    syn::Ident::new(&format!("{name}_{what}"), ident.span())
}

/// The path of the handle struct [`handle_struct`] declares, for its trait impls.
pub(crate) fn handle_path(ident: &syn::Ident, what: &str) -> TokenStream2 {
    let module = handle_module(ident, what);
    let handle = handle_ident(ident, what);
    quote!(#module::#handle)
}

/// The visibility that, on an item of a child module, reaches as far as `vis` does here.
fn vis_in_child_module(vis: &syn::Visibility) -> TokenStream2 {
    match vis {
        syn::Visibility::Public(_) => quote!(#vis),
        syn::Visibility::Inherited => quote!(pub(super)),
        syn::Visibility::Restricted(r) => {
            let path = &*r.path;
            let first = path.segments.first().map(|s| s.ident.to_string());
            match first.as_deref() {
                Some("crate") if path.segments.len() == 1 => quote!(#vis),
                _ if path.leading_colon.is_some() => quote!(#vis),
                Some("crate") => quote!(#vis),
                Some("self") => {
                    let rest = path.segments.iter().skip(1);
                    if path.segments.len() == 1 {
                        quote!(pub(super))
                    } else {
                        quote!(pub(in super #(::#rest)*))
                    }
                }
                _ => quote!(pub(in super::#path)),
            }
        }
    }
}
