"""Scope grants count only with a human approval the agent cannot produce.

Attacks named after what they break: a forged ``intent.scope_expanded`` written through
``ledger append``, through the library without an approval proof, or pointing at a tool call
that was never asked; and ``ledger intent expand`` run from a shell without a terminal.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ledger import Ledger, intent_summaries

from ._support import LEDGER, Session, Workspace, make_workspace, run_cli

DOCS = "docs/auth.md"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path)


def write_docs(session: Session) -> str | None:
    return session.pre(
        "Write", {"file_path": str(session.ws.path(DOCS)), "content": "# auth\n"}
    ).code


def grant(ws: Workspace, **body: object) -> None:
    Ledger.open(ws.root, environ=ws.env).append(
        "intent.scope_expanded",
        {
            "approved_via": "cli",
            "globs": ["docs/**"],
            "intent_id": "INT-001",
            "reason": None,
            "session": None,
            "tool_use_id": None,
            **body,
        },
    )


def test_forged_grant_through_ledger_append_is_refused(ws: Workspace) -> None:
    before = ws.ledger_bytes()
    done = run_cli(
        ["append", "--kind", "intent.scope_expanded", "--root", str(ws.root)],
        ws.proc_env,
        stdin=b'{"intent_id": "INT-001", "globs": ["**"]}',
    )
    assert done.returncode == 3
    assert b"reserved" in done.stderr
    assert ws.ledger_bytes() == before


def test_forged_grant_without_approval_does_not_widen_scope(ws: Workspace) -> None:
    session = Session(ws, "forger")
    session.select()
    grant(ws)  # signed and chained, but no approval proof
    assert write_docs(session) == "SCOPE_VIOLATION"


def test_forged_grant_naming_a_call_nobody_was_asked_about_does_not_widen_scope(
    ws: Workspace,
) -> None:
    session = Session(ws, "forger")
    session.select()
    allowed = session.tool_use_id()
    session.pre("Read", {"file_path": str(ws.path("README.md"))}, tool_use_id=allowed)
    grant(ws, approved_via="claude ask", tool_use_id=allowed)  # that call was not an ask
    grant(ws, approved_via="claude ask", tool_use_id="toolu_never_seen")
    assert write_docs(session) == "SCOPE_VIOLATION"


def test_grant_with_terminal_approval_widens_scope(ws: Workspace) -> None:
    session = Session(ws, "human")
    session.select()
    grant(ws, approval="tty")
    assert write_docs(session) is None


def test_intent_expand_without_a_terminal_records_nothing(ws: Workspace) -> None:
    before = ws.ledger_bytes()
    done = run_cli(
        ["intent", "expand", "INT-001", "docs/**", "--root", str(ws.root)], ws.proc_env, stdin=b""
    )
    assert done.returncode == 0, done.stderr
    assert b"not recorded here" in done.stdout
    assert ws.ledger_bytes() == before


def test_intent_expand_at_a_terminal_is_the_approval(ws: Workspace) -> None:
    controller, terminal = os.openpty()
    try:
        done = subprocess.run(
            [str(LEDGER), "intent", "expand", "INT-001", "docs/**", "--root", str(ws.root)],
            stdin=terminal,
            capture_output=True,
            env=ws.proc_env,
            timeout=60,
            check=False,
        )
    finally:
        os.close(terminal)
        os.close(controller)
    assert done.returncode == 0, done.stderr
    record = ws.records()[-1]
    assert record.kind == "intent.scope_expanded"
    assert record.body["approval"] == "tty"
    session = Session(ws, "after")
    session.select()
    assert write_docs(session) is None


def approved_expansions(ws: Workspace) -> list[str]:
    (summary,) = (s for s in intent_summaries(ws.root, environ=ws.env) if s["id"] == "INT-001")
    return list(summary["approved_expansions"])


def test_forged_grant_is_not_listed_as_an_approved_expansion(ws: Workspace) -> None:
    # `ledger intents` once folded grants on its own and listed any signed scope_expanded record.
    grant(ws, globs=["**"])  # no approval proof
    assert approved_expansions(ws) == []
    grant(ws, approval="tty")
    assert approved_expansions(ws) == ["docs/**"]


def test_withdrawn_grant_is_not_listed_as_an_approved_expansion(ws: Workspace) -> None:
    grant(ws, approval="tty")
    assert approved_expansions(ws) == ["docs/**"]
    done = run_cli(
        ["intent", "withdraw", "INT-001", "docs/**", "--root", str(ws.root)], ws.proc_env
    )
    assert done.returncode == 0, done.stderr
    assert approved_expansions(ws) == []
