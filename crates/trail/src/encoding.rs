//! The canonical encoding of an event and the hash chain over it (docs/trail-format.md).
//!
//! ```text
//! encoding = 0x01                                   format version
//!            for each field with a value, in byte order of the field names:
//!              u8 name length, name (ASCII)
//!              0x01, i64 big-endian                 an integer
//!            | 0x02, u32 big-endian length, UTF-8   a text
//! hash     = SHA-256(previous hash, 32 raw bytes || encoding)
//! ```
//!
//! Fields without a value (NULL) are left out, so a column added in a later version leaves the
//! hashes of older events unchanged.

use sha2::{Digest, Sha256};

use super::Event;
use super::columns::{COLUMNS, CellError, Cells, Type, Value, position};

/// The `prev_hash` of the first event: 32 zero bytes.
pub const GENESIS_HASH: [u8; 32] = [0; 32];

const FORMAT_VERSION: u8 = 1;
const TAG_INTEGER: u8 = 1;
const TAG_TEXT: u8 = 2;

/// How many columns are hashed: all but `prev_hash` and `hash`, the last two.
const HASHED: usize = COLUMNS.len() - 2;

/// The places in [`COLUMNS`] of the hashed columns, in byte order of their names: the order in
/// which they are encoded. Computed from the table at compile time.
const HASH_ORDER: [usize; HASHED] = hash_order();

/// The hashed columns' names, in the order they are encoded.
pub fn hashed_columns() -> impl Iterator<Item = &'static str> {
    HASH_ORDER.iter().map(|&i| COLUMNS[i].name)
}

/// Feeds the canonical encoding of an event given as its cells to `out`, piece by piece.
fn encode_into(cells: &Cells<'_>, out: &mut impl FnMut(&[u8])) {
    out(&[FORMAT_VERSION]);
    for &i in &HASH_ORDER {
        let Some(value) = cells[i] else { continue };
        let name = COLUMNS[i].name;
        // INVARIANT: column names are short ASCII constants.
        out(&[name.len() as u8]);
        out(name.as_bytes());
        match value {
            Value::Integer(n) => {
                out(&[TAG_INTEGER]);
                out(&n.to_be_bytes());
            }
            Value::Text(bytes) => {
                out(&[TAG_TEXT]);
                // INVARIANT: every text is far below 4 GiB (inputs are limited to MiBs).
                out(&(bytes.len() as u32).to_be_bytes());
                out(bytes);
            }
        }
    }
}

/// The canonical encoding of an event's hashed fields.
pub fn encode(event: &Event) -> Vec<u8> {
    let mut encoded = Vec::with_capacity(512);
    encode_into(&event.cells(), &mut |bytes| encoded.extend_from_slice(bytes));
    encoded
}

/// The hash of an event that follows an event whose hash is `prev`.
pub fn event_hash(prev: &[u8; 32], event: &Event) -> [u8; 32] {
    hash_cells(prev, &event.cells())
}

/// The hash of an event given as its cells (straight from a database row, say), hashed as it
/// is encoded; its own `prev_hash` and `hash` cells are not read.
pub fn hash_cells(prev: &[u8; 32], cells: &Cells<'_>) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(prev);
    encode_into(cells, &mut |bytes| hasher.update(bytes));
    hasher.finalize().into()
}

