//! What a prune carries past its cut, so that a gate restarted on the pruned file rebuilds the
//! state it had (`crate::state`): the tool definitions in force are appended again, as
//! `tool_defined` events, in the prune's commit; each live session's counts go in the prune
//! event (the last prune's carried ones included), and so do the data classes each read; and
//! the cut stays before the request of every approval still pending, whose call a restart
//! reopens from the trail.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};

use crate::store::{PAGE, Reader, StoreError};
use crate::trail::Filter;
use crate::trail::{Event, Kind, Record};

/// Sessions idle longer than this are not carried: the gate forgets them too (`state::facts`).
const LIVE_US: i64 = 24 * 3600 * 1_000_000;

/// Sessions whose last read is older than this do not carry their data classes: the gate
/// forgets them too (`state::facts`).
const TAINT_LIVE_US: i64 = 30 * 24 * 3600 * 1_000_000;

/// The most sessions one prune carries (the most recently active): about 100 bytes each in
/// the prune event, which every destination takes whole.
const MOST_SESSIONS: usize = 2_000;

/// The most sessions whose data classes one prune carries (the most recently active): about
/// 100 bytes each, and 30 a class, in the prune event.
const MOST_TAINTED: usize = 10_000;

use crate::store::{CarriedRead, Pruning, Session, SessionReads};

/// What a prune through `through` carries.
#[derive(Debug)]
pub struct Carry {
    /// The cut, lowered before the oldest pending approval's decision.
    pub through: i64,
    /// The `tool_defined` records to append again: the pins in force taken at or below it.
    pub pins: Vec<Record>,
    /// The live sessions' counts up to it.
    pub sessions: Vec<Session>,
    /// The data classes the sessions read up to it.
    pub reads: Vec<SessionReads>,
    /// The last seq read: a pin after it makes the carry stale.
    pub read_to: i64,
}

/// What a prune through `through` must carry, read from the file; `previous` what the last
/// prune carried.
pub async fn carry(reader: &Reader, through: i64, previous: Pruning) -> Result<Carry, StoreError> {
    let read_to = reader.head().await?.map_or(0, |h| h.seq);
    // One pass over the file for the pins and the approvals.
    let mut pinned: BTreeMap<String, Event> = BTreeMap::new();
    let mut requested = HashMap::new();
    let mut after = 0;
    'pages: loop {
        let events = reader.of_kinds(&STATE_KINDS, after, PAGE).await?;
        let full = events.len() == PAGE as usize;
        for event in events {
            after = event.seq;
            if event.seq > read_to {
                break 'pages;
            }
            let id = event.record.decision_id.clone();
            match event.record.kind {
                Kind::ToolDefined => {
                    let pin = event.record.status.as_deref() == Some("pinned");
                    if let (true, Some(tool)) = (pin, event.record.tool.clone()) {
                        pinned.insert(tool, event);
                    }
                }
                Kind::ApprovalRequested => {
                    requested.extend(id.map(|id| (id, event.seq)));
                }
                Kind::ApprovalApproved
                | Kind::ApprovalRejected
                | Kind::ApprovalExpired
                | Kind::ApprovalWithdrawn => {
                    id.map(|id| requested.remove(&id));
                }
                // Not among STATE_KINDS: never read here.
                Kind::Decision
                | Kind::Execution
                | Kind::Violation
                | Kind::InvalidRequest
                | Kind::PolicyLoaded
                | Kind::AccessDenied
                | Kind::Checkpoint
                | Kind::Undelivered
                | Kind::PeerRefused
                | Kind::Prune => {}
            }
        }
        if !full {
            break;
        }
    }
    // A pending approval holds the cut before its decision (appended just before its
    // request), whose call a restart reopens from the trail.
    let mut oldest = i64::MAX;
    for (id, seq) in requested {
        let of_decision = Filter { decision_id: Some(id), ..Filter::default() };
        let first = reader.query(&of_decision, 0, 1).await?.first().map_or(seq, |e| e.seq);
        oldest = oldest.min(first).min(seq);
    }
    let through = through.min(oldest - 1);
    let pins = pinned
        .into_values()
        .filter(|event| event.seq <= through)
        .map(|event| Record {
            reason: Some(format!(
                "the definition in force since seq {}, carried past the prune of events \
                 through {through}",
                event.seq
            )),
            ..event.record
        })
        .collect();
    let (sessions, last_calls) = sessions(reader, through, previous.sessions).await?;
    let reads = reads(reader, (previous.through, through), previous.reads, &last_calls).await?;
    Ok(Carry { through, pins, sessions, reads, read_to })
}

