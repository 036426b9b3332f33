//! Serving a directory of skills (the skills extension, SEP-2640, `io.modelcontextprotocol/skills`):
//! [`McpServer::skills_dir`].
//!
//! Every directory under the root that holds a `SKILL.md` is a skill; its path under the root
//! is its skill path, and each of its files is the resource `skill://<skill-path>/<file-path>`.
//! `skills/list` and `skills/get` answer entries with the frontmatter and the complete manifest
//! (SHA-256 digest and size of each file), found on the disk when asked; a digest is re-hashed
//! only when its file's metadata changed ([`digests`]), so an edited file is served with its new
//! digest; `resources/directory/read` lists a skill directory.

mod digests;

use std::collections::HashSet;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};

use super::mcp_server::McpServer;
use super::resources::{ReadFailure, ResourceDef, ResourceHandler};
use crate::era::Era;
use crate::error::{echo_capped, McpError};
use crate::types::{
    GetSkillRequestParams, GetSkillResult, ListSkillsResult, ReadResourceResult, Resource,
    ResourceContents, Skill, SkillResource, SkillResources, SKILLS_EXTENSION,
};
use digests::{DigestCache, Stamp, ToDigest};

/// The most bytes a skill may hold, summed over its files (the extension's 16 MiB limit). A
/// larger skill is not served (logged at start-up and left out of `skills/list`), and no file
/// is ever read into memory beyond this many bytes.
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// The most files a skill may hold, `SKILL.md` included (the extension's limit). A skill with
/// more is not served.
pub const MAX_SKILL_FILES: usize = 512;

/// The skill directory tree a server serves.
#[derive(Debug)]
pub(crate) struct SkillsDir {
    /// The root, canonical (symlinks resolved).
    root: PathBuf,
    /// The digests of its files, re-hashed only when a file's metadata changes.
    digests: DigestCache,
}

/// One file of a skill, found on disk.
#[derive(Debug)]
struct FoundFile {
    /// Path relative to the skill directory, `/`-separated.
    rel: String,
    path: PathBuf,
    /// Its metadata when found (its length is the size served).
    stamp: Stamp,
}

