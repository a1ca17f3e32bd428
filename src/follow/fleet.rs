//! The fleet sink: the sidecar's committed events go to the fleet store in batches, from the
//! last seq the store holds for the node (asked of the store at start and after any trouble,
//! so a restart of either side resumes where the store stands: delivery at least once, storage
//! exactly once). Once the events are caught up, the witnesses' cosignatures of its
//! checkpoints follow, from the store's cosignature cursor.

use std::time::Duration;

use prometheus_client::metrics::counter::Counter;

use super::{Follower, Sink, Taken, Trouble};
use crate::config::FleetConfig;
use crate::fleet::URL_ENV;
use crate::fleet::store::{FleetError, FleetStore};
use crate::metrics::{Metrics, SinkNames};
use crate::store::Reader;
use crate::trail::Event;

/// Its metrics: `toolgate_fleet_shipped_events_total`, `toolgate_fleet_lag_events`, ….
const NAMES: SinkNames = SinkNames {
    delivered: "shipped_events",
    delivered_help: "Events stored in the fleet store by this node's shipper",
    taken: "stored",
    destination: "the fleet store",
    position: "shipped_seq",
};

/// Why `[fleet]` is refused at start.
#[derive(Debug, thiserror::Error)]
pub enum FleetConfigError {
    #[error("[fleet] node_id needs postgres_url, or the URL in {URL_ENV}")]
    NoUrl,
    #[error(
        "[fleet] postgres_url holds a password: give it in {URL_ENV} or PGPASSWORD, never in the file"
    )]
    Password,
    #[error("[fleet] the PostgreSQL URL does not read: {0}")]
    Url(FleetError),
}

/// The sink of a configured shipper.
pub struct Fleet {
    store: FleetStore,
    node: String,
    batch: u32,
    /// The checkpoint seq the store's cosignatures stand at; asked again after any trouble.
    cosigned: Option<i64>,
    cosignatures: Counter,
}

impl std::fmt::Debug for Fleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fleet").field("node", &self.node).finish_non_exhaustive()
    }
}

/// The shipper `[fleet]` asks for, if it asks for one. Once caught up it looks every
/// `every_ms` for cosignatures, which come without a commit.
pub fn follower(
    config: &FleetConfig,
    metrics: &Metrics,
) -> Result<Option<Follower<Fleet>>, FleetConfigError> {
    let Some(node) = &config.node_id else { return Ok(None) };
    if config.postgres_url.as_deref().is_some_and(has_password) {
        return Err(FleetConfigError::Password);
    }
    let url = std::env::var(URL_ENV).ok().or_else(|| config.postgres_url.clone());
    let url = url.ok_or(FleetConfigError::NoUrl)?;
    let store = FleetStore::lazy(&url, 1).map_err(FleetConfigError::Url)?;
    tracing::info!(node = %node, "shipping the trail to the fleet store");
    let batch = config.batch_events.clamp(1, 10_000);
    let cosignatures = metrics.counter(
        "fleet_shipped_cosignatures",
        "Witness cosignatures stored in the fleet store by this node's shipper",
    );
    let sink = Fleet { store, node: node.clone(), batch, cosigned: None, cosignatures };
    let every = Duration::from_millis(config.every_ms.max(1));
    let follower =
        Follower::new(sink, batch, every).looking_every(every).coalescing(super::COALESCE);
    Ok(Some(follower.measured(metrics, NAMES)))
}

/// Whether a PostgreSQL URL carries a password: `user:password@` or `?password=`.
fn has_password(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let userinfo = rest.split(['/', '?']).next().and_then(|host| host.rsplit_once('@'));
    let query = rest.split_once('?').map_or("", |(_, q)| q);
    userinfo.is_some_and(|(user, _)| user.contains(':'))
        || query.split('&').any(|pair| pair.to_ascii_lowercase().starts_with("password="))
}

impl Sink for Fleet {
    const NAME: &'static str = "fleet";
    const DOING: &'static str = "shipping";
    const AGAIN: &'static str = "shipping to the fleet store again";

    fn destination(&self) -> &str {
        &self.node
    }

    /// The last seq the store holds for the node; its cosignatures are asked again too.
    async fn resume(&mut self, _reader: &Reader) -> Result<i64, Trouble> {
        self.cosigned = None;
        let (head, _) = self.store.head(&self.node).await.map_err(failed)?;
        Ok(head)
    }

    /// One batch into `fleet_ingest`, which checks it against the node's chain and tree.
    async fn take(&mut self, events: Vec<Event>) -> Result<Taken, Trouble> {
        let ingested = self.store.ingest(&self.node, &events).await.map_err(failed)?;
        if let Some(refused) = ingested.refused {
            return Err(Trouble::Refused(format!("the fleet store refused the batch: {refused}")));
        }
        Ok(Taken { through: ingested.head, counted: ingested.stored })
    }

    /// Ships the cosignatures of checkpoint events up to `through` (which the store holds)
    /// that the store does not have yet.
    async fn caught_up(&mut self, reader: &Reader, through: i64) -> Result<(), Trouble> {
        let from = match self.cosigned {
            Some(from) => from,
            None => self.store.cosigned(&self.node).await.map_err(failed)?,
        };
        self.cosigned = Some(from);
        let batch = reader
            .cosignatures_after(from, through, self.batch)
            .await
            .map_err(|e| Trouble::Failed(format!("cannot read the trail: {e}")))?;
        let Some(last) = batch.last().map(|c| c.seq) else { return Ok(()) };
        let (stored, refused) = self.store.cosign(&self.node, &batch).await.map_err(failed)?;
        if let Some(refused) = refused {
            return Err(Trouble::Refused(format!("the fleet store refused the batch: {refused}")));
        }
        self.cosignatures.inc_by(stored);
        // A full batch may have cut the last checkpoint's witnesses short: that one again.
        self.cosigned = Some(if batch.len() < self.batch as usize { last } else { last - 1 });
        Ok(())
    }

    async fn close(self) {
        self.store.close().await;
    }
}

fn failed(error: FleetError) -> Trouble {
    Trouble::Failed(error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_anywhere_in_the_url_is_found() {
        for url in [
            "postgres://u:secret@h/db",
            "postgres://h/db?sslmode=require&password=secret",
            "postgresql://u:@h:5432/db",
        ] {
            assert!(has_password(url), "{url}");
        }
        for url in ["postgres://u@h/db", "postgres://h/db?user=u", "postgres://u@h/db?passfile=x"] {
            assert!(!has_password(url), "{url}");
        }
    }
}
