//! The layers docs/architecture.md declares, kept. Every `crate::`, `super::` and `self::` path
//! in `src/` outside tests goes to a module of its own band or of a band below it; no modules
//! import each other in a circle (top-level modules, nor files: a module's root may use its own
//! children, and nothing else may close a circle); and no module re-exports another's items (one
//! path per thing). A problem is named with its file and line.
//!
//! The bands are read from the drawing at the top of docs/architecture.md: one line per band,
//! top first, modules joined by ` ─ ` before the line's description.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One source file: its path under `src/`, its module path, and its code with comments,
/// strings and test modules blanked (newlines kept, so offsets still give lines).
struct Source {
    rel: String,
    module: Vec<String>,
    code: String,
}

/// An import: the module path it names, as written, and where.
struct Import {
    path: Vec<String>,
    line: usize,
    reexport: bool,
}

#[test]
fn every_import_goes_down_a_band_and_none_closes_a_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let bands = bands(&doc);
    assert!(bands.len() > 20, "the drawing in docs/architecture.md names the modules: {bands:?}");
    assert!(bands["cli"] < bands["server"] && bands["gate"] < bands["store"], "{bands:?}");
    assert!(bands["store"] < bands["config"] && bands["config"] < bands["trail"], "{bands:?}");
    let mut files = Vec::new();
    read_dir(&root.join("src"), &root.join("src"), &mut files);
    let problems = problems(&files, &bands);
    assert!(problems.is_empty(), "the layers of docs/architecture.md:\n{}", problems.join("\n"));
}

#[test]
fn the_check_finds_an_upward_import_a_circle_and_a_reexport() {
    let bands: BTreeMap<String, usize> =
        [("top", 0), ("mid", 1), ("low", 2), ("side", 2), ("deep", 2)]
            .map(|(m, b)| (m.into(), b))
            .into();
    let files = [
        ("top.rs", "use crate::mid::Thing;\n"),
        ("mid/mod.rs", "mod a;\nmod b;\nuse self::a::A;\n"),
        ("mid/a.rs", "use super::b::B; // crate::top::X in a comment\n"),
        ("mid/b.rs", "pub struct B;\nfn f() { super::a::go(\"crate::top\") }\n"),
        ("low.rs", "#[doc(hidden)]\npub use crate::side::S;\nfn g() { crate::top::up() }\n"),
        (
            "side.rs",
            "use crate::{low::{L, self}};\n#[cfg(test)]\nmod tests { use crate::top::T; }\n",
        ),
        // A module's root may use its own children, and they it: no circle.
        ("deep/mod.rs", "mod x;\npub struct Y;\nfn f() { self::x::go() }\n"),
        ("deep/x.rs", "use super::Y;\npub fn go() {}\n"),
    ];
    let files: Vec<(String, String)> =
        files.iter().map(|(rel, code)| ((*rel).to_owned(), (*code).to_owned())).collect();
    let sources = files.iter().map(|(rel, code)| source(rel, code)).collect::<Vec<_>>();
    let problems = problems(&sources, &bands);
    let expected = [
        "src/low.rs:3: low (band 3) imports top (band 1), a band above it",
        "src/low.rs:2: re-exports side's items: one path per thing",
        "modules import each other in a circle: low, side (src/low.rs:2 low → side; src/side.rs:1 side → low)",
        "files import each other in a circle: mid/a.rs, mid/b.rs (src/mid/a.rs:1 → mid/b.rs; src/mid/b.rs:2 → mid/a.rs)",
    ];
    assert_eq!(problems.len(), expected.len(), "{problems:#?}");
    for want in expected {
        assert!(problems.iter().any(|p| p == want), "missing `{want}` in {problems:#?}");
    }
}

/// The band of each module, from the drawing: the first fenced block of the document.
fn bands(doc: &str) -> BTreeMap<String, usize> {
    let drawing = doc.split("```").nth(1).unwrap_or_default();
    let mut bands = BTreeMap::new();
    for (band, line) in drawing.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        // The modules end where two spaces begin the description.
        let names = line.trim().split("  ").next().unwrap_or_default();
        for name in names.split('─') {
            let name = name.split('(').next().unwrap_or_default().trim();
            let name = name.strip_prefix("crates/").unwrap_or(name);
            if !name.is_empty() {
                bands.insert(name.to_owned(), band);
            }
        }
    }
    bands
}

