"""Scope grants count only with a human approval the agent cannot produce.

Attacks named after what they break: a forged ``intent.scope_expanded`` written through
``ledger append``, through the library without an approval proof, or pointing at a tool call
that was never asked; ``ledger intent expand`` run inside an agent with a pty for a terminal
(decision 0013: ``isatty`` is not a person).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ledger import (
    Entry,
    GovernedWorkspace,
    InputError,
    Ledger,
    NotAPersonError,
    agent_marker,
    ancestor_chain,
    intent_summaries,
)
from ledger._governance.person import AGENT_ENV_MARKERS
from tests.reserved import as_ledger_itself

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
    as_ledger_itself(Ledger.open(ws.root, environ=ws.env)).append(
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


@pytest.mark.parametrize("approval", ["person", "tty"])  # "tty": records before decision 0013
def test_grant_with_a_persons_approval_widens_scope(ws: Workspace, approval: str) -> None:
    session = Session(ws, "human")
    session.select()
    grant(ws, approval=approval)
    assert write_docs(session) is None


def _expand_in_pty(ws: Workspace, argv_prefix: list[str], env: dict[str, str]) -> bytes:
    """Run ``ledger intent expand`` with a terminal on stdin (what a pty wrapper gives)."""
    root = str(ws.root)
    controller, terminal = os.openpty()
    try:
        done = subprocess.run(
            [*argv_prefix, str(LEDGER), "intent", "expand", "INT-001", "docs/**", "--root", root],
            stdin=terminal,
            capture_output=True,
            env=env,
            timeout=60,
            check=False,
        )
    finally:
        os.close(terminal)
        os.close(controller)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("marker", ["CLAUDECODE", "CODEX_THREAD_ID", "GEMINI_CLI", "CURSOR_AGENT"])
def test_pty_wrapper_in_an_agents_environment_cannot_approve_scope(
    ws: Workspace, marker: str
) -> None:
    # A terminal is not a person: `script -qc 'ledger intent expand ...'` gives the command a tty.
    before = ws.ledger_bytes()
    out = _expand_in_pty(ws, [], {**ws.proc_env, marker: "1"})
    assert b"not recorded here" in out
    assert ws.ledger_bytes() == before


def test_pty_wrapper_under_an_agent_process_cannot_approve_scope(
    ws: Workspace, tmp_path: Path
) -> None:
    # The agent's markers stripped from the environment (env -u, env -i), a pty on stdin: the
    # command still runs under the agent's process, named as the client is.
    agent = tmp_path / "bin" / "claude"
    agent.parent.mkdir()
    agent.symlink_to("/bin/sh")  # comm is the name it was run by: "claude"
    before = ws.ledger_bytes()
    clean = {k: v for k, v in ws.proc_env.items() if k not in AGENT_ENV_MARKERS}
    out = _expand_in_pty(ws, [str(agent), "-c", '"$@"; true', "claude"], clean)
    assert b"not recorded here" in out
    assert b"claude" in out
    assert ws.ledger_bytes() == before


def test_library_refuses_an_approval_from_inside_an_agent(ws: Workspace) -> None:
    workspace = GovernedWorkspace(ws.root, environ={**ws.env, "CLAUDECODE": "1"})
    with pytest.raises(NotAPersonError, match=r"only a person can record intent\.scope_expanded"):
        workspace.record_person_command(
            "intent.scope_expanded",
            {"approval": "person", "globs": ["**"], "intent_id": "INT-001"},
            session=None,
        )


def test_public_append_refuses_a_forged_grant(ws: Workspace) -> None:
    # Issue 15: `python3 -c "from ledger import Ledger; Ledger.open().append(...)"` widened scope.
    session = Session(ws, "agent")
    session.select()
    ledger = Ledger.open(ws.root, environ=ws.env)
    body = {"approval": "person", "globs": ["docs/**"], "intent_id": "INT-001"}
    with pytest.raises(InputError, match="reserved for ledger itself"):
        ledger.append("intent.scope_expanded", body)
    with pytest.raises(InputError, match="reserved for ledger itself"):
        ledger.append_many([Entry("hook.pre", {"decision": "ask", "tool_use_id": "t1"})])
    assert write_docs(session) == "SCOPE_VIOLATION"


def test_intent_expand_by_a_person_outside_any_agent_is_the_approval(ws: Workspace) -> None:
    if agent_marker(os.environ, ancestor_chain()) is not None:
        pytest.skip("the suite itself runs inside an agent: no command it starts is a person's")
    clean = {k: v for k, v in ws.proc_env.items() if k not in AGENT_ENV_MARKERS}
    _expand_in_pty(ws, [], clean)
    record = ws.records()[-1]
    assert record.kind == "intent.scope_expanded"
    assert record.body["approval"] == "person"
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
