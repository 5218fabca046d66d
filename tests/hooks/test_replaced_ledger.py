"""A replaced ledger stays flagged by ``verify``, ``doctor`` and every hook call until a person
acknowledges it with ``ledger tamper accept``, whose record in the new ledger names the old one.

Deleting ``agent_trace.jsonl`` and following the error's advice (``ledger init``) used to
re-anchor the workspace to the new ledger, and ``verify`` and ``doctor`` said ok: the history
was gone without a trace.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ledger import GovernedWorkspace, Ledger, NotAPersonError, init_workspace, run_hook
from ledger._doctor import run_checks
from ledger._evidence.anchors import workspace_ledger_id

from ._support import Workspace, claude_payload, make_workspace, run_cli

AUTH = "src/auth/login.ts"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = make_workspace(tmp_path)
    subprocess.run(["git", "init", "-q", str(ws.root)], check=True)
    ws.write(AUTH, "export const login = 1;\n")
    return ws


def hook(ws: Workspace, n: int, event: str = "PreToolUse") -> dict[str, object]:
    fields: dict[str, object] = {}
    if event == "PreToolUse":
        fields = {"tool_name": "Read", "tool_input": {"file_path": str(ws.path(AUTH))}}
        fields["tool_use_id"] = f"toolu_01rl{n:04d}"
    payload = claude_payload(event, ws, "s1", **fields)
    answer = run_hook("claude", json.dumps(payload).encode(), environ=ws.env)
    return dict(json.loads(answer.stdout or "{}").get("hookSpecificOutput") or {})


def replace_the_ledger(ws: Workspace) -> tuple[str, str]:
    """Use the workspace, delete its ledger, follow the advice: ``(old id, new id)``."""
    for n in range(3):
        assert hook(ws, n).get("permissionDecision") != "deny"
    old = Ledger.open(ws.root, environ=ws.env).ledger_id
    (ws.orchestration / "agent_trace.jsonl").unlink()
    answer = hook(ws, 10)
    assert answer["permissionDecision"] == "deny"
    assert old in str(answer["permissionDecisionReason"])  # the error names what was held
    report = init_workspace(ws.root, environ=ws.env)
    assert report.replaced == old
    return old, report.ledger.ledger_id


def check(ws: Workspace, tmp_path: Path) -> dict[str, str]:
    return {c.name: c.status for c in run_checks(ws.root, environ=ws.env, home=tmp_path)}


def test_ledger_deleted_and_reinitialised_stays_flagged_until_a_person_accepts(
    ws: Workspace, tmp_path: Path, person: None
) -> None:
    old, new = replace_the_ledger(ws)
    for _ in range(2):  # it stays flagged: nothing an agent does clears it
        report = Ledger.open(ws.root, environ=ws.env).verify(jobs=1)
        assert [p.code for p in report.problems] == ["replaced-ledger"]
        assert "ledger tamper accept" in report.problems[0].message
        checks = check(ws, tmp_path)
        assert (checks["ledger"], checks["tripwire"]) == ("fail", "fail")
        assert hook(ws, 20)["permissionDecision"] == "deny"
        # A session end writes the new ledger's first checkpoint: the anchor stays.
        hook(ws, 21, event="SessionEnd")
        assert workspace_ledger_id(ws.root, ws.env) == old
    done = GovernedWorkspace(ws.root, environ=ws.env).resolve_tamper("accept")
    (accepted,) = [r for r in ws.records() if r.seq == done.seq]
    assert accepted.kind == "governance.tamper_accepted"
    assert accepted.body["replaced_ledger"] == old  # the acknowledgement is in the new ledger
    assert accepted.ledger_id == new
    assert Ledger.open(ws.root, environ=ws.env).verify(jobs=1).ok
    assert check(ws, tmp_path)["ledger"] == "ok"
    assert check(ws, tmp_path)["tripwire"] == "ok"
    assert hook(ws, 30).get("permissionDecision") != "deny"


def test_an_agent_cannot_acknowledge_a_replaced_ledger(ws: Workspace) -> None:
    old, _ = replace_the_ledger(ws)
    with pytest.raises(NotAPersonError):  # the suite may run under an agent: it is one here
        GovernedWorkspace(ws.root, environ={**ws.env, "CLAUDECODE": "1"}).resolve_tamper("accept")
    done = run_cli(["tamper", "accept", "--root", str(ws.root)], {**ws.proc_env, "CLAUDECODE": "1"})
    assert done.returncode == 3
    assert b"only a person" in done.stderr
    assert workspace_ledger_id(ws.root, ws.env) == old
    assert not Ledger.open(ws.root, environ=ws.env).verify(jobs=1).ok


def test_ledger_init_says_the_new_ledger_stays_flagged(ws: Workspace) -> None:
    old = Ledger.open(ws.root, environ=ws.env).ledger_id
    (ws.orchestration / "agent_trace.jsonl").unlink()
    done = run_cli(["init", "--root", str(ws.root)], ws.proc_env)
    assert done.returncode == 0, done.stderr
    assert f"held ledger {old}".encode() in done.stdout
    assert b"ledger tamper accept" in done.stdout
    verify = run_cli(["verify", "--root", str(ws.root)], ws.proc_env)
    assert verify.returncode == 1
    assert b"replaced-ledger" in verify.stdout


def test_a_fresh_workspace_is_no_replacement(ws: Workspace) -> None:
    report = init_workspace(ws.root, environ=ws.env)  # already initialised: idempotent
    assert report.replaced is None
    assert Ledger.open(ws.root, environ=ws.env).verify(jobs=1).ok
