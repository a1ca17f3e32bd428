//! A batch of events as the store's `fleet_ingest` takes it: an array of the composite type
//! `fleet_event` (the trail's columns in [`COLUMNS`] order), in PostgreSQL's binary format, so
//! the store decodes it field by field instead of parsing text.

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::postgres::types::PgRecordEncoder;
use sqlx::postgres::{PgArgumentBuffer, PgHasArrayType, PgTypeInfo};
use sqlx::{Encode, Postgres, Type};

use crate::trail::{COLUMNS, Event, Type as ColumnType, Value};

/// One event, encoded as a `fleet_event`.
pub struct BatchRow<'a>(pub &'a Event);

impl Type<Postgres> for BatchRow<'_> {
    fn type_info() -> PgTypeInfo {
        PgTypeInfo::with_name("fleet_event")
    }
}

impl PgHasArrayType for BatchRow<'_> {
    fn array_type_info() -> PgTypeInfo {
        PgTypeInfo::array_of("fleet_event")
    }
}

impl Encode<'_, Postgres> for BatchRow<'_> {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        // The record encoder is the one sqlx's own `#[derive(sqlx::Type)]` expands to.
        let mut record = PgRecordEncoder::new(buf);
        for (column, cell) in COLUMNS.iter().zip(self.0.cells()) {
            match (column.ty, cell) {
                (_, Some(Value::Integer(n))) => record.encode(Some(n))?,
                (_, Some(Value::Text(text))) => record.encode(Some(std::str::from_utf8(text)?))?,
                (ColumnType::Integer, None) => record.encode(None::<i64>)?,
                (ColumnType::Text, None) => record.encode(None::<&str>)?,
            };
        }
        record.finish();
        Ok(IsNull::No)
    }
}
