//! A tool's normalizations (`[tools.<name>] normalize`): arguments rewritten into one spelling
//! before the schema, the policy and the hash see them, so that two spellings of one call hash
//! alike and a resource named by a path is the path the tool will touch. Each names an argument
//! by JSON pointer, where a `*` token stands for every element of an array or every member of
//! an object. A value that cannot be normalized is a mismatch (`args.<path>: <why>`), denied
//! like one of the schema's, and never quoted.

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Deserialize;
use serde_json::Value;

use super::SchemaError;

/// The most digits a normalized decimal may have, so an exponent cannot blow a value up.
const MAX_DECIMAL_DIGITS: usize = 100;

/// What is done to one argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Normalization {
    /// A file path made absolute against the tool's `root`, `.` and `..` resolved; a path
    /// that leaves the root is a mismatch.
    Path,
    /// A number, or a number's text, as the exact decimal text with no exponent, no `+`, no
    /// leading or trailing zeros (`1e2`, `100.0` and `"100"` are all `"100"`).
    Decimal,
    /// An RFC 3339 date and time as RFC 3339 in UTC (`Z`), with the fraction digits it needs.
    Datetime,
    /// Text in lower case (Unicode lowercase mapping), for enums whose case does not matter.
    Lowercase,
}

impl fmt::Display for Normalization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Path => "path",
            Self::Decimal => "decimal",
            Self::Datetime => "datetime",
            Self::Lowercase => "lowercase",
        })
    }
}

/// A tool's normalizations, checked when the registry is built.
#[derive(Debug, Clone)]
pub struct Normalizer {
    /// Pointer tokens and what is done where they lead.
    rules: Vec<(Vec<String>, Normalization)>,
    /// The root of `path` normalizations, itself normalized.
    root: Option<String>,
}

impl Normalizer {
    /// The normalizer of `tool`: each pointer of `rules` must be a JSON pointer, and a `path`
    /// rule needs an absolute `root`.
    pub fn new(
        tool: &str,
        rules: &BTreeMap<String, Normalization>,
        root: Option<&str>,
    ) -> Result<Self, SchemaError> {
        let error = |message: String| SchemaError::new(tool, "normalize", message);
        let root = match root {
            Some(root) if root.starts_with('/') => Some(resolve("/", root)),
            Some(root) => return Err(error(format!("root `{root}` is not an absolute path"))),
            None => None,
        };
        let mut compiled: Vec<(Vec<String>, Normalization)> = Vec::with_capacity(rules.len());
        for (pointer, normalization) in rules {
            if !pointer.starts_with('/') {
                return Err(error(format!("`{pointer}` is not a JSON pointer (starts with `/`)")));
            }
            if *normalization == Normalization::Path && root.is_none() {
                return Err(error(format!("`{pointer}` is a path: the tool needs a `root`")));
            }
            let tokens: Vec<String> = pointer.split('/').skip(1).map(unescape).collect();
            // Two rules that can reach one value would normalize it twice, in an order that
            // is the pointers' and not the author's.
            if let Some((other, _)) = compiled.iter().find(|(other, _)| overlap(other, &tokens)) {
                let other = other.iter().map(|t: &String| format!("/{t}")).collect::<String>();
                return Err(error(format!("`{pointer}` and `{other}` can reach one value")));
            }
            compiled.push((tokens, *normalization));
        }
        Ok(Self { rules: compiled, root })
    }

    /// Normalizes `args` in place; the mismatches, each `args.<path>: <why>`, of the values
    /// that cannot be. An argument that is missing is left to the schema.
    /// At most eight, each at most 200 characters, as the schema's.
    pub fn apply(&self, args: &mut Value) -> Vec<String> {
        let mut errors = Vec::new();
        for (tokens, normalization) in &self.rules {
            let mut at = String::from("args");
            self.visit(args, tokens, *normalization, &mut at, &mut errors);
        }
        errors.truncate(MAX_ERRORS);
        for error in &mut errors {
            if let Some((cut, _)) = error.char_indices().nth(MAX_ERROR_CHARS) {
                error.truncate(cut);
            }
        }
        errors
    }

