"""The real GitHub Copilot CLI, offline, against ledger's installed hooks and ``ledger mcp``.

``ledger install copilot`` writes ``.github/hooks/ledger.json`` and ``.github/mcp.json``; the
scripted model drives ``copilot -p`` (BYOK against the stand-in, ``_copilot.py``). Copilot builds
every hook payload and enforces every answer itself. Copilot sends no tool call id to hooks, so
calls are named by their step: the n-th preToolUse is the model's n-th step.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ._checks import allowed, recorded, refused
from ._copilot import run_copilot
from ._harness import make_workspace
from ._server import Call, Say

pytestmark = pytest.mark.conformance

TTL = "export const ttl = 900;\n"
SOURCE_TEXT = "export const alg = 'none';\nexport const issuer = '';\n"


def test_a_session_selects_by_the_mcp_tool_and_is_governed(
    copilot_binary: Path, tmp_path: Path
) -> None:
    ws = make_workspace(tmp_path, "copilot")
    early, ttl = ws.path("src/auth/early.ts"), ws.path("src/auth/ttl.ts")
    billing = ws.path("src/billing/invoice.ts")
    run = run_copilot(
        copilot_binary,
        ws,
        [
            Call("create", {"path": str(early), "file_text": "x\n"}),
            # Copilot names an MCP tool <server>-<tool>.
            Call("ledger-select_active_intent", {"intent_id": "INT-001"}),
            Call("create", {"path": str(ttl), "file_text": TTL}),
            Call("create", {"path": str(billing), "file_text": "export const fee = 1;\n"}),
            Call("bash", {"command": "rm src/auth/token.ts", "description": "Remove a file"}),
            Say("Done."),
        ],
    )
    denied = run.denied()
    problems = refused(
        ws,
        denied,
        0,
        decision="deny",
        code="INTENT_REQUIRED",
        files={"src/auth/early.ts": None},
    )
    problems += allowed(ws, denied, 1, files={})
    selections = [
        (r["body"]["intent_id"], r["body"]["via"])
        for r in ws.records()
        if r["kind"] == "intent.selected"
    ]
    assert selections == [("INT-001", "mcp")]
    assert any(text.startswith("<intent_context>") for text in run.results().values())
    problems += allowed(ws, denied, 2, files={"src/auth/ttl.ts": TTL})
    problems += refused(
        ws,
        denied,
        3,
        decision="deny",
        code="SCOPE_VIOLATION",
        files={"src/billing/invoice.ts": None},
    )
    # ledger asks; with nobody to ask, headless Copilot must not run it.
    problems += refused(
        ws,
        denied,
        4,
        decision="ask",
        code="DESTRUCTIVE_COMMAND",
        files={"src/auth/token.ts": SOURCE_TEXT},
    )
    starts = [c for c in ws.hook_calls() if c.event == "sessionStart"]
    assert "select_active_intent" in starts[0].answer.get("additionalContext", "")
    assert problems + recorded(ws, run.script.stray) == []
