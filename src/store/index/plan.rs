//! How a filtered read uses the index: which table leads (the most selective condition the
//! index holds), and the SQL of the two parts of an answer, the indexed events up to the
//! watermark and the tail after it. Every condition of the filter is checked on the events in
//! both parts, so the index only narrows where to look.

use std::sync::LazyLock;

use rusqlite::types::Value;

use super::{Table, micros};
use crate::trail::Filter;

/// `SELECT <every column>`, for the reads that join the index.
static COLUMNS: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {}", crate::trail::column_list()));

/// The index table that leads a filtered read, and its condition on the table's `k`.
#[derive(Debug, Clone)]
pub(in crate::store) struct Plan {
    table: Table,
    /// `k = ?`, or a range of `k` for a time.
    condition: &'static str,
    values: Vec<Value>,
}

impl Plan {
    /// The plan for a page of `filter`'s events in `seq` order, if one of its conditions is
    /// indexed and can lead. A time range cannot: its entries are in time order, and a page
    /// would sort the whole range to find its first events by `seq`; the events are scanned
    /// in `seq` order instead.
    pub(in crate::store) fn ordered(filter: &Filter) -> Option<Self> {
        Self::of(filter).filter(|plan| plan.table != Table::Time)
    }

    /// The plan for `filter` when the order does not matter (counts), if one of its conditions
    /// is indexed.
    pub(in crate::store) fn of(filter: &Filter) -> Option<Self> {
        let equal = |table, value: &Option<String>| {
            let value = Value::Integer(Table::key(table, value.as_deref()?));
            Some(Self { table, condition: "k = ?", values: vec![value] })
        };
        equal(Table::Decision, &filter.decision_id)
            .or_else(|| equal(Table::Session, &filter.session_id))
            .or_else(|| equal(Table::Actor, &filter.actor_id))
            .or_else(|| equal(Table::Tool, &filter.tool))
            .or_else(|| Self::time(filter))
    }

    /// A time range (either end open), when the filter has one that reads.
    fn time(filter: &Filter) -> Option<Self> {
        let since = filter.since.as_deref().map(micros);
        let until = filter.until.as_deref().map(micros);
        let (since, until) = match (since, until) {
            (None, None) | (Some(None), _) | (_, Some(None)) => return None,
            (since, until) => (since.flatten(), until.flatten()),
        };
        let values = vec![
            Value::Integer(since.unwrap_or(i64::MIN)),
            Value::Integer(until.unwrap_or(i64::MAX)),
        ];
        Some(Self { table: Table::Time, condition: "k >= ? AND k < ?", values })
    }

    /// `SELECT <columns> FROM` the plan's table joined to the events, `WHERE` its condition
    /// and: what the caller appends next (` AND at …`); with the plan's values.
    pub(in crate::store) fn events(&self) -> (String, Vec<Value>) {
        (format!("{} {}", *COLUMNS, self.from()), self.values.clone())
    }

    /// `FROM` the plan's table joined to the events `WHERE` its condition: the index leads
    /// (CROSS JOIN keeps it the outer loop), each entry finds its event by `seq`.
    pub(in crate::store) fn from(&self) -> String {
        format!(
            "FROM ix.{} CROSS JOIN main.events ON seq = at WHERE {}",
            self.table.name(),
            self.condition
        )
    }

    /// The plan's values, for [`Plan::from`].
    pub(in crate::store) fn values(&self) -> &[Value] {
        &self.values
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_selective_indexed_condition_leads() {
        let filter = Filter {
            session_id: Some("s".into()),
            actor_id: Some("a".into()),
            since: Some("2026-12-02T00:00:00.000000Z".into()),
            ..Filter::default()
        };
        assert_eq!(Plan::of(&filter).unwrap().table, Table::Session);
        let filter = Filter { decision_id: Some("d".into()), ..filter };
        assert_eq!(Plan::of(&filter).unwrap().table, Table::Decision);
        let time =
            Filter { until: Some("2026-12-02T00:00:00.000000Z".into()), ..Filter::default() };
        assert!(Plan::ordered(&time).is_none(), "a page by time alone scans in seq order");
        let plan = Plan::of(&time).unwrap();
        assert_eq!(plan.table, Table::Time);
        assert_eq!(plan.values[0], Value::Integer(i64::MIN));
        let unindexed = Filter { action: Some("read".into()), ..Filter::default() };
        assert!(Plan::of(&unindexed).is_none(), "an action alone scans");
    }
}
