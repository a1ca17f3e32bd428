//! What the writer's transaction reads while it builds a job's records: the recent events
//! the writer remembers, the index file on a connection of its own, and the events themselves
//! (an Execute's decision and what already followed it, a decision by its idempotency key).

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use super::index::Table;
use super::recent::Recent;
use super::row::{self, SELECT};
use crate::trail::{Event, Frontier, Hash, Kind, Outcome, Record};

/// Read access to the trail from inside the writer's transaction: what the writer remembers
/// of the recent events, the index file (read on a connection of its own, never attached to
/// the writer's, which would lock it for every commit) and the events themselves.
pub struct Lookup<'a> {
    pub(super) tx: &'a rusqlite::Transaction<'a>,
    pub(super) tree: &'a Frontier,
    /// The seq of the last checkpoint (0 for none).
    pub(super) covered: i64,
    pub(super) recent: &'a Recent,
    pub(super) index: Option<&'a Connection>,
}

/// A decision as an execution finds it.
#[derive(Debug, Clone)]
pub struct PairedDecision {
    /// The decision event's fields.
    pub record: Record,
    /// The execution already reported for it, if any (the first).
    pub execution: Option<Event>,
    /// For a decision that required approval: the verdict event's kind and outcome, if any.
    pub approval: Option<(Kind, Option<Outcome>)>,
}

