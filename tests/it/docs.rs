//! The documentation against the product: every configuration example in README.md and docs/
//! loads (and the examples' own files), the full example of docs/configuration.md starts a real
//! server, and every link between the documents resolves, anchors included. The README's
//! command blocks run in `tests/readme` (they need the Python client and pip).

use std::collections::BTreeSet;
use std::path::PathBuf;

use toolgate::config::Config;

use crate::faults::Proc;

/// The crate's root, where README.md and docs/ are.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown file under docs/.
fn documents() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut dirs = vec![root().join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The fenced blocks of `lang` in a Markdown text, each with the line it starts on.
pub fn fenced(text: &str, lang: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match (&mut open, fence) {
            (None, true) if line.trim_start().trim_start_matches('`').trim() == lang => {
                open = Some((n + 1, String::new()));
            }
            (None, true) => open = Some((0, String::new())),
            (Some(_), true) => {
                if let Some((start, block)) = open.take().filter(|(start, _)| *start > 0) {
                    blocks.push((start, block));
                }
            }
            (Some((_, block)), false) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, false) => {}
        }
    }
    blocks
}

/// A `toml` block that is not a toolgate configuration: a policy test's cases file.
fn is_configuration(block: &str) -> bool {
    !block.contains("[[case]]")
}

#[test]
fn every_configuration_example_loads() {
    let mut loaded = 0;
    let mut files: Vec<(String, String)> = Vec::new();
    for path in documents() {
        let text = std::fs::read_to_string(&path).unwrap();
        for (line, block) in fenced(&text, "toml") {
            files.push((format!("{}:{line}", path.display()), block));
        }
    }
    // The examples' own configurations.
    for dir in ["examples/agent", "examples/policies/coding", "examples/policies/finance"] {
        let path = root().join(dir).join("toolgate.toml");
        files.push((path.display().to_string(), std::fs::read_to_string(&path).unwrap()));
    }
    for (place, block) in files.iter().filter(|(_, block)| is_configuration(block)) {
        let config: Config =
            toml::from_str(block).unwrap_or_else(|e| panic!("{place} does not load: {e}"));
        toolgate::auth::Auth::new(&config.auth)
            .unwrap_or_else(|e| panic!("{place}: its [auth] is refused: {e}"));
        // A schema given as a file is read from where the server runs: only inline ones here.
        if !block.contains("input_schema = \"") {
            config.registry().unwrap_or_else(|e| panic!("{place}: its tools do not load: {e}"));
        }
        loaded += 1;
    }
    assert!(loaded >= 18, "only {loaded} configuration examples found");
}

/// The full example configuration, as docs/configuration.md shows it, starts a server (with the
/// files it names made first), that serves and stops cleanly.
#[tokio::test]
async fn the_full_example_configuration_starts_a_server() {
    let text = std::fs::read_to_string(root().join("docs/configuration.md")).unwrap();
    let (_, full) = fenced(&text, "toml").into_iter().next().unwrap();
    assert!(
        full.contains("[retention]") && full.contains("[limits]"),
        "the first block is the full one"
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("toolgate.db");
    let mut server = Proc::start_with_files(&db, dir.path(), &full).await;
    let decided = server.gate().await.decide(crate::helpers::request("read")).await;
    // Its tokens turn auth on: an anonymous call is refused, and the refusal recorded.
    assert_eq!(decided.unwrap_err().code(), tonic::Code::Unauthenticated);
    server.sigterm();
    let exit = server.exited_within(std::time::Duration::from_secs(20)).unwrap();
    assert!(exit.success(), "{exit:?}");
    let (code, said) = crate::helpers::verify(&db);
    assert_eq!(code, 0, "{said}");
}

/// The anchors a Markdown file's headings make, as GitHub makes them.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    let mut anchors = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        let Some(heading) = line.strip_prefix('#').filter(|_| !fenced) else { continue };
        let heading = heading.trim_start_matches('#').trim();
        let slug: String = heading
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(slug.clone()).or_default();
        anchors.insert(if *n == 0 { slug.clone() } else { format!("{slug}-{n}") });
        *n += 1;
    }
    anchors
}

/// The targets of a Markdown text's inline links, outside code.
fn links(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Inline code is not a link: drop what is between backticks.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            targets.push(after[..end].to_owned());
            rest = &after[end..];
        }
    }
    targets
}

/// Every relative link of README.md and docs/ names a file that exists, and an anchor its
/// headings make; every `docs/….md` a text names exists. Links to the web are not fetched here
/// (no network in CI): they are listed by the test's output.
#[test]
fn every_link_between_the_documents_resolves() {
    let mut broken = Vec::new();
    let mut web = BTreeSet::new();
    for path in documents() {
        let text = std::fs::read_to_string(&path).unwrap();
        for target in links(&text) {
            if target.starts_with("http://") || target.starts_with("https://") {
                web.insert(target);
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let resolved = match file {
                "" => path.clone(),
                file => path.parent().unwrap().join(file),
            };
            if !resolved.exists() {
                broken.push(format!("{}: {target}: no such file", path.display()));
                continue;
            }
            if !anchor.is_empty() {
                let there = std::fs::read_to_string(&resolved).unwrap_or_default();
                if !anchors(&there).contains(anchor) {
                    broken.push(format!("{}: {target}: no such heading", path.display()));
                }
            }
        }
        // Prose names documents as `docs/x.md` too.
        for (at, _) in text.match_indices("docs/") {
            let name: String = text[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.'))
                .collect();
            let name = name.trim_end_matches('.');
            if name.ends_with(".md") && !root().join(name).exists() {
                broken.push(format!("{}: names {name}, which does not exist", path.display()));
            }
        }
    }
    println!("links to the web, not fetched here: {web:#?}");
    assert!(broken.is_empty(), "{broken:#?}");
}

/// Every file path a README command names exists in the repository.
#[test]
fn the_readme_names_files_that_exist() {
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut missing = Vec::new();
    for (line, block) in fenced(&text, "sh") {
        for word in block.split_whitespace() {
            let word = word.trim_matches(|c| c == '\'' || c == '"');
            let local = word.starts_with("examples/")
                || word.starts_with("./clients/")
                || word.starts_with("./scripts/")
                || word.starts_with("policies/");
            if local && !root().join(word).exists() {
                missing.push(format!("README.md:{line}: {word}"));
            }
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
}

#[test]
fn fenced_blocks_and_anchors_read_as_github_renders_them() {
    let text = "# A title\n```toml\na = 1\n```\n```sh\nls\n```\n## Use `it`, now!\n## A title\n";
    assert_eq!(fenced(text, "toml"), [(2, "a = 1\n".to_owned())]);
    let expected: BTreeSet<String> =
        ["a-title", "use-it-now", "a-title-1"].into_iter().map(str::to_owned).collect();
    assert_eq!(anchors(text), expected);
}
