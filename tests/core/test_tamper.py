"""Every kind of tampering is detected, and reported at the record where it happened.

Ledgers are generated with Hypothesis from a fixed key and a fixed clock; each attack (see
``ledger_attacks.py``) is checked with the pure ``verify_lines`` and with ``Ledger.verify`` on a
real file, serially and (for a ledger above the parallel threshold) on a process pool.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger import (
    Entry,
    IntegrityError,
    Ledger,
    SigningKey,
    VerifyReport,
    verify_lines,
)
from ledger._evidence import verify_file as parallel_module
from ledger._evidence.checkpoint import parse_checkpoint
from ledger._evidence.record import check_line, check_lines
from ledger._evidence.verify_file import CHUNK_BYTES, PARALLEL_THRESHOLD

from .ledger_attacks import (
    corrupt_byte,
    delete_record,
    duplicate_record,
    edit_field_keep_hash,
    fields,
    forge_signature_padding_bits,
    join_lines,
    reattach_lines,
    recompute_hash_keep_sig,
    resign_by_untrusted_key,
    rewrite_tail,
    signature_is_valid,
    splice_foreign_record,
    split_file,
    swap_records,
    tear_tail,
    truncate_records,
)

KEY = SigningKey.from_seed(bytes(32))
UNTRUSTED = SigningKey.from_seed(bytes([0xEE]) * 32)
LEDGER_ID = "00000000-0000-4000-8000-00000000000a"
FOREIGN_ID = "00000000-0000-4000-8000-00000000000b"
PUBLIC = {KEY.kid: Ed25519PublicKey.from_public_bytes(KEY.public_raw)}

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Record bodies: small JSON objects, no floats.
LEAVES = st.none() | st.booleans() | st.integers(-(2**53 - 1), 2**53 - 1) | st.text(max_size=20)
BODY = st.dictionaries(
    st.text(min_size=1, max_size=8),
    st.recursive(
        LEAVES,
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
        max_leaves=6,
    ),
    max_size=4,
)
BODIES = st.lists(BODY, min_size=2, max_size=11)  # + genesis: 3-12 records


def fixed_clock() -> Callable[[], str]:
    ticks = itertools.count()

    def now() -> str:
        n = next(ticks)
        return f"2026-03-01T12:{n // 60 % 60:02d}:{n % 60:02d}.{n:06d}Z"

    return now


class Scratch:
    """Fresh directories for Hypothesis examples (the function-scoped tmp_path fixture cannot be
    shared across examples) plus one reusable workspace for file-based verification."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.counter = itertools.count()
        self.checker = make_ledger(self.new(), [])

    def new(self) -> Path:
        path = self.base / f"{next(self.counter)}"
        path.mkdir()
        return path

    def ledger(self, bodies: list[dict[str, Any]], ledger_id: str = LEDGER_ID) -> Ledger:
        return make_ledger(self.new(), bodies, ledger_id)

    def lines(self, bodies: list[dict[str, Any]], ledger_id: str = LEDGER_ID) -> list[bytes]:
        return split_file(self.ledger(bodies, ledger_id).file.path.read_bytes())[0]

    def verify_both(self, data: bytes) -> VerifyReport:
        """Verify with the pure fold and through a real file; the two must agree exactly.

        ``Ledger.init`` pinned the signing key outside the workspace (from seq 0), so the pure
        fold gets the same trust root: without it, a damaged genesis record leaves the key
        untrusted for the pure fold alone (the pin is what vouches for it on disk).
        """
        pure = verify_bytes(data, trusted=dict.fromkeys(PUBLIC, 0))
        self.checker.file.path.write_bytes(data)
        # One workspace holds every example's ledger in turn: its anchors outside the workspace
        # (checkpoints, which ledger it holds) are beside the point here.
        on_disk = self.checker.verify(jobs=1, stored_checkpoints=False)
        assert on_disk.problems == pure.problems
        assert (on_disk.records, on_disk.head_seq, on_disk.head_hash) == (
            pure.records,
            pure.head_seq,
            pure.head_hash,
        )
        return pure


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Scratch:
    return Scratch(tmp_path_factory.mktemp("tamper"))


def make_ledger(root: Path, bodies: list[dict[str, Any]], ledger_id: str = LEDGER_ID) -> Ledger:
    ledger = Ledger.init(
        root / "ws",
        signing_key=KEY,
        clock=fixed_clock(),
        ledger_id=ledger_id,
        environ={"LEDGER_HOME": str(root / "home")},
    )
    if bodies:
        ledger.append_many([Entry("app.event", body, {"client": "tamper-test"}) for body in bodies])
    return ledger


