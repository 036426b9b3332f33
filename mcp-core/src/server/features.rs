//! The handlers the high-level server installs for resources, prompts and completion.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;

use super::completion::{CompletionRequest, MAX_COMPLETIONS};
use super::registry::{snapshot, Registry};
use super::resources::ReadFailure;
use crate::era::Era;
use crate::error::{codes, echo_capped, McpError};
use crate::lowlevel::{RequestContext, Server};
use crate::types::*;

pub(crate) fn install<S: Send + Sync + 'static>(
    server: &mut Server<S>,
    registry: &Arc<Registry<S>>,
) {
    let reg = registry.clone();
    server.on_list_resources(move |_, p| {
        let all = snapshot(&reg.resources)
            .iter()
            .filter(|r| r.is_static())
            .map(|r| r.as_resource())
            .collect();
        let page = reg.page(all, p.cursor.as_deref(), |r: &Resource| &r.uri);
        async move {
            let (resources, next_cursor) = page?;
            Ok(ListResourcesResult {
                resources,
                next_cursor,
                ..Default::default()
            })
        }
    });
    let reg = registry.clone();
    server.on_list_resource_templates(move |_, p| {
        let all = snapshot(&reg.resources)
            .iter()
            .filter(|r| !r.is_static())
            .map(|r| r.as_template())
            .collect();
        let page = reg.page(all, p.cursor.as_deref(), |t: &ResourceTemplate| {
            &t.uri_template
        });
        async move {
            let (resource_templates, next_cursor) = page?;
            Ok(ListResourceTemplatesResult {
                resource_templates,
                next_cursor,
                ..Default::default()
            })
        }
    });
    let reg = registry.clone();
    server.on_read_resource(move |ctx, p| {
        let reg = reg.clone();
        async move { read(&reg, ctx, p.uri).await }
    });
    let reg = registry.clone();
    server.on_list_prompts(move |_, p| {
        let all = snapshot(&reg.prompts)
            .iter()
            .map(|p| p.prompt.clone())
            .collect();
        let page = reg.page(all, p.cursor.as_deref(), |p: &Prompt| &p.name);
        async move {
            let (prompts, next_cursor) = page?;
            Ok(ListPromptsResult {
                prompts,
                next_cursor,
                ..Default::default()
            })
        }
    });
    let reg = registry.clone();
    server.on_get_prompt(move |ctx, p| {
        let reg = reg.clone();
        async move { get_prompt(&reg, ctx, p).await }
    });
    let reg = registry.clone();
    server.on_completion(move |ctx, p| {
        let reg = reg.clone();
        async move { Ok(complete(&reg, ctx, p).await) }
    });
}

async fn read<S: Send + Sync + 'static>(
    registry: &Registry<S>,
    ctx: RequestContext<S>,
    uri: String,
) -> Result<ReadResourceResult, McpError> {
    let found = registry.find_resource(&uri);
    let era = ctx.era();
    let Some((def, vars)) = found else {
        return Err(not_found(era, &uri));
    };
    match (def.handler)(ctx, uri.clone(), vars).await {
        Ok(result) => Ok(result),
        Err(ReadFailure::NotFound) => Err(not_found(era, &uri)),
        Err(ReadFailure::Error(e)) => Err(e),
    }
}

/// Resource not found: `-32602` on 2026, `-32002` on 2025, with `data.uri` on both.
pub fn not_found(era: Era, uri: &str) -> McpError {
    let code = match era {
        Era::Modern => codes::INVALID_PARAMS,
        Era::Legacy => codes::RESOURCE_NOT_FOUND,
    };
    McpError::new(code, "Resource not found").with_data(json!({ "uri": echo_capped(uri) }))
}

async fn get_prompt<S: Send + Sync + 'static>(
    registry: &Registry<S>,
    ctx: RequestContext<S>,
    params: GetPromptRequestParams,
) -> Result<GetPromptResult, McpError> {
    let def = snapshot(&registry.prompts)
        .into_iter()
        .find(|p| p.prompt.name == params.name)
        .ok_or_else(|| {
            McpError::invalid_params(format!("Unknown prompt: {}", echo_capped(&params.name)))
        })?;
    let args: BTreeMap<String, String> = params.arguments.unwrap_or_default();
    for arg in def.prompt.arguments.iter().flatten() {
        if arg.required == Some(true) && !args.contains_key(&arg.name) {
            return Err(McpError::invalid_params(format!(
                "Missing required argument: {}",
                arg.name
            )));
        }
    }
    (def.handler)(ctx, args).await
}

/// Asks the argument's completer (none: no values) and sends at most [`MAX_COMPLETIONS`].
async fn complete<S: Send + Sync + 'static>(
    registry: &Registry<S>,
    ctx: RequestContext<S>,
    params: CompleteRequestParams,
) -> CompleteResult {
    let completer = match &params.reference {
        CompletionReference::Prompt { name, .. } => snapshot(&registry.prompts)
            .into_iter()
            .find(|p| &p.prompt.name == name)
            .and_then(|p| p.completers.get(&params.argument.name).cloned()),
        CompletionReference::Resource { uri } => snapshot(&registry.resources)
            .into_iter()
            .find(|r| r.template.as_str() == uri)
            .and_then(|r| r.completers.get(&params.argument.name).cloned()),
    };
    let mut values = match completer {
        Some(completer) => {
            completer
                .complete(CompletionRequest {
                    argument: params.argument.name,
                    value: params.argument.value,
                    arguments: params.context.and_then(|c| c.arguments).unwrap_or_default(),
                    ctx,
                })
                .await
        }
        None => Vec::new(),
    };
    let total = values.len();
    values.truncate(MAX_COMPLETIONS);
    CompleteResult {
        completion: Completion {
            has_more: Some(total > values.len()),
            total: Some(total as u64),
            values,
        },
        meta: None,
    }
}
