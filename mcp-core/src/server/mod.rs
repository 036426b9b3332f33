//! The high-level server: tools from `#[tool]` functions (or hand-built [`ToolDef`]s), argument
//! validation against exactly the schema `tools/list` shows, results shaped for the era.

mod mcp_server;
pub mod output;
mod registry;
mod schema;
mod tool;
mod tool_error;
mod validate;

pub use mcp_server::{McpServer, ServerHandle};
pub use registry::ListChange;
pub use schema::{output_schema, wrap_output_schema, ArgSpec, ArgsSchema};
pub use tool::{IntoTool, IntoTools, ToolDef, ToolHandler, ToolSet};
pub use tool_error::ToolError;
pub use validate::SchemaValidator;
