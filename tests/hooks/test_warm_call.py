"""What a warm process (the resident decider, ``ledger mcp``) keeps between hook calls, and what
it leaves until the caller has its answer: none of it may change a decision or what is written.

* the seal's fingerprint is encoded once while it does not change: the seal's bytes are those
  one encoding of the whole seal gives;
* the ledger id is parsed once per genesis line: a ledger replaced since is read as it is now;
* the projection caches a call brings up to date are written after the answer, as the state
  was folded (a change the call makes to its state afterwards is not written), by the decider's
  handler or ``ledger mcp``'s after-answer thread.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger import Entry, Ledger, NotInitializedError, SigningKey
from ledger._hooks.tripwire import Entry as SealedFile
from ledger._hooks.tripwire import Seal, TripwireStore
from ledger._projections import GOVERNANCE_STATE, ProjectionCache
from ledger._projections.cache import saves_after_answer, write_saved
from ledger._workspace import unseal

rules = st.sampled_from(["config", "strict", "runtime", "append-only", "checkpoint"])
sealed_files = st.builds(
    SealedFile,
    rules,
    st.integers(0, 2**62),
    st.integers(0, 2**40),
    st.integers(0, 2**40),
    st.one_of(st.none(), st.text("0123456789abcdef", min_size=64, max_size=64)),
)
names = st.text(st.characters(exclude_characters="\0/", exclude_categories=["Cs"]), min_size=1)
fingerprints = st.dictionaries(names.map(lambda n: f"/nonexistent/{n}"), sealed_files, max_size=8)


def _whole(sealed: Seal) -> bytes:
    """The seal as one ``json.dumps`` of the whole (how it was always encoded)."""
    return json.dumps(
        {
            "v": 1,
            "files": {p: list(e) for p, e in sorted(sealed.files.items())},
            "head_seq": sealed.head_seq,
            "head_hash": sealed.head_hash,
            "root": sealed.root,
            "version": sealed.version,
        },
        sort_keys=True,
        separators=(",", ":"),
    ).encode()


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    runs=st.lists(
        st.tuples(
            fingerprints,
            st.integers(0, 10**9),
            st.one_of(st.none(), st.text(max_size=20)),
            st.one_of(st.none(), st.text(max_size=30)),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_a_seal_reusing_its_files_encoding_is_the_bytes_of_one_encoding(
    tmp_path: Path, runs: list[tuple[dict[str, SealedFile], int, str | None, str | None]]
) -> None:
    store = TripwireStore("ledger-1", {"LEDGER_HOME": str(tmp_path / "home")})
    secret = store.secret()
    assert secret is not None
    for files, seq, digest, root in [*runs, *runs]:  # each fingerprint twice: the reuse
        sealed = Seal(files, seq, digest, "9.9.9", root)
        assert store.save(sealed)
        assert unseal(store.path.read_bytes(), secret=secret) == _whole(sealed)
        assert store.load() == sealed


def test_a_ledger_replaced_under_the_same_path_is_read_with_its_own_id(tmp_path: Path) -> None:
    environ = {"LEDGER_HOME": str(tmp_path / "home")}
    first = Ledger.init(
        tmp_path / "a", signing_key=SigningKey.from_seed(b"\1" * 32), environ=environ
    )
    other = Ledger.init(
        tmp_path / "b", signing_key=SigningKey.from_seed(b"\2" * 32), environ=environ
    )
    was, theirs = first.ledger_id, other.ledger_id
    assert was != theirs
    assert first.ledger_id == was  # asked again: the same line, the same id
    shutil.copyfile(other.file.path, first.file.path)  # in place: the same inode
    assert first.ledger_id == theirs
    first.file.path.write_bytes(b"")
    with pytest.raises(NotInitializedError, match="empty"):
        _ = first.ledger_id


def _cache(ledger: Ledger, home: Path) -> ProjectionCache:
    return ProjectionCache(
        ledger.file.path,
        ledger.workspace.cache_dir,
        ledger.ledger_id,
        environ={"LEDGER_HOME": str(home)},
    )


def test_projection_caches_are_written_after_the_answer_as_the_state_was_folded(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    ledger = Ledger.init(
        tmp_path / "ws",
        signing_key=SigningKey.from_seed(b"\3" * 32),
        environ={"LEDGER_HOME": str(home)},
    )
    _cache(ledger, home).state(GOVERNANCE_STATE)  # a cache at the genesis
    cache_file = ledger.workspace.cache_dir / "projections" / "governance.json"
    before = cache_file.read_bytes()
    ledger.append_many([Entry("app.deploy", {"n": n}) for n in range(3)])

    with saves_after_answer() as pending:
        state = _cache(ledger, home).state(GOVERNANCE_STATE)
        assert cache_file.read_bytes() == before  # nothing written while the caller waits
    state.tamper = {"seq": None, "problems": ["set by the call after the fold"]}
    write_saved(pending)

    after = _cache(ledger, home)
    reread = after.state(GOVERNANCE_STATE)
    assert after.rebuilds == 0  # the cache written after the answer is the one read
    assert reread.tamper is None  # as folded: the call's own change is not in it
    assert cache_file.read_bytes() != before
    fresh = ProjectionCache(
        ledger.file.path, tmp_path / "nowhere", ledger.ledger_id, environ={"LEDGER_HOME": str(home)}
    )
    assert GOVERNANCE_STATE.dump(reread) == GOVERNANCE_STATE.dump(fresh.state(GOVERNANCE_STATE))


def test_without_a_waiting_caller_the_projection_cache_is_written_at_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ledger = Ledger.init(
        tmp_path / "ws",
        signing_key=SigningKey.from_seed(b"\4" * 32),
        environ={"LEDGER_HOME": str(home)},
    )
    ledger.append_many([Entry("app.deploy", {"n": 1})])
    _cache(ledger, home).state(GOVERNANCE_STATE)
    again = _cache(ledger, home)
    again.state(GOVERNANCE_STATE)
    assert again.rebuilds == 0


def test_the_mcp_servers_after_answer_work_is_done_in_order_and_finished_at_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ledger mcp``'s hook tool hands the seal's fsync and the caches' writes to one thread:
    each call's caches are written, later calls' last, and every seal is synced by close."""
    from ledger._mcp import _AfterAnswer  # noqa: PLC0415 -- the server's own helper

    synced: list[int] = []
    real_fsync = os.fsync

    def noting_fsync(fd: int) -> None:
        synced.append(os.fstat(fd).st_ino)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", noting_fsync)
    seal = tmp_path / "seal"
    seal.write_bytes(b"sealed")
    cache = tmp_path / "cache" / "governance.json"
    worker = _AfterAnswer()
    for n in range(5):
        worker.submit(([seal], [(cache, b"call %d" % n)]))
    worker.submit(([], []))  # nothing to do: nothing queued
    worker.close()
    assert cache.read_bytes() == b"call 4"
    assert synced.count(seal.stat().st_ino) == 5
    assert not [p for p in cache.parent.iterdir() if p.name.endswith(".tmp")]


