//! The CSV form of the trail (docs/csv-export.md): one header row, then one row per event with
//! every column in table order, RFC 4180 quoting (through the `csv` crate), CRLF line ends.
//!
//! Spreadsheets evaluate a field that begins with `=`, `+`, `-`, `@`, a tab or a carriage
//! return as a formula (OWASP "CSV injection"). A field begins at a cell's start, and for a
//! reader whose list separator is another than ours (`;` in many locales), after any `,` or
//! `;` inside a text as well, and after a line break: there our quotes are not its quotes.
//! [`Guard::Fields`] (exports, `toolgate-csv-v2`) writes a `'` at each such start that a
//! formula (or a `'`) follows, after any `"`s; [`Guard::Leading`] (the archive's event
//! objects, and exports before v2) at the cell's start only. Reading removes exactly the `'`s
//! the writer put, and refuses a cell the writer never writes, so an export verifies against
//! its hashes. NULL is an empty cell; the trail stores no empty texts, so an empty cell is
//! always NULL.

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

/// Where a text is guarded against being read as a formula.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Guard {
    /// Wherever a field may begin, for a reader of `,` or `;`: the cell's start, and after each
    /// `,`, `;`, CR or LF in it (`toolgate-csv-v2`).
    #[default]
    Fields,
    /// At the cell's start only: the archive's event objects (whose bytes never change), and
    /// exports of `toolgate-csv-v1`.
    Leading,
}

/// Whether a formula (or a `'`, so that reading back is unambiguous) begins at `rest`.
fn formula(rest: &[u8]) -> bool {
    matches!(rest.first(), Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r' | b'\''))
}

/// Whether a formula begins at `rest` after any `"`s: at a field's start inside a cell, a
/// reader of another separator takes our doubled quotes as text.
fn quoted_formula(rest: &[u8]) -> bool {
    formula(&rest[rest.iter().take_while(|&&b| b == b'"').count()..])
}

/// Where in `text` a field begins past its start, for a reader of `,` or `;`.
fn inner_starts(text: &[u8]) -> impl Iterator<Item = usize> + '_ {
    text.iter()
        .enumerate()
        .filter(|(_, b)| matches!(b, b',' | b';' | b'\r' | b'\n'))
        .map(|(i, _)| i + 1)
}

/// `text` with a `'` put at every start of a field (see [`Guard`]) that a formula follows.
pub fn guard(text: &str) -> Cow<'_, str> {
    guard_with(Guard::Fields, text)
}

/// [`guard`] under `rule`.
pub fn guard_with(rule: Guard, text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut at: Vec<usize> = Vec::new();
    if formula(bytes) {
        at.push(0);
    }
    if rule == Guard::Fields {
        at.extend(inner_starts(bytes).filter(|&i| quoted_formula(&bytes[i..])));
    }
    if at.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + at.len());
    let mut from = 0;
    for i in at {
        out.push_str(&text[from..i]);
        out.push('\'');
        from = i;
    }
    out.push_str(&text[from..]);
    Cow::Owned(out)
}

/// Reverses [`guard`] exactly.
pub fn unguard(cell: &str) -> Option<Cow<'_, str>> {
    unguard_with(Guard::Fields, cell)
}

/// Reverses [`guard_with`] under `rule` exactly: `None` for a cell that it never writes (a
/// formula without its `'`, or a `'` before a text that needs none), so that one exported file
/// reads back only one way.
pub fn unguard_with(rule: Guard, cell: &str) -> Option<Cow<'_, str>> {
    let bytes = cell.as_bytes();
    // Each start of a field the writer looked at: a `'` there is the writer's when a formula
    // (or another `'`) follows it, and a formula there without one was not written by it.
    let guarded = |i: usize, inner: bool| -> Option<bool> {
        let rest = &bytes[i..];
        let needs = |rest: &[u8]| if inner { quoted_formula(rest) } else { formula(rest) };
        match rest.first() {
            Some(b'\'') if needs(&rest[1..]) => Some(true),
            _ if needs(rest) => None,
            _ => Some(false),
        }
    };
    let mut cut: Vec<usize> = Vec::new();
    if guarded(0, false)? {
        cut.push(0);
    }
    if rule == Guard::Fields {
        for i in inner_starts(bytes) {
            if guarded(i, true)? {
                cut.push(i);
            }
        }
    }
    if cut.is_empty() {
        return Some(Cow::Borrowed(cell));
    }
    let mut out = String::with_capacity(cell.len());
    let mut from = 0;
    for i in cut {
        out.push_str(&cell[from..i]);
        from = i + 1;
    }
    out.push_str(&cell[from..]);
    Some(Cow::Owned(out))
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
    guard: Guard,
}

