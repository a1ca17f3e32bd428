"""A scripted model for the coding-agent CLIs: one HTTP server on 127.0.0.1 that speaks each
agent's model API well enough for a headless run, and records every request.

- Anthropic Messages (Claude Code): `POST /v1/messages` (SSE or not), `GET /api/hello`;
- OpenAI Responses (Codex CLI): `POST /v1/responses` (SSE);
- Gemini (Gemini CLI): `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`, and
  `:generateContent`, `:countTokens` for its helper calls;
- OpenAI Chat Completions (Qwen Code, Copilot CLI, OpenCode): `POST /v1/chat/completions`
  (SSE or not).

The script is one command line. A request that offers the agent's shell tool, while its
conversation holds no tool result yet, is answered with a call of that tool running the
command; any other request (the tool's result came back, OpenCode's title request, a helper
call) with a final text. Every request is kept, so that a test can read the tool results the
agent sent its model after the call: the command's output, or why it did not run.

`python model.py COMMAND` serves one on a free port and prints its URL, to drive an agent by
hand.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import traceback
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FINAL = "All done."
TITLE = "Running a command"

# The shell tools, by the name each agent gives its model.
SHELL_TOOLS = ("Bash", "exec_command", "run_shell_command", "bash")


def shell_call(tool: str, command: str) -> dict[str, Any]:
    """The arguments of a call of the shell tool `tool` running `command`, as that agent takes
    them."""
    if tool == "exec_command":  # Codex CLI
        return {"cmd": command}
    if tool == "bash":  # Copilot CLI and OpenCode: a description is required
        return {"command": command, "description": "Run the command"}
    return {"command": command}  # Claude Code's Bash; Gemini CLI's and Qwen Code's run_shell_command


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: Any
    # The arguments of the shell call it was answered with, if it was.
    call: dict[str, Any] | None = None


class Model:
    """The scripted model, once `start()`ed at `url` (`http://127.0.0.1:PORT`)."""

    def __init__(self, command: str):
        self.command = command
        self.requests: list[Request] = []
        # The tracebacks of the requests it failed to answer: the script's own faults.
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._ids = 0
        self._server: _Server | None = None

    def start(self) -> Model:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.model = self
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None, "not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def new_id(self) -> str:
        with self._lock:
            self._ids += 1
            return f"{self._ids}{uuid.uuid4().hex[:12]}"

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    # What a test reads back.

    def calls(self) -> list[Request]:
        """The requests answered with the shell call."""
        with self._lock:
            return [r for r in self.requests if r.call is not None]

    def after_call(self) -> list[Request]:
        """The requests after the first one answered with the shell call."""
        with self._lock:
            first = next((i for i, r in enumerate(self.requests) if r.call is not None), None)
            return [] if first is None else self.requests[first + 1 :]

    def results_after_call(self) -> list[str]:
        """The tool results the agent sent its model after the shell call, each once."""
        results: list[str] = []
        for request in self.after_call():
            results += [r for r in tool_results(request.body) if r not in results]
        return results

    def transcript(self) -> str:
        """The requests, one line each, and the script's errors: for a failure's message."""
        with self._lock:
            lines = [
                f"{r.path}{' -> the shell call' if r.call else ''}: {json.dumps(r.body)[:300]}"
                for r in self.requests
            ]
            return "\n".join(self.errors + lines)


def tool_results(body: Any) -> list[str]:
    """The tool results in a request's body, in any of the four APIs, as text."""
    if not isinstance(body, dict):
        return []
    results = []
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool":  # Chat Completions
            results.append(_text(message.get("content")))
        elif isinstance(message.get("content"), list):  # Anthropic Messages
            results += [
                _text(block.get("content"))
                for block in message["content"]
                if isinstance(block, dict) and block.get("type") == "tool_result"
            ]
    for item in body.get("input") or []:  # Responses
        if isinstance(item, dict) and str(item.get("type", "")).endswith("_call_output"):
            results.append(_text(item.get("output")))
    for content in body.get("contents") or []:  # Gemini
        for part in content.get("parts") or []:
            if "functionResponse" in part:
                results.append(_text(part["functionResponse"].get("response")))
    return results


