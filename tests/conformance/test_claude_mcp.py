"""The real Claude Code CLI, offline, selecting an intent through ``ledger mcp`` (decision 0015).

``ledger install claude`` registers the server (``.mcp.json``, approved in
``.claude/settings.local.json``); Claude Code starts it, lists its tools to the scripted model,
and the model calls ``mcp__ledger__select_active_intent``. The hook of that call selects the
intent for the session (``intent.selected`` with ``via: "mcp"``), the server answers the
``<intent_context>``, and the next write in scope lands.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ._checks import allowed, recorded, refused
from ._claude import run_claude
from ._harness import make_workspace
from ._server import Call, Say, anthropic_tool_use_id

pytestmark = pytest.mark.conformance

SELECT_TOOL = "mcp__ledger__select_active_intent"
ALLOWED = f"{SELECT_TOOL},mcp__ledger__list_intents"


def test_selecting_by_the_mcp_tool_then_a_write_in_scope_lands(
    claude_binary: Path, tmp_path: Path
) -> None:
    ws = make_workspace(tmp_path, "claude")
    args = json.loads(ws.read(".mcp.json") or "{}")["mcpServers"]["ledger"]["args"]
    assert args[:1] == ["-I"]  # the server runs isolated, as the hooks do
    assert args[2] == "mcp"
    target = ws.path("src/auth/session.ts")
    run = run_claude(
        claude_binary,
        ws,
        [
            Call(SELECT_TOOL, {"intent_id": "INT-001"}),
            Call("Write", {"file_path": str(target), "content": "export const ttl = 900;\n"}),
            Say("Selected the intent and wrote the session TTL."),
        ],
        allowed_tools=ALLOWED,
    )
    # Claude Code 2.1.330 defers MCP tools (ToolSearch, DeferredToolPlaceholder) rather than
    # listing them up front; the call below reaches the server all the same.
    problems = allowed(ws, run.denied(), anthropic_tool_use_id(0), files={})
    pre = [c for c in ws.hook_calls() if c.event == "PreToolUse"]
    assert pre[0].payload["mcp_server"] == {"name": "ledger", "source": "project"}
    problems += allowed(
        ws,
        run.denied(),
        anthropic_tool_use_id(1),
        files={"src/auth/session.ts": "export const ttl = 900;\n"},
    )
    selections = [
        r["body"]
        for r in ws.records()
        if r["kind"] == "intent.selected" and r["actor"]["session"] == run.session_id
    ]
    assert [(s["intent_id"], s["via"]) for s in selections] == [("INT-001", "mcp")], selections
    results = run.script.tool_results()
    assert results, "the client sent no tool result back to the model"
    assert "<intent_context>" in results[0], results[0][:300]
    assert "<glob>src/auth/**</glob>" in results[0]
    assert problems + recorded(ws, run.script.stray) == []


def test_a_planned_intent_selected_by_the_tool_is_refused_and_nothing_is_written(
    claude_binary: Path, tmp_path: Path
) -> None:
    ws = make_workspace(tmp_path, "claude")
    target = ws.path("src/billing/invoice.ts")
    run = run_claude(
        claude_binary,
        ws,
        [
            Call(SELECT_TOOL, {"intent_id": "INT-002"}),
            Call("Write", {"file_path": str(target), "content": "export const fee = 1;\n"}),
        ],
        allowed_tools=ALLOWED,
    )
    problems = refused(
        ws,
        run.denied(),
        anthropic_tool_use_id(0),
        decision="deny",
        code="INTENT_REQUIRED",
        files={},
    )
    problems += refused(
        ws,
        run.denied(),
        anthropic_tool_use_id(1),
        decision="deny",
        code="INTENT_REQUIRED",
        files={"src/billing/invoice.ts": None},
    )
    assert not [r for r in ws.records() if r["kind"] == "intent.selected"]
    assert problems + recorded(ws, run.script.stray) == []
