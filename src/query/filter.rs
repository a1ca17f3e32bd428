//! A [`Filter`] as SQL: both SQL stores of the trail (SQLite, and the fleet's PostgreSQL)
//! render an auditor's question the same way.

use crate::trail::{Filter, Kind, Outcome};

/// The filter as standard SQL: ` AND …` conditions on the trail's columns with `?`
/// placeholders, and their (text) values in order. Any SQL store of the trail renders it.
pub fn filter_sql(filter: &Filter) -> (String, Vec<String>) {
    let name = |v: Option<&'static str>| v.map(str::to_owned);
    let conditions = [
        (" AND ts >= ?", filter.since.clone()),
        (" AND ts < ?", filter.until.clone()),
        (" AND session_id = ?", filter.session_id.clone()),
        (" AND actor_id = ?", filter.actor_id.clone()),
        (" AND tool = ?", filter.tool.clone()),
        (" AND action = ?", filter.action.clone()),
        (" AND outcome = ?", name(filter.outcome.map(Outcome::as_str))),
        (" AND kind = ?", name(filter.kind.map(Kind::as_str))),
        (" AND decision_id = ?", filter.decision_id.clone()),
    ];
    let mut sql = String::new();
    let mut values = Vec::new();
    if filter.shadow_disagrees {
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
