//! One method per spec request.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};

use super::Client;
use crate::error::McpError;
use crate::server::SchemaValidator;
use crate::types::*;

impl Client {
    /// `server/discover` (2026).
    pub async fn discover(&self) -> Result<DiscoverResult, McpError> {
        self.request_typed("server/discover", json!({})).await
    }

    /// `ping` (2025).
    pub async fn ping(&self) -> Result<EmptyResult, McpError> {
        self.request_typed("ping", json!({})).await
    }

    /// `tools/list`, first page.
    pub async fn list_tools(&self) -> Result<ListToolsResult, McpError> {
        self.list_tools_page(None).await
    }

    /// `tools/list` from `cursor`. The client remembers each tool's `outputSchema` to check
    /// the results of [`call_tool`](Self::call_tool).
    pub async fn list_tools_page(&self, cursor: Option<&str>) -> Result<ListToolsResult, McpError> {
        let page: ListToolsResult = self.request_typed("tools/list", page(cursor)).await?;
        let mut schemas = self
            .output_schemas
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        for tool in &page.tools {
            let validator = tool
                .output_schema
                .as_ref()
                .and_then(|s| SchemaValidator::compile(&Value::Object(s.clone())).ok())
                .map(Arc::new);
            schemas.insert(tool.name.clone(), validator);
        }
        Ok(page)
    }

    /// `tools/call` with `arguments` (a JSON object). A successful result is checked against
    /// the tool's `outputSchema` (fetched with `tools/list` when not yet known): structured
    /// content that breaks its promise is an error starting `Invalid structured content
    /// returned by tool <name>`. Use [`request`](Self::request) for the unchecked result.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, McpError> {
        let result: CallToolResult = self
            .request_typed(
                "tools/call",
                json!({ "name": name, "arguments": arguments }),
            )
            .await?;
        if !result.is_error {
            self.check_structured(name, &result).await?;
        }
        Ok(result)
    }

    async fn check_structured(&self, name: &str, result: &CallToolResult) -> Result<(), McpError> {
        if self.known_output_schema(name).is_none() {
            // A server that cannot list its tools gets no check; a tool the list does not
            // show is remembered as having no schema, so the list is fetched once per name.
            let mut cursor: Option<String> = None;
            while let Ok(page) = self.list_tools_page(cursor.as_deref()).await {
                match page.next_cursor {
                    Some(next) => cursor = Some(next),
                    None => break,
                }
            }
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

fn page(cursor: Option<&str>) -> Value {
    match cursor {
        Some(c) => json!({ "cursor": c }),
        None => json!({}),
    }
}
