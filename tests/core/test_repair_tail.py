"""The end of the file: torn lines, blank lines, whitespace, a missing final newline.

Dead ends of decision 0007: a blank line at the end locked the agent out and ``repair`` said
"nothing to repair"; a complete, signed last record without its newline was quarantined (an
acknowledged record lost) and verify called it a torn tail.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger import Ledger, RepairRefusedError, SigningKey, TornTailError

KEY = SigningKey.from_seed(bytes([3]) * 32)
WHITESPACE = st.text(alphabet=" \t\r\n", min_size=1, max_size=12)


def new_ledger(base: Path, records: int = 4) -> Ledger:
    ledger = Ledger.init(base / "ws", signing_key=KEY, environ={"LEDGER_HOME": str(base / "h")})
    ledger.append_many([("app.event", {"n": n}) for n in range(records - 1)])
    return ledger


def test_missing_final_newline_is_reported_as_such(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    data = ledger.file.path.read_bytes()
    ledger.file.path.write_bytes(data[:-1])  # truncate -s -1
    report = ledger.verify(jobs=1)
    assert [p.code for p in report.problems] == ["missing-newline"]
    assert report.records == 4  # the last record was checked and counted
    assert report.repairable
    assert "missing final newline" in report.summary()
    assert "torn" not in report.summary()
    with pytest.raises(TornTailError, match=r"lacks its final newline.*ledger repair"):
        ledger.append("app.event", {})


def test_repair_keeps_a_record_that_lacks_only_its_newline(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    data = ledger.file.path.read_bytes()
    ledger.file.path.write_bytes(data[:-1])
    result = ledger.repair()
    assert result.repaired
    assert result.added_newline
    assert result.removed_bytes == 0
    assert result.quarantine_file is None
    assert ledger.file.path.read_bytes().startswith(data)  # every byte kept, newline restored
    assert result.record is not None
    assert result.record.body["added_newline"] is True
    assert ledger.verify(jobs=1).ok


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(WHITESPACE, st.booleans())
def test_trailing_whitespace_does_not_lock_the_ledger(
    tmp_path_factory: pytest.TempPathFactory, junk: str, drop_newline: bool
) -> None:
    ledger = new_ledger(tmp_path_factory.mktemp("ws"))
    data = ledger.file.path.read_bytes()
    damaged = (data[:-1] if drop_newline else data) + junk.encode()
    ledger.file.path.write_bytes(damaged)
    if damaged == data:
        assert ledger.repair().repaired is False
        return
    report = ledger.verify(jobs=1)
    assert report.repairable, report.problems
    assert "ledger repair" in report.summary()
    with pytest.raises(TornTailError, match="ledger repair"):
        ledger.append("app.event", {})  # refused, and the refusal names the way out
    result = ledger.repair()
    assert result.repaired
    assert ledger.file.path.read_bytes().startswith(data)  # no record lost
    quarantined = (
        (ledger.workspace.orchestration / result.quarantine_file).read_bytes()
        if (result.quarantine_file)
        else b""
    )
    assert (
        data + quarantined[1:] == damaged
        or data[:-1] + quarantined == damaged
        or (data + quarantined == damaged)
    )
    ledger.append("app.event", {})  # unlocked
    assert ledger.verify(jobs=1).ok


def test_blank_line_at_the_end_is_repaired_and_recorded(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    with ledger.file.path.open("ab") as handle:
        handle.write(b"\n")
    with pytest.raises(TornTailError, match=r"blank line.*ledger repair"):
        ledger.append("app.event", {})
    result = ledger.repair()
    assert (result.repaired, result.removed_kind, result.added_newline) == (
        True,
        "whitespace",
        False,
    )
    assert result.record is not None
    assert result.record.body["removed_kind"] == "whitespace"
    assert ledger.verify(jobs=1).ok


def test_blank_line_in_the_middle_is_not_repairable(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    lines = ledger.file.path.read_bytes().splitlines(keepends=True)
    ledger.file.path.write_bytes(b"".join([*lines[:2], b"\n", *lines[2:]]))
    report = ledger.verify(jobs=1)
    assert not report.repairable
    assert "blank-line" in {p.code for p in report.problems}
    damaged = ledger.file.path.read_bytes()
    assert ledger.repair().repaired is False  # the end is fine; the middle is not repair's
    assert ledger.file.path.read_bytes() == damaged
    with ledger.file.path.open("ab") as handle:
        handle.write(b"\n")
    with pytest.raises(RepairRefusedError, match="ledger verify"):
        ledger.repair()  # refuses to touch the end while the middle is damaged
    assert ledger.file.path.read_bytes() == damaged + b"\n"


def test_torn_line_is_still_quarantined(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    data = ledger.file.path.read_bytes()
    with ledger.file.path.open("ab") as handle:
        handle.write(b'{"actor":{"agent":null,"cli')
    assert ledger.verify(jobs=1).only_torn_tail
    result = ledger.repair()
    assert (result.removed_kind, result.removed_bytes, result.added_newline) == ("torn", 27, False)
    assert ledger.file.path.read_bytes().startswith(data)
    assert ledger.verify(jobs=1).ok


def test_last_record_without_newline_and_a_bad_signature_is_not_kept(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    data = ledger.file.path.read_bytes()
    forged = data[:-1].replace(b'"n":2', b'"n":3')  # edited, then the newline dropped
    ledger.file.path.write_bytes(forged)
    report = ledger.verify(jobs=1)
    assert "missing-newline" not in {p.code for p in report.problems}
    result = ledger.repair()  # a damaged partial line: quarantined as torn, never kept
    assert result.removed_kind == "torn"
    assert ledger.verify(jobs=1).ok
