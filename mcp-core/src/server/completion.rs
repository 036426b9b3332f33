//! Argument completion for prompt arguments and resource template variables.

use std::sync::Arc;

/// Suggests values for an argument from what the user typed so far.
pub type Completer = Arc<dyn Fn(&str) -> Vec<String> + Send + Sync>;

/// The most values one completion answer carries (the spec's limit).
pub const MAX_COMPLETIONS: usize = 100;

/// Wraps a function `fn(&str) -> Vec<String>` (what `#[arg(complete = f)]` names).
pub fn completer<F>(f: F) -> Completer
where
    F: Fn(&str) -> Vec<String> + Send + Sync + 'static,
{
    Arc::new(f)
}
