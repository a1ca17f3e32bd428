//! The index changes how a read finds its events, never which: the same answers with no index,
//! a part of one, all of it, or another trail's; and the commit's own lookups find a decision
//! the writer no longer remembers.

use std::path::Path;
use std::sync::Arc;

use super::IndexWriter;
use crate::config::{Durability, WriterConfig};
use crate::metrics::Metrics;
use crate::query::Stats;
use crate::store::{Reader, Store, StoreError};
use crate::trail::Filter;
use crate::trail::{Event, Kind, Outcome, Record};

async fn open(path: &Path) -> (Store, crate::store::WriterThread) {
    let metrics = Arc::new(Metrics::default());
    Store::open(path, Durability::Normal, &WriterConfig::default(), metrics, None).await.unwrap()
}

async fn close(store: Store, thread: crate::store::WriterThread) {
    store.reader.close().await;
    drop(store);
    thread.join().await;
}

/// The `n`th record: 7 sessions, 3 actors, 5 tools; decisions, executions and violations.
fn record(n: usize) -> Record {
    let kind = [Kind::Decision, Kind::Execution, Kind::Violation][n % 3];
    let mut record = Record::new(kind);
    record.session_id = Some(format!("s-{}", n % 7));
    record.actor_id = Some(format!("a-{}", n % 7 % 3));
    record.tool = Some(format!("tool-{}", n % 5));
    record.decision_id = Some(format!("d-{}", n / 3));
    record.outcome = (kind == Kind::Decision).then_some(Outcome::Allow);
    record.action = (!n.is_multiple_of(4)).then(|| ["read", "write", "send"][n % 4 - 1].to_owned());
    // A shadow that agrees, one that does not, and one without an enforced outcome.
    record.shadow_outcome = [Some(Outcome::Allow), Some(Outcome::Deny), None][n / 3 % 3];
    record.request = (kind == Kind::Decision)
        .then(|| format!(r#"{{"plan":{{"idempotency_key":"key-{}"}}}}"#, n / 3 % 40));
    record
}

fn filters(events: &[Event]) -> Vec<Filter> {
    let (first, last) = (&events[10].ts, &events[200].ts);
    vec![
        Filter::default(),
        Filter { session_id: Some("s-3".into()), ..Filter::default() },
        Filter { actor_id: Some("a-1".into()), kind: Some(Kind::Decision), ..Filter::default() },
        Filter { tool: Some("tool-4".into()), session_id: Some("s-2".into()), ..Filter::default() },
        Filter { decision_id: Some("d-17".into()), ..Filter::default() },
        Filter { since: Some(first.clone()), until: Some(last.clone()), ..Filter::default() },
        Filter { until: Some(first.clone()), ..Filter::default() },
        Filter { session_id: Some("nobody".into()), ..Filter::default() },
        Filter { action: Some("send".into()), outcome: Some(Outcome::Allow), ..Filter::default() },
        Filter { shadow_disagrees: true, ..Filter::default() },
        Filter { outcome: Some(Outcome::Deny), ..Filter::default() },
    ]
}

/// Every answer the reader gives for `filter`: pages of 7 in both orders, the count, the stats.
async fn answers(reader: &Reader, filter: &Filter) -> (Vec<i64>, Vec<i64>, u64, Stats) {
    let (mut up, mut after) = (Vec::new(), 0);
    loop {
        let page = reader.query(filter, after, 7).await.unwrap();
        let Some(last) = page.last() else { break };
        after = last.seq;
        up.extend(page.iter().map(|e| e.seq));
    }
    let (mut down, mut before) = (Vec::new(), 0);
    loop {
        let page = reader.query_newest(filter, before, 7).await.unwrap();
        let Some(last) = page.last() else { break };
        before = last.seq;
        down.extend(page.iter().map(|e| e.seq));
    }
    (up, down, reader.count(filter).await.unwrap(), reader.stats(filter).await.unwrap())
}

#[tokio::test]
async fn a_read_answers_the_same_with_none_part_or_all_of_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let (store, thread) = open(&path).await;
    let events = store.writer.append((0..400).map(record).collect()).await.unwrap();
    close(store, thread).await;
    let index = IndexWriter::open(&path).unwrap();

    // No index yet: every event is in the tail. What a filter selects, as `Filter::matches`
    // (what a read of the archive uses) says.
    let reader = Reader::open(&path).await.unwrap();
    let mut expected = Vec::new();
    for filter in filters(&events) {
        let answer = answers(&reader, &filter).await;
        let chosen: Vec<i64> = events.iter().filter(|e| filter.matches(e)).map(|e| e.seq).collect();
        assert_eq!(answer.0, chosen, "{filter:?}");
        assert_eq!(answer.1, chosen.iter().rev().copied().collect::<Vec<_>>(), "{filter:?}");
        assert_eq!(answer.2, chosen.len() as u64, "{filter:?}");
        assert_eq!(answer.3.total, chosen.len() as u64, "{filter:?}");
        expected.push(answer);
    }
    reader.close().await;

    // A part of the index, then all of it; then an index whose watermark is another trail's.
    for indexed in [150, 400, 0] {
        match indexed {
            0 => corrupt_watermark(&path),
            n => index.add(events[..n].to_vec()).await.unwrap(),
        }
        let reader = Reader::open(&path).await.unwrap();
        for (filter, expected) in filters(&events).iter().zip(&expected) {
            assert_eq!(&answers(&reader, filter).await, expected, "{indexed}: {filter:?}");
        }
        reader.close().await;
    }
}

/// Makes the index another trail's: a watermark whose hash is not this trail's, over entries
/// that are not this trail's either (none at all), so that trusting it would lose events.
fn corrupt_watermark(path: &Path) {
    let conn = rusqlite::Connection::open(super::path_of(path)).unwrap();
    conn.execute("UPDATE watermark SET hash = ?1", [&"00".repeat(32)]).unwrap();
    for table in super::Table::ALL {
        conn.execute(&format!("DELETE FROM {}", table.name()), []).unwrap();
    }
}

#[tokio::test]
async fn a_commit_finds_a_decision_the_writer_no_longer_remembers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let (store, thread) = open(&path).await;
    store.writer.append((0..300).map(record).collect()).await.unwrap();
    close(store, thread).await;
    // After a restart the writer remembers nothing older; the store caught its index up at
    // open. First with the index's watermark not this trail's (so from a scan of the trail),
    // then from the index (the next open builds it again).
    for indexed in [false, true] {
        let (store, thread) = open(&path).await;
        if !indexed {
            corrupt_watermark(&path);
        }
        let found = store
            .writer
            .append_with(|lookup| {
                let paired = lookup.decision("d-17")?.ok_or(StoreError::Closed)?;
                assert_eq!(paired.record.kind, Kind::Decision);
                assert_eq!(
                    paired.execution.map(|e| e.record.decision_id),
                    Some(Some("d-17".into()))
                );
                assert!(lookup.decision("d-nobody")?.is_none());
                // key-17 was given to d-17 (actor a-2), d-57 (a-0) and d-97 (a-1): the latest
                // counts, of those whose actor the caller may act as.
                let latest = lookup.decision_by_key("key-17", |_| true)?;
                assert_eq!(latest.as_deref(), Some("d-97"));
                let theirs = lookup.decision_by_key("key-17", |actor| actor != "a-1")?;
                assert_eq!(theirs.as_deref(), Some("d-57"));
                assert!(lookup.decision_by_key("key-none", |_| true)?.is_none());
                Ok(vec![Record::new(Kind::PolicyLoaded)])
            })
            .await;
        assert!(found.is_ok(), "indexed {indexed}: {found:?}");
        close(store, thread).await;
    }
}