def verify_bytes(data: bytes, **kwargs: Any) -> VerifyReport:
    lines, torn = split_file(data)
    return verify_lines(lines, PUBLIC, torn_tail=torn, **kwargs)


def problem_set(report: VerifyReport) -> set[tuple[str, int]]:
    return {(p.code, p.seq) for p in report.problems}


def assert_detected_at(report: VerifyReport, seq: int, code: str | None = None) -> None:
    """A problem at ``seq`` exists (with ``code`` if given) and none is at a smaller seq."""
    assert not report.ok, "tampering went undetected"
    assert report.problems, report.summary()
    seqs = [p.seq for p in report.problems]
    assert min(seqs) == seq, report.problems
    if code is None:
        assert seq in seqs
    else:
        assert (code, seq) in problem_set(report), report.problems


@pytest.fixture(scope="module")
def sample_lines(scratch: Scratch) -> list[bytes]:
    return scratch.lines([{"i": i, "text": f"record {i} ünïcødé 😀"} for i in range(5)])


def test_untampered_ledger_verifies(scratch: Scratch, sample_lines: list[bytes]) -> None:
    report = scratch.verify_both(join_lines(sample_lines))
    assert report.ok, report.problems
    assert report.records == 6
    assert report.head_seq == 5
    assert report.ledger_id == LEDGER_ID


# --- single-byte changes ------------------------------------------------------------------


def expected_seq_after_byte_change(lines: list[bytes], index: int, data: bytes) -> int:
    """Where a single changed byte in line ``index`` must be reported.

    Normally at ``index`` itself. A change to the ``seq`` digits makes the line claim another
    position; Problem.seq is documented as the record's own seq where it has one, so a line
    claiming a smaller seq is reported as out-of-order at that claimed seq.
    """
    new_lines, _ = split_file(data)
    if index < len(new_lines):
        try:
            claimed = fields(new_lines[index]).get("seq")
        except ValueError:
            claimed = None
        if type(claimed) is int:
            return min(index, claimed)
    return index


@SETTINGS
@given(BODIES, st.data())
def test_any_single_byte_change_is_detected_at_its_record(
    scratch: Scratch, bodies: list[dict[str, Any]], data: st.DataObject
) -> None:
    lines = scratch.lines(bodies)
    original = join_lines(lines)
    assert scratch.verify_both(original).ok  # generated ledgers are intact to begin with
    index = data.draw(st.integers(0, len(lines) - 1), label="line")
    start = sum(len(line) + 1 for line in lines[:index])
    offset = data.draw(st.integers(0, len(lines[index])), label="offset")  # incl. the newline
    position = start + offset
    value = data.draw(st.integers(0, 255).filter(lambda v: v != original[position]), label="value")
    mutated = corrupt_byte(original, position, value)
    report = scratch.verify_both(mutated)
    assert_detected_at(report, expected_seq_after_byte_change(lines, index, mutated))
    first = report.first_problem()
    assert first is not None
    assert first.line == index + 1
    if offset == len(lines[index]) and index == len(lines) - 1 and value != ord("\n"):
        assert report.only_torn_tail  # the final newline was changed: a torn tail


@pytest.mark.parametrize("value_xor", [0x01, 0x20])
def test_every_byte_position_is_covered(sample_lines: list[bytes], value_xor: int) -> None:
    """Exhaustive sweep over every byte of a small ledger (pure verifier; fast)."""
    original = join_lines(sample_lines)
    position = 0
    for index, line in enumerate(sample_lines):
        for offset in range(len(line) + 1):
            mutated = corrupt_byte(original, position, original[position] ^ value_xor)
            position += 1
            report = verify_bytes(mutated)
            assert not report.ok, (index, offset)
            expected = expected_seq_after_byte_change(sample_lines, index, mutated)
            assert min(p.seq for p in report.problems) == expected, (index, offset, report.problems)
            assert report.problems[0].line == index + 1, (index, offset, report.problems)


def test_signature_base64_padding_bits_are_detected(
    scratch: Scratch, sample_lines: list[bytes]
) -> None:
    index = 3
    forged = forge_signature_padding_bits(sample_lines[index])
    assert forged != sample_lines[index]
    tampered = list(sample_lines)
    tampered[index] = forged
    assert_detected_at(scratch.verify_both(join_lines(tampered)), index)