fn read_dir(root: &Path, dir: &Path, files: &mut Vec<Source>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            read_dir(root, &path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            files.push(source(&rel, &std::fs::read_to_string(&path).unwrap()));
        }
    }
}

fn source(rel: &str, text: &str) -> Source {
    let stem = rel.strip_suffix(".rs").unwrap_or(rel);
    let mut module: Vec<String> = stem.split('/').map(str::to_owned).collect();
    if module.last().is_some_and(|last| last == "mod") {
        module.pop();
    }
    if module == ["lib"] || module == ["main"] {
        module.clear();
    }
    Source { rel: rel.to_owned(), module, code: without_tests(&blank(text)) }
}

/// The problems of `files` against `bands`, each naming a file and line.
fn problems(files: &[Source], bands: &BTreeMap<String, usize>) -> Vec<String> {
    let mut problems = Vec::new();
    // Files a `#[cfg(test)] mod x;` declares are tests.
    let tests: BTreeSet<Vec<String>> = files
        .iter()
        .flat_map(|f| {
            test_modules(&f.code).into_iter().map(|m| [f.module.clone(), vec![m]].concat())
        })
        .collect();
    let files: Vec<&Source> =
        files.iter().filter(|f| !f.module.is_empty() && !tests.contains(&f.module)).collect();
    let by_module: BTreeMap<&[String], &str> =
        files.iter().map(|f| (f.module.as_slice(), f.rel.as_str())).collect();
    let tops: BTreeSet<&str> = files.iter().map(|f| f.module[0].as_str()).collect();
    for top in &tops {
        if !bands.contains_key(*top) {
            problems.push(format!(
                "src/{top}: a module the drawing in docs/architecture.md leaves out"
            ));
        }
    }
    let mut modules: BTreeMap<(String, String), (String, usize)> = BTreeMap::new();
    let mut links: BTreeMap<(String, String), (String, usize)> = BTreeMap::new();
    for file in &files {
        let from = &file.module[0];
        for import in imports(&file.code) {
            let Some(target) = absolute(&file.module, &import.path) else { continue };
            let Some(to) = target.first() else { continue };
            if to == from {
                if let Some(other) = resolve(&by_module, &target) {
                    let other_module = module_of(other);
                    let descendant = other_module.len() > file.module.len()
                        && other_module.starts_with(&file.module);
                    if other != file.rel && !descendant {
                        links
                            .entry((file.rel.clone(), other.to_owned()))
                            .or_insert((file.rel.clone(), import.line));
                    }
                }
                continue;
            }
            if import.reexport {
                problems.push(format!(
                    "src/{}:{}: re-exports {to}'s items: one path per thing",
                    file.rel, import.line
                ));
            }
            let (Some(&band_from), Some(&band_to)) = (bands.get(from), bands.get(to)) else {
                continue;
            };
            if band_to < band_from {
                problems.push(format!(
                    "src/{}:{}: {from} (band {}) imports {to} (band {}), a band above it",
                    file.rel,
                    import.line,
                    band_from + 1,
                    band_to + 1
                ));
            }
            modules.entry((from.clone(), to.clone())).or_insert((file.rel.clone(), import.line));
        }
    }
    for circle in circles(&modules) {
        let edges = edges_within(&circle, &modules, |from, to| format!("{from} → {to}"));
        problems.push(format!(
            "modules import each other in a circle: {} ({edges})",
            circle.join(", ")
        ));
    }
    for circle in circles(&links) {
        let edges = edges_within(&circle, &links, |_, to| format!("→ {to}"));
        problems
            .push(format!("files import each other in a circle: {} ({edges})", circle.join(", ")));
    }
    problems
}

fn module_of(rel: &str) -> Vec<String> {
    source(rel, "").module
}

