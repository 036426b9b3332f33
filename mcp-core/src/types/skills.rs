//! The skills extension (SEP-2640, `io.modelcontextprotocol/skills`): the entries of
//! `skills/list` and `skills/get`. Skill files themselves are ordinary resources, read with
//! `resources/read`.

use serde::{Deserialize, Serialize};

use super::{JsonObject, Meta};

/// The extension's identifier, the key under `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// One file of a skill: its resource URI, the SHA-256 digest of its raw bytes
/// (`sha256:` and 64 lowercase hex digits) and its length in bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillResource {
    /// Resource URI of the file.
    pub uri: String,
    /// `sha256:{hex}` of the file's raw bytes.
    pub digest: String,
    /// Length in bytes of the file's raw content (the bytes `digest` covers).
    pub size: u64,
}

impl SkillResource {
    /// The entry of a file at `uri` with these bytes: its `sha256:` digest and size.
    ///
    /// ```
    /// use modelctx_core::types::SkillResource;
    /// let file = SkillResource::new("skill://pdf/SKILL.md", b"# PDF");
    /// assert_eq!(file.size, 5);
    /// assert!(file.digest.starts_with("sha256:"));
    /// ```
    pub fn new(uri: impl Into<String>, bytes: &[u8]) -> Self {
        Self {
            uri: uri.into(),
            digest: Self::digest_of(bytes),
            size: bytes.len() as u64,
        }
    }

    /// The digest of `bytes` as the extension writes it: `sha256:` and 64 lowercase hex
    /// digits.
    ///
    /// ```
    /// use modelctx_core::types::SkillResource;
    /// assert_eq!(
    ///     SkillResource::digest_of(b""),
    ///     "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    /// );
    /// ```
    pub fn digest_of(bytes: &[u8]) -> String {
        use sha2::{Digest, Sha256};
        hex_digest(Sha256::digest(bytes).as_slice())
    }
}

/// `sha256:` and the lowercase hex of a SHA-256 output.
pub(crate) fn hex_digest(hash: &[u8]) -> String {
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// A skill's files: every file, `SKILL.md` included, each once; or `"dynamic"` when the
/// content is generated and no stable digest can be published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillResources {
    /// The complete manifest.
    Files(Vec<SkillResource>),
    /// The string `"dynamic"`: no manifest, no integrity.
    Dynamic,
}

impl Serialize for SkillResources {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Files(files) => files.serialize(s),
            Self::Dynamic => s.serialize_str("dynamic"),
        }
    }
}

impl<'de> Deserialize<'de> for SkillResources {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Files(Vec<SkillResource>),
            Word(String),
        }
        match Wire::deserialize(d)? {
            Wire::Files(files) => Ok(Self::Files(files)),
            Wire::Word(w) if w == "dynamic" => Ok(Self::Dynamic),
            Wire::Word(w) => Err(serde::de::Error::custom(format!(
                "resources must be an array or \"dynamic\", not {w:?}"
            ))),
        }
    }
}

/// The entry for one skill, as `skills/list` and `skills/get` return it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Skill {
    /// Resource URI of the skill's `SKILL.md` (`skill://<skill-path>/SKILL.md`).
    pub uri: String,
    /// The `SKILL.md` YAML frontmatter as a JSON object (`name` and `description` always).
    pub frontmatter: JsonObject,
    /// The skill's files.
    pub resources: SkillResources,
}

impl Skill {
    /// The frontmatter's `name` (the last segment of the skill path), if it is a string.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(|v| v.as_str())
    }

    /// The frontmatter's `description`, if it is a string.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(|v| v.as_str())
    }

    /// The manifest entry for `uri`, if the skill lists one.
    pub fn file(&self, uri: &str) -> Option<&SkillResource> {
        match &self.resources {
            SkillResources::Files(files) => files.iter().find(|f| f.uri == uri),
            SkillResources::Dynamic => None,
        }
    }
}

/// The result of `skills/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListSkillsResult {
    /// The skills of this page.
    pub skills: Vec<Skill>,
    /// Cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// `_meta` of this `skills/list` result (keys are `prefix/name`). On 2026-07-28
    /// the engine adds `io.modelcontextprotocol/serverInfo` here unless the handler already set it.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `skills/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GetSkillRequestParams {
    /// URI of the skill's `SKILL.md`.
    pub uri: String,
}

/// The result of `skills/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GetSkillResult {
    /// The skill's entry.
    pub skill: Skill,
    /// `_meta` of this `skills/get` result (keys are `prefix/name`). On 2026-07-28
    /// the engine adds `io.modelcontextprotocol/serverInfo` here unless the handler already set it.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

page_result!(ListSkillsResult, skills, Skill, "skills");
