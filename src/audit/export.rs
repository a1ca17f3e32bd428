//! A CSV export in constant memory: events are read a page at a time and written through a
//! hashing writer, so that the file's SHA-256 is known when the last byte is out.

use std::io::{self, Write};
use std::sync::{Arc, Mutex, PoisonError};

use sha2::{Digest, Sha256};
use tokio::task::JoinHandle;

use super::trails::{Ask, At, Local, Trails};
use crate::store::{PAGE, StoreError};
use crate::trail::Event;
use crate::trail::Filter;
use crate::trail::csv::{CsvError, CsvWriter};
use crate::trail::proofs::ProofsWriter;

/// Where an export reads its events: one trail of `trails` (on a sidecar, its own: node `""`).
#[derive(Debug, Clone)]
pub struct Origin {
    pub trails: Arc<dyn Trails>,
    pub node: String,
}

impl From<&Local> for Origin {
    fn from(trail: &Local) -> Self {
        Self { trails: Arc::new(trail.clone()), node: String::new() }
    }
}

impl Origin {
    async fn page(self, filter: Filter, after: i64) -> Result<Vec<Event>, ExportError> {
        let node = self.trails.is_fleet().then_some(self.node.as_str());
        let at = At { node: &self.node, seq: after };
        let ask = Ask { node, filter: &filter, at, size: PAGE, newest_first: false };
        let page = self.trails.query(ask).await?;
        Ok(page.into_iter().map(|located| located.event).collect())
    }
}

/// Why an export stopped.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot write the CSV: {0}")]
    Csv(#[from] CsvError),
    #[error("cannot write the proofs: {0}")]
    Proofs(#[from] io::Error),
    #[error(transparent)]
    Read(#[from] crate::error::Error),
}

/// An export under way.
pub struct Export<W: Write> {
    csv: CsvWriter<Hashing<W>>,
    filter: Filter,
    after: i64,
    /// Rows written so far.
    pub rows: u64,
    /// `seq` of the first and last rows written.
    pub first_seq: Option<i64>,
    pub last_seq: Option<i64>,
    done: bool,
    /// The next page, being read while this one is written.
    pending: Option<JoinHandle<Result<Vec<Event>, ExportError>>>,
    /// With proofs: where they go, and the tree size they prove inclusion in.
    proofs: Option<(ProofsWriter<Box<dyn Write + Send>>, u64)>,
}

impl<W: Write> Export<W> {
    /// Starts an export of the events matching `filter` into `out`.
    pub fn new(out: W, filter: Filter, bom: bool) -> Result<Self, ExportError> {
        let hashing = Hashing { inner: out, hasher: Sha256::new() };
        Ok(Self {
            csv: CsvWriter::new(hashing, bom)?,
            filter,
            after: 0,
            rows: 0,
            first_seq: None,
            last_seq: None,
            done: false,
            pending: None,
            proofs: None,
        })
    }

    /// Also writes, for each row the tree of the signed `checkpoint` of the first `size` events
    /// covers, its offline proof in that tree into `out` (the proofs file).
    pub fn with_proofs(
        mut self,
        out: Box<dyn Write + Send>,
        checkpoint: String,
        size: u64,
    ) -> Self {
        self.proofs = Some((ProofsWriter::new(out, checkpoint), size));
        self
    }

    /// Writes the next page of events; `false` once everything was written. The export covers
    /// the events that existed when each page was read: it ends at the first short page.
    pub async fn next_page(&mut self, origin: impl Into<Origin>) -> Result<bool, ExportError> {
        if self.done {
            return Ok(false);
        }
        let origin = origin.into();
        let events = match self.pending.take() {
            Some(pending) => pending.await.map_err(|e| StoreError::Thread(e.to_string()))??,
            None => origin.clone().page(self.filter.clone(), self.after).await?,
        };
        if let (Some(last), true) = (events.last(), events.len() == PAGE as usize) {
            let (next, filter, after) = (origin.clone(), self.filter.clone(), last.seq);
            self.pending = Some(tokio::spawn(next.page(filter, after)));
        }
        for event in &events {
            self.csv.write(event)?;
        }
        if let Some((proofs, size)) = &mut self.proofs {
            let covered: Vec<&Event> =
                events.iter().filter(|e| e.seq.unsigned_abs() <= *size).collect();
            let seqs = covered.iter().map(|e| e.seq.unsigned_abs()).collect();
            let found = origin.trails.tree()?.inclusion_proofs(seqs, *size).await?;
            for (event, proof) in covered.into_iter().zip(found) {
                proofs.write(event, proof)?;
            }
        }
        if let (Some(first), Some(last)) = (events.first(), events.last()) {
            self.first_seq.get_or_insert(first.seq);
            self.last_seq = Some(last.seq);
            self.after = last.seq;
        }
        self.rows += events.len() as u64;
        self.done = events.len() < PAGE as usize;
        Ok(!self.done)
    }

    /// Flushes what was written so far to the underlying writer.
    pub fn flush(&mut self) -> Result<(), ExportError> {
        self.csv.flush()?;
        Ok(())
    }

    /// Ends the export.
    pub fn finish(self) -> Result<Finished<W>, ExportError> {
        let proofs_sha256 = match self.proofs {
            Some((proofs, _)) => Some(proofs.finish()?.1),
            None => None,
        };
        let hashing = self.csv.finish()?;
        let sha256 = hex::encode(hashing.hasher.finalize());
        Ok(Finished { out: hashing.inner, sha256, proofs_sha256 })
    }
}

/// An export ended: the underlying writer, the hex SHA-256 of every byte written, and the
/// proofs file's SHA-256 when proofs were written.
#[derive(Debug)]
pub struct Finished<W> {
    pub out: W,
    pub sha256: String,
    pub proofs_sha256: Option<String>,
}

/// Passes bytes through and hashes them.
struct Hashing<W> {
    inner: W,
    hasher: Sha256,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A byte buffer that an export writes into and a streaming response drains between pages.
#[derive(Debug, Clone, Default)]
pub struct SharedBuffer(Arc<Mutex<Vec<u8>>>);

impl SharedBuffer {
    /// Takes what was written since the last call.
    pub fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Write for SharedBuffer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
