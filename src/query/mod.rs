//! What an auditor asks of a trail and what comes back, whichever store holds it: the
//! [`Filter`] of a question (the trail crate's) and its SQL, which both SQL stores render, the
//! counts of [`Stats`] and [`Tally`], a trail's [`Head`], a witness's [`Cosignature`] as it is kept.
//! Plain values: the SQLite trail (`store`) and the fleet's PostgreSQL store (`fleet`) both
//! import them, and neither imports the other.

mod filter;

pub use filter::filter_sql;

/// Counts over a time range, each list largest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    pub total: u64,
    /// The decisions by outcome (a verdict's event carries the outcome it settles, and is no
    /// decision).
    pub by_outcome: Vec<(String, u64)>,
    pub by_tool: Vec<(String, u64)>,
    pub by_actor: Vec<(String, u64)>,
    pub by_kind: Vec<(String, u64)>,
}

/// The column `Stats::by_outcome` counts, as both SQL stores write it: a decision's outcome.
pub const DECISION_OUTCOME: &str = "CASE WHEN kind = 'decision' THEN outcome END";

/// The last event of the trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub seq: i64,
    pub hash: String,
    pub ts: String,
}

/// Where one trail ends: its node (`""` for a sidecar's own trail) and the seq of its last
/// event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrailHead {
    pub node: String,
    pub seq: i64,
}

/// A cosignature as it is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cosignature {
    /// The checkpoint event's `seq`.
    pub seq: i64,
    /// The witness's verifier key.
    pub witness: String,
    /// The checkpoint's tree size.
    pub size: u64,
    /// The witness's timestamp (Unix seconds).
    pub time: u64,
    /// The signature line, newline included.
    pub line: String,
}

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
