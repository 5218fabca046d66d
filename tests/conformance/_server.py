"""A scripted stand-in for a model API, on 127.0.0.1 only (stdlib: http.server + a thread).

The real agent CLI believes it talks to its vendor's model; the server answers from a scenario
script instead. Which step comes next is read from the request itself (the number of assistant
turns the conversation already holds), so a resumed session continues where it stopped and
retries are harmless. The wire formats follow findings-2026-11.md §8 (Anthropic Messages),
§9 (OpenAI Responses) and §10 (Gemini streamGenerateContent).

The same server is also the HTTP(S) proxy the client is given: any request for a host other than
the loopback address lands here, is refused (403) and logged as ``stray``, so a scenario can
assert that nothing left the machine.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Call:
    """A step that asks the client to run one tool; ``before`` runs just before it is sent."""

    tool: str
    args: dict[str, Any]
    before: Callable[[], object] | None = None  # runs before the step; its result is unused


@dataclass(frozen=True)
class Say:
    """A step that ends the turn with plain text."""

    text: str


Step = Call | Say


@dataclass
class Exchange:
    """One request the server saw, and which step answered it (None: a side request)."""

    path: str
    body: dict[str, Any]
    step: int | None
    #: when the request arrived (``time.monotonic``): a step's request less the one before it
    #: is the client's wall time for that tool call (bench/bench_claude_hooks.py)
    at: float = field(default_factory=time.monotonic)


@dataclass
class Script:
    """The steps of one conversation, indexed by the assistant turns already in the request."""

    steps: list[Step]
    exchanges: list[Exchange] = field(default_factory=list)
    stray: list[str] = field(default_factory=list)
    _ran_before: set[int] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def step(self, index: int) -> Step:
        """Step ``index``; past the end the model just says it is done."""
        if index >= len(self.steps):
            return Say("done")
        step = self.steps[index]
        with self._lock:
            if isinstance(step, Call) and step.before is not None and index not in self._ran_before:
                self._ran_before.add(index)
                step.before()
        return step

    def tool_results(self) -> list[str]:
        """Every tool result text the client sent back to the model, in order (Anthropic)."""
        texts: list[str] = []
        seen: set[str] = set()
        for exchange in self.exchanges:
            for message in exchange.body.get("messages", []):
                content = message.get("content")
                if not isinstance(content, list):
                    continue
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        key = str(block.get("tool_use_id"))
                        if key not in seen:
                            seen.add(key)
                            texts.append(_text_of(block.get("content")))
        return texts


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return json.dumps(content)


def _sse(event: str | None, data: dict[str, Any]) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


# --- Anthropic Messages API (findings §8) -------------------------------------------------------


def anthropic_tool_use_id(index: int) -> str:
    """Deterministic tool_use ids, shaped like Anthropic's."""
    return f"toolu_{index:02d}conformance{index:012d}"


def _anthropic_events(step: Step, index: int, model: str) -> Iterator[bytes]:
    yield _sse(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": f"msg_conformance_{index}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
    )
    if isinstance(step, Call):
        yield _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {
                    "type": "tool_use",
                    "id": anthropic_tool_use_id(index),
                    "name": step.tool,
                    "input": {},
                },
            },
        )
        yield _sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": json.dumps(step.args)},
            },
        )
        stop = "tool_use"
    else:
        yield _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        )
        yield _sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": step.text},
            },
        )
        stop = "end_turn"
    yield _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


