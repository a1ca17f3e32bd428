//! The CSV form of the trail (docs/csv-export.md): one header row, then one row per event with
//! every column in table order, RFC 4180 quoting (through the `csv` crate), CRLF line ends.
//!
//! Spreadsheets evaluate a cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage
//! return as a formula (OWASP "CSV injection"). Every text cell that begins with one of those,
//! or with `'`, is written with a `'` in front; reading removes the first `'` of any text cell
//! that has one. The rule is exactly reversible, so an export verifies against its hashes.
//! NULL is an empty cell; the trail stores no empty texts, so an empty cell is always NULL.

use std::borrow::Cow;
use std::io::Write;

use super::{COLUMNS, Cells, Event, Type, Value};

/// The UTF-8 byte order mark some spreadsheets need to read UTF-8.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Why a CSV row could not be read back into an event.
#[derive(Debug, thiserror::Error)]
pub enum CsvError {
    #[error("line {line}: {message}")]
    Row { line: u64, message: String },
    #[error("the header is not toolgate's: expected `{}`", super::column_list().replace(' ', ""))]
    Header,
    #[error(transparent)]
    Csv(#[from] csv::Error),
}

/// Prefixes `'` to a text that a spreadsheet would take for a formula, and to one that begins
/// with `'` itself (so that reading back is unambiguous).
pub fn guard(text: &str) -> Cow<'_, str> {
    if needs_guard(text.as_bytes()) { Cow::Owned(format!("'{text}")) } else { Cow::Borrowed(text) }
}

/// Whether a text's first byte is one [`guard`] prefixes.
fn needs_guard(text: &[u8]) -> bool {
    matches!(text.first(), Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r' | b'\''))
}

/// Reverses [`guard`] exactly: `None` for a cell that `guard` never writes (a `'` before a
/// text that needs no guard), so that one exported file reads back only one way.
pub fn unguard(cell: &str) -> Option<&str> {
    match cell.strip_prefix('\'') {
        Some(text) if guard(text).len() == text.len() => None,
        Some(text) => Some(text),
        None if guard(cell).len() == cell.len() => Some(cell),
        None => None,
    }
}

/// A cell as RFC 4180 writes it, quoted when it holds a `,`, `"`, CR or LF, and also when it
/// holds a `;`: a spreadsheet whose list separator is `;` would otherwise split the cell there,
/// and a formula could start after it.
fn quoted(cell: &[u8]) -> Cow<'_, [u8]> {
    if !cell.iter().any(|b| matches!(b, b',' | b'"' | b'\r' | b'\n' | b';')) {
        return Cow::Borrowed(cell);
    }
    let mut out = Vec::with_capacity(cell.len() + 2);
    out.push(b'"');
    for &b in cell {
        if b == b'"' {
            out.push(b'"');
        }
        out.push(b);
    }
    out.push(b'"');
    Cow::Owned(out)
}

/// Writes events as CSV.
pub struct CsvWriter<W: Write> {
    inner: csv::Writer<W>,
}

impl<W: Write> CsvWriter<W> {
    /// Starts a file: the byte order mark when asked, then the header.
    pub fn new(mut out: W, bom: bool) -> Result<Self, CsvError> {
        if bom {
            out.write_all(BOM).map_err(csv::Error::from)?;
        }
        // Quoting is ours (`quoted`): the crate's own would leave a `;` bare.
        let mut inner = csv::WriterBuilder::new()
            .terminator(csv::Terminator::CRLF)
            .quote_style(csv::QuoteStyle::Never)
            .from_writer(out);
        inner.write_record(COLUMNS.iter().map(|c| c.name))?;
        Ok(Self { inner })
    }

    /// Writes one event: integers as they are, texts through the guard, NULL as nothing.
    pub fn write(&mut self, e: &Event) -> Result<(), CsvError> {
        // The guard looks at the first byte only, so texts are written as the bytes they are
        // (UTF-8 already: they come from `String`s), without being checked again.
        let row = e.cells().map(|cell| match cell {
            None => Cow::Borrowed(&b""[..]),
            Some(Value::Integer(n)) => Cow::Owned(n.to_string().into_bytes()),
            Some(Value::Text(bytes)) if needs_guard(bytes) => {
                Cow::Owned(quoted(&[b"'", bytes].concat()).into_owned())
            }
            Some(Value::Text(bytes)) => quoted(bytes),
        });
        self.inner.write_record(row.iter().map(|c| c.as_ref()))?;
        Ok(())
    }

