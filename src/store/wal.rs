//! WAL checkpoints on a thread of their own. The writer turns SQLite's automatic checkpoints off,
//! because they run inside the commit that crosses the threshold: that caller would wait for
//! the whole WAL to be copied into the database and synced. Here a second connection copies
//! committed pages in the background (PASSIVE: it never blocks the writer or readers).
//!
//! PASSIVE alone never lets the WAL start over under a steady write load — the writer has always
//! appended more frames by the time the copy is done — and a five-minute soak grew it to 7 GB.
//! So once the WAL holds more than [`TRUNCATE_PAGES`], the checkpointer also runs a TRUNCATE
//! checkpoint: it waits for the writer's current transaction, copies the few frames the PASSIVE
//! pass left, and empties the file. The writer waits for that short tail, not for the bulk.

use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

use super::StoreError;

/// How often the WAL is checkpointed while the writer runs.
const INTERVAL: Duration = Duration::from_millis(100);

/// WAL size (in pages of 4 KiB) past which the WAL is emptied: 16 MiB.
const TRUNCATE_PAGES: i64 = 4096;

/// Starts the checkpointer; it checkpoints once more and stops when `stop`'s sender is dropped.
pub(super) fn start(path: &Path, stop: Receiver<()>) -> Result<JoinHandle<()>, StoreError> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    std::thread::Builder::new()
        .name("trail-checkpoint".into())
        .spawn(move || run(&conn, &stop))
        .map_err(|e| StoreError::Thread(e.to_string()))
}

/// Runs a checkpoint of the given mode; returns the WAL's size and the pages copied.
fn checkpoint(conn: &Connection, mode: &str) -> rusqlite::Result<(i64, i64)> {
    conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |row| {
        Ok((row.get(1)?, row.get(2)?))
    })
}

fn run(conn: &Connection, stop: &Receiver<()>) {
    loop {
        let last = matches!(stop.recv_timeout(INTERVAL), Err(RecvTimeoutError::Disconnected));
        match checkpoint(conn, "PASSIVE") {
            Ok((wal_pages, copied)) if wal_pages > TRUNCATE_PAGES => {
                tracing::trace!(wal_pages, copied, "checkpoint; emptying the WAL");
                if let Err(error) = checkpoint(conn, "TRUNCATE") {
                    tracing::warn!(%error, "WAL truncation failed; retrying");
                }
            }
            Ok((wal_pages, copied)) => tracing::trace!(wal_pages, copied, "checkpoint"),
            Err(error) => tracing::warn!(%error, "WAL checkpoint failed; retrying"),
        }
        if last {
            return;
        }
    }
}
