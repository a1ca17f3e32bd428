//! JSON-RPC 2.0 messages as the gateway sees them: parsed only far enough to tell a request
//! from a notification from a response, and relayed as the bytes they came as. The gateway
//! builds only the messages it answers itself.

use serde_json::{Value, json};

/// JSON-RPC's error codes the gateway answers with.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;

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

impl Message {
    /// Classifies one line.
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
        let params = object.get("params").cloned().unwrap_or(Value::Null);
        match (object.get("method").and_then(Value::as_str), object.get("id")) {
            (Some(method), Some(id)) if id.is_string() || id.is_number() => {
                Some(Self::Request { id: id.clone(), method: method.to_owned(), params })
            }
            (Some(method), None) => Some(Self::Notification { method: method.to_owned(), params }),
            (None, Some(id)) if object.contains_key("result") || object.contains_key("error") => {
                Some(Self::Response { id: id.clone() })
            }
            _ => None,
        }
    }
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

/// A map key for a request id: ids are strings or numbers, and `1` and `"1"` are two ids.
pub fn key(id: &Value) -> String {
    id.to_string()
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
    fn ids_one_and_one_as_text_are_two_keys() {
        assert_ne!(key(&json!(1)), key(&json!("1")));
    }
}
