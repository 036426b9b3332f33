//! Types shared by every feature: `_meta`, implementation info, icons, annotations.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An open `_meta` object: keys are kept in the order they arrived, unknown keys included.
pub type Meta = Map<String, Value>;

/// A JSON object (tool arguments, structured content, capability payloads).
pub type JsonObject = Map<String, Value>;

/// Name and version of a client or a server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Version string (empty when unset).
    #[serde(default)]
    pub version: String,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Home page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Icons for a UI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
}

impl Implementation {
    /// An implementation with this name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            ..Self::default()
        }
    }
}

/// An icon a client may show.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Icon {
    /// `https:` or `data:` URI.
    pub src: String,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// `"light"` or `"dark"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

/// Who a piece of content is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human user.
    User,
    /// The model.
    Assistant,
}

/// Hints about how to use or show an object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Annotations {
    /// Intended audience.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// ISO 8601 time of the last change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// Params of a request that only carries `_meta` (and, for lists, a cursor).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PaginatedRequestParams {
    /// Opaque position from a previous page's `nextCursor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of a request that carries nothing but `_meta` (`ping`, `server/discover`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A result with no fields (`ping`, `logging/setLevel`, `resources/subscribe`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EmptyResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The map of a JSON object; `None` for any other value (the constructors that take a
/// `serde_json::Value` for an object-typed field leave the field unset then).
pub(crate) fn object(value: Value) -> Option<JsonObject> {
    match value {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// `deserialize_with` for an optional field that, when present, must be a `T`: absent is
/// `None` (with `#[serde(default)]`), but an explicit `null` is refused as a type error instead
/// of being read as absent (`"arguments": null` is not an object).
pub(crate) fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

impl Icon {
    /// An icon at this `https:` or `data:` URI; the rest is optional.
    ///
    /// ```
    /// use modelctx_core::types::Icon;
    /// let icon = Icon::new("https://example.com/logo.png").with_mime_type("image/png");
    /// assert_eq!(icon.mime_type.as_deref(), Some("image/png"));
    /// ```
    pub fn new(src: impl Into<String>) -> Self {
        Self {
            src: src.into(),
            ..Self::default()
        }
    }

    /// Sets the sizes (`"48x48"`, `"any"`).
    pub fn with_sizes<I, T>(mut self, sizes: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        self.sizes = Some(sizes.into_iter().map(Into::into).collect());
        self
    }
}

impl PaginatedRequestParams {
    /// The params asking for the page after `cursor`.
    pub fn after(cursor: impl Into<String>) -> Self {
        Self {
            cursor: Some(cursor.into()),
            meta: None,
        }
    }
}

option_setters!(Icon {
    /// Sets the MIME type.
    with_mime_type => mime_type: String,
    /// Sets the theme (`"light"` or `"dark"`).
    with_theme => theme: String,
});
