"""GitHub Copilot CLI end to end, as its documentation describes it (decision 0017).

Payloads are shaped as github/docs content/copilot/reference/hooks-reference.md shows them
(tests/fixtures/payloads/copilot/ cites each source): camelCase, no event name (the installed
command passes it), ``toolArgs`` an object or a JSON string. The installed command is run as
Copilot runs a ``bash`` entry: through the shell, payload on stdin.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ledger._clients.install import hook_status, install, uninstall
from tests.hooks._support import LEDGER, Workspace, clean_env, make_workspace

SESSION = "0f6a2c4e-8b1d-4e37-9a5c-2d7e1b3f9c80"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = make_workspace(tmp_path)
    (workspace.root / "src" / "auth").mkdir(parents=True)
    install("copilot", root=workspace.root, home=workspace.home, ledger_cmd=str(LEDGER))
    return workspace


def _hooks_file(ws: Workspace) -> dict[str, Any]:
    data = json.loads((ws.root / ".github" / "hooks" / "ledger.json").read_text("utf-8"))
    assert isinstance(data, dict)
    return data


def _run(ws: Workspace, event: str, payload: dict[str, Any]) -> tuple[int, dict[str, Any], str]:
    """Run the installed command for ``event`` as Copilot runs a bash entry."""
    [entry] = _hooks_file(ws)["hooks"][event]
    done = subprocess.run(
        ["/bin/sh", "-c", entry["bash"]],
        input=json.dumps({"timestamp": 1704614600000, "cwd": str(ws.root), **payload}).encode(),
        capture_output=True,
        env=clean_env(ws.home),
        cwd=ws.root,
        timeout=60,
        check=False,
    )
    out = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, out, done.stderr.decode()


def _tool(ws: Workspace, name: str, args: Any, session: str | None = SESSION) -> dict[str, Any]:
    payload: dict[str, Any] = {"toolName": name, "toolArgs": args}
    if session is not None:
        payload["sessionId"] = session
    code, out, err = _run(ws, "preToolUse", payload)
    assert code == 0, err
    return out


def test_install_writes_a_version_1_hooks_file_with_bash_entries(ws: Workspace) -> None:
    data = _hooks_file(ws)
    assert data["version"] == 1
    assert set(data["hooks"]) == {
        "preToolUse",
        "postToolUse",
        "postToolUseFailure",
        "sessionStart",
        "sessionEnd",
        "userPromptSubmitted",
        "agentStop",
    }
    for event, entries in data["hooks"].items():
        [entry] = entries
        assert entry["type"] == "command"
        assert f" hook copilot --event {event} " in entry["bash"]
        assert "failClosed" not in entry  # Copilot: a non-zero preToolUse already denies
    status = hook_status("copilot", ws.root, home=ws.home)
    assert (status.installed, status.command_runs, status.problems) == (True, True, ())


def test_a_write_needs_an_intent_then_stays_in_its_scope(ws: Workspace) -> None:
    new = {"path": "src/auth/tokens.ts", "file_text": "export const ttl = 900;\n"}
    refused = _tool(ws, "create", new)
    assert refused["permissionDecision"] == "deny"
    assert "INTENT_REQUIRED" in refused["permissionDecisionReason"]
    # Selected in the shell, as the older page's payloads would send it (toolArgs a string).
    selected = _tool(ws, "bash", json.dumps({"command": "ledger intent select INT-001"}))
    assert selected["permissionDecision"] == "allow"
    assert "<intent_context>" in selected["additionalContext"]
    assert _tool(ws, "create", new).get("permissionDecision") in (None, "allow")
    outside = _tool(ws, "edit", {"path": "docs/a.md", "old_str": "a", "new_str": "b"})
    assert outside["permissionDecision"] == "deny"
    assert "SCOPE_VIOLATION" in outside["permissionDecisionReason"]
    protected = _tool(ws, "create", {"path": ".github/hooks/evil.json", "file_text": "{}"})
    assert protected["permissionDecision"] == "deny"
    assert "ORCHESTRATION_PROTECTED" in protected["permissionDecisionReason"]


def test_a_destructive_command_is_asked_natively(ws: Workspace) -> None:
    (ws.root / "src" / "auth" / "old.ts").write_text("x\n", encoding="utf-8")
    _tool(ws, "bash", {"command": "ledger intent select INT-001"})
    asked = _tool(ws, "bash", {"command": "rm src/auth/old.ts"})
    assert asked["permissionDecision"] == "ask"
    assert "DESTRUCTIVE" in asked["permissionDecisionReason"]


def test_session_start_tells_the_agent_the_open_intents(ws: Workspace) -> None:
    code, out, err = _run(ws, "sessionStart", {"sessionId": SESSION, "source": "new"})
    assert code == 0, err
    assert "select_active_intent" in out["additionalContext"]
    assert "INT-001 (JWT hardening)" in out["additionalContext"]


def test_every_call_is_recorded_with_copilots_actor(ws: Workspace) -> None:
    _tool(ws, "view", {"path": "src/auth/a.ts"})
    result = {"resultType": "success", "textResultForLlm": "x"}
    post = {"sessionId": SESSION, "toolName": "view", "toolArgs": {"path": "x"}}
    _run(ws, "postToolUse", {**post, "toolResult": result})
    records = [r for r in ws.records() if r.kind in ("hook.pre", "hook.post")]
    assert [r.kind for r in records] == ["hook.pre", "hook.post"]
    assert {r.actor.get("client") for r in records} == {"copilot-cli"}
    assert {r.actor.get("session") for r in records} == {SESSION}


def test_a_broken_ledger_denies_the_tool_call(ws: Workspace, tmp_path: Path) -> None:
    install("copilot", root=ws.root, home=ws.home, ledger_cmd=str(tmp_path / "gone" / "ledger"))
    code, _, err = _run(ws, "preToolUse", {"toolName": "bash", "toolArgs": {"command": "ls"}})
    assert code == 2  # Copilot denies a preToolUse hook that exits non-zero
    assert "ledger install copilot" in err
    code, _, _ = _run(ws, "sessionEnd", {"reason": "complete"})
    assert code == 1  # logged by Copilot, never blocking


def test_uninstall_leaves_no_hooks_file_or_folder(ws: Workspace) -> None:
    uninstall("copilot", root=ws.root, home=ws.home)
    assert not (ws.root / ".github").exists()