# --- whole-line attacks -------------------------------------------------------------------


@SETTINGS
@given(BODIES, st.data())
def test_deleted_record_is_detected(
    scratch: Scratch, bodies: list[dict[str, Any]], data: st.DataObject
) -> None:
    lines = scratch.lines(bodies)
    index = data.draw(st.integers(0, len(lines) - 2), label="index")  # last: truncation
    report = scratch.verify_both(join_lines(delete_record(lines, index)))
    assert_detected_at(report, index, "seq-gap")


@SETTINGS
@given(BODIES, st.data())
def test_duplicated_record_is_detected(
    scratch: Scratch, bodies: list[dict[str, Any]], data: st.DataObject
) -> None:
    lines = scratch.lines(bodies)
    index = data.draw(st.integers(0, len(lines) - 1), label="index")
    report = scratch.verify_both(join_lines(duplicate_record(lines, index)))
    assert_detected_at(report, index, "duplicate")
    assert report.problem_count == 1  # resynchronised: nothing cascades


@SETTINGS
@given(BODIES, st.data())
def test_swapped_records_are_detected_at_first_swapped_seq(
    scratch: Scratch, bodies: list[dict[str, Any]], data: st.DataObject
) -> None:
    lines = scratch.lines(bodies)
    index = data.draw(st.integers(0, len(lines) - 2), label="index")
    report = scratch.verify_both(join_lines(swap_records(lines, index)))
    assert_detected_at(report, index)
    assert ("out-of-order", index) in problem_set(report)
    assert {p.seq for p in report.problems} <= {index, index + 1}


@SETTINGS
@given(BODIES, st.data(), st.booleans())
def test_foreign_record_is_detected(
    scratch: Scratch, bodies: list[dict[str, Any]], data: st.DataObject, replace: bool
) -> None:
    lines = scratch.lines(bodies)
    foreign = scratch.lines(bodies, FOREIGN_ID)  # same key, same bodies, other ledger id
    index = data.draw(st.integers(1, len(lines) - 1), label="index")
    assert fields(foreign[index])["seq"] == index
    assert signature_is_valid(foreign[index], KEY)
    tampered = splice_foreign_record(lines, foreign[index], index, replace=replace)
    assert_detected_at(scratch.verify_both(join_lines(tampered)), index, "foreign-ledger")


def test_foreign_genesis_shows_at_first_real_record(
    scratch: Scratch, sample_lines: list[bytes]
) -> None:
    # Which ledger is "ours" is decided by the genesis record: swap in another ledger's genesis
    # and every later record becomes the foreign one.
    foreign = scratch.lines([{"x": 1}], FOREIGN_ID)
    tampered = splice_foreign_record(sample_lines, foreign[0], 0, replace=True)
    report = scratch.verify_both(join_lines(tampered))
    assert report.ledger_id == FOREIGN_ID
    assert_detected_at(report, 1, "foreign-ledger")
    assert {p.code for p in report.problems} == {"foreign-ledger"}


@SETTINGS
@given(BODIES, st.data())
def test_edited_field_without_new_hash_is_bad_hash(
    scratch: Scratch, bodies: list[dict[str, Any]], data: st.DataObject
) -> None:
    lines = scratch.lines(bodies)
    index = data.draw(st.integers(0, len(lines) - 1), label="index")

    def edit(record: dict[str, Any]) -> None:
        record["body"]["tampered"] = True

    tampered = list(lines)
    tampered[index] = edit_field_keep_hash(lines[index], edit)
    report = scratch.verify_both(join_lines(tampered))
    assert_detected_at(report, index, "bad-hash")
    assert ("bad-signature", index) not in problem_set(report)  # sig covers the stored hash


@SETTINGS
@given(BODIES, st.data(), st.sampled_from(["body", "ts", "actor", "kind"]))
def test_recomputed_hash_with_old_signature_is_bad_signature(
    scratch: Scratch, bodies: list[dict[str, Any]], data: st.DataObject, field: str
) -> None:
    lines = scratch.lines(bodies)
    index = data.draw(st.integers(1, len(lines) - 1), label="index")

    def edit(record: dict[str, Any]) -> None:
        if field == "body":
            record["body"] = {**record["body"], "value": "edited"}
        elif field == "ts":
            record["ts"] = "2030-01-01T00:00:00.000000Z"
        elif field == "actor":
            record["actor"]["client"] = "someone-else"
        else:
            record["kind"] = "app.other"

    tampered = list(lines)
    tampered[index] = recompute_hash_keep_sig(lines[index], edit)
    report = scratch.verify_both(join_lines(tampered))
    assert_detected_at(report, index, "bad-signature")
    assert ("bad-hash", index) not in problem_set(report)
    if index + 1 < len(lines):
        assert ("broken-link", index + 1) in problem_set(report)


