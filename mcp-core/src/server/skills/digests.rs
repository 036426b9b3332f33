//! The SHA-256 digests of skill files, cached by each file's metadata so that a client polling
//! `skills/list` does not make the server read and hash the whole tree each time.
//!
//! A file is re-hashed when its [`Stamp`] (modification time, length and, on Unix, device and
//! inode) differs from the one its digest was computed under; otherwise the cached digest is
//! served without opening it (the rule `make` and `cargo` use: metadata decides). Two guards
//! keep a digest from being cached under a stamp that does not describe its bytes:
//! - a file modified less than [`RACY_WINDOW`] before it was hashed is not cached (hashed again
//!   on the next call), since a later edit within the file system's timestamp granularity
//!   could leave its stamp unchanged;
//! - a file whose stamp changed while it was hashed is not cached.
//!
//! The cache holds, per skill directory, the files of that skill's last manifest: computing a
//! manifest replaces the skill's entries (files that disappeared are dropped), a skill that is
//! no longer served is forgotten, and a full listing drops every skill it did not see. So it
//! never grows beyond the tree, each skill within [`MAX_SKILL_FILES`](super::MAX_SKILL_FILES).

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use super::MAX_SKILL_BYTES;

/// How long after its last modification a file must have been hashed for its digest to be
/// cached (covers coarse timestamps: 2 s on FAT, 1 s on some others).
const RACY_WINDOW: Duration = Duration::from_secs(2);

/// What decides whether a file changed since it was hashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    /// `None` where the platform reports no modification time: such a file is never cached.
    modified: Option<SystemTime>,
    size: u64,
    /// Device and inode: a file replaced by another (rename over it, symlink retargeted).
    #[cfg(unix)]
    file_id: (u64, u64),
}

impl Stamp {
    /// The stamp of a file from its metadata (of the link's target, for a symbolic link).
    pub(super) fn of(meta: &fs::Metadata) -> Self {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Self {
            modified: meta.modified().ok(),
            size: meta.len(),
            #[cfg(unix)]
            file_id: (meta.dev(), meta.ino()),
        }
    }

    /// The file's length when stamped.
    pub(super) fn size(&self) -> u64 {
        self.size
    }

    /// Whether a digest computed from `hashed_at` on may be trusted for this stamp later.
    fn settled(&self, hashed_at: SystemTime) -> bool {
        self.modified
            .and_then(|m| m.checked_add(RACY_WINDOW))
            .is_some_and(|m| m <= hashed_at)
    }
}

/// One file of a manifest to digest: where it is and its stamp as the listing found it.
#[derive(Debug)]
pub(super) struct ToDigest<'a> {
    pub(super) path: &'a Path,
    pub(super) stamp: Stamp,
}

/// A digest and the stamp it was computed under.
#[derive(Debug, Clone)]
struct Cached {
    stamp: Stamp,
    digest: String,
}

/// The digest cache of one skills directory: skill directory → file path → digest.
#[derive(Debug, Default)]
pub(super) struct DigestCache {
    skills: Mutex<HashMap<PathBuf, HashMap<PathBuf, Cached>>>,
}

impl DigestCache {
    fn lock(&self) -> MutexGuard<'_, HashMap<PathBuf, HashMap<PathBuf, Cached>>> {
        self.skills.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The digests of the files of the skill in `skill`, in order: cached ones whose stamp is
    /// unchanged, the others hashed from the disk (no lock is held while hashing). The skill's
    /// entries become exactly these files. `None` (and the skill forgotten) when a file cannot
    /// be read or its length is no longer the stamped one.
    pub(super) fn manifest(&self, skill: &Path, files: &[ToDigest<'_>]) -> Option<Vec<String>> {
        let known: Vec<Option<String>> = {
            let skills = self.lock();
            let entries = skills.get(skill);
            files
                .iter()
                .map(|f| {
                    let cached = entries?.get(f.path)?;
                    (cached.stamp == f.stamp).then(|| cached.digest.clone())
                })
                .collect()
        };
        let mut digests = Vec::with_capacity(files.len());
        let mut entries = HashMap::with_capacity(files.len());
        for (file, known) in files.iter().zip(known) {
            let digest = match known {
                Some(digest) => digest,
                None => {
                    let hashed_at = SystemTime::now();
                    let Some(digest) = digest_file(file.path, file.stamp.size) else {
                        self.forget(skill);
                        return None;
                    };
                    let unchanged =
                        fs::metadata(file.path).is_ok_and(|m| Stamp::of(&m) == file.stamp);
                    if !(unchanged && file.stamp.settled(hashed_at)) {
                        digests.push(digest);
                        continue;
                    }
                    digest
                }
            };
            entries.insert(
                file.path.to_path_buf(),
                Cached {
                    stamp: file.stamp,
                    digest: digest.clone(),
                },
            );
            digests.push(digest);
        }
        self.lock().insert(skill.to_path_buf(), entries);
        Some(digests)
    }

    /// Drops the entries of the skill in `skill` (it is no longer served).
    pub(super) fn forget(&self, skill: &Path) {
        self.lock().remove(skill);
    }

    /// Drops the entries of every skill not in `served` (after a full listing).
    pub(super) fn retain(&self, served: &HashSet<PathBuf>) {
        self.lock().retain(|skill, _| served.contains(skill));
    }
}

/// The digest of a file, streamed; `None` if it cannot be read or its length is not `size`.
fn digest_file(path: &Path, size: u64) -> Option<String> {
    use sha2::{Digest, Sha256};
    let mut file = fs::File::open(path).ok()?.take(MAX_SKILL_BYTES + 1);
    let mut hasher = Sha256::new();
    let mut buf = [0u8; 64 * 1024];
    let mut read = 0u64;
    loop {
        let n = file.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        read += n as u64;
        hasher.update(&buf[..n]);
    }
    (read == size).then(|| crate::types::hex_digest(hasher.finalize().as_slice()))
}
