//! One run of a tool on its arguments: the handler, its error routed to the channel it
//! belongs to, the output checked against the output schema, the result shaped for the era
//! (shared by a `tools/call` and by a task running the call).

use serde_json::json;

use super::arguments::Arguments;
use super::output::ErrorRoute;
use super::tool::ToolDef;
use crate::era::Era;
use crate::error::{restore_written_integers, McpError};
use crate::lowlevel::unwind::CatchUnwind;
use crate::lowlevel::RequestContext;
use crate::types::CallToolResult;

/// How one run of a tool ended.
pub(crate) enum Ran {
    /// A result (a tool error included: `isError`).
    Done(CallToolResult),
    /// A protocol error (or a request for input, 2026).
    Protocol(McpError),
    /// The tool failed internally, panicked, or broke its output schema (logged).
    Crashed,
    /// An argument did not decode straight from the client's text: the call is to be checked
    /// against the schema (which says why) and run on the checked object. Nothing of the tool
    /// ran: its arguments are decoded before its code.
    Unread,
}

/// Runs `def` on `args`, checked or to be decoded straight (`source`: the arguments as the
/// client wrote them).
pub(crate) async fn execute<S: Send + Sync + 'static>(
    def: &ToolDef<S>,
    ctx: RequestContext<S>,
    args: Arguments,
    source: &str,
) -> Ran {
    let text = args.is_text();
    let name = &def.tool.name;
    let era = ctx.era();
    let mut result = match CatchUnwind::new((def.handler)(ctx, args)).await {
        Ok(Ok(result)) => result,
        Ok(Err(ErrorRoute::Tool(message))) => return Ran::Done(CallToolResult::error(message)),
        Ok(Err(ErrorRoute::Argument(_))) if text => return Ran::Unread,
        Ok(Err(ErrorRoute::Argument(message))) => {
            return Ran::Done(CallToolResult::error(restore_written_integers(
                &message, source,
            )))
        }
        Ok(Err(ErrorRoute::Protocol(e))) => return Ran::Protocol(e),
        Ok(Err(ErrorRoute::Internal(detail))) => {
            tracing::error!(tool = %name, error = %detail, "tool failed");
            return Ran::Crashed;
        }
        Err(panic) => {
            tracing::error!(tool = %name, panic, "tool panicked");
            return Ran::Crashed;
        }
    };
    if let (Some(validator), false) = (&def.output, result.is_error) {
        let checked = match &result.structured_content {
            Some(value) => validator.validate(value),
            None => Err("no structuredContent was returned".to_owned()),
        };
        if let Err(reason) = checked {
            tracing::error!(tool = %name, reason, "tool output does not match its outputSchema");
            return Ran::Crashed;
        }
    }
    if era == Era::Legacy && def.legacy_output.is_some() {
        if let Some(value) = result.structured_content.take() {
            result.structured_content = Some(json!({ "result": value }));
        }
    }
    Ran::Done(result)
}
