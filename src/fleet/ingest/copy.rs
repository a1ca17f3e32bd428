//! A batch as PostgreSQL's binary `COPY` format (the server's "Binary Format" of COPY): the
//! rows of `fleet_events`, the node's id then the trail's columns in [`COLUMNS`] order; the
//! store sets `received_at` itself. Binary, so that the store parses no text: a BIGINT is
//! eight bytes big-endian, a TEXT its UTF-8 bytes.

use crate::trail::{COLUMNS, Event, Value};

/// The statement the rows are sent to.
pub fn statement() -> String {
    let columns = COLUMNS.iter().map(|c| c.name).collect::<Vec<_>>().join(", ");
    format!("COPY fleet_events (node_id, {columns}) FROM STDIN (FORMAT binary)")
}

/// The signature, flags and (empty) header extension every binary COPY starts with.
const HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";

/// `node`'s `events` as one binary COPY stream, header to trailer.
pub fn rows<'a>(node: &str, events: impl IntoIterator<Item = &'a Event>) -> Vec<u8> {
    let mut out = HEADER.to_vec();
    let fields = i16::try_from(COLUMNS.len() + 1).unwrap_or(i16::MAX);
    for event in events {
        out.extend_from_slice(&fields.to_be_bytes());
        text(&mut out, node.as_bytes());
        for cell in event.cells() {
            match cell {
                Some(Value::Integer(n)) => {
                    out.extend_from_slice(&8i32.to_be_bytes());
                    out.extend_from_slice(&n.to_be_bytes());
                }
                Some(Value::Text(bytes)) => text(&mut out, bytes),
                None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
    }
    out.extend_from_slice(&(-1i16).to_be_bytes());
    out
}

/// A TEXT field: its length, then its bytes (UTF-8: the trail's texts are `String`s).
fn text(out: &mut Vec<u8>, bytes: &[u8]) {
    // A field longer than 2 GiB cannot be shipped: the ingest service's message limit is far
    // below it.
    out.extend_from_slice(&i32::try_from(bytes.len()).unwrap_or(i32::MAX).to_be_bytes());
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statement_names_the_trails_columns_after_the_node() {
        let statement = statement();
        assert!(statement.starts_with("COPY fleet_events (node_id, seq, event_id, ts, kind,"));
        assert!(statement.ends_with("prev_hash, hash) FROM STDIN (FORMAT binary)"));
    }

    #[test]
    fn no_rows_is_a_header_and_a_trailer() {
        let rows = rows("n", []);
        assert_eq!(&rows[..11], b"PGCOPY\n\xff\r\n\0");
        assert_eq!(rows.len(), 19 + 2);
        assert_eq!(&rows[19..], &[0xff, 0xff]);
    }
}
