//! The protocol model: serde types for the messages of 2025-11-25 and 2026-07-28.
//!
//! Types are era-neutral: a field that exists in only one revision is optional, and the engine
//! adds the 2026 result envelope (`resultType`, cache hints, the serverInfo `_meta`) itself.
//! Every `_meta` is kept as an open JSON object ([`Meta`]) so unknown keys survive a round trip.

/// Writes `new` and `with_next_cursor` for a page of a `*/list` result.
macro_rules! page_result {
    ($ty:ident, $field:ident, $item:ty, $what:literal) => {
        impl $ty {
            #[doc = concat!("A page of ", $what, " that is the last one (no `nextCursor`, no `_meta`).")]
            pub fn new($field: Vec<$item>) -> Self {
                Self {
                    $field,
                    next_cursor: None,
                    meta: None,
                }
            }

            /// Sets `nextCursor`: more entries follow, and the client asks for them with this
            /// cursor.
            pub fn with_next_cursor(mut self, cursor: impl Into<String>) -> Self {
                self.next_cursor = Some(cursor.into());
                self
            }
        }
    };
}

/// Writes `with_*` methods that set an optional field, each under its doc:
/// `with_name => field: Type,`.
macro_rules! option_setters {
    ($ty:ident { $( $(#[doc = $doc:literal])* $name:ident => $field:ident: $arg:ty, )* }) => {
        impl $ty {
            $(
                $(#[doc = $doc])*
                pub fn $name(mut self, value: impl Into<$arg>) -> Self {
                    self.$field = Some(value.into());
                    self
                }
            )*
        }
    };
}

mod capabilities;
mod common;
mod completion;
mod content;
mod elicitation;
mod errors;
mod lifecycle;
mod logging;
mod mrtr;
mod notifications;
mod param_headers;
mod prompts;
mod resources;
mod roots;
mod sampling;
mod skills;
mod subscriptions;
mod tasks;
mod tools;

pub use capabilities::*;
pub use common::*;
pub use completion::*;
pub use content::*;
pub use elicitation::*;
pub use errors::*;
pub use lifecycle::*;
pub use logging::*;
pub use mrtr::*;
pub use notifications::*;
pub use param_headers::ParamHeaders;
pub use prompts::*;
pub use resources::*;
pub use roots::*;
pub use sampling::*;
pub use skills::*;
pub use subscriptions::*;
pub use tasks::*;
pub use tools::*;