#[tokio::test]
async fn a_trail_without_its_index_is_read_by_scanning_and_a_damaged_one_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let (store, thread) = open(&path).await;
    let events = store.writer.append((0..300).map(record).collect()).await.unwrap();
    close(store, thread).await;
    let filters = filters(&events);
    let reader = Reader::open(&path).await.unwrap();
    let mut indexed = Vec::new();
    for filter in &filters {
        indexed.push(answers(&reader, filter).await);
    }
    reader.close().await;

    // A copy of the trail without its index (a backup, say) reads the same.
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", super::path_of(&path).display()));
    }
    let reader = Reader::open(&path).await.unwrap();
    for (filter, expected) in filters.iter().zip(&indexed) {
        assert_eq!(&answers(&reader, filter).await, expected, "no index: {filter:?}");
    }
    reader.close().await;

    // A damaged index file does not stop the store: it is built again, from the first event.
    std::fs::write(super::path_of(&path), b"not a database, but long enough to be read as one")
        .unwrap();
    let (store, thread) = open(&path).await;
    let index = IndexWriter::open(&path).unwrap();
    assert_eq!(index.resume(&store.reader).await.unwrap(), 300, "caught up at open");
    for (filter, expected) in filters.iter().zip(&indexed) {
        assert_eq!(&answers(&store.reader, filter).await, expected, "rebuilt: {filter:?}");
    }
    close(store, thread).await;
}
