//! Strings from the trail as a terminal shows them. Everything on the trail came from someone
//! else (an agent's session id, a tool's error, an approver's comment), so nothing reaches the
//! terminal as a control character (an escape sequence could rewrite what an operator sees) or
//! a bidirectional override (which reorders what is read).

/// `text` on one line, each control character and bidirectional override a space.
pub fn printable(text: &str) -> String {
    let hidden = |c: char| {
        c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    text.chars().map(|c| if hidden(c) { ' ' } else { c }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_line_ends_and_overrides_become_spaces() {
        assert_eq!(printable("ok\x1b[2J\r\nnext\u{202e}txt.exe 日本"), "ok [2J  next txt.exe 日本");
    }
}
