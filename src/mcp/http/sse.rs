//! Server-sent events split as they stream in (the WHATWG `text/event-stream` format): a line
//! ends at CR, LF or CRLF, and an event at a blank line. Only what the gateway needs: whole
//! events as they came, an event's `data`, and an event with its data replaced.

/// The events of a stream, as its bytes arrive.
#[derive(Debug, Default)]
pub struct Events {
    buffer: Vec<u8>,
    /// Whether the stream's start was looked at for a byte order mark (which a client's
    /// decoder drops, so the gateway must too, or it would read the first line otherwise).
    started: bool,
    /// Where the scan for the end of the first event goes on.
    scanned: usize,
    /// Where the line being scanned starts.
    line: usize,
}

impl Events {
    /// Takes the next bytes of the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// The bytes held that are not yet a whole event.
    pub fn held(&self) -> usize {
        self.buffer.len()
    }

    /// The next whole event, with the blank line that ends it; `None` until one has arrived.
    /// Each byte is looked at once.
    pub fn next_event(&mut self) -> Option<Vec<u8>> {
        if !self.started {
            const BOM: &[u8] = b"\xef\xbb\xbf";
            let seen = self.buffer.len().min(BOM.len());
            if self.buffer[..seen] == BOM[..seen] && seen < BOM.len() {
                return None;
            }
            if self.buffer.starts_with(BOM) {
                self.buffer.drain(..BOM.len());
            }
            self.started = true;
        }
        while self.scanned < self.buffer.len() {
            let at = self.scanned;
            let ending = match self.buffer[at] {
                b'\n' => 1,
                // A CR at the end of what has come may be the start of a CRLF.
                b'\r' if at + 1 == self.buffer.len() => return None,
                b'\r' if self.buffer[at + 1] == b'\n' => 2,
                b'\r' => 1,
                _ => {
                    self.scanned += 1;
                    continue;
                }
            };
            let blank = at == self.line;
            self.scanned = at + ending;
            self.line = self.scanned;
            if blank {
                let rest = self.buffer.split_off(self.scanned);
                let event = std::mem::replace(&mut self.buffer, rest);
                (self.scanned, self.line) = (0, 0);
                return Some(event);
            }
        }
        None
    }
}

/// An event's lines, without their endings.
fn lines(event: &[u8]) -> impl Iterator<Item = &[u8]> {
    event.split(|&b| b == b'\n').flat_map(|l| l.split(|&b| b == b'\r')).filter(|l| !l.is_empty())
}

/// Whether an event has a `data` field (`data:` or a bare `data` line): a client dispatches it
/// as a message, so the gateway may relay it only once it has read that message.
pub fn has_data(event: &[u8]) -> bool {
    lines(event).any(|line| line == b"data" || line.starts_with(b"data:"))
}

/// An event's data: its `data:` lines joined by LF, each without one leading space.
pub fn data(event: &[u8]) -> Option<String> {
    let mut data: Option<Vec<u8>> = None;
    for line in lines(event) {
        let Some(value) = line.strip_prefix(b"data:") else { continue };
        let value = value.strip_prefix(b" ").unwrap_or(value);
        match &mut data {
            Some(data) => {
                data.push(b'\n');
                data.extend_from_slice(value);
            }
            None => data = Some(value.to_vec()),
        }
    }
    String::from_utf8(data?).ok()
}

/// `event` with its data replaced by `data` (one line), its other fields (its `id:` above all)
/// kept.
pub fn with_data(event: &[u8], data: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for line in lines(event).filter(|line| !line.starts_with(b"data:")) {
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(data.as_bytes());
    out.extend_from_slice(b"\n\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> Vec<Vec<u8>> {
        let mut events = Events::default();
        let mut out = Vec::new();
        for chunk in chunks {
            events.push(chunk);
            while let Some(event) = events.next_event() {
                out.push(event);
            }
        }
        out
    }

    #[test]
    fn events_end_at_a_blank_line_whatever_the_line_endings_and_chunks() {
        let stream: &[u8] = b"id: 1\ndata: a\n\nid: 2\r\ndata: b\r\n\r\nid: 3\rdata: c\r\rtail";
        let expected: Vec<&[u8]> =
            vec![b"id: 1\ndata: a\n\n", b"id: 2\r\ndata: b\r\n\r\n", b"id: 3\rdata: c\r\r"];
        assert_eq!(all(&[stream]), expected);
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(all(&bytes), expected, "one byte at a time, a CRLF split across chunks");
    }

    #[test]
    fn data_is_read_and_replaced_with_the_other_fields_kept() {
        let event = b"id: 7\r\nevent: message\r\ndata: {\"a\":\r\ndata:1}\r\n\r\n";
        assert_eq!(data(event).as_deref(), Some("{\"a\":\n1}"));
        assert_eq!(with_data(event, "{}"), b"id: 7\nevent: message\ndata: {}\n\n");
        assert_eq!(data(b": comment\n\n"), None);
        assert!(has_data(b"data\n\n") && !has_data(b": data\n\n"));
    }

    #[test]
    fn a_byte_order_mark_at_the_stream_start_is_dropped_as_a_client_drops_it() {
        let mut events = Events::default();
        events.push(b"\xef\xbb");
        assert_eq!(events.next_event(), None);
        events.push(b"\xbfdata: 1\n\n");
        assert_eq!(events.next_event().as_deref(), Some(&b"data: 1\n\n"[..]));
    }
}