    fn visit(
        &self,
        value: &mut Value,
        tokens: &[String],
        normalization: Normalization,
        at: &mut String,
        errors: &mut Vec<String>,
    ) {
        let Some((token, rest)) = tokens.split_first() else {
            if let Err(why) = self.normalize(value, normalization) {
                errors.push(format!("{at}: {why}"));
            }
            return;
        };
        let len = at.len();
        let mut step = |name: &str, child: &mut Value, errors: &mut Vec<String>| {
            at.push('.');
            at.push_str(name);
            self.visit(child, rest, normalization, at, errors);
            at.truncate(len);
        };
        match (value, token.as_str()) {
            (Value::Array(items), "*") => {
                for (i, item) in items.iter_mut().enumerate() {
                    step(&i.to_string(), item, errors);
                }
            }
            (Value::Object(members), "*") => {
                for (name, member) in members.iter_mut() {
                    step(name, member, errors);
                }
            }
            (Value::Object(members), name) => {
                if let Some(member) = members.get_mut(name) {
                    step(name, member, errors);
                }
            }
            (Value::Array(items), index) => {
                if let Some(item) = index.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                    step(index, item, errors);
                }
            }
            _ => {}
        }
    }

    fn normalize(&self, value: &mut Value, normalization: Normalization) -> Result<(), String> {
        let normalized = match (normalization, &*value) {
            (Normalization::Path, Value::String(path)) => {
                // INVARIANT: `new` refuses a path rule without a root.
                let root = self.root.as_deref().unwrap_or("/");
                within_root(root, path)?
            }
            (Normalization::Decimal, Value::Number(n)) => number(n)?,
            (Normalization::Decimal, Value::String(text)) => decimal(text)?,
            (Normalization::Datetime, Value::String(text)) => datetime(text)?,
            (Normalization::Lowercase, Value::String(text)) => text.to_lowercase(),
            (Normalization::Decimal, _) => {
                return Err("the value is not a number or a number's text".to_owned());
            }
            _ => return Err(format!("the value is not text to normalize as {normalization}")),
        };
        *value = Value::String(normalized);
        Ok(())
    }
}

/// The most errors reported for one call, and the longest, as the schema's.
const MAX_ERRORS: usize = 8;
const MAX_ERROR_CHARS: usize = 200;
/// The most significant digits a JSON number (a 64-bit float) holds exactly.
const FLOAT_DIGITS: usize = 15;

/// Whether pointers `a` and `b` can reach one value: one is a prefix of the other, token by
/// token, a `*` matching any token.
fn overlap(a: &[String], b: &[String]) -> bool {
    a.iter().zip(b).all(|(x, y)| x == y || x == "*" || y == "*")
}

/// The exact decimal of a JSON number, refused when it had more digits than the float it was
/// read into holds: two different amounts must not come out alike.
fn number(n: &serde_json::Number) -> Result<String, String> {
    let text = decimal(&n.to_string())?;
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    let significant = digits.trim_matches('0').len();
    // A double past 2^53 may be a longer integer rounded when it was read: its digits are
    // not the ones sent.
    let rounded = n.as_f64().is_some_and(|f| f.abs() > super::MAX_EXACT_INTEGER as f64);
    if n.is_f64() && (significant > FLOAT_DIGITS || rounded) {
        return Err(format!(
            "the value has more than {FLOAT_DIGITS} significant digits, more than a JSON \
             number holds exactly: send it as text"
        ));
    }
    Ok(text)
}

/// `text` as RFC 3339 in UTC, within the years RFC 3339 can write (0000 to 9999).
fn datetime(text: &str) -> Result<String, String> {
    let utc = DateTime::parse_from_rfc3339(text)
        .map_err(|_| "the value is not an RFC 3339 date and time".to_owned())?
        .with_timezone(&Utc);
    if !(0..=9999).contains(&chrono::Datelike::year(&utc)) {
        return Err("the value is outside the years 0000 to 9999 in UTC".to_owned());
    }
    Ok(utc.to_rfc3339_opts(SecondsFormat::AutoSi, true))
}

/// `path` against `root`, or why it cannot be there.
fn within_root(root: &str, path: &str) -> Result<String, String> {
    if path.is_empty() || path.contains('\0') {
        return Err("the value is not a path".to_owned());
    }
    // A tool that expands `~` itself would reach a place this text does not name.
    if path.starts_with('~') {
        return Err("the value starts with `~`, which the tool would expand".to_owned());
    }
    let resolved = resolve(root, path);
    let inside = resolved == root
        || root == "/"
        || resolved.strip_prefix(root).is_some_and(|rest| rest.starts_with('/'));
    if inside { Ok(resolved) } else { Err(format!("the value escapes the root \"{root}\"")) }
}

