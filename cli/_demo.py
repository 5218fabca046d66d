"""``ledger demo``: the main job on a throwaway workspace, narrated.

Everything goes through the public library API, with a private ``LEDGER_HOME`` so the demo
never touches the user's keys.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from cli._exit import OK
from ledger._ledger import Entry, Ledger

_SESSION = "3f1c9a2e-7b4d-4e8a-9c51-2d6f0b8e4a17"
_ACTOR = {"client": "claude-code", "session": _SESSION, "model": "claude-sonnet-4-5"}


def _say(text: str = "") -> None:
    print(text, flush=True)


def _step(title: str) -> None:
    _say()
    _say(f"== {title}")


def run_demo(directory: Path | None, *, keep: bool = False) -> int:
    """Create a workspace, record an agent session, verify it, then show what verify catches."""
    base = Path(tempfile.mkdtemp(prefix="ledger-demo-")) if directory is None else directory
    base.mkdir(parents=True, exist_ok=True)
    environ = {k: v for k, v in os.environ.items() if k != "LEDGER_SIGNING_KEY"}
    environ["LEDGER_HOME"] = str(base / "home")  # the demo's private key stays in here
    workspace = base / "workspace"
    try:
        _run(workspace, base, environ)
    finally:
        if directory is None and not keep:
            shutil.rmtree(base, ignore_errors=True)
        else:
            _say(f"\nworkspace kept at {workspace} (try: ledger --help; "
                 f"LEDGER_HOME={environ['LEDGER_HOME']} ledger log --root {workspace})")
    return OK


def _run(workspace: Path, base: Path, environ: dict[str, str]) -> None:
    _step(f"ledger init  ({workspace})")
    ledger = Ledger.init(workspace, environ=environ)
    genesis = next(ledger.records())
    _say(f"ledger id {genesis.ledger_id}; signing key {genesis.key}")
    _say(f"private key: {environ['LEDGER_HOME']}/keys/{genesis.key}.pem (mode 0600, outside "
         "the workspace); public key pinned in .orchestration/keys/")

    _step("an agent session appends signed, hash-chained records")
    session = [
        Entry("session.start", {"source": "startup"}, _ACTOR),
        Entry("intent.selected", {"intent_id": "INT-001", "name": "JWT hardening"}, _ACTOR),
        Entry("hook.pre", {"tool": "Edit", "file": "src/auth/middleware.ts",
                           "decision": "allow", "reason": "in scope of INT-001"}, _ACTOR),
        Entry("hook.post", {"tool": "Edit", "file": "src/auth/middleware.ts",
                            "outcome": "success", "lines_added": [21, 24], "duration_ms": 41},
              _ACTOR),
        Entry("hook.pre", {"tool": "Bash", "command": "rm -rf build/", "decision": "ask",
                           "reason": "DESTRUCTIVE: rm removes files"}, _ACTOR),
        Entry("session.end", {"reason": "prompt_input_exit"}, _ACTOR),
    ]
    for entry in session:
        record = ledger.append(entry.kind, entry.body, actor=entry.actor)
        _say(f"  seq {record.seq:>2}  {record.kind:<16} hash {record.hash[:16]}…  "
             f"prev {record.prev[:16]}…")

    _step("ledger verify")
    report = ledger.verify()
    _say(f"  {report.summary()}")

    _step("ledger checkpoint  (keep it off this machine: git, CI artifacts)")
    checkpoint = ledger.checkpoint()
    _say("  " + checkpoint.text().replace("\n", "\n  ").rstrip())

    _step("tampering: edit one byte of seq 3 in a copy")
    tampered = _copy(workspace, base / "tampered")
    _edit_line(tampered, 3, lambda line: line.replace(b'"allow"', b'"allaw"', 1))
    report = Ledger.open(tampered, environ=environ).verify()
    _say(f"  {report.summary()}")

    _step("truncation: delete the last two records in a copy")
    truncated = _copy(workspace, base / "truncated")
    _truncate_lines(truncated, 2)
    copy = Ledger.open(truncated, environ=environ)
    _say(f"  without a checkpoint: {copy.verify().summary()}")
    _say("  (a hash chain cannot prove its own tail; that is what checkpoints are for)")
    report = copy.verify(checkpoints=[("checkpoint", checkpoint.text())])
    _say(f"  with the checkpoint:  {report.summary()}")

    _step("crash mid-append: a torn last line, then ledger repair")
    with ledger.file.path.open("ab") as handle:
        handle.write(b'{"actor":{"agent":null,"client":"claude-co')
    _say(f"  verify: {ledger.verify().summary()}")
    result = ledger.repair()
    _say(f"  repair: moved {result.removed_bytes} bytes to {result.quarantine_file}")
    _say(f"  verify: {ledger.verify().summary()}")

    _step("throughput on this machine")
    started = time.perf_counter()
    body = {"tool": "Edit", "file": "src/auth/middleware.ts", "decision": "allow"}
    ledger.append_many([Entry("hook.pre", body, _ACTOR)] * 2000)
    appended = time.perf_counter() - started
    started = time.perf_counter()
    report = ledger.verify()
    verified = time.perf_counter() - started
    _say(f"  appended 2000 records in {appended * 1000:.0f} ms (one fsync); "
         f"verified {report.records} in {verified * 1000:.0f} ms: {report.summary()}")


def _copy(workspace: Path, target: Path) -> Path:
    shutil.copytree(workspace, target)
    return target


def _edit_line(workspace: Path, seq: int, edit: Callable[[bytes], bytes]) -> None:
    path = workspace / ".orchestration" / "agent_trace.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[seq] = edit(lines[seq])
    path.write_bytes(b"\n".join(lines))


def _truncate_lines(workspace: Path, count: int) -> None:
    path = workspace / ".orchestration" / "agent_trace.jsonl"
    lines = path.read_bytes().split(b"\n")[:-1]
    path.write_bytes(b"\n".join(lines[:-count]) + b"\n")
