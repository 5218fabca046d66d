"""Per-file cache slices: a warm blame reads one file's slice, and a slice never changes an answer.

Each attack edits what an agent with write access to the workspace could edit (the slices, their
index, the ledger file) and checks that blame still gives the answer a full rebuild gives.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import shutil
from pathlib import Path

import pytest

from ledger._evidence.read import genesis_ledger_id
from ledger._projections.blame import BLAME
from ledger._projections.slices import read_slice
from tests.blame._world import World, git


def _slices(world: World) -> Path:
    return world.root / ".orchestration" / ".cache" / "projections" / "blame.slices"


def _full_cache(world: World) -> Path:
    return world.root / ".orchestration" / ".cache" / "projections" / "blame.json"


def _sessions(world: World, relative: str) -> list[tuple[str, object]]:
    return [(x.status, x.facts.get("session_id")) for x in world.blame(relative).lines]


def _index(world: World) -> tuple[bytes, dict[str, object]]:
    mac, _, payload = (_slices(world) / "index.json").read_bytes().partition(b"\n")
    return mac, json.loads(payload)


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = World(tmp_path)
    (w.root / "app.py").write_text("one\ntwo\nthree\n", encoding="utf-8")
    git(w.root, "add", "-A")
    git(w.root, "commit", "-qm", "base")
    w.edit("s1", "app.py", "two\n", "TWO\n")
    w.write("s2", "other.py", "alpha\nbeta\n")
    assert _sessions(w, "app.py") == [("git", None), ("agent", "s1"), ("git", None)]
    return w


def test_warm_blame_reads_the_files_slice_not_the_whole_model(world: World) -> None:
    _full_cache(world).unlink()  # the whole line model: not needed while the slices are current
    assert _sessions(world, "app.py") == [("git", None), ("agent", "s1"), ("git", None)]
    assert _sessions(world, "other.py") == [("agent", "s2"), ("agent", "s2")]
    assert not _full_cache(world).exists()


def test_a_later_call_on_another_file_leaves_this_files_slice_answering(world: World) -> None:
    # The agent's next call writes another file: blaming app.py reads its slice and the few new
    # records, not the whole line model (the full cache is gone, and stays gone).
    world.write("s3", "third.py", "x\ny\n")
    _full_cache(world).unlink()
    assert _sessions(world, "app.py") == [("git", None), ("agent", "s1"), ("git", None)]
    assert not _full_cache(world).exists()
    # ...while the file it wrote is folded in, through the full cache.
    assert _sessions(world, "third.py") == [("agent", "s3"), ("agent", "s3")]


def test_new_records_are_not_hidden_by_current_looking_slices(world: World) -> None:
    world.edit("s3", "app.py", "one\n", "ONE\n")  # the ledger grew: the slices are stale
    assert _sessions(world, "app.py") == [("agent", "s3"), ("agent", "s1"), ("git", None)]
    assert _sessions(world, "other.py") == [("agent", "s2"), ("agent", "s2")]


def test_tampered_slice_cannot_change_an_attribution(world: World) -> None:
    _, index = _index(world)
    digest = index["slices"]["app.py"]  # type: ignore[index]
    path = _slices(world) / f"{digest}.json"
    data = json.loads(path.read_bytes())
    for ref in data["refs"]:
        ref[7] = "s-forged"  # session_id (REF_FIELDS order)
    path.write_bytes(json.dumps(data).encode())
    assert _sessions(world, "app.py") == [("git", None), ("agent", "s1"), ("git", None)]


def test_slice_of_another_file_cannot_stand_in(world: World) -> None:
    _, index = _index(world)
    slices = index["slices"]
    assert isinstance(slices, dict)
    target = _slices(world) / f"{slices['app.py']}.json"
    target.write_bytes((_slices(world) / f"{slices['other.py']}.json").read_bytes())
    assert _sessions(world, "app.py") == [("git", None), ("agent", "s1"), ("git", None)]


def test_index_edited_without_the_secret_is_ignored(world: World) -> None:
    mac, index = _index(world)
    slices = index["slices"]
    assert isinstance(slices, dict)
    slices["app.py"] = slices["other.py"]  # point app.py at other.py's lines (all s2)
    payload = json.dumps(index, sort_keys=True).encode()
    for forged_mac in (mac, hmac.new(b"\0" * 32, payload, hashlib.sha256).hexdigest().encode()):
        (_slices(world) / "index.json").write_bytes(forged_mac + b"\n" + payload)
        assert _sessions(world, "app.py") == [("git", None), ("agent", "s1"), ("git", None)]


def test_rolled_back_ledger_does_not_keep_the_slices_answer(world: World) -> None:
    ledger = world.root / ".orchestration" / "agent_trace.jsonl"
    before = ledger.read_bytes()
    world.edit("s3", "app.py", "three\n", "THREE\n")
    assert _sessions(world, "app.py")[2] == ("agent", "s3")  # the slices now say s3 wrote it
    ledger.write_bytes(before)  # the record of s3's write is gone; the disk still has THREE
    status, session = _sessions(world, "app.py")[2]
    assert (status, session) == ("unknown", None)


def test_slices_of_another_ledger_are_foreign(world: World, tmp_path: Path) -> None:
    (tmp_path / "other").mkdir()
    other = World(tmp_path / "other")
    mac_key = "cache.secret"  # the same user: the same cache secret
    (other.ws.home / mac_key).write_bytes((world.ws.home / mac_key).read_bytes())
    (other.root / "app.py").write_text("one\ntwo\nthree\n", encoding="utf-8")
    other.write("s9", "app.py", "one\nTWO\nthree\n")
    other.blame("app.py")
    shutil.rmtree(_slices(world))
    shutil.copytree(_slices(other), _slices(world))
    assert _sessions(world, "app.py") == [("git", None), ("agent", "s1"), ("git", None)]


def test_a_file_never_seen_is_a_valid_empty_slice(world: World) -> None:
    (world.root / "fresh.py").write_text("x\n", encoding="utf-8")
    ledger = world.root / ".orchestration" / "agent_trace.jsonl"
    cache = world.root / ".orchestration" / ".cache"
    found = read_slice(
        ledger,
        cache,
        name=BLAME.name,
        version=BLAME.version,
        key="fresh.py",
        environ=world.ws.env,
    )
    assert found is not None
    assert found.slice is None
    assert genesis_ledger_id(ledger) is not None
    assert [x.status for x in world.blame("fresh.py").lines] == ["unknown"]


def test_unreferenced_slices_are_removed(world: World) -> None:
    for n in range(5):
        world.edit("s1", "app.py", "one\n" if n == 0 else f"v{n - 1}\n", f"v{n}\n")
        world.blame("app.py")
    _, index = _index(world)
    slices = index["slices"]
    assert isinstance(slices, dict)
    on_disk = {p.name for p in _slices(world).iterdir()}
    assert on_disk == {"index.json"} | {f"{d}.json" for d in slices.values()}


def test_a_planted_slice_file_is_replaced_not_trusted(world: World) -> None:
    """A file planted under the name (digest) a slice will have: the writer checks the bytes
    and writes the slice, so blame answers from the slices again (not from the full cache on
    every run)."""
    _, index = _index(world)
    slices = index["slices"]
    assert isinstance(slices, dict)
    planted = _slices(world) / f"{slices['app.py']}.json"
    (_slices(world) / "index.json").unlink()  # the slices are rewritten on the next blame
    planted.write_bytes(b'{"forged": true}')
    assert _sessions(world, "app.py") == [("git", None), ("agent", "s1"), ("git", None)]
    found = read_slice(
        world.root / ".orchestration" / "agent_trace.jsonl",
        world.root / ".orchestration" / ".cache",
        name=BLAME.name,
        version=BLAME.version,
        key="app.py",
        environ=world.ws.env,
    )
    assert found is not None
    assert found.slice is not None
    assert "forged" not in found.slice
