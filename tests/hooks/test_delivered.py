"""Every hook record says what the client could deliver of ledger's decision (decision 0016):
an ask stays an ask where the client can ask, and is recorded as delivered as deny where it
cannot (Codex); a deny is a deny everywhere; a call without objection runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ledger._clients import parse_payload
from ledger._evidence.models import KIND_BODIES
from ledger._hooks.service import handle_event
from tests.hooks._support import Workspace, claude_payload, make_workspace

SESSION = "5b0c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = make_workspace(tmp_path)
    (workspace.root / "src" / "auth").mkdir(parents=True)
    return workspace


def _pre(ws: Workspace, client: str, payload: dict[str, Any], event: str | None = None) -> Any:
    parsed = parse_payload(client, json.dumps(payload).encode(), expected_event=event)
    handle_event(parsed, environ=ws.env)
    record = [r for r in ws.records() if r.kind == "hook.pre"][-1]
    KIND_BODIES["hook.pre"].model_validate(record.body)  # the schema takes it
    return record.body


def _claude_shaped(ws: Workspace, command: str) -> dict[str, Any]:
    return claude_payload(
        "PreToolUse",
        ws,
        SESSION,
        tool_name="Bash",
        tool_input={"command": command},
        tool_use_id="toolu_01" + "a" * 24,
    )


@pytest.mark.parametrize(
    ("client", "delivered"),
    [
        ("claude", {"decision": "ask"}),
        ("codex", {"decision": "deny"}),
    ],
)
def test_an_asked_call_records_what_the_client_delivered(
    ws: Workspace, client: str, delivered: dict[str, str]
) -> None:
    (ws.root / "src" / "auth" / "old.ts").write_text("x\n", encoding="utf-8")
    _pre(ws, client, _claude_shaped(ws, "ledger intent select INT-001"))
    body = _pre(ws, client, _claude_shaped(ws, "rm src/auth/old.ts"))
    assert body["decision"] == "ask"
    assert body["delivered"]["decision"] == delivered["decision"]
    if client == "codex":
        assert "Codex does not enforce ask" in body["delivered"]["why"]
    else:
        assert "why" not in body["delivered"]


def test_copilot_asks_natively_and_says_so(ws: Workspace) -> None:
    (ws.root / "src" / "auth" / "old.ts").write_text("x\n", encoding="utf-8")
    for command in ("ledger intent select INT-001", "rm src/auth/old.ts"):
        payload = {
            "sessionId": SESSION,
            "cwd": str(ws.root),
            "toolName": "bash",
            "toolArgs": {"command": command},
        }
        body = _pre(ws, "copilot", payload, "preToolUse")
    assert (body["decision"], body["delivered"]) == ("ask", {"decision": "ask"})


def test_a_denied_call_is_delivered_as_deny(ws: Workspace) -> None:
    payload = claude_payload(
        "PreToolUse",
        ws,
        SESSION,
        tool_name="Write",
        tool_input={"file_path": str(ws.root / "src/auth/x.ts"), "content": "x"},
        tool_use_id="toolu_01" + "b" * 24,
    )
    body = _pre(ws, "codex", payload)  # no intent selected: writing is refused
    assert (body["decision"], body["delivered"]) == ("deny", {"decision": "deny"})


def test_an_unobjected_call_is_delivered_as_allow(ws: Workspace) -> None:
    body = _pre(
        ws,
        "gemini",
        {
            "session_id": SESSION,
            "cwd": str(ws.root),
            "hook_event_name": "BeforeTool",
            "tool_name": "read_file",
            "tool_input": {"absolute_path": str(ws.root / "README.md")},
        },
    )
    assert (body["decision"], body["delivered"]) == ("allow", {"decision": "allow"})