impl<S: Send + Sync + 'static> McpServer<S> {
    /// Serves the skills under `root` with the skills extension (SEP-2640): declares
    /// `io.modelcontextprotocol/skills` under `capabilities.extensions`, answers `skills/list`
    /// and `skills/get`, lists each `SKILL.md` in `resources/list` (named and described from its
    /// frontmatter, `text/markdown`) and reads every skill file through `resources/read` at
    /// `skill://<skill-path>/<file-path>` (the template `skill://{+path}`).
    ///
    /// A skill is a directory under `root` holding a `SKILL.md` that begins with YAML
    /// frontmatter giving at least `name` and `description`; its directory name must equal
    /// `name` and follow the Agent Skills naming rules (1-64 of `a-z`, `0-9`, `-`, no leading,
    /// trailing or doubled `-`). Its path under `root` is its skill path
    /// (`root/acme/refunds/SKILL.md` is `skill://acme/refunds/SKILL.md`); skills may nest.
    ///
    /// What is served, and what is not:
    /// - every regular file of a skill directory and its subdirectories, except names that
    ///   begin with `.`;
    /// - a symbolic link only when it points to a file inside `root`; links to directories are
    ///   not followed; a URI with `..`, `.`, an empty segment or a backslash is refused, so no
    ///   read leaves `root`;
    /// - a skill over [`MAX_SKILL_FILES`] files or [`MAX_SKILL_BYTES`] bytes, or with bad
    ///   frontmatter, is left out (with a `tracing` warning), never half served;
    /// - entries are found on the disk on each `skills/list` / `skills/get` (one page, no
    ///   cursor; each `SKILL.md` is read for its frontmatter); a file's digest is computed once
    ///   (hashed as a stream, never held whole) and served from a cache while the file's
    ///   modification time, size and (on Unix) inode are unchanged, so polling costs a `stat`
    ///   per file, and an edited file is re-hashed and served with its new digest. The
    ///   trade-off, as with `make` or `cargo`, is that metadata decides: a file rewritten with
    ///   the same length and its modification time set back to the old value keeps its old
    ///   digest until it is touched (a file modified less than 2 s before it was hashed is
    ///   never cached, so edits within the file system's timestamp granularity are seen). The
    ///   cache holds only the files of the skills last found, within the limits above;
    ///   `resources/list` shows the `SKILL.md` files found by this call;
    /// - `resources/directory/read` (declared as `directoryRead: true`) lists the direct
    ///   children of a skill's root or of one of its subdirectories, from its manifest;
    /// - 2026 results of `skills/list` and `skills/get` carry `ttlMs: 0`,
    ///   `cacheScope: "private"` (never reuse, never share).
    ///
    /// Fails when `root` is not a readable directory.
    ///
    /// # Panics
    ///
    /// When called twice on one server (the `skill://{+path}` template is already registered),
    /// or when a `skill://` resource it would list is already registered.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use modelctx_core::client::Client;
    /// use modelctx_core::server::McpServer;
    ///
    /// let root = std::env::temp_dir().join(format!("skills-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(root.join("greeting")).unwrap();
    /// std::fs::write(
    ///     root.join("greeting/SKILL.md"),
    ///     "---\nname: greeting\ndescription: Greet people warmly\n---\nSay hello.\n",
    /// ).unwrap();
    ///
    /// let server = McpServer::new("skills").skills_dir(&root).unwrap();
    /// let client = Client::connect(server).await.unwrap();
    /// let skills = client.list_skills().await.unwrap();
    /// assert_eq!(skills[0].uri, "skill://greeting/SKILL.md");
    /// let loaded = client.load_skill(&skills[0]).await.unwrap();
    /// assert!(loaded.text().ends_with("Say hello.\n"));
    /// client.close().await;
    /// # std::fs::remove_dir_all(&root).unwrap();
    /// # });
    /// ```
    pub fn skills_dir(mut self, root: impl AsRef<Path>) -> std::io::Result<Self> {
        let root = fs::canonicalize(root.as_ref())?;
        if !fs::metadata(&root)?.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{} is not a directory", root.display()),
            ));
        }
        let dir = Arc::new(SkillsDir {
            root,
            digests: DigestCache::default(),
        });
        for skill in dir.skills() {
            let uri = skill.uri.clone();
            let name = skill.name().unwrap_or_default().to_owned();
            let mut def = ResourceDef::with_handler(&uri, name, read_handler(dir.clone()))
                .map_err(|e| std::io::Error::other(e.to_string()))?
                .mime_type("text/markdown");
            if let Some(description) = skill.description() {
                def = def.description(description);
            }
            self = self.resource(def);
        }
        let template =
            ResourceDef::with_handler("skill://{+path}", "skill-file", read_handler(dir.clone()))
                .map_err(|e| std::io::Error::other(e.to_string()))?
                .description("A file of a skill served with the skills extension");
        self = self.resource(template);

        let lowlevel = self.lowlevel();
        let list = dir.clone();
        let _ = lowlevel.add_request_handler("skills/list", move |ctx, p: ListParams| {
            let dir = list.clone();
            let era = ctx.era();
            async move {
                if let Some(cursor) = p.cursor {
                    return Err(McpError::invalid_params(format!(
                        "Invalid cursor: {}",
                        echo_capped(&cursor)
                    )));
                }
                let skills = blocking(move || dir.skills()).await?;
                Ok(cacheable(era, ListSkillsResult::new(skills)))
            }
        });
        let get = dir.clone();
        let _ = lowlevel.add_request_handler("skills/get", move |ctx, p: GetSkillRequestParams| {
            let dir = get.clone();
            let era = ctx.era();
            async move {
                let uri = p.uri;
                let wanted = uri.clone();
                let skill = blocking(move || dir.skill(&wanted)).await?;
                match skill {
                    Some(skill) => Ok(cacheable(era, GetSkillResult { skill, meta: None })),
                    None => Err(McpError::invalid_params(format!(
                        "No skill is served at {}",
                        echo_capped(&uri)
                    ))),
                }
            }
        });
        let listing = dir.clone();
        let _ = lowlevel.add_request_handler(
            "resources/directory/read",
            move |_ctx, p: DirectoryParams| {
                let dir = listing.clone();
                async move {
                    if let Some(cursor) = p.cursor {
                        return Err(McpError::invalid_params(format!(
                            "Invalid cursor: {}",
                            echo_capped(&cursor)
                        )));
                    }
                    let uri = p.uri;
                    let wanted = uri.clone();
                    match blocking(move || dir.directory(&wanted)).await? {
                        Some(resources) => Ok(json!({ "resources": resources })),
                        None => Err(McpError::invalid_params(format!(
                            "{} is not a directory resource",
                            echo_capped(&uri)
                        ))),
                    }
                }
            },
        );
        let extensions = lowlevel
            .extra_capabilities
            .extensions
            .get_or_insert_with(Default::default);
        extensions.insert(
            SKILLS_EXTENSION.to_owned(),
            json!({ "directoryRead": true }),
        );
        Ok(self)
    }
}