/// Why bytes are not the canonical encoding of an event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("the encoding ends inside a field")]
    Truncated,
    #[error("format version {0}, not 1")]
    Version(u8),
    #[error("field {0:?} is not a hashed column, or is out of order")]
    Field(String),
    #[error("field {0}: the tag does not match its column's type")]
    Tag(&'static str),
    #[error(transparent)]
    Cell(#[from] CellError),
    #[error("the event's prev_hash is not 64 hex digits")]
    PrevHash,
}

/// The event whose canonical encoding is `encoded` and whose previous hash is `prev`, its
/// `hash` computed: the inverse of [`encode`], as strict as it (fields in order, each once,
/// tagged with their column's type, nothing after the last). What it accepts encodes back to
/// the same bytes.
pub fn decode_event(prev: &[u8; 32], encoded: &[u8]) -> Result<Event, DecodeError> {
    let mut cells: Cells<'_> = [None; COLUMNS.len()];
    let (&version, mut rest) = encoded.split_first().ok_or(DecodeError::Truncated)?;
    if version != FORMAT_VERSION {
        return Err(DecodeError::Version(version));
    }
    let mut order = HASH_ORDER.iter();
    while let Some((&length, after)) = rest.split_first() {
        let (name, after) = split(after, usize::from(length))?;
        // Each field's column comes later in the order than the one before it.
        let i = *order
            .find(|&&i| COLUMNS[i].name.as_bytes() == name)
            .ok_or_else(|| DecodeError::Field(String::from_utf8_lossy(name).into_owned()))?;
        let column = COLUMNS[i];
        let (&tag, after) = after.split_first().ok_or(DecodeError::Truncated)?;
        let (value, after) = match (tag, column.ty) {
            (TAG_INTEGER, Type::Integer) => {
                let (bytes, after) = split(after, 8)?;
                let mut n = [0; 8];
                n.copy_from_slice(bytes);
                (Value::Integer(i64::from_be_bytes(n)), after)
            }
            (TAG_TEXT, Type::Text) => {
                let (length, after) = split(after, 4)?;
                let length = u32::from_be_bytes([length[0], length[1], length[2], length[3]]);
                let length = usize::try_from(length).map_err(|_| DecodeError::Truncated)?;
                let (bytes, after) = split(after, length)?;
                (Value::Text(bytes), after)
            }
            _ => return Err(DecodeError::Tag(column.name)),
        };
        cells[i] = Some(value);
        rest = after;
    }
    let hash = hex::encode(hash_cells(prev, &cells));
    let prev = hex::encode(prev);
    cells[position("prev_hash")] = Some(Value::Text(prev.as_bytes()));
    cells[position("hash")] = Some(Value::Text(hash.as_bytes()));
    Ok(Event::from_cells(&cells)?)
}

/// The first `n` bytes of `bytes`, and the rest.
fn split(bytes: &[u8], n: usize) -> Result<(&[u8], &[u8]), DecodeError> {
    if bytes.len() < n { Err(DecodeError::Truncated) } else { Ok(bytes.split_at(n)) }
}

const fn hash_order() -> [usize; HASHED] {
    let mut order = [0; HASHED];
    let mut i = 0;
    while i < HASHED {
        order[i] = i;
        i += 1;
    }
    // Insertion sort by name, in byte order.
    let mut i = 1;
    while i < HASHED {
        let mut j = i;
        while j > 0 && before(COLUMNS[order[j]].name, COLUMNS[order[j - 1]].name) {
            let swapped = order[j];
            order[j] = order[j - 1];
            order[j - 1] = swapped;
            j -= 1;
        }
        i += 1;
    }
    order
}

const fn before(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut i = 0;
    while i < a.len() && i < b.len() {
        if a[i] != b[i] {
            return a[i] < b[i];
        }
        i += 1;
    }
    a.len() < b.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Kind, Outcome, Record};

    fn example() -> Event {
        Event {
            seq: 1,
            event_id: "0192f0c1-0000-7000-8000-000000000001".into(),
            ts: "2026-11-30T04:15:01.123456Z".into(),
            record: Record {
                session_id: Some("s1".into()),
                tool: Some("read".into()),
                outcome: Some(Outcome::Allow),
                max_output_chars: Some(8000),
                ..Record::new(Kind::Decision)
            },
            prev_hash: hex::encode(GENESIS_HASH),
            hash: String::new(),
        }
    }

    #[test]
    fn hashed_columns_are_in_byte_order_and_are_every_column_but_the_hashes() {
        let hashed: Vec<_> = hashed_columns().collect();
        let mut columns: Vec<_> = COLUMNS
            .iter()
            .map(|c| c.name)
            .filter(|name| !matches!(*name, "prev_hash" | "hash"))
            .collect();
        columns.sort_unstable();
        assert_eq!(hashed, columns);
        assert_eq!(hashed.len(), 30, "a new column changes docs/trail-format.md's list");
    }

    fn field(out: &mut Vec<u8>, name: &str, value: &[u8]) {
        out.push(name.len() as u8);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(value);
    }

    fn text(value: &str) -> Vec<u8> {
        let mut out = vec![TAG_TEXT];
        out.extend_from_slice(&(value.len() as u32).to_be_bytes());
        out.extend_from_slice(value.as_bytes());
        out
    }

    fn int(value: i64) -> Vec<u8> {
        let mut out = vec![TAG_INTEGER];
        out.extend_from_slice(&value.to_be_bytes());
        out
    }

    #[test]
    fn nulls_are_left_out_and_values_are_tagged() {
        let mut expected = vec![FORMAT_VERSION];
        field(&mut expected, "event_id", &text("0192f0c1-0000-7000-8000-000000000001"));
        field(&mut expected, "kind", &text("decision"));
        field(&mut expected, "max_output_chars", &int(8000));
        field(&mut expected, "outcome", &text("allow"));
        field(&mut expected, "seq", &int(1));
        field(&mut expected, "session_id", &text("s1"));
        field(&mut expected, "tool", &text("read"));
        field(&mut expected, "ts", &text("2026-11-30T04:15:01.123456Z"));
        assert_eq!(encode(&example()), expected);
    }

    #[test]
    fn an_encoding_decodes_to_its_event_and_nothing_else_does() {
        let mut event = example();
        event.hash = hex::encode(event_hash(&GENESIS_HASH, &event));
        let encoded = encode(&event);
        assert_eq!(decode_event(&GENESIS_HASH, &encoded).unwrap(), event);
        let mut trailing = encoded.clone();
        trailing.push(0);
        let mut swapped = vec![FORMAT_VERSION];
        field(&mut swapped, "kind", &text("decision"));
        field(&mut swapped, "event_id", &text("x"));
        let mut twice = vec![FORMAT_VERSION];
        field(&mut twice, "event_id", &text("x"));
        field(&mut twice, "event_id", &text("y"));
        let mut mistagged = vec![FORMAT_VERSION];
        field(&mut mistagged, "seq", &text("1"));
        let mut unknown = vec![FORMAT_VERSION];
        field(&mut unknown, "secret", &int(1));
        let mut version = encoded.clone();
        version[0] = 2;
        for (bytes, why) in [
            (trailing, "trailing byte"),
            (encoded[..encoded.len() - 1].to_vec(), "cut short"),
            (swapped, "out of order"),
            (twice, "a field twice"),
            (mistagged, "text for an integer"),
            (unknown, "not a column"),
            (version, "another version"),
            (Vec::new(), "empty"),
        ] {
            assert!(decode_event(&GENESIS_HASH, &bytes).is_err(), "{why}");
        }
    }

    #[test]
    fn the_worked_example_of_the_docs_is_true() {
        // docs/trail-format.md shows this event's encoding and hash, for independent verifiers.
        let docs: String =
            include_str!("../../../docs/trail-format.md").split_whitespace().collect();
        let event = example();
        assert!(docs.contains(&hex::encode(encode(&event))), "encoding not in the docs");
        assert!(
            docs.contains(&hex::encode(event_hash(&GENESIS_HASH, &event))),
            "hash not in the docs"
        );
    }
}
