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

/// Escapes the `<` of every `</tool_result` (any letter case) so the output cannot end the
/// wrapper early and speak outside it.
fn neutralize_close_tags(text: &str) -> String {
    let tag = &CLOSE[..CLOSE.len() - 1];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("</") {
        let candidate = &rest[at..];
        out.push_str(&rest[..at]);
        if candidate.len() >= tag.len()
            && candidate.as_bytes()[..tag.len()].eq_ignore_ascii_case(tag.as_bytes())
        {
            out.push_str("&lt;");
            rest = &candidate[1..];
        } else {
            out.push_str("</");
            rest = &candidate[2..];
        }
    }
    out.push_str(rest);
    out
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
    fn a_cut_cannot_leave_half_a_tag_that_closes() {
        let processed = process("x</tool_result>", 3, true);
        assert_eq!(processed.text, "<tool_result>x</</tool_result>");
        assert!(processed.truncated);
    }
}
