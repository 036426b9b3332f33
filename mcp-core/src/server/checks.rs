//! What `#[tool]` checks through the compiler: the traits its generated code bounds on, where
//! the macro cannot tell by how a type is spelled (a type alias, a type of your own).
//!
//! Their names appear in compiler errors, next to a message that says what to change. The SDK
//! implements them for the standard types; a type of your own that is a number or text on the
//! wire (a newtype of `String` with `#[serde(transparent)]`, say) opts in with an empty impl:
//!
//! ```
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! #[serde(transparent)]
//! struct Isbn(String);
//!
//! impl modelctx_core::server::checks::TextArgument for Isbn {}        // `pattern`
//! impl modelctx_core::server::checks::TextOrListArgument for Isbn {}  // `length`
//! ```

use serde::de::DeserializeOwned;

use super::arg_decoder::{arg, ArgDecoder};
use crate::lowlevel::RequestContext;
use crate::server::{ArgSpec, ArgsSchema};

/// A type a tool parameter may have: `Deserialize + JsonSchema`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool argument",
    label = "this parameter's type must implement serde::Deserialize and schemars::JsonSchema",
    note = "derive them: #[derive(serde::Deserialize, schemars::JsonSchema)], or use a type that has them (String, integers, bool, Vec<T>, Option<T>, ...)"
)]
pub trait ToolArgument: Sized {
    /// Adds the argument `name` to the schema and returns its decoder.
    #[doc(hidden)]
    fn declare(
        schema: &mut ArgsSchema,
        name: &str,
        spec: ArgSpec,
        nullable: bool,
    ) -> ArgDecoder<Self>;
}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + schemars::JsonSchema> ToolArgument for T {
    fn declare(
        schema: &mut ArgsSchema,
        name: &str,
        spec: ArgSpec,
        nullable: bool,
    ) -> ArgDecoder<Self> {
        arg(schema, name, spec, nullable)
    }
}

/// A `RequestContext` taken for an argument (spelled through an alias) is refused by
/// [`ContextSpelledOut`] with its own message; this impl keeps it from failing twice.
#[diagnostic::do_not_recommend]
impl<S> ToolArgument for RequestContext<S> {
    fn declare(_: &mut ArgsSchema, _: &str, _: ArgSpec, _: bool) -> ArgDecoder<Self> {
        ArgDecoder::refusing()
    }
}

/// A type `#[arg(range(..))]` fits: a number (checked where the macro cannot tell by the
/// type's spelling, e.g. an alias).
#[diagnostic::on_unimplemented(
    message = "`range` applies to numbers; `{Self}` is not a number",
    label = "`range` needs an integer or float parameter",
    note = "to limit the length of text or a list, write `length(..)` instead; for a number type of your own, `impl modelctx::server::checks::NumberArgument for MyType {{}}`"
)]
pub trait NumberArgument {
    /// Used by the generated check.
    const FITS: () = ();
}

/// A type a `range` with fractional bounds (`range(0.5..)`) fits.
#[diagnostic::on_unimplemented(
    message = "`range` has a fractional bound but `{Self}` is not a float",
    label = "this range needs an `f32` or `f64` parameter",
    note = "write whole-number bounds for an integer parameter, or make the parameter `f64`"
)]
pub trait FloatArgument {
    /// Used by the generated check.
    const FITS: () = ();
}

/// A type `#[arg(length(..))]` fits: text or a list.
#[diagnostic::on_unimplemented(
    message = "`length` applies to text and lists; `{Self}` is neither",
    label = "`length` needs a String or a list parameter",
    note = "to bound a number, write `range(..)` instead; for a text or list type of your own, `impl modelctx::server::checks::TextOrListArgument for MyType {{}}`"
)]
pub trait TextOrListArgument {
    /// Used by the generated check.
    const FITS: () = ();
}

