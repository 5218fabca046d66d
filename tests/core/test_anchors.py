"""Attacks that only anchors outside the workspace catch: rollback, re-signing with a key the
attacker pinned in ``.orchestration/keys/``, replacing the whole ledger. Each test is named after
what it breaks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger import KeyNotFoundError, Ledger, SigningKey
from ledger._evidence.anchors import CheckpointStore, state_home, workspace_ledger_id
from ledger._evidence.keys import KeyEntry, Keyring
from ledger._evidence.ledger_upkeep import CHECKPOINT_EVERY
from tests.reserved import as_ledger_itself

KEY = SigningKey.from_seed(bytes([1]) * 32)
AGENT = SigningKey.from_seed(bytes([0xAA]) * 32)
TEAMMATE = SigningKey.from_seed(bytes([0x7E]) * 32)
SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def env_of(base: Path) -> dict[str, str]:
    return {"LEDGER_HOME": str(base / "home")}


def new_ledger(base: Path, records: int = 5, key: SigningKey = KEY) -> Ledger:
    ledger = Ledger.init(base / "ws", signing_key=key, environ=env_of(base))
    if records > 1:
        ledger.append_many([("app.event", {"n": n}) for n in range(records - 1)])
    return ledger


def codes(ledger: Ledger) -> set[str]:
    return {p.code for p in ledger.verify(jobs=1).problems}


# --- automatic checkpoints -------------------------------------------------------------------


def test_checkpoints_are_stored_outside_the_workspace(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    result = ledger.auto_checkpoint(session_end=True)
    assert result.status == "written"
    assert result.path is not None
    path = Path(result.path)
    assert path.is_relative_to(state_home(env_of(tmp_path)))
    assert not path.is_relative_to(ledger.workspace.root)
    assert ledger.auto_checkpoint(session_end=True).status == "current"


def test_checkpoint_every_n_records_without_a_session_end(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path, records=3)
    assert ledger.auto_checkpoint(every=4).status == "not-due"
    ledger.append("app.event", {})
    assert ledger.auto_checkpoint(every=4).status == "written"  # 4 records
    ledger.append_many([("app.event", {})] * 3)
    assert ledger.auto_checkpoint(every=4).status == "not-due"  # 7: 3 since the last one
    ledger.append("app.event", {})
    assert ledger.auto_checkpoint(every=4).status == "written"  # 8
    store = CheckpointStore.for_ledger(ledger.ledger_id, env_of(tmp_path))
    assert [c.size for c in store.list()] == [4, 8]
    assert CHECKPOINT_EVERY == 256


def test_checkpoint_interval_comes_from_the_environment(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path, records=3)
    reopened = Ledger.open(
        ledger.workspace.root,
        signing_key=KEY,
        environ={**env_of(tmp_path), "LEDGER_CHECKPOINT_EVERY": "3"},
    )
    assert reopened.auto_checkpoint().status == "written"


@SETTINGS
@given(st.integers(2, 12), st.data())
def test_any_deletion_after_a_checkpoint_is_detected(
    tmp_path_factory: pytest.TempPathFactory, records: int, data: st.DataObject
) -> None:
    base = tmp_path_factory.mktemp("deletion")
    ledger = new_ledger(base, records)
    assert ledger.auto_checkpoint(session_end=True).status == "written"
    lines = ledger.file.path.read_bytes().splitlines(keepends=True)
    cut = data.draw(st.integers(1, records - 1), label="records cut from the tail")
    single = data.draw(st.booleans(), label="delete one record inside instead")
    if single:
        index = data.draw(st.integers(1, records - 1), label="index")
        kept = lines[:index] + lines[index + 1 :]
    else:
        kept = lines[:-cut]
    ledger.file.path.write_bytes(b"".join(kept))
    found = codes(ledger)
    assert found, "a deletion after a checkpoint went unnoticed"
    if not single:
        assert found == {"truncated"}
    # ... and the hook path does not paper over it with a checkpoint of the shorter chain.
    assert ledger.auto_checkpoint(session_end=True).status == "rollback"
    assert len(CheckpointStore.for_ledger(ledger.ledger_id, env_of(base)).list()) == 1


def test_rewritten_history_of_the_same_length_is_a_rollback(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path, records=4)
    ledger.auto_checkpoint(session_end=True)
    lines = ledger.file.path.read_bytes().splitlines(keepends=True)
    ledger.file.path.write_bytes(b"".join(lines[:3]))
    ledger.append("app.event", {"n": "rewritten"})  # seq 3 again, other content
    ledger.append("app.event", {})
    assert ledger.auto_checkpoint(session_end=True).status == "rollback"
    assert "forked" in codes(ledger)


def test_replacing_the_whole_ledger_with_a_fresh_one_is_detected(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    ledger.auto_checkpoint(session_end=True)
    anchored = ledger.ledger_id
    assert workspace_ledger_id(ledger.workspace.root, env_of(tmp_path)) == anchored
    ledger.file.path.unlink()  # a new genesis, a new id: no checkpoint of it exists
    shutil.rmtree(ledger.workspace.keys_dir)
    fresh = Ledger.init(
        ledger.workspace.root,
        signing_key=AGENT,
        environ={"LEDGER_HOME": str(tmp_path / "agent-home")},
    )
    assert fresh.ledger_id != anchored
    assert "replaced-ledger" in codes(Ledger.open(ledger.workspace.root, environ=env_of(tmp_path)))


def test_forged_stored_checkpoint_is_reported(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    path = Path(str(ledger.auto_checkpoint(session_end=True).path))
    path.write_text(path.read_text().replace("\n5\n", "\n6\n"))
    assert "bad-checkpoint" in codes(ledger)


# --- trust in keys ---------------------------------------------------------------------------


def resign_everything(ledger: Ledger, key: SigningKey, ledger_id: str) -> None:
    """The agent's attack: pin its own key in keys/ and write a whole new valid history."""
    records = list(ledger.records())
    shutil.rmtree(ledger.workspace.keys_dir)
    ledger.file.path.unlink()
    forged = Ledger.init(
        ledger.workspace.root,
        signing_key=key,
        ledger_id=ledger_id,
        environ={"LEDGER_HOME": str(ledger.workspace.root / "agent-home")},
    )
    as_ledger_itself(forged).append_many([(r.kind, r.body) for r in records[1:]])


