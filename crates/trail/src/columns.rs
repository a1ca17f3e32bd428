//! The trail's columns: the one table from which every other form of an event is derived.
//!
//! [`record_columns!`] lists the columns an event's writer chooses, each with its Rust type, in
//! table order; the five the trail assigns (`seq`, `event_id` and `ts` before them, `prev_hash`
//! and `hash` after) are fixed by the chain and stand around them. From that list come:
//!
//! - the [`Record`] struct, and with it [`Event`];
//! - [`COLUMNS`]: every column's name, type and nullability, in table order;
//! - [`Event::cells`] and [`Event::from_cells`]: an event as its cells in table order, and back.
//!   The hash ([`super::encoding`]), the CSV writer and reader ([`super::csv`]) and the SQLite
//!   statements (`store`) go through these, by the column's place in [`COLUMNS`], never by a
//!   number written by hand;
//! - the protobuf conversion (`grpc::convert`), which hands its own macro to
//!   [`record_columns!`] because `toolgate.v1.Event` has a field of the same name per column.
//!
//! A macro rather than a `fields()` array, because the struct's fields must come from the list
//! too, or they would be its second copy. Adding a column is one line here, one in the
//! migration that adds it, and one in `proto/toolgate/v1/audit.proto` (`note` was added so).

use super::{Event, Kind, Outcome};

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    Integer,
    Text,
}

/// One column of the trail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    pub name: &'static str,
    pub ty: Type,
    /// NULL is allowed (the field is an `Option`).
    pub nullable: bool,
}

impl Column {
    const fn of<T: Cell>(name: &'static str) -> Self {
        Self { name, ty: T::TYPE, nullable: T::NULLABLE }
    }
}

/// A cell's value when it is not NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Integer(i64),
    /// UTF-8 text, as bytes.
    Text(&'a [u8]),
}

/// A cell that does not hold what its column does.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{column}: {problem}")]
pub struct CellError {
    pub column: &'static str,
    pub problem: String,
}

/// A Rust type a column can have, and how it is a cell.
pub trait Cell: Sized {
    const TYPE: Type;
    const NULLABLE: bool;
    /// The cell's value; `None` for NULL.
    fn value(&self) -> Option<Value<'_>>;
    /// The field from a cell's value, or why it cannot be one.
    fn from_value(value: Option<Value<'_>>) -> Result<Self, String>;
    /// Makes an empty text NULL: the trail stores none, so that a CSV export (where both are
    /// an empty cell) reads back to exactly what was hashed.
    fn drop_empty(&mut self) {}
}

impl Cell for i64 {
    const TYPE: Type = Type::Integer;
    const NULLABLE: bool = false;
    fn value(&self) -> Option<Value<'_>> {
        Some(Value::Integer(*self))
    }
    fn from_value(value: Option<Value<'_>>) -> Result<Self, String> {
        match value {
            Some(Value::Integer(n)) => Ok(n),
            Some(Value::Text(_)) => Err("a text where an integer belongs".to_owned()),
            None => Err("empty".to_owned()),
        }
    }
}

impl Cell for String {
    const TYPE: Type = Type::Text;
    const NULLABLE: bool = false;
    fn value(&self) -> Option<Value<'_>> {
        Some(Value::Text(self.as_bytes()))
    }
    fn from_value(value: Option<Value<'_>>) -> Result<Self, String> {
        match value {
            Some(Value::Text(bytes)) => {
                String::from_utf8(bytes.to_vec()).map_err(|_| "not UTF-8".to_owned())
            }
            Some(Value::Integer(_)) => Err("an integer where a text belongs".to_owned()),
            None => Err("empty".to_owned()),
        }
    }
}

impl<T: Cell> Cell for Option<T> {
    const TYPE: Type = T::TYPE;
    const NULLABLE: bool = true;
    fn value(&self) -> Option<Value<'_>> {
        self.as_ref().and_then(T::value)
    }
    fn from_value(value: Option<Value<'_>>) -> Result<Self, String> {
        value.map(|v| T::from_value(Some(v))).transpose()
    }
    fn drop_empty(&mut self) {
        if matches!(self.as_ref().and_then(T::value), Some(Value::Text(b""))) {
            *self = None;
        }
    }
}

