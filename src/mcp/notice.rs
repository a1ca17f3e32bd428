//! The server's notifications on their way to the client, bounded: what a server sends while a
//! call runs reaches the client (and may reach the model) beside the call's result, so it is
//! held to a limit of its own. A progress note's `message` and a log message's `data` are cut
//! to it; any other notification over it is dropped. Either is recorded (folded, as every
//! refusal of a peer is).

use serde_json::{Value, json};

/// What became of a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bounded {
    Kept,
    Cut,
    Dropped,
}

/// Bounds `notification` to `max_chars` characters of what it says (its compact JSON).
pub fn bound(notification: &mut Value, max_chars: usize) -> Bounded {
    if chars(notification) <= max_chars {
        return Bounded::Kept;
    }
    let method = notification.get("method").and_then(Value::as_str).unwrap_or_default();
    let field = match method {
        "notifications/progress" => "message",
        "notifications/message" => "data",
        _ => return Bounded::Dropped,
    };
    let Some(params) = notification.get_mut("params").and_then(Value::as_object_mut) else {
        return Bounded::Dropped;
    };
    params.remove("_meta");
    let said = params.remove(field);
    let rest = chars(notification);
    let Some(room) = max_chars.checked_sub(rest + field.len() + 8) else { return Bounded::Dropped };
    let said = match said {
        Some(Value::String(text)) => Value::String(text.chars().take(room).collect()),
        Some(other) => {
            let text = other.to_string();
            Value::String(
                text.chars().take(room.saturating_sub(20)).collect::<String>()
                    + " (cut by toolgate)",
            )
        }
        None => json!(null),
    };
    if let Some(params) = notification.get_mut("params").and_then(Value::as_object_mut) {
        params.insert(field.to_owned(), said);
    }
    Bounded::Cut
}

fn chars(value: &Value) -> usize {
    value.to_string().chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_progress_message_or_log_is_cut_and_anything_else_long_dropped() {
        let big = "x".repeat(10_000);
        let mut progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": 1, "progress": 5, "message": big, "_meta": {"m": big}}});
        assert_eq!(bound(&mut progress, 500), Bounded::Cut);
        assert!(progress.to_string().len() <= 500, "{}", progress.to_string().len());
        assert_eq!(progress["params"]["progressToken"], 1);

        let mut log = json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": {"out": big}}});
        assert_eq!(bound(&mut log, 500), Bounded::Cut);
        assert!(log.to_string().len() <= 500);
        assert!(log["params"]["data"].as_str().unwrap().ends_with("(cut by toolgate)"));

        let mut other = json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"uri": big}});
        assert_eq!(bound(&mut other, 500), Bounded::Dropped);
        let mut small = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        assert_eq!(bound(&mut small, 500), Bounded::Kept);
    }
}
