//! A problem in a policy file shown as Cedar's own tools show theirs (through `miette`): the
//! message, the file, line and column, the line itself with a caret under the place, and the
//! help. Cedar's parse errors carry their places as byte spans; toolgate's own findings (an
//! attribute toolgate does not provide, an annotation it refuses) are placed by finding what
//! they name in the policy's text.

use std::fmt::Write as _;

use miette::Diagnostic;

/// Where in a file, as a byte span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub offset: usize,
    pub len: usize,
}

/// `message` at `span` of `text` (the file `source_name`), with its `label` under the caret
/// and its `help` after.
pub fn render(
    source_name: &str,
    text: &str,
    message: &str,
    span: Option<Span>,
    label: Option<&str>,
    help: Option<&str>,
) -> String {
    let mut out = format!("error: {message}\n");
    match span {
        Some(span) => {
            let offset = floor_boundary(text, span.offset.min(text.len()));
            let start = text[..offset].rfind('\n').map_or(0, |at| at + 1);
            let end = text[offset..].find('\n').map_or(text.len(), |at| offset + at);
            let line = text[..offset].matches('\n').count() + 1;
            let column = text[start..offset].chars().count() + 1;
            let shown = text[start..end].trim_end_matches('\r');
            let width = line.to_string().len();
            // A span may end inside a character (Cedar's error at a multi-byte one): to its end.
            let stop = ceil_boundary(text, (offset + span.len.max(1)).min(end).max(offset));
            let carets = text[offset..stop].chars().count().max(1);
            let pad = " ".repeat(width);
            let _ = writeln!(out, "{pad}--> {source_name}:{line}:{column}");
            let _ = writeln!(out, "{pad} |");
            let _ = writeln!(out, "{line} | {}", crate::text::escaped(shown));
            let under = format!("{}{}", " ".repeat(column - 1), "^".repeat(carets));
            match label {
                Some(label) => {
                    let _ = writeln!(out, "{pad} | {under} {label}");
                }
                None => {
                    let _ = writeln!(out, "{pad} | {under}");
                }
            }
        }
        None => {
            let _ = writeln!(out, "  --> {source_name}");
        }
    }
    if let Some(help) = help {
        let _ = writeln!(out, "  = help: {help}");
    }
    out.trim_end().to_owned()
}

/// Each of Cedar's diagnostics about `text`, rendered.
pub fn cedar<D: Diagnostic + ?Sized>(source_name: &str, text: &str, error: &D) -> String {
    let label = error.labels().and_then(|mut labels| labels.next());
    let span = label.as_ref().map(|l| Span { offset: l.offset(), len: l.len() });
    let help = error.help().map(|h| h.to_string());
    let said = label.as_ref().and_then(|l| l.label().map(str::to_owned));
    render(source_name, text, &error.to_string(), span, said.as_deref(), help.as_deref())
}

/// The span of the first place in `text[from..to]` where the dotted `path` (`context.toool`)
/// is written, spaces between its parts allowed; else where its last part is.
pub fn find_path(text: &str, (from, to): (usize, usize), path: &str) -> Option<Span> {
    let within = text.get(from..to)?;
    let parts: Vec<&str> = path.split('.').collect();
    let last = parts.last()?;
    let mut at = 0;
    while let Some(found) = within[at..].find(parts[0]) {
        let start = at + found;
        if let Some(end) = dotted_from(within, start, &parts) {
            return Some(Span { offset: from + start, len: end - start });
        }
        at = start + parts[0].len();
    }
    within.find(&format!(".{last}")).map(|at| Span { offset: from + at + 1, len: last.len() })
}

/// Where the dotted `parts` written from `start` of `text` end, if they are written there.
fn dotted_from(text: &str, start: usize, parts: &[&str]) -> Option<usize> {
    let mut at = start + parts[0].len();
    for part in &parts[1..] {
        let rest = text[at..].trim_start();
        let rest = rest.strip_prefix('.')?.trim_start();
        at = text.len() - rest.len();
        if !rest.starts_with(part) {
            return None;
        }
        at += part.len();
    }
    Some(at)
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// `at`, or the end of the character it falls inside.
fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_inside_a_character_is_shown_to_its_end() {
        // Found by the `policy` fuzz target: Cedar points one byte into `Ϗ`.
        let text = "forbid \u{3cf}rincipal;";
        let at = text.find('\u{3cf}').unwrap_or_default();
        for (offset, len) in [(at, 1), (at + 1, 1), (at, 3)] {
            let shown = render("p.cedar", text, "bad", Some(Span { offset, len }), None, None);
            assert!(shown.contains("p.cedar:1:8") && shown.contains('^'), "{shown}");
        }
    }

    #[test]
    fn a_place_is_shown_by_its_line_and_column_with_a_caret() {
        let text = "@id(\"a\")\npermit(principal, action, resource)\nwhen { context.toool.name == \"x\" };\n";
        let span = find_path(text, (0, text.len()), "context.toool");
        assert_eq!(span, Some(Span { offset: 52, len: 13 }));
        let shown =
            render("p.cedar", text, "no `context.toool`", span, None, Some("see the schema"));
        assert_eq!(
            shown,
            "error: no `context.toool`\n --> p.cedar:3:8\n  |\n3 | when { context.toool.name == \"x\" };\n  |        ^^^^^^^^^^^^^\n  = help: see the schema"
        );
        assert_eq!(
            find_path("when { context . toool }", (0, 24), "context.toool").map(|s| s.len),
            Some(15)
        );
    }

    #[test]
    fn cedars_own_parse_errors_are_placed_and_explained() {
        let text = "@id(\"a\")\npermit(principal, action, resource)\nwhen { context.tool.name == \"x\" ;\n";
        let errors = text.parse::<cedar_policy::PolicySet>().unwrap_err();
        let shown = cedar("p.cedar", text, &errors);
        assert!(shown.contains("--> p.cedar:3:33"), "{shown}");
        assert!(shown.contains("3 | when { context.tool.name == \"x\" ;"), "{shown}");
        assert!(shown.contains('^'), "{shown}");
        assert!(!shown.contains("ParseErrors("), "no debug dump: {shown}");
    }
}