/// The domain's enums are stored by name.
macro_rules! named_cell {
    ($($enum:ty),*) => {$(
        impl Cell for $enum {
            const TYPE: Type = Type::Text;
            const NULLABLE: bool = false;
            fn value(&self) -> Option<Value<'_>> {
                Some(Value::Text(self.as_str().as_bytes()))
            }
            fn from_value(value: Option<Value<'_>>) -> Result<Self, String> {
                let text = String::from_value(value)?;
                text.parse().map_err(|()| format!("`{text}` is not one of toolgate's names"))
            }
        }
    )*};
}
named_cell!(Kind, Outcome);

/// The columns an event's writer chooses, in table order, each with its type: the table that
/// everything else is derived from. `kind` comes first and is the only one that is never NULL. Calls `$then!` with the list, so that a module can derive
/// its own form of an event (the protobuf conversion does).
#[macro_export]
macro_rules! record_columns {
    ($then:ident) => {
        $then! {
            /// What happened.
            kind: Kind,
            /// The decision the event belongs to.
            decision_id: Option<String>,
            session_id: Option<String>,
            task_type: Option<String>,
            actor_id: Option<String>,
            actor_kind: Option<String>,
            tool: Option<String>,
            action: Option<String>,
            resource_type: Option<String>,
            resource_id: Option<String>,
            /// Hash of the canonical arguments (never the arguments themselves).
            args_hash: Option<String>,
            /// With a rewrite: hash of the canonical rewritten arguments.
            rewritten_args_hash: Option<String>,
            outcome: Option<Outcome>,
            reason: Option<String>,
            /// A JSON array of policy ids.
            policy_ids: Option<String>,
            policy_version: Option<String>,
            /// The shadow (candidate) policy's outcome, which never changes the answer.
            shadow_outcome: Option<Outcome>,
            shadow_reason: Option<String>,
            max_output_chars: Option<i64>,
            timeout_ms: Option<i64>,
            duration_us: Option<i64>,
            result_bytes: Option<i64>,
            /// 1 when the output handed back was cut, else 0.
            truncated: Option<i64>,
            status: Option<String>,
            error: Option<String>,
            /// The normalized request as canonical JSON, arguments by hash only.
            request: Option<String>,
            /// A signed note (C2SP signed-note): for a `checkpoint`, the signed checkpoint of
            /// the tree of every event before it.
            note: Option<String>,
        }
    };
}

