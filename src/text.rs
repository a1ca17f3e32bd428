//! Strings from the trail as a person sees them. Everything on the trail came from someone else
//! (an agent's session id, a tool's name, an approver's comment), so no character that hides or
//! reorders text reaches a terminal or a page as itself: a control character (an escape
//! sequence could rewrite what an operator sees), a bidirectional override, embedding, isolate
//! or mark (which reorders what is read), a line or paragraph separator. Each is shown as a
//! visible mark instead, in the terminal `<U+202E>`, on the console a marked span.

/// `text` cut to at most `max` bytes, at a character boundary.
pub fn cut(mut text: String, max: usize) -> String {
    if text.len() > max {
        let at = (0..=max).rev().find(|&at| text.is_char_boundary(at)).unwrap_or(0);
        text.truncate(at);
    }
    text
}

/// Whether `c` would hide or reorder text (a line end too, unless `keep_lines`).
pub fn hidden(c: char, keep_lines: bool) -> bool {
    (c.is_control() && !(keep_lines && c == '\n'))
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `text` on one line, each hidden character a visible `<U+XXXX>`.
pub fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if hidden(c, false) {
            out.push_str(&format!("<U+{:04X}>", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// JSON text with each hidden character inside its strings written as a `\uXXXX` escape: the
/// same value for a program that reads it, nothing hidden for a person who reads it. (serde_json
/// escapes the C0 controls itself; a hidden character can only stand inside a string.)
pub fn json_escaped(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if hidden(c, false) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_is_cut_at_a_character_boundary() {
        assert_eq!(cut("ééé".into(), 3), "é");
        assert_eq!(cut("abc".into(), 3), "abc");
    }

    #[test]
    fn escapes_line_ends_and_overrides_become_visible_marks() {
        assert_eq!(
            escaped("ok\x1b[2J\r\nnext\u{202e}txt.exe 日本\u{2028}"),
            "ok<U+001B>[2J<U+000D><U+000A>next<U+202E>txt.exe 日本<U+2028>"
        );
    }

    #[test]
    fn json_keeps_its_value_and_hides_nothing() {
        let value = serde_json::json!({"tool": "evil\u{202e}gpj.exe\u{85}"});
        let text = json_escaped(&value.to_string());
        assert_eq!(text, r#"{"tool":"evil\u202egpj.exe\u0085"}"#);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), value);
    }
}
