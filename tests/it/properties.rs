//! Property tests (the fault suite's fuzzing, where `cargo fuzz` cannot run: it needs a nightly
//! toolchain): argument canonicalization, the CSV guard and its exact reversal, chain
//! verification over mutated trails and exports, and decoding of requests. The long version
//! runs each property on many more cases:
//!
//! ```sh
//! PROPTEST_CASES=100000 cargo test --release --test it properties
//! ```

use proptest::prelude::*;
use prost::Message;
use serde_json::{Map, Value};
use toolgate::config::Limits;
use toolgate::proto;
use toolgate::registry::ToolRegistry;
use toolgate::request::{ActionRequest, ExecutionReport, canonicalize};
use toolgate::trail::csv::{CsvWriter, check_header, guard, unguard};
use toolgate::trail::{Chain, Event, Kind, Outcome, Record, Verifier};

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        // The integers JSON numbers carry exactly; beyond them arguments are refused (below).
        (-(1i64 << 53) + 1..(1i64 << 53)).prop_map(Value::from),
        // Fractions: a whole number read as a double (`1.0`) is refused, as is its kind.
        (-1e15f64..1e15).prop_filter("a fraction", |f| f.fract() != 0.0).prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(".{0,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn object() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((".{0,8}", json()), 0..8).prop_map(|pairs| pairs.into_iter().collect())
}

