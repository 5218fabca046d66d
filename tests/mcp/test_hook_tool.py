"""``ledger mcp``'s hook tool: Claude Code's ``mcp_tool`` hooks answered as ``ledger hook claude``
answers them, from a server the model cannot use.

The server is driven over its stdio pipe with raw JSON-RPC lines, as Claude Code drives it, so
every line it prints is checked to be protocol. The tool's arguments are built from each payload
the way Claude Code 2.1.332 interpolates the installed handler's ``input`` (measured with a
probe server: a string field as itself, any other value as its compact JSON, a missing one as
``""``): :func:`interpolate` is that model.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ledger import Ledger
from ledger._clients.mcp_hook import EVENT_ARGUMENT, HOOK_TOOL, hook_handler
from ledger._governance.vocabulary import MAX_PAYLOAD_BYTES

from ..hooks._support import LEDGER, Session, make_workspace
from ..hooks.test_decider import ROOT_TOKEN, Rig, _comparable, _fixture_calls, _normalize

pytestmark = pytest.mark.slow

#: Seconds a call of the server may take (Claude Code's hook timeout, as ledger installs it).
ANSWER_DEADLINE = 60.0


def interpolate(template: Any, payload: dict[str, Any]) -> Any:
    """Claude Code's ``${path}`` interpolation of an ``mcp_tool`` handler's ``input``."""
    if isinstance(template, dict):
        return {k: interpolate(v, payload) for k, v in template.items()}
    if isinstance(template, str) and template.startswith("${") and template.endswith("}"):
        value: Any = payload
        for part in template[2:-1].split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return template


class Server:
    """``ledger mcp --root ROOT`` on a pipe, spoken to in JSON-RPC lines; keeps every line it
    printed."""

    def __init__(self, root: Path, env: dict[str, str], ledger: list[str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [*(ledger or [str(LEDGER)]), "mcp", "--root", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.lines: list[bytes] = []
        self._pending = b""  # read from the pipe, not yet a whole line
        self._next = 0
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "claude-code", "version": "2.1.332"},
            },
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next += 1
        self._send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        deadline = time.monotonic() + ANSWER_DEADLINE
        while True:
            line = self._line(deadline)
            self.lines.append(line)
            message = json.loads(line)
            if message.get("id") == self._next:
                assert "result" in message, message
                return dict(message["result"])

    def _line(self, deadline: float) -> bytes:
        """The next line the server prints; a call it never answers fails the test (the
        client would wait its hook timeout out, then block the call) instead of hanging it."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._pending:
            ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
            assert ready, f"no answer within {ANSWER_DEADLINE:g} s"
            chunk = os.read(fd, 1 << 16)
            assert chunk, "the server closed its stdout"
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line + b"\n"

    def hook(self, arguments: dict[str, Any]) -> tuple[bool, str]:
        """(is_error, text) of one call of the hook tool."""
        result = self.request("tools/call", {"name": HOOK_TOOL, "arguments": arguments})
        text = "".join(c.get("text", "") for c in result.get("content", []))
        return bool(result.get("isError")), text

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        assert self.proc.stdout is not None
        self.lines += (self._pending + self.proc.stdout.read()).splitlines(keepends=True)
        self.proc.stdout.close()

    def protocol_only(self) -> list[bytes]:
        """The lines that are not JSON-RPC messages (a stray print)."""
        stray = []
        for line in self.lines:
            try:
                ok = json.loads(line).get("jsonrpc") == "2.0"
            except (ValueError, AttributeError):
                ok = False
            if not ok:
                stray.append(line)
        return stray


def arguments_for(event: str, text: str) -> dict[str, Any]:
    payload = json.loads(text)
    found = interpolate(hook_handler(event)["input"], payload if isinstance(payload, dict) else {})
    assert isinstance(found, dict)
    return found


