//! The trail's activity counted by minute, for a follower that keeps a day of it in memory
//! (`audit::Activity`): one aggregate over a `seq` range, so that counting a busy day reads each
//! event once and a follower's step reads only the events since its last.

use super::{Reader, StoreError};
use crate::query::{Tally, tally_sql};

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
