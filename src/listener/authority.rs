//! Stock gRPC clients on the unix socket. grpc C-core (Python's grpcio, Ruby, C++) and
//! grpc-java send the socket's path as the HTTP/2 `:authority` (`run%2Ftoolgate%2Ftg.sock`,
//! `/run/toolgate/tg.sock`), which the `h2` crate rejects as malformed before tonic ever sees
//! the request (hyperium/h2 pull request 487 would relax it upstream; grpc/grpc issue 38142).
//! A unix socket has no host to name, so on unix connections only, [`LenientAuthority`] reads
//! the client's bytes, decodes each header block (HEADERS and its CONTINUATIONs) with HPACK,
//! replaces an `:authority` that `http` cannot parse with `localhost`, and hands h2 the block
//! encoded again. Everything else passes through untouched, and TCP and TLS-over-TCP listeners
//! never see this layer, so they keep h2's strict checks.
//!
//! Once one block is encoded again, the client's HPACK dynamic table no longer matches what
//! the server decodes, so every block of the connection is re-encoded, each field as a literal
//! that is never indexed: the server's table stays empty and cannot drift from ours. A block
//! that does not decode ends the connection (h2 would refuse it too).

use std::borrow::Cow;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use loona_hpack::Decoder;
use tokio::io::{AsyncRead, ReadBuf};

/// What a client sends first (RFC 9113, section 3.4).
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const FRAME_HEADER: usize = 9;
const HEADERS: u8 = 0x1;
const CONTINUATION: u8 = 0x9;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
const PRIORITY: u8 = 0x20;
/// The largest frame payload every peer accepts (SETTINGS_MAX_FRAME_SIZE's initial value).
const MAX_FRAME: usize = 16_384;
/// The HPACK table size the server accepts (SETTINGS_HEADER_TABLE_SIZE's initial value).
const TABLE_SIZE: usize = 4_096;
/// The largest header block this layer collects; h2's own limit on a header list is 16 KiB.
const MAX_BLOCK: usize = 1 << 20;
/// What a unix socket's authority becomes.
const LOCALHOST: &[u8] = b"localhost";

/// A unix connection whose header blocks carry only authorities h2 accepts.
pub struct LenientAuthority<S> {
    inner: S,
    state: State,
    /// Bytes read from the client and not yet processed.
    input: Vec<u8>,
    /// Processed bytes, for h2 to read.
    output: Vec<u8>,
    /// A header block waiting for its CONTINUATION frames.
    block: Option<Block>,
    decoder: Decoder<'static>,
}

enum State {
    /// Matching the client preface; how many bytes of it matched.
    Preface,
    /// HTTP/2 frames.
    Frames,
    /// Not HTTP/2 after all: h2 will refuse it; pass it on as it is.
    Raw,
}

struct Block {
    stream_id: [u8; 4],
    end_stream: bool,
    priority: Option<[u8; 5]>,
    fragment: Vec<u8>,
}

impl<S> LenientAuthority<S> {
    /// Wraps a unix connection.
    pub fn new(inner: S) -> Self {
        let mut decoder = Decoder::new();
        decoder.set_max_allowed_table_size(TABLE_SIZE);
        Self {
            inner,
            state: State::Preface,
            input: Vec::new(),
            output: Vec::new(),
            block: None,
            decoder,
        }
    }

    /// Moves what can be processed from `input` to `output`.
    fn process(&mut self) -> io::Result<()> {
        if let State::Preface = self.state {
            let seen = self.input.len().min(PREFACE.len());
            if self.input[..seen] != PREFACE[..seen] {
                self.state = State::Raw;
            } else if seen == PREFACE.len() {
                self.output.extend(self.input.drain(..seen));
                self.state = State::Frames;
            }
        }
        match self.state {
            State::Preface => Ok(()),
            State::Raw => {
                self.output.append(&mut self.input);
                Ok(())
            }
            State::Frames => self.frames(),
        }
    }

