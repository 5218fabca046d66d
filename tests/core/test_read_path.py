"""The one read path: offsets, torn tails, and format-v1 records upcast on read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger import FORMAT_VERSION, Ledger, SigningKey
from ledger._evidence import record as record_module
from ledger._evidence.models import parse_record
from ledger._evidence.read import line_ending_at, read_records, record_at
from ledger._governance.state import fold
from tests.reserved import as_ledger_itself

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
V1_POST_BODY: dict[str, object] = {  # a whole hook.post body as the previous release wrote it
    "invocation": "inv-1",
    "event": "PostToolUse",
    "client_event": "PostToolUse",
    "tool": "Edit",
    "tool_use_id": "toolu_1",
    "git_head": None,
    "cwd": "/ws",
    "decision": "allow",
    "reason": None,
    "error": None,
    "hooks": [],
    "outcome": "success",
    "duration_ms": 3,
    "tool_error": None,
    "edit": {"old_string": "a", "new_string": "b"},
    "data": {
        "intent_id": "INT-001",
        "mutation_class": "INTENT_EVOLUTION",
        "seen": {"src/a.py": "a" * 64},
        "changed": ["src/a.py"],
        "added_lines": {"src/a.py": [[3, 5]]},
        "file_sha256": "a" * 64,
    },
}


def _ledger(tmp_path: Path) -> Ledger:
    return Ledger.init(
        tmp_path / "ws",
        signing_key=SigningKey.from_seed(b"\x05" * 32),
        environ={"LEDGER_HOME": str(tmp_path / "home")},
    )


def test_offsets_point_at_each_line_and_a_torn_tail_is_not_a_record(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path)
    for n in range(5):
        ledger.append("app.event", {"n": n})
    with ledger.file.path.open("ab") as handle:
        handle.write(b'{"torn":')
    raw = ledger.file.path.read_bytes()
    stored = list(read_records(ledger.file.path))
    assert [s.data["seq"] for s in stored] == list(range(6))
    for item in stored:
        assert raw[item.offset : item.end] == item.line + b"\n"
    resumed = list(read_records(ledger.file.path, start=stored[2].end, chunk_size=64))
    assert [s.data["seq"] for s in resumed] == [3, 4, 5]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    bodies=st.lists(st.text(max_size=300), min_size=0, max_size=12),
    torn=st.binary(max_size=40).filter(lambda b: b"\n" not in b),
    chunk_size=st.integers(1, 2048),
)
def test_record_at_is_the_read_paths_record_at_that_line(
    tmp_path_factory: pytest.TempPathFactory, bodies: list[str], torn: bytes, chunk_size: int
) -> None:
    # `ledger show SEQ` and the genesis read parse one line; they must be the one the read path
    # yields there, whatever the chunk cuts and with a torn tail (never a record).
    ledger = _ledger(tmp_path_factory.mktemp("at"))
    if bodies:
        ledger.append_many([("app.event", {"text": text}) for text in bodies])
    with ledger.file.path.open("ab") as handle:
        handle.write(torn)
    stored = list(read_records(ledger.file.path))
    for index in range(-1, len(stored) + 2):
        expected = stored[index] if 0 <= index < len(stored) else None
        assert record_at(ledger.file.path, index, chunk_size=chunk_size) == expected, index
        assert record_at(ledger.file.path, index) == expected, index
    # The backwards reader a cache uses to check the record it folded to is still there.
    ends = {item.end: item.line for item in stored}
    size = len(ledger.file.path.read_bytes())
    probes = {-1, 0, size, size + 1} | {e + d for e in ends for d in (-2, -1, 0, 1)}
    for end in sorted(probes):
        assert line_ending_at(ledger.file.path, end) == ends.get(end), end


def test_v1_hook_post_is_upcast_to_typed_attribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = _ledger(tmp_path)
    monkeypatch.setattr(record_module, "FORMAT_VERSION", 1)  # write as the previous release did
    as_ledger_itself(ledger).append(
        "hook.post", V1_POST_BODY, actor={"session": "s1", "client": "claude-code"}
    )
    monkeypatch.undo()
    ledger.append("app.event", {"after": "upgrade"})
    raw = [line for line in ledger.file.path.read_bytes().splitlines() if b'"hook.post"' in line]
    assert b'"v":1' in raw[0]  # history is not rewritten
    assert ledger.verify().ok  # a chain mixing v1 and v2 verifies
    post = next(r for r in ledger.records() if r.kind == "hook.post")
    assert post.data["v"] == FORMAT_VERSION
    body = post.body
    assert body["observed"] == {"src/a.py": "a" * 64}
    assert "seen" not in body["data"]
    assert "added_lines" not in body["data"]
    (change,) = body["attribution"]["files"]
    assert change["path"] == "src/a.py"
    assert change["sha256"] == "a" * 64
    assert change["exact"] is False
    assert [(h["new_start"], h["new_lines"]) for h in change["hunks"]] == [(3, 3)]
    parse_record(post.data)  # the upcast record validates against the current models
    state = fold(s.data for s in read_records(ledger.file.path))
    assert state.sessions["s1"]["seen"] == {"src/a.py": "a" * 64}
    assert state.recent["INT-001"] == ["src/a.py (seq 1)"]


def test_the_previous_releases_golden_ledger_still_verifies(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURES / "legacy_v1", ws / ".orchestration")
    ledger = Ledger.open(ws, environ={"LEDGER_HOME": str(tmp_path / "home")})
    report = ledger.verify()
    assert report.ok, report.problems
    assert all(record.data["v"] == FORMAT_VERSION for record in ledger.records())


def test_format_v2_ledgers_verify_unchanged_and_read_as_they_were(tmp_path: Path) -> None:
    """The golden ledger of the release before commitments (format v2): every record verifies
    with its bytes as they were signed, and its plain bodies read as they were."""
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURES / "legacy_v2", ws / ".orchestration")
    before = (ws / ".orchestration" / "agent_trace.jsonl").read_bytes()
    ledger = Ledger.open(ws, environ={"LEDGER_HOME": str(tmp_path / "home")})
    report = ledger.verify()
    assert report.ok, report.problems
    assert report.disclosures is not None
    assert report.disclosures.committed == 0
    stored = [json.loads(line) for line in before.splitlines()]
    assert {line["v"] for line in stored} == {2}
    assert [r.body for r in ledger.records()] == [line["body"] for line in stored]
    assert (ws / ".orchestration" / "agent_trace.jsonl").read_bytes() == before