/// The kinds a gate's state is rebuilt from, but the decisions: the tools' definitions and the
/// approvals' requests and verdicts.
const STATE_KINDS: [Kind; 6] = {
    let [requested, approved, rejected, expired, withdrawn] = Kind::APPROVAL;
    [Kind::ToolDefined, requested, approved, rejected, expired, withdrawn]
};

/// Each session's last call (µs), live or not.
type LastCalls = HashMap<(String, String), i64>;

/// The counts of the sessions live now, from `previous` and the decisions up to `through`; and
/// every session's last call.
async fn sessions(
    reader: &Reader,
    through: i64,
    previous: Vec<Session>,
) -> Result<(Vec<Session>, LastCalls), StoreError> {
    let mut counts: HashMap<(String, String), (u64, u64, i64)> = previous
        .into_iter()
        .map(|s| ((s.actor, s.session), (s.calls, s.denials, s.last_us)))
        .collect();
    for (actor, session, calls, denials, last) in reader.sessions_through(through).await? {
        let at = DateTime::parse_from_rfc3339(&last)
            .map_or(0, |t| t.with_timezone(&Utc).timestamp_micros());
        let entry = counts.entry((actor, session)).or_default();
        entry.0 += calls;
        entry.1 += denials;
        entry.2 = entry.2.max(at);
    }
    let last_calls = counts.iter().map(|(key, (_, _, last))| (key.clone(), *last)).collect();
    let live = Utc::now().timestamp_micros() - LIVE_US;
    let mut sessions: Vec<Session> = counts
        .into_iter()
        .filter(|(_, (_, _, last))| *last >= live)
        .map(|((actor, session), (calls, denials, last_us))| Session {
            actor,
            session,
            calls,
            denials,
            last_us,
        })
        .collect();
    sessions.sort_by_key(|s| std::cmp::Reverse(s.last_us));
    sessions.truncate(MOST_SESSIONS);
    Ok((sessions, last_calls))
}