/// `path` made absolute against `base` (absolute itself), `.`, `..` and repeated `/` resolved
/// by their text: links are not followed, for the path may not exist yet.
fn resolve(base: &str, path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    let start = if path.starts_with('/') { "" } else { base };
    for part in start.split('/').chain(path.split('/')) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

/// The exact decimal text of `text` (`[+-]digits[.digits][e[+-]digits]`), or why not.
fn decimal(text: &str) -> Result<String, String> {
    let not = || "the value is not a decimal number".to_owned();
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], unsigned[at + 1..].parse::<i32>().map_err(|_| not())?),
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.len() + fraction.len() == 0 || !digits_only(whole) || !digits_only(fraction) {
        return Err(not());
    }
    // The digits, and where the point falls among them: each leading zero dropped moves it
    // one to the left; trailing zeros dropped leave it.
    let all = format!("{whole}{fraction}");
    let trimmed = all.trim_start_matches('0');
    let dropped = i64::try_from(all.len() - trimmed.len()).map_err(|_| not())?;
    let point = i64::try_from(whole.len()).map_err(|_| not())? + i64::from(exponent) - dropped;
    let digits = trimmed.trim_end_matches('0');
    if digits.is_empty() {
        return Ok("0".to_owned());
    }
    let len = i64::try_from(digits.len()).map_err(|_| not())?;
    let span = point.max(len) - point.min(0);
    if span > MAX_DECIMAL_DIGITS as i64 {
        return Err(format!("the value has more than {MAX_DECIMAL_DIGITS} digits"));
    }
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', point.unsigned_abs() as usize));
        out.push_str(digits);
    } else if point >= len {
        out.push_str(digits);
        out.extend(std::iter::repeat_n('0', (point - len) as usize));
    } else {
        let (int, frac) = digits.split_at(point as usize);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    }
    Ok(out)
}

