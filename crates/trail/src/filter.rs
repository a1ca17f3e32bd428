//! The filter of an auditor's question (a query, an export, a stats range): every condition
//! optional, all of them combined with AND. Times are the trail's own normalized RFC 3339, so
//! that they compare with `ts` as text. An export's manifest records the filter it applied, so
//! that its verifier knows gaps between rows are expected.

use serde::{Deserialize, Serialize};

use crate::{Event, Kind, Outcome};

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

    /// Whether it selects `event`, as the SQL stores answer it (`query::filter_sql`): a
    /// condition on a column the event leaves empty never holds, and neither does
    /// `shadow_disagrees` without both outcomes. For events read where no SQL runs (an
    /// archive).
    pub fn matches(&self, event: &Event) -> bool {
        let r = &event.record;
        let is = |want: &Option<String>, held: &Option<String>| {
            want.as_ref().is_none_or(|w| held.as_ref() == Some(w))
        };
        let disagrees = match (r.shadow_outcome, r.outcome) {
            (Some(shadow), Some(outcome)) => shadow != outcome,
            _ => false,
        };
        self.since.as_ref().is_none_or(|since| event.ts.as_str() >= since.as_str())
            && self.until.as_ref().is_none_or(|until| event.ts.as_str() < until.as_str())
            && is(&self.session_id, &r.session_id)
            && is(&self.actor_id, &r.actor_id)
            && is(&self.tool, &r.tool)
            && is(&self.action, &r.action)
            && self.outcome.is_none_or(|o| r.outcome == Some(o))
            && self.kind.is_none_or(|k| r.kind == k)
            && is(&self.decision_id, &r.decision_id)
            && (!self.shadow_disagrees || disagrees)
    }
}
