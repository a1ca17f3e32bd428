//! WAL checkpoints, kept off the commits' path. The writer turns SQLite's automatic checkpoints
//! off, because they run inside the commit that crosses the threshold: that caller would wait
//! for the whole WAL to be copied into the database and synced. Instead a second connection
//! copies committed pages in the background every [`INTERVAL`] (PASSIVE: it never blocks the
//! writer or readers).
//!
//! PASSIVE alone never lets the WAL start over under a steady write load (the writer has
//! always appended more frames by the time the copy is done), and a five-minute soak grew it to
//! 7 GB. So the writer itself empties the WAL once it is past [`BOUND`], between two groups,
//! when it holds no transaction: a TRUNCATE checkpoint on its own connection, which has only
//! the frames of the last few milliseconds left to copy. Done from the checkpointer's connection
//! instead, it made the writer wait on a lock through SQLite's busy handler, which sleeps in
//! steps of up to 100 ms: the 0.1–0.4 s stalls of the first benchmark rounds.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, TryLockError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::StoreError;

/// How often the background connection copies committed pages.
const INTERVAL: Duration = Duration::from_millis(10);

/// The WAL's size past which the writer empties it: 4 MiB.
const BOUND: u64 = 4 << 20;

/// How long the writer leaves the WAL alone after a reader kept it from emptying it.
const BACK_OFF: Duration = Duration::from_millis(20);

/// Runs a checkpoint of the given mode; returns whether it was kept from finishing, the WAL's
/// size and the pages copied.
fn checkpoint(conn: &Connection, mode: &str) -> rusqlite::Result<(bool, i64, i64)> {
    conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |row| {
        Ok((row.get::<_, i64>(0)? != 0, row.get(1)?, row.get(2)?))
    })
}

/// The writer's side: empties the WAL between groups once it is past [`BOUND`].
pub(super) struct Emptier {
    wal: PathBuf,
    /// Held by whichever connection checkpoints, so that the two never wait on each other.
    copying: Arc<Mutex<()>>,
    not_before: Instant,
}

impl Emptier {
    /// Called by the writer between groups, with no transaction open.
    pub(super) fn empty_if_full(&mut self, conn: &Connection) {
        let full = std::fs::metadata(&self.wal).is_ok_and(|m| m.len() > BOUND);
        if !full || Instant::now() < self.not_before {
            return;
        }
        // The background pass is copying: the next group tries again.
        let _copying = match self.copying.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        };
        // A reader still on older frames keeps the WAL from starting over; then the writer
        // goes on at once rather than wait for it, and tries again a little later.
        let waited = conn.busy_timeout(Duration::ZERO).and_then(|()| checkpoint(conn, "TRUNCATE"));
        match waited {
            Ok((false, _, copied)) => tracing::trace!(copied, "WAL emptied"),
            Ok((true, wal_pages, copied)) => {
                tracing::trace!(wal_pages, copied, "WAL in use by a reader; not emptied");
                self.not_before = Instant::now() + BACK_OFF;
            }
            Err(error) => {
                if error.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy) {
                    tracing::trace!("WAL busy; not emptied");
                } else {
                    tracing::warn!(%error, "emptying the WAL failed; retrying");
                }
                self.not_before = Instant::now() + BACK_OFF;
            }
        }
        if let Err(error) = conn.busy_timeout(super::BUSY_TIMEOUT) {
            tracing::warn!(%error, "restoring the writer's busy timeout failed");
        }
    }
}

/// Starts the background checkpointer, which checkpoints once more and stops when `stop`'s
/// sender is dropped; returns it with the writer's [`Emptier`].
pub(super) fn start(
    path: &Path,
    stop: Receiver<()>,
) -> Result<(JoinHandle<()>, Emptier), StoreError> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(super::BUSY_TIMEOUT)?;
    let copying = Arc::new(Mutex::new(()));
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let emptier = Emptier { wal: wal.into(), copying: copying.clone(), not_before: Instant::now() };
    let thread = std::thread::Builder::new()
        .name("trail-checkpoint".into())
        .spawn(move || run(&conn, &copying, &stop))
        .map_err(|e| StoreError::Thread(e.to_string()))?;
    Ok((thread, emptier))
}

fn run(conn: &Connection, copying: &Mutex<()>, stop: &Receiver<()>) {
    loop {
        let last = matches!(stop.recv_timeout(INTERVAL), Err(RecvTimeoutError::Disconnected));
        let result = {
            let _copying = copying.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            checkpoint(conn, "PASSIVE")
        };
        match result {
            Ok((_, wal_pages, copied)) => tracing::trace!(wal_pages, copied, "checkpoint"),
            Err(error) => tracing::warn!(%error, "WAL checkpoint failed; retrying"),
        }
        if last {
            return;
        }
    }
}
