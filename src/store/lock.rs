//! One trail, one writer: the process that writes a trail holds an exclusive lock on a file
//! beside it (`<trail>-lock`, `flock`), and a second writer refuses to start, naming the trail
//! and the holder. A separate file, because SQLite's own locks on the trail are `fcntl` locks,
//! which closing any descriptor of the file would drop. Read-only commands never take it.
//!
//! The lock file is never removed: removing it would let two processes hold locks on two
//! files of one name. A trail reached by another path (a hard link, a bind mount) has another
//! lock file; docs/operations.md says so.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::StoreError;

/// The lock on a trail, held while the value lives.
#[derive(Debug)]
pub struct TrailLock {
    _file: File,
}

impl TrailLock {
    /// Takes the lock on the trail at `db`, or says who holds it.
    pub fn acquire(db: &Path) -> Result<Self, StoreError> {
        let path = lock_path(db);
        let locked = || -> std::io::Result<Result<File, String>> {
            // Never through a symbolic link planted at the path: the file is truncated below.
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
                .open(&path)?;
            if !file.metadata()?.is_file() {
                return Err(std::io::Error::other("not a regular file"));
            }
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    let holder = std::fs::read_to_string(&path).unwrap_or_default();
                    return Ok(Err(holder.trim().to_owned()));
                }
                Err(TryLockError::Error(e)) => return Err(e),
            }
            file.set_len(0)?;
            // The pid and the subcommand only: the rest of a command line may hold secrets.
            let command = std::env::args().nth(1).unwrap_or_default();
            writeln!(file, "pid {} (`toolgate {command}`)", std::process::id())?;
            Ok(Ok(file))
        };
        match locked() {
            Ok(Ok(file)) => Ok(Self { _file: file }),
            Ok(Err(holder)) => Err(StoreError::Held {
                trail: db.display().to_string(),
                holder: if holder.is_empty() { "another process".to_owned() } else { holder },
            }),
            Err(e) => Err(StoreError::Lock(format!("`{}`: {e}", path.display()))),
        }
    }
}

/// `<trail>-lock`, beside the trail.
fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.file_name().unwrap_or_default().to_owned();
    name.push("-lock");
    db.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_one_trail_is_refused_and_names_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("trail.db");
        let held = TrailLock::acquire(&db).unwrap();
        let refused = TrailLock::acquire(&db).unwrap_err().to_string();
        assert!(
            refused.contains("trail.db")
                && refused.contains(&format!("pid {}", std::process::id())),
            "{refused}"
        );
        drop(held);
        assert!(TrailLock::acquire(&db).is_ok(), "released with its holder");
    }
}
