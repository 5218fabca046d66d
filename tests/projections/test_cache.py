"""The projection cache: incremental equals a full rebuild, and a cache never changes an answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger import Entry, Ledger, SigningKey
from ledger._evidence.read import read_records
from ledger._governance.state import fold
from ledger._projections import GOVERNANCE_STATE, ProjectionCache
from tests.reserved import as_ledger_itself

HOME = "home"


def _ledger(tmp_path: Path, name: str = "ws", seed: int = 7) -> Ledger:
    return Ledger.init(
        tmp_path / name,
        signing_key=SigningKey.from_seed(bytes([seed]) * 32),
        environ={"LEDGER_HOME": str(tmp_path / HOME)},
    )


def _cache(ledger: Ledger, tmp_path: Path) -> ProjectionCache:
    return ProjectionCache(
        ledger.file.path,
        ledger.workspace.cache_dir,
        ledger.ledger_id,
        environ={"LEDGER_HOME": str(tmp_path / HOME)},
    )


sessions = st.sampled_from(["s1", "s2", "s3"])
intents = st.sampled_from(["INT-001", "INT-002"])
paths = st.sampled_from(["src/a.py", "src/b.py", "docs/c.md"])
digests = st.sampled_from(["a" * 64, "b" * 64, "c" * 64])
entries = st.one_of(
    st.builds(
        lambda s, i: Entry("intent.selected", {"intent_id": i, "session": s, "via": "cli"}),
        sessions,
        intents,
    ),
    st.builds(lambda s: Entry("intent.cleared", {"session": s, "via": "cli"}), sessions),
    st.builds(
        lambda i, g: Entry(
            "intent.scope_expanded",
            {
                "approved_via": "cli",
                "globs": [g],
                "intent_id": i,
                "reason": None,
                "session": None,
                "tool_use_id": None,
            },
        ),
        intents,
        st.sampled_from(["docs/**", "lib/**"]),
    ),
    st.builds(
        lambda s, p, d, i: Entry(
            "hook.post",
            {
                "tool": "Write",
                "tool_use_id": f"toolu_{p}",
                "data": {"intent_id": i},
                "observed": {p: d},
                "attribution": {
                    "source": "content",
                    "files": [
                        {
                            "path": p,
                            "change": None,
                            "previous_path": None,
                            "sha256": d,
                            "mutation_class": None,
                            "exact": False,
                            "hunks": [],
                        }
                    ],
                },
            },
            {"session": s, "client": "claude-code"},
        ),
        sessions,
        paths,
        digests,
        intents,
    ),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batches=st.lists(st.lists(entries, min_size=1, max_size=5), min_size=1, max_size=6))
def test_incremental_projection_equals_full_rebuild(
    tmp_path_factory: pytest.TempPathFactory, batches: list[list[Entry]]
) -> None:
    tmp_path = tmp_path_factory.mktemp("incremental")
    ledger = _ledger(tmp_path)
    cache = _cache(ledger, tmp_path)
    for batch in batches:  # the cache advances after every batch, as hook calls do
        as_ledger_itself(ledger).append_many(batch)
        incremental = cache.state(GOVERNANCE_STATE)
        full = fold(stored.data for stored in read_records(ledger.file.path))
        assert incremental.to_json() == full.to_json()
    assert cache.rebuilds == 1  # only the first call started from nothing


def _grant_state(tmp_path: Path) -> tuple[Ledger, ProjectionCache, dict[str, Any]]:
    ledger = _ledger(tmp_path)
    as_ledger_itself(ledger).append(
        "intent.selected", {"intent_id": "INT-001", "session": "s1", "via": "cli"}
    )
    cache = _cache(ledger, tmp_path)
    honest = cache.state(GOVERNANCE_STATE).to_json()
    return ledger, cache, honest


def _cache_file(ledger: Ledger) -> Path:
    return ledger.workspace.cache_dir / "projections" / "governance.json"


def test_poisoned_cache_cannot_grant_scope(tmp_path: Path) -> None:
    ledger, _, honest = _grant_state(tmp_path)
    path = _cache_file(ledger)
    mac, _, payload = path.read_bytes().partition(b"\n")
    data = json.loads(payload)
    data["state"]["grants"] = {"INT-001": ["**"]}  # the attack: widen scope without a record
    path.write_bytes(mac + b"\n" + json.dumps(data, sort_keys=True).encode())
    fresh = _cache(ledger, tmp_path)
    assert fresh.state(GOVERNANCE_STATE).to_json() == honest
    assert fresh.rebuilds == 1


def test_cache_forged_without_the_users_secret_is_rebuilt(tmp_path: Path) -> None:
    import hashlib  # noqa: PLC0415
    import hmac  # noqa: PLC0415

    ledger, _, honest = _grant_state(tmp_path)
    path = _cache_file(ledger)
    _, _, payload = path.read_bytes().partition(b"\n")
    data = json.loads(payload)
    data["state"]["grants"] = {"INT-001": ["**"]}
    forged = json.dumps(data, sort_keys=True).encode()
    guessed_mac = hmac.new(b"\0" * 32, forged, hashlib.sha256).hexdigest().encode()
    path.write_bytes(guessed_mac + b"\n" + forged)
    fresh = _cache(ledger, tmp_path)
    assert fresh.state(GOVERNANCE_STATE).to_json() == honest
    assert fresh.rebuilds == 1


def test_cache_of_a_rolled_back_ledger_is_rebuilt(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path)
    as_ledger_itself(ledger).append(
        "intent.selected", {"intent_id": "INT-001", "session": "s1", "via": "cli"}
    )
    before = ledger.file.path.read_bytes()
    as_ledger_itself(ledger).append(
        "intent.selected", {"intent_id": "INT-002", "session": "s1", "via": "cli"}
    )
    cache = _cache(ledger, tmp_path)
    assert cache.state(GOVERNANCE_STATE).intent_of("s1") == "INT-002"
    ledger.file.path.write_bytes(before)  # roll the ledger back one record
    fresh = _cache(ledger, tmp_path)
    assert fresh.state(GOVERNANCE_STATE).intent_of("s1") == "INT-001"
    assert fresh.rebuilds == 1


def test_cache_of_another_ledger_is_foreign(tmp_path: Path) -> None:
    ours = _ledger(tmp_path, "ours", seed=1)
    theirs = _ledger(tmp_path, "theirs", seed=2)
    as_ledger_itself(theirs).append(
        "intent.selected", {"intent_id": "INT-009", "session": "s1", "via": "cli"}
    )
    _cache(theirs, tmp_path).state(GOVERNANCE_STATE)
    target = _cache_file(ours)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(_cache_file(theirs).read_bytes())  # same user secret, other ledger
    fresh = _cache(ours, tmp_path)
    assert fresh.state(GOVERNANCE_STATE).intent_of("s1") is None
    assert fresh.rebuilds == 1


def test_garbage_cache_file_is_rebuilt(tmp_path: Path) -> None:
    ledger, _, honest = _grant_state(tmp_path)
    _cache_file(ledger).write_bytes(b"\xff\x00 not a cache")
    fresh = _cache(ledger, tmp_path)
    assert fresh.state(GOVERNANCE_STATE).to_json() == honest
    assert fresh.rebuilds == 1


def test_warm_cache_folds_only_new_records(tmp_path: Path) -> None:
    ledger, _, _ = _grant_state(tmp_path)
    as_ledger_itself(ledger).append("intent.cleared", {"session": "s1", "via": "cli"})
    warm = _cache(ledger, tmp_path)
    assert warm.state(GOVERNANCE_STATE).intent_of("s1") is None
    assert warm.rebuilds == 0