/// Each edge between members of `circle`, where it is written.
fn edges_within(
    circle: &[String],
    edges: &BTreeMap<(String, String), (String, usize)>,
    name: impl Fn(&str, &str) -> String,
) -> String {
    edges
        .iter()
        .filter(|((from, to), _)| circle.contains(from) && circle.contains(to))
        .map(|((from, to), (rel, line))| format!("src/{rel}:{line} {}", name(from, to)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The strongly connected groups of more than one node (Tarjan), each sorted.
fn circles(edges: &BTreeMap<(String, String), (String, usize)>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        next: BTreeMap<&'a str, Vec<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(walk: &mut Walk<'a>, node: &'a str) {
        let n = walk.index.len();
        walk.index.insert(node, n);
        walk.low.insert(node, n);
        walk.stack.push(node);
        for next in walk.next.get(node).cloned().unwrap_or_default() {
            if !walk.index.contains_key(next) {
                visit(walk, next);
                let low = walk.low[node].min(walk.low[next]);
                walk.low.insert(node, low);
            } else if walk.stack.contains(&next) {
                let low = walk.low[node].min(walk.index[next]);
                walk.low.insert(node, low);
            }
        }
        if walk.low[node] == walk.index[node] {
            let at = walk.stack.iter().position(|n| *n == node).unwrap_or_default();
            let mut group: Vec<String> = walk.stack.drain(at..).map(str::to_owned).collect();
            if group.len() > 1 {
                group.sort();
                walk.found.push(group);
            }
        }
    }
    let mut walk = Walk {
        next: BTreeMap::new(),
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for (from, to) in edges.keys() {
        walk.next.entry(from).or_default().push(to);
    }
    let nodes: Vec<&str> = edges.keys().flat_map(|(a, b)| [a.as_str(), b.as_str()]).collect();
    for node in nodes {
        if !walk.index.contains_key(node) {
            visit(&mut walk, node);
        }
    }
    walk.found
}

/// `path` written in `module`, from the crate's root; `None` for a path outside the crate.
fn absolute(module: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut at: Vec<String> = Vec::new();
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => rest = &path[1..],
        Some("self") => {
            at = module.to_vec();
            rest = &path[1..];
        }
        Some("super") => {
            at = module.to_vec();
            while rest.first().is_some_and(|s| s == "super") {
                at.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    at.extend(rest.iter().filter(|s| *s != "self").cloned());
    Some(at)
}

/// The file holding the longest prefix of `path`.
fn resolve<'a>(by_module: &BTreeMap<&[String], &'a str>, path: &[String]) -> Option<&'a str> {
    (1..=path.len()).rev().find_map(|n| by_module.get(&path[..n]).copied())
}

/// `text` with comments, string and character literals blanked; newlines kept.
fn blank(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let clear = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to.min(bytes.len())] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        let end = if rest.starts_with(b"//") {
            i + rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len())
        } else if rest.starts_with(b"/*") {
            i + find(rest, b"*/").map_or(rest.len(), |at| at + 2)
        } else if (rest.starts_with(b"r\"") || rest.starts_with(b"r#") || rest.starts_with(b"br"))
            && !word_before(bytes, i)
        {
            let start = rest.iter().position(|&b| b == b'"');
            let hashes = start.map_or(0, |s| rest[..s].iter().filter(|&&b| b == b'#').count());
            match start {
                Some(start) if rest[..start].iter().all(|&b| b"rb#".contains(&b)) => {
                    let close = [b"\"".as_slice(), &vec![b'#'; hashes]].concat();
                    i + start
                        + 1
                        + find(&rest[start + 1..], &close).map_or(rest.len(), |at| at + close.len())
                }
                _ => i + 1,
            }
        } else if rest[0] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            i + j + 1
        } else if rest[0] == b'\'' {
            // A character literal ('x', '\n', '\u{..}'), not a lifetime.
            if rest.get(1) == Some(&b'\\') {
                i + rest[2..].iter().position(|&b| b == b'\'').map_or(rest.len(), |at| at + 3)
            } else {
                let width = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                if rest.get(1 + width) == Some(&b'\'') { i + width + 2 } else { i + 1 }
            }
        } else {
            i + 1
        };
        if end > i + 1 || matches!(rest[0], b'"' | b'/') {
            clear(&mut out, i, end);
        }
        i = end.max(i + 1);
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn word_before(bytes: &[u8], i: usize) -> bool {
    i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_')
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// `code` with its `#[cfg(test)] mod name { … }` blocks blanked.
fn without_tests(code: &str) -> String {
    let mut out = code.to_owned();
    let mut from = 0;
    while let Some(at) = out[from..].find("#[cfg(test)]").map(|at| at + from) {
        let after = &out[at + 12..];
        let item = after.trim_start();
        let item = item.strip_prefix("pub(crate) ").or(item.strip_prefix("pub ")).unwrap_or(item);
        let Some(open) = item.strip_prefix("mod ").and_then(|m| m.find(['{', ';']).map(|o| (m, o)))
        else {
            from = at + 12;
            continue;
        };
        let (body, open) = open;
        if body.as_bytes()[open] == b';' {
            from = at + 12;
            continue;
        }
        let start = out.len() - body.len() + open;
        let mut depth = 0;
        let mut end = start;
        for (k, b) in out.as_bytes()[start..].iter().enumerate() {
            match b {
                b'{' => depth += 1,
                b'}' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                end = start + k + 1;
                break;
            }
        }
        let blanked: String =
            out[at..end].chars().map(|c| if c == '\n' { '\n' } else { ' ' }).collect();
        out.replace_range(at..end, &blanked);
        from = end;
    }
    out
}

/// The names of `#[cfg(test)] mod name;`: files that are tests.
fn test_modules(code: &str) -> Vec<String> {
    code.split("#[cfg(test)]")
        .skip(1)
        .filter_map(|after| {
            let item = after.trim_start();
            let item =
                item.strip_prefix("pub(crate) ").or(item.strip_prefix("pub ")).unwrap_or(item);
            let (name, rest) = item.strip_prefix("mod ")?.split_once(';')?;
            (!rest.is_empty() || name.trim().chars().all(|c| c.is_alphanumeric() || c == '_'))
                .then(|| name.trim().to_owned())
                .filter(|name| name.chars().all(|c| c.is_alphanumeric() || c == '_'))
        })
        .collect()
}

/// Every path from `crate`, `super` or `self` in `code`, `use` trees expanded.
fn imports(code: &str) -> Vec<Import> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let line = |at: usize| code[..at].matches('\n').count() + 1;
    let mut i = 0;
    while i < bytes.len() {
        let starts = ["crate", "super", "self"]
            .into_iter()
            .find(|word| code[i..].starts_with(word) && !word_before(bytes, i));
        let Some(word) = starts else {
            i += 1;
            continue;
        };
        let after = i + word.len();
        if !code[after..].trim_start().starts_with("::")
            || (after < bytes.len()
                && (bytes[after].is_ascii_alphanumeric() || bytes[after] == b'_'))
        {
            i = after;
            continue;
        }
        let reexport = is_reexport(&code[statement_start(code, i)..i]);
        let mut paths = Vec::new();
        let end = tree(code, i, vec![], &mut paths);
        for path in paths {
            found.push(Import { path, line: line(i), reexport });
        }
        i = end.max(after);
    }
    found
}

/// Where the statement holding `at` begins (after the last `;`, `{` or `}` before it).
fn statement_start(code: &str, at: usize) -> usize {
    code[..at].rfind([';', '{', '}']).map_or(0, |p| p + 1)
}

/// Whether a statement that begins with `head` is a public `use`: a re-export.
fn is_reexport(head: &str) -> bool {
    let mut head = head.trim_start();
    // Past its attributes.
    while let Some(attribute) = head.strip_prefix("#[") {
        head = attribute.split_once(']').map_or("", |(_, after)| after).trim_start();
    }
    let Some(rest) = head.strip_prefix("pub") else { return false };
    let rest = match rest.strip_prefix('(') {
        Some(inner) => inner.split_once(')').map_or("", |(_, after)| after),
        None => rest,
    };
    rest.trim_start().starts_with("use ")
}

/// Parses a path or `use` tree at `at` below `prefix` into `paths`; where it ends.
fn tree(code: &str, mut at: usize, mut prefix: Vec<String>, paths: &mut Vec<Vec<String>>) -> usize {
    let bytes = code.as_bytes();
    let skip = |mut at: usize| {
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        at
    };
    loop {
        at = skip(at);
        if at < bytes.len() && bytes[at] == b'{' {
            at += 1;
            loop {
                at = skip(at);
                if at >= bytes.len() || bytes[at] == b'}' {
                    return at + 1;
                }
                at = tree(code, at, prefix.clone(), paths);
                at = skip(at);
                if at < bytes.len() && bytes[at] == b',' {
                    at += 1;
                }
            }
        }
        let start = at;
        while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
            at += 1;
        }
        if at == start {
            // `*`, or nothing we read: the path so far.
            if at < bytes.len() && bytes[at] == b'*' {
                at += 1;
            }
            paths.push(prefix);
            return at;
        }
        prefix.push(code[start..at].to_owned());
        let next = skip(at);
        if code[next..].starts_with("::") {
            at = next + 2;
        } else {
            // `as alias` and anything after the path are not part of it.
            if code[next..].starts_with("as ") {
                at = skip(next + 3);
                while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
                    at += 1;
                }
            }
            paths.push(prefix);
            return at;
        }
    }
}
