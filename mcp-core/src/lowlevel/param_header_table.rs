//! [`ParamHeaderTable`]: which tool arguments a 2026 client mirrors into `Mcp-Param-*` headers,
//! as data the HTTP transport reads (the server writes it; nothing calls back into the server).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use crate::types::ParamHeaders;

/// For each tool whose input schema marks arguments with `x-mcp-header`, the header names and
/// the property path of each: what the Streamable HTTP transport checks the `Mcp-Param-*`
/// headers of a 2026 `tools/call` against. The high-level [`McpServer`](crate::server::McpServer)
/// keeps it in step with its tools; with the low-level [`Server`](super::Server), fill it from
/// [`Server::param_headers`](super::Server::param_headers) when you register a tool whose
/// schema mirrors arguments. Clones share one table.
///
/// ```
/// use modelctx_core::lowlevel::Server;
///
/// let server = Server::new("demo");
/// let table = server.param_headers().clone();
/// table.set("deploy", vec![("Region".to_owned(), vec!["region".to_owned()])]);
/// assert_eq!(table.get("deploy").unwrap()[0].0, "Region");
/// table.remove("deploy");
/// assert!(table.get("deploy").is_none());
/// ```
#[derive(Debug, Clone, Default)]
pub struct ParamHeaderTable {
    tools: Arc<RwLock<HashMap<String, Arc<ParamHeaders>>>>,
}

impl ParamHeaderTable {
    /// Records the mirrored arguments of tool `tool` (an empty list forgets the tool).
    pub fn set(&self, tool: impl Into<String>, headers: ParamHeaders) {
        let tool = tool.into();
        let mut tools = self.tools.write().unwrap_or_else(|p| p.into_inner());
        if headers.is_empty() {
            tools.remove(&tool);
        } else {
            tools.insert(tool, Arc::new(headers));
        }
    }

    /// Forgets tool `tool` (removed from the server).
    pub fn remove(&self, tool: &str) {
        let mut tools = self.tools.write().unwrap_or_else(|p| p.into_inner());
        tools.remove(tool);
    }

    /// The mirrored arguments of tool `tool`, if it has any.
    pub fn get(&self, tool: &str) -> Option<Arc<ParamHeaders>> {
        let tools = self.tools.read().unwrap_or_else(|p| p.into_inner());
        if tools.is_empty() {
            return None;
        }
        tools.get(tool).cloned()
    }
}