def test_an_intents_file_is_parsed_again_only_when_its_bytes_or_its_cache_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ledger._governance import intents as intents_module  # noqa: PLC0415

    path, cache = tmp_path / "active_intents.yaml", tmp_path / "cache"
    text = (
        "active_intents:\n  - id: INT-001\n    name: A\n    status: IN_PROGRESS\n"
        '    owned_scope: ["src/**"]\n'
    )
    path.write_text(text, encoding="utf-8")
    environ = {"LEDGER_HOME": str(tmp_path / "home")}
    read_back: list[Path] = []
    real_read_cache = intents_module._read_cache

    def noting_read_cache(file: Path, *args: object) -> object:
        read_back.append(file)
        return real_read_cache(file, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(intents_module, "_read_cache", noting_read_cache)
    first = intents_module.load_intents_cached(path, cache, environ=environ)
    for _ in range(3):
        assert intents_module.load_intents_cached(path, cache, environ=environ) is first
    assert len(read_back) == 1  # the first call only
    path.write_text(text.replace("name: A", "name: B"), encoding="utf-8")
    changed = intents_module.load_intents_cached(path, cache, environ=environ)
    assert changed.intents[0].name == "B"
    (cached_file,) = cache.iterdir()
    cached_file.write_text("damaged")
    assert intents_module.load_intents_cached(path, cache, environ=environ) == changed
    assert cached_file.read_text() != "damaged"  # rewritten, as any call does


def test_a_resident_process_keeps_its_start_up_out_of_the_collector_and_still_collects() -> None:
    """warm_resident freezes what start-up loaded (a full collection no longer walks it in the
    middle of a hook call), and cycles made afterwards are still collected."""
    probe = (
        "import gc, weakref\n"
        "from ledger._hooks.service import warm_resident\n"
        "warm_resident()\n"
        "frozen = gc.get_freeze_count()\n"
        "class Node: pass\n"
        "a, b = Node(), Node(); a.other, b.other = b, a\n"
        "gone = weakref.ref(a); del a, b\n"
        "gc.collect()\n"
        "print(frozen, gone() is None, gc.isenabled())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    frozen, collected, enabled = result.stdout.split()
    assert int(frozen) > 1000
    assert (collected, enabled) == ("True", "True")
