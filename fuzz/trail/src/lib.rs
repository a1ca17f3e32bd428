//! What the fuzz targets share: a small trail made with the chain step the writer uses, and
//! its CSV export as `toolgate export` writes it.

use toolgate_trail::csv::CsvWriter;
use toolgate_trail::{Chain, Event, Kind, Record};

/// A decision, its execution, a denial and an invalid request, with texts that need quoting.
pub fn trail() -> Vec<Event> {
    let kinds = [Kind::Decision, Kind::Execution, Kind::Decision, Kind::InvalidRequest];
    let mut chain = Chain::default();
    let mut events = Vec::new();
    for (i, kind) in kinds.into_iter().enumerate() {
        let mut record = Record::new(kind);
        record.session_id = Some("s-1".to_owned());
        record.actor_id = Some("agent-7".to_owned());
        record.tool = Some(format!("tool_{i}"));
        record.args_hash = Some("ab".repeat(32));
        record.reason = Some("reason \u{2014} \"quoted\", with, commas\n=1+1".to_owned());
        record.duration_us = (kind == Kind::Execution).then_some(1234);
        let ts = format!("2026-12-01T12:00:0{i}.000000Z");
        let id = format!("01890000-0000-7000-8000-00000000000{i}");
        let (event, next) = chain.link(record, id, ts);
        events.push(event);
        chain = next;
    }
    events
}

/// The trail's CSV export.
pub fn export(events: &[Event]) -> Vec<u8> {
    let mut csv = CsvWriter::new(Vec::new(), false).expect("a header writes to memory");
    for event in events {
        csv.write(event).expect("a row writes to memory");
    }
    csv.finish().expect("a CSV finishes in memory")
}
