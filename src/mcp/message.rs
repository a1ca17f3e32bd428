//! JSON-RPC 2.0 messages as the gateway sees them: parsed only far enough to tell a request
//! from a notification from a response, and relayed as the bytes they came as. The gateway
//! builds only the messages it answers itself.

use serde_json::{Value, json};

/// JSON-RPC's error codes the gateway answers with.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INTERNAL_ERROR: i64 = -32603;

/// Why the gateway answers a `tasks/*` request itself.
pub const NO_TASKS: &str =
    "toolgate runs every tool call as a plain call, so there is no task to ask the server about";

/// JSON-RPC's members.
const MEMBERS: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];

/// What a line is.
#[derive(Debug)]
pub enum Message {
    /// A request: it has a method and an id.
    Request { id: Value, method: String, params: Value },
    /// A notification: a method, no id.
    Notification { method: String, params: Value },
    /// A response: an id, and a result or an error.
    Response { id: Value },
}

/// Why a line is not a message.
#[derive(Debug, thiserror::Error)]
pub enum BadMessage {
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("a JSON-RPC batch: batches were removed from MCP in its 2025-06-18 revision")]
    Batch,
    #[error("not a JSON-RPC 2.0 message")]
    Shape,
}

impl BadMessage {
    /// The JSON-RPC error code it is answered with.
    pub fn code(&self) -> i64 {
        match self {
            Self::Json(_) => PARSE_ERROR,
            _ => INVALID_REQUEST,
        }
    }
}

impl Message {
    /// Classifies one line. The value is what is relayed, as the gateway read it (a duplicate
    /// key, which decoders resolve differently, is then gone), never the bytes as they came.
    pub fn parse(line: &str) -> Result<(Self, Value), BadMessage> {
        let value: Value = serde_json::from_str(line)?;
        if value.is_array() {
            return Err(BadMessage::Batch);
        }
        let message = Self::of(&value).ok_or(BadMessage::Shape)?;
        Ok((message, value))
    }

    fn of(value: &Value) -> Option<Self> {
        let object = value.as_object()?;
        if object.get("jsonrpc")? != "2.0" {
            return None;
        }
        // A member spelt in another case (`"ID"`, `"Method"`) is a message that a peer whose
        // JSON decoder matches keys without case would read otherwise than the gateway did.
        let ambiguous = |key: &String| {
            MEMBERS.iter().any(|member| member.eq_ignore_ascii_case(key) && member != key)
        };
        if object.keys().any(ambiguous) {
            return None;
        }
        let params = object.get("params").cloned().unwrap_or(Value::Null);
        match (object.get("method").and_then(Value::as_str), object.get("id")) {
            (Some(method), Some(id)) if id.is_string() || id.is_number() => {
                Some(Self::Request { id: id.clone(), method: method.to_owned(), params })
            }
            // A call must have an id to be answered, and the gateway answers every call.
            (Some(method), None) if method != "tools/call" => {
                Some(Self::Notification { method: method.to_owned(), params })
            }
            // Exactly one of the two: a client could read either.
            (None, Some(id)) if object.contains_key("result") != object.contains_key("error") => {
                Some(Self::Response { id: id.clone() })
            }
            _ => None,
        }
    }
}

/// Whether `message` is a request about MCP's tasks (`tasks/get`, `tasks/result`, …): a
/// task's result would reach the client past the gate's output limit and record.
pub fn is_task_request(message: &Value) -> bool {
    message.get("method").and_then(Value::as_str).is_some_and(|m| m.starts_with("tasks/"))
}

/// A response carrying `result`.
pub fn result(id: &Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// A response carrying an error.
pub fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

/// The notification that cancels request `id` (MCP's `notifications/cancelled`).
pub fn cancelled(id: &Value, reason: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": { "requestId": id, "reason": reason },
    })
}

/// A map key for a request id: ids are strings or numbers, `1` and `"1"` are two ids, and
/// `1`, `1.0` and `1e0` one (a peer may echo any of them).
pub fn key(id: &Value) -> String {
    let Value::Number(n) = id else { return id.to_string() };
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    match n.as_f64() {
        #[allow(clippy::cast_possible_truncation)] // whole, and within i64's exact range
        Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => (f as i64).to_string(),
        _ => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_told_apart() {
        let (m, _) = Message::parse(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}"#,
        )
        .unwrap();
        assert!(matches!(m, Message::Request { ref method, .. } if method == "tools/call"));
        let (m, _) =
            Message::parse(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert!(matches!(m, Message::Notification { .. }));
        let (m, _) = Message::parse(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#).unwrap();
        assert!(matches!(m, Message::Response { id } if id == "a"));
        assert!(matches!(Message::parse("[]"), Err(BadMessage::Batch)));
        assert!(matches!(Message::parse("{"), Err(BadMessage::Json(_))));
        for shape in [
            r#"{"id":1,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            "3",
        ] {
            assert!(matches!(Message::parse(shape), Err(BadMessage::Shape)), "{shape}");
        }
    }

    #[test]
    fn ids_one_and_one_as_text_are_two_keys_and_one_spelt_as_a_float_is_one() {
        assert_ne!(key(&json!(1)), key(&json!("1")));
        assert_eq!(key(&json!(1)), key(&serde_json::from_str::<Value>("1.0").unwrap()));
        assert_eq!(key(&json!(1)), key(&serde_json::from_str::<Value>("1e0").unwrap()));
        assert_ne!(key(&json!(1.5)), key(&json!(1)));
    }

    #[test]
    fn members_in_another_case_and_calls_without_an_id_are_refused() {
        for line in [
            r#"{"jsonrpc":"2.0","ID":1,"method":"tools/call","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"Method":"tools/call","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}"#,
        ] {
            assert!(matches!(Message::parse(line), Err(BadMessage::Shape)), "{line}");
        }
        // A duplicate key: what is relayed is what the gateway read.
        let (m, value) =
            Message::parse(r#"{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}"#)
                .unwrap();
        assert!(matches!(m, Message::Request { ref method, .. } if method == "tools/call"));
        assert_eq!(value.to_string().matches("method").count(), 1);
    }
}