proptest! {
    #[test]
    fn canonical_arguments_ignore_key_order_and_read_back_to_themselves(args in object()) {
        let canonical = canonicalize(&args).unwrap();
        let reversed: Map<String, Value> =
            args.iter().rev().map(|(k, v)| (k.clone(), v.clone())).collect();
        prop_assert_eq!(&canonicalize(&reversed).unwrap().hash, &canonical.hash);
        let read_back: Map<String, Value> = serde_json::from_str(&canonical.json).unwrap();
        prop_assert_eq!(canonicalize(&read_back).unwrap().json, canonical.json);
    }

    #[test]
    fn an_integer_beyond_json_numbers_exact_range_is_refused(n in (1u64 << 53)..u64::MAX, negative in any::<bool>()) {
        let value = match negative {
            true => Value::from(-i64::try_from(n.min(i64::MAX as u64)).unwrap()),
            false => Value::from(n),
        };
        let args: Map<String, Value> = [("n".to_owned(), value)].into_iter().collect();
        prop_assert!(canonicalize(&args).is_err());
    }

    #[test]
    fn the_csv_guard_is_reversed_exactly(text in any::<String>()) {
        let guarded = guard(&text);
        let read = unguard(&guarded);
        prop_assert_eq!(read.as_deref(), Some(text.as_str()));
        prop_assert!(!guarded.starts_with(['=', '+', '-', '@', '\t', '\r']));
        // No field a reader of `,` or `;` could start inside the cell begins with a formula.
        for piece in guarded.split([',', ';', '\r', '\n']).skip(1) {
            prop_assert!(!piece.trim_start_matches('"').starts_with(['=', '+', '-', '@', '\t', '\r']));
        }
    }

    #[test]
    fn the_csv_guard_is_reversed_exactly_among_separators_and_formulas(
        text in "[=+@;,'\"\r\na-]{0,24}"
    ) {
        let guarded = guard(&text);
        let read = unguard(&guarded);
        prop_assert_eq!(read.as_deref(), Some(text.as_str()));
        for piece in guarded.split([',', ';', '\r', '\n']).skip(1) {
            prop_assert!(!piece.trim_start_matches('"').starts_with(['=', '+', '-', '@', '\t', '\r']));
        }
    }

    #[test]
    fn any_mutation_of_a_trail_is_detected(
        texts in prop::collection::vec(any::<String>(), 2..12),
        at in any::<prop::sample::Index>(),
        mutation in 0..5u8,
        replacement in any::<String>(),
    ) {
        let mut events = chain(&texts);
        let i = at.index(events.len());
        let last = events.len() - 1;
        match mutation {
            0 => {
                let reason = events[i].record.reason.get_or_insert_default();
                if *reason == replacement { reason.push('!') } else { reason.clone_from(&replacement) }
            }
            1 => events[i].record.outcome = Some(Outcome::Allow),
            2 => events[i].ts.push('0'),
            // Removing an event inside the chain (the tail's loss shows against a kept head).
            3 => { events.remove(i.min(last - 1)); }
            _ => events.swap(i.min(last - 1), i.min(last - 1) + 1),
        }
        prop_assert!(!problems(&events).is_empty(), "mutation {} at {} undetected", mutation, i);
    }

    #[test]
    fn any_change_to_an_export_cell_is_detected(
        texts in prop::collection::vec(any::<String>(), 1..6),
        row in any::<prop::sample::Index>(),
        column in 0..toolgate::trail::COLUMNS.len(),
        replacement in "[a-z0-9=+'-]{1,6}",
    ) {
        let events = chain(&texts);
        let mut out = CsvWriter::new(Vec::new(), false).unwrap();
        events.iter().for_each(|e| out.write(e).unwrap());
        let bytes = out.finish().unwrap();
        let mut reader = csv::Reader::from_reader(bytes.as_slice());
        let header = check_header(reader.headers().unwrap()).unwrap();
        let mut rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        let r = row.index(rows.len());
        let mut cells: Vec<String> = rows[r].iter().map(str::to_owned).collect();
        prop_assume!(cells[column] != replacement);
        cells[column] = replacement;
        rows[r] = csv::StringRecord::from(cells);
        let parsed: Result<Vec<Event>, _> = rows.iter().map(|r| header.parse(r)).collect();
        if let Ok(parsed) = parsed {
            prop_assert!(!problems(&parsed).is_empty(), "a changed cell {} went undetected", column);
        }
    }

    #[test]
    fn an_export_reads_back_to_the_events_it_was_made_of(texts in prop::collection::vec(any::<String>(), 1..6)) {
        let events = chain(&texts);
        let mut out = CsvWriter::new(Vec::new(), true).unwrap();
        events.iter().for_each(|e| out.write(e).unwrap());
        let bytes = out.finish().unwrap();
        let mut reader = csv::Reader::from_reader(&bytes[3..]);
        let header = check_header(reader.headers().unwrap()).unwrap();
        let parsed: Vec<Event> =
            reader.records().map(|r| header.parse(&r.unwrap()).unwrap()).collect();
        prop_assert_eq!(parsed, events);
    }

    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let limits = Limits::default();
        if let Ok(req) = proto::DecideRequest::decode(bytes.as_slice()) {
            let _ = ActionRequest::from_proto(req, &limits, &ToolRegistry::default());
        }
        if let Ok(req) = proto::ExecuteRequest::decode(bytes.as_slice()) {
            let _ = ExecutionReport::from_proto(req, &limits);
        }
    }

    #[test]
    fn arbitrary_json_in_requests_is_refused_or_normalized_never_a_panic(
        args in ".{0,64}", context in ".{0,64}", tool in ".{0,16}"
    ) {
        let req = proto::DecideRequest {
            session_id: "s".into(),
            actor: Some(proto::Actor { id: "a".into(), ..Default::default() }),
            tool,
            args_json: args,
            context_json: context,
            ..Default::default()
        };
        let _ = ActionRequest::from_proto(req, &Limits::default(), &ToolRegistry::default());
    }
}

/// A well-formed chain of decisions whose reasons are `texts`.
fn chain(texts: &[String]) -> Vec<Event> {
    let mut head = Chain::default();
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let record = Record {
                decision_id: Some(format!("d{i}")),
                outcome: Some(Outcome::Deny),
                reason: Some(text.clone()),
                ..Record::new(Kind::Decision)
            };
            let ts = format!("2026-11-30T00:00:{:02}.000000Z", i % 60);
            let (event, next) = head.link(record, format!("e{i}"), ts);
            head = next;
            event
        })
        .collect()
}

fn problems(events: &[Event]) -> Vec<toolgate::trail::Problem> {
    let mut verifier = Verifier::default();
    events.iter().flat_map(|e| verifier.check(e)).collect()
}
