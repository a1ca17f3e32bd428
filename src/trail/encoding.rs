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

/// The `prev_hash` of the first event: 32 zero bytes.
pub const GENESIS_HASH: [u8; 32] = [0; 32];

const FORMAT_VERSION: u8 = 1;
const TAG_INTEGER: u8 = 1;
const TAG_TEXT: u8 = 2;

/// A field's value in the encoding.
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    Integer(i64),
    /// UTF-8 text, as bytes.
    Text(&'a [u8]),
}

/// The hashed columns (all but `prev_hash` and `hash`), in byte order of their names: the
/// order in which they are encoded.
// INVARIANT: sorted; `hashed_columns_are_in_byte_order…` checks it, and `values` follows it.
pub const HASHED_COLUMNS: [&str; 29] = [
    "action",
    "actor_id",
    "actor_kind",
    "args_hash",
    "decision_id",
    "duration_us",
    "error",
    "event_id",
    "kind",
    "max_output_chars",
    "outcome",
    "policy_ids",
    "policy_version",
    "reason",
    "request",
    "resource_id",
    "resource_type",
    "result_bytes",
    "rewritten_args_hash",
    "seq",
    "session_id",
    "shadow_outcome",
    "shadow_reason",
    "status",
    "task_type",
    "timeout_ms",
    "tool",
    "truncated",
    "ts",
];

/// The values of an event's hashed columns, in [`HASHED_COLUMNS`] order.
fn values(event: &Event) -> [Option<Value<'_>>; 29] {
    let r = &event.record;
    fn text(v: &Option<String>) -> Option<Value<'_>> {
        v.as_deref().map(|s| Value::Text(s.as_bytes()))
    }
    fn int(v: Option<i64>) -> Option<Value<'static>> {
        v.map(Value::Integer)
    }
    [
        text(&r.action),
        text(&r.actor_id),
        text(&r.actor_kind),
        text(&r.args_hash),
        text(&r.decision_id),
        int(r.duration_us),
        text(&r.error),
        Some(Value::Text(event.event_id.as_bytes())),
        Some(Value::Text(r.kind.as_bytes())),
        int(r.max_output_chars),
        text(&r.outcome),
        text(&r.policy_ids),
        text(&r.policy_version),
        text(&r.reason),
        text(&r.request),
        text(&r.resource_id),
        text(&r.resource_type),
        int(r.result_bytes),
        text(&r.rewritten_args_hash),
        Some(Value::Integer(event.seq)),
        text(&r.session_id),
        text(&r.shadow_outcome),
        text(&r.shadow_reason),
        text(&r.status),
        text(&r.task_type),
        int(r.timeout_ms),
        text(&r.tool),
        int(r.truncated),
        Some(Value::Text(event.ts.as_bytes())),
    ]
}

/// Feeds the canonical encoding of the hashed columns' values (in [`HASHED_COLUMNS`] order)
/// to `out`, piece by piece.
fn encode_into<'a>(
    values: impl IntoIterator<Item = Option<Value<'a>>>,
    out: &mut impl FnMut(&[u8]),
) {
    out(&[FORMAT_VERSION]);
    for (name, value) in HASHED_COLUMNS.iter().zip(values) {
        let Some(value) = value else { continue };
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
    encode_into(values(event), &mut |bytes| encoded.extend_from_slice(bytes));
    encoded
}

/// The hash of an event that follows an event whose hash is `prev`.
pub fn event_hash(prev: &[u8; 32], event: &Event) -> [u8; 32] {
    hash_values(prev, values(event))
}

/// The hash of an event given as its hashed columns' values in [`HASHED_COLUMNS`] order
/// (straight from a database row, say), hashed as it is encoded.
pub fn hash_values<'a>(
    prev: &[u8; 32],
    values: impl IntoIterator<Item = Option<Value<'a>>>,
) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(prev);
    encode_into(values, &mut |bytes| hasher.update(bytes));
    hasher.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trail::{Kind, Record};

    fn example() -> Event {
        Event {
            seq: 1,
            event_id: "0192f0c1-0000-7000-8000-000000000001".into(),
            ts: "2026-11-30T04:15:01.123456Z".into(),
            record: Record {
                session_id: Some("s1".into()),
                tool: Some("read".into()),
                outcome: Some("allow".into()),
                max_output_chars: Some(8000),
                ..Record::new(Kind::Decision)
            },
            prev_hash: hex::encode(GENESIS_HASH),
            hash: String::new(),
        }
    }

    #[test]
    fn hashed_columns_are_in_byte_order_and_are_every_column_but_the_hashes() {
        let mut sorted = HASHED_COLUMNS;
        sorted.sort_unstable();
        assert_eq!(HASHED_COLUMNS, sorted);
        let mut columns: Vec<_> = crate::trail::csv::COLUMNS
            .iter()
            .filter(|c| !matches!(**c, "prev_hash" | "hash"))
            .copied()
            .collect();
        columns.sort_unstable();
        assert_eq!(columns, HASHED_COLUMNS);
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
    fn the_worked_example_of_the_docs_is_true() {
        // docs/trail-format.md shows this event's encoding and hash, for independent verifiers.
        let docs: String = include_str!("../../docs/trail-format.md").split_whitespace().collect();
        let event = example();
        assert!(docs.contains(&hex::encode(encode(&event))), "encoding not in the docs");
        assert!(
            docs.contains(&hex::encode(event_hash(&GENESIS_HASH, &event))),
            "hash not in the docs"
        );
    }
}
