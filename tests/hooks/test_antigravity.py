"""Antigravity CLI (``agy``) end to end, against payloads written from its users' measurements
(tests/fixtures/payloads/antigravity/README.md names them): the installed command of ledger's
bundle in ``~/.gemini/config/hooks.json`` is run as agy runs it, payload on stdin, no event name
in it, camelCase, ``toolCall {name, args}``; ``{}`` at PreToolUse would deny, so ledger answers
every decision explicitly."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ledger._clients.install import hook_status, install, uninstall
from ledger._errors import InputError
from tests.hooks._support import LEDGER, Workspace, clean_env, make_workspace

SESSION = "2bb3613b-f2a2-4573-9282-e389ac224bda"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = make_workspace(tmp_path)
    (workspace.root / "src" / "auth").mkdir(parents=True)
    install(
        "antigravity", root=workspace.root, home=workspace.home, ledger_cmd=str(LEDGER), user=True
    )
    return workspace


def _bundle(ws: Workspace) -> dict[str, Any]:
    data = json.loads((ws.home / ".gemini" / "config" / "hooks.json").read_text("utf-8"))
    assert isinstance(data, dict)
    bundle = data["ledger"]
    assert isinstance(bundle, dict)
    return bundle


def _command(ws: Workspace, event: str) -> str:
    [entry] = _bundle(ws)[event]
    command = entry["hooks"][0]["command"] if "hooks" in entry else entry["command"]
    assert isinstance(command, str)
    return command


def _run(ws: Workspace, event: str, payload: dict[str, Any]) -> tuple[int, dict[str, Any], str]:
    body = {"conversationId": SESSION, "workspacePaths": [str(ws.root)], **payload}
    done = subprocess.run(
        ["/bin/sh", "-c", _command(ws, event)],
        input=json.dumps(body).encode(),
        capture_output=True,
        env={**clean_env(ws.home), "HOME": str(ws.home)},
        cwd=ws.root,
        timeout=60,
        check=False,
    )
    out = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, out, done.stderr.decode()


def _tool(ws: Workspace, name: str, args: dict[str, Any]) -> dict[str, Any]:
    code, out, err = _run(ws, "PreToolUse", {"toolCall": {"name": name, "args": args}})
    assert code == 0, err
    return out


def test_install_writes_ledgers_bundle_per_user_only(ws: Workspace) -> None:
    bundle = _bundle(ws)
    assert bundle["enabled"] is True
    assert set(bundle) == {"enabled", "PreToolUse", "PostToolUse", "PreInvocation",
                           "PostInvocation", "Stop"}  # fmt: skip
    assert bundle["PreToolUse"][0]["matcher"] == "*"  # tool events: matcher groups
    assert bundle["Stop"][0]["type"] == "command"  # lifecycle events: plain handlers
    status = hook_status("antigravity", ws.root, home=ws.home)
    assert (status.installed, status.command_runs, status.problems) == (True, True, ())
    with pytest.raises(InputError, match="--user"):
        install("antigravity", root=ws.root, home=ws.home, ledger_cmd=str(LEDGER))
    assert not (ws.root / ".gemini").exists()


def test_every_decision_is_explicit_because_an_empty_answer_denies(ws: Workspace) -> None:
    read = _tool(ws, "view_file", {"AbsolutePath": str(ws.root / "README.md")})
    assert read == {"decision": "allow"}
    refused = _tool(ws, "write_to_file", {"TargetFile": "src/auth/t.ts", "CodeContent": "x"})
    assert refused["decision"] == "deny"
    assert "INTENT_REQUIRED" in refused["reason"]


def test_a_write_stays_in_its_intents_scope_and_a_destructive_command_is_asked(
    ws: Workspace,
) -> None:
    (ws.root / "src" / "auth" / "old.ts").write_text("x\n", encoding="utf-8")
    selected = _tool(ws, "run_command", {"CommandLine": "ledger intent select INT-001"})
    assert selected["decision"] == "allow"
    inside = {"TargetFile": str(ws.root / "src/auth/t.ts"), "CodeContent": "x"}
    assert _tool(ws, "write_to_file", inside) == {"decision": "allow"}
    outside = _tool(
        ws,
        "replace_file_content",
        {"TargetFile": str(ws.root / "docs/a.md"), "TargetContent": "a", "ReplacementContent": "b"},
    )
    assert outside["decision"] == "deny"
    assert "SCOPE_VIOLATION" in outside["reason"]
    asked = _tool(ws, "run_command", {"CommandLine": "rm src/auth/old.ts", "Cwd": str(ws.root)})
    assert asked["decision"] == "ask"
    pre = [r for r in ws.records() if r.kind == "hook.pre"]
    assert pre[-1].body["delivered"] == {"decision": "ask"}
    assert {r.actor.get("client") for r in pre} == {"antigravity-cli"}
    assert {r.actor.get("session") for r in pre} == {SESSION}


def test_its_own_hooks_file_is_protected_from_the_agent(ws: Workspace) -> None:
    target = str(ws.home / ".gemini" / "config" / "hooks.json")
    refused = _tool(ws, "write_to_file", {"TargetFile": target, "CodeContent": "{}"})
    assert refused["decision"] == "deny"
    assert "ORCHESTRATION_PROTECTED" in refused["reason"]


def test_lifecycle_events_are_recorded_and_never_block(ws: Workspace) -> None:
    code, out, err = _run(ws, "PreInvocation", {"invocationNum": 0})
    assert code == 0, err
    assert set(out) <= {"injectSteps"}
    code, out, err = _run(ws, "Stop", {"terminationReason": "NO_TOOL_CALL", "error": ""})
    assert (code, out) == (0, {}), err
    kinds = [(r.kind, r.body.get("client_event")) for r in ws.records() if r.kind == "hook.event"]
    assert kinds == [("hook.event", "PreInvocation"), ("hook.event", "Stop")]


def test_a_broken_ledger_denies_the_tool_call(ws: Workspace, tmp_path: Path) -> None:
    gone = str(tmp_path / "gone" / "ledger")
    install("antigravity", root=ws.root, home=ws.home, ledger_cmd=gone, user=True)
    code, _, err = _run(ws, "PreToolUse", {"toolCall": {"name": "run_command", "args": {}}})
    assert code == 2
    assert "ledger install antigravity --user" in err
    code, _, _ = _run(ws, "Stop", {})
    assert code == 1


def test_uninstall_keeps_other_bundles(ws: Workspace) -> None:
    path = ws.home / ".gemini" / "config" / "hooks.json"
    data = json.loads(path.read_text("utf-8"))
    data["RtkHook"] = {"enabled": True, "PreToolUse": [{"matcher": "run_command", "hooks": []}]}
    path.write_text(json.dumps(data), encoding="utf-8")
    uninstall("antigravity", root=ws.root, home=ws.home, user=True)
    assert json.loads(path.read_text("utf-8")) == {"RtkHook": data["RtkHook"]}


def test_the_first_turn_is_told_the_open_intents(ws: Workspace) -> None:
    code, out, err = _run(ws, "PreInvocation", {"invocationNum": 0})
    assert code == 0, err
    [step] = out["injectSteps"]
    assert "INT-001 (JWT hardening)" in step["ephemeralMessage"]