impl Lookup<'_> {
    /// The tree of every event before this point: its size and root.
    pub fn tree_head(&self) -> (u64, Hash) {
        (self.tree.size(), self.tree.root())
    }

    /// Whether a checkpoint covers every event before this point (the last event is one).
    pub fn covered(&self) -> bool {
        u64::try_from(self.covered).is_ok_and(|covered| covered == self.tree.size())
    }

    /// The writer's transaction, for the writes of this module's siblings that add no event
    /// or go with one (a prune's row and its deletions).
    pub(super) fn transaction(&self) -> &rusqlite::Transaction<'_> {
        self.tx
    }

    /// Keeps a witness's cosignature of a checkpoint, in this transaction (it adds no event).
    pub fn keep_cosignature(
        &self,
        cosignature: &crate::query::Cosignature,
    ) -> Result<(), StoreError> {
        Ok(super::cosignatures::insert(self.tx, cosignature)?)
    }

    /// The id of the latest decision given this idempotency key whose actor `mine` accepts, if
    /// any: keys are chosen by callers, so one caller's key never names another's decision.
    pub fn decision_by_key(
        &self,
        key: &str,
        mine: impl Fn(&str) -> bool,
    ) -> Result<Option<String>, StoreError> {
        let remembered = self.recent.of_key(key).iter().rev().copied();
        for seq in remembered {
            if let Some(found) = self.keyed(seq, key, &mine)? {
                return Ok(Some(found));
            }
        }
        let floor = self.recent.floor();
        let watermark = self.watermark()?;
        // The tail the index does not hold yet, then the index, newest first.
        let mut older: Vec<i64> = self
            .tx
            .prepare_cached(
                "SELECT seq FROM events WHERE seq > ?1 AND seq <= ?2 AND kind = 'decision'
                   AND json_extract(request, '$.plan.idempotency_key') = ?3 ORDER BY seq DESC",
            )?
            .query_map(params![watermark, floor, key], |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        older.extend(self.indexed(Table::Key, key, watermark.min(floor))?);
        for seq in older {
            if let Some(found) = self.keyed(seq, key, &mine)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// The decision id of the event at `seq`, if it is a decision given `key` whose actor
    /// `mine` accepts.
    fn keyed(
        &self,
        seq: i64,
        key: &str,
        mine: impl Fn(&str) -> bool,
    ) -> Result<Option<String>, StoreError> {
        let Some(event) = self.event(seq)? else { return Ok(None) };
        let r = &event.record;
        let given = super::index::idempotency_key(r.request.as_deref());
        let fits = r.kind == Kind::Decision
            && given.as_deref() == Some(key)
            && mine(r.actor_id.as_deref().unwrap_or_default());
        Ok(fits.then(|| r.decision_id.clone()).flatten())
    }

    /// The decision event with this id, if there is one.
    pub fn decision(&self, decision_id: &str) -> Result<Option<PairedDecision>, StoreError> {
        let mut events: Vec<(i64, Kind)> = self.recent.of_decision(decision_id).to_vec();
        if !events.iter().any(|(_, kind)| *kind == Kind::Decision) {
            // The decision is older than what the writer remembers: the events of this id at
            // or below the floor come first.
            let mut older = self.older_of_decision(decision_id)?;
            older.append(&mut events);
            events = older;
        }
        let first =
            |pick: &dyn Fn(Kind) -> bool| events.iter().find(|(_, k)| pick(*k)).map(|e| e.0);
        let Some(decision) = first(&|kind| kind == Kind::Decision) else { return Ok(None) };
        let Some(record) = self.event(decision)?.map(|e| e.record) else { return Ok(None) };
        let execution = match first(&|kind| kind == Kind::Execution) {
            Some(seq) => self.event(seq)?,
            None => None,
        };
        let verdict = first(&Kind::ends_approval);
        let approval = match verdict {
            Some(seq) => self.event(seq)?.map(|e| (e.record.kind, e.record.outcome)),
            None => None,
        };
        Ok(Some(PairedDecision { record, execution, approval }))
    }

    /// The events of a decision id at or below the floor: from the index up to its watermark,
    /// and from a scan of the events between the watermark and the floor; in seq order.
    fn older_of_decision(&self, decision_id: &str) -> Result<Vec<(i64, Kind)>, StoreError> {
        let floor = self.recent.floor();
        let watermark = self.watermark()?;
        let mut found = Vec::new();
        for seq in self.indexed(Table::Decision, decision_id, watermark.min(floor))? {
            let kind = self.kind_of(seq, decision_id)?;
            found.extend(kind.map(|kind| (seq, kind)));
        }
        found.sort_unstable_by_key(|(seq, _)| *seq);
        let mut stmt = self.tx.prepare_cached(
            "SELECT seq, kind FROM events WHERE seq > ?1 AND seq <= ?2 AND decision_id = ?3
             ORDER BY seq",
        )?;
        let tail = stmt.query_map(params![watermark, floor, decision_id], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
        })?;
        for row in tail {
            let (seq, kind) = row?;
            found.extend(kind.parse().ok().map(|kind| (seq, kind)));
        }
        Ok(found)
    }

    /// The kind of the event at `seq`, if its decision id is `decision_id` (an index key is a
    /// digest, which another id may share).
    fn kind_of(&self, seq: i64, decision_id: &str) -> Result<Option<Kind>, StoreError> {
        let row: Option<(Option<String>, String)> = self
            .tx
            .prepare_cached("SELECT decision_id, kind FROM events WHERE seq = ?1")?
            .query_row([seq], |row| Ok((row.get(0)?, row.get(1)?)))
            .optional()?;
        Ok(row
            .filter(|(id, _)| id.as_deref() == Some(decision_id))
            .and_then(|(_, k)| k.parse().ok()))
    }

    /// The event at `seq`, as this transaction sees the trail.
    fn event(&self, seq: i64) -> Result<Option<Event>, StoreError> {
        let sql = format!("{} WHERE seq = ?1", *SELECT);
        Ok(self.tx.prepare_cached(&sql)?.query_row([seq], row::event).optional()?)
    }

    /// The index's watermark, if it is this trail's (0 without an index).
    fn watermark(&self) -> Result<i64, StoreError> {
        let Some(index) = self.index else { return Ok(0) };
        Ok(super::index::checked_watermark(index, "watermark", self.tx)?.unwrap_or(0))
    }

    /// The seqs `table` holds for `value` up to `through`, newest first.
    fn indexed(&self, table: Table, value: &str, through: i64) -> Result<Vec<i64>, StoreError> {
        let Some(index) = self.index.filter(|_| through > 0) else { return Ok(Vec::new()) };
        let sql =
            format!("SELECT at FROM {} WHERE k = ?1 AND at <= ?2 ORDER BY at DESC", table.name());
        let seqs = index
            .prepare_cached(&sql)?
            .query_map(params![table.key(value), through], |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(seqs)
    }
}

/// What the lookups inside a commit read besides the transaction: the recent events the writer
/// remembers, and the index file.
pub(super) struct Lookups {
    pub(super) recent: Recent,
    pub(super) index: Option<Connection>,
}