@SETTINGS
@given(BODIES, st.data())
def test_record_signed_by_untrusted_key_is_unknown_key(
    scratch: Scratch, bodies: list[dict[str, Any]], data: st.DataObject
) -> None:
    lines = scratch.lines(bodies)
    index = data.draw(st.integers(1, len(lines) - 1), label="index")
    forged = resign_by_untrusted_key(lines[index], UNTRUSTED)
    assert signature_is_valid(forged, UNTRUSTED)
    tampered = list(lines)
    tampered[index] = forged
    report = scratch.verify_both(join_lines(tampered))
    assert_detected_at(report, index, "unknown-key")
    assert ("bad-hash", index) not in problem_set(report)


# --- truncation and forks need a checkpoint -----------------------------------------------


@SETTINGS
@given(BODIES, st.data())
def test_truncation_passes_alone_but_fails_against_checkpoint(
    scratch: Scratch, bodies: list[dict[str, Any]], data: st.DataObject
) -> None:
    ledger = scratch.ledger(bodies)
    checkpoint = ledger.checkpoint().text()
    lines, _ = split_file(ledger.file.path.read_bytes())
    count = data.draw(st.integers(1, len(lines) - 1), label="count")
    ledger.file.path.write_bytes(join_lines(truncate_records(lines, count)))
    # A hash chain cannot prove its own length.
    alone = ledger.verify(jobs=1)
    assert alone.ok, alone.problems
    assert alone.head_seq == len(lines) - 1 - count
    report = ledger.verify(checkpoints=[("cp", checkpoint)], jobs=1)
    assert report.problem_count == 1
    assert_detected_at(report, len(lines) - 1, "truncated")
    assert report.checkpoints[0].code == "truncated"
    # The pure fold agrees.
    target = parse_checkpoint(checkpoint).verified_target(ledger.keyring(), "cp")
    pure = verify_bytes(ledger.file.path.read_bytes(), checkpoints=[target])
    assert pure.problems == report.problems


@SETTINGS
@given(BODIES, st.data(), st.integers(0, 2))
def test_fork_after_checkpoint_is_detected(
    scratch: Scratch, bodies: list[dict[str, Any]], data: st.DataObject, extra: int
) -> None:
    ledger = scratch.ledger(bodies)
    checkpoint = ledger.checkpoint().text()
    lines, _ = split_file(ledger.file.path.read_bytes())
    count = data.draw(st.integers(1, len(lines) - 1), label="rewritten")
    new_bodies = [{"forged": i} for i in range(count + extra)]
    forked = rewrite_tail(lines, len(lines) - count, KEY, new_bodies)
    ledger.file.path.write_bytes(join_lines(forked))
    alone = ledger.verify(jobs=1)
    assert alone.ok, alone.problems  # a correctly re-signed history verifies on its own
    report = ledger.verify(checkpoints=[("cp", checkpoint)], jobs=1)
    assert_detected_at(report, len(lines) - 1, "forked")
    assert [c.code for c in report.checkpoints] == ["forked"]


def test_fork_appended_through_the_library_is_detected(tmp_path: Path) -> None:
    ledger = make_ledger(tmp_path, [{"i": i} for i in range(4)])
    checkpoint = ledger.checkpoint().text()
    lines, _ = split_file(ledger.file.path.read_bytes())
    ledger.file.path.write_bytes(join_lines(lines[:3]))
    ledger.append_many([Entry("app.event", {"rewritten": i}) for i in range(3)])
    report = ledger.verify(checkpoints=[("cp", checkpoint)], jobs=1)
    assert_detected_at(report, len(lines) - 1, "forked")
    with pytest.raises(IntegrityError) as info:
        ledger.verify_or_raise(checkpoints=[("cp", checkpoint)], jobs=1)
    assert info.value.report is not None
    assert info.value.report.problems == report.problems


