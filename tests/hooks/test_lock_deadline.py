"""A process holding ledger's lock cannot make a hook wait past the client's timeout.

``flock .orchestration/agent_trace.jsonl sleep 100000 &`` from an agent's shell made every later
hook wait on the lock until the client's hook timeout, and a client whose hook times out lets
the tool call run unrecorded. Every wait on the lock now ends at a deadline well under those
timeouts, and the call is denied, naming the holder.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ledger import Ledger, LockTimeoutError, run_hook
from ledger._evidence import store
from ledger._evidence.store import LOCK_DEADLINE, LedgerFile, lock_holder

from ._support import Workspace, claude_payload, make_workspace, run_cli

# A holder that takes the lock the way the attack did: flock(1) if installed, else Python's.
_HOLD = (
    "import fcntl, os, sys, time\n"
    "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
    "fcntl.flock(fd, fcntl.LOCK_EX)\n"
    "print('held', flush=True)\n"
    "time.sleep(600)\n"
)
_SLEEP = "import time; print('held', flush=True); time.sleep(600)"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path)


@pytest.fixture
def holder(ws: Workspace) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the lock on the ledger file, as ``flock FILE sleep`` does."""
    ledger_file = ws.orchestration / "agent_trace.jsonl"
    flock = shutil.which("flock")
    argv = (
        [flock, str(ledger_file), sys.executable, "-c", _SLEEP]
        if flock
        else [sys.executable, "-c", _HOLD, str(ledger_file)]
    )
    # Its own process group: flock(1) forks the command, which holds the lock too.
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "held"
        yield proc
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]


def _pre_write(ws: Workspace) -> bytes:
    payload = claude_payload(
        "PreToolUse",
        ws,
        "s-lock",
        tool_name="Write",
        tool_input={"file_path": str(ws.root / "src/auth/a.ts"), "content": "x\n"},
        tool_use_id="toolu_lock",
    )
    return json.dumps(payload).encode()


def test_holding_the_ledger_lock_cannot_stall_a_hook_past_the_deadline(
    ws: Workspace, holder: subprocess.Popen[str]
) -> None:
    before = ws.ledger_bytes()
    started = time.monotonic()
    response = run_hook("claude", _pre_write(ws), expected_event="PreToolUse", environ=ws.env)
    waited = time.monotonic() - started
    assert waited < LOCK_DEADLINE + 1.5, waited
    answer = json.loads(response.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    reason = answer["permissionDecisionReason"]
    assert "lock" in reason
    if Path("/proc/locks").exists():
        assert f"pid {holder.pid}" in reason or "flock" in reason, reason
    assert ws.ledger_bytes() == before  # nothing recorded, nothing torn


def test_holding_the_ledger_lock_cannot_stall_the_hook_command(
    ws: Workspace, holder: subprocess.Popen[str]
) -> None:
    env = {**ws.proc_env, "LEDGER_DECIDER": "off"}
    started = time.monotonic()
    done = run_cli(["hook", "claude", "--event", "PreToolUse"], env, stdin=_pre_write(ws))
    assert time.monotonic() - started < LOCK_DEADLINE + 10  # interpreter start included
    assert b'"deny"' in done.stdout, done
    assert b"held by" in done.stdout


def test_holding_the_ledger_lock_cannot_stall_a_persons_command(
    ws: Workspace, holder: subprocess.Popen[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A person's command waits longer than a hook (no client timer; an honest queue under load
    # may last seconds), but it still ends, naming the holder; shortened here to keep the test fast.
    assert store.LIBRARY_LOCK_DEADLINE > 4 * LOCK_DEADLINE
    monkeypatch.setattr(store, "LIBRARY_LOCK_DEADLINE", 0.5)
    with pytest.raises(LockTimeoutError, match=r"held by"):
        Ledger.open(ws.root, environ=ws.env).append("note", {"text": "x"})


def test_a_library_writer_outwaits_an_honest_holder_longer_than_a_hook_would(
    ws: Workspace,
) -> None:
    # Writers queued behind a slow one under load must not fail (they lost records under load
    # when every writer had the hook's deadline).
    path = ws.orchestration / "agent_trace.jsonl"
    hold = LOCK_DEADLINE + 1.0
    code = (
        "import fcntl, sys, time; f = open(sys.argv[1], 'rb'); fcntl.flock(f, fcntl.LOCK_EX);"
        " print('held', flush=True); time.sleep(float(sys.argv[2]))"
    )
    with subprocess.Popen(
        [sys.executable, "-c", code, str(path), str(hold)], stdout=subprocess.PIPE, text=True
    ) as slow:
        assert slow.stdout is not None
        assert slow.stdout.readline() == "held\n"
        record = Ledger.open(ws.root, environ=ws.env).append("note", {"text": "queued"})
    assert record.seq > 0


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="/proc/locks is Linux's")
def test_lock_holder_names_the_holding_process(
    ws: Workspace, holder: subprocess.Popen[str]
) -> None:
    named = lock_holder(ws.orchestration / "agent_trace.jsonl")
    assert named is not None
    assert named.startswith(f"pid {holder.pid} (") or "sleep" in named or "flock" in named


def test_an_unheld_lock_names_no_holder_and_is_taken_at_once(ws: Workspace) -> None:
    path = ws.orchestration / "agent_trace.jsonl"
    assert lock_holder(path) is None
    started = time.monotonic()
    with LedgerFile(path, deadline=0.0).transaction() as tx:
        assert tx.size > 0
    assert time.monotonic() - started < 0.5
