//! Pairing a before-event with its after-event for agents whose hooks carry no id for the call
//! (Gemini CLI, Copilot CLI): the before-hook leaves the id it decided the call under in a
//! private directory, named by the call's session, tool and arguments; the after-hook of the same
//! call takes the oldest such key (a rename claims it, so two hooks never take the same one).
//!
//! A key left behind (the agent never ran the call) is removed after a day. Whatever is found
//! there only pairs a report with a decision: the server still checks that the decision is the
//! caller's and that the arguments are the decided ones, so a planted id can do no more than
//! make a report a recorded violation.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// How long an id waits for its after-event.
const KEPT: Duration = Duration::from_secs(24 * 60 * 60);

/// The pending calls of one user's agents.
#[derive(Debug, Clone)]
pub struct Pending {
    dir: PathBuf,
}

impl Pending {
    /// The pending calls in `$XDG_RUNTIME_DIR/toolgate-hooks`, or `$HOME/.cache/toolgate/hooks`;
    /// the directory created private.
    pub fn open() -> io::Result<Self> {
        let dir = match (std::env::var_os("XDG_RUNTIME_DIR"), std::env::var_os("HOME")) {
            (Some(runtime), _) => PathBuf::from(runtime).join("toolgate-hooks"),
            (None, Some(home)) => PathBuf::from(home).join(".cache/toolgate/hooks"),
            (None, None) => {
                return Err(io::Error::other("neither XDG_RUNTIME_DIR nor HOME is set"));
            }
        };
        Self::at(dir)
    }

    /// The pending calls in `dir`, created private. A `dir` that is not a directory of this
    /// user's that only they can enter (a symbolic link, another user's, one others may write
    /// to) is refused: what is kept there decides which decision a report pairs with, and old
    /// entries are removed from it.
    pub fn at(dir: PathBuf) -> io::Result<Self> {
        fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir)?;
        let meta = fs::symlink_metadata(&dir)?;
        let private = meta.is_dir()
            && meta.uid() == rustix::process::getuid().as_raw()
            && meta.mode() & 0o077 == 0;
        if !private {
            let why = "not a directory of this user's that only they may enter";
            return Err(io::Error::other(format!("{}: {why}", dir.display())));
        }
        Ok(Self { dir })
    }

    /// A fresh id for a call that the agent names no id for.
    pub fn fresh_id() -> String {
        uuid::Uuid::now_v7().to_string()
    }

    /// Leaves the call's `id` for the after-event of the call `name`, with the time.
    pub fn leave(&self, name: &[&str], id: &str) -> io::Result<()> {
        self.forget_old();
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let file = format!("{}.{:020}.{}", hash(name), now.as_nanos(), std::process::id());
        fs::write(self.dir.join(file), id)
    }

    /// The id the before-event of the call `name` left, taken, and the time since; none when
    /// there is none.
    pub fn take(&self, name: &[&str]) -> io::Result<Option<(String, Duration)>> {
        let prefix = format!("{}.", hash(name));
        let mut waiting: Vec<String> = fs::read_dir(&self.dir)?
            .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
            .filter(|file| file.starts_with(&prefix))
            .collect();
        waiting.sort();
        for file in waiting {
            let claimed = self.dir.join(format!(".{file}.{}", std::process::id()));
            // Another after-hook of an identical call may have claimed it first: the next.
            if fs::rename(self.dir.join(&file), &claimed).is_ok() {
                let id = fs::read_to_string(&claimed);
                let _ = fs::remove_file(&claimed);
                let left = file.split('.').nth(1).and_then(|n| n.parse::<u128>().ok());
                let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
                let since = left.map_or(Duration::ZERO, |left| {
                    Duration::from_nanos(
                        u64::try_from(now.as_nanos().saturating_sub(left)).unwrap_or(u64::MAX),
                    )
                });
                return id.map(|id| Some((id, since)));
            }
        }
        Ok(None)
    }

    /// Removes ids older than [`KEPT`] (only what this module names so).
    fn forget_old(&self) {
        let Ok(entries) = fs::read_dir(&self.dir) else { return };
        for entry in entries.flatten() {
            if !ours(&entry.file_name().to_string_lossy()) {
                continue;
            }
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|modified| modified.elapsed().is_ok_and(|age| age > KEPT));
            if old {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}

/// Whether `file` is a name [`Pending::leave`] gives: 32 hex digits, then the time and the
/// process, in digits.
fn ours(file: &str) -> bool {
    let parts: Vec<&str> = file.split('.').collect();
    matches!(parts.as_slice(), [hash, time, pid]
        if hash.len() == 32 && hash.bytes().all(|b| b.is_ascii_hexdigit())
            && !time.is_empty() && time.bytes().all(|b| b.is_ascii_digit())
            && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

/// The name of a call (its agent, session, and id or tool and arguments), hashed.
fn hash(name: &[&str]) -> String {
    let mut hash = Sha256::new();
    for part in name {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    hex::encode(&hash.finalize()[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_after_event_takes_one_id_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let pending = Pending::at(dir.path().join("hooks")).unwrap();
        let (first, second) = (Pending::fresh_id(), Pending::fresh_id());
        assert_ne!(first, second);
        let call = ["gemini", "s", "bash", "{}"];
        pending.leave(&call, &first).unwrap();
        pending.leave(&call, &second).unwrap();
        assert_eq!(pending.take(&["gemini", "s", "bash", r#"{"x":1}"#]).unwrap(), None);
        std::thread::sleep(Duration::from_millis(5));
        let (id, since) = pending.take(&call).unwrap().unwrap();
        assert_eq!(id, first);
        assert!(since >= Duration::from_millis(5), "{since:?}");
        assert_eq!(pending.take(&call).unwrap().unwrap().0, second);
        assert_eq!(pending.take(&call).unwrap(), None);
    }

    #[test]
    fn a_directory_that_is_not_private_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        let link = dir.path().join("hooks");
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        assert!(Pending::at(link).is_err());
        let open = dir.path().join("open");
        fs::DirBuilder::new().mode(0o777).create(&open).unwrap();
        fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        assert!(Pending::at(open).is_err());
        assert!(ours(&format!("{}.{:020}.42", "a".repeat(32), 7)));
        assert!(!ours("important.txt") && !ours(".claimed"));
    }
}