    fn frames(&mut self) -> io::Result<()> {
        let mut at = 0;
        while let Some(&[l0, l1, l2, kind, flags, s0, s1, s2, s3]) =
            self.input.get(at..at + FRAME_HEADER)
        {
            let length = usize::from(l0) << 16 | usize::from(l1) << 8 | usize::from(l2);
            let stream_id = [s0, s1, s2, s3];
            let end = at + FRAME_HEADER + length;
            if self.input.len() < end {
                break;
            }
            let payload = &self.input[at + FRAME_HEADER..end];
            match (kind, &mut self.block) {
                (HEADERS, None) => self.block = Some(headers_frame(stream_id, flags, payload)?),
                (CONTINUATION, Some(block)) => block.fragment.extend_from_slice(payload),
                // Anything else (or a frame out of place, which h2 refuses) goes on as it is.
                _ => {
                    self.output.extend_from_slice(&self.input[at..end]);
                    at = end;
                    continue;
                }
            }
            if self.block.as_ref().is_some_and(|b| b.fragment.len() > MAX_BLOCK) {
                return Err(invalid("header block too large"));
            }
            if flags & END_HEADERS != 0
                && let Some(block) = self.block.take()
            {
                self.rewrite(block)?;
            }
            at = end;
        }
        self.input.drain(..at);
        Ok(())
    }

    /// Decodes a whole header block and writes it again, as HEADERS and CONTINUATION frames.
    fn rewrite(&mut self, block: Block) -> io::Result<()> {
        let mut encoded = Vec::with_capacity(block.fragment.len() + 64);
        self.decoder
            .decode_with_cb(&block.fragment, |name, value| {
                let value = match (&*name, &value) {
                    (b":authority", value) if !acceptable(value) => Cow::Borrowed(LOCALHOST),
                    _ => value,
                };
                literal(&mut encoded, &name, &value);
            })
            .map_err(|e| invalid(&format!("a header block does not decode: {e:?}")))?;
        // The first frame may carry 5 bytes of priority; every chunk leaves room for them.
        let chunks: Vec<&[u8]> = match encoded.is_empty() {
            true => vec![&[]],
            false => encoded.chunks(MAX_FRAME - 5).collect(),
        };
        for (i, chunk) in chunks.iter().enumerate() {
            let mut flags = if i + 1 == chunks.len() { END_HEADERS } else { 0 };
            let mut payload = Vec::with_capacity(chunk.len() + 5);
            let kind = if i == 0 {
                if block.end_stream {
                    flags |= END_STREAM;
                }
                if let Some(priority) = block.priority {
                    flags |= PRIORITY;
                    payload.extend_from_slice(&priority);
                }
                HEADERS
            } else {
                CONTINUATION
            };
            payload.extend_from_slice(chunk);
            frame(&mut self.output, kind, flags, block.stream_id, &payload);
        }
        Ok(())
    }
}

/// Whether h2 takes `value` as an authority.
fn acceptable(value: &[u8]) -> bool {
    http::uri::Authority::try_from(value).is_ok()
}

/// The parts of a HEADERS frame: its flags, priority and the start of its header block.
fn headers_frame(stream_id: [u8; 4], flags: u8, payload: &[u8]) -> io::Result<Block> {
    let mut data = payload;
    if flags & PADDED != 0 {
        let (&pad, rest) = data.split_first().ok_or_else(|| invalid("padded HEADERS too short"))?;
        let keep =
            rest.len().checked_sub(usize::from(pad)).ok_or_else(|| invalid("padding too long"))?;
        data = &rest[..keep];
    }
    let priority = if flags & PRIORITY != 0 {
        let (fields, rest) =
            data.split_at_checked(5).ok_or_else(|| invalid("HEADERS priority too short"))?;
        data = rest;
        let mut priority = [0; 5];
        priority.copy_from_slice(fields);
        Some(priority)
    } else {
        None
    };
    Ok(Block { stream_id, end_stream: flags & END_STREAM != 0, priority, fragment: data.to_vec() })
}

/// A header field as a literal never indexed, with a literal name (RFC 7541, section 6.2.3).
fn literal(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.push(0x10);
    string(out, name);
    string(out, value);
}

/// A string literal without Huffman coding: a 7-bit prefix length, then the bytes.
fn string(out: &mut Vec<u8>, bytes: &[u8]) {
    integer(out, bytes.len(), 7, 0);
    out.extend_from_slice(bytes);
}

/// An HPACK integer with an `n`-bit prefix (RFC 7541, section 5.1).
fn integer(out: &mut Vec<u8>, mut value: usize, n: u32, flags: u8) {
    let max = (1usize << n) - 1;
    if value < max {
        // INVARIANT: below the prefix's maximum, which fits in its n bits.
        out.push(flags | value as u8);
        return;
    }
    out.push(flags | max as u8);
    value -= max;
    while value >= 128 {
        out.push((value % 128) as u8 | 0x80);
        value /= 128;
    }
    out.push(value as u8);
}

