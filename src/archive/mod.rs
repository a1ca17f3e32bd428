//! The archive: the trail as a transparency log publishes itself, in an object store (a local
//! directory, S3 and S3-compatible stores, through the `object_store` crate).
//!
//! The layout is C2SP `tlog-tiles` (`tiles.rs`): hash tiles and entry bundles, so that a
//! standard tlog-tiles client proves any leaf against the archive's `checkpoint` (the trail's
//! signed checkpoint with its witnesses' cosignatures); the events go beside the bundles as CSV
//! exports, each row re-hashing to its leaf. Every object but `checkpoint` is written once and
//! read back after it is written; `checkpoint` is written last, so an archive never names a
//! tree it does not hold. `follow/archive.rs` fills it as the trail grows; `check.rs` verifies
//! one without the trail.

pub mod check;
pub mod lock;
pub mod pruned;
pub mod tiles;

use std::sync::Arc;

use lock::Locker;

use crate::config::LockMode;
use object_store::aws::{AmazonS3, AmazonS3Builder, AmazonS3ConfigKey};
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};

/// The largest object read: above the largest events bundle toolgate writes (256 events, each
/// within the request limits).
const LARGEST: u64 = 256 << 20;

/// The most bytes the object `name` may hold: what toolgate writes there, no more (the store
/// may be anyone's).
fn largest(name: &str) -> u64 {
    if name == "checkpoint" {
        64 << 10
    } else if name.starts_with("tile/entries/") {
        tiles::WIDTH * 34
    } else if name.starts_with("tile/") {
        tiles::WIDTH * 32
    } else {
        LARGEST
    }
}

/// Why the archive could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("the archive's location `{0}` is not a URL toolgate can write to: {1}")]
    Location(String, String),
    #[error(
        "the archive's option `{0}` holds a secret: give it in the environment (AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), never in a file or on a command line"
    )]
    Secret(String),
    #[error("the archive's {0} is {1} bytes: larger than any object toolgate writes")]
    TooLarge(String, u64),
    #[error("the archive: {0}")]
    Store(#[from] object_store::Error),
    #[error(
        "the archive already holds a different {0} (sha256 {1}; this trail's is {2}): the upload \
         stops there until that object is moved aside (docs/operations.md, \"A conflict in the \
         archive\")"
    )]
    Different(String, String, String),
    #[error("the archive's {0} reads back other than it was written")]
    ReadBack(String),
    #[error("the archive's {0} was not locked: {1}")]
    Lock(String, String),
}

/// An archive in an object store.
#[derive(Debug, Clone)]
pub struct Archive {
    store: Arc<dyn ObjectStore>,
    prefix: Path,
    location: String,
    /// An S3 store and its region, which Object Lock needs.
    s3: Option<(Arc<AmazonS3>, String)>,
    /// Locks each object written, when asked to.
    lock: Option<Arc<Locker>>,
}

