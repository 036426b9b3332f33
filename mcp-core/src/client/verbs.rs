//! One method per spec request.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};

use super::{Client, RequestOptions};
use crate::error::McpError;
use crate::types::*;
use crate::validator::SchemaValidator;

impl Client {
    /// `server/discover` (2026); the answer is kept for
    /// [`server_capabilities`](Self::server_capabilities) and friends.
    pub async fn discover(&self) -> Result<DiscoverResult, McpError> {
        let result: DiscoverResult = self.request_typed("server/discover", json!({})).await?;
        self.set_negotiated(|n| n.discover = Some(Arc::new(result.clone())));
        Ok(result)
    }

    /// `ping` (2025).
    pub async fn ping(&self) -> Result<EmptyResult, McpError> {
        self.request_typed("ping", json!({})).await
    }

    /// `tools/list`, first page.
    pub async fn list_tools(&self) -> Result<ListToolsResult, McpError> {
        self.list_tools_page(None).await
    }

    /// Every tool, following `nextCursor` until the last page.
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, McpError> {
        all_pages(|cursor| async move {
            let page = self.list_tools_page(cursor.as_deref()).await?;
            Ok((page.tools, page.next_cursor))
        })
        .await
    }

    /// `tools/list` from `cursor`. The client remembers each tool's `outputSchema` to check
    /// the results of [`call_tool`](Self::call_tool), and its `x-mcp-header` arguments to
    /// mirror into `Mcp-Param-*` headers (2026 HTTP). Over HTTP, a tool whose `x-mcp-header`
    /// annotations are invalid is dropped from the page (and logged), as the spec requires.
    pub async fn list_tools_page(&self, cursor: Option<&str>) -> Result<ListToolsResult, McpError> {
        let mut page: ListToolsResult = self.request_typed("tools/list", page(cursor)).await?;
        self.remember_tools(&mut page);
        Ok(page)
    }

    /// Records the tools' `x-mcp-header` arguments and output-schema validators; over HTTP,
    /// drops the tools whose annotations are invalid.
    pub(crate) fn remember_tools(&self, page: &mut ListToolsResult) {
        let mut headers = self.param_headers.lock().unwrap_or_else(|p| p.into_inner());
        page.tools.retain(|tool| match tool.param_headers() {
            Ok(found) => {
                headers.insert(tool.name.clone(), found);
                true
            }
            Err(why) if self.carries_headers() => {
                tracing::warn!(tool = %tool.name, "tool dropped from tools/list: {why}");
                false
            }
            Err(_) => true,
        });
        drop(headers);
        let mut schemas = self
            .output_schemas
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        for tool in &page.tools {
            let validator = tool.output_schema.as_ref().and_then(|s| {
                SchemaValidator::compile(&Value::Object(s.clone()))
                    .map_err(|e| {
                        // Said once per listing: its results are passed on unchecked.
                        tracing::warn!(tool = %tool.name, "output schema not checked: {e}");
                    })
                    .ok()
            });
            let validator = validator.map(Arc::new);
            schemas.insert(tool.name.clone(), validator);
        }
    }

