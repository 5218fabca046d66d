"""Loosening governance between two calls needs a person.

``(sleep 4; echo 'policies: {scope: false}' > .orchestration/hooks.yaml) &`` rewrote governance
between two tool calls; it was accepted as a person's edit and scope was off from the next
call. A change that loosens governance now halts the workspace until a person runs ``ledger
tamper accept`` (refused inside an agent); one that tightens it, or touches only intents that
are not in progress, takes effect at once.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger import GovernedWorkspace
from ledger._governance.loosening import loosenings

from ._support import INTENTS_YAML, Session, Workspace, make_workspace

AUTH = "src/auth/login.ts"
OTHER = "src/other/x.ts"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = make_workspace(tmp_path)
    subprocess.run(["git", "init", "-q", str(ws.root)], check=True)
    ws.write(AUTH, "export const login = 1;\n")
    ws.write(".orchestration/hooks.yaml", "policies:\n  destructive: ask\n")
    return ws


@pytest.fixture
def session(ws: Workspace) -> Session:
    session = Session(ws, "agent")
    assert session.select().code is None  # arms the tripwire, seals the configuration
    return session


def write(session: Session, relative: str) -> str | None:
    target = str(session.ws.path(relative))
    return session.pre("Write", {"file_path": target, "content": "x\n"}).code


def kinds(ws: Workspace) -> list[str]:
    return [r.kind for r in ws.records()]


def test_scope_switched_off_between_calls_does_not_take_effect(
    ws: Workspace, session: Session, person: None
) -> None:
    assert write(session, OTHER) == "SCOPE_VIOLATION"
    ws.write(".orchestration/hooks.yaml", "policies:\n  scope: false\n")  # a background job
    fired = session.pre("Write", {"file_path": str(ws.path(OTHER)), "content": "x\n"})
    assert fired.code == "TAMPER"
    assert "loosens governance" in fired.reason
    assert "policies.scope switched off" in fired.reason
    assert write(session, OTHER) == "TAMPER"  # still nothing goes through
    GovernedWorkspace(ws.root, environ=ws.env).resolve_tamper("accept")  # a person confirms
    assert write(session, OTHER) is None  # now it takes effect
    assert "governance.config_changed" in kinds(ws)


@pytest.mark.parametrize(
    ("yaml", "why"),
    [
        ("policies:\n  destructive: allow\n", "destructive: ask -> allow"),
        ("policies:\n  intent_required: false\n", "intent_required switched off"),
        ("policies:\n  fail_closed: false\n", "fail_closed switched off"),
    ],
)
def test_a_policy_loosened_between_calls_waits_for_a_person(
    ws: Workspace, session: Session, yaml: str, why: str
) -> None:
    ws.write(".orchestration/hooks.yaml", yaml)
    fired = session.pre("Read", {"file_path": str(ws.path(AUTH))})
    assert fired.code == "TAMPER"
    assert why in fired.reason


def test_a_configured_hook_removed_between_calls_waits_for_a_person(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    hooks = (
        "hooks:\n  PreToolUse:\n    - matcher: Write\n      hooks:\n"
        "        - type: command\n          command: 'true'\n"
    )
    ws.write(".orchestration/hooks.yaml", hooks)
    session = Session(ws, "agent")
    session.select()
    ws.write(".orchestration/hooks.yaml", "hooks: {}\n")
    assert session.pre("Read", {"file_path": str(ws.path(".orchestration"))}).code == "TAMPER"


def test_a_tightening_between_calls_takes_effect_at_once(ws: Workspace, session: Session) -> None:
    ws.write(".orchestration/hooks.yaml", "policies:\n  destructive: deny\n")
    assert write(session, AUTH) is None
    assert "governance.tamper" not in kinds(ws)
    assert "governance.config_changed" in kinds(ws)


def test_an_in_progress_intent_widened_between_calls_waits_for_a_person(
    ws: Workspace, session: Session
) -> None:
    widened = INTENTS_YAML.replace('owned_scope: ["src/auth/**"]', 'owned_scope: ["src/**"]')
    ws.write(".orchestration/active_intents.yaml", widened)
    fired = session.pre("Write", {"file_path": str(ws.path(OTHER)), "content": "x\n"})
    assert fired.code == "TAMPER"
    assert "INT-001 is in progress and its scope was widened ('src/**')" in fired.reason


def test_intents_not_in_progress_change_at_once(ws: Workspace, session: Session) -> None:
    edited = INTENTS_YAML.replace('owned_scope: ["legacy/**"]', 'owned_scope: ["**"]')
    edited = edited.replace('owned_scope: ["src/auth/**"]', "owned_scope: []")  # narrowed
    ws.write(".orchestration/active_intents.yaml", edited)
    assert session.pre("Read", {"file_path": str(ws.path(AUTH))}).code is None
    assert "governance.tamper" not in kinds(ws)


_SWITCH = st.booleans()
_DESTRUCTIVE = st.sampled_from(["allow", "ask", "deny"])
_STRICT = {"allow": 0, "ask": 1, "deny": 2}


def _yaml(switches: tuple[bool, bool, bool, bool], destructive: str) -> bytes:
    names = ("intent_required", "scope", "stale_file", "fail_closed")
    lines = [f"  {n}: {str(v).lower()}" for n, v in zip(names, switches, strict=True)]
    return ("policies:\n" + "\n".join(lines) + f"\n  destructive: {destructive}\n").encode()


@given(
    st.tuples(_SWITCH, _SWITCH, _SWITCH, _SWITCH),
    _DESTRUCTIVE,
    st.tuples(_SWITCH, _SWITCH, _SWITCH, _SWITCH),
    _DESTRUCTIVE,
)
def test_loosening_is_exactly_a_switch_off_or_a_more_permissive_destructive(
    old: tuple[bool, bool, bool, bool],
    old_destructive: str,
    new: tuple[bool, bool, bool, bool],
    new_destructive: str,
) -> None:
    found = loosenings("hooks.yaml", _yaml(old, old_destructive), _yaml(new, new_destructive))
    expected = any(o and not n for o, n in zip(old, new, strict=True)) or (
        _STRICT[new_destructive] < _STRICT[old_destructive]
    )
    assert bool(found) == expected, found