#[derive(Deserialize)]
struct DirectoryParams {
    uri: String,
    #[serde(default)]
    cursor: Option<String>,
}

#[derive(Deserialize)]
struct ListParams {
    #[serde(default)]
    cursor: Option<String>,
}

/// The result as JSON, with the 2026 cache fields (`ttlMs: 0`, `cacheScope: "private"`).
fn cacheable(era: Era, result: impl serde::Serialize) -> Value {
    let mut value = serde_json::to_value(result).unwrap_or(Value::Null);
    if let (Era::Modern, Value::Object(map)) = (era, &mut value) {
        map.insert("ttlMs".into(), json!(0));
        map.insert("cacheScope".into(), json!("private"));
    }
    value
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, McpError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|_| McpError::internal("reading the skills directory failed"))
}

fn read_handler<S: Send + Sync + 'static>(dir: Arc<SkillsDir>) -> ResourceHandler<S> {
    Arc::new(move |_ctx, uri, _vars| {
        let dir = dir.clone();
        Box::pin(async move {
            let read_uri = uri.clone();
            match blocking(move || dir.read(&read_uri)).await? {
                Some((bytes, mime)) => Ok(contents(uri, bytes, mime)),
                None => Err(ReadFailure::NotFound),
            }
        })
    })
}

fn contents(uri: String, bytes: Vec<u8>, mime: &str) -> ReadResourceResult {
    let part = match String::from_utf8(bytes) {
        Ok(text) => ResourceContents::text(uri, text),
        Err(e) => ResourceContents::blob(uri, crate::base64::encode(e.as_bytes())),
    };
    ReadResourceResult::new(vec![part.with_mime_type(mime)])
}

/// The MIME type served for a file, by extension.
fn mime_of(rel: &str) -> &'static str {
    let ext = rel.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("txt") => "text/plain",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("py") => "text/x-python",
        Some("sh") => "text/x-shellscript",
        Some("js") => "text/javascript",
        Some("html" | "htm") => "text/html",
        Some("csv") => "text/csv",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("pdf") => "application/pdf",
        _ => "application/octet-stream",
    }
}

/// The Agent Skills naming rule for a skill name.
pub(crate) fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// `rest` split into segments, or `None` if one is empty, `.`, `..` or holds a `\` or NUL.
fn safe_segments(rest: &str) -> Option<Vec<&str>> {
    let segments: Vec<&str> = rest.split('/').collect();
    let ok = segments
        .iter()
        .all(|s| !s.is_empty() && *s != "." && *s != ".." && !s.contains(['\\', '\0']));
    ok.then_some(segments)
}

impl SkillsDir {
    /// Every valid skill under the root, sorted by URI.
    fn skills(&self) -> Vec<Skill> {
        let mut dirs = Vec::new();
        self.skill_dirs(&self.root, &mut dirs, 0);
        dirs.sort();
        let served: HashSet<PathBuf> = dirs.iter().map(|s| self.skill_path(s)).collect();
        let skills = dirs
            .into_iter()
            .filter_map(|segments| self.entry(&segments))
            .collect();
        self.digests.retain(&served);
        skills
    }

    /// The directory of the skill at `segments` under the root.
    fn skill_path(&self, segments: &[String]) -> PathBuf {
        self.root.join(segments.iter().collect::<PathBuf>())
    }

