"""``ledger mcp`` answers its hook tool's calls as it reads them, past the SDK's dispatch, with
the bytes the SDK would send; every other message still goes to the SDK.

Through the SDK each ``mcp_tool`` hook call paid its validation, dispatch and serialization
(~10-20 ms on this project's machine, two calls per tool call). The fast path must be
indistinguishable on the wire: the same reply bytes (against the SDK's own types, for any
text), the same answer for the same call whichever path takes it, and anything unusual (a
batch, an unknown key, a float id, ``NaN``) left to the SDK.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger._clients.mcp_hook import HOOK_TOOL
from ledger._mcp import ReplyShape, _HookLines, _Wire, hook_call

from ..hooks._support import LEDGER, make_workspace
from .test_hook_tool import Server, arguments_for

#: A reply line exactly as the SDK (mcp 2.3, protocol 2025-06-18) writes a hook call's answer.
SDK_LINE = (
    '{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"{}","type":"text"}],"isError":false}}\n'
)


@settings(max_examples=300, deadline=None)
@given(
    request_id=st.one_of(st.integers(min_value=-(2**53), max_value=2**53), st.text(max_size=20)),
    text=st.text(),
    failed=st.booleans(),
)
def test_a_learned_shape_renders_any_answer_as_the_sdk_would(
    request_id: int | str, text: str, failed: bool
) -> None:
    shape = ReplyShape.learned(SDK_LINE)
    assert shape is not None
    line = shape.render(request_id, text, failed)
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1  # one JSON-RPC line
    expected = json.loads(SDK_LINE)
    expected["id"], expected["result"]["isError"] = request_id, failed
    expected["result"]["content"][0]["text"] = text
    assert json.loads(line) == expected
    assert list(json.loads(line)["result"]) == ["content", "isError"]  # the SDK's key order


@pytest.mark.parametrize(
    "line",
    [
        SDK_LINE.replace('":', '": '),  # not the bytes the render gives back: never used
        SDK_LINE.replace(
            '[{"text":"{}","type":"text"}]',
            '[{"text":"a","type":"text"},{"text":"b","type":"text"}]',
        ),
        SDK_LINE.replace('"isError":false', '"isError":"no"'),
        SDK_LINE.replace('"type":"text"', '"type":"image"'),
        '{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"x"}}\n',
        "not json\n",
    ],
)
def test_a_reply_the_render_cannot_reproduce_teaches_nothing(line: str) -> None:
    assert ReplyShape.learned(line) is None


def _call(params: Any, **top: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params, **top})


@pytest.mark.parametrize(
    "line",
    [
        _call({"name": HOOK_TOOL, "arguments": {}, "extra": 1}),  # a key the path does not know
        _call({"name": HOOK_TOOL, "arguments": []}),
        _call({"name": "select_active_intent", "arguments": {"intent_id": "x"}}),
        _call({"name": HOOK_TOOL, "arguments": {}}, extra=True),
        json.dumps([json.loads(_call({"name": HOOK_TOOL, "arguments": {}}))]),  # a batch
        _call({"name": HOOK_TOOL, "arguments": {}}).replace('"id": 3', '"id": 3.0'),
        _call({"name": HOOK_TOOL, "arguments": {}}).replace('"id": 3', '"id": true'),
        _call({"name": HOOK_TOOL, "arguments": {"cwd": "x"}}).replace('"x"', "NaN"),
        _call({"name": HOOK_TOOL, "arguments": {}}).replace('"2.0"', '"1.0"'),
        _call({"name": HOOK_TOOL}).replace("tools/call", "tools/list"),
        '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "' + HOOK_TOOL,
    ],
)
def test_anything_unusual_is_left_to_the_sdk(line: str) -> None:
    assert hook_call(line) is None


def test_a_plain_call_is_taken() -> None:
    arguments = {"cwd": "/w", "hook_event_name": "PreToolUse"}
    line = _call({"name": HOOK_TOOL, "arguments": arguments, "_meta": {"progressToken": 1}})
    assert hook_call(line) == (3, arguments)
    assert hook_call(_call({"name": HOOK_TOOL})) == (3, {})


class _Pipes:
    """A wire of two pipes: what the client writes, and what the server sent."""

    def __init__(self) -> None:
        self.client_r, self.client_w = os.pipe()
        self.server_r, self.server_w = os.pipe()
        self.wire = _Wire(self.client_r, self.server_w)

    def say(self, *messages: dict[str, Any]) -> None:
        for message in messages:
            os.write(self.client_w, json.dumps(message).encode() + b"\n")

    def sent(self) -> list[dict[str, Any]]:
        os.close(self.server_w)
        with os.fdopen(self.server_r, "rb") as handle:
            return [json.loads(line) for line in handle.read().splitlines()]


def _hook(n: int) -> dict[str, Any]:
    params = {"name": HOOK_TOOL, "arguments": {"tool_use_id": f"t{n}"}}
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}


def test_hook_calls_after_the_first_are_answered_without_the_sdk() -> None:
    """Before ``initialized`` and until the SDK answered one hook call, every line goes to the
    SDK; after that, hook calls are answered on the wire and never reach it."""
    import anyio  # noqa: PLC0415

    pipes = _Pipes()
    answered: list[dict[str, Any]] = []
    left: list[object] = []

    def answer(arguments: dict[str, Any]) -> tuple[str, bool, Any]:
        answered.append(arguments)
        return f"answer {arguments['tool_use_id']}", False, ([], [])

    lines = _HookLines(pipes.wire, answer, left.append)
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    listing = {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}
    pipes.say(_hook(1), initialize, initialized, _hook(2), _hook(3), listing, _hook(4))
    os.close(pipes.client_w)

    async def sdk() -> list[dict[str, Any]]:
        seen = []
        async for line in lines:
            message = json.loads(line)
            seen.append(message)
            if message.get("id") == 2:  # the SDK answers the first hook call after initialized
                await pipes.wire.write(SDK_LINE.replace('"id":7', '"id":2'))
        return seen

    seen = anyio.run(sdk)
    assert [m.get("id", "-") for m in seen] == [1, 0, "-", 2, 9]  # 3 and 4: not the SDK's
    assert [a["tool_use_id"] for a in answered] == ["t3", "t4"]
    assert len(left) == 2
    sent = pipes.sent()
    assert [m["id"] for m in sent] == [2, 3, 4]
    assert sent[1]["result"]["content"][0]["text"] == "answer t3"


def test_either_path_answers_the_same_bytes_and_records_the_same(tmp_path: Path) -> None:
    """The same hook calls, once as Claude Code sends them (the fast path) and once with a key
    the fast path leaves to the SDK: the same reply lines, and one hook record for each."""
    ws = make_workspace(tmp_path)
    root = str(ws.root)
    payloads = [
        {"tool_name": "Read", "tool_input": {"file_path": f"{root}/src/auth/ä.ts"}},
        {"tool_name": "Write", "tool_input": {"file_path": "/etc/\u0001x", "content": "é\n"}},
        {"tool_name": "Bash", "tool_input": {"command": "rm -rf src"}},
    ]
    server = Server(ws.root, ws.proc_env)
    replies: list[tuple[bytes, bytes]] = []
    try:
        for n, payload in enumerate(payloads):
            full = {"session_id": "s-fast", "cwd": root, "hook_event_name": "PreToolUse"}
            arguments = arguments_for("PreToolUse", json.dumps({**full, **payload}))
            pair = []
            for extra in ({}, {"ledger_probe": 1}):
                params = {"name": HOOK_TOOL, "arguments": {**arguments, "tool_use_id": f"t{n}"}}
                before = len(server.lines)
                server.request("tools/call", {**params, **extra})
                pair.append(server.lines[before].replace(b'"id":%d' % server._next, b'"id":0'))
            replies.append((pair[0], pair[1]))
    finally:
        server.close()
    for fast, sdk in replies:
        assert fast == sdk
    assert server.protocol_only() == []
    pre = [r for r in ws.records() if r.kind == "hook.pre"]
    assert len(pre) == 2 * len(payloads)


def test_a_hook_call_the_hook_path_cannot_rebuild_does_not_stop_the_server(
    tmp_path: Path,
) -> None:
    """Arguments whose rebuilding raises (JSON nested past the parser's depth) get an error
    answer, which Claude Code's ``onFailure: "block"`` turns into a block, and the server goes
    on answering: it is never left dead for the rest of the session."""
    ws = make_workspace(tmp_path)
    root = str(ws.root)
    base = {"session_id": "s-deep", "cwd": root, "hook_event_name": "PreToolUse"}
    plain = arguments_for("PreToolUse", json.dumps({**base, "tool_name": "Read"}))
    server = Server(ws.root, ws.proc_env)
    try:
        server.hook({**plain, "tool_use_id": "t-first"})  # the SDK's: the shape is learned
        deep = {**plain, "tool_use_id": "t-deep", "tool_input": "[" * 200_000 + "]" * 200_000}
        failed, answer = server.hook(deep)
        assert failed or json.loads(answer)["hookSpecificOutput"]["permissionDecision"] == "deny"
        failed, answer = server.hook({**plain, "tool_use_id": "t-after"})
        assert not failed, answer
    finally:
        server.close()
    assert server.protocol_only() == []


#: ``ledger mcp`` under an SDK whose MCPServer keeps its low-level server under another name
#: (the fast path reads ``_lowlevel_server``, which mcp 2.3 offers no public accessor for).
_RENAMED_SDK = """
import sys
from mcp.server.mcpserver.server import MCPServer
init, run = MCPServer.__init__, MCPServer.run_stdio_async
def renamed_init(self, *args, **kwargs):
    init(self, *args, **kwargs)
    self._renamed = self.__dict__.pop("_lowlevel_server")
async def sdk_run(self):
    self._lowlevel_server = self._renamed  # the SDK's own code knows its own name
    await run(self)
MCPServer.__init__, MCPServer.run_stdio_async = renamed_init, sdk_run
from cli._entry import main
sys.argv[0] = sys.argv[1]
raise SystemExit(main(sys.argv[2:]))
"""


def test_an_sdk_that_renamed_its_low_level_server_still_serves_every_hook_call(
    tmp_path: Path,
) -> None:
    """Without the attribute the fast path needs, the server runs the SDK's own transport:
    every hook call answered (by the SDK), the answers the same, nothing but protocol."""
    import sys  # noqa: PLC0415

    ws = make_workspace(tmp_path)
    root = str(ws.root)
    base = {"session_id": "s-renamed", "cwd": root, "hook_event_name": "PreToolUse"}
    command = [sys.executable, "-c", _RENAMED_SDK, str(LEDGER)]
    answers = []
    for ledger in (None, command):
        server = Server(ws.root, ws.proc_env, ledger)
        try:
            for n, payload in enumerate(
                [
                    {"tool_name": "Read", "tool_input": {"file_path": f"{root}/src/auth/a.ts"}},
                    {"tool_name": "Bash", "tool_input": {"command": "rm -rf src"}},
                    {"tool_name": "Read", "tool_input": {"file_path": f"{root}/src/auth/b.ts"}},
                ]
            ):
                arguments = arguments_for("PreToolUse", json.dumps({**base, **payload}))
                failed, answer = server.hook({**arguments, "tool_use_id": f"t{n}"})
                answers.append((ledger is None, failed, json.loads(answer)))
        finally:
            server.close()
        assert server.protocol_only() == []
    fast = [(f, a) for own, f, a in answers if own]
    renamed = [(f, a) for own, f, a in answers if not own]
    assert renamed == fast
    decisions = [a.get("hookSpecificOutput", {}).get("permissionDecision") for _, a in renamed]
    assert decisions == [None, "deny", None]  # a quiet allow is {}
