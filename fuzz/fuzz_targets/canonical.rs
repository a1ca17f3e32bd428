//! The RFC 8785 canonicalizer on any JSON object: canonicalizing twice gives the same bytes;
//! the result parses back to an equal value; and it agrees with a small independent
//! canonicalizer written here from RFC 8785 for everything but the spelling of numbers (both
//! take that from ECMAScript's algorithm; here they are compared as values).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};
use toolgate::request::canonicalize;

/// RFC 8785 section 3.2: members sorted by the UTF-16 code units of their names, no
/// whitespace, strings with only the escapes JSON requires, numbers left as placeholders.
fn independent(value: &Value, out: &mut String, numbers: &mut Vec<f64>) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            numbers.push(n.as_f64().unwrap_or(f64::NAN));
            out.push('#');
        }
        Value::String(s) => string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                independent(item, out, numbers);
            }
            out.push(']');
        }
        Value::Object(members) => {
            let mut names: Vec<&String> = members.keys().collect();
            names.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, name) in names.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                string(name, out);
                out.push(':');
                independent(&members[name], out, numbers);
            }
            out.push('}');
        }
    }
}

fn string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The same text with every number replaced by `#`, and the numbers.
fn numbers_out(canonical: &str) -> (String, Vec<f64>) {
    let parsed: Value = serde_json::from_str(canonical).expect("canonical JSON parses");
    let (mut text, mut numbers) = (String::new(), Vec::new());
    independent(&parsed, &mut text, &mut numbers);
    (text, numbers)
}

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Object(args)) = serde_json::from_slice::<Value>(data) else { return };
    let Ok(first) = canonicalize(&args) else { return };
    let reparsed: Map<String, Value> =
        serde_json::from_str(&first.json).expect("the canonical form is JSON");
    let second = canonicalize(&reparsed).expect("the canonical form canonicalizes");
    assert_eq!(first.json, second.json, "canonicalizing twice");
    assert_eq!(first.hash, second.hash);

    let (mut expected, mut numbers) = (String::new(), Vec::new());
    independent(&Value::Object(args), &mut expected, &mut numbers);
    let (got, got_numbers) = numbers_out(&first.json);
    assert_eq!(got, expected, "structure, member order or string escapes differ");
    assert_eq!(numbers.len(), got_numbers.len());
    for (a, b) in numbers.iter().zip(&got_numbers) {
        // I-JSON numbers are doubles: the canonical spelling must read back as the same one.
        assert!(a == b || (a.is_nan() && b.is_nan()), "number {a} became {b}");
    }
});
