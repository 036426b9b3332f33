//! The skills extension (SEP-2640) end to end through the in-memory client, in both eras: a
//! directory served with `McpServer::skills_dir`, listed, fetched and verified by the client;
//! traversal and symlinks out of the directory refused; a tampered file refused by the client;
//! digests cached by file metadata (re-hashed on an edit, dropped when a file disappears).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use modelctx::client::{Client, SkillError};
use modelctx::era::Era;
use modelctx::server::McpServer;
use modelctx::types::{ResourceContents, Skill, SkillResource, SkillResources, SKILLS_EXTENSION};
use serde_json::json;

const PDF_SKILL: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nmetadata:\n  version: \"2.1.0\"\n---\n\n# PDF\n\nRead references/FORMS.md.\n";
const FORMS: &str = "Fill every field.\n";
const FORMS_URI: &str = "skill://pdf-processing/references/FORMS.md";
/// Other contents of FORMS.md, each of its length.
const EDITED: [&str; 3] = [
    "Fill NO field!!!.\n",
    "Fill ALL fields!.\n",
    "Fill one field...\n",
];

/// A fresh skills directory (removed on drop): `pdf-processing` with one reference file,
/// `acme/refunds`, a directory whose frontmatter name is wrong, and a secret outside the root.
struct Fixture {
    base: PathBuf,
}

