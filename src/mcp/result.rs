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

/// What of a result counts toward its one limit, in order, as one text: every string a server
/// sends the client, whatever block or member carries it — each text in characters, base64
/// data and blobs as their bytes (ASCII: one character each), and every other member
/// (`structuredContent`, `_meta`, annotations, icons, members MCP does not define) as its
/// compact JSON. A block's `type`, and the result's `isError` and `resultType`, say nothing.
/// At most `cap` characters are kept; with them, how many there are in all.
pub fn counted(result: &Value, cap: usize) -> (String, usize) {
    let mut counter = Counter { kept: String::new(), cap, total: 0 };
    for (name, member) in result.as_object().into_iter().flatten() {
        match name.as_str() {
            "content" => {
                for block in member.as_array().into_iter().flatten() {
                    counter.block(block);
                }
            }
            "isError" | "resultType" => {}
            "_meta" => counter.meta(member),
            _ => counter.value(member),
        }
    }
    (counter.kept, counter.total)
}

/// The characters of a result's counted text (see [`counted`]).
fn measure(result: &Value) -> usize {
    counted(result, 0).1
}

/// The characters of a value, as [`counted`] counts them.
fn weight(value: &Value) -> usize {
    let mut counter = Counter { kept: String::new(), cap: 0, total: 0 };
    counter.value(value);
    counter.total
}

/// The characters of a block, as [`counted`] counts them.
fn block_weight(block: &Value) -> usize {
    let mut counter = Counter { kept: String::new(), cap: 0, total: 0 };
    counter.block(block);
    counter.total
}

struct Counter {
    kept: String,
    cap: usize,
    total: usize,
}

impl Counter {
    fn text(&mut self, text: &str) {
        if self.total < self.cap {
            self.kept.extend(text.chars().take(self.cap - self.total));
        }
        self.total += text.chars().count();
    }

    fn value(&mut self, value: &Value) {
        match value {
            Value::String(text) => self.text(text),
            other => self.text(&other.to_string()),
        }
    }

    /// A block: each member but its `type`; an embedded resource's members one by one.
    fn block(&mut self, block: &Value) {
        let Some(members) = block.as_object() else { return self.value(block) };
        for (name, member) in members {
            match (name.as_str(), member) {
                ("type", _) => {}
                ("resource", Value::Object(resource)) => {
                    resource.values().for_each(|v| self.value(v));
                }
                _ => self.value(member),
            }
        }
    }

