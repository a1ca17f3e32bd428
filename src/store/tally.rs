//! The trail's activity counted by minute, for a follower that keeps a day of it in memory
//! (`audit::Activity`): one aggregate over a `seq` range, so that counting a busy day reads each
//! event once and a follower's step reads only the events since its last.

use super::{Reader, StoreError};

/// The events a tally counts: decisions by outcome, and the violations and refusals beside them.
const COUNTED: &str = "('decision', 'violation', 'invalid_request', 'access_denied')";

/// The events of one minute, kind and outcome (and, for a denied decision, tool and actor).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    /// `YYYY-MM-DDTHH:MM`, UTC: the first 16 characters of the events' `ts`.
    pub minute: String,
    pub kind: String,
    pub outcome: Option<String>,
    /// Of a denied decision only.
    pub tool: Option<String>,
    pub actor_id: Option<String>,
    pub count: u64,
}

/// The tally of a `seq` range as standard SQL with `?` placeholders: (`node_id = ?` first when
/// `node`), then the range's bounds (after, through) and the earliest `ts` counted. Any SQL store
/// of the trail runs it; its columns are [`Tally`]'s, in order.
pub fn tally_sql(table: &str, node: bool) -> String {
    let node = if node { "node_id = ? AND " } else { "" };
    format!(
        "SELECT substr(ts, 1, 16), kind, outcome,
                CASE WHEN kind = 'decision' AND outcome = 'deny' THEN tool END,
                CASE WHEN kind = 'decision' AND outcome = 'deny' THEN actor_id END,
                count(*)
         FROM {table}
         WHERE {node}seq > ? AND seq <= ? AND ts >= ? AND kind IN {COUNTED}
         GROUP BY 1, 2, 3, 4, 5"
    )
}

impl Reader {
    /// The tally of the events after `after` up to `through` whose `ts` is `since` or later.
    pub async fn tally(
        &self,
        after: i64,
        through: i64,
        since: String,
    ) -> Result<Vec<Tally>, StoreError> {
        self.with(move |conn| {
            let mut stmt = conn.prepare_cached(&tally_sql("events", false))?;
            let rows = stmt.query_map(rusqlite::params![after, through, since], |row| {
                Ok(Tally {
                    minute: row.get(0)?,
                    kind: row.get(1)?,
                    outcome: row.get(2)?,
                    tool: row.get(3)?,
                    actor_id: row.get(4)?,
                    count: row.get::<_, i64>(5)?.unsigned_abs(),
                })
            })?;
            rows.collect()
        })
        .await
    }

    /// The smallest `seq` of the events appended at `since` or later (a range of the `ts`
    /// index): where a count of the time since begins, even if a clock stepped back.
    pub async fn first_seq_since(&self, since: String) -> Result<Option<i64>, StoreError> {
        self.with(move |conn| {
            conn.prepare_cached("SELECT min(seq) FROM events WHERE ts >= ?1")?
                .query_row([since], |row| row.get(0))
        })
        .await
    }
}