def _text(value: Any) -> str:
    """A string, the text of a list of blocks, or else the JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(v.get("text", v) if isinstance(v, dict) else v) for v in value)
    return json.dumps(value)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    model: Model

    def handle_error(self, request, client_address):
        # A client that hung up is no news; anything else is the script's fault, and shown.
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            self.model.errors.append(traceback.format_exc())


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    @property
    def model(self) -> Model:
        return self.server.model

    # HTTP.

    def _body(self) -> Any:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _json(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: list[tuple[str | None, Any]]) -> None:
        """Server-sent events, `(name or None, data)`, and the connection closed."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for name, data in events:
            event = f"event: {name}\n" if name else ""
            event += f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"
            self.wfile.write(event.encode())
        self.wfile.flush()
        self.close_connection = True

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self):
        self.model.record(Request(self.path, dict(self.headers), None))
        path = self.path.split("?")[0]
        if path == "/api/hello":  # Claude Code's probe
            return self._json(200, {"ok": True})
        if path.endswith("/models"):
            return self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        self._json(404, {"error": {"message": f"not scripted: GET {self.path}"}})

    def do_POST(self):
        request = Request(self.path, dict(self.headers), self._body())
        self.model.record(request)
        path = self.path.split("?")[0]
        if not isinstance(request.body, dict):
            return self._json(400, {"error": {"message": "not a JSON object"}})
        if path.endswith("/v1/messages/count_tokens"):
            return self._json(200, {"input_tokens": 10})
        if path.endswith("/v1/messages"):
            return self.anthropic_messages(request)
        if path.endswith("/v1/responses"):
            return self.openai_responses(request)
        if path.endswith("/chat/completions"):
            return self.chat_completions(request)
        if path.endswith(":countTokens"):
            return self._json(200, {"totalTokens": 10})
        if path.endswith(":streamGenerateContent") or path.endswith(":generateContent"):
            return self.gemini_generate(request, stream=path.endswith(":streamGenerateContent"))
        self._json(404, {"error": {"message": f"not scripted: POST {self.path}"}})

    def _call(self, request: Request, offered: list[str]) -> tuple[str, dict[str, Any]] | None:
        """The shell call `request` is answered with: when it offers a shell tool and its
        conversation has no tool result yet."""
        tool = next((name for name in SHELL_TOOLS if name in offered), None)
        if tool is None or tool_results(request.body):
            return None
        request.call = shell_call(tool, self.model.command)
        return tool, request.call

    # Anthropic Messages, for Claude Code.

    def anthropic_messages(self, request: Request) -> None:
        body = request.body
        call = self._call(request, [t.get("name") for t in body.get("tools") or []])
        if call:
            block = {"type": "tool_use", "id": f"toolu_{self.model.new_id()}", "name": call[0],
                     "input": call[1]}
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(call[1])}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": FINAL}
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": FINAL}
            stop = "end_turn"
        usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        message = {"id": f"msg_{self.model.new_id()}", "type": "message", "role": "assistant",
                   "model": body.get("model", "scripted"), "stop_sequence": None}
        if not body.get("stream"):
            return self._json(200, {**message, "content": [block], "stop_reason": stop, "usage": usage})
        self._sse([
            ("message_start", {"type": "message_start",
                               "message": {**message, "content": [], "stop_reason": None, "usage": usage}}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ])

    # OpenAI Responses, for Codex CLI.

    def openai_responses(self, request: Request) -> None:
        body = request.body
        call = self._call(request, [t.get("name") or t.get("type") for t in body.get("tools") or []])
        if call:
            call_id = f"call_{self.model.new_id()}"
            item = {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": call[0],
                    "arguments": json.dumps(call[1])}
        else:
            item = {"type": "message", "role": "assistant", "id": f"msg_{self.model.new_id()}",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": FINAL, "annotations": []}]}
        response = {"id": f"resp_{self.model.new_id()}", "object": "response", "model": body.get("model")}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        events = [
            {"type": "response.created", "response": {**response, "status": "in_progress"}},
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed",
             "response": {**response, "status": "completed", "output": [item], "usage": usage}},
        ]
        self._sse([(event["type"], event) for event in events])

    # Gemini, for Gemini CLI.

    def gemini_generate(self, request: Request, stream: bool) -> None:
        body = request.body
        tools = body.get("tools") or []
        offered = [d.get("name") for t in tools for d in t.get("functionDeclarations") or []]
        call = self._call(request, offered)
        if call:
            parts = [{"functionCall": {"name": call[0], "args": call[1]}}]
        elif offered:
            parts = [{"text": FINAL}]
        else:
            # A helper call (routing, whether the model speaks next) wants JSON back.
            parts = [{"text": json.dumps({"reasoning": "scripted", "next_speaker": "user"})}]
        chunk = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
                            "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": body.get("model", "scripted"),
        }
        if stream:
            return self._sse([(None, chunk)])
        self._json(200, chunk)

    # OpenAI Chat Completions, for Qwen Code, Copilot CLI and OpenCode.

    def chat_completions(self, request: Request) -> None:
        body = request.body
        offered = [(t.get("function") or t).get("name") for t in body.get("tools") or []]
        call = self._call(request, offered)
        completion = {"id": f"chatcmpl-{self.model.new_id()}", "created": int(time.time()),
                      "model": body.get("model", "scripted")}
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if call:
            tool_call = {"id": f"call_{self.model.new_id()}", "type": "function",
                         "function": {"name": call[0], "arguments": json.dumps(call[1])}}
            message = {"role": "assistant", "content": None, "tool_calls": [tool_call]}
            finish = "tool_calls"
        else:
            # Without tools it is OpenCode's title request: a title is text too.
            message = {"role": "assistant", "content": FINAL if offered else TITLE}
            finish = "stop"
        if not body.get("stream"):
            choice = {"index": 0, "message": message, "finish_reason": finish}
            return self._json(200, {**completion, "object": "chat.completion", "choices": [choice],
                                    "usage": usage})

        def chunk(delta: dict, finish_reason: str | None = None) -> tuple[None, dict]:
            choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
            return None, {**completion, "object": "chat.completion.chunk", "choices": [choice]}

        events = [chunk({"role": "assistant", "content": ""})]
        if call:
            # The call's name first, then its arguments, as the real APIs stream them.
            events.append(chunk({"tool_calls": [{"index": 0, "id": tool_call["id"], "type": "function",
                                                 "function": {"name": call[0], "arguments": ""}}]}))
            arguments = tool_call["function"]["arguments"]
            events.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]}))
        else:
            events.append(chunk({"content": message["content"]}))
        events.append(chunk({}, finish))
        usage_chunk = {**completion, "object": "chat.completion.chunk", "choices": [], "usage": usage}
        events.append((None, usage_chunk))
        events.append((None, "[DONE]"))
        self._sse(events)


if __name__ == "__main__":
    served = Model(sys.argv[1] if len(sys.argv) > 1 else "ls").start()
    print(served.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        served.stop()