    /// Directories (as segments under the root) holding a `SKILL.md`.
    fn skill_dirs(&self, dir: &Path, out: &mut Vec<Vec<String>>, depth: usize) {
        if depth > 32 {
            return;
        }
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                let path = entry.path();
                if path.join("SKILL.md").is_file() {
                    let rel = path.strip_prefix(&self.root).unwrap_or(&path);
                    out.push(
                        rel.iter()
                            .map(|s| s.to_string_lossy().into_owned())
                            .collect(),
                    );
                }
                self.skill_dirs(&path, out, depth + 1);
            }
        }
    }

    /// The skill at `skill://<segments>/SKILL.md`, if it is valid; if not, its cached digests
    /// are dropped.
    fn entry(&self, segments: &[String]) -> Option<Skill> {
        let dir = self.skill_path(segments);
        let skill = self.find_entry(segments, &dir);
        if skill.is_none() {
            self.digests.forget(&dir);
        }
        skill
    }

    /// [`Self::entry`], for the skill directory `dir`.
    fn find_entry(&self, segments: &[String], dir: &Path) -> Option<Skill> {
        let skill_path = segments.join("/");
        let uri = format!("skill://{skill_path}/SKILL.md");
        if !self.contains(dir) {
            return None;
        }
        let name = segments.last()?;
        let warn = |why: &str| tracing::warn!(skill = %uri, "skill not served: {why}");
        if !valid_name(name) {
            warn("its directory name breaks the Agent Skills naming rules");
            return None;
        }
        let files = match self.files(dir) {
            Ok(files) => files,
            Err(why) => {
                warn(&why);
                return None;
            }
        };
        let skill_md = files.iter().find(|f| f.rel == "SKILL.md")?;
        let text = match read_capped(&skill_md.path).map(String::from_utf8) {
            Some(Ok(text)) => text,
            _ => {
                warn("SKILL.md is not readable UTF-8 text");
                return None;
            }
        };
        let frontmatter = match crate::frontmatter::parse(&text) {
            Ok(fm) => fm,
            Err(e) => {
                warn(&e.to_string());
                return None;
            }
        };
        let field = |k: &str| {
            frontmatter
                .get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        if field("description").is_none() {
            warn("its frontmatter has no description");
            return None;
        }
        if field("name") != Some(name.as_str()) {
            warn("its frontmatter name differs from its directory name");
            return None;
        }
        let to_digest: Vec<ToDigest<'_>> = files
            .iter()
            .map(|f| ToDigest {
                path: &f.path,
                stamp: f.stamp,
            })
            .collect();
        let Some(digests) = self.digests.manifest(dir, &to_digest) else {
            warn("a file changed while it was hashed");
            return None;
        };
        let resources = files
            .iter()
            .zip(digests)
            .map(|(file, digest)| SkillResource {
                uri: format!("skill://{skill_path}/{}", file.rel),
                digest,
                size: file.stamp.size(),
            })
            .collect();
        Some(Skill {
            uri,
            frontmatter,
            resources: SkillResources::Files(resources),
        })
    }

    /// Whether `dir`, named by a client's URI, really lies inside the root: a symlinked
    /// directory on the way could lead anywhere (listing never follows one; a URI could).
    fn contains(&self, dir: &Path) -> bool {
        // The root was canonicalized once, by `skills_dir`.
        dir.canonicalize()
            .is_ok_and(|dir| dir.starts_with(&self.root))
    }

    /// The skill whose `SKILL.md` is at `uri`.
    fn skill(&self, uri: &str) -> Option<Skill> {
        let rest = uri.strip_prefix("skill://")?.strip_suffix("/SKILL.md")?;
        let segments = safe_segments(rest)?;
        let segments: Vec<String> = segments.into_iter().map(str::to_owned).collect();
        self.entry(&segments)
    }

    /// Every file of the skill in `dir` (sorted, `SKILL.md` first), within the limits.
    fn files(&self, dir: &Path) -> Result<Vec<FoundFile>, String> {
        let mut found = Vec::new();
        let mut total = 0u64;
        self.walk(dir, "", &mut found, &mut total, 0)?;
        found.sort_by(|a, b| (a.rel != "SKILL.md", &a.rel).cmp(&(b.rel != "SKILL.md", &b.rel)));
        Ok(found)
    }

    fn walk(
        &self,
        dir: &Path,
        prefix: &str,
        found: &mut Vec<FoundFile>,
        total: &mut u64,
        depth: usize,
    ) -> Result<(), String> {
        if depth > 32 {
            return Err("it is nested too deep".into());
        }
        let entries = fs::read_dir(dir).map_err(|e| format!("cannot read a directory: {e}"))?;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name.contains('\\') {
                continue;
            }
            let rel = format!("{prefix}{name}");
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let meta = if kind.is_symlink() {
                // Followed only to a regular file inside the root.
                match fs::canonicalize(&path) {
                    Ok(target) if target.starts_with(&self.root) => match fs::metadata(&target) {
                        Ok(m) if m.is_file() => m,
                        _ => continue,
                    },
                    _ => continue,
                }
            } else if kind.is_dir() {
                self.walk(&path, &format!("{rel}/"), found, total, depth + 1)?;
                continue;
            } else if kind.is_file() {
                match entry.metadata() {
                    Ok(m) => m,
                    Err(_) => continue,
                }
            } else {
                continue;
            };
            *total += meta.len();
            found.push(FoundFile {
                rel,
                path,
                stamp: Stamp::of(&meta),
            });
            if found.len() > MAX_SKILL_FILES {
                return Err(format!("it has more than {MAX_SKILL_FILES} files"));
            }
            if *total > MAX_SKILL_BYTES {
                return Err(format!("its files exceed {MAX_SKILL_BYTES} bytes"));
            }
        }
        Ok(())
    }

    /// The bytes and MIME type of the skill file at `uri`: only a file of a valid skill's
    /// manifest, found by walking that skill, is ever opened.
    fn read(&self, uri: &str) -> Option<(Vec<u8>, &'static str)> {
        let rest = uri.strip_prefix("skill://")?;
        let segments = safe_segments(rest)?;
        // A file, so the skill directory is above it.
        let (dir, cut) = self.owning_skill(&segments, segments.len() - 1)?;
        let rel = segments[cut..].join("/");
        let files = self.files(&dir).ok()?;
        let file = files.iter().find(|f| f.rel == rel)?;
        let bytes = read_capped(&file.path)?;
        Some((bytes, mime_of(&rel)))
    }

    /// The innermost skill directory on `segments` (at most `max_cut` of them deep) and how
    /// many segments name it, if it is a served skill (inside the root, a valid name and
    /// frontmatter, within the limits); `None` otherwise, even when an outer one would be.
    fn owning_skill(&self, segments: &[&str], max_cut: usize) -> Option<(PathBuf, usize)> {
        let cut = (1..=max_cut).rev().find(|&cut| {
            self.root
                .join(segments[..cut].iter().collect::<PathBuf>())
                .join("SKILL.md")
                .is_file()
        })?;
        let dir = self.root.join(segments[..cut].iter().collect::<PathBuf>());
        let owned: Vec<String> = segments[..cut].iter().map(|s| (*s).to_owned()).collect();
        let served =
            self.contains(&dir) && valid_name(owned.last()?) && self.entry_is_valid(&owned);
        served.then_some((dir, cut))
    }

    /// The direct children of the directory at `uri` (a served skill's root or one of its
    /// subdirectories), from the skill's manifest: files with their metadata, subdirectories
    /// as `inode/directory` resources.
    fn directory(&self, uri: &str) -> Option<Vec<Resource>> {
        let rest = uri.strip_prefix("skill://")?;
        let segments = safe_segments(rest)?;
        let (dir, cut) = self.owning_skill(&segments, segments.len())?;
        let files = self.files(&dir).ok()?;
        let prefix = match segments[cut..].join("/") {
            p if p.is_empty() => p,
            p => format!("{p}/"),
        };
        let mut children: Vec<Resource> = Vec::new();
        let mut any = false;
        for file in files.iter().filter(|f| f.rel.starts_with(&prefix)) {
            any = true;
            let tail = &file.rel[prefix.len()..];
            let child = match tail.split_once('/') {
                Some((sub, _)) => Resource {
                    uri: format!("{}/{sub}", uri),
                    name: sub.to_owned(),
                    mime_type: Some("inode/directory".into()),
                    ..Default::default()
                },
                None => Resource {
                    uri: format!("{}/{tail}", uri),
                    name: tail.to_owned(),
                    mime_type: Some(mime_of(tail).into()),
                    size: Some(file.stamp.size()),
                    ..Default::default()
                },
            };
            if !children.iter().any(|c| c.uri == child.uri) {
                children.push(child);
            }
        }
        any.then_some(children)
    }

    fn entry_is_valid(&self, segments: &[String]) -> bool {
        let dir = self.root.join(segments.iter().collect::<PathBuf>());
        let Some(text) = read_capped(&dir.join("SKILL.md")).and_then(|b| String::from_utf8(b).ok())
        else {
            return false;
        };
        crate::frontmatter::parse(&text).is_ok_and(|fm| {
            fm.get("name").and_then(Value::as_str) == segments.last().map(String::as_str)
                && fm
                    .get("description")
                    .and_then(Value::as_str)
                    .is_some_and(|d| !d.is_empty())
        })
    }
}

/// The file's bytes, or `None` past [`MAX_SKILL_BYTES`] (never reading more than that).
fn read_capped(path: &Path) -> Option<Vec<u8>> {
    let file = fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_SKILL_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    (bytes.len() as u64 <= MAX_SKILL_BYTES).then_some(bytes)
}