    /// A result's `_meta`: toolgate's own facts are not the server's.
    fn meta(&mut self, meta: &Value) {
        match meta.as_object() {
            Some(members) => {
                let theirs: Map<String, Value> = members
                    .iter()
                    .filter(|(k, _)| !k.starts_with("toolgate/"))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                if !theirs.is_empty() {
                    self.value(&Value::Object(theirs));
                }
            }
            None => self.value(meta),
        }
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

/// Cuts `result` to `max_chars` characters in all, as [`counted`] counts them. Over it, what
/// no model reads as the output but would hand it the output again (`structuredContent`, the
/// server's `_meta` at every level, annotations, members MCP does not define) is removed
/// first; then the blocks are kept in order while the budget lasts: a text (or an embedded
/// resource's text) that crosses it is cut at a character boundary, and later texts emptied;
/// any other block (an image, audio, a blob, a resource link) is kept whole if it fits, and
/// removed if it does not. Says so in `_meta`. Whether it was cut.
pub fn cut(result: &mut Value, max_chars: usize) -> bool {
    let total = measure(result);
    if total <= max_chars {
        return false;
    }
    let Some(object) = result.as_object_mut() else { return true };
    let dropped = object.remove("structuredContent").is_some();
    object.retain(|name, _| matches!(name.as_str(), "content" | "isError" | "resultType"));
    let mut left = max_chars;
    let mut removed = 0;
    if let Some(Value::Array(content)) = object.get_mut("content") {
        content.retain_mut(|block| {
            let kept = keep(block, &mut left);
            removed += usize::from(!kept);
            kept
        });
    }
    let mut meta = Map::new();
    meta.insert("toolgate/truncated".into(), json!(true));
    meta.insert("toolgate/originalChars".into(), json!(total));
    meta.insert("toolgate/maxChars".into(), json!(max_chars));
    if dropped {
        meta.insert("toolgate/structuredContentRemoved".into(), json!(true));
    }
    if removed > 0 {
        meta.insert("toolgate/blocksRemoved".into(), json!(removed));
    }
    object.insert("_meta".into(), Value::Object(meta));
    true
}

/// Whether `block` stays, cut to the `left` characters of the budget (which it spends).
fn keep(block: &mut Value, left: &mut usize) -> bool {
    let Some(members) = block.as_object_mut() else { return false };
    members.remove("_meta");
    members.remove("annotations");
    let kind = members.get("type").and_then(Value::as_str).unwrap_or_default().to_owned();
    let text = match kind.as_str() {
        "text" => {
            members.retain(|name, _| matches!(name.as_str(), "type" | "text"));
            members.get_mut("text")
        }
        "resource" => match members.get_mut("resource").and_then(Value::as_object_mut) {
            Some(resource) if resource.get("text").is_some_and(Value::is_string) => {
                resource.retain(|name, _| matches!(name.as_str(), "uri" | "mimeType" | "text"));
                let fixed: usize =
                    resource.iter().filter(|(n, _)| *n != "text").map(|(_, v)| weight(v)).sum();
                if fixed > *left {
                    return false;
                }
                *left -= fixed;
                resource.get_mut("text")
            }
            _ => None,
        },
        _ => None,
    };
    match text {
        Some(Value::String(text)) => {
            match text.char_indices().nth(*left) {
                Some((at, _)) => {
                    text.truncate(at);
                    *left = 0;
                }
                None => *left -= text.chars().count(),
            }
            true
        }
        // A text block whose text is no string says nothing the model reads as text.
        Some(_) => false,
        None => {
            let cost = block_weight(block);
            let fits = cost <= *left;
            if fits {
                *left -= cost;
            }
            fits
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_within_its_budget_is_untouched() {
        let mut result =
            json!({"content": [{"type": "text", "text": "héllo"}], "structuredContent": {"a": 1}});
        let before = result.clone();
        assert!(!cut(&mut result, 12));
        assert_eq!(result, before);
    }

    #[test]
    fn texts_are_cut_in_characters_across_blocks_and_what_does_not_fit_goes() {
        let mut result = json!({
            "content": [
                {"type": "text", "text": "ééé", "annotations": {"audience": ["user"]}},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "f:x", "text": "ñññ", "_meta": {"m": 1}}},
                {"type": "text", "text": "gone"},
            ],
            "structuredContent": {"a": 1},
            "_meta": {"theirs": 1},
        });
        let total = counted(&result, 0).1;
        assert!(cut(&mut result, 8));
        // 3 characters of text; the image's 4 + 9 do not fit; the resource's uri (3) and two
        // characters of its text; then nothing.
        assert_eq!(result["content"][0], json!({"type": "text", "text": "ééé"}));
        assert_eq!(result["content"][1]["resource"], json!({"uri": "f:x", "text": "ññ"}));
        assert_eq!(result["content"][2]["text"], "");
        assert_eq!(result["content"].as_array().unwrap().len(), 3);
        assert!(result.get("structuredContent").is_none());
        assert_eq!(result["_meta"]["toolgate/truncated"], true);
        assert_eq!(result["_meta"]["toolgate/originalChars"], total);
        assert_eq!(result["_meta"]["toolgate/blocksRemoved"], 1);
        assert!(result["_meta"].get("theirs").is_none());
        assert!(counted(&result, 0).1 <= 8, "what is left is within the limit");
    }

    /// The review's attack: the output hidden where a cut of texts alone never looked.
    #[test]
    fn every_place_a_server_can_put_output_counts_toward_the_limit() {
        let big = "x".repeat(200_000);
        let hiding = [
            json!({"content": [{"type": "resource_link", "uri": "f:x", "name": "n", "description": big}]}),
            json!({"content": [{"type": "resource", "resource": {"uri": "f:x", "blob": big}}]}),
            json!({"content": [{"type": "image", "data": big, "mimeType": "image/png"}]}),
            json!({"content": [{"type": "text", "text": "ok", "_meta": {"out": big}}]}),
            json!({"content": [{"type": "text", "text": "ok"}], "_meta": {"out": big}}),
            json!({"content": [{"type": "text", "text": "ok"}], "structuredContent": {"out": big}}),
            json!({"content": [{"type": "text", "text": "ok"}], "extra": big}),
        ];
        for mut result in hiding {
            let before = result.to_string().len();
            assert!(cut(&mut result, 1000), "{}", &result.to_string()[..80]);
            let after = result.to_string();
            assert!(
                after.len() < 2000,
                "{before} bytes to {}: {}",
                after.len(),
                &after[..200.min(after.len())]
            );
            assert!(counted(&result, 0).1 <= 1000);
        }
    }

    #[test]
    fn structured_content_over_the_budget_is_dropped_even_when_the_text_is_short() {
        let mut result = json!({"content": [{"type": "text", "text": "ok"}], "structuredContent": {"a": "x".repeat(100)}});
        assert!(cut(&mut result, 50));
        assert!(result.get("structuredContent").is_none());
        assert_eq!(result["content"][0]["text"], "ok");
        assert_eq!(result["_meta"]["toolgate/structuredContentRemoved"], true);
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
        assert_eq!(counted(&result, 10).0, "no");
    }
}
