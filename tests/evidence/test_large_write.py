"""A 64 MiB Write through the real hook command: governed and recorded like any other, its
content scanned within the hook's budget (the record keeps at most 1 MiB of it), never refused
for its size, never a hook timeout, and no secret of it on disk. Its lines are still attributed:
``ledger blame`` names the write (one hunk for the whole file, each line's short hash while
they fit the record, the file's SHA-256 beyond), though its text is neither kept nor recorded.

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
    _select(ws)
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
    # Attribution: the post record says which lines the write wrote (no line hashes past the
    # record's budget, never the text), and blame names the write for any of them.
    [change] = post_record.data["body"]["attribution"]["files"]
    lines = content.count("\n")
    assert (change["exact"], change["lines"], change["change"]) == (True, lines, "created")
    [hunk] = change["hunks"]
    assert (hunk["new_start"], hunk["new_lines"], hunk["line_hashes"]) == (1, lines, [])
    for number in (1, lines // 2, lines):
        assert _blamed(ws, f"src/auth/fixture.py:{number}") == ("agent", "toolu_big")


def _blamed(ws: Workspace, spec: str) -> tuple[str, str | None]:
    """``(status, tool_use_id)`` of one line, as ``ledger blame --json`` answers."""
    done = run_cli(["blame", "--json", spec], ws.proc_env, cwd=ws.root, timeout=CLIENT_HOOK_TIMEOUT)
    assert done.returncode == 0, done.stderr[-500:]
    [line] = json.loads(done.stdout)["lines"]
    return line["status"], line.get("tool_use_id")


def _write(ws: Workspace, target: Path, content: str, *, on_disk: str | None = None) -> None:
    """A Write of ``content`` through the real hook command (``on_disk``: what the disk holds
    after the tool ran, when something else changed it)."""
    tool_use_id = f"toolu_{target.stem}_{len(content)}"
    original = target.read_text(encoding="utf-8") if target.exists() else None
    tool_input = {"file_path": str(target), "content": content}
    pre = claude_payload(
        "PreToolUse", ws, "s-big", tool_name="Write", tool_use_id=tool_use_id, tool_input=tool_input
    )
    _hook(ws, "PreToolUse", pre)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content if on_disk is None else on_disk, encoding="utf-8")
    post = claude_payload(
        "PostToolUse",
        ws,
        "s-big",
        tool_name="Write",
        tool_use_id=tool_use_id,
        tool_input=tool_input,
        tool_response=write_response(target, content, original),
    )
    _hook(ws, "PostToolUse", post)


def _select(ws: Workspace) -> None:
    select = claude_payload(
        "PreToolUse",
        ws,
        "s-big",
        tool_name="Bash",
        tool_use_id="toolu_select",
        tool_input={"command": "ledger intent select INT-001"},
    )
    assert _hook(ws, "PreToolUse", select)["hookSpecificOutput"]["permissionDecision"] == "allow"


def _post_change(ws: Workspace, tool_use_id_prefix: str) -> dict[str, Any]:
    ledger = Ledger.open(ws.root, environ=ws.env)
    [post] = [
        r
        for r in ledger.records()
        if r.kind == "hook.post"
        and str(r.data["body"].get("tool_use_id")).startswith(tool_use_id_prefix)
    ]
    [change] = post.data["body"]["attribution"]["files"]
    assert isinstance(change, dict)
    return change


def test_a_large_write_over_a_large_file_attributes_each_line_by_its_hash(ws: Workspace) -> None:
    """2.4 MiB, 40,000 lines: over the blob limit, so neither side's text is kept, but each
    line's hash is recorded: a line a person adds later moves the others, and blame still
    names the write for them (a diff of hashes), and nobody's write for the person's line."""
    _select(ws)
    target = ws.root / "src" / "auth" / "table.py"
    first = "".join(
        f"FIRST_{n:06d} = {n} * 31  # the first version of the table\n" for n in range(40_000)
    )
    second = "".join(
        f"ROW_{n:06d} = {n} * 17  # a generated row of the second table\n" for n in range(40_000)
    )
    assert len(second) > 2 * MIB
    _write(ws, target, first)
    _write(ws, target, second)
    change = _post_change(ws, f"toolu_table_{len(second)}")
    assert (change["exact"], change["change"], change["lines"]) == (True, "modified", 40_000)
    [hunk] = change["hunks"]
    assert (hunk["old_start"], hunk["old_lines"], hunk["new_lines"]) == (1, 40_000, 40_000)
    assert len(hunk["line_hashes"]) == 40_000
    record = json.dumps(change)
    assert "ROW_000001" not in record  # hashes, never the text
    tool_use_id = f"toolu_table_{len(second)}"
    assert _blamed(ws, "src/auth/table.py:20000") == ("agent", tool_use_id)
    target.write_text("# a person's note at the top\n" + second, encoding="utf-8")
    assert _blamed(ws, "src/auth/table.py:1")[0] != "agent"
    assert _blamed(ws, "src/auth/table.py:2") == ("agent", tool_use_id)
    assert _blamed(ws, "src/auth/table.py:40001") == ("agent", tool_use_id)


def test_a_large_write_whose_file_differs_on_disk_is_attributed_to_nobody(ws: Workspace) -> None:
    """The disk is not what the Write carried (a formatter on save, a write racing the hook):
    its text cannot be the file's, so no line of it is the write's."""
    _select(ws)
    target = ws.root / "src" / "auth" / "formatted.py"
    content = "".join(f"value_{n} = {n}\n" for n in range(60_000))
    assert len(content) > MIB
    _write(ws, target, content, on_disk=content.replace("value_", "VALUE_"))
    change = _post_change(ws, f"toolu_formatted_{len(content)}")
    assert change["exact"] is False
    assert change["hunks"] == []
    assert _blamed(ws, "src/auth/formatted.py:10")[0] != "agent"