    /// `tools/call` with `arguments` (a JSON object). A successful result is checked against
    /// the tool's `outputSchema` (fetched with `tools/list` when not yet known): structured
    /// content that breaks its promise is an error starting `Invalid structured content
    /// returned by tool <name>`. An output schema the validator cannot read (see
    /// [`SchemaValidator`](crate::server::SchemaValidator)) is logged as a warning and its
    /// results are not checked. Use [`request`](Self::request) for the unchecked result.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, McpError> {
        self.call_tool_with(name, arguments, &RequestOptions::default())
            .await
    }

    /// [`call_tool`](Self::call_tool) with per-request options: a progress callback, a
    /// timeout, headers.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use modelctx_core::client::{Client, RequestOptions};
    /// use modelctx_core::lowlevel::Server;
    /// use serde_json::json;
    ///
    /// let client = Client::connect(Server::new("empty")).await.unwrap();
    /// let options = RequestOptions::new().on_progress(|p| println!("{}", p.progress));
    /// let err = client.call_tool_with("missing", json!({}), &options).await.unwrap_err();
    /// assert_eq!(err.code(), -32601); // this server has no tools at all
    /// client.close().await;
    /// # });
    /// ```
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: &RequestOptions,
    ) -> Result<CallToolResult, McpError> {
        let params = json!({ "name": name, "arguments": arguments });
        let result: CallToolResult = self.request_value("tools/call", params, options).await?;
        if !result.is_error {
            self.check_structured(name, &result).await?;
        }
        Ok(result)
    }

    async fn check_structured(&self, name: &str, result: &CallToolResult) -> Result<(), McpError> {
        if self.known_output_schema(name).is_none() {
            // A server that cannot list its tools gets no check; a tool the list does not
            // show is remembered as having no schema, so the list is fetched once per name.
            let _ = self.list_all_tools().await;
            self.output_schemas
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .entry(name.to_owned())
                .or_insert(None);
        }
        let Some(Some(validator)) = self.known_output_schema(name) else {
            return Ok(());
        };
        match &result.structured_content {
            None => Err(McpError::internal(format!(
                "Tool {name} has an output schema but did not return structured content"
            ))),
            Some(value) => validator.validate(value).map_err(|reason| {
                McpError::internal(format!(
                    "Invalid structured content returned by tool {name}: {reason}"
                ))
            }),
        }
    }

    fn known_output_schema(&self, name: &str) -> Option<Option<Arc<SchemaValidator>>> {
        self.output_schemas
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
    }

    /// Every resource, following `nextCursor`.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, McpError> {
        all_pages(|cursor| async move {
            let page = self.list_resources_page(cursor.as_deref()).await?;
            Ok((page.resources, page.next_cursor))
        })
        .await
    }

    /// Every resource template, following `nextCursor`.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, McpError> {
        all_pages(|cursor| async move {
            let page = self.list_resource_templates_page(cursor.as_deref()).await?;
            Ok((page.resource_templates, page.next_cursor))
        })
        .await
    }

    /// Every prompt, following `nextCursor`.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, McpError> {
        all_pages(|cursor| async move {
            let page = self.list_prompts_page(cursor.as_deref()).await?;
            Ok((page.prompts, page.next_cursor))
        })
        .await
    }

    /// `resources/list`, first page.
    pub async fn list_resources(&self) -> Result<ListResourcesResult, McpError> {
        self.list_resources_page(None).await
    }

    /// `resources/list` from `cursor`.
    pub async fn list_resources_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourcesResult, McpError> {
        self.request_typed("resources/list", page(cursor)).await
    }

    /// `resources/templates/list`, first page.
    pub async fn list_resource_templates(&self) -> Result<ListResourceTemplatesResult, McpError> {
        self.list_resource_templates_page(None).await
    }

    /// `resources/templates/list` from `cursor`.
    pub async fn list_resource_templates_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.request_typed("resources/templates/list", page(cursor))
            .await
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, McpError> {
        self.request_typed("resources/read", json!({ "uri": uri }))
            .await
    }

    /// `resources/subscribe` (2025).
    pub async fn subscribe_resource(&self, uri: &str) -> Result<EmptyResult, McpError> {
        self.request_typed("resources/subscribe", json!({ "uri": uri }))
            .await
    }

    /// `resources/unsubscribe` (2025).
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<EmptyResult, McpError> {
        self.request_typed("resources/unsubscribe", json!({ "uri": uri }))
            .await
    }

    /// `prompts/list`, first page.
    pub async fn list_prompts(&self) -> Result<ListPromptsResult, McpError> {
        self.list_prompts_page(None).await
    }

    /// `prompts/list` from `cursor`.
    pub async fn list_prompts_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListPromptsResult, McpError> {
        self.request_typed("prompts/list", page(cursor)).await
    }

    /// `prompts/get` with string arguments.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, McpError> {
        self.request_typed(
            "prompts/get",
            json!({ "name": name, "arguments": arguments }),
        )
        .await
    }

    /// `completion/complete` for argument `name` whose current text is `value`.
    pub async fn complete(
        &self,
        reference: CompletionReference,
        name: &str,
        value: &str,
    ) -> Result<CompleteResult, McpError> {
        let params = json!({
            "ref": reference,
            "argument": { "name": name, "value": value },
        });
        self.request_typed("completion/complete", params).await
    }

    /// [`complete`](Self::complete) with the arguments the user filled in already
    /// (`context.arguments`), for completers that narrow their suggestions by them (the
    /// authors' books once `author` is chosen).
    pub async fn complete_with_context(
        &self,
        reference: CompletionReference,
        name: &str,
        value: &str,
        arguments: &std::collections::BTreeMap<String, String>,
    ) -> Result<CompleteResult, McpError> {
        let params = json!({
            "ref": reference,
            "argument": { "name": name, "value": value },
            "context": { "arguments": arguments },
        });
        self.request_typed("completion/complete", params).await
    }

    /// `logging/setLevel` (2025).
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<EmptyResult, McpError> {
        self.request_typed("logging/setLevel", json!({ "level": level }))
            .await
    }

    /// `subscriptions/listen` (2026): resolves when the server ends the stream; the stream's
    /// notifications arrive through [`next_notification`](Self::next_notification), tagged
    /// with the subscription id.
    pub async fn listen(
        &self,
        filter: SubscriptionFilter,
    ) -> Result<SubscriptionsListenResult, McpError> {
        self.request_typed("subscriptions/listen", json!({ "notifications": filter }))
            .await
    }
}

/// Follows `nextCursor` from the first page to the last (a cursor the server repeats ends it,
/// so a confused server cannot loop the client forever).
pub(super) async fn all_pages<T, F, Fut>(mut page: F) -> Result<Vec<T>, McpError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: std::future::Future<Output = Result<(Vec<T>, Option<String>), McpError>>,
{
    let mut all = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let (items, next) = page(cursor.clone()).await?;
        all.extend(items);
        match next {
            Some(next) if cursor.as_deref() != Some(next.as_str()) => cursor = Some(next),
            _ => return Ok(all),
        }
    }
}

fn page(cursor: Option<&str>) -> Value {
    match cursor {
        Some(c) => json!({ "cursor": c }),
        None => json!({}),
    }
}
