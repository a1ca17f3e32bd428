//! The sidecar's shipper: its committed events go to the fleet store in batches, from the last
//! seq the store holds for the node (asked of the store at start and after any trouble, so a
//! restart of either side resumes where the store stands: delivery at least once, storage
//! exactly once). It reads the trail through the read-only connections and never touches the
//! writer, so it cannot delay or fail a decision; a store that is down or refusing only makes
//! the lag grow, and the log says so once, not in a loop. Once the events are caught up, the
//! witnesses' cosignatures of its checkpoints follow, from the store's cosignature cursor.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::store::{FleetError, FleetStore};
use crate::backoff::Backoff;
use crate::config::FleetConfig;
use crate::metrics::{Metrics, Shipped};
use crate::store::{Filter, Reader, StoreError};

/// The environment variable that may hold the store's URL (and its password).
pub const URL_ENV: &str = "TOOLGATE_FLEET_POSTGRES_URL";

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

/// A configured shipper, ready to run.
pub struct Shipper {
    store: FleetStore,
    node: String,
    batch: u32,
    every: Duration,
}

/// The shipper `[fleet]` asks for, if it asks for one.
pub fn shipper(config: &FleetConfig) -> Result<Option<Shipper>, FleetConfigError> {
    let Some(node) = &config.node_id else { return Ok(None) };
    if config.postgres_url.as_deref().is_some_and(has_password) {
        return Err(FleetConfigError::Password);
    }
    let url = std::env::var(URL_ENV).ok().or_else(|| config.postgres_url.clone());
    let url = url.ok_or(FleetConfigError::NoUrl)?;
    let store = FleetStore::lazy(&url, 1).map_err(FleetConfigError::Url)?;
    Ok(Some(Shipper {
        store,
        node: node.clone(),
        batch: config.batch_events.clamp(1, 10_000),
        every: Duration::from_millis(config.every_ms.max(1)),
    }))
}

/// Whether a PostgreSQL URL carries a password: `user:password@` or `?password=`.
fn has_password(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let userinfo = rest.split(['/', '?']).next().and_then(|host| host.rsplit_once('@'));
    let query = rest.split_once('?').map_or("", |(_, q)| q);
    userinfo.is_some_and(|(user, _)| user.contains(':'))
        || query.split('&').any(|pair| pair.to_ascii_lowercase().starts_with("password="))
}

/// Why a round of shipping stopped short.
#[derive(Debug, thiserror::Error)]
enum Trouble {
    #[error("the fleet store refused the batch: {0}")]
    Refused(String),
    #[error(transparent)]
    Store(#[from] FleetError),
    #[error("cannot read the trail: {0}")]
    Trail(#[from] StoreError),
}

impl Shipper {
    /// The node this shipper ships for.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// Ships until `stopping` turns true.
    pub async fn run(
        self,
        reader: Reader,
        metrics: Arc<Metrics>,
        mut stopping: watch::Receiver<bool>,
    ) {
        // The last seq the store holds, and the checkpoint seq its cosignatures stand at;
        // both asked again after any trouble.
        let mut cursor: Option<i64> = None;
        let mut cosigned: Option<i64> = None;
        let mut pause = Duration::ZERO;
        let mut backoff = Backoff::new(self.every);
        loop {
            let stop = tokio::select! {
                _ = stopping.wait_for(|stop| *stop) => true,
                () = tokio::time::sleep(pause) => false,
            };
            if stop {
                self.store.close().await;
                return;
            }
            let round = match self.round(&reader, &metrics, &mut cursor).await {
                Ok(false) => {
                    let through = cursor.unwrap_or(0);
                    self.cosign(&reader, &metrics, &mut cosigned, through).await.map(|()| false)
                }
                other => other,
            };
            match round {
                Ok(more) => {
                    let recovered;
                    (pause, recovered) = backoff.succeeded(more);
                    if recovered {
                        tracing::info!(node = %self.node, "shipping to the fleet store again");
                    }
                }
                Err(why) => {
                    (cursor, cosigned) = (None, None);
                    let message = why.to_string();
                    let new;
                    (pause, new) = backoff.failed(message.clone());
                    if new {
                        match why {
                            Trouble::Refused(_) => tracing::error!(node = %self.node, "{message}"),
                            _ => tracing::warn!(node = %self.node, "shipping is behind: {message}"),
                        }
                    }
                }
            }
        }
    }

    /// Ships one batch; whether more are waiting.
    async fn round(
        &self,
        reader: &Reader,
        metrics: &Metrics,
        cursor: &mut Option<i64>,
    ) -> Result<bool, Trouble> {
        let head = match *cursor {
            Some(head) => head,
            None => {
                let head = self.store.head(&self.node).await.inspect_err(|_| {
                    metrics.fleet_batch(Shipped::Failed, 0);
                })?;
                head.0
            }
        };
        *cursor = Some(head);
        let local = reader.head().await?.map_or(0, |h| h.seq);
        let events = reader.query(&Filter::default(), head, self.batch).await?;
        if events.is_empty() {
            metrics.fleet_lag(0, 0.0);
            return Ok(false);
        }
        let ingested = match self.store.ingest(&self.node, &events).await {
            Ok(ingested) => ingested,
            Err(error) => {
                metrics.fleet_batch(Shipped::Failed, 0);
                return Err(error.into());
            }
        };
        if let Some(refused) = ingested.refused {
            metrics.fleet_batch(Shipped::Refused, 0);
            return Err(Trouble::Refused(refused));
        }
        metrics.fleet_batch(Shipped::Stored, ingested.stored);
        *cursor = Some(ingested.head);
        let behind = (local - ingested.head).max(0).unsigned_abs();
        let age = match behind {
            0 => 0.0,
            _ => reader.event(ingested.head + 1).await?.map_or(0.0, |e| e.age_seconds()),
        };
        metrics.fleet_lag(behind, age);
        Ok(behind > 0)
    }

    /// Ships the cosignatures of checkpoint events up to `through` (which the store holds)
    /// that the store does not have yet.
    async fn cosign(
        &self,
        reader: &Reader,
        metrics: &Metrics,
        cursor: &mut Option<i64>,
        through: i64,
    ) -> Result<(), Trouble> {
        let from = match *cursor {
            Some(from) => from,
            None => self.store.cosigned(&self.node).await?,
        };
        *cursor = Some(from);
        let batch = reader.cosignatures_after(from, through, self.batch).await?;
        let Some(last) = batch.last().map(|c| c.seq) else { return Ok(()) };
        let (stored, refused) = self.store.cosign(&self.node, &batch).await?;
        if let Some(refused) = refused {
            metrics.fleet_batch(Shipped::Refused, 0);
            return Err(Trouble::Refused(refused));
        }
        metrics.fleet_cosignatures(stored);
        // A full batch may have cut the last checkpoint's witnesses short: that one again.
        *cursor = Some(if batch.len() < self.batch as usize { last } else { last - 1 });
        Ok(())
    }
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