fn frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream_id: [u8; 4], payload: &[u8]) {
    let length = payload.len().to_be_bytes();
    out.extend_from_slice(&length[length.len() - 3..]);
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream_id);
    out.extend_from_slice(payload);
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_owned())
}

impl<S: AsyncRead + Unpin> AsyncRead for LenientAuthority<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            if !this.output.is_empty() {
                let n = this.output.len().min(buf.remaining());
                buf.put_slice(&this.output[..n]);
                this.output.drain(..n);
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0; 8192];
            let mut read = ReadBuf::new(&mut chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            if read.filled().is_empty() {
                // The client is done; what it left unfinished goes on as it is.
                this.output.append(&mut this.input);
                if this.output.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                continue;
            }
            this.input.extend_from_slice(read.filled());
            this.process()?;
        }
    }
}

super::writes_through!(LenientAuthority);
super::connects_through!(LenientAuthority);

#[cfg(test)]
mod tests {
    use loona_hpack::Encoder;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    fn request(encoder: &mut Encoder<'_>, authority: &[u8]) -> Vec<u8> {
        let headers: [(&[u8], &[u8]); 6] = [
            (b":method", b"POST"),
            (b":scheme", b"http"),
            (b":path", b"/toolgate.v1.Gate/Decide"),
            (b":authority", authority),
            (b"content-type", b"application/grpc"),
            (b"te", b"trailers"),
        ];
        encoder.encode(headers)
    }

    /// What h2 reads when the client writes `bytes`.
    async fn through(bytes: Vec<u8>) -> Vec<u8> {
        let (mut client, server) = tokio::io::duplex(1 << 20);
        client.write_all(&bytes).await.unwrap();
        drop(client);
        let mut out = Vec::new();
        LenientAuthority::new(server).read_to_end(&mut out).await.unwrap();
        out
    }

    /// The frames of `bytes` after the preface: (type, flags, stream, payload).
    fn frames(bytes: &[u8]) -> Vec<(u8, u8, u32, Vec<u8>)> {
        assert!(bytes.starts_with(PREFACE));
        let mut rest = &bytes[PREFACE.len()..];
        let mut frames = Vec::new();
        while !rest.is_empty() {
            let length =
                usize::from(rest[0]) << 16 | usize::from(rest[1]) << 8 | usize::from(rest[2]);
            let stream = u32::from_be_bytes([rest[5], rest[6], rest[7], rest[8]]);
            frames.push((rest[3], rest[4], stream, rest[9..9 + length].to_vec()));
            rest = &rest[9 + length..];
        }
        frames
    }

    fn decoded(decoder: &mut Decoder<'_>, block: &[u8]) -> Vec<(String, String)> {
        let mut headers = Vec::new();
        decoder
            .decode_with_cb(block, |n, v| {
                headers
                    .push((String::from_utf8_lossy(&n).into(), String::from_utf8_lossy(&v).into()))
            })
            .unwrap();
        headers
    }

    fn authority(headers: &[(String, String)]) -> &str {
        &headers.iter().find(|(n, _)| n == ":authority").unwrap().1
    }

    fn with_frames(parts: &[(u8, u8, u32, &[u8])]) -> Vec<u8> {
        let mut bytes = PREFACE.to_vec();
        for (kind, flags, stream, payload) in parts {
            frame(&mut bytes, *kind, *flags, stream.to_be_bytes(), payload);
        }
        bytes
    }

    #[tokio::test]
    async fn a_path_authority_becomes_localhost_and_the_rest_is_kept() {
        let mut encoder = Encoder::new();
        let first = request(&mut encoder, b"run%2Ftoolgate%2Ftg.sock");
        // The second request reuses the client's dynamic table, as real clients do.
        let second = request(&mut encoder, b"/run/toolgate/tg.sock");
        let data: &[u8] = &[0, 0, 0, 0, 0];
        let bytes = with_frames(&[
            (0x4, 0, 0, &[]),
            (HEADERS, END_HEADERS, 1, &first),
            (0x0, END_STREAM, 1, data),
            (HEADERS, END_HEADERS, 3, &second),
        ]);

        let frames = frames(&through(bytes).await);

        let mut decoder = Decoder::new();
        assert_eq!((frames[0].0, frames[0].3.len()), (0x4, 0), "SETTINGS as sent");
        let one = decoded(&mut decoder, &frames[1].3);
        assert_eq!(authority(&one), "localhost");
        assert_eq!(one[2], (":path".into(), "/toolgate.v1.Gate/Decide".into()));
        assert_eq!(one.len(), 6);
        assert_eq!(frames[2], (0x0, END_STREAM, 1, data.to_vec()), "DATA as sent");
        assert_eq!(authority(&decoded(&mut decoder, &frames[3].3)), "localhost");
        assert_eq!((frames[3].1, frames[3].2), (END_HEADERS, 3));
    }

