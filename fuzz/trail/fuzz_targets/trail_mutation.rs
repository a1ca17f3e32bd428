//! The trail verifier against rows mutated at random, as the verifier reads them from the
//! table: one cell of one event set to NULL, another text or another integer (the types the
//! table holds), or two rows swapped. Every mutation that the trail could hold and that changes
//! what a row says is reported: the hash covers every column, and the chain every row's place.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_trail::{COLUMNS, Cells, Event, Link, Value, Verifier};
use toolgate_trail_fuzz::trail;

fn problems(events: &[Event]) -> usize {
    let mut verifier = Verifier::default();
    events.iter().map(|e| verifier.check_link(&Link::of(e)).len()).sum()
}

fuzz_target!(|data: &[u8]| {
    let [row, column, mode, payload @ ..] = data else { return };
    let mut events = trail();
    assert_eq!(problems(&events), 0, "the unmutated trail verifies");
    let row = usize::from(*row) % events.len();
    if mode % 4 == 3 {
        let other = usize::from(*column) % events.len();
        if other == row {
            return;
        }
        events.swap(row, other);
        assert!(problems(&events) > 0, "rows {row} and {other} swapped, unreported");
        return;
    }
    let column = usize::from(*column) % COLUMNS.len();
    let original = events[row].clone();
    let mut cells: Cells<'_> = original.cells();
    let text;
    cells[column] = match mode % 4 {
        0 => None,
        1 => {
            text = payload.to_vec();
            Some(Value::Text(&text))
        }
        _ => {
            let mut bytes = [0u8; 8];
            for (b, p) in bytes.iter_mut().zip(payload) {
                *b = *p;
            }
            Some(Value::Integer(i64::from_le_bytes(bytes)))
        }
    };
    // A value the table cannot hold (a NULL where it refuses one, a text that is not UTF-8,
    // a kind it does not know) never reaches the verifier as an event.
    let Ok(mutated) = Event::from_cells(&cells) else { return };
    if mutated.cells() == original.cells() {
        return;
    }
    events[row] = mutated;
    assert!(
        problems(&events) > 0,
        "row {row}, column {}: mutated, unreported",
        COLUMNS[column].name
    );
});