def test_every_claude_payload_fixture_gets_the_command_hooks_answer_and_records(
    tmp_path: Path,
) -> None:
    direct = Rig(tmp_path / "direct", decider="off")
    served = Rig(tmp_path / "served", decider="off")
    calls = [(event, text) for client, event, text in _fixture_calls() if client == "claude"]
    assert len(calls) > 60
    server = Server(served.root, served.env)
    try:
        for event, text in calls:
            done = direct.hook("claude", event, text.replace(ROOT_TOKEN, str(direct.root)).encode())
            assert done.returncode == 0, done.stderr
            expected = _normalize(done.stdout.decode().rstrip("\n") or "{}", direct.root)
            arguments = arguments_for(event, text.replace(ROOT_TOKEN, str(served.root)))
            failed, answer = server.hook(arguments)
            assert not failed, (event, answer)
            assert _normalize(answer, served.root) == expected, (event, text[:300])
    finally:
        server.close()
    assert server.protocol_only() == []
    assert _comparable(direct.records(), direct.root) == _comparable(served.records(), served.root)
    for rig in (direct, served):
        assert Ledger.open(rig.root, environ={"LEDGER_HOME": rig.env["LEDGER_HOME"]}).verify().ok


#: A session whose text no UTF-8 can carry: lone surrogates, which Claude Code (a JavaScript
#: program) holds in strings and its JSON writes as ``\\udXXX`` escapes, on stdin and in the
#: tool's arguments alike. What the command hook parses, the tool must parse.
_UNPAIRED = [
    (
        "PreToolUse",
        {
            "tool_name": "Write",
            "tool_input": {"file_path": "<root>/src/a\ud800.ts", "content": "x\udfff\n"},
        },
    ),
    (
        "PostToolUse",
        {
            "tool_name": "Write",
            "tool_input": {"file_path": "<root>/src/a\ud800.ts", "content": "x\udfff\n"},
            "tool_response": {
                "type": "create",
                "filePath": "<root>/src/a\ud800.ts",
                "content": "x\udfff\n",
                "structuredPatch": [],
            },
        },
    ),
    ("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "echo \udc80 > src/b.txt"}}),
]


def test_text_no_utf8_can_carry_gets_the_command_paths_answer_and_records(
    tmp_path: Path,
) -> None:
    direct = Rig(tmp_path / "direct", decider="off")
    served = Rig(tmp_path / "served", decider="off")
    server = Server(served.root, served.env)
    try:
        for n, (event, fields) in enumerate(_UNPAIRED):
            payload = {
                "session_id": "s-unpaired",
                "cwd": "<root>",
                "hook_event_name": event,
                "tool_use_id": f"toolu_unpaired_{n}",
                **fields,
            }
            text = json.dumps(payload)  # ASCII, the lone surrogates as escapes
            done = direct.hook("claude", event, text.replace("<root>", str(direct.root)).encode())
            expected = _normalize(done.stdout.decode().rstrip("\n") or "{}", direct.root)
            failed, answer = server.hook(
                arguments_for(event, text.replace("<root>", str(served.root)))
            )
            assert not failed, (event, answer)
            assert _normalize(answer, served.root) == expected, event
    finally:
        server.close()
    assert server.protocol_only() == []
    # A hook error names the bytes its transport received: the client's own on stdin, the
    # payload rebuilt from the tool's arguments here. Everything else is the same.
    received = {"payload_bytes", "payload_sha256"}

    def comparable(rig: Rig) -> list[Any]:
        return [
            (kind, actor, {k: v for k, v in body.items() if k not in received})
            for kind, actor, body in _comparable(rig.records(), rig.root)
        ]

    assert comparable(direct) == comparable(served)
    assert [kind for kind, _, _ in comparable(served)] == ["hook.error"] * len(_UNPAIRED)


@pytest.mark.parametrize(
    "damage",
    [
        {"hook_event_name": 5},  # a field of the wrong type
        {"tool_input": "{not json"},  # an object field that is not JSON
        {"session_id": ["a"], "tool_name": {"x": 1}},
        {"tool_input": json.dumps({"content": "x" * (MAX_PAYLOAD_BYTES + 10)})},  # oversized
        {"hook_event_name": "", "tool_name": ""},  # nothing to go on but the registered event
    ],
)
def test_bad_input_through_the_tool_gets_the_command_paths_answer(
    tmp_path: Path, damage: dict[str, Any]
) -> None:
    from ledger._clients.mcp_hook import payload_from_arguments  # noqa: PLC0415

    direct = Rig(tmp_path / "direct", decider="off")
    served = Rig(tmp_path / "served", decider="off")
    base = {
        "session_id": "s-bad",
        "cwd": "<root>",
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": "<root>/src/app.py", "content": "x = 2\n"},
        "tool_use_id": "toolu_bad",
    }
    server = Server(served.root, served.env)
    try:
        args = {**arguments_for("PreToolUse", json.dumps(base)), **damage}
        failed, answer = server.hook({k: _rooted(v, served.root) for k, v in args.items()})
    finally:
        server.close()
    raw, event = payload_from_arguments(
        {k: _rooted(v, direct.root) for k, v in {**args, EVENT_ARGUMENT: "PreToolUse"}.items()}
    )
    done = direct.hook("claude", event or "PreToolUse", raw)
    assert not failed, answer
    assert _normalize(answer, served.root) == _normalize(
        done.stdout.decode().rstrip("\n") or "{}", direct.root
    )
    decision = json.loads(answer)["hookSpecificOutput"]["permissionDecision"]
    assert decision == "deny"  # fails closed, as the command hook does
    assert server.protocol_only() == []


def _rooted(value: Any, root: Path) -> Any:
    return value.replace("<root>", str(root)) if isinstance(value, str) else value


def test_the_model_never_sees_the_hook_tool_and_a_call_of_it_is_denied(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    server = Server(ws.root, ws.proc_env)
    try:
        listed = [t["name"] for t in server.request("tools/list", {})["tools"]]
    finally:
        server.close()
    assert HOOK_TOOL not in listed
    assert "select_active_intent" in listed
    # A model that names it anyway: its PreToolUse denies (the forged call would record a
    # hook call that never happened), with an intent selected and without.
    agent = Session(ws, "s-model")
    forged = arguments_for("PostToolUse", json.dumps({"session_id": "other", "tool_name": "x"}))
    assert agent.pre("mcp__ledger__hook", forged).code == "ORCHESTRATION_PROTECTED"
    agent.select("INT-001")
    assert agent.pre("mcp__ledger__hook", forged).code == "ORCHESTRATION_PROTECTED"


def test_two_sessions_each_with_its_own_server_append_one_chain(tmp_path: Path) -> None:
    rig = Rig(tmp_path / "ws", decider="off")
    servers = [Server(rig.root, rig.env) for _ in range(2)]
    errors: list[str] = []

    def session(server: Server, name: str) -> None:
        for n in range(15):
            payload = {
                "session_id": name,
                "cwd": str(rig.root),
                "hook_event_name": "PreToolUse",
                "tool_name": "Read",
                "tool_input": {"file_path": str(rig.root / "src" / "app.py")},
                "tool_use_id": f"toolu_{name}_{n}",
            }
            failed, answer = server.hook(arguments_for("PreToolUse", json.dumps(payload)))
            if failed:
                errors.append(answer)

    threads = [
        threading.Thread(target=session, args=(server, f"s{i}")) for i, server in enumerate(servers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for server in servers:
        server.close()
        assert server.protocol_only() == []
    assert errors == []
    records = rig.records()
    assert [r["seq"] for r in records] == list(range(len(records)))
    pre = [r for r in records if r["kind"] == "hook.pre"]
    assert len(pre) == 30
    assert Ledger.open(rig.root, environ={"LEDGER_HOME": rig.env["LEDGER_HOME"]}).verify().ok


def test_a_server_older_than_the_installed_ledger_refuses_to_answer_hooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ledger._errors import InputError  # noqa: PLC0415
    from ledger._mcp import McpTools  # noqa: PLC0415

    ws = make_workspace(tmp_path)
    tools = McpTools(str(ws.root), ws.env)
    installed = tmp_path / "_version.py"
    installed.write_text('__version__ = "99.0.0"\n', encoding="utf-8")
    monkeypatch.setattr(tools, "version_file", installed)
    payload = {"session_id": "s", "cwd": str(ws.root), "hook_event_name": "PreToolUse"}
    with pytest.raises(InputError, match=r"ledger 99\.0\.0 is installed now: restart"):
        tools.hook(arguments_for("PreToolUse", json.dumps({**payload, "tool_name": "Read"})))
    assert not any(r.kind.startswith("hook.") for r in ws.records())
