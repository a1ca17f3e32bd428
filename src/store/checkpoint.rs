//! WAL checkpoints on a thread of their own. The writer turns SQLite's automatic checkpoints off,
//! because they run inside the commit that crosses the threshold: that caller would wait for
//! the whole WAL to be copied into the database and synced. Here a second connection copies
//! committed pages in the background (PASSIVE: it never blocks the writer or readers), so the
//! WAL is restarted from its beginning as soon as no reader still needs it, and stays bounded.

use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

use super::StoreError;

/// How often the WAL is checkpointed while the writer runs.
const INTERVAL: Duration = Duration::from_millis(100);

/// Starts the checkpointer; it checkpoints once more and stops when `stop`'s sender is dropped.
pub(super) fn start(path: &Path, stop: Receiver<()>) -> Result<JoinHandle<()>, StoreError> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    std::thread::Builder::new()
        .name("trail-checkpoint".into())
        .spawn(move || run(&conn, &stop))
        .map_err(|e| StoreError::Thread(e.to_string()))
}

fn run(conn: &Connection, stop: &Receiver<()>) {
    loop {
        let last = matches!(stop.recv_timeout(INTERVAL), Err(RecvTimeoutError::Disconnected));
        let checkpointed = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
            Ok((row.get::<_, i64>(1)?, row.get::<_, i64>(2)?))
        });
        match checkpointed {
            Ok((wal_pages, copied)) => {
                tracing::trace!(wal_pages, copied, "checkpoint");
            }
            Err(error) => tracing::warn!(%error, "WAL checkpoint failed; retrying"),
        }
        if last {
            return;
        }
    }
}
