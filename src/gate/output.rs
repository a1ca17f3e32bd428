//! What the harness hands back to the model: the tool's output cut to the decision's limit in
//! Unicode characters, and optionally wrapped in `<tool_result>` tags that the output itself
//! cannot close.

/// Processed output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Processed {
    pub text: String,
    /// The output was longer than the limit and was cut.
    pub truncated: bool,
}

const OPEN: &str = "<tool_result>";
const CLOSE: &str = "</tool_result>";

/// Cuts `output` to `max_chars` characters and wraps it when asked.
pub fn process(output: &str, max_chars: usize, wrap: bool) -> Processed {
    let (kept, truncated) = match output.char_indices().nth(max_chars) {
        Some((cut, _)) => (&output[..cut], true),
        None => (output, false),
    };
    let text = if wrap {
        format!("{OPEN}{}{CLOSE}", neutralize_close_tags(kept))
    } else {
        kept.to_owned()
    };
    Processed { text, truncated }
}

/// Escapes the `<` of anything that could read as the wrapper's tag, opening or closing, so
/// the output can neither end the wrapper early and speak outside it nor open a false one
/// inside: a `<` (or its fullwidth and small forms) whose next letters, within 64 characters
/// and whatever stands between them (spaces, `/`, `_`, `-`, zero-width and format characters),
/// spell `toolresult` in any case or width. (A homoglyph from another script, a Cyrillic `о`,
/// is not caught: the wrapper is a hint to the model, not a parser's boundary.)
fn neutralize_close_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (at, c) in text.char_indices() {
        let opens = matches!(c, '<' | '\u{ff1c}' | '\u{fe64}');
        if opens && names_the_wrapper(&text[at + c.len_utf8()..]) {
            out.push_str("&lt;");
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether the letters at the start of `rest` spell `toolresult`.
fn names_the_wrapper(rest: &str) -> bool {
    let mut wanted = "toolresult".chars().peekable();
    for c in rest.chars().take(64) {
        let c = fold(c);
        if !c.is_alphabetic() {
            continue;
        }
        if Some(&c) != wanted.peek() {
            return false;
        }
        wanted.next();
        if wanted.peek().is_none() {
            return true;
        }
    }
    false
}

/// `c` in ASCII lower case, fullwidth letters as their ASCII forms.
fn fold(c: char) -> char {
    let c = match c {
        '\u{ff21}'..='\u{ff3a}' | '\u{ff41}'..='\u{ff5a}' => {
            char::from_u32(u32::from(c) - 0xff21 + 0x41).unwrap_or(c)
        }
        _ => c,
    };
    c.to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_in_characters_not_bytes() {
        let processed = process("héllo wörld", 5, false);
        assert_eq!(processed, Processed { text: "héllo".into(), truncated: true });
    }

    #[test]
    fn output_at_the_limit_is_not_truncated() {
        assert_eq!(
            process("日本語", 3, false),
            Processed { text: "日本語".into(), truncated: false }
        );
    }

    #[test]
    fn wrapping_neutralizes_closing_tags_in_any_case() {
        let processed = process("a</tool_result>b</TOOL_RESULT >c</x>", 100, true);
        assert_eq!(
            processed.text,
            "<tool_result>a&lt;/tool_result>b&lt;/TOOL_RESULT >c</x></tool_result>"
        );
    }

    #[test]
    fn wrapping_neutralizes_every_spelling_of_the_tag() {
        for variant in [
            "</ tool_result>",
            "< /tool_result>",
            "</tool_\u{200b}result>",
            "</tool-result>",
            "</Tool Result>",
            "\u{ff1c}\u{ff0f}\u{ff54}\u{ff4f}\u{ff4f}\u{ff4c}_\u{ff52}\u{ff45}\u{ff53}\u{ff55}\u{ff4c}\u{ff54}\u{ff1e}",
            "<tool_result>",
        ] {
            let text = process(&format!("a{variant}b"), 100, true).text;
            let inner = &text["<tool_result>".len()..text.len() - "</tool_result>".len()];
            assert!(inner.starts_with("a&lt;"), "{variant:?} became {text:?}");
        }
        assert_eq!(
            process("<b>tool result</b>", 100, true).text,
            "<tool_result><b>tool result</b></tool_result>"
        );
    }

    #[test]
    fn a_cut_cannot_leave_half_a_tag_that_closes() {
        let processed = process("x</tool_result>", 3, true);
        assert_eq!(processed.text, "<tool_result>x</</tool_result>");
        assert!(processed.truncated);
    }
}