def test_torn_tail_is_reported_after_last_complete_record(
    scratch: Scratch, sample_lines: list[bytes]
) -> None:
    data = tear_tail(join_lines(sample_lines), sample_lines[2][:40])
    report = scratch.verify_both(data)
    assert report.only_torn_tail
    assert_detected_at(report, len(sample_lines), "torn-tail")
    assert report.head_seq == len(sample_lines) - 1


def test_deeply_nested_line_is_reported_malformed(sample_lines: list[bytes]) -> None:
    bomb = b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    tampered = splice_foreign_record(sample_lines, bomb, 3, replace=True)
    report = verify_bytes(join_lines(tampered))
    assert_detected_at(report, 3, "malformed")


def test_empty_ledger_is_not_ok() -> None:
    report = verify_bytes(b"")
    assert not report.ok
    assert [p.code for p in report.problems] == ["empty"]


# --- the parallel path ----------------------------------------------------------------------


class CountingPool(ProcessPoolExecutor):
    created = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        type(self).created += 1
        super().__init__(*args, **kwargs)


@pytest.fixture(scope="module")
def big_ledger(tmp_path_factory: pytest.TempPathFactory) -> tuple[Ledger, bytes]:
    root = tmp_path_factory.mktemp("big")
    padding = "x" * 1800
    ledger = make_ledger(root, [{"i": i, "pad": padding} for i in range(1400)])
    data = ledger.file.path.read_bytes()
    assert len(data) > PARALLEL_THRESHOLD + 512 * 1024  # at least three 1 MiB chunks
    return ledger, data


def _line_at_offset(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset)


def big_ledger_attacks(data: bytes) -> list[tuple[str, bytes, int, str | None]]:
    lines, _ = split_file(data)
    boundary_line = _line_at_offset(data, 1024 * 1024)  # the line spanning the first chunk cut
    last = len(lines) - 1

    def edit(record: dict[str, Any]) -> None:
        record["body"]["i"] = -1

    def bad_sig(index: int) -> list[bytes]:
        out = list(lines)
        out[index] = recompute_hash_keep_sig(lines[index], edit)
        return out

    mid_line_start = sum(len(x) + 1 for x in lines[:boundary_line])
    return [
        (
            "byte-in-first-chunk",
            corrupt_byte(data, 5000, data[5000] ^ 1),
            _line_at_offset(data, 5000),
            None,
        ),
        (
            "byte-at-chunk-boundary",
            corrupt_byte(data, 1024 * 1024, data[1024 * 1024] ^ 1),
            boundary_line,
            None,
        ),
        (
            "line-spanning-boundary-resigned",
            join_lines(bad_sig(boundary_line)),
            boundary_line,
            "bad-signature",
        ),
        (
            "newline-before-boundary-line-removed",
            corrupt_byte(data, mid_line_start - 1, ord(" ")),
            boundary_line - 1,
            "malformed",
        ),
        (
            "deleted-in-last-chunk",
            join_lines(delete_record(lines, last - 10)),
            last - 10,
            "seq-gap",
        ),
        (
            "swapped-across-boundary",
            join_lines(swap_records(lines, boundary_line)),
            boundary_line,
            "seq-gap",
        ),
        ("torn-tail", reattach_lines(lines, lines[7][:100]), last + 1, "torn-tail"),
    ]


