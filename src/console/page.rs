//! What every page shares: the frame around it (navigation, who is signed in), strings from the
//! trail as text that cannot act, links built from parts, and the answers with their status.
//!
//! Everything on the trail came from someone else: a tool name, a session id, a reason, an
//! approver's comment. maud escapes every value it renders for its place (text or a quoted
//! attribute); on top of that [`Text`] shows control characters and bidirectional overrides as
//! visible marks (`U+202E`) instead of letting them reorder or hide what an auditor reads, and
//! links are only ever this console's own paths with their parameters percent-encoded.

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use maud::{DOCTYPE, Escaper, Markup, Render, html};

use super::session::Visitor;

/// Characters of a trail string shown in a table cell before it is clipped.
const CLIP: usize = 80;

/// The pages, for the navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    Overview,
    Trail,
    Approvals,
    Export,
    None,
}

/// Escapes `text` into `buffer`, each hidden character a visible mark.
fn render_hostile(text: &str, keep_lines: bool, buffer: &mut String) {
    use std::fmt::Write as _;
    let mut rest = text;
    while let Some(at) = rest.find(|c| crate::text::hidden(c, keep_lines)) {
        let _ = Escaper::new(buffer).write_str(&rest[..at]);
        let c = rest[at..].chars().next().unwrap_or_default();
        let _ = write!(buffer, "<span class=\"mark\">U+{:04X}</span>", u32::from(c));
        rest = &rest[at + c.len_utf8()..];
    }
    let _ = Escaper::new(buffer).write_str(rest);
}

/// A string from the trail, on one line.
pub struct Text<'a>(pub &'a str);

impl Render for Text<'_> {
    fn render_to(&self, buffer: &mut String) {
        render_hostile(self.0, false, buffer);
    }
}

/// A string from the trail in a block that keeps its lines (`pre`).
pub struct Lines<'a>(pub &'a str);

impl Render for Lines<'_> {
    fn render_to(&self, buffer: &mut String) {
        render_hostile(self.0, true, buffer);
    }
}

/// A string from the trail in a table cell: its first characters, and how long it is when
/// it is longer.
pub struct Clip<'a>(pub &'a str);

impl Render for Clip<'_> {
    fn render_to(&self, buffer: &mut String) {
        match self.0.char_indices().nth(CLIP) {
            None => render_hostile(self.0, false, buffer),
            Some((at, _)) => {
                render_hostile(&self.0[..at], false, buffer);
                let length = self.0.chars().count();
                buffer.push_str(&format!("<span class=\"clipped\">… ({length} characters)</span>"));
            }
        }
    }
}

/// One of this console's paths with `params` (the empty ones left out) as its query string.
pub fn href(path: &'static str, params: &[(&str, &str)]) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (name, value) in params.iter().filter(|(_, v)| !v.is_empty()) {
        query.append_pair(name, value);
    }
    match query.finish() {
        query if query.is_empty() => path.to_owned(),
        query => format!("{path}?{query}"),
    }
}

/// A time from the trail (RFC 3339, UTC), to the second, with the whole value for machines.
pub fn time(ts: &str) -> Markup {
    // A fleet node's `ts` is whatever it shipped: anything that is not a time is shown as is.
    let shown = match (ts.get(..10), ts.get(11..19)) {
        (Some(day), Some(clock)) => format!("{day} {clock}"),
        _ => ts.to_owned(),
    };
    html! { time datetime=(ts) { (Text(&shown)) } }
}

/// An optional text from the trail, empty when absent.
pub fn text(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or_default()
}

/// A class named after one of the trail's fixed names (a kind, an outcome), or none: a value
/// that is not one of them (from a fleet node, say) names no class.
pub fn class_of<T: std::str::FromStr>(
    value: &str,
    name: impl Fn(T) -> &'static str,
) -> &'static str {
    value.parse::<T>().map_or("", name)
}

/// What the frame says of the server and the visitor.
pub struct Frame<'a> {
    pub title: &'a str,
    pub nav: Nav,
    pub visitor: Option<&'a Visitor>,
    /// `sidecar` or `fleet`.
    pub serves: &'static str,
    pub auth: bool,
    /// Whether approvals are judged here (a sidecar's console).
    pub approvals: bool,
    /// Reload the page every so many seconds (the script does, while no form is being filled).
    pub refresh: Option<u32>,
}

