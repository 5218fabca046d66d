"""The disclosure store's offset map: showing one record reads that record's lines, and the map
never changes what is shown.

The map (``.orchestration/.cache/disclosures.jsonl.idx``) is derived data. Attacks are named
after what they would break: a poisoned or stale map must not show a value the record's own
commitment does not open, nor hide one the store discloses; a hypothesis run compares every
record revealed through the map with the same record revealed from the whole store.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger import ForgetSelector, Ledger
from ledger._evidence.disclosure import (
    FORGOTTEN,
    Content,
    DisclosureIndex,
    DisclosureStore,
    Revealer,
    reveal,
)
from ledger._evidence.ledger import forget
from tests.hooks._support import Workspace, make_workspace


def _ledger(ws: Workspace) -> Ledger:
    return Ledger.open(ws.root, environ=ws.env)


def _append(ledger: Ledger, *prompts: str) -> None:
    ledger._append_entries(
        [("app.prompt", {"prompt": Content(p), "note": Content([p, {"k": p}])}) for p in prompts],
        internal=False,
    )


def _index_path(ledger: Ledger) -> Path:
    return ledger.disclosures.path.parent / ".cache" / "disclosures.jsonl.idx"


def _from_whole_store(ledger: Ledger, data: dict[str, Any]) -> Any:
    disclosed, forgotten = ledger.disclosures.load()
    return reveal(data["body"], disclosed, forgotten)


def _shown(ledger: Ledger, seq: int) -> Any:
    record = next(r for r in ledger.records() if r.seq == seq)
    return Revealer(ledger.disclosures).record(record.data)["body"]


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path)


def test_showing_one_record_reads_its_lines_not_the_whole_store(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = _ledger(ws)
    _append(ledger, *(f"prompt number {i}" for i in range(300)))
    target = next(r for r in ledger.records() if r.data["body"].get("prompt") and r.seq == 150)
    DisclosureIndex(ledger.disclosures).lines_of(0)  # the map is built once, by any reader

    def whole_store(_: DisclosureStore) -> None:
        raise AssertionError("the whole store was read")

    monkeypatch.setattr(DisclosureStore, "load", whole_store)
    monkeypatch.setattr(DisclosureStore, "lines", whole_store)
    monkeypatch.setattr(DisclosureIndex, "_build", whole_store)  # the stored map is used
    body = Revealer(ledger.disclosures).record(target.data)["body"]
    assert body["prompt"] == "prompt number 149"
    assert body["note"] == ["prompt number 149", {"k": "prompt number 149"}]
    assert _index_path(ledger).stat().st_mode & 0o077 == 0


def test_records_appended_after_the_map_are_shown(ws: Workspace) -> None:
    ledger = _ledger(ws)
    _append(ledger, "first")
    assert _shown(ledger, 1)["prompt"] == "first"  # builds the map
    _append(ledger, "second", "third")
    assert _shown(ledger, 3)["prompt"] == "third"


def test_a_map_made_stale_by_forget_shows_forgotten(ws: Workspace) -> None:
    ledger = _ledger(ws)
    _append(ledger, "keep me", "erase me", "keep me too")
    assert _shown(ledger, 2)["prompt"] == "erase me"
    forget(ledger, ForgetSelector(match="erase me"))
    assert _shown(ledger, 2)["prompt"] == FORGOTTEN
    assert _shown(ledger, 3)["prompt"] == "keep me too"


@pytest.mark.parametrize(
    "poison",
    [
        b"",  # empty
        b"garbage" * 10,  # not a map
        None,  # a map of another store: every seq points at record 1's lines
    ],
    ids=["empty", "garbage", "wrong-offsets"],
)
def test_poisoned_map_never_changes_what_is_shown(ws: Workspace, poison: bytes | None) -> None:
    ledger = _ledger(ws)
    _append(ledger, "alpha", "bravo", "charlie")
    assert _shown(ledger, 2)["prompt"] == "bravo"
    index = _index_path(ledger)
    if poison is None:
        raw = index.read_bytes()
        head = len(b"ledger.disclosure-index.v1\n") + 32
        count = (len(raw) - head) // 8
        first = raw[head + 8 : head + 16]  # record 1's start
        end = raw[head + 16 : head + 24]
        poison = raw[:head] + raw[head : head + 8] + (first + end) * ((count - 1) // 2)
        poison += raw[len(poison) :]
    index.write_bytes(poison)
    for seq in (1, 2, 3):
        data = next(r for r in ledger.records() if r.seq == seq).data
        assert Revealer(ledger.disclosures).record(data)["body"] == _from_whole_store(ledger, data)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("append"), st.integers(1, 4)),
            st.tuples(st.just("forget"), st.integers(0, 12)),
            st.tuples(st.just("show"), st.integers(0, 12)),
            st.tuples(st.just("drop-map"), st.just(0)),
        ),
        max_size=12,
    )
)
def test_the_map_shows_exactly_what_the_whole_store_shows(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, int]]
) -> None:
    ws = make_workspace(tmp_path_factory.mktemp("idx"))
    ledger = _ledger(ws)
    counter = 0
    for action, n in [("append", 2), *steps]:
        if action == "append":
            _append(ledger, *(f"value {counter + i}" for i in range(n)))
            counter += n
        elif action == "forget":
            forget(ledger, ForgetSelector(match=f"value {n}"))
        elif action == "drop-map":
            _index_path(ledger).unlink(missing_ok=True)
        records = list(ledger.records())
        for record in records if action == "show" else records[-2:]:
            shown = Revealer(ledger.disclosures).record(record.data)
            assert shown["body"] == _from_whole_store(ledger, record.data)


def test_a_map_pointing_past_the_store_reads_nothing_huge(ws: Workspace) -> None:
    ledger = _ledger(ws)
    _append(ledger, "alpha", "bravo")
    assert _shown(ledger, 2)["prompt"] == "bravo"
    index = _index_path(ledger)
    raw = bytearray(index.read_bytes())
    head = len(b"ledger.disclosure-index.v1\n") + 32
    raw[head + 16 : head + 24] = (2**62).to_bytes(8, "little")  # seq 2 "starts" far away
    raw[head + 8 : head + 16] = (2**63).to_bytes(8, "little")
    index.write_bytes(bytes(raw))
    for seq in (1, 2):
        data = next(r for r in ledger.records() if r.seq == seq).data
        assert Revealer(ledger.disclosures).record(data)["body"] == _from_whole_store(ledger, data)


def _crafted(line: bytes, how: str) -> bytes:
    """A store line rewritten by hand so its first bytes name another commitment than the one
    a JSON reader takes (the last key wins; an escaped key is the same key)."""
    digest = line[15:79]
    other = b"0" * 64
    if how == "duplicate-key":
        return b'{"commitment":"' + other + b'",' + line[1:]
    if how == "escaped-key":
        return b'{"commitment":"' + other + b'","\\u0063ommitment":"' + digest + line[79:]
    return line


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    withheld=st.sets(st.integers(0, 11)),
    crafted=st.dictionaries(st.integers(0, 11), st.sampled_from(["duplicate-key", "escaped-key"])),
    forgotten=st.sets(st.integers(0, 5), max_size=2),
    drop_map=st.booleans(),
    prepared=st.booleans(),
)
def test_withheld_fields_are_looked_up_exactly_as_the_whole_store_shows_them(
    tmp_path_factory: pytest.TempPathFactory,
    *,
    withheld: set[int],
    crafted: dict[int, str],
    forgotten: set[int],
    drop_map: bool,
    prepared: bool,
) -> None:
    """A record's fields not in its own lines (withheld, as a teammate's often are, or moved
    by hand) are found by scanning the store for their commitments: what is shown is exactly
    what the whole store shows, whatever lines a person crafted."""
    ws = make_workspace(tmp_path_factory.mktemp("scan"))
    ledger = _ledger(ws)
    _append(ledger, *(f"value {i}" for i in range(6)))
    for n in forgotten:
        forget(ledger, ForgetSelector(match=f"value {n}"))
    store = ledger.disclosures
    lines = store.path.read_bytes().splitlines()
    kept = [_crafted(line, crafted.get(i, "")) for i, line in enumerate(lines) if i not in withheld]
    store.path.write_bytes(b"".join(line + b"\n" for line in kept))
    if drop_map:
        _index_path(ledger).unlink(missing_ok=True)
    revealer = Revealer(store)
    records = list(ledger.records())
    if prepared:  # as ledger log --ledger does: the records shown looked up in one scan
        revealer.prepare(r.data["body"] for r in records[len(records) // 2 :])
    for record in records:
        assert revealer.record(record.data)["body"] == _from_whole_store(ledger, record.data)


def test_a_withheld_field_is_found_without_reading_the_whole_store(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = _ledger(ws)
    _append(ledger, *(f"prompt number {i}" for i in range(50)))
    store = ledger.disclosures
    lines = store.path.read_bytes().splitlines()
    store.path.write_bytes(
        b"".join(line + b"\n" for line in lines if b'"field":"note"' not in line)
    )

    def whole_store(_: DisclosureStore) -> None:
        raise AssertionError("the whole store was read")

    monkeypatch.setattr(DisclosureStore, "load", whole_store)
    target = next(r for r in ledger.records() if r.seq == 20)
    body = Revealer(store).record(target.data)["body"]
    assert body["prompt"] == "prompt number 19"
    assert body["note"] == "[withheld]"
    # Twenty records shown at once (ledger log --ledger): one scan, never the whole store.
    revealer = Revealer(store)
    tail = [r for r in ledger.records() if r.seq > 30]
    revealer.prepare(r.data["body"] for r in tail)
    for record in tail:
        assert revealer.record(record.data)["body"]["note"] == "[withheld]"
