//! The parsers of outside input, as the fuzz targets (`fuzz/`, docs/reliability.md) drive
//! them: requests, policies, configuration, the MCP gateway's framing. Not an API:
//! hidden from the docs, and kept to what the targets call. (The trail's own parsers,
//! its exports' verifier among them, are fuzzed against the trail crate alone, in
//! `fuzz/trail/`.)

/// Loads a policy set from `text` as `--policy` would (Cedar with toolgate's annotations).
pub fn load_policy(text: &str) -> Result<(), String> {
    crate::policy::PolicyEngine::parse("fuzz.cedar", text).map(drop).map_err(|e| e.to_string())
}

/// The MCP gateway's stdio framing and message classification on `data` (its first byte the
/// line cap, its second the reader's buffer size): the lines read are exactly the input split
/// at `\n` (a `\r` before it dropped, over the cap too long, not UTF-8 flagged), every message
/// classified reads back as the same kind once written again, and a response answers the
/// gateway's ids only as one it issued and sent, once.
#[allow(clippy::unwrap_used, clippy::expect_used)] // a fuzz check panics on what it finds
pub fn jsonrpc_framing(data: &[u8]) {
    use crate::mcp::frame::{Line, next_line};
    use crate::mcp::ids::{Answered, Ids};
    use crate::mcp::message::{Message, key};
    let [cap, capacity, input @ ..] = data else { return };
    let cap = usize::from(*cap).max(1);
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let lines = runtime.block_on(async {
        let mut reader = tokio::io::BufReader::with_capacity(usize::from(*capacity).max(1), input);
        let mut lines = Vec::new();
        while let Some(line) = next_line(&mut reader, cap).await.unwrap() {
            lines.push(line);
        }
        lines
    });
    let mut pieces: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    if pieces.last().is_some_and(|last| last.is_empty()) {
        pieces.pop();
    }
    let expected: Vec<Line> = pieces
        .into_iter()
        .map(|piece| match piece.len() > cap {
            true => Line::TooLong,
            false => {
                let piece = piece.strip_suffix(b"\r").unwrap_or(piece);
                String::from_utf8(piece.to_vec()).map_or(Line::NotUtf8, Line::Text)
            }
        })
        .collect();
    assert_eq!(lines, expected);

    let mut ids = Ids::default();
    let sent = ids.issue("7".into(), &serde_json::json!(7), ()).unwrap();
    let held = ids.reserve("8".into(), &serde_json::json!(8), ()).unwrap();
    let mut answered = 0;
    for line in lines {
        let Line::Text(text) = line else { continue };
        let Ok((message, value)) = Message::parse(&text) else { continue };
        let (again, _) =
            Message::parse(&value.to_string()).expect("a message written again parses");
        assert_eq!(std::mem::discriminant(&message), std::mem::discriminant(&again));
        if let Message::Response { id } = message {
            let _ = key(&id);
            if let Answered::Request(client, ()) = ids.answer(&id) {
                assert_eq!((id.clone(), client), (sent.clone(), serde_json::json!(7)));
                answered += 1;
            }
            assert!(id != held || !matches!(ids.answer(&id), Answered::Request(..)));
        }
    }
    assert!(answered <= 1, "a request is answered once");
}

/// The SSE splitter on `data` (its first byte the chunk size): the events it yields are the
/// input's bytes in order (but a leading byte order mark), each ending at a blank line, and
/// what it holds is the rest; an
/// event's data, written back with the splitter's `with_data`, reads back the same.
#[allow(clippy::unwrap_used, clippy::expect_used)] // a fuzz check panics on what it finds
pub fn sse_splitting(data: &[u8]) {
    use crate::mcp::sse::{Events, data as event_data, with_data};
    let [size, input @ ..] = data else { return };
    let mut events = Events::default();
    let mut out = Vec::new();
    for chunk in input.chunks(usize::from(*size).max(1)) {
        events.push(chunk);
        while let Some(event) = events.next_event() {
            assert!(event.ends_with(b"\n") || event.ends_with(b"\r"), "an event ends a line");
            if let Some(text) = event_data(&event) {
                // The gateway writes back only JSON it wrote itself: one line.
                if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) {
                    let line = value.to_string();
                    assert_eq!(
                        event_data(&with_data(&event, &line)).as_deref(),
                        Some(line.as_str())
                    );
                }
            }
            out.extend_from_slice(&event);
        }
    }
    // A byte order mark at the stream's start is dropped, as a client's decoder drops it.
    let stream = input.strip_prefix(b"\xef\xbb\xbf").unwrap_or(input);
    assert_eq!(out.len() + events.held(), stream.len());
    assert_eq!(&stream[..out.len()], &out[..], "events are the stream's bytes, in order");
}

/// The unix socket's `:authority` rewriter on a client's bytes (the HTTP/2 preface, then
/// `data`): it either refuses the connection or hands h2 the preface and frames whose every
/// header block decodes (HPACK) and names an authority h2 accepts.
#[allow(clippy::unwrap_used, clippy::expect_used)] // a fuzz check panics on what it finds
pub fn authority_rewriting(data: &[u8]) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let output = runtime.block_on(async {
        let (mut client, server) = tokio::io::duplex(1 << 22);
        client.write_all(PREFACE).await.unwrap();
        client.write_all(data).await.unwrap();
        drop(client);
        let mut rewritten = crate::listener::LenientAuthority::new(server);
        let mut output = Vec::new();
        rewritten.read_to_end(&mut output).await.map(|_| output)
    });
    let Ok(output) = output else { return };
    let frames = output.strip_prefix(PREFACE).expect("the preface goes first");
    // A HEADERS frame while a block is open is passed on as it came (h2 refuses it): the
    // blocks below are then not all the rewriter's, and only the absence of a panic is checked.
    if headers_out_of_place(data) {
        return;
    }
    let mut decoder = loona_hpack::Decoder::new();
    let (mut at, mut block): (usize, Option<Vec<u8>>) = (0, None);
    while let Some(header) = frames.get(at..at + 9) {
        let length =
            usize::from(header[0]) << 16 | usize::from(header[1]) << 8 | usize::from(header[2]);
        let (kind, flags) = (header[3], header[4]);
        let Some(payload) = frames.get(at + 9..at + 9 + length) else { break };
        at += 9 + length;
        match (kind, &mut block) {
            (0x1, None) => {
                // Written by the rewriter: never padded, priority in front when flagged.
                let skip = if flags & 0x20 != 0 { 5 } else { 0 };
                block = Some(payload.get(skip..).expect("a rewritten HEADERS frame").to_vec());
            }
            (0x9, Some(fragment)) => fragment.extend_from_slice(payload),
            _ => continue,
        }
        if flags & 0x4 != 0 {
            let fragment = block.take().unwrap();
            decoder
                .decode_with_cb(&fragment, |name, value| {
                    if &*name == b":authority" {
                        assert!(http::uri::Authority::try_from(&*value).is_ok(), "{value:?}");
                    }
                })
                .expect("a rewritten block decodes");
        }
    }
}

/// Whether the client's frames in `data` hold a HEADERS frame while a header block is open.
fn headers_out_of_place(data: &[u8]) -> bool {
    let (mut at, mut open) = (0, false);
    while let Some(header) = data.get(at..at + 9) {
        let length =
            usize::from(header[0]) << 16 | usize::from(header[1]) << 8 | usize::from(header[2]);
        let (kind, flags) = (header[3], header[4]);
        match kind {
            0x1 if open => return true,
            0x1 | 0x9 if kind == 0x1 || open => open = flags & 0x4 == 0,
            _ => {}
        }
        at += 9 + length;
    }
    false
}
