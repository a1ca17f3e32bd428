//! The filter of an auditor's question (Query, ExportCsv, the `query` and `export` commands):
//! every condition optional, all of them combined with AND. Times are RFC 3339, or a duration
//! back from now (`24h`, `7d`, `90m`), normalized to the trail's own UTC format so that they
//! compare with `ts` as text.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

use super::FieldError;
use crate::policy::Outcome;
use crate::proto;
use crate::trail::Kind;

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
    pub outcome: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_id: Option<String>,
    /// Only decisions whose shadow policy answered otherwise than the enforced one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shadow_disagrees: bool,
}

const OUTCOMES: [Outcome; 5] =
    [Outcome::Allow, Outcome::Deny, Outcome::RequireApproval, Outcome::DryRun, Outcome::Rewrite];

impl Filter {
    /// Validates a wire filter; field names in errors are prefixed with `prefix` (`filter.`).
    pub fn from_proto(filter: proto::Filter, prefix: &str) -> Result<Self, FieldError> {
        let now = Utc::now();
        let text = |v: String| (!v.is_empty()).then_some(v);
        let field = |name: &str| format!("{prefix}{name}");
        let time = |name: &str, v: String| match text(v) {
            Some(v) => parse_time(&v, now).map(Some).map_err(|p| FieldError::new(field(name), p)),
            None => Ok(None),
        };
        let filter = Self {
            since: time("since", filter.since)?,
            until: time("until", filter.until)?,
            session_id: text(filter.session_id),
            actor_id: text(filter.actor_id),
            tool: text(filter.tool),
            action: text(filter.action),
            outcome: text(filter.outcome),
            kind: text(filter.kind),
            decision_id: text(filter.decision_id),
            shadow_disagrees: filter.shadow_disagrees,
        };
        if let Some(kind) = &filter.kind
            && !Kind::ALL.iter().any(|k| k.as_str() == kind)
        {
            let names: Vec<_> = Kind::ALL.iter().map(|k| k.as_str()).collect();
            return Err(FieldError::new(
                field("kind"),
                format!("unknown kind `{kind}`: one of {}", names.join(", ")),
            ));
        }
        if let Some(outcome) = &filter.outcome
            && !OUTCOMES.iter().any(|o| o.as_str() == outcome)
        {
            let names: Vec<_> = OUTCOMES.iter().map(|o| o.as_str()).collect();
            return Err(FieldError::new(
                field("outcome"),
                format!("unknown outcome `{outcome}`: one of {}", names.join(", ")),
            ));
        }
        Ok(filter)
    }

    /// A filter on time alone (the compliance summary's range), validated like any other:
    /// field names in errors are prefixed with `prefix`.
    pub fn time_range(since: &str, until: &str, prefix: &str) -> Result<Self, FieldError> {
        let wire = proto::Filter {
            since: since.to_owned(),
            until: until.to_owned(),
            ..Default::default()
        };
        Self::from_proto(wire, prefix)
    }

    /// The filter in wire form (times already normalized).
    pub fn to_proto(&self) -> proto::Filter {
        let text = |v: &Option<String>| v.clone().unwrap_or_default();
        proto::Filter {
            since: text(&self.since),
            until: text(&self.until),
            session_id: text(&self.session_id),
            actor_id: text(&self.actor_id),
            tool: text(&self.tool),
            action: text(&self.action),
            outcome: text(&self.outcome),
            kind: text(&self.kind),
            decision_id: text(&self.decision_id),
            shadow_disagrees: self.shadow_disagrees,
        }
    }

    /// Whether the filter selects every event.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Parses an RFC 3339 time, or a duration back from `now` (`90s`, `15m`, `24h`, `7d`, `2w`),
/// into the trail's format: UTC with microseconds.
fn parse_time(value: &str, now: DateTime<Utc>) -> Result<String, String> {
    let time = match DateTime::parse_from_rfc3339(value) {
        Ok(time) => time.with_timezone(&Utc),
        Err(_) => {
            let ago = humantime::parse_duration(value).map_err(|_| {
                format!("`{value}` is neither an RFC 3339 time nor a duration such as `24h`")
            })?;
            let ago = chrono::Duration::from_std(ago).map_err(|e| e.to_string())?;
            now.checked_sub_signed(ago).ok_or_else(|| format!("`{value}` is too long ago"))?
        }
    };
    Ok(time.to_rfc3339_opts(SecondsFormat::Micros, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_normalized_to_utc_microseconds() {
        let now = Utc::now();
        assert_eq!(
            parse_time("2026-11-30T06:00:00+02:00", now).unwrap(),
            "2026-11-30T04:00:00.000000Z"
        );
    }

    #[test]
    fn durations_count_back_from_now() {
        let now = DateTime::parse_from_rfc3339("2026-11-30T12:00:00Z").unwrap().to_utc();
        assert_eq!(parse_time("24h", now).unwrap(), "2026-11-29T12:00:00.000000Z");
        assert_eq!(parse_time("7d", now).unwrap(), "2026-11-23T12:00:00.000000Z");
        assert!(parse_time("yesterday", now).is_err());
    }

    #[test]
    fn unknown_kinds_and_outcomes_are_refused_by_field() {
        let bad = proto::Filter { kind: "decisions".into(), ..Default::default() };
        assert_eq!(Filter::from_proto(bad, "filter.").unwrap_err().field, "filter.kind");
        let bad = proto::Filter { outcome: "permit".into(), ..Default::default() };
        assert_eq!(Filter::from_proto(bad, "filter.").unwrap_err().field, "filter.outcome");
    }

    #[test]
    fn every_kind_on_the_trail_can_be_filtered_on() {
        for name in ["approval_requested", "approval_expired", "access_denied", "policy_loaded"] {
            let filter = proto::Filter { kind: name.into(), ..Default::default() };
            assert_eq!(Filter::from_proto(filter, "").unwrap().kind.as_deref(), Some(name));
        }
    }
}
