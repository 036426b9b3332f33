//! [`ResourceDef`]: a resource (a fixed URI) or a resource template (an RFC 6570 URI template
//! whose variables are bound to the handler's parameters).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use super::completion::{Completer, IntoCompleter};
use super::uri_template::UriTemplate;
use crate::error::McpError;
use crate::lowlevel::{BoxFuture, RequestContext};
use crate::types::{Icon, Meta, ReadResourceResult, Resource, ResourceContents, ResourceTemplate};

/// Why a read produced no contents.
#[derive(Debug)]
pub enum ReadFailure {
    /// Nothing is at that URI (answered `-32602` on 2026, `-32002` on 2025, with `data.uri`).
    NotFound,
    /// Another error.
    Error(McpError),
}

impl From<McpError> for ReadFailure {
    fn from(e: McpError) -> Self {
        Self::Error(e)
    }
}

/// The erased handler of a resource: the URI and its template variables in, contents out.
pub type ResourceHandler<S> = Arc<
    dyn Fn(
            RequestContext<S>,
            String,
            BTreeMap<String, String>,
        ) -> BoxFuture<Result<ReadResourceResult, ReadFailure>>
        + Send
        + Sync,
>;

/// One resource or resource template.
pub struct ResourceDef<S> {
    pub(crate) template: UriTemplate,
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) mime_type: Option<String>,
    pub(crate) icons: Option<Vec<Icon>>,
    pub(crate) meta: Option<Meta>,
    pub(crate) handler: ResourceHandler<S>,
    pub(crate) completers: BTreeMap<String, Completer<S>>,
    /// Scopes a caller's token must carry.
    pub(crate) scopes: Vec<String>,
}

impl<S: Send + Sync + 'static> ResourceDef<S> {
    /// A resource at `uri` (a fixed URI, listed in `resources/list`) or a template (with `{var}`
    /// expressions, listed in `resources/templates/list`). The handler gets the URI read and the
    /// template's variables.
    ///
    /// ```
    /// use modelctx_core::server::ResourceDef;
    /// use modelctx_core::types::{ReadResourceResult, ResourceContents};
    ///
    /// let book = ResourceDef::<()>::new("books://{id}", "book", |_ctx, uri, vars| async move {
    ///     let text = format!("the book {}", vars["id"]);
    ///     Ok(ReadResourceResult::new(vec![ResourceContents::text(uri, text)]))
    /// }).unwrap();
    /// assert!(!book.is_static());
    /// ```
    pub fn new<F, Fut>(uri: &str, name: impl Into<String>, handler: F) -> Result<Self, McpError>
    where
        F: Fn(RequestContext<S>, String, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ReadResourceResult, McpError>> + Send + 'static,
    {
        let handler: ResourceHandler<S> = Arc::new(move |ctx, uri, vars| {
            let fut = handler(ctx, uri, vars);
            Box::pin(async move { fut.await.map_err(ReadFailure::Error) })
        });
        Self::with_handler(uri, name, handler)
    }

    /// A resource with an erased handler (what `#[resource]` generates).
    pub fn with_handler(
        uri: &str,
        name: impl Into<String>,
        handler: ResourceHandler<S>,
    ) -> Result<Self, McpError> {
        let template = UriTemplate::parse(uri).map_err(McpError::internal)?;
        Ok(Self {
            template,
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            icons: None,
            meta: None,
            handler,
            completers: BTreeMap::new(),
            scopes: Vec::new(),
        })
    }

    /// Requires the caller's token to carry every scope in `scopes` (checked by a protected
    /// HTTP endpoint before the handler runs: a token without them gets 403
    /// `insufficient_scope` naming them). Without a resource server there is no check.
    pub fn scopes<I, T>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the MIME type of the contents.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the icons a client may show for it (in `resources/list` or
    /// `resources/templates/list`).
    ///
    /// ```
    /// use modelctx_core::server::ResourceDef;
    /// use modelctx_core::types::{Icon, ReadResourceResult};
    ///
    /// let logo = ResourceDef::<()>::new("shop://logo", "logo", |_, _, _| async {
    ///     Ok(ReadResourceResult::new(vec![]))
    /// })
    /// .unwrap()
    /// .icons(vec![Icon::new("https://example.com/logo.png")]);
    /// ```
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }

    /// Sets the `_meta` shown with it in `resources/list` or `resources/templates/list`.
    pub fn meta(mut self, meta: Meta) -> Self {
        self.meta = Some(meta);
        self
    }

    /// Completes template variable `variable` with `completer`: a `fn(&str) -> Vec<String>`,
    /// or a function (plain or `async`) taking a
    /// [`CompletionRequest`](super::CompletionRequest) (see [`IntoCompleter`]).
    pub fn complete<M>(
        mut self,
        variable: impl Into<String>,
        completer: impl IntoCompleter<S, M>,
    ) -> Self {
        self.completers
            .insert(variable.into(), completer.into_completer());
        self
    }

    /// True for a fixed URI.
    pub fn is_static(&self) -> bool {
        self.template.is_static()
    }

    pub(crate) fn as_resource(&self) -> Resource {
        Resource {
            uri: self.template.as_str().to_owned(),
            name: self.name.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            mime_type: self.mime_type.clone(),
            icons: self.icons.clone(),
            meta: self.meta.clone(),
            ..Resource::default()
        }
    }

    pub(crate) fn as_template(&self) -> ResourceTemplate {
        ResourceTemplate {
            uri_template: self.template.as_str().to_owned(),
            name: self.name.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            mime_type: self.mime_type.clone(),
            icons: self.icons.clone(),
            meta: self.meta.clone(),
            ..ResourceTemplate::default()
        }
    }
}

