//! An event as an SQLite row, derived from the trail's column table: the column list of every
//! `SELECT` and `INSERT`, and the conversion of a row's cells to an event and back. Rows are
//! read by each column's place in [`COLUMNS`], never by a number written by hand.

use std::sync::LazyLock;

use rusqlite::Row;
use rusqlite::types::{ToSqlOutput, Type as SqlType, ValueRef};

use crate::trail::{COLUMNS, Cells, Event, Value};

/// `SELECT <every column> FROM events`, in [`COLUMNS`] order.
pub(super) static SELECT: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {} FROM events", crate::trail::column_list()));

/// `INSERT INTO events (<every column>) VALUES (?1, …)`, in [`COLUMNS`] order.
pub(super) static INSERT: LazyLock<String> = LazyLock::new(|| {
    let placeholders: Vec<_> = (1..=COLUMNS.len()).map(|i| format!("?{i}")).collect();
    format!(
        "INSERT INTO events ({}) VALUES ({})",
        crate::trail::column_list(),
        placeholders.join(", ")
    )
});

/// The cells of a row of [`SELECT`]. A cell SQLite holds as something the trail never writes
/// (a real number) reads as NULL, and so fails its hash.
pub(super) fn cells<'a>(row: &'a Row<'_>) -> rusqlite::Result<Cells<'a>> {
    let mut cells: Cells<'a> = [None; COLUMNS.len()];
    for (i, cell) in cells.iter_mut().enumerate() {
        *cell = match row.get_ref(i)? {
            ValueRef::Integer(n) => Some(Value::Integer(n)),
            ValueRef::Text(bytes) | ValueRef::Blob(bytes) => Some(Value::Text(bytes)),
            ValueRef::Null | ValueRef::Real(_) => None,
        };
    }
    Ok(cells)
}

/// The event of a row of [`SELECT`].
pub(super) fn event(row: &Row<'_>) -> rusqlite::Result<Event> {
    Event::from_cells(&cells(row)?).map_err(|e| {
        let at = COLUMNS.iter().position(|c| c.name == e.column).unwrap_or_default();
        rusqlite::Error::FromSqlConversionFailure(at, SqlType::Text, Box::new(e))
    })
}

/// The parameters of [`INSERT`] for an event.
pub(super) fn params(event: &Event) -> [ToSqlOutput<'_>; COLUMNS.len()] {
    event.cells().map(|cell| {
        ToSqlOutput::Borrowed(match cell {
            None => ValueRef::Null,
            Some(Value::Integer(n)) => ValueRef::Integer(n),
            Some(Value::Text(bytes)) => ValueRef::Text(bytes),
        })
    })
}