/// A type `#[arg(pattern = "...")]` fits: text.
#[diagnostic::on_unimplemented(
    message = "`pattern` applies to text; `{Self}` is not text",
    label = "`pattern` needs a String parameter",
    note = "to bound a number, write `range(..)` instead; for a text type of your own (a newtype of `String`), `impl modelctx::server::checks::TextArgument for MyType {{}}`"
)]
pub trait TextArgument {
    /// Used by the generated check.
    const FITS: () = ();
}

/// Implementations of the markers, behind blanket impls so that an error names the marker
/// and not a list of every type that has it.
mod kinds {
    pub trait Number {}
    pub trait Float {}
    pub trait Text {}
    pub trait TextOrList {}

    macro_rules! kinds {
        ($trait:ident: $($t:ty),*) => {$(
            impl $trait for $t {}
        )*};
    }
    use std::num::*;
    kinds!(Number: i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64);
    kinds!(Number: NonZeroI8, NonZeroI16, NonZeroI32, NonZeroI64, NonZeroI128, NonZeroIsize);
    kinds!(Number: NonZeroU8, NonZeroU16, NonZeroU32, NonZeroU64, NonZeroU128, NonZeroUsize);
    kinds!(Float: f32, f64);
    kinds!(Text: String, str, Box<str>, std::sync::Arc<str>, std::borrow::Cow<'static, str>);
    kinds!(TextOrList: String, str, Box<str>, std::sync::Arc<str>, std::borrow::Cow<'static, str>);
    impl<T: Number> Number for Option<T> {}
    impl<T: Float> Float for Option<T> {}
    impl<T: Text> Text for Option<T> {}
    impl<T: TextOrList> TextOrList for Option<T> {}
    impl<T> TextOrList for Vec<T> {}
    impl<T> TextOrList for std::collections::VecDeque<T> {}
    impl<T> TextOrList for std::collections::BTreeSet<T> {}
    impl<T, H> TextOrList for std::collections::HashSet<T, H> {}
    impl<T, const N: usize> TextOrList for [T; N] {}
    impl<T> TextOrList for Box<[T]> {}
}

#[diagnostic::do_not_recommend]
impl<T: kinds::Number + ?Sized> NumberArgument for T {}
#[diagnostic::do_not_recommend]
impl<T: kinds::Float + ?Sized> FloatArgument for T {}
#[diagnostic::do_not_recommend]
impl<T: kinds::Text + ?Sized> TextArgument for T {}
#[diagnostic::do_not_recommend]
impl<T: kinds::TextOrList + ?Sized> TextOrListArgument for T {}

/// A `RequestContext` parameter spelled through a type alias: the macro finds the context by
/// its name in the signature, so it took this one for an argument.
#[diagnostic::on_unimplemented(
    message = "a `RequestContext` parameter must be written `RequestContext<..>` in the signature, not through a type alias",
    label = "write `{Self}` here",
    note = "#[tool] recognizes the request context by its name; behind an alias it would be taken for a JSON argument"
)]
pub trait ContextSpelledOut {}

/// Chooses how a parameter is read, once per parameter (autoref specialization): a
/// `RequestContext` the macro did not recognize is an error that says how to write it.
pub struct ArgProbe<T>(std::marker::PhantomData<fn() -> T>);

impl<T> ArgProbe<T> {
    /// A probe for `T`.
    pub fn new() -> Self {
        Self(std::marker::PhantomData)
    }
}

impl<T> Default for ArgProbe<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> std::fmt::Debug for ArgProbe<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ArgProbe")
    }
}

/// The context path (preferred: implemented on `&&ArgProbe<RequestContext<S>>`).
pub trait ProbeContextArg<T> {
    /// Always an error: see [`ContextSpelledOut`].
    fn context_check(self)
    where
        T: ContextSpelledOut;
}

impl<S> ProbeContextArg<RequestContext<S>> for &&ArgProbe<RequestContext<S>> {
    fn context_check(self)
    where
        RequestContext<S>: ContextSpelledOut,
    {
    }
}

/// Any other type: an argument (checked by [`ToolArgument`]).
pub trait ProbeArg<T> {
    /// Nothing to check.
    fn context_check(self);
}

impl<T> ProbeArg<T> for &ArgProbe<T> {
    fn context_check(self) {}
}
