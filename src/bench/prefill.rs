//! Fills a trail with realistic decision events before a server starts on it, through the same
//! writer the server uses, so that growth can be measured without minutes of gRPC calls.

use std::path::Path;
use std::sync::Arc;

use crate::config::{Durability, WriterConfig};
use crate::metrics::Metrics;
use crate::store::{Store, StoreError};
use crate::trail::{Kind, Outcome, Record};

const CHUNK: usize = 1000;

/// Appends `events` decision events to the trail at `path`.
pub async fn prefill(path: &Path, events: usize) -> Result<(), StoreError> {
    prefill_with(path, events, record).await
}

/// Appends `events` events to the trail at `path`, the `n`th of them `record(n)`.
pub async fn prefill_with(
    path: &Path,
    events: usize,
    record: impl Fn(usize) -> Record,
) -> Result<(), StoreError> {
    let metrics = Arc::new(Metrics::default());
    let (store, thread) =
        Store::open(path, Durability::Normal, &WriterConfig::default(), metrics, None).await?;
    let mut written = 0;
    while written < events {
        let chunk = CHUNK.min(events - written);
        let records = (written..written + chunk).map(&record).collect();
        store.writer.append(records).await?;
        written += chunk;
    }
    // No server followed the fill: its index is built now, as a server's follower would.
    crate::store::index::IndexWriter::open(path)?.catch_up(&store.reader).await?;
    store.reader.close().await;
    drop(store);
    thread.join().await;
    Ok(())
}

/// A decision of a registered read tool, allowed, by one of 32 agents in sessions of 100 calls.
pub fn record(n: usize) -> Record {
    let session = format!("prefill-{}", n / 100);
    let actor = format!("agent-{}", n % 32);
    Record {
        decision_id: Some(uuid::Uuid::now_v7().to_string()),
        session_id: Some(session.clone()),
        task_type: Some("default".into()),
        actor_id: Some(actor.clone()),
        actor_kind: Some("agent".into()),
        tool: Some("read".into()),
        action: Some("fs.read".into()),
        resource_type: Some(String::new()),
        resource_id: Some(String::new()),
        args_hash: Some(format!("{n:064x}")),
        outcome: Some(Outcome::Allow),
        reason: Some("registered read_only tool: read".into()),
        policy_ids: Some(r#"["default.permit_registered_tools"]"#.into()),
        policy_version: Some("0".repeat(64)),
        max_output_chars: Some(8000),
        timeout_ms: Some(10_000),
        request: Some(format!(
            r#"{{"action":"fs.read","actor":{{"delegation_chain":[],"id":"{actor}","kind":"agent"}},"args_hash":"{n:064x}","context":{{}},"options":{{"allow_bash":false,"allow_write":false,"max_output_chars":null}},"plan":{{"dry_run":false,"idempotency_key":"","rollback_hint":"","timeout_ms":null}},"resource":{{"classification":"","id":"","type":""}},"session_id":"{session}","task_type":"default","tool":"read"}}"#
        )),
        ..Record::new(Kind::Decision)
    }
}