/// A JSON pointer token with `~1` and `~0` unescaped.
fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn normalizer(rules: &[(&str, Normalization)]) -> Normalizer {
        let rules = rules.iter().map(|(p, n)| ((*p).to_owned(), *n)).collect();
        Normalizer::new("t", &rules, Some("/workspace/")).unwrap()
    }

    #[test]
    fn paths_are_made_absolute_against_the_root_and_may_not_leave_it() {
        let n = normalizer(&[("/path", Normalization::Path)]);
        let run = |path: &str| {
            let mut args = json!({ "path": path });
            let errors = n.apply(&mut args);
            (args["path"].as_str().unwrap().to_owned(), errors)
        };
        assert_eq!(run("src/./a.rs").0, "/workspace/src/a.rs");
        assert_eq!(run("/workspace//src/../src/a.rs").0, "/workspace/src/a.rs");
        assert_eq!(run("src/a.rs").0, run("/workspace/src/x/../a.rs").0);
        assert_eq!(run(".").0, "/workspace");
        for escape in ["../etc/passwd", "/etc/passwd", "/workspace-other/a", "a/../../.."] {
            assert_eq!(
                run(escape).1,
                ["args.path: the value escapes the root \"/workspace\""],
                "{escape}"
            );
        }
        assert_eq!(run("").1, ["args.path: the value is not a path"]);
        assert_eq!(
            run("~/.ssh/id_rsa").1,
            ["args.path: the value starts with `~`, which the tool would expand"]
        );
    }

    #[test]
    fn decimals_are_exact_and_spelled_one_way() {
        let cases = [
            ("1e2", "100"),
            ("100", "100"),
            ("100.00", "100"),
            ("+0100.50", "100.5"),
            ("-0.0", "0"),
            ("0.000", "0"),
            ("1.5E-3", "0.0015"),
            (".5", "0.5"),
            ("12345678901234567890.123456789", "12345678901234567890.123456789"),
            ("-12.5e1", "-125"),
            ("0.0012e3", "1.2"),
            ("5.", "5"),
        ];
        for (text, want) in cases {
            assert_eq!(decimal(text).as_deref(), Ok(want), "{text}");
        }
        for bad in ["", "-", "1e", "1.2.3", "0x10", "NaN", "1e999", " 1", "."] {
            assert!(decimal(bad).is_err(), "{bad}");
        }
        let n = normalizer(&[("/amount", Normalization::Decimal)]);
        let (mut a, mut b) = (json!({"amount": 1e2}), json!({"amount": 100}));
        assert!(n.apply(&mut a).is_empty() && n.apply(&mut b).is_empty());
        assert_eq!((a["amount"].clone(), b["amount"].clone()), (json!("100"), json!("100")));
        let mut long: Value = serde_json::from_str(r#"{"amount": 123456789012345678901}"#).unwrap();
        assert!(n.apply(&mut long)[0].contains("send it as text"), "{long}");
        let mut exact: Value = serde_json::from_str(r#"{"amount": 18446744073709551615}"#).unwrap();
        assert!(n.apply(&mut exact).is_empty(), "a u64 is exact");
        assert_eq!(exact["amount"], "18446744073709551615");
        // One digit, but read as a double from 21: not the digits sent.
        let mut round: Value =
            serde_json::from_str(r#"{"amount": 100000000000000000001}"#).unwrap();
        assert!(n.apply(&mut round)[0].contains("send it as text"), "{round}");
    }

    #[test]
    fn datetimes_become_utc_and_text_lowercase() {
        let n =
            normalizer(&[("/at", Normalization::Datetime), ("/mode", Normalization::Lowercase)]);
        let mut args = json!({"at": "2026-12-02T10:30:00.500+09:00", "mode": "APPEND"});
        assert!(n.apply(&mut args).is_empty());
        assert_eq!(args, json!({"at": "2026-12-02T01:30:00.500Z", "mode": "append"}));
        let mut far = json!({"at": "9999-12-31T23:00:00-05:00"});
        assert_eq!(
            n.apply(&mut far),
            ["args.at: the value is outside the years 0000 to 9999 in UTC"]
        );
        let mut bad = json!({"at": "yesterday", "mode": 3});
        assert_eq!(
            n.apply(&mut bad),
            [
                "args.at: the value is not an RFC 3339 date and time",
                "args.mode: the value is not text to normalize as lowercase",
            ]
        );
    }

    #[test]
    fn a_star_reaches_every_element_and_missing_arguments_are_left_alone() {
        let n = normalizer(&[("/files/*/path", Normalization::Path)]);
        let mut args = json!({"files": [{"path": "a"}, {"path": "../x"}, {}]});
        assert_eq!(
            n.apply(&mut args),
            ["args.files.1.path: the value escapes the root \"/workspace\""]
        );
        assert_eq!(args["files"][0]["path"], "/workspace/a");
        let mut none = json!({"other": 1});
        assert!(n.apply(&mut none).is_empty());
        assert_eq!(none, json!({"other": 1}));
    }

    #[test]
    fn errors_are_capped_and_rules_that_reach_one_value_refused() {
        let n = normalizer(&[("/*", Normalization::Decimal)]);
        let mut many = Value::Object((0..100).map(|i| (format!("k{i}"), json!("x"))).collect());
        assert_eq!(n.apply(&mut many).len(), 8);
        let rules = BTreeMap::from([
            ("/*".to_owned(), Normalization::Lowercase),
            ("/path".to_owned(), Normalization::Path),
        ]);
        let err = Normalizer::new("t", &rules, Some("/w")).unwrap_err();
        assert!(err.to_string().contains("can reach one value"), "{err}");
        let apart = BTreeMap::from([
            ("/a/*".to_owned(), Normalization::Lowercase),
            ("/b".to_owned(), Normalization::Lowercase),
        ]);
        assert!(Normalizer::new("t", &apart, None).is_ok());
    }

    #[test]
    fn a_path_rule_needs_an_absolute_root_and_pointers_a_slash() {
        let rules = |p: &str| BTreeMap::from([(p.to_owned(), Normalization::Path)]);
        assert!(Normalizer::new("t", &rules("/p"), None).is_err());
        assert!(Normalizer::new("t", &rules("/p"), Some("workspace")).is_err());
        assert!(Normalizer::new("t", &rules("p"), Some("/w")).is_err());
        assert!(Normalizer::new("t", &rules("/p"), Some("/")).is_ok());
    }
}
