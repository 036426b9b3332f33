//! How a type is spelled: its last path segment and that segment's type arguments (what the
//! macros read off `Option<T>`, `RequestContext<S>`, `Vec<T>` before the compiler has types).

use syn::{GenericArgument, PathArguments, Type};

/// The last segment of a path type (`Option<T>` of `std::option::Option<T>`); `None` for
/// anything else (references, tuples, `<T as Trait>::X`).
pub(crate) fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        _ => None,
    }
}

/// The type arguments of a path segment (`T` of `Option<T>`), lifetimes and constants left
/// out.
pub(crate) fn generic_args(seg: &syn::PathSegment) -> Vec<&Type> {
    match &seg.arguments {
        PathArguments::AngleBracketed(args) => args
            .args
            .iter()
            .filter_map(|a| match a {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}
