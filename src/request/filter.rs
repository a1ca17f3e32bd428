//! The validation of an auditor's question: a wire filter into a [`Filter`] (times as RFC 3339,
//! or a duration back from now: `24h`, `7d`, `90m`, normalized to the trail's own UTC format),
//! and a Query's page.

use chrono::{DateTime, SecondsFormat, Utc};

use crate::error::FieldError;
use crate::proto;
use crate::trail::Filter;
use crate::trail::{Kind, Outcome};

/// Largest page a Query may ask for.
const MAX_PAGE_SIZE: u32 = 1000;
/// Page size when the request names none.
const DEFAULT_PAGE_SIZE: u32 = 100;

/// A validated page of a Query: at most `size` events after `after` (before it, newest first;
/// 0 is the start either way).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub after: i64,
    pub size: u32,
    /// On a fleet server, the node of `after` (empty before the first node's events).
    pub after_node: String,
}

impl Page {
    /// Validates a Query's `page_size` and `page_token`: the last `seq` of the page before,
    /// and on a fleet server (`fleet`) its node, as `node:seq`.
    pub fn from_proto(page_size: u32, page_token: &str, fleet: bool) -> Result<Self, FieldError> {
        let size = match page_size {
            0 => DEFAULT_PAGE_SIZE,
            n if n > MAX_PAGE_SIZE => {
                let problem = format!("{n} is over the limit of {MAX_PAGE_SIZE}");
                return Err(FieldError::new("page_size", problem));
            }
            n => n,
        };
        let (after_node, seq) = match page_token.rsplit_once(':') {
            Some((node, seq)) if fleet => (node.to_owned(), seq),
            _ => (String::new(), page_token),
        };
        let after = match seq {
            "" if page_token.is_empty() => 0,
            seq => match seq.parse::<i64>() {
                Ok(seq) if seq >= 0 && (!fleet || !after_node.is_empty()) => seq,
                _ => return Err(FieldError::new("page_token", "not a token this server gave")),
            },
        };
        Ok(Self { after, size, after_node })
    }

    /// The token of the page after the one ending with `seq` (of `node`, on a fleet server).
    pub fn token(node: Option<&str>, seq: i64) -> String {
        match node {
            Some(node) => format!("{node}:{seq}"),
            None => seq.to_string(),
        }
    }
}

/// A [`Filter`] to and from its wire form.
pub trait WireFilter: Sized {
    /// Validates a wire filter; field names in errors are prefixed with `prefix` (`filter.`).
    fn from_proto(filter: proto::Filter, prefix: &str) -> Result<Self, FieldError>;

    /// A filter on time alone (the compliance summary's range), validated like any other:
    /// field names in errors are prefixed with `prefix`.
    fn time_range(since: &str, until: &str, prefix: &str) -> Result<Self, FieldError>;

    /// The filter in wire form (times already normalized).
    fn to_proto(&self) -> proto::Filter;
}

impl WireFilter for Filter {
    fn from_proto(filter: proto::Filter, prefix: &str) -> Result<Self, FieldError> {
        let now = Utc::now();
        let text = |v: String| (!v.is_empty()).then_some(v);
        let field = |name: &str| format!("{prefix}{name}");
        let time = |name: &str, v: String| match text(v) {
            Some(v) => parse_time(&v, now).map(Some).map_err(|p| FieldError::new(field(name), p)),
            None => Ok(None),
        };
        let kind = named(field("kind"), "kind", text(filter.kind), Kind::ALL.map(Kind::as_str))?;
        let outcome = named(
            field("outcome"),
            "outcome",
            text(filter.outcome),
            Outcome::ALL.map(Outcome::as_str),
        )?;
        Ok(Self {
            since: time("since", filter.since)?,
            until: time("until", filter.until)?,
            session_id: text(filter.session_id),
            actor_id: text(filter.actor_id),
            tool: text(filter.tool),
            action: text(filter.action),
            outcome,
            kind,
            decision_id: text(filter.decision_id),
            shadow_disagrees: filter.shadow_disagrees,
        })
    }

    fn time_range(since: &str, until: &str, prefix: &str) -> Result<Self, FieldError> {
        let wire = proto::Filter {
            since: since.to_owned(),
            until: until.to_owned(),
            ..Default::default()
        };
        Self::from_proto(wire, prefix)
    }

    fn to_proto(&self) -> proto::Filter {
        let text = |v: &Option<String>| v.clone().unwrap_or_default();
        proto::Filter {
            since: text(&self.since),
            until: text(&self.until),
            session_id: text(&self.session_id),
            actor_id: text(&self.actor_id),
            tool: text(&self.tool),
            action: text(&self.action),
            outcome: self.outcome.map(|o| o.as_str().to_owned()).unwrap_or_default(),
            kind: self.kind.map(|k| k.as_str().to_owned()).unwrap_or_default(),
            decision_id: text(&self.decision_id),
            shadow_disagrees: self.shadow_disagrees,
            node_id: String::new(),
        }
    }
}

/// One of a fixed set of names, or an error listing them.
fn named<T: std::str::FromStr<Err = ()>, const N: usize>(
    field: String,
    what: &str,
    value: Option<String>,
    names: [&str; N],
) -> Result<Option<T>, FieldError> {
    let Some(value) = value else { return Ok(None) };
    value.parse().map(Some).map_err(|()| {
        FieldError::new(field, format!("unknown {what} `{value}`: one of {}", names.join(", ")))
    })
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
            assert_eq!(Filter::from_proto(filter, "").unwrap().kind.map(Kind::as_str), Some(name));
        }
    }
}