/// `body` in the frame every page shares.
pub fn frame(frame: &Frame<'_>, body: Markup) -> Markup {
    let item = |nav: Nav, path: &'static str, label: &'static str| {
        let current = (frame.nav == nav).then_some("page");
        html! { a href=(path) aria-current=[current] { (label) } }
    };
    let visitor = frame.visitor;
    html! {
        (DOCTYPE)
        html lang="en" dir="ltr" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="referrer" content="no-referrer";
                title { (frame.title) " · toolgate" }
                link rel="icon" href=(super::assets::ICON_PATH) type="image/svg+xml";
                link rel="stylesheet" href=(super::assets::CSS_PATH);
                script src=(super::assets::JS_PATH) defer {}
            }
            body data-refresh=[frame.refresh] {
                header.top {
                    a.brand href="/ui" { "toolgate" }
                    span.serves { (frame.serves) }
                    @if let Some(visitor) = visitor {
                        nav {
                            @if visitor.auditor {
                                (item(Nav::Overview, "/ui", "Overview"))
                                (item(Nav::Trail, "/ui/trail", "Trail"))
                            }
                            @if visitor.approver && frame.approvals {
                                (item(Nav::Approvals, "/ui/approvals", "Approvals"))
                            }
                            @if visitor.auditor {
                                (item(Nav::Export, "/ui/export", "Export & verify"))
                            }
                        }
                        div.who {
                            @if frame.auth {
                                "Signed in as " strong { (Text(&visitor.caller)) }
                                form method="post" action="/ui/sign-out" {
                                    input type="hidden" name="csrf" value=(visitor.csrf);
                                    button.link type="submit" { "Sign out" }
                                }
                            } @else {
                                span.warning title="No [[auth.tokens]] are configured: the console answers on loopback only." {
                                    "Auth is off (loopback only)"
                                }
                            }
                        }
                    }
                }
                main { (body) }
            }
        }
    }
}

/// A page with status 200.
pub fn ok(markup: Markup) -> Response {
    Html(markup.into_string()).into_response()
}

/// A page with `status`.
pub fn with_status(status: StatusCode, markup: Markup) -> Response {
    (status, Html(markup.into_string())).into_response()
}

/// A notice at the top of a page: `kind` is `error`, `ok` or `info`.
pub fn notice(kind: &'static str, message: &str) -> Markup {
    html! { p.notice.(kind) role="status" { (Text(message)) } }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_strings_render_as_text_with_their_hidden_characters_marked() {
        let rendered = Text("<script>alert(1)</script>\"><img src=x onerror=alert(2)>").render();
        assert_eq!(
            rendered.into_string(),
            "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"
        );
        let rendered = Text("invoice\u{202e}fdp.exe\r\n").render().into_string();
        assert_eq!(
            rendered,
            "invoice<span class=\"mark\">U+202E</span>fdp.exe<span class=\"mark\">U+000D</span>\
             <span class=\"mark\">U+000A</span>"
        );
        assert_eq!(
            Lines("a\nb\u{7}").render().into_string(),
            "a\nb<span class=\"mark\">U+0007</span>"
        );
    }

    #[test]
    fn long_strings_are_clipped_in_cells() {
        let long = "é".repeat(10_000);
        let rendered = Clip(&long).render().into_string();
        assert!(rendered.starts_with(&"é".repeat(CLIP)));
        assert!(rendered.ends_with("… (10000 characters)</span>"));
        assert_eq!(Clip("short").render().into_string(), "short");
    }

    #[test]
    fn links_are_this_consoles_paths_with_encoded_parameters() {
        let link = href("/ui/trail", &[("tool", "javascript:alert(1)&x=<y>"), ("actor", "")]);
        assert_eq!(link, "/ui/trail?tool=javascript%3Aalert%281%29%26x%3D%3Cy%3E");
        assert_eq!(href("/ui", &[("a", "")]), "/ui");
    }
}