    /// Flushes the rows written so far to the underlying writer.
    pub fn flush(&mut self) -> Result<(), CsvError> {
        self.inner.flush().map_err(csv::Error::from)?;
        Ok(())
    }

    /// Flushes and returns the underlying writer.
    pub fn finish(self) -> Result<W, CsvError> {
        self.inner.into_inner().map_err(|e| CsvError::Csv(csv::Error::from(e.into_error())))
    }
}

/// A file's header: the place in [`COLUMNS`] of each of its columns. A file written before a
/// column was added lacks that column; its cells read as NULL there, which the hash leaves out,
/// so older exports still verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    places: Vec<usize>,
}

/// Reads a header row: toolgate's column names, in table order, every column that is never
/// NULL among them.
pub fn check_header(header: &csv::StringRecord) -> Result<Header, CsvError> {
    let mut places = Vec::with_capacity(header.len());
    for name in header {
        let place = COLUMNS.iter().position(|c| c.name == name).ok_or(CsvError::Header)?;
        if places.last().is_some_and(|&last| last >= place) {
            return Err(CsvError::Header);
        }
        places.push(place);
    }
    let required = COLUMNS.iter().enumerate().filter(|(_, c)| !c.nullable);
    if required.clone().any(|(i, _)| !places.contains(&i)) {
        return Err(CsvError::Header);
    }
    Ok(Header { places })
}