/// The data classes each session read, from `previous` (carried through `from`) and the
/// executions after it up to `through`: the first read of each class kept, for the sessions
/// whose last read or call (`last_calls`) is in the last 30 days, as the gate keeps them.
async fn reads(
    reader: &Reader,
    (from, through): (i64, i64),
    previous: Vec<SessionReads>,
    last_calls: &LastCalls,
) -> Result<Vec<SessionReads>, StoreError> {
    let mut reads: HashMap<(String, String), Vec<CarriedRead>> =
        previous.into_iter().map(|r| ((r.actor, r.session), r.classes)).collect();
    let mut after = from;
    'pages: loop {
        let events = reader.of_kinds(&[Kind::Execution], after, PAGE).await?;
        let full = events.len() == PAGE as usize;
        for event in events {
            after = event.seq;
            if event.seq > through {
                break 'pages;
            }
            let classes = crate::state::facts::Reads::of(&event.record);
            if classes.is_empty() {
                continue;
            }
            let r = event.record;
            let at = DateTime::parse_from_rfc3339(&event.ts)
                .map_or(0, |t| t.with_timezone(&Utc).timestamp_micros());
            let key = (r.actor_id.unwrap_or_default(), r.session_id.unwrap_or_default());
            let known = reads.entry(key).or_default();
            for class in classes {
                match known.iter_mut().find(|read| read.class == class) {
                    // The first read stays named; the last one keeps the session's taint live.
                    Some(read) => read.live_us = read.live_us.max(at),
                    None => known.push(CarriedRead { class, first_seq: event.seq, live_us: at }),
                }
            }
        }
        if !full {
            break;
        }
    }
    let since = Utc::now().timestamp_micros() - TAINT_LIVE_US;
    let last = |key: &(String, String), classes: &[CarriedRead]| {
        let called = last_calls.get(key).copied().unwrap_or(0);
        classes.iter().map(|c| c.live_us).max().unwrap_or(0).max(called)
    };
    let mut reads: Vec<(i64, SessionReads)> = reads
        .into_iter()
        .map(|(key, mut classes)| {
            let last = last(&key, &classes);
            classes.iter_mut().for_each(|class| class.live_us = last);
            (last, SessionReads { actor: key.0, session: key.1, classes })
        })
        .filter(|(last, _)| *last >= since)
        .collect();
    reads.sort_by_key(|(last, _)| std::cmp::Reverse(*last));
    reads.truncate(MOST_TAINTED);
    Ok(reads.into_iter().map(|(_, reads)| reads).collect())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::config::{Durability, WriterConfig};
    use crate::state::facts::{Call, Facts};
    use crate::state::pins::Pins;
    use crate::store::Store;
    use crate::trail::Outcome;

    fn decision(session: &str, outcome: Outcome) -> Record {
        Record {
            actor_id: Some("agent".into()),
            session_id: Some(session.into()),
            decision_id: Some(uuid::Uuid::now_v7().to_string()),
            outcome: Some(outcome),
            ..Record::new(Kind::Decision)
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[allow(clippy::too_many_lines)] // A test's scenario, top to bottom.
    async fn a_prune_carries_the_pins_and_sessions_and_stops_before_a_pending_approval() {
        let dir = tempfile::tempdir().unwrap();
        let metrics = Arc::new(crate::metrics::Metrics::default());
        let (store, thread) = Store::open(
            &dir.path().join("t.db"),
            Durability::Normal,
            &WriterConfig::default(),
            metrics,
            None,
        )
        .await
        .unwrap();
        let (writer, reader) = (&store.writer, &store.reader);
        let pin = Record {
            tool: Some("search".into()),
            args_hash: Some("a".repeat(64)),
            request: Some(r#"{"description":"aa"}"#.into()),
            status: Some("pinned".into()),
            ..Record::new(Kind::ToolDefined)
        };
        writer.append(vec![pin]).await.unwrap(); // seq 1
        let mut calls = vec![decision("s", Outcome::Allow); 4];
        calls.push(Record {
            request: crate::state::facts::Reads::cell(vec!["secret".into()]),
            ..Record { kind: Kind::Execution, ..decision("s", Outcome::Allow) }
        });
        calls.push(decision("s", Outcome::Deny));
        writer.append(calls).await.unwrap(); // seqs 2..=7, the execution at 6
        let waiting = decision("s", Outcome::RequireApproval);
        let requested = Record {
            decision_id: waiting.decision_id.clone(),
            ..Record::new(Kind::ApprovalRequested)
        };
        writer.append(vec![waiting, requested]).await.unwrap(); // seqs 8, 9
        writer.append(vec![decision("s", Outcome::Allow); 3]).await.unwrap(); // 10..=12

        // Wanted through 11: the pending approval's decision (8) holds the cut at 7.
        let carry = carry(reader, 11, Pruning::default()).await.unwrap();
        assert_eq!(carry.through, 7);
        assert_eq!(carry.pins.len(), 1);
        assert_eq!(carry.pins[0].args_hash.as_deref(), Some(&*"a".repeat(64)));
        assert_eq!(carry.sessions.len(), 1);
        let Session { actor, session, calls, denials, .. } = carry.sessions[0].clone();
        assert_eq!((actor.as_str(), session.as_str(), calls, denials), ("agent", "s", 5, 1));
        let SessionReads { actor, session, classes } = carry.reads[0].clone();
        assert_eq!((actor.as_str(), session.as_str()), ("agent", "s"));
        assert_eq!((classes[0].class.as_str(), classes[0].first_seq), ("secret", 6));

        // Recorded and deleted: a gate rebuilt from the file has the pin and the counts.
        let (sessions, reads) = (carry.sessions.clone(), carry.reads.clone());
        writer
            .record_prune(7, carry.read_to, carry.pins, move |_| Record {
                request: Some(
                    Pruning { through: 7, sessions, reads, ..Default::default() }.to_json(),
                ),
                ..Record::new(Kind::Prune)
            })
            .await
            .unwrap()
            .unwrap();
        // Before the deletions (a stop, a hold) and after them, the same counts.
        let counted = |facts: &Facts| {
            let at_us = Utc::now().timestamp_micros();
            let call = Call {
                session: "s",
                task_type: "",
                actor: "agent",
                tool: "t",
                args_hash: "h",
                at_us,
            };
            let observed = facts.observe(call);
            let read = observed.read_classes.iter().map(|r| (r.class.to_string(), r.seq));
            (observed.session_calls, observed.session_denials, read.collect::<Vec<_>>())
        };
        let before = Facts::new(HashMap::new());
        before.rebuild(reader).await.unwrap();
        let secret = vec![("secret".to_owned(), 6)];
        assert_eq!(
            counted(&before),
            (10, 1, secret.clone()),
            "decisions under the cut are not counted twice"
        );
        while writer.delete_pruned().await.unwrap().any() {}
        let pins = Pins::default();
        assert_eq!(pins.rebuild(reader).await.unwrap(), 1, "the pin is in force after the cut");
        let facts = Facts::new(HashMap::new());
        facts.rebuild(reader).await.unwrap();
        // 5 carried + the 4 kept decisions + this one; the denial and the read carried too.
        assert_eq!(counted(&facts), (10, 1, secret));
        drop(store);
        thread.join().await;
    }
}
