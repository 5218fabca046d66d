"""Codex CLI and Gemini CLI, offline, selecting an intent through ``ledger mcp`` (decision 0015).

``ledger install <client>`` registers the server (Codex: ``[mcp_servers.ledger]`` in
``.codex/config.toml``; Gemini CLI: ``mcpServers`` in ``.gemini/settings.json``); the client
starts it and offers its tools to the scripted model, which calls ``select_active_intent`` by
the client's own name for it; the hook of that call selects the intent for the session
(``intent.selected`` with ``via: "mcp"``), the server's ``<intent_context>`` comes back, and a
write in scope lands.

What each client was seen to do (Codex 0.169.0, Gemini CLI 0.61.0): Codex offers the server as
a ``namespace`` tool ``mcp__ledger`` and reports the call to hooks as
``mcp__ledger__select_active_intent``; Gemini CLI names it ``mcp_ledger_select_active_intent``
and adds ``mcp_context {server_name, tool_name, command, args}``, which the adapter reads.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ._checks import allowed, recorded
from ._codex import call_id, run_codex
from ._gemini import run_gemini
from ._harness import Workspace, make_workspace
from ._server import Call, Say

pytestmark = pytest.mark.conformance

TTL = "export const ttl = 900;\n"


def _selected_via_mcp(ws: Workspace) -> list[tuple[str, str]]:
    return [
        (r["body"]["intent_id"], r["body"]["via"])
        for r in ws.records()
        if r["kind"] == "intent.selected"
    ]


def test_codex_selects_by_the_mcp_tool_then_a_write_in_scope_lands(
    codex_binary: Path, tmp_path: Path
) -> None:
    # Codex 0.169.0 sends its first request to the model without waiting for MCP servers to
    # start: on a busy machine `ledger mcp` (~0.7 s, the SDK's import) is not ready yet, the
    # namespace tool is missing from that request, and a call comes back "unsupported call".
    # So the model first waits a moment in the shell (a read, allowed without an intent); a run
    # that still lost the race is run again.
    for attempt in range(3):
        ws = make_workspace(tmp_path / str(attempt), "codex")
        run = run_codex(
            codex_binary,
            ws,
            [
                Call("exec_command", {"cmd": "sleep 3"}),
                Call("mcp__ledger__select_active_intent", {"intent_id": "INT-001"}),
                Call(
                    "exec_command", {"cmd": "printf 'export const ttl = 900;\\n' > src/auth/t.ts"}
                ),
                Say("Done."),
            ],
            bypass_hook_trust=True,
        )
        if "unsupported call: mcp__ledger" not in run.stderr:
            break
    pre = [c for c in ws.hook_calls() if c.event == "PreToolUse"]
    assert pre[1].payload["tool_name"] == "mcp__ledger__select_active_intent"
    assert _selected_via_mcp(ws) == [("INT-001", "mcp")]
    post = [c for c in ws.hook_calls() if c.event == "PostToolUse"]
    assert "<intent_context>" in str(post[1].payload.get("tool_response"))
    problems = allowed(ws, run.denied(), call_id(1), files={})
    problems += allowed(ws, run.denied(), call_id(2), files={"src/auth/t.ts": TTL})
    assert problems + recorded(ws, run.stray()) == []


def test_gemini_selects_by_the_mcp_tool_then_a_write_in_scope_lands(
    gemini_binary: Path, tmp_path: Path
) -> None:
    ws = make_workspace(tmp_path, "gemini")
    target = ws.path("src/auth/t.ts")
    run = run_gemini(
        gemini_binary,
        ws,
        [
            Call("mcp_ledger_select_active_intent", {"intent_id": "INT-001"}),
            Call("write_file", {"file_path": str(target), "content": TTL}),
            Say("Done."),
        ],
    )
    before = [c for c in ws.hook_calls() if c.event == "BeforeTool"]
    assert before[0].payload["tool_name"] == "mcp_ledger_select_active_intent"
    assert before[0].payload["mcp_context"]["server_name"] == "ledger"
    assert _selected_via_mcp(ws) == [("INT-001", "mcp")]
    problems = allowed(ws, run.denied(), 0, files={})
    problems += allowed(ws, run.denied(), 1, files={"src/auth/t.ts": TTL})
    assert problems + recorded(ws, run.script.stray) == []
