//! Capabilities derived from the handler table: a method's presence is the declaration. A
//! feature is declared when its list method is served (`tools` iff `tools/list`, ...), so a
//! declared feature never answers `-32601` to its list.

use serde_json::Map;

use crate::types::{ListChangedCapability, ResourcesCapability, ServerCapabilities};

/// Which list-changed notifications the server promises (shown in its capabilities).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ListChanged {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
}

/// The capabilities of a table that serves the methods `has` says yes to, on top of `extra`.
pub(crate) fn derive(
    has: impl Fn(&str) -> bool,
    extra: &ServerCapabilities,
    announced: ListChanged,
) -> ServerCapabilities {
    let mut caps = extra.clone();
    if has("tools/list") {
        caps.tools = Some(ListChangedCapability {
            list_changed: Some(announced.tools),
        });
    }
    if has("resources/list") || has("resources/templates/list") {
        caps.resources = Some(ResourcesCapability {
            subscribe: Some(has("resources/subscribe")),
            list_changed: Some(announced.resources),
        });
    }
    if has("prompts/list") {
        caps.prompts = Some(ListChangedCapability {
            list_changed: Some(announced.prompts),
        });
    }
    if has("completion/complete") {
        caps.completions = Some(Map::new());
    }
    if has("logging/setLevel") {
        caps.logging = Some(Map::new());
    }
    if has("tasks/get") {
        // The 2026 tasks extension is declared under `extensions`, never as core `tasks`.
        caps.extensions
            .get_or_insert_with(Map::new)
            .entry(crate::types::TASKS_EXTENSION)
            .or_insert_with(|| serde_json::Value::Object(Map::new()));
    }
    caps
}