def test_agent_key_pinned_in_the_workspace_does_not_verify(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    resign_everything(ledger, AGENT, ledger.ledger_id)
    reopened = Ledger.open(ledger.workspace.root, environ=env_of(tmp_path))
    report = reopened.verify(jobs=1)
    assert not report.ok
    assert {p.code for p in report.problems} == {"untrusted-key"}
    assert {p.seq for p in report.problems} == set(range(5))


def test_key_added_by_a_trusted_record_verifies(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    added = ledger.add_key(TEAMMATE.public_raw)
    assert added.kind == "key.added"
    Ledger.open(ledger.workspace.root, signing_key=TEAMMATE, environ=env_of(tmp_path)).append(
        "app.event", {"by": "teammate"}
    )
    assert ledger.verify(jobs=1).ok


def test_key_file_dropped_into_keys_dir_does_not_verify(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    Keyring({}).save_entry(ledger.workspace.keys_dir, KeyEntry(AGENT.kid, AGENT.public_raw))
    as_ledger_itself(
        Ledger.open(ledger.workspace.root, signing_key=AGENT, environ=env_of(tmp_path))
    ).append("intent.scope_expanded", {"globs": ["**"], "intent_id": "INT-001"})
    assert codes(ledger) == {"untrusted-key"}


def test_key_added_by_an_untrusted_key_is_not_trusted(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    Keyring({}).save_entry(ledger.workspace.keys_dir, KeyEntry(AGENT.kid, AGENT.public_raw))
    agent = Ledger.open(ledger.workspace.root, signing_key=AGENT, environ=env_of(tmp_path))
    agent.add_key(TEAMMATE.public_raw)  # signed by the untrusted key: vouches for nothing
    Ledger.open(ledger.workspace.root, signing_key=TEAMMATE, environ=env_of(tmp_path)).append(
        "app.event", {}
    )
    report = ledger.verify(jobs=1)
    assert [(p.code, p.seq) for p in report.problems] == [
        ("untrusted-key", 5),
        ("untrusted-key", 6),
    ]


def test_pin_outside_the_workspace_is_the_trust_root(tmp_path: Path) -> None:
    # A teammate verifies a ledger they did not create: nothing pinned, the genesis key is the
    # root (and the report says so); `pin_trusted` makes it explicit.
    ledger = new_ledger(tmp_path)
    other = Ledger.open(ledger.workspace.root, environ={"LEDGER_HOME": str(tmp_path / "mate")})
    report = other.verify(jobs=1)
    assert report.ok
    assert any("nothing is pinned outside" in note for note in report.notes)
    path = other.pin_trusted()
    assert json.loads(path.read_text())["keys"][0]["kid"] == KEY.kid
    pinned = other.verify(jobs=1)
    assert pinned.ok
    assert not pinned.notes
    # Pinned to KEY, a chain re-signed from genesis by another key no longer verifies for them.
    resign_everything(ledger, AGENT, ledger.ledger_id)
    assert "untrusted-key" in {
        p.code
        for p in Ledger.open(ledger.workspace.root, environ={"LEDGER_HOME": str(tmp_path / "mate")})
        .verify(jobs=1)
        .problems
    }


@pytest.mark.parametrize(
    "content",
    [b"", b"garbage\x00\xff", b"{}", b"[1]"],
    ids=["empty", "garbage", "empty-object", "array"],
)
def test_garbage_key_file_does_not_stop_verification(tmp_path: Path, content: bytes) -> None:
    ledger = new_ledger(tmp_path)
    (ledger.workspace.keys_dir / "zz-stray.json").write_bytes(content)
    report = ledger.verify(jobs=1)
    assert report.ok, report.problems  # every record still checked with the good key
    assert any("zz-stray.json" in note for note in report.notes)
    ledger.append("app.event", {})  # appends carry on, and so does verify
    assert ledger.verify(jobs=1).ok


def test_garbage_in_place_of_the_only_key_without_a_pin_is_unverifiable(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    shutil.rmtree(tmp_path / "home" / "trusted")
    for path in ledger.workspace.keys_dir.glob("*.json"):
        path.write_bytes(b"")
    with pytest.raises(KeyNotFoundError, match="malformed"):
        ledger.verify(jobs=1)
