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
enum Value<'a> {
    Integer(i64),
    Text(&'a str),
}

/// Every hashed field of an event (all but `prev_hash` and `hash`), in byte order of names.
fn fields(event: &Event) -> [(&'static str, Option<Value<'_>>); 26] {
    let r = &event.record;
    fn text(v: &Option<String>) -> Option<Value<'_>> {
        v.as_deref().map(Value::Text)
    }
    fn int(v: Option<i64>) -> Option<Value<'static>> {
        v.map(Value::Integer)
    }
    // INVARIANT: sorted by name; `fields_are_in_byte_order` checks it.
    [
        ("action", text(&r.action)),
        ("actor_id", text(&r.actor_id)),
        ("actor_kind", text(&r.actor_kind)),
        ("args_hash", text(&r.args_hash)),
        ("decision_id", text(&r.decision_id)),
        ("duration_us", int(r.duration_us)),
        ("error", text(&r.error)),
        ("event_id", Some(Value::Text(&event.event_id))),
        ("kind", Some(Value::Text(&r.kind))),
        ("max_output_chars", int(r.max_output_chars)),
        ("outcome", text(&r.outcome)),
        ("policy_ids", text(&r.policy_ids)),
        ("policy_version", text(&r.policy_version)),
        ("reason", text(&r.reason)),
        ("request", text(&r.request)),
        ("resource_id", text(&r.resource_id)),
        ("resource_type", text(&r.resource_type)),
        ("result_bytes", int(r.result_bytes)),
        ("seq", Some(Value::Integer(event.seq))),
        ("session_id", text(&r.session_id)),
        ("status", text(&r.status)),
        ("task_type", text(&r.task_type)),
        ("timeout_ms", int(r.timeout_ms)),
        ("tool", text(&r.tool)),
        ("truncated", int(r.truncated)),
        ("ts", Some(Value::Text(&event.ts))),
    ]
}

/// Feeds the canonical encoding of an event's hashed fields to `out`, piece by piece.
fn encode_into(event: &Event, out: &mut impl FnMut(&[u8])) {
    out(&[FORMAT_VERSION]);
    for (name, value) in fields(event) {
        let Some(value) = value else { continue };
        // INVARIANT: field names are short ASCII constants.
        out(&[name.len() as u8]);
        out(name.as_bytes());
        match value {
            Value::Integer(n) => {
                out(&[TAG_INTEGER]);
                out(&n.to_be_bytes());
            }
            Value::Text(s) => {
                out(&[TAG_TEXT]);
                // INVARIANT: every text is far below 4 GiB (inputs are limited to MiBs).
                out(&(s.len() as u32).to_be_bytes());
                out(s.as_bytes());
            }
        }
    }
}

/// The canonical encoding of an event's hashed fields.
pub fn encode(event: &Event) -> Vec<u8> {
    let mut encoded = Vec::with_capacity(512);
    encode_into(event, &mut |bytes| encoded.extend_from_slice(bytes));
    encoded
}

/// The hash of an event that follows an event whose hash is `prev`.
pub fn event_hash(prev: &[u8; 32], event: &Event) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(prev);
    // Hashed as it is encoded, without building the encoding.
    encode_into(event, &mut |bytes| hasher.update(bytes));
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
    fn fields_are_in_byte_order() {
        let names: Vec<_> = fields(&example()).iter().map(|(name, _)| *name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
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
