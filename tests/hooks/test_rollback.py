"""A rollback of the ledger is caught by plain ``ledger verify`` once a session has ended.

The attack of decision 0011: an agent's shell restores an older ledger (``git stash``,
``git checkout-index``) or cuts its last records; the shorter chain is still a valid chain, and
verify used to say ok. The hook path now stores a signed checkpoint outside the workspace at
session end, and ``ledger verify`` checks every stored checkpoint without being asked.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from ledger._evidence.anchors import CheckpointStore

from ._support import Session, Workspace, make_workspace, read_response, run_cli

RECORDS = 70


def git(ws: Workspace, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=ws.root,
        check=True,
        capture_output=True,
        env=ws.proc_env,
    )


def session_of(ws: Workspace, records: int) -> None:
    """One Claude Code session through the in-process hook path, ending the ledger at
    ``records`` records (genesis included), then SessionEnd."""
    (ws.root / "README.md").write_text("hello\n")
    session = Session(ws, "3f1c-rollback")
    session.event("SessionStart", source="startup")
    count = len(ws.records())
    path = ws.root / "README.md"
    while count < records - 1:
        session.post("Read", {"file_path": str(path)}, read_response(path, "hello\n"))
        count += 1
    session.event("SessionEnd", reason="prompt_input_exit")
    assert len(ws.records()) == records


@pytest.fixture
def committed(tmp_path: Path) -> Workspace:
    """A workspace whose 1-record ledger is committed to git."""
    ws = make_workspace(tmp_path)
    git(ws, "init", "-q")
    # A team that commits its ledger (the README's default keeps it local): git can then roll
    # it back, which is the attack.
    git(ws, "add", "--force", ".orchestration")
    git(ws, "commit", "-q", "-m", "ledger")
    return ws


def cut_last_records(ws: Workspace) -> None:
    path = ws.orchestration / "agent_trace.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-5]))


ROLLBACKS: dict[str, Callable[[Workspace], None]] = {
    "git-stash": lambda ws: git(ws, "stash", "-q"),
    "git-checkout-index": lambda ws: git(
        ws, "checkout-index", "-f", ".orchestration/agent_trace.jsonl"
    ),
    "delete-last-records": cut_last_records,
}


@pytest.mark.parametrize("how", sorted(ROLLBACKS))
def test_rollback_after_session_end_fails_plain_verify(committed: Workspace, how: str) -> None:
    session_of(committed, RECORDS)
    before = run_cli(["verify"], committed.proc_env, cwd=committed.root)
    assert before.returncode == 0, before.stdout + before.stderr
    ROLLBACKS[how](committed)
    if how != "delete-last-records":
        assert len(committed.records()) == 1  # 70 records -> 1, still a valid chain
    done = run_cli(["verify"], committed.proc_env, cwd=committed.root)
    assert done.returncode == 1, done.stdout + done.stderr
    assert b"truncated" in done.stdout
    assert f"saw {RECORDS} records".encode() in done.stdout


def test_rollback_is_never_papered_over_by_a_new_checkpoint(committed: Workspace) -> None:
    session_of(committed, RECORDS)
    records = committed.records()
    store = CheckpointStore.for_ledger(records[0].ledger_id, committed.env)
    anchored = [c.size for c in store.list()]
    assert anchored == [RECORDS]
    git(committed, "stash", "-q")
    # The agent carries on in a new session on the shorter chain, past the old length.
    session_of(committed, RECORDS + 10)
    assert [c.size for c in store.list()] == anchored  # no checkpoint of the rewritten chain
    done = run_cli(["verify", "--json"], committed.proc_env, cwd=committed.root)
    assert done.returncode == 1
    assert b'"forked"' in done.stdout


def test_a_session_that_extends_the_ledger_moves_the_checkpoint(committed: Workspace) -> None:
    session_of(committed, 20)
    session_of(committed, 40)
    store = CheckpointStore.for_ledger(committed.records()[0].ledger_id, committed.env)
    assert [c.size for c in store.list()] == [20, 40]
    assert run_cli(["verify"], committed.proc_env, cwd=committed.root).returncode == 0
