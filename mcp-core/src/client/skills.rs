//! The skills extension from the client side (SEP-2640): list a server's skills, load one
//! (fetch its `SKILL.md` and verify it against the entry) and read its files, each verified,
//! each fetched only when asked for: listing never reads a file.

use serde_json::{json, Value};

use super::connection::Client;
use crate::error::McpError;
use crate::types::{
    GetSkillResult, ListSkillsResult, ReadResourceResult, ResourceContents, Skill, SkillResource,
    SkillResources, SKILLS_EXTENSION,
};

/// Why a skill file was refused, or could not be fetched. A verification failure means the
/// content must not be used; refresh the entry with [`Client::get_skill`] and try again.
#[derive(Debug)]
pub enum SkillError {
    /// The request failed (the server does not declare the extension, the read failed, ...).
    Request(McpError),
    /// The file is not in the skill's manifest (or the entry's `resources` is `"dynamic"`
    /// and offers nothing to verify against, for [`Client::read_skill_file`]).
    NotListed {
        /// The file asked for.
        uri: String,
    },
    /// The content's length differs from the entry's `size`.
    SizeMismatch {
        /// The file.
        uri: String,
        /// The entry's size.
        expected: u64,
        /// The bytes received.
        actual: u64,
    },
    /// The content's SHA-256 differs from the entry's `digest`.
    DigestMismatch {
        /// The file.
        uri: String,
        /// The entry's digest.
        expected: String,
        /// The digest of the bytes received.
        actual: String,
    },
    /// The `SKILL.md` frontmatter is unreadable or differs from the entry's `frontmatter`.
    FrontmatterMismatch {
        /// The `SKILL.md`.
        uri: String,
        /// The first field that differs, or why the frontmatter could not be read.
        detail: String,
    },
    /// The entry is over the extension's limits (512 files, 16 MiB) and is not loaded.
    TooLarge {
        /// The skill.
        uri: String,
    },
}

impl std::fmt::Display for SkillError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Request(e) => write!(f, "{e}"),
            Self::NotListed { uri } => write!(f, "{uri} is not a file of the skill's manifest"),
            Self::SizeMismatch {
                uri,
                expected,
                actual,
            } => write!(
                f,
                "{uri}: {actual} bytes received, the skill's entry says {expected}"
            ),
            Self::DigestMismatch {
                uri,
                expected,
                actual,
            } => write!(
                f,
                "{uri}: content digest {actual} differs from the entry's {expected}"
            ),
            Self::FrontmatterMismatch { uri, detail } => {
                write!(
                    f,
                    "{uri}: frontmatter does not match the skill's entry: {detail}"
                )
            }
            Self::TooLarge { uri } => write!(
                f,
                "{uri}: the skill exceeds the extension's limits (512 files, 16 MiB)"
            ),
        }
    }
}

impl std::error::Error for SkillError {}

impl From<McpError> for SkillError {
    fn from(e: McpError) -> Self {
        Self::Request(e)
    }
}

/// A skill whose `SKILL.md` was fetched and verified: size, digest, and frontmatter equal to
/// the entry's. Its other files are fetched with [`Client::read_skill_file`].
#[derive(Debug, Clone)]
pub struct LoadedSkill {
    entry: Skill,
    text: String,
}

impl LoadedSkill {
    /// The entry the skill was verified against (hold it while acting on the skill).
    pub fn entry(&self) -> &Skill {
        &self.entry
    }

    /// The whole `SKILL.md`, frontmatter included.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl Client {
    /// Every skill the server lists (`skills/list`, all pages). Reads no file.
    ///
    /// Fails with `-32601` when the server does not declare `io.modelcontextprotocol/skills`
    /// (clients only call the extension's methods after seeing the declaration).
    pub async fn list_skills(&self) -> Result<Vec<Skill>, McpError> {
        self.require_skills()?;
        let mut skills = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..1000 {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let page: ListSkillsResult = self.request_typed("skills/list", params).await?;
            skills.extend(page.skills);
            match page.next_cursor {
                Some(next) if !next.is_empty() && cursor.as_deref() != Some(&next) => {
                    cursor = Some(next)
                }
                _ => return Ok(skills),
            }
        }
        Ok(skills)
    }

    /// The entry of the skill whose `SKILL.md` is at `uri` (`skills/get`); `-32602` from a
    /// server that serves no such skill.
    pub async fn get_skill(&self, uri: &str) -> Result<Skill, McpError> {
        self.require_skills()?;
        let result: GetSkillResult = self
            .request_typed("skills/get", json!({ "uri": uri }))
            .await?;
        Ok(result.skill)
    }