@pytest.mark.slow
def test_parallel_verify_matches_serial_and_detects_at_right_seq(
    big_ledger: tuple[Ledger, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger, data = big_ledger
    monkeypatch.setattr(parallel_module, "ProcessPoolExecutor", CountingPool)
    CountingPool.created = 0
    progress: list[tuple[int, int]] = []
    intact = ledger.verify(jobs=2, progress=lambda done, total: progress.append((done, total)))
    assert CountingPool.created == 1, "jobs=2 on a > 2 MiB ledger must use the process pool"
    assert intact.ok, intact.problems
    assert intact.records == 1401
    assert progress[-1] == (len(data), len(data))
    try:
        for name, tampered, seq, code in big_ledger_attacks(data):
            ledger.file.path.write_bytes(tampered)
            parallel = ledger.verify(jobs=2)
            serial = ledger.verify(jobs=1)
            assert parallel.problems == serial.problems, name
            assert parallel.problem_count == serial.problem_count, name
            assert (parallel.head_seq, parallel.head_hash) == (serial.head_seq, serial.head_hash), (
                name
            )
            assert_detected_at(parallel, seq, code)
    finally:
        ledger.file.path.write_bytes(data)
    assert CountingPool.created == 1 + len(big_ledger_attacks(data))


@pytest.mark.slow
def test_parallel_verify_with_checkpoint_detects_truncation(
    big_ledger: tuple[Ledger, bytes],
) -> None:
    ledger, data = big_ledger
    checkpoint = ledger.checkpoint().text()
    lines, _ = split_file(data)
    try:
        ledger.file.path.write_bytes(join_lines(truncate_records(lines, 5)))
        report = ledger.verify(checkpoints=[("cp", checkpoint)], jobs=2)
        assert_detected_at(report, len(lines) - 1, "truncated")
    finally:
        ledger.file.path.write_bytes(data)
    assert ledger.verify(checkpoints=[("cp", checkpoint)], jobs=2).ok


def _edit_body(record: dict[str, Any]) -> None:
    record["body"] = {**record["body"], "value": "edited"}


def _edit_version(record: dict[str, Any]) -> None:
    record["v"] = 99


LINE_ATTACKS: dict[str, Callable[[bytes], bytes]] = {
    "none": lambda line: line,
    "old-signature": lambda line: recompute_hash_keep_sig(line, _edit_body),
    "old-signature-new-version": lambda line: recompute_hash_keep_sig(line, _edit_version),
    "padding-bits": forge_signature_padding_bits,
    "untrusted-key": lambda line: resign_by_untrusted_key(line, UNTRUSTED),
    "edited-body": lambda line: edit_field_keep_hash(line, _edit_body),
    "trailing-space": lambda line: line + b" ",
    "cut": lambda line: line[: len(line) // 2],
}


@SETTINGS
@given(BODIES, st.data())
def test_batched_signature_checks_break_nothing_line_by_line_catches(
    scratch: Scratch, bodies: list[dict[str, Any]], data: st.DataObject
) -> None:
    # check_lines verifies a batch's signatures after the rest of each line's checks; each line
    # must come out exactly as check_line reports it alone, problems in the same order.
    lines = scratch.lines(bodies)
    names = data.draw(st.lists(st.sampled_from(sorted(LINE_ATTACKS)), min_size=len(lines)))
    mixed = [LINE_ATTACKS[name](line) for name, line in zip(names, lines, strict=False)]
    batched = check_lines(mixed, PUBLIC)
    assert batched == [check_line(line, PUBLIC) for line in mixed]
    for name, facts in zip(names, batched, strict=False):
        codes = [code for code, _ in facts.problems]
        if name == "old-signature":
            assert codes == ["bad-signature"]
        elif name == "old-signature-new-version":
            assert codes == ["unsupported-version", "bad-signature"]


@pytest.mark.slow
def test_parallel_verify_finds_chunk_cuts_around_lines_longer_than_a_chunk(
    tmp_path: Path,
) -> None:
    # The parent cuts chunks by reading only their ends; lines longer than a chunk (and than
    # its backwards search window), a damaged one among them, and a long torn tail must come
    # out exactly as the serial path reports them.
    huge = "y" * (CHUNK_BYTES + 200_000)
    bodies: list[dict[str, Any]] = [{"i": 0}, {"pad": huge}, {"i": 2}, {"pad": "z" * 100_000}]
    bodies += [{"pad": huge}, {"i": 5}]
    ledger = make_ledger(tmp_path, bodies)
    data = ledger.file.path.read_bytes()
    assert len(data) > PARALLEL_THRESHOLD
    lines, _ = split_file(data)
    in_huge_line = data.index(b"y" * 100) + 70_000
    cases = [
        ("intact", data, None),
        ("byte-in-huge-line", corrupt_byte(data, in_huge_line, ord("x")), 2),
        ("torn-tail", reattach_lines(lines, lines[2][:-10]), len(lines)),
        ("torn-huge-line", reattach_lines(lines[:-2], lines[-2][:300_000]), len(lines) - 2),
    ]
    for name, content, seq in cases:
        ledger.file.path.write_bytes(content)
        parallel = ledger.verify(jobs=2, stored_checkpoints=False)
        serial = ledger.verify(jobs=1, stored_checkpoints=False)
        assert parallel.problems == serial.problems, name
        assert (parallel.records, parallel.head_hash) == (serial.records, serial.head_hash), name
        if seq is None:
            assert parallel.ok, parallel.problems
        else:
            assert_detected_at(parallel, seq)
