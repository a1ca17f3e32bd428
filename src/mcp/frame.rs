//! MCP's stdio framing: one JSON-RPC message per line, UTF-8, no embedded newlines. Lines are
//! read with a cap, so that a peer that never ends a line cannot make the gateway hold it all.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The longest line read, as the Rust SDK's default (16 MiB).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// One line read.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line, without its `\n` (or `\r\n`).
    Text(String),
    /// A line over the cap, skipped to its end.
    TooLong,
    /// A line that is not UTF-8.
    NotUtf8,
}

/// Reads the next line; `None` at the end of the stream (a last line without `\n` counts).
pub async fn next_line(
    reader: &mut (impl AsyncBufRead + Unpin),
    max: usize,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buffer = reader.fill_buf().await?;
        if buffer.is_empty() {
            if line.is_empty() && !too_long {
                return Ok(None);
            }
            break;
        }
        let (taken, done) = match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => (at + 1, true),
            None => (buffer.len(), false),
        };
        let piece = &buffer[..if done { taken - 1 } else { taken }];
        if !too_long && line.len() + piece.len() <= max {
            line.extend_from_slice(piece);
        } else {
            too_long = true;
            line.clear();
        }
        reader.consume(taken);
        if done {
            break;
        }
    }
    if too_long {
        return Ok(Some(Line::TooLong));
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(String::from_utf8(line).map_or(Line::NotUtf8, Line::Text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<Line> {
        let mut reader = tokio::io::BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        while let Some(line) = next_line(&mut reader, max).await.unwrap() {
            out.push(line);
        }
        out
    }

    #[tokio::test]
    async fn lines_are_split_capped_and_checked() {
        let text = |s: &str| Line::Text(s.to_owned());
        assert_eq!(
            lines(b"ab\r\ncdef\n\xff\nlast", 8).await,
            [text("ab"), text("cdef"), Line::NotUtf8, text("last")]
        );
        assert_eq!(lines(b"0123456789\nok\n", 8).await, [Line::TooLong, text("ok")]);
        assert_eq!(lines(b"", 8).await, []);
    }
}
