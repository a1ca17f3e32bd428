//! A request's JSON objects (`args_json`, `context_json`) read strictly, so that no two texts
//! a harness could run differently are ever read, and so hashed, as one: a key given twice at
//! any depth is refused (a harness that reads the first would run another call than the one
//! decided), and so is a number whose text says more than the double it is read into holds
//! (`1e-400` read as `0`, `0.1000000000000000055511151231257827` as `0.1`). Both with the
//! path of the value. What canonical JSON would write alike after that (`1.0` and `1`, `-0`
//! and `0`) is refused when the arguments are hashed (`canonical`).

use std::collections::HashSet;
use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// How deep a request's JSON may nest.
const MAX_DEPTH: usize = 128;
/// The longest key a path names before it is cut.
const MAX_KEY_CHARS: usize = 64;

/// Why a JSON object was refused.
#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    #[error("must be a JSON object")]
    NotObject,
    #[error("must be a JSON object: {0}")]
    Syntax(#[from] serde_json::Error),
    #[error("`{0}`: a key given twice: which one the tool reads is the harness's guess")]
    Duplicate(String),
    #[error(
        "`{path}`: the number `{written}` says more than a JSON number (a double) carries: it \
         would be read as `{read}`; send it as text"
    )]
    Inexact { path: String, written: String, read: String },
    #[error("`{0}`: nested deeper than {MAX_DEPTH} levels")]
    Deep(String),
}

/// Reads `text` as a JSON object, strictly; `root` names it in paths (`args`, `context`).
pub fn object(root: &str, text: &str) -> Result<Map<String, Value>, JsonError> {
    let raw: &RawValue = serde_json::from_str(text)?;
    let mut path = root.to_owned();
    match read(raw, &mut path, 0)? {
        Value::Object(map) => Ok(map),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Array(_) => {
            Err(JsonError::NotObject)
        }
    }
}

/// One value, its members and items read one level at a time from their own text.
fn read(raw: &RawValue, path: &mut String, depth: usize) -> Result<Value, JsonError> {
    if depth > MAX_DEPTH {
        return Err(JsonError::Deep(path.clone()));
    }
    let text = raw.get();
    let at = path.len();
    match text.as_bytes().first() {
        Some(b'{') => {
            let Members(members) = serde_json::from_str(text)?;
            let mut seen = HashSet::with_capacity(members.len());
            let mut map = Map::new();
            for (key, value) in members {
                step(path, at, &key);
                if !seen.insert(key.clone()) {
                    return Err(JsonError::Duplicate(path.clone()));
                }
                map.insert(key, read(value, path, depth + 1)?);
            }
            path.truncate(at);
            Ok(Value::Object(map))
        }
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_str(text)?;
            let mut values = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                step(path, at, &i.to_string());
                values.push(read(item, path, depth + 1)?);
            }
            path.truncate(at);
            Ok(Value::Array(values))
        }
        Some(b'-' | b'0'..=b'9') => {
            let value: Value = serde_json::from_str(text)?;
            exact(text, &value).map_err(|read| JsonError::Inexact {
                path: path.clone(),
                written: text.chars().take(48).collect(),
                read,
            })?;
            Ok(value)
        }
        _ => Ok(serde_json::from_str(text)?),
    }
}

fn step(path: &mut String, at: usize, name: &str) {
    path.truncate(at);
    path.push('.');
    path.extend(name.chars().take(MAX_KEY_CHARS));
}

/// Whether the number written `text`, read as `value`, is the value its text says; otherwise
/// what it was read as. Integers read as integers are exact; a double is exact when its
/// shortest form (as canonical JSON writes it) is the decimal written.
fn exact(text: &str, value: &Value) -> Result<(), String> {
    let Value::Number(n) = value else { return Ok(()) };
    let Some(double) = n.as_f64().filter(|_| n.is_f64()) else { return Ok(()) };
    let shortest = serde_jcs::to_string(&double).unwrap_or_default();
    match decimal(text) == decimal(&shortest) {
        true => Ok(()),
        false => Err(shortest),
    }
}

/// A decimal numeral's value as (negative, significant digits, exponent of the last digit),
/// zeros stripped both sides, so that two spellings of one value compare equal; zero is
/// `(false, "", 0)` whatever its sign.
fn decimal(text: &str) -> (bool, String, i64) {
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(e) => (&text[..e], text[e + 1..].parse::<i64>().unwrap_or(0)),
        None => (text, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{whole}{fraction}");
    let exponent = exponent - fraction.len() as i64;
    let trimmed = digits.trim_end_matches('0');
    let exponent = exponent + (digits.len() - trimmed.len()) as i64;
    let significant = trimmed.trim_start_matches('0').to_owned();
    match significant.is_empty() {
        true => (false, String::new(), 0),
        false => (negative, significant, exponent),
    }
}

/// An object's members in the order written, duplicates kept (a map would keep one).
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Of<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Of<'a> {
            type Value = Members<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Members<'a>, M::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, &'de RawValue>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Of(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> String {
        object("args", text).map(|_| ()).unwrap_err().to_string()
    }

    #[test]
    fn a_key_given_twice_is_refused_at_any_depth_with_its_path() {
        assert!(refused(r#"{"path":"secret.key","path":"ok.txt"}"#).starts_with("`args.path`"));
        let nested = refused(r#"{"a":[{"b":{"d":1,"d":2}}]}"#);
        assert!(nested.starts_with("`args.a.0.b.d`: a key given twice"), "{nested}");
        // Escapes are read before keys are compared.
        assert!(refused(r#"{"ab":1,"a\u0062":2}"#).contains("twice"));
        assert!(object("args", r#"{"a":{"d":1},"b":{"d":2}}"#).is_ok());
    }

    #[test]
    fn a_number_whose_text_says_more_than_its_double_is_refused() {
        for text in [
            r#"{"a":1e-400}"#,
            r#"{"a":0.1000000000000000055511151231257827}"#,
            r#"{"a":[1, 18446744073709551616]}"#,
            r#"{"a":9007199254740993.0}"#,
        ] {
            let why = refused(text);
            assert!(why.contains("says more than a JSON number"), "{text}: {why}");
        }
        assert!(refused(r#"{"a":{"b":1e-400}}"#).starts_with("`args.a.b`"));
        for exact in ["0.1", "0.10", "1E-7", "1e-07", "5e-324", "1.5", "-2.5e3", "1.0", "-0", "0"] {
            let text = format!(r#"{{"a":{exact}}}"#);
            assert!(object("args", &text).is_ok(), "{exact}");
        }
    }

    #[test]
    fn only_objects_are_taken_and_nesting_is_bounded() {
        assert!(matches!(object("args", "[1]"), Err(JsonError::NotObject)));
        assert!(matches!(object("args", "{"), Err(JsonError::Syntax(_))));
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(120), "]".repeat(120));
        assert!(object("args", &deep).is_ok());
        let deeper = format!("{{\"a\":{}1{}}}", "[".repeat(200), "]".repeat(200));
        assert!(object("args", &deeper).is_err());
    }
}
