"""A 64 MiB Write through the real hook command: governed and recorded like any other, its
content scanned within the hook's budget (the record keeps at most 1 MiB of it), never refused
for its size, never a hook timeout, and no secret of it on disk.

Bad input the issue names: "a 64 MiB Write: scanned within its budget, or committed whole and
withheld, never a hook timeout". The calls go through ``ledger hook claude`` as Claude Code runs
it (stdin, exit code, stdout), with the client's own time limit (60 s) as the bound.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ledger import Ledger
from ledger._evidence.disclosure import DisclosureStore, commitments_in
from tests.hooks._support import (
    Workspace,
    claude_payload,
    make_workspace,
    run_cli,
    write_response,
)

#: Claude Code's time limit for a command hook (hook-protocols.md): a slower answer is a timeout.
CLIENT_HOOK_TIMEOUT = 60
TOKEN = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
LATE_TOKEN = "ghp_" + "zZ9yY8xX7wW6vV5uU4tT3sS2rR1qQ0pP9oO8"
MIB = 1024 * 1024


def _hook(ws: Workspace, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    env = {**ws.proc_env, "LEDGER_DECIDER": "off"}  # no resident decider outlives the test
    done = run_cli(
        ["hook", "claude", "--event", event],
        env,
        cwd=ws.root,
        stdin=json.dumps(payload).encode(),
        timeout=CLIENT_HOOK_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr[-500:]
    assert b"hook error" not in done.stderr, done.stderr[-500:]
    out = json.loads(done.stdout or b"{}")
    assert isinstance(out, dict)
    return out


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path)


def test_a_64_mib_write_is_governed_recorded_and_scanned_not_refused_or_timed_out(
    ws: Workspace,
) -> None:
    select = claude_payload(
        "PreToolUse",
        ws,
        "s-big",
        tool_name="Bash",
        tool_use_id="toolu_select",
        tool_input={"command": "ledger intent select INT-001"},
    )
    assert _hook(ws, "PreToolUse", select)["hookSpecificOutput"]["permissionDecision"] == "allow"
    line = "row = 'generated fixture data, sixty-four bytes to the line....'\n"
    body = line * (64 * MIB // len(line))
    # One secret where the record keeps the content (redacted there), one past what it keeps.
    content = f"API_TOKEN = '{TOKEN}'\n" + body + f"LATE_TOKEN = '{LATE_TOKEN}'\n"
    assert len(content) >= 64 * MIB
    target = ws.root / "src" / "auth" / "fixture.py"
    tool_input = {"file_path": str(target), "content": content}

    pre = claude_payload(
        "PreToolUse", ws, "s-big", tool_name="Write", tool_use_id="toolu_big", tool_input=tool_input
    )
    answer = _hook(ws, "PreToolUse", pre)
    assert answer.get("hookSpecificOutput", {}).get("permissionDecision") in (None, "allow")

    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")
    post = claude_payload(
        "PostToolUse",
        ws,
        "s-big",
        tool_name="Write",
        tool_use_id="toolu_big",
        tool_input=tool_input,
        tool_response=write_response(target, content, None),
    )
    _hook(ws, "PostToolUse", post)

    ledger = Ledger.open(ws.root, environ=ws.env)
    assert ledger.verify().ok
    records = [r for r in ledger.records() if r.data["body"].get("tool_use_id") == "toolu_big"]
    assert [r.kind for r in records] == ["hook.pre", "hook.post"]
    assert [r.kind for r in ledger.records() if r.kind == "hook.error"] == []
    # The content is committed; what is disclosed of it was scanned: the first token became
    # its placeholder, the one past the kept MiB never reached a file.
    post_record = records[1]
    fields = dict(commitments_in(post_record.data["body"]))
    assert fields, "the written content is committed, not stored plain"
    store = DisclosureStore.beside(ledger.file.path)
    disclosed = [line for line in store.lines() if line.get("seq") == post_record.seq]
    assert disclosed
    assert store.path.stat().st_size < 8 * MIB  # bounded: the record keeps at most 1 MiB per edit
    assert any("[secret:" in json.dumps(line.get("value")) for line in disclosed)
    for path in ws.orchestration.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert TOKEN.encode() not in data, path
            assert LATE_TOKEN.encode() not in data, path
