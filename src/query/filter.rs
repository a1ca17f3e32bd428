//! The filter of an auditor's question (Query, ExportCsv, Stats, the `query` and `export`
//! commands): every condition optional, all of them combined with AND, and its SQL. Times are
//! the trail's own normalized RFC 3339, so that they compare with `ts` as text; `request`
//! validates a wire filter into one.

use serde::{Deserialize, Serialize};

use crate::trail::{Kind, Outcome};

/// A validated filter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filter {
    /// Events at or after this time (normalized RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Events before this time (normalized RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actor_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_id: Option<String>,
    /// Only decisions whose shadow policy answered otherwise than the enforced one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shadow_disagrees: bool,
}

impl Filter {
    /// Events of one kind.
    pub fn of_kind(kind: Kind) -> Self {
        Self { kind: Some(kind), ..Self::default() }
    }

    /// Whether the filter selects every event.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The filter as standard SQL: ` AND …` conditions on the trail's columns with `?`
    /// placeholders, and their (text) values in order. Any SQL store of the trail renders it.
    pub fn sql(&self) -> (String, Vec<String>) {
        let name = |v: Option<&'static str>| v.map(str::to_owned);
        let conditions = [
            (" AND ts >= ?", self.since.clone()),
            (" AND ts < ?", self.until.clone()),
            (" AND session_id = ?", self.session_id.clone()),
            (" AND actor_id = ?", self.actor_id.clone()),
            (" AND tool = ?", self.tool.clone()),
            (" AND action = ?", self.action.clone()),
            (" AND outcome = ?", name(self.outcome.map(Outcome::as_str))),
            (" AND kind = ?", name(self.kind.map(Kind::as_str))),
            (" AND decision_id = ?", self.decision_id.clone()),
        ];
        let mut sql = String::new();
        let mut values = Vec::new();
        if self.shadow_disagrees {
            sql.push_str(" AND shadow_outcome IS NOT NULL AND shadow_outcome <> outcome");
        }
        for (condition, value) in conditions {
            if let Some(value) = value {
                sql.push_str(condition);
                values.push(value);
            }
        }
        (sql, values)
    }
}
