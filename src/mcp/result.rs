//! The tool results the gateway writes: its own answers to calls it does not relay (a tool
//! error the model can read, as MCP asks for errors the model should see), and an upstream
//! result cut to the decision's `max_output_chars`. toolgate's facts about a result go in its
//! `_meta`, under the `toolgate/` prefix.

use serde_json::{Map, Value, json};

/// A tool result that says `text` to the model and is an error, with toolgate's facts.
pub fn tool_error(text: &str, meta: Map<String, Value>) -> Value {
    json!({
        "content": [{ "type": "text", "text": text }],
        "isError": true,
        "_meta": meta,
    })
}

/// The text of a result: its text blocks and its embedded resources' text, in order.
pub fn text(result: &Value) -> String {
    let mut text = String::new();
    for block in blocks(result) {
        if let Some(piece) = block_text(block) {
            text.push_str(piece);
        }
    }
    text
}

fn blocks(result: &Value) -> impl Iterator<Item = &Value> {
    result.get("content").and_then(Value::as_array).into_iter().flatten()
}

fn block_text(block: &Value) -> Option<&str> {
    match block.get("type").and_then(Value::as_str)? {
        "text" => block.get("text")?.as_str(),
        "resource" => block.get("resource")?.get("text")?.as_str(),
        _ => None,
    }
}

fn block_text_mut(block: &mut Value) -> Option<&mut Value> {
    match block.get("type").and_then(Value::as_str)? {
        "text" => block.get_mut("text"),
        "resource" => block.get_mut("resource")?.get_mut("text"),
        _ => None,
    }
}

/// Whether `result` is a tool result (MCP's `CallToolResult`: a `content` array), as opposed to
/// a task or anything else a server may answer a call with.
pub fn is_tool_result(result: &Value) -> bool {
    result.get("content").is_some_and(Value::is_array)
}

/// Cuts an error response's message to `max_chars` characters and drops its `data`, which the
/// client may show the model as well.
pub fn cut_error(response: &mut Value, max_chars: usize) {
    let Some(error) = response.get_mut("error").and_then(Value::as_object_mut) else { return };
    error.remove("data");
    if let Some(Value::String(message)) = error.get_mut("message")
        && let Some((at, _)) = message.char_indices().nth(max_chars)
    {
        message.truncate(at);
    }
}

/// Cuts `result`'s text to `max_chars` characters in all: each text is kept whole while the
/// budget lasts, the one that crosses it is cut at a character boundary, and the texts after
/// it are emptied. A cut result loses its `structuredContent` (which would hand the model the
/// whole output again) and says so in `_meta`. Whether it was cut.
pub fn cut(result: &mut Value, max_chars: usize) -> bool {
    let total: usize = blocks(result).filter_map(block_text).map(|t| t.chars().count()).sum();
    // `structuredContent` is the output again, as JSON: within the budget or not at all.
    let structured = result.get("structuredContent").map_or(0, |s| s.to_string().chars().count());
    if total <= max_chars && structured <= max_chars {
        return false;
    }
    let mut left = max_chars;
    if let Some(content) = result.get_mut("content").and_then(Value::as_array_mut) {
        for block in content {
            let Some(Value::String(text)) = block_text_mut(block) else { continue };
            match text.char_indices().nth(left) {
                Some((at, _)) => {
                    text.truncate(at);
                    left = 0;
                }
                None => left -= text.chars().count(),
            }
        }
    }
    let Some(object) = result.as_object_mut() else { return true };
    let dropped = object.remove("structuredContent").is_some();
    let meta = object.entry("_meta").or_insert_with(|| json!({}));
    if let Some(meta) = meta.as_object_mut() {
        meta.insert("toolgate/truncated".into(), json!(true));
        meta.insert("toolgate/originalChars".into(), json!(total));
        meta.insert("toolgate/maxChars".into(), json!(max_chars));
        if dropped {
            meta.insert("toolgate/structuredContentRemoved".into(), json!(true));
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_within_its_budget_is_untouched() {
        let mut result =
            json!({"content": [{"type": "text", "text": "héllo"}], "structuredContent": {"a": 1}});
        let before = result.clone();
        assert!(!cut(&mut result, 8));
        assert_eq!(result, before);
    }

    #[test]
    fn texts_are_cut_in_characters_across_blocks() {
        let mut result = json!({
            "content": [
                {"type": "text", "text": "ééé"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///x", "text": "ñññ"}},
                {"type": "text", "text": "gone"},
            ],
            "structuredContent": {"a": 1},
            "_meta": {"theirs": 1},
        });
        assert!(cut(&mut result, 4));
        assert_eq!(text(&result), "éééñ");
        assert_eq!(result["content"][1]["data"], "AAAA");
        assert_eq!(result["content"][3]["text"], "");
        assert!(result.get("structuredContent").is_none());
        assert_eq!(result["_meta"]["theirs"], 1);
        assert_eq!(result["_meta"]["toolgate/truncated"], true);
        assert_eq!(result["_meta"]["toolgate/originalChars"], 10);
        assert_eq!(result["_meta"]["toolgate/structuredContentRemoved"], true);
    }

    #[test]
    fn structured_content_over_the_budget_is_dropped_even_when_the_text_is_short() {
        let mut result = json!({"content": [{"type": "text", "text": "ok"}], "structuredContent": {"a": "x".repeat(100)}});
        assert!(cut(&mut result, 50));
        assert!(result.get("structuredContent").is_none());
        assert_eq!(text(&result), "ok");
    }

    #[test]
    fn an_error_is_cut_and_loses_its_data() {
        let mut response = json!({"error": {"code": 1, "message": "é".repeat(10), "data": "x"}});
        cut_error(&mut response, 3);
        assert_eq!(response, json!({"error": {"code": 1, "message": "ééé"}}));
        assert!(is_tool_result(&json!({"content": []})));
        assert!(!is_tool_result(&json!({"task": {"taskId": "t"}})));
    }

    #[test]
    fn a_tool_error_is_a_result_the_model_reads() {
        let result = tool_error("no", Map::new());
        assert_eq!(result["isError"], true);
        assert_eq!(text(&result), "no");
    }
}
