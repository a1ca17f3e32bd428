//! The trail and what follows it, in one place: the store opened with its checkpoint cadence,
//! then, once the policy in force is on the trail, the auditors' index, the checkpoint
//! publisher, the witness submitter, the followers that ship, export and archive, and
//! retention, each registered in [`Tasks`] at the stage that stops it. Everything they need is
//! built and checked in [`Lifecycle::open`], before the trail is touched, so that a start it
//! refuses leaves no event behind. A new background task is one registration in
//! [`Lifecycle::start`].

use std::sync::Arc;

use super::ServerError;
use super::tasks::{Stage, Tasks};
use crate::archive::Archive;
use crate::audit::Local;
use crate::config::{CheckpointsConfig, Config, RetentionConfig};
use crate::follow::archive::Archiver;
use crate::follow::fleet::Fleet;
use crate::follow::index::Index;
use crate::follow::otlp::Otlp;
use crate::follow::{Follower, Holder, Trail};
use crate::metrics::Metrics;
use crate::retention::Retention;
use crate::store::{Cadence, Store, WriterThread};
use crate::trail::cosignature::CosignatureVerifier;
use crate::trail::note::{NoteSigner, NoteVerifier};
use crate::trust::submitter::Target;

/// The trail opened, and what will follow it once started.
pub struct Lifecycle {
    pub store: Store,
    pub writer: WriterThread,
    /// The auditors' reads: the file, and below its prunes, the archive.
    pub local: Local,
    /// Who signs the checkpoints, and who cosigns them (the console shows both).
    pub log_key: Option<NoteVerifier>,
    pub witness_keys: Vec<CosignatureVerifier>,
    signer: Option<Arc<NoteSigner>>,
    checkpoints: CheckpointsConfig,
    witnesses: Vec<Target>,
    index: Follower<Index>,
    fleet: Option<Follower<Fleet>>,
    otlp: Option<Follower<Otlp>>,
    archiving: Option<Follower<Archiver>>,
    retention: Option<Pruning>,
}

/// What retention needs besides the store: the archive that must hold a range before it
/// leaves the file, and where each destination that must take it stands.
struct Pruning {
    config: RetentionConfig,
    archive: Archive,
    holders: Vec<Holder>,
}

impl Lifecycle {
    /// Builds and checks everything that follows the trail, then opens the store.
    pub async fn open(config: &Config, metrics: &Arc<Metrics>) -> Result<Self, ServerError> {
        let signer = crate::trust::publisher::signer(&config.checkpoints)?.map(Arc::new);
        let witnesses = crate::trust::submitter::targets(&config.checkpoints.witnesses)?;
        let fleet = crate::follow::fleet::follower(&config.fleet, metrics)?;
        let otlp = crate::follow::otlp::follower(config, metrics)?;
        let archiving = crate::follow::archive::follower(&config.archive, metrics)?;
        // The rules between sections, after each section's own (as the refusals came before).
        config.check()?;
        let archive = match &config.archive.url {
            Some(url) => Some(Archive::open(url, &config.archive.options)?),
            None => None,
        };
        // The destinations that must take an event before it may leave the file.
        let fleet_holder = fleet.as_ref().and_then(Follower::holder);
        let holders = fleet_holder.into_iter().chain(otlp.as_ref().and_then(Follower::holder));
        let retention = match (config.retention.prunes(), &archive) {
            (true, Some(archive)) => Some(Pruning {
                config: config.retention.clone(),
                archive: archive.clone(),
                holders: holders.collect(),
            }),
            _ => None,
        };
        let cadence = signer
            .clone()
            .map(|signer| Cadence { signer, every_events: config.checkpoints.every_events.max(1) });
        let (store, writer) =
            Store::open(&config.db, config.durability, &config.writer, metrics.clone(), cadence)
                .await?;
        // The index's follower once the store has opened it (and rebuilt it when damaged).
        let index = crate::follow::index::follower(&config.db, metrics)?;
        Ok(Self {
            local: Local::new(store.reader.clone(), archive),
            log_key: signer.as_ref().map(|signer| signer.verifier()),
            witness_keys: witnesses.iter().map(|w| w.key().clone()).collect(),
            store,
            writer,
            signer,
            checkpoints: config.checkpoints.clone(),
            witnesses,
            index,
            fleet,
            otlp,
            archiving,
            retention,
        })
    }

    /// Starts what follows the trail, each task at the stage that stops it; the store and
    /// the auditors' reads stay with the caller.
    pub fn start(self, tasks: &mut Tasks, metrics: &Arc<Metrics>) -> Parts {
        let Self { store, writer, local, log_key, witness_keys, .. } = self;
        let trail = Trail { reader: store.reader.clone(), commits: store.writer.committed() };
        let follow = trail.clone();
        let index = self.index;
        tasks.start(Stage::Followers, "index", |stopping| index.run(follow, stopping));
        if let Some(signer) = self.signer.clone() {
            let (writer, config, trail) = (store.writer.clone(), self.checkpoints, trail.clone());
            tasks.start(Stage::Checkpoints, "checkpoints", |stopping| {
                crate::trust::publisher::run(writer, trail, signer, config, stopping)
            });
        }
        if !self.witnesses.is_empty() {
            tracing::info!(witnesses = self.witnesses.len(), "submitting checkpoints to witnesses");
            let (reader, writer, witnesses) =
                (store.reader.clone(), store.writer.clone(), self.witnesses);
            tasks.start(Stage::Witnesses, "witnesses", |stopping| {
                crate::trust::submitter::run(reader, writer, witnesses, stopping)
            });
        }
        if let Some(follower) = self.fleet {
            let trail = trail.clone();
            tasks.start(Stage::Followers, "fleet", |stopping| follower.run(trail, stopping));
        }
        if let Some(follower) = self.archiving {
            let trail = trail.clone();
            tasks.start(Stage::Followers, "archive", |stopping| follower.run(trail, stopping));
        }
        if let (Some(pruning), Some(signer)) = (self.retention, self.signer) {
            let retention = Retention {
                config: pruning.config,
                archive: pruning.archive,
                key: signer.verifier(),
                signer,
                reader: store.reader.clone(),
                writer: store.writer.clone(),
                holders: pruning.holders,
                // As the submitter keeps their cosignatures: under each key as it encodes.
                witnesses: witness_keys.iter().map(CosignatureVerifier::encode).collect(),
            };
            let metrics = metrics.clone();
            tasks.start(Stage::Retention, "retention", |stopping| async move {
                retention.run(&metrics, stopping).await
            });
        }
        if let Some(follower) = self.otlp {
            let trail = trail.clone();
            tasks.start(Stage::Followers, "otlp", |stopping| follower.run(trail, stopping));
        }
        Parts { store, writer, local, log_key, witness_keys, trail }
    }
}

/// The trail as the services use it, once what follows it has started.
pub struct Parts {
    pub store: Store,
    pub writer: WriterThread,
    pub local: Local,
    pub log_key: Option<NoteVerifier>,
    pub witness_keys: Vec<CosignatureVerifier>,
    /// The committed events and the commit signal, for the services that follow them.
    pub trail: Trail,
}