impl<W: Write> CsvWriter<W> {
    /// Starts an export (`toolgate-csv-v2`, guarded at every field's start): the byte order
    /// mark when asked, then the header.
    pub fn new(out: W, bom: bool) -> Result<Self, CsvError> {
        Self::guarded(out, bom, Guard::Fields)
    }

    /// Starts a file whose texts are guarded by `guard`.
    pub fn guarded(mut out: W, bom: bool, guard: Guard) -> Result<Self, CsvError> {
        if bom {
            out.write_all(BOM).map_err(csv::Error::from)?;
        }
        // Quoting is ours (`quoted`): the crate's own would leave a `;` bare.
        let mut inner = csv::WriterBuilder::new()
            .terminator(csv::Terminator::CRLF)
            .quote_style(csv::QuoteStyle::Never)
            .from_writer(out);
        inner.write_record(COLUMNS.iter().map(|c| c.name))?;
        Ok(Self { inner, guard })
    }

    /// Writes one event: integers as they are, texts through the guard, NULL as nothing.
    pub fn write(&mut self, e: &Event) -> Result<(), CsvError> {
        let rule = self.guard;
        let row = e.cells().map(|cell| match cell {
            None => Cow::Borrowed(&b""[..]),
            Some(Value::Integer(n)) => Cow::Owned(n.to_string().into_bytes()),
            // Texts come from `String`s: UTF-8 already.
            Some(Value::Text(bytes)) => {
                match std::str::from_utf8(bytes).map(|t| guard_with(rule, t)) {
                    Ok(Cow::Owned(guarded)) => Cow::Owned(quoted(guarded.as_bytes()).into_owned()),
                    _ => quoted(bytes),
                }
            }
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
/// so older exports still verify. Its texts are read back through `guard`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    places: Vec<usize>,
    guard: Guard,
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
    Ok(Header { places, guard: Guard::Fields })
}

impl Header {
    /// The same header, its texts read back as guarded by `guard`.
    pub fn guarded(self, guard: Guard) -> Self {
        Self { guard, ..self }
    }

    /// Reads one data row back into the event it was written from.
    pub fn parse(&self, row: &csv::StringRecord) -> Result<Event, CsvError> {
        let line = row.position().map_or(0, |p| p.line());
        let error = |message: String| CsvError::Row { line, message };
        if row.len() != self.places.len() {
            return Err(error(format!("{} cells, expected {}", row.len(), self.places.len())));
        }
        let texts: Vec<Option<Cow<'_, str>>> =
            row.iter().map(|c| unguard_with(self.guard, c)).collect();
        let mut cells: Cells<'_> = [None; COLUMNS.len()];
        for ((&place, cell), text) in self.places.iter().zip(row.iter()).zip(&texts) {
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
                    let text = text.as_deref().ok_or_else(|| {
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
        assert_eq!(unguard("'-1").as_deref(), Some("-1"));
        assert_eq!(unguard("''x").as_deref(), Some("'x"));
        assert_eq!(unguard("=1"), None);
        // The same at a field's start inside a cell.
        assert_eq!(unguard("x;=1"), None);
        assert_eq!(unguard("x;'a"), None);
        assert_eq!(unguard("x;'\"=1").as_deref(), Some("x;\"=1"));
        // The archive's objects, and v1 exports, are guarded at the start only.
        assert_eq!(unguard_with(Guard::Leading, "x;=1").as_deref(), Some("x;=1"));
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

    /// The review's attack: a `;` reader splits our quoted cell at its `;`, and a formula began
    /// there. Read with `;` as the separator, no field begins with one now.
    #[test]
    fn a_formula_after_a_semicolon_is_guarded_for_a_reader_of_semicolons() {
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
        assert!(text.contains(",\"x;'=HYPERLINK(1)\","), "{text}");
        let mut semicolons =
            csv::ReaderBuilder::new().delimiter(b';').flexible(true).from_reader(text.as_bytes());
        for row in semicolons.records() {
            for field in row.unwrap().iter() {
                let field = field.trim_start_matches('"');
                assert!(!field.starts_with(['=', '+', '-', '@', '\t', '\r']), "{field:?}");
            }
        }
        let mut rows = csv::ReaderBuilder::new().has_headers(false).from_reader(text.as_bytes());
        let mut records = rows.records();
        let header = check_header(&records.next().unwrap().unwrap()).unwrap();
        let read = header.parse(&records.next().unwrap().unwrap()).unwrap();
        assert_eq!(read.record.tool.as_deref(), Some("x;=HYPERLINK(1)"));
    }

    #[test]
    fn guard_prefixes_formula_starts_and_reverses_exactly() {
        for text in
            ["=1+1", "+1", "-2", "@SUM(A1)", "\tx", "\rx", "'quoted", "''", "plain", "", "é=1"]
        {
            let guarded = guard(text);
            assert_eq!(unguard(&guarded).as_deref(), Some(text), "{text:?}");
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
