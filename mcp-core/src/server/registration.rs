//! [`RegistrationError`]: a tool, resource or prompt registered under a key already taken.

use std::fmt;

/// A second tool, resource (template) or prompt was registered under a key that is taken.
///
/// Registering is strict, as axum is about overlapping routes: two tools with the same name,
/// two resources with the same URI (or templates with the same template text), or two prompts
/// with the same name are a mistake, not a silent "last one wins". On the builder
/// ([`McpServer::tool`](super::McpServer::tool) and its siblings) the mistake panics at
/// start-up with this error's text; at run time
/// [`ServerHandle::add_tool`](super::ServerHandle::add_tool) and its siblings return it and the
/// server keeps what it had. To swap a definition on purpose, use `replace_tool`,
/// `replace_resource` or `replace_prompt` (on [`McpServer`](super::McpServer) or
/// [`ServerHandle`](super::ServerHandle)).
///
/// ```
/// use modelctx_core::server::{McpServer, PromptDef, RegistrationError};
///
/// let greet = || PromptDef::<()>::new("greet", |_, _| async { Ok(String::from("Hi!").into()) });
/// let server = McpServer::new("demo").prompt(greet());
/// let err = server.handle().add_prompt(greet()).unwrap_err();
/// assert_eq!(err, RegistrationError::DuplicatePrompt { name: "greet".into() });
/// assert_eq!(
///     err.to_string(),
///     "a prompt named `greet` is already registered; use `replace_prompt` to replace it"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistrationError {
    /// A tool with this name is already registered.
    DuplicateTool {
        /// The tool's name.
        name: String,
    },
    /// A resource with this URI, or a resource template with this template text, is already
    /// registered.
    DuplicateResource {
        /// The URI or URI template, as written.
        uri: String,
    },
    /// A prompt with this name is already registered.
    DuplicatePrompt {
        /// The prompt's name.
        name: String,
    },
}

impl fmt::Display for RegistrationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DuplicateTool { name } => write!(
                f,
                "a tool named `{name}` is already registered; use `replace_tool` to replace it"
            ),
            Self::DuplicateResource { uri } if uri.contains('{') => write!(
                f,
                "a resource template `{uri}` is already registered; use `replace_resource` to replace it"
            ),
            Self::DuplicateResource { uri } => write!(
                f,
                "a resource at `{uri}` is already registered; use `replace_resource` to replace it"
            ),
            Self::DuplicatePrompt { name } => write!(
                f,
                "a prompt named `{name}` is already registered; use `replace_prompt` to replace it"
            ),
        }
    }
}

impl std::error::Error for RegistrationError {}
