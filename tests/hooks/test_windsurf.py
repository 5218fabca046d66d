"""Windsurf's Cascade hooks end to end, as docs.windsurf.com/windsurf/cascade/hooks describes
them (tests/fixtures/payloads/windsurf/ cites it): the installed command is run as Cascade runs
it, payload on stdin; exit 2 blocks a pre-hook and shows its stderr. A hook cannot prompt, so
ledger's ask is delivered as a block, and the record says so."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ledger._clients.install import hook_status, install, uninstall
from tests.hooks._support import LEDGER, Workspace, clean_env, make_workspace

TRAJECTORY = "a3f9c2e1-5b7d-4e8a-9c10-2d6f0b8e4a71"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = make_workspace(tmp_path)
    (workspace.root / "src" / "auth").mkdir(parents=True)
    install("windsurf", root=workspace.root, home=workspace.home, ledger_cmd=str(LEDGER))
    return workspace


def _run(ws: Workspace, action: str, info: dict[str, Any], n: int = 1) -> tuple[int, str, str]:
    hooks = json.loads((ws.root / ".windsurf" / "hooks.json").read_text("utf-8"))["hooks"]
    [entry] = hooks[action]
    payload = {
        "agent_action_name": action,
        "trajectory_id": TRAJECTORY,
        "execution_id": f"exec-{n}",
        "timestamp": "2026-11-20T10:15:30.123Z",
        "tool_info": info,
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
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def _command(ws: Workspace, line: str, n: int) -> tuple[int, str, str]:
    return _run(ws, "pre_run_command", {"command_line": line, "cwd": str(ws.root)}, n)


def test_install_writes_flat_entries_with_their_output_shown(ws: Workspace) -> None:
    data = json.loads((ws.root / ".windsurf" / "hooks.json").read_text("utf-8"))
    assert "version" not in data
    assert data["hooks"]["pre_write_code"][0]["show_output"] is True
    status = hook_status("windsurf", ws.root, home=ws.home)
    assert (status.installed, status.command_runs, status.problems) == (True, True, ())


def test_ask_is_delivered_as_a_block_and_recorded_as_such(ws: Workspace) -> None:
    (ws.root / "src" / "auth" / "old.ts").write_text("x\n", encoding="utf-8")
    assert _command(ws, "ledger intent select INT-001", 1)[0] == 0
    code, out, err = _command(ws, "rm src/auth/old.ts", 2)
    assert (code, out) == (2, "")
    assert "A human must approve this action; Windsurf cannot ask" in err
    body = [r for r in ws.records() if r.kind == "hook.pre"][-1].body
    assert body["decision"] == "ask"
    assert body["delivered"]["decision"] == "deny"
    assert "cannot prompt" in body["delivered"]["why"]


def test_a_write_without_an_intent_is_blocked_and_a_read_runs(ws: Workspace) -> None:
    edit = {
        "file_path": str(ws.root / "src/auth/t.ts"),
        "edits": [{"old_string": "", "new_string": "x"}],
    }
    code, _, err = _run(ws, "pre_write_code", edit)
    assert code == 2
    assert "INTENT_REQUIRED" in err
    code, out, err = _run(ws, "pre_read_code", {"file_path": str(ws.root / "README.md")}, 2)
    assert (code, out) == (0, ""), err


def test_its_hooks_file_is_protected_from_the_agent(ws: Workspace) -> None:
    hooks = {"file_path": str(ws.root / ".windsurf/hooks.json"), "edits": []}
    code, _, err = _run(ws, "pre_write_code", hooks)
    assert code == 2
    assert "ORCHESTRATION_PROTECTED" in err


def test_uninstall_leaves_no_hooks_file_or_folder(ws: Workspace) -> None:
    uninstall("windsurf", root=ws.root, home=ws.home)
    assert not (ws.root / ".windsurf").exists()
