//! Capabilities derived from the handler table: a method's presence is the declaration. A
//! feature is declared when its list method is served (`tools` iff `tools/list`, ...), so a
//! declared feature never answers `-32601` to its list.

use serde_json::Map;

use super::server::Server;
use crate::types::{ListChangedCapability, ResourcesCapability, ServerCapabilities};

pub(crate) fn derive<S>(server: &Server<S>) -> ServerCapabilities {
    let has = |m: &str| server.requests.contains_key(m);
    let mut caps = server.extra_capabilities.clone();
    if has("tools/list") {
        caps.tools = Some(ListChangedCapability {
            list_changed: Some(server.list_changed.tools),
        });
    }
    if has("resources/list") || has("resources/templates/list") {
        caps.resources = Some(ResourcesCapability {
            subscribe: Some(has("resources/subscribe")),
            list_changed: Some(server.list_changed.resources),
        });
    }
    if has("prompts/list") {
        caps.prompts = Some(ListChangedCapability {
            list_changed: Some(server.list_changed.prompts),
        });
    }
    if has("completion/complete") {
        caps.completions = Some(Map::new());
    }
    if has("logging/setLevel") {
        caps.logging = Some(Map::new());
    }
    caps
}