impl<S> std::fmt::Debug for ResourceDef<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceDef")
            .field("uri", &self.template.as_str())
            .field("name", &self.name)
            .field("title", &self.title)
            .field("description", &self.description)
            .field("mime_type", &self.mime_type)
            .field("icons", &self.icons)
            .field("meta", &self.meta)
            .field("completers", &self.completers.keys().collect::<Vec<_>>())
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// Something that becomes one resource: a `#[resource]` function or a [`ResourceDef`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resource that a server with state `{S}` can register",
    label = "not a resource for `McpServer<{S}>`",
    note = "`.resource(..)` takes the handle #[resource] generates: `.resource(CatalogResource)` for `#[resource(..)] fn catalog`; #[resource] methods of a #[tools] impl block are registered by `.tools(..)`",
    note = "a resource that takes `RequestContext<T>` or `State<T>` registers only on a server whose state is `T`",
    note = "a type of your own named like a handle (`CatalogResource` next to `#[resource(..)] fn catalog`) hides the handle: rename your type"
)]
pub trait IntoResource<S> {
    /// The resource.
    fn into_resource(self) -> ResourceDef<S>;
}

impl<S> IntoResource<S> for ResourceDef<S> {
    fn into_resource(self) -> ResourceDef<S> {
        self
    }
}

/// What a resource function may return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a resource",
    label = "this return type cannot become resource contents",
    note = "return a String (text), Vec<u8> (binary), ResourceContents, Vec<ResourceContents>, a ReadResourceResult, an Option of one of these (None: not found), or a Result of one of these"
)]
pub trait IntoReadResult {
    /// The contents of `uri` (text or blob with `mime_type`).
    fn into_read_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, ReadFailure>;
}

fn single(contents: ResourceContents) -> ReadResourceResult {
    ReadResourceResult::new(vec![contents])
}

impl IntoReadResult for String {
    fn into_read_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, ReadFailure> {
        Ok(single(ResourceContents::Text(
            crate::types::TextResourceContents {
                uri: uri.to_owned(),
                mime_type: mime_type.map(str::to_owned),
                text: self,
                meta: None,
            },
        )))
    }
}

impl IntoReadResult for &'static str {
    fn into_read_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, ReadFailure> {
        self.to_owned().into_read_result(uri, mime_type)
    }
}

impl IntoReadResult for Vec<u8> {
    fn into_read_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, ReadFailure> {
        Ok(single(ResourceContents::Blob(
            crate::types::BlobResourceContents {
                uri: uri.to_owned(),
                mime_type: mime_type.map(str::to_owned),
                blob: crate::base64::encode(&self),
                meta: None,
            },
        )))
    }
}

impl IntoReadResult for ResourceContents {
    fn into_read_result(self, _: &str, _: Option<&str>) -> Result<ReadResourceResult, ReadFailure> {
        Ok(single(self))
    }
}

impl IntoReadResult for Vec<ResourceContents> {
    fn into_read_result(self, _: &str, _: Option<&str>) -> Result<ReadResourceResult, ReadFailure> {
        Ok(ReadResourceResult::new(self))
    }
}

impl IntoReadResult for ReadResourceResult {
    fn into_read_result(self, _: &str, _: Option<&str>) -> Result<ReadResourceResult, ReadFailure> {
        Ok(self)
    }
}

impl<T: IntoReadResult> IntoReadResult for Option<T> {
    fn into_read_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, ReadFailure> {
        match self {
            Some(v) => v.into_read_result(uri, mime_type),
            None => Err(ReadFailure::NotFound),
        }
    }
}

impl<T: IntoReadResult, E: Into<McpError>> IntoReadResult for Result<T, E> {
    fn into_read_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, ReadFailure> {
        match self {
            Ok(v) => v.into_read_result(uri, mime_type),
            Err(e) => Err(ReadFailure::Error(e.into())),
        }
    }
}