impl Header {
    /// Reads one data row back into the event it was written from.
    pub fn parse(&self, row: &csv::StringRecord) -> Result<Event, CsvError> {
        let line = row.position().map_or(0, |p| p.line());
        let error = |message: String| CsvError::Row { line, message };
        if row.len() != self.places.len() {
            return Err(error(format!("{} cells, expected {}", row.len(), self.places.len())));
        }
        let mut cells: Cells<'_> = [None; COLUMNS.len()];
        for (&place, cell) in self.places.iter().zip(row.iter()) {
            let column = &COLUMNS[place];
            cells[place] = match column.ty {
                Type::Integer if cell.is_empty() => None,
                // Only the digits the writer writes: `+1` or `01` would read as 1 and verify.
                Type::Integer => {
                    let n = cell.parse::<i64>().ok().filter(|n| n.to_string() == cell);
                    let n = n.ok_or_else(|| {
                        error(format!("{}: `{cell}` is not an integer as written", column.name))
                    })?;
                    Some(Value::Integer(n))
                }
                Type::Text => {
                    let text = unguard(cell).ok_or_else(|| {
                        error(format!(
                            "{}: `{cell}` is not a cell toolgate writes (see the guard)",
                            column.name
                        ))
                    })?;
                    // The trail stores no empty texts, so an empty cell is NULL where NULL may be.
                    (!text.is_empty() || !column.nullable).then_some(Value::Text(text.as_bytes()))
                }
            };
        }
        Event::from_cells(&cells).map_err(|e| error(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Kind, Record};

    fn full() -> Header {
        check_header(&csv::StringRecord::from(COLUMNS.iter().map(|c| c.name).collect::<Vec<_>>()))
            .unwrap()
    }

    #[test]
    fn an_export_from_before_a_column_was_added_reads_with_it_null() {
        let old: Vec<_> = COLUMNS.iter().map(|c| c.name).filter(|n| *n != "note").collect();
        let header = check_header(&csv::StringRecord::from(old.clone())).unwrap();
        let mut cells: Vec<String> = vec![String::new(); old.len()];
        cells[0] = "1".into();
        cells[3] = "decision".into();
        let event = header.parse(&csv::StringRecord::from(cells)).unwrap();
        assert_eq!(event.record.note, None);
        let mut reordered = old.clone();
        reordered.swap(1, 2);
        assert!(check_header(&csv::StringRecord::from(reordered)).is_err());
        let without_seq: Vec<_> = old.iter().copied().filter(|n| *n != "seq").collect();
        assert!(check_header(&csv::StringRecord::from(without_seq)).is_err());
        let unknown = [old.clone(), vec!["extra"]].concat();
        assert!(check_header(&csv::StringRecord::from(unknown)).is_err());
    }

    /// Found by the property tests: `'` alone (or before a text that needs no guard) read back
    /// as the unguarded text, so a changed export could verify as the original.
    #[test]
    fn a_guard_that_guard_never_writes_is_refused() {
        assert_eq!(unguard("'"), None);
        assert_eq!(unguard("'abc"), None);
        assert_eq!(unguard("'-1"), Some("-1"));
        assert_eq!(unguard("''x"), Some("'x"));
        assert_eq!(unguard("=1"), None);
    }

    /// Found by the property tests: a `seq` of `+1` read back as 1.
    #[test]
    fn integers_are_read_only_as_written() {
        let mut cells: Vec<String> = vec![String::new(); COLUMNS.len()];
        cells[super::super::position("kind")] = "decision".to_owned();
        for (seq, ok) in [("1", true), ("+1", false), ("01", false), ("-0", false)] {
            cells[0] = seq.to_owned();
            let row = csv::StringRecord::from(cells.clone());
            assert_eq!(full().parse(&row).is_ok(), ok, "{seq}");
        }
    }

    #[test]
    fn a_cell_with_a_semicolon_is_quoted_so_no_formula_splits_out() {
        let event = Event {
            seq: 1,
            event_id: "e".into(),
            ts: "t".into(),
            record: Record { tool: Some("x;=HYPERLINK(1)".into()), ..Record::new(Kind::Decision) },
            prev_hash: "0".repeat(64),
            hash: "1".repeat(64),
        };
        let mut writer = CsvWriter::new(Vec::new(), false).unwrap();
        writer.write(&event).unwrap();
        let text = String::from_utf8(writer.finish().unwrap()).unwrap();
        assert!(text.contains(",\"x;=HYPERLINK(1)\","), "{text}");
    }

    #[test]
    fn guard_prefixes_formula_starts_and_reverses_exactly() {
        for text in
            ["=1+1", "+1", "-2", "@SUM(A1)", "\tx", "\rx", "'quoted", "''", "plain", "", "é=1"]
        {
            let guarded = guard(text);
            assert_eq!(unguard(&guarded), Some(text), "{text:?}");
            let first = guarded.as_bytes().first().copied();
            assert!(
                !matches!(first, Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r')),
                "{guarded:?}"
            );
        }
    }

    #[test]
    fn events_read_back_exactly_through_a_strict_parser() {
        let nasty = "=1+1, \"quoted\"\r\nline 2 -2 @SUM(A1) 日本語 🚀;=cmd";
        let event = Event {
            seq: 7,
            event_id: "e".into(),
            ts: "2026-11-30T00:00:00.000000Z".into(),
            record: Record {
                reason: Some(nasty.into()),
                error: Some("\tleading tab".into()),
                session_id: Some("-s".into()),
                duration_us: Some(-1),
                ..Record::new(Kind::Execution)
            },
            prev_hash: "0".repeat(64),
            hash: "1".repeat(64),
        };
        let mut writer = CsvWriter::new(Vec::new(), true).unwrap();
        writer.write(&event).unwrap();
        let bytes = writer.finish().unwrap();

        assert!(bytes.starts_with(BOM));
        let mut reader = csv::ReaderBuilder::new().has_headers(false).from_reader(&bytes[3..]);
        let mut rows = reader.records();
        let header = check_header(&rows.next().unwrap().unwrap()).unwrap();
        let back = header.parse(&rows.next().unwrap().unwrap()).unwrap();
        assert_eq!(back, event);
    }

    #[test]
    fn a_short_row_is_an_error_naming_its_line() {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(&b"1,2\r\n"[..]);
        let row = reader.records().next().unwrap().unwrap();
        assert!(matches!(full().parse(&row), Err(CsvError::Row { line: 1, .. })));
    }
}