    /// Loads a skill: fetches its `SKILL.md` and verifies it against `entry` (size and digest
    /// from the manifest, then the frontmatter field by field). Nothing else is fetched. A
    /// `"dynamic"` entry has no digest to check; its frontmatter still is.
    pub async fn load_skill(&self, entry: &Skill) -> Result<LoadedSkill, SkillError> {
        if let SkillResources::Files(files) = &entry.resources {
            let total: u64 = files.iter().map(|f| f.size).sum();
            if files.len() > 512 || total > 16 * 1024 * 1024 {
                return Err(SkillError::TooLarge {
                    uri: entry.uri.clone(),
                });
            }
        }
        let bytes = match &entry.resources {
            SkillResources::Files(_) => self.read_skill_file(entry, &entry.uri).await?,
            SkillResources::Dynamic => {
                let read = self.read_resource(&entry.uri).await?;
                bytes_of(&entry.uri, read)?
            }
        };
        let mismatch = |detail: String| SkillError::FrontmatterMismatch {
            uri: entry.uri.clone(),
            detail,
        };
        let text =
            String::from_utf8(bytes).map_err(|_| mismatch("SKILL.md is not UTF-8".into()))?;
        let frontmatter = crate::frontmatter::parse(&text).map_err(|e| mismatch(e.to_string()))?;
        let keys = frontmatter.keys().chain(entry.frontmatter.keys());
        for key in keys {
            let ours = frontmatter.get(key).unwrap_or(&Value::Null);
            let theirs = entry.frontmatter.get(key).unwrap_or(&Value::Null);
            if !same(ours, theirs) {
                return Err(mismatch(format!(
                    "`{key}` is {ours} in SKILL.md, {theirs} in the entry"
                )));
            }
        }
        Ok(LoadedSkill {
            entry: entry.clone(),
            text,
        })
    }

    /// Fetches one file of a skill (`resources/read`) and verifies it against the entry's
    /// manifest: a file the manifest does not list is refused before any request, then the
    /// size and the SHA-256 digest must match. Returns the raw bytes (text as UTF-8, a blob
    /// decoded).
    pub async fn read_skill_file(&self, entry: &Skill, uri: &str) -> Result<Vec<u8>, SkillError> {
        let Some(listed) = entry.file(uri).cloned() else {
            return Err(SkillError::NotListed {
                uri: uri.to_owned(),
            });
        };
        let read = self.read_resource(uri).await?;
        let bytes = bytes_of(uri, read)?;
        if bytes.len() as u64 != listed.size {
            return Err(SkillError::SizeMismatch {
                uri: uri.to_owned(),
                expected: listed.size,
                actual: bytes.len() as u64,
            });
        }
        let actual = SkillResource::digest_of(&bytes);
        if actual != listed.digest {
            return Err(SkillError::DigestMismatch {
                uri: uri.to_owned(),
                expected: listed.digest,
                actual,
            });
        }
        Ok(bytes)
    }

    fn require_skills(&self) -> Result<(), McpError> {
        let declared = self
            .server_capabilities()
            .and_then(|c| c.extensions)
            .is_some_and(|e| e.contains_key(SKILLS_EXTENSION));
        if declared {
            Ok(())
        } else {
            Err(McpError::new(
                crate::error::codes::METHOD_NOT_FOUND,
                format!("the server does not declare the {SKILLS_EXTENSION} extension"),
            ))
        }
    }
}

/// The raw bytes of the one part of a read that is about `uri`.
fn bytes_of(uri: &str, read: ReadResourceResult) -> Result<Vec<u8>, SkillError> {
    let part = read
        .contents
        .into_iter()
        .find(|c| match c {
            ResourceContents::Text(t) => t.uri == uri,
            ResourceContents::Blob(b) => b.uri == uri,
        })
        .ok_or_else(|| {
            McpError::internal(format!("the read of {uri} returned no contents for it"))
        })?;
    match part {
        ResourceContents::Text(t) => Ok(t.text.into_bytes()),
        ResourceContents::Blob(b) => crate::base64::decode(&b.blob)
            .ok_or_else(|| McpError::internal(format!("the blob of {uri} is not base64")).into()),
    }
}

/// JSON equality where numbers compare by value (`2` equals `2.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}