impl Archive {
    /// The archive at `url`: `file:///var/lib/toolgate/archive` (created when missing) or
    /// `s3://bucket/prefix`, with the store's `options` as `object_store` names them
    /// (`aws_endpoint`, `aws_region`, `aws_allow_http`, …). S3's credentials come from where the
    /// AWS SDKs look (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, a web identity, the
    /// instance's role), never from the configuration file.
    pub fn open<'a>(
        url: &str,
        options: impl IntoIterator<Item = (&'a String, &'a String)>,
    ) -> Result<Self, ArchiveError> {
        let wrong =
            |e: &dyn std::fmt::Display| ArchiveError::Location(url.to_owned(), e.to_string());
        let parsed = url::Url::parse(url).map_err(|e| wrong(&e))?;
        let mut s3 = None;
        let (store, prefix): (Arc<dyn ObjectStore>, Path) = match parsed.scheme() {
            "file" => {
                let dir = parsed.to_file_path().map_err(|()| wrong(&"not a local path"))?;
                std::fs::create_dir_all(&dir).map_err(|e| wrong(&e))?;
                let store = LocalFileSystem::new_with_prefix(&dir).map_err(|e| wrong(&e))?;
                (Arc::new(store), Path::default())
            }
            "s3" => {
                let mut builder = AmazonS3Builder::from_env().with_url(url);
                for (name, value) in options {
                    let key: AmazonS3ConfigKey = name.parse().map_err(|e| wrong(&e))?;
                    // Whatever spelling names it: the secret key, a session token, an SSE-C key.
                    let secret = matches!(
                        key,
                        AmazonS3ConfigKey::SecretAccessKey | AmazonS3ConfigKey::Token
                    ) || key.as_ref() == "aws_sse_customer_key_base64";
                    if secret {
                        return Err(ArchiveError::Secret(name.clone()));
                    }
                    builder = builder.with_config(key, value);
                }
                let region = builder.get_config_value(&AmazonS3ConfigKey::Region);
                let store = Arc::new(builder.build().map_err(|e| wrong(&e))?);
                s3 = Some((store.clone(), region.unwrap_or_else(|| "us-east-1".into())));
                (store, Path::from(parsed.path().trim_matches('/')))
            }
            _ => return Err(wrong(&"an archive is a file:// or an s3:// URL")),
        };
        Ok(Self { store, prefix, location: url.to_owned(), s3, lock: None })
    }

    /// The same archive, locking every object it writes with S3 Object Lock for `days` in
    /// `mode` (`lock.rs`); refused for a store that is not S3, or for no days.
    pub fn locking(mut self, days: Option<u32>, mode: LockMode) -> Result<Self, ArchiveError> {
        let Some(days) = days else { return Ok(self) };
        if days == 0 {
            let why = "lock_days is at least 1: a lock of no days locks nothing".into();
            return Err(ArchiveError::Location(self.location, why));
        }
        let Some((s3, region)) = self.s3.clone() else {
            let why = "Object Lock is S3's: only an s3:// archive can be locked".into();
            return Err(ArchiveError::Location(self.location, why));
        };
        self.lock = Some(Arc::new(Locker::new(s3, region, days, mode)));
        Ok(self)
    }

    /// Where it is, for the log.
    pub fn location(&self) -> &str {
        &self.location
    }

    fn path(&self, name: &str) -> Path {
        Path::from_iter(self.prefix.parts().chain(Path::from(name).parts()))
    }

    /// The object `name`, or `None` when the archive has none.
    pub async fn get(&self, name: &str) -> Result<Option<Vec<u8>>, ArchiveError> {
        match self.store.get(&self.path(name)).await {
            // The store may be anyone's: nothing larger than an object of ours is read.
            Ok(object) if object.meta.size > largest(name) => {
                Err(ArchiveError::TooLarge(name.to_owned(), object.meta.size))
            }
            Ok(object) => Ok(Some(object.bytes().await?.to_vec())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Writes the object `name`, which never changes: when the archive holds it already, it
    /// must hold these bytes (a resumed upload writes again what it wrote before a crash).
    /// Read back after it is written.
    pub async fn put_once(&self, name: &str, bytes: Vec<u8>) -> Result<(), ArchiveError> {
        let options = PutOptions { mode: PutMode::Create, ..PutOptions::default() };
        let payload = PutPayload::from(bytes.clone());
        match self.store.put_opts(&self.path(name), payload, options).await {
            Ok(_) => self.read_back(name, &bytes).await?,
            // Written before a restart, perhaps not locked yet: locked again below.
            Err(object_store::Error::AlreadyExists { .. }) => match self.get(name).await? {
                Some(held) if held == bytes => {}
                held => {
                    let sha = |b: &[u8]| hex::encode(<sha2::Sha256 as sha2::Digest>::digest(b));
                    let stored = held.as_deref().map_or_else(|| "none".to_owned(), sha);
                    return Err(ArchiveError::Different(name.to_owned(), stored, sha(&bytes)));
                }
            },
            Err(e) => return Err(e.into()),
        }
        self.locked(name).await
    }

    /// Replaces the object `name` (the checkpoint), and reads it back.
    pub async fn put(&self, name: &str, bytes: Vec<u8>) -> Result<(), ArchiveError> {
        self.store.put(&self.path(name), PutPayload::from(bytes.clone())).await?;
        self.read_back(name, &bytes).await?;
        self.locked(name).await
    }

    /// Locks the object `name` as written, when the archive locks its objects.
    async fn locked(&self, name: &str) -> Result<(), ArchiveError> {
        match &self.lock {
            Some(locker) => locker.lock(&self.path(name)).await,
            None => Ok(()),
        }
    }

    async fn read_back(&self, name: &str, bytes: &[u8]) -> Result<(), ArchiveError> {
        match self.get(name).await? {
            Some(held) if held == bytes => Ok(()),
            _ => Err(ArchiveError::ReadBack(name.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[tokio::test]
    async fn an_object_larger_than_any_of_ours_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("file://{}", dir.path().display());
        let archive = Archive::open(&url, &BTreeMap::new()).unwrap();
        // Sparse: the size a hostile store claims, without the bytes on disk.
        std::fs::File::create(dir.path().join("checkpoint")).unwrap().set_len(LARGEST + 1).unwrap();
        let refused = archive.get("checkpoint").await.unwrap_err();
        assert!(matches!(refused, ArchiveError::TooLarge(_, size) if size == LARGEST + 1));
        std::fs::write(dir.path().join("checkpoint"), b"small").unwrap();
        assert_eq!(archive.get("checkpoint").await.unwrap().unwrap(), b"small");
        // An entry bundle of empty entries, which would read as thousands of leaves: no bundle
        // of ours is larger than 256 leaves of 34 bytes.
        std::fs::create_dir_all(dir.path().join("tile/entries")).unwrap();
        std::fs::write(dir.path().join("tile/entries/000"), vec![0; 256 * 34 + 2]).unwrap();
        let refused = archive.get("tile/entries/000").await.unwrap_err();
        assert!(matches!(refused, ArchiveError::TooLarge(_, 8706)), "{refused}");
    }
}
