//! The high-level server: tools from `#[tool]` functions (or hand-built [`ToolDef`]s), argument
//! validation against the schema `tools/list` shows (for a `#[tool]`, the same schema with `null`
//! also accepted for its optional arguments: see [`ArgsSchema`]), results shaped for the era.

pub(crate) mod arg_decoder;
mod arguments;
pub mod checks;
mod completion;
mod execute;
mod features;
mod listed_schema;
mod mcp_server;
pub mod output;
mod prompts;
mod registration;
mod registry;
mod resources;
mod result_text;
mod schema;
mod skills;
mod state;
mod subscriptions;
mod tasks;
mod tool;
mod tool_call;
mod tool_error;
mod uri_template;

pub use crate::validator::SchemaValidator;
pub use arguments::Arguments;
pub use completion::{Completer, CompletionRequest, IntoCompleter, MAX_COMPLETIONS};
pub use features::not_found;
pub use mcp_server::{McpServer, ServerHandle};
pub use prompts::{IntoPrompt, IntoPromptResult, PromptDef, PromptHandler};
pub use registration::RegistrationError;
pub use resources::{IntoReadResult, IntoResource, ReadFailure, ResourceDef, ResourceHandler};
pub use schema::{output_schema, wrap_output_schema, ArgSpec, ArgsSchema};
pub use skills::{MAX_SKILL_BYTES, MAX_SKILL_FILES};
pub use state::State;
pub use tasks::{MemoryTaskStore, TaskRecord, TaskStore, TaskSupport, TASKS_EXTENSION};
#[cfg(feature = "redis")]
pub use tasks::{RedisTaskStore, DEFAULT_TASK_PREFIX};
pub use tool::{Features, IntoTool, IntoTools, ToolDef, ToolHandler, ToolSet};
pub use tool_error::ToolError;
pub use uri_template::UriTemplate;