def _anthropic(script: Script, path: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
    model = str(body.get("model", "claude-conformance"))
    if not path.startswith("/v1/messages") or "count_tokens" in path:
        return 200, "application/json", json.dumps({"input_tokens": 10}).encode()
    if not body.get("tools"):
        # A side request (session title, topic check): a short text answer serves it.
        step: Step = Say("conformance")
        index = None
    else:
        index = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        step = script.step(index)
    script.exchanges.append(Exchange(path, body, index))
    if not body.get("stream"):
        content = (
            [
                {
                    "type": "tool_use",
                    "id": anthropic_tool_use_id(index or 0),
                    "name": step.tool,
                    "input": step.args,
                }
            ]
            if isinstance(step, Call)
            else [{"type": "text", "text": step.text}]
        )
        return (
            200,
            "application/json",
            json.dumps(
                {
                    "id": "msg_conformance",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": content,
                    "stop_reason": "tool_use" if isinstance(step, Call) else "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                }
            ).encode(),
        )
    return 200, "text/event-stream", b"".join(_anthropic_events(step, index or 0, model))


# --- OpenAI Responses API, as Codex speaks it (findings §9) -------------------------------------


def codex_call_id(index: int) -> str:
    """Deterministic function-call ids."""
    return f"call_conformance_{index:02d}"


def _responses(script: Script, path: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
    if not path.rstrip("/").endswith("/responses"):
        script.exchanges.append(Exchange(path, body, None))
        return 200, "application/json", b"{}"
    items = body.get("input") or []
    index = sum(
        1
        for item in items
        if isinstance(item, dict)
        and (
            item.get("type") == "function_call"
            or (item.get("type") == "message" and item.get("role") == "assistant")
        )
    )
    step = script.step(index) if body.get("tools") else Say("conformance")
    script.exchanges.append(Exchange(path, body, index if body.get("tools") else None))
    if isinstance(step, Call):
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_conformance_{index:02d}",
            "call_id": codex_call_id(index),
            "name": step.tool,
            "arguments": json.dumps(step.args),
            "status": "completed",
        }
        namespace, _, function = step.tool.rpartition("__")
        if step.tool.startswith("mcp__") and namespace != "mcp":
            # Codex offers an MCP server's tools as a `namespace` tool (`mcp__<server>`) and
            # reads the call back as that namespace plus the function's own name.
            item["namespace"], item["name"] = namespace, function
    else:
        item = {
            "type": "message",
            "id": f"msg_conformance_{index:02d}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": step.text, "annotations": []}],
        }
    response: dict[str, Any] = {
        "id": f"resp_conformance_{index:02d}",
        "object": "response",
        "status": "in_progress",
        "model": body.get("model"),
        "output": [],
    }
    done = {
        **response,
        "status": "completed",
        "output": [item],
        "usage": {
            "input_tokens": 10,
            "output_tokens": 5,
            "total_tokens": 15,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": response}),
        (
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": 0, "item": item},
        ),
        (
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": item},
        ),
        ("response.completed", {"type": "response.completed", "response": done}),
    ]
    return 200, "text/event-stream", b"".join(_sse(name, data) for name, data in events)


# --- Gemini streamGenerateContent (findings §10) ------------------------------------------------


def _gemini(script: Script, path: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
    if ":countTokens" in path:
        return 200, "application/json", b'{"totalTokens": 10}'
    if not body.get("tools"):
        # Side requests (next-speaker checks and the like) want a short answer; JSON-mode ones
        # get a JSON object that says the user speaks next.
        config = body.get("generationConfig") or {}
        text = (
            '{"next_speaker": "user", "reasoning": "done"}'
            if config.get("responseMimeType") == "application/json"
            else "conformance"
        )
        step: Step = Say(text)
        index = None
    else:
        index = sum(1 for c in body.get("contents", []) if c.get("role") == "model")
        step = script.step(index)
    script.exchanges.append(Exchange(path, body, index))
    part = (
        {"functionCall": {"name": step.tool, "args": step.args}}
        if isinstance(step, Call)
        else {"text": step.text}
    )
    chunk = {
        "candidates": [
            {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-conformance",
    }
    if "alt=sse" not in path:
        return 200, "application/json", json.dumps(chunk).encode()
    return 200, "text/event-stream", _sse(None, chunk)


Responder = Callable[[Script, str, dict[str, Any]], tuple[int, str, bytes]]
PROTOCOLS: dict[str, Responder] = {
    "anthropic": _anthropic,
    "responses": _responses,
    "gemini": _gemini,
}


class ModelServer:
    """The stand-in, serving one :class:`Script` in the given wire protocol until closed."""

    def __init__(self, script: Script, protocol: str) -> None:
        self.script = script
        responder = PROTOCOLS[protocol]

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return  # quiet: the script keeps what matters

            def _stray(self) -> None:
                script.stray.append(f"{self.command} {self.path}")
                self.send_response(403)
                self.send_header("Content-Length", "0")
                self.send_header("Connection", "close")
                self.end_headers()

            def do_CONNECT(self) -> None:
                self._stray()

            def _local(self) -> bool:
                # A proxied request carries an absolute URL; a direct one a path.
                return self.path.startswith("/")

            def do_GET(self) -> None:
                if not self._local():
                    self._stray()
                    return
                self._send(200, "application/json", b"{}")

            def do_HEAD(self) -> None:
                if not self._local():
                    self._stray()
                    return
                self._send(200, "application/json", b"")

            def do_POST(self) -> None:
                if not self._local():
                    self._stray()
                    return
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {}
                status, ctype, payload = responder(script, self.path, body)
                self._send(status, ctype, payload)

            def _send(self, status: int, ctype: str, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def close(self) -> None:
        """Stop serving."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ModelServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