/// Defines [`Record`], [`COLUMNS`] and the cell forms of an [`Event`] from the table.
macro_rules! define_record {
    (
        $(#[doc = $kind_doc:literal])* kind: Kind,
        $( $(#[doc = $doc:literal])* $name:ident : Option<$ty:ty>, )*
    ) => {
        /// The fields of an event that its writer chooses; `None` is stored as NULL.
        #[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
        pub struct Record {
            $(#[doc = $kind_doc])*
            pub kind: Kind,
            $( $(#[doc = $doc])* pub $name: Option<$ty>, )*
        }

        /// Every column, in table order: `seq`, `event_id`, `ts`, the record's, `prev_hash`,
        /// `hash`.
        pub const COLUMNS: [Column; [$(stringify!($name)),*].len() + 6] = [
            Column::of::<i64>("seq"),
            Column::of::<String>("event_id"),
            Column::of::<String>("ts"),
            Column::of::<Kind>("kind"),
            $( Column::of::<Option<$ty>>(stringify!($name)), )*
            Column::of::<String>("prev_hash"),
            Column::of::<String>("hash"),
        ];

        impl Record {
            /// An empty record of the given kind.
            pub fn new(kind: Kind) -> Self {
                Self { kind, $( $name: None, )* }
            }

            /// The record with every empty text made NULL (see [`Cell::drop_empty`]).
            pub fn without_empty_texts(mut self) -> Self {
                $( Cell::drop_empty(&mut self.$name); )*
                self
            }
        }

        impl Event {
            /// The event's cells, in [`COLUMNS`] order.
            pub fn cells(&self) -> Cells<'_> {
                let r = &self.record;
                [
                    self.seq.value(),
                    self.event_id.value(),
                    self.ts.value(),
                    r.kind.value(),
                    $( r.$name.value(), )*
                    self.prev_hash.value(),
                    self.hash.value(),
                ]
            }

            /// The event whose cells, in [`COLUMNS`] order, are `cells`.
            pub fn from_cells(cells: &Cells<'_>) -> Result<Self, CellError> {
                let mut at = 0;
                // Fields are evaluated in the order written, which is the table's.
                Ok(Event {
                    seq: take(cells, &mut at)?,
                    event_id: take(cells, &mut at)?,
                    ts: take(cells, &mut at)?,
                    record: Record {
                        kind: take(cells, &mut at)?,
                        $( $name: take(cells, &mut at)?, )*
                    },
                    prev_hash: take(cells, &mut at)?,
                    hash: take(cells, &mut at)?,
                })
            }
        }
    };
}
record_columns!(define_record);

impl Event {
    /// The event's non-NULL cells with their columns' names, in [`COLUMNS`] order: for the
    /// forms that carry every column by name (the OTLP and OCSF exports).
    pub fn named_cells(&self) -> impl Iterator<Item = (&'static str, Value<'_>)> {
        COLUMNS.iter().zip(self.cells()).filter_map(|(column, cell)| Some((column.name, cell?)))
    }
}

/// An event's cells, in [`COLUMNS`] order.
pub type Cells<'a> = [Option<Value<'a>>; COLUMNS.len()];

/// The place of the column named `name` in [`COLUMNS`] (evaluated at compile time).
pub const fn position(name: &str) -> usize {
    let mut i = 0;
    while i < COLUMNS.len() {
        if same(COLUMNS[i].name, name) {
            return i;
        }
        i += 1;
    }
    panic!("no such column");
}

/// The column list for SQL, in [`COLUMNS`] order: `seq, event_id, …, hash`.
pub fn column_list() -> String {
    COLUMNS.iter().map(|c| c.name).collect::<Vec<_>>().join(", ")
}

fn take<T: Cell>(cells: &Cells<'_>, at: &mut usize) -> Result<T, CellError> {
    let column = &COLUMNS[*at];
    let value = T::from_value(cells[*at]);
    *at += 1;
    value.map_err(|problem| CellError { column: column.name, problem })
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_columns_stand_around_the_record() {
        let names: Vec<_> = COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(&names[..4], ["seq", "event_id", "ts", "kind"]);
        assert_eq!(&names[names.len() - 2..], ["prev_hash", "hash"]);
        assert_eq!(position("hash"), COLUMNS.len() - 1);
        assert!(!COLUMNS[position("kind")].nullable);
        assert!(COLUMNS[position("outcome")].nullable);
        assert_eq!(COLUMNS[position("duration_us")].ty, Type::Integer);
    }

    #[test]
    fn an_event_goes_to_cells_and_back_unchanged() {
        let event = Event {
            seq: 3,
            event_id: "e".into(),
            ts: "t".into(),
            record: Record {
                outcome: Some(Outcome::Rewrite),
                duration_us: Some(-1),
                reason: Some("why".into()),
                ..Record::new(Kind::Decision)
            },
            prev_hash: "p".into(),
            hash: "h".into(),
        };
        assert_eq!(Event::from_cells(&event.cells()), Ok(event));
    }

    #[test]
    fn a_cell_of_the_wrong_kind_names_its_column() {
        let event = Event {
            seq: 1,
            event_id: "e".into(),
            ts: "t".into(),
            record: Record::new(Kind::Decision),
            prev_hash: "p".into(),
            hash: "h".into(),
        };
        let mut cells = event.cells();
        cells[position("kind")] = Some(Value::Text(b"decisionx"));
        assert_eq!(Event::from_cells(&cells).unwrap_err().column, "kind");
        cells[position("kind")] = Some(Value::Text(b"decision"));
        cells[position("truncated")] = Some(Value::Text(b"1"));
        assert_eq!(Event::from_cells(&cells).unwrap_err().column, "truncated");
    }

    #[test]
    fn empty_texts_become_null() {
        let record = Record { reason: Some(String::new()), ..Record::new(Kind::Execution) };
        assert_eq!(record.without_empty_texts().reason, None);
    }
}