impl Fixture {
    fn new(tag: &str) -> Self {
        let base = std::env::temp_dir().join(format!("mcp-skills-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("skills");
        write(&root.join("pdf-processing/SKILL.md"), PDF_SKILL);
        write(&root.join("pdf-processing/references/FORMS.md"), FORMS);
        write(&root.join("pdf-processing/.hidden"), "not served");
        write(
            &root.join("acme/refunds/SKILL.md"),
            "---\nname: refunds\ndescription: Process refunds\n---\nRefund.\n",
        );
        write(
            &root.join("misnamed/SKILL.md"),
            "---\nname: other\ndescription: Its directory is not its name\n---\n",
        );
        write(
            &base.join("secret.txt"),
            "the secret outside the skills root",
        );
        Self { base }
    }

    fn root(&self) -> PathBuf {
        self.base.join("skills")
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

async fn connect(root: &Path, era: Era) -> Client {
    let server = McpServer::new("skills").skills_dir(root).unwrap();
    let builder = Client::builder();
    let builder = if era == Era::Legacy {
        builder.legacy()
    } else {
        builder
    };
    let client = builder.connect(server).await.unwrap();
    assert_eq!(client.era(), era);
    client
}

fn text_of(contents: &[ResourceContents]) -> &str {
    match &contents[0] {
        ResourceContents::Text(t) => &t.text,
        other => panic!("expected text, got {other:?}"),
    }
}

#[tokio::test]
async fn a_skills_directory_is_listed_fetched_and_verified_in_both_eras() {
    let fixture = Fixture::new("serve");
    for era in [Era::Modern, Era::Legacy] {
        let client = connect(&fixture.root(), era).await;
        let extensions = client.server_capabilities().unwrap().extensions.unwrap();
        assert_eq!(extensions[SKILLS_EXTENSION], json!({"directoryRead": true}));

        let skills = client.list_skills().await.unwrap();
        let uris: Vec<&str> = skills.iter().map(|s| s.uri.as_str()).collect();
        // The misnamed skill is left out; the nested prefix is kept.
        assert_eq!(
            uris,
            [
                "skill://acme/refunds/SKILL.md",
                "skill://pdf-processing/SKILL.md"
            ]
        );
        let pdf = &skills[1];
        assert_eq!(
            serde_json::Value::Object(pdf.frontmatter.clone()),
            json!({
                "name": "pdf-processing",
                "description": "Extract, fill, and assemble PDF documents",
                "metadata": {"version": "2.1.0"}
            })
        );
        assert_eq!(
            pdf.resources,
            SkillResources::Files(vec![
                SkillResource::new("skill://pdf-processing/SKILL.md", PDF_SKILL.as_bytes()),
                SkillResource::new(
                    "skill://pdf-processing/references/FORMS.md",
                    FORMS.as_bytes(),
                ),
            ])
        );
        assert_eq!(client.get_skill(&pdf.uri).await.unwrap(), *pdf);

        let loaded = client.load_skill(pdf).await.unwrap();
        assert_eq!(loaded.text(), PDF_SKILL);
        let forms = client
            .read_skill_file(pdf, "skill://pdf-processing/references/FORMS.md")
            .await
            .unwrap();
        assert_eq!(forms, FORMS.as_bytes());

        // SKILL.md is listed as a resource, named and described from its frontmatter.
        let listed = client.list_all_resources().await.unwrap();
        let md = listed.iter().find(|r| r.uri == pdf.uri).unwrap();
        assert_eq!(md.name, "pdf-processing");
        assert_eq!(md.description.as_deref(), pdf.description());
        assert_eq!(md.mime_type.as_deref(), Some("text/markdown"));

        // The directory of a skill lists its direct children.
        let dir = client
            .request(
                "resources/directory/read",
                json!({"uri": "skill://pdf-processing"}),
            )
            .await
            .unwrap();
        let children: Vec<(&str, &str)> = dir["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["uri"].as_str().unwrap(), r["mimeType"].as_str().unwrap()))
            .collect();
        assert_eq!(
            children,
            [
                ("skill://pdf-processing/SKILL.md", "text/markdown"),
                ("skill://pdf-processing/references", "inode/directory"),
            ]
        );

        let unknown = client
            .get_skill("skill://nothing-here/SKILL.md")
            .await
            .unwrap_err();
        assert_eq!(unknown.code(), -32602);
        client.close().await;
    }
}

#[tokio::test]
async fn reads_never_leave_the_skills_directory() {
    let fixture = Fixture::new("escape");
    let root = fixture.root();
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        fixture.base.join("secret.txt"),
        root.join("pdf-processing/secret.txt"),
    )
    .unwrap();
    // A whole skill outside the root, reached through a symlinked directory.
    write(
        &fixture.base.join("outside/SKILL.md"),
        "---\nname: outside\ndescription: Not ours\n---\nSecret skill.\n",
    );
    #[cfg(unix)]
    std::os::unix::fs::symlink(fixture.base.join("outside"), root.join("outside")).unwrap();
    for era in [Era::Modern, Era::Legacy] {
        let client = connect(&root, era).await;
        for uri in [
            "skill://pdf-processing/../../secret.txt",
            "skill://pdf-processing/references/../../../secret.txt",
            "skill://pdf-processing/%2e%2e/secret.txt",
            "skill://pdf-processing//SKILL.md",
            "skill://pdf-processing/secret.txt",
            "skill://pdf-processing/.hidden",
            "skill://misnamed/SKILL.md",
            "skill://../secret.txt",
            "skill://outside/SKILL.md",
        ] {
            let err = client.read_resource(uri).await.unwrap_err();
            let expected = if era == Era::Modern { -32602 } else { -32002 };
            assert_eq!(err.code(), expected, "{uri}");
        }
        let skills = client.list_skills().await.unwrap();
        let pdf = skills
            .iter()
            .find(|s| s.name() == Some("pdf-processing"))
            .unwrap();
        let SkillResources::Files(files) = &pdf.resources else {
            panic!("a manifest")
        };
        assert!(
            files
                .iter()
                .all(|f| !f.uri.contains("secret") && !f.uri.contains(".hidden")),
            "{files:?}"
        );
        // The one file that is served still reads.
        let read = client.read_resource(&pdf.uri).await.unwrap();
        assert_eq!(text_of(&read.contents), PDF_SKILL);
        let outside = client
            .request(
                "resources/directory/read",
                json!({"uri": "skill://pdf-processing/.."}),
            )
            .await
            .unwrap_err();
        assert_eq!(outside.code(), -32602);
        client.close().await;
    }
}

#[tokio::test]
async fn the_client_refuses_content_that_does_not_match_the_entry() {
    let fixture = Fixture::new("tamper");
    let root = fixture.root();
    let client = connect(&root, Era::Modern).await;
    let skills = client.list_skills().await.unwrap();
    let pdf: Skill = skills
        .into_iter()
        .find(|s| s.name() == Some("pdf-processing"))
        .unwrap();
    let forms_uri = "skill://pdf-processing/references/FORMS.md";

    // Same length, other bytes: a digest mismatch.
    std::fs::write(
        root.join("pdf-processing/references/FORMS.md"),
        "Fill NO field!!!.\n",
    )
    .unwrap();
    match client.read_skill_file(&pdf, forms_uri).await {
        Err(SkillError::DigestMismatch {
            uri,
            expected,
            actual,
        }) => {
            assert_eq!(uri, forms_uri);
            assert_eq!(expected, SkillResource::digest_of(FORMS.as_bytes()));
            assert_eq!(actual, SkillResource::digest_of(b"Fill NO field!!!.\n"));
        }
        other => panic!("expected a digest mismatch, got {other:?}"),
    }
    // Another length: a size mismatch.
    std::fs::write(
        root.join("pdf-processing/references/FORMS.md"),
        "more bytes than listed\n",
    )
    .unwrap();
    assert!(matches!(
        client.read_skill_file(&pdf, forms_uri).await,
        Err(SkillError::SizeMismatch {
            expected: 18,
            actual: 23,
            ..
        })
    ));
    // A file the manifest does not list is refused before any request.
    assert!(matches!(
        client
            .read_skill_file(&pdf, "skill://pdf-processing/extra.md")
            .await,
        Err(SkillError::NotListed { .. })
    ));
    // An entry whose frontmatter differs from the file's: the skill is not loaded.
    let mut lying = pdf.clone();
    lying
        .frontmatter
        .insert("description".into(), json!("Something harmless"));
    match client.load_skill(&lying).await {
        Err(SkillError::FrontmatterMismatch { detail, .. }) => {
            assert!(detail.contains("description"), "{detail}")
        }
        other => panic!("expected a frontmatter mismatch, got {other:?}"),
    }
    // The server recomputes: a fresh entry verifies the new content.
    let fresh = client.get_skill(&pdf.uri).await.unwrap();
    assert_eq!(
        client.read_skill_file(&fresh, forms_uri).await.unwrap(),
        b"more bytes than listed\n"
    );
    client.close().await;
}

#[tokio::test]
async fn a_server_without_the_extension_is_not_asked() {
    let client = Client::connect(McpServer::new("plain")).await.unwrap();
    let err = client.list_skills().await.unwrap_err();
    assert_eq!(err.code(), -32601);
    assert!(
        err.message().contains(SKILLS_EXTENSION),
        "{}",
        err.message()
    );
    client.close().await;
}

/// Sets a file's modification time explicitly, so no test depends on timestamp granularity.
fn set_mtime(path: &Path, time: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(time)
        .unwrap();
}

/// An hour ago: a modification time old enough for the server to cache the file's digest.
fn an_hour_ago() -> SystemTime {
    SystemTime::now() - Duration::from_secs(3600)
}

/// Rewrites a file in place (same inode) with `text` and sets its modification time.
fn rewrite(path: &Path, text: &str, mtime: SystemTime) {
    std::fs::write(path, text).unwrap();
    set_mtime(path, mtime);
}

/// The FORMS.md entry of the pdf-processing skill, if listed.
fn forms_entry(skill: &Skill) -> Option<SkillResource> {
    let SkillResources::Files(files) = &skill.resources else {
        panic!("a manifest")
    };
    files.iter().find(|f| f.uri == FORMS_URI).cloned()
}

/// The pdf-processing skill from `skills/list`, if listed.
async fn listed_pdf(client: &Client) -> Option<Skill> {
    client
        .list_skills()
        .await
        .unwrap()
        .into_iter()
        .find(|s| s.name() == Some("pdf-processing"))
}

/// The digest of FORMS.md as `skills/list` serves it now.
async fn listed_forms_digest(client: &Client) -> String {
    forms_entry(&listed_pdf(client).await.unwrap())
        .unwrap()
        .digest
}

#[tokio::test]
async fn an_edited_file_is_served_with_its_new_digest_even_at_the_same_size() {
    let fixture = Fixture::new("edit");
    let forms = fixture.root().join("pdf-processing/references/FORMS.md");
    let old_time = an_hour_ago();
    set_mtime(&forms, old_time);
    let client = connect(&fixture.root(), Era::Modern).await;
    let pdf_uri = "skill://pdf-processing/SKILL.md";
    // Twice: the second answer comes from the cache.
    for _ in 0..2 {
        assert_eq!(
            listed_forms_digest(&client).await,
            SkillResource::digest_of(FORMS.as_bytes())
        );
    }

    // Same length, other bytes, a later modification time.
    assert_eq!(EDITED[0].len(), FORMS.len());
    rewrite(&forms, EDITED[0], old_time + Duration::from_secs(60));
    let expected = SkillResource::new(FORMS_URI, EDITED[0].as_bytes());
    let listed = listed_pdf(&client).await.unwrap();
    assert_eq!(forms_entry(&listed), Some(expected.clone()));
    let fetched = client.get_skill(pdf_uri).await.unwrap();
    assert_eq!(forms_entry(&fetched), Some(expected));
    assert_eq!(
        client.read_skill_file(&fetched, FORMS_URI).await.unwrap(),
        EDITED[0].as_bytes()
    );

    // A file modified less than 2 s before it is hashed is never cached (here its time is in
    // the future, so the test does not race the clock): rewritten again under the very same
    // modification time and length, it is still re-hashed.
    let recent = SystemTime::now() + Duration::from_secs(60);
    rewrite(&forms, EDITED[1], recent);
    assert_eq!(
        listed_forms_digest(&client).await,
        SkillResource::digest_of(EDITED[1].as_bytes())
    );
    rewrite(&forms, EDITED[2], recent);
    assert_eq!(
        listed_forms_digest(&client).await,
        SkillResource::digest_of(EDITED[2].as_bytes())
    );
    client.close().await;
}

#[tokio::test]
async fn a_file_whose_metadata_is_unchanged_is_not_read_again() {
    let fixture = Fixture::new("cached");
    let forms = fixture.root().join("pdf-processing/references/FORMS.md");
    let old_time = an_hour_ago();
    set_mtime(&forms, old_time);
    let before = std::fs::metadata(&forms).unwrap();
    let client = connect(&fixture.root(), Era::Modern).await;
    let old_digest = SkillResource::digest_of(FORMS.as_bytes());
    assert_eq!(listed_forms_digest(&client).await, old_digest);

    // Other bytes of the same length, with the old modification time put back (same inode):
    // the documented trade-off, as with make or cargo, is that metadata decides, so the server
    // does not read the file again and still serves the digest it cached.
    rewrite(&forms, EDITED[0], old_time);
    let after = std::fs::metadata(&forms).unwrap();
    assert_eq!(after.len(), before.len());
    assert_eq!(after.modified().unwrap(), before.modified().unwrap());
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        assert_eq!(after.ino(), before.ino());
    }
    let stale = listed_pdf(&client).await.unwrap();
    assert_eq!(forms_entry(&stale).unwrap().digest, old_digest);
    let fetched = client.get_skill(&stale.uri).await.unwrap();
    assert_eq!(forms_entry(&fetched).unwrap().digest, old_digest);
    // The bytes really changed: the client, verifying them, refuses the cached entry.
    assert!(matches!(
        client.read_skill_file(&stale, FORMS_URI).await,
        Err(SkillError::DigestMismatch { .. })
    ));

    // Touching the file (a new modification time) makes the server hash it again.
    set_mtime(&forms, old_time + Duration::from_secs(1));
    assert_eq!(
        listed_forms_digest(&client).await,
        SkillResource::digest_of(EDITED[0].as_bytes())
    );
    client.close().await;
}

#[tokio::test]
async fn digests_of_files_and_skills_that_disappear_are_dropped() {
    let fixture = Fixture::new("dropped");
    let skill = fixture.root().join("pdf-processing");
    let forms = skill.join("references/FORMS.md");
    let away = fixture.base.join("away");
    let old_time = an_hour_ago();
    set_mtime(&forms, old_time);
    let client = connect(&fixture.root(), Era::Modern).await;
    assert_eq!(
        listed_forms_digest(&client).await,
        SkillResource::digest_of(FORMS.as_bytes())
    );
    // Each phase takes something away, lists or fetches without it, then puts it back with
    // other bytes under the very same path, length, modification time and inode (a rename
    // keeps them): had the digest stayed cached, the old one would be served.

    // A file of the skill: `skills/list` no longer shows it, and forgets its digest.
    std::fs::rename(&forms, &away).unwrap();
    let pdf = listed_pdf(&client).await.unwrap();
    assert_eq!(forms_entry(&pdf), None);
    rewrite(&away, EDITED[0], old_time);
    std::fs::rename(&away, &forms).unwrap();
    assert_eq!(
        listed_forms_digest(&client).await,
        SkillResource::digest_of(EDITED[0].as_bytes())
    );

    // The whole skill, asked for with `skills/get`.
    std::fs::rename(&skill, &away).unwrap();
    let gone = client.get_skill(&pdf.uri).await.unwrap_err();
    assert_eq!(gone.code(), -32602);
    rewrite(&away.join("references/FORMS.md"), EDITED[1], old_time);
    std::fs::rename(&away, &skill).unwrap();
    let fetched = client.get_skill(&pdf.uri).await.unwrap();
    assert_eq!(
        forms_entry(&fetched).unwrap().digest,
        SkillResource::digest_of(EDITED[1].as_bytes())
    );

    // The whole skill, missing from a `skills/list`.
    std::fs::rename(&skill, &away).unwrap();
    assert!(listed_pdf(&client).await.is_none());
    rewrite(&away.join("references/FORMS.md"), EDITED[2], old_time);
    std::fs::rename(&away, &skill).unwrap();
    assert_eq!(
        listed_forms_digest(&client).await,
        SkillResource::digest_of(EDITED[2].as_bytes())
    );
    client.close().await;
}