    #[tokio::test]
    async fn an_authority_h2_accepts_is_left_as_it_is() {
        let block = request(&mut Encoder::new(), b"localhost:50051");
        let frames = frames(&through(with_frames(&[(HEADERS, END_HEADERS, 1, &block)])).await);
        assert_eq!(authority(&decoded(&mut Decoder::new(), &frames[0].3)), "localhost:50051");
    }

    #[tokio::test]
    async fn padding_priority_and_continuations_make_one_block() {
        let block = request(&mut Encoder::new(), b"/tmp/tg.sock");
        let (head, tail) = block.split_at(10);
        let mut first = vec![3];
        first.extend_from_slice(&[0x80, 0, 0, 1, 16]);
        first.extend_from_slice(head);
        first.extend_from_slice(&[0, 0, 0]);
        let bytes = with_frames(&[
            (HEADERS, PADDED | PRIORITY | END_STREAM, 1, &first),
            (CONTINUATION, END_HEADERS, 1, tail),
        ]);

        let frames = frames(&through(bytes).await);

        assert_eq!(frames.len(), 1);
        let (kind, flags, stream, payload) = &frames[0];
        assert_eq!((*kind, *flags, *stream), (HEADERS, PRIORITY | END_STREAM | END_HEADERS, 1));
        assert_eq!(&payload[..5], &[0x80, 0, 0, 1, 16]);
        assert_eq!(authority(&decoded(&mut Decoder::new(), &payload[5..])), "localhost");
    }

    #[tokio::test]
    async fn a_block_too_large_for_one_frame_is_split() {
        let big = "x".repeat(40_000);
        let headers: [(&[u8], &[u8]); 2] = [(b":authority", b"/a"), (b"x-big", big.as_bytes())];
        let block = Encoder::new().encode(headers);
        let mut bytes = PREFACE.to_vec();
        bytes.extend_from_slice(&[0, 0, 0, HEADERS, 0, 0, 0, 0, 1]);
        bytes.extend_from_slice(&[0, 0, 0, CONTINUATION, 0, 0, 0, 0, 1]);
        for (i, chunk) in block.chunks(MAX_FRAME).enumerate() {
            let flags = if (i + 1) * MAX_FRAME >= block.len() { END_HEADERS } else { 0 };
            frame(&mut bytes, CONTINUATION, flags, 1u32.to_be_bytes(), chunk);
        }

        let frames = frames(&through(bytes).await);

        assert!(frames.len() >= 3 && frames.iter().all(|f| f.3.len() <= MAX_FRAME));
        assert_eq!(frames[0].0, HEADERS);
        assert!(frames[1..].iter().all(|f| f.0 == CONTINUATION));
        let block: Vec<u8> = frames.iter().flat_map(|f| f.3.clone()).collect();
        let headers = decoded(&mut Decoder::new(), &block);
        assert_eq!((authority(&headers), headers[1].1.len()), ("localhost", 40_000));
    }

    #[tokio::test]
    async fn what_is_not_http2_passes_untouched() {
        let bytes = b"GET / HTTP/1.1\r\nHost: /x\r\n\r\n".to_vec();
        assert_eq!(through(bytes.clone()).await, bytes);
    }

    #[tokio::test]
    async fn a_block_that_does_not_decode_ends_the_connection() {
        let bytes = with_frames(&[(HEADERS, END_HEADERS, 1, &[0xff, 0xff, 0xff])]);
        let (mut client, server) = tokio::io::duplex(1 << 16);
        client.write_all(&bytes).await.unwrap();
        drop(client);
        let mut out = Vec::new();
        let read = LenientAuthority::new(server).read_to_end(&mut out).await;
        assert_eq!(read.unwrap_err().kind(), io::ErrorKind::InvalidData);
    }
}
