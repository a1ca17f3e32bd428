//! The filter of an auditor's question (a query, an export, a stats range): every condition
//! optional, all of them combined with AND. Times are the trail's own normalized RFC 3339, so
//! that they compare with `ts` as text. An export's manifest records the filter it applied, so
//! that its verifier knows gaps between rows are expected.

use serde::{Deserialize, Serialize};

use crate::{Kind, Outcome};

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
}
