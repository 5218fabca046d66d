"""VS Code's agent hooks end to end, as microsoft/vscode-docs describes them
(tests/fixtures/payloads/vscode/ cites it): the installed command of
``.github/hooks/ledger-vscode.json`` is run with VS Code's payload (``sessionId`` and
``hookEventName`` camelCase, the rest Claude Code's); ask prompts the person there."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ledger._clients.install import hook_status, install, uninstall
from tests.hooks._support import LEDGER, Workspace, clean_env, make_workspace

SESSION = "7d2e9c41-3b5a-4f68-8e10-6c2b9f4a1d35"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = make_workspace(tmp_path)
    (workspace.root / "src" / "auth").mkdir(parents=True)
    install("vscode", root=workspace.root, home=workspace.home, ledger_cmd=str(LEDGER))
    return workspace


def _run(ws: Workspace, event: str, fields: dict[str, Any]) -> dict[str, Any]:
    hooks = json.loads((ws.root / ".github/hooks/ledger-vscode.json").read_text("utf-8"))
    [entry] = hooks["hooks"][event]
    payload = {
        "timestamp": "2026-02-09T10:30:00.000Z",
        "cwd": str(ws.root),
        "sessionId": SESSION,
        "hookEventName": event,
        **fields,
    }
    done = subprocess.run(
        ["/bin/sh", "-c", entry["command"]],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=clean_env(ws.home),
        cwd=ws.root,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else {}


def _pre(ws: Workspace, tool: str, tool_input: dict[str, Any], n: int) -> dict[str, Any]:
    fields = {"tool_name": tool, "tool_input": tool_input, "tool_use_id": f"tool-{n}"}
    specific = _run(ws, "PreToolUse", fields).get("hookSpecificOutput", {})
    assert isinstance(specific, dict)
    return specific


def test_install_writes_claude_shaped_entries_next_to_copilots(ws: Workspace) -> None:
    data = json.loads((ws.root / ".github/hooks/ledger-vscode.json").read_text("utf-8"))
    assert "version" not in data
    assert data["hooks"]["PreToolUse"][0]["type"] == "command"
    status = hook_status("vscode", ws.root, home=ws.home)
    assert (status.installed, status.command_runs, status.problems) == (True, True, ())


def test_a_write_is_governed_and_a_destructive_command_asked(ws: Workspace) -> None:
    (ws.root / "src" / "auth" / "old.ts").write_text("x\n", encoding="utf-8")
    refused = _pre(ws, "createFile", {"filePath": str(ws.root / "src/auth/t.ts")}, 1)
    assert refused["permissionDecision"] == "deny"
    _pre(ws, "runInTerminal", {"command": "ledger intent select INT-001"}, 2)
    asked = _pre(ws, "runInTerminal", {"command": "rm src/auth/old.ts"}, 3)
    assert asked["permissionDecision"] == "ask"
    records = [r for r in ws.records() if r.kind == "hook.pre"]
    assert records[-1].body["delivered"] == {"decision": "ask"}
    assert {r.actor.get("client") for r in records} == {"vscode"}
    assert {r.actor.get("session") for r in records} == {SESSION}


def test_session_start_tells_the_agent_the_open_intents(ws: Workspace) -> None:
    out = _run(ws, "SessionStart", {"source": "new"})
    assert "INT-001 (JWT hardening)" in out["hookSpecificOutput"]["additionalContext"]


def test_uninstall_leaves_no_hooks_file(ws: Workspace) -> None:
    uninstall("vscode", root=ws.root, home=ws.home)
    assert not (ws.root / ".github").exists()
