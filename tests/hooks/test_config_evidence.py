"""Governance configuration changes are evidence.

Attack: the agent's shell edits ``hooks.yaml`` (switching the scope policy off) or widens an
intent's scope in ``active_intents.yaml``, then writes. The change must be on the record, before
the first decision that uses it, in the same write.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ledger import GovernedWorkspace
from ledger._evidence.models import KIND_BODIES

from ._support import INTENTS_YAML, Session, Workspace, make_workspace

OUT_OF_SCOPE = "src/billing/pay.py"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path)


def write_out_of_scope(session: Session) -> str | None:
    return session.pre(
        "Write", {"file_path": str(session.ws.path(OUT_OF_SCOPE)), "content": "x = 1\n"}
    ).code


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_decision_records_the_config_it_used(ws: Workspace) -> None:
    session = Session(ws, "s1")
    session.select()
    pre = [r for r in ws.records() if r.kind == "hook.pre"][-1]
    assert pre.body["config"] == {
        "hooks_sha256": None,
        "intents_sha256": sha(ws.orchestration / "active_intents.yaml"),
    }
    assert "governance.config_changed" not in [r.kind for r in ws.records()]


def test_policy_switched_off_by_the_agent_is_recorded_before_it_takes_effect(ws: Workspace) -> None:
    session = Session(ws, "s1")
    session.select()
    assert write_out_of_scope(session) == "SCOPE_VIOLATION"
    ws.write(".orchestration/hooks.yaml", "policies:\n  scope: false\n")  # the agent's shell
    count = len(ws.records())
    # A loosening waits for a person (tests/hooks/test_loosening.py); it is recorded at once,
    # right before the decision that found it.
    assert write_out_of_scope(session) == "TAMPER"
    tamper, change, pre = ws.records()[count:]
    assert tamper.kind == "governance.tamper"
    assert change.kind == "governance.config_changed"
    assert pre.kind == "hook.pre"
    assert change.body["changed"] == ["hooks"]
    assert change.body["before"]["hooks_sha256"] is None
    assert change.body["after"]["hooks_sha256"] == sha(ws.orchestration / "hooks.yaml")
    assert change.body["via"] == "detected"
    assert pre.body["config"] == change.body["after"]
    KIND_BODIES["governance.config_changed"].model_validate(change.body)
    KIND_BODIES["hook.pre"].model_validate(pre.body)


def test_scope_widened_in_the_intents_file_is_recorded(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("ledger._governance.person.ancestor_chain", lambda: [])  # a person
    session = Session(ws, "s1")
    session.select()
    widened = INTENTS_YAML.replace(
        'owned_scope: ["src/auth/**"]', 'owned_scope: ["src/auth/**", "src/billing/**"]'
    )
    ws.write(".orchestration/active_intents.yaml", widened)
    assert write_out_of_scope(session) == "TAMPER"  # a widening waits for a person
    GovernedWorkspace(ws.root, environ=ws.env).resolve_tamper("accept")
    assert write_out_of_scope(session) is None
    changes = [r for r in ws.records() if r.kind == "governance.config_changed"]
    assert [c.body["changed"] for c in changes] == [["intents"]]
    write_out_of_scope(session)
    assert len([r for r in ws.records() if r.kind == "governance.config_changed"]) == 1
