"""Caches never change a decision: a derived cache an agent wrote into `.orchestration/.cache/`
(wider scope, policies switched off) is not sealed with this user's secret and is ignored.

Each attack first warms the real caches with an honest call, then rewrites one cache the way an
agent with write access to the workspace could (it cannot read the secret in the user's ledger
home), and checks that an out-of-scope write is still refused.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import pytest

from ledger._governance.analysis.paths import ScopeSpec

from ._support import Session, make_workspace

GUESSED_SECRET = b"\0" * 32


def _forged(payload: bytes) -> bytes:
    mac = hmac.new(GUESSED_SECRET, payload, hashlib.sha256).hexdigest().encode()
    return mac + b"\n" + payload


def _out_of_scope_write(ws_root: Path, session: Session) -> str | None:
    target = ws_root / "src" / "billing" / "invoice.ts"
    return session.pre("Write", {"file_path": str(target), "content": "x\n"}).code


@pytest.fixture
def warmed(tmp_path: Path) -> tuple[Path, Session]:
    ws = make_workspace(tmp_path)
    (ws.orchestration / "hooks.yaml").write_text("policies:\n  scope: true\n", encoding="utf-8")
    session = Session(ws, "attacker")
    session.select("INT-001")
    assert _out_of_scope_write(ws.root, session) == "SCOPE_VIOLATION"  # caches now written
    return ws.root, session


def _cache_dir(root: Path) -> Path:
    return root / ".orchestration" / ".cache"


def test_forged_intents_cache_cannot_widen_owned_scope(warmed: tuple[Path, Session]) -> None:
    root, session = warmed
    (cache,) = _cache_dir(root).glob("intents-*.json")
    doc = json.loads(cache.read_bytes())
    for intent in doc["intents"]:
        intent["owned_scope"] = ["**"]
    blob = json.dumps(doc["intents"], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    doc["checksum"] = hashlib.sha256(blob.encode("ascii")).hexdigest()  # the old, unkeyed sum
    cache.write_text(json.dumps(doc), encoding="utf-8")
    assert _out_of_scope_write(root, session) == "SCOPE_VIOLATION"


@pytest.mark.parametrize("sealed", [True, False], ids=["guessed-key", "unsealed"])
def test_forged_scope_cache_cannot_match_everything(
    warmed: tuple[Path, Session], sealed: bool
) -> None:
    root, session = warmed
    caches = list(_cache_dir(root).glob("scope.*.json"))
    assert caches
    everything = ScopeSpec.compile(("**",)).to_cache()
    for cache in caches:
        globs = json.loads(cache.read_bytes().partition(b"\n")[2])["globs"]
        forged = json.dumps({"globs": globs, "spec": everything}).encode()
        cache.write_bytes(_forged(forged) if sealed else json.dumps(everything).encode())
    assert _out_of_scope_write(root, session) == "SCOPE_VIOLATION"


@pytest.mark.parametrize("sealed", [True, False], ids=["guessed-key", "unsealed"])
def test_forged_hooks_config_cache_cannot_switch_a_policy_off(
    warmed: tuple[Path, Session], sealed: bool
) -> None:
    root, session = warmed
    (cache,) = _cache_dir(root).glob("hooks.yaml.*.json")
    digest = json.loads(cache.read_bytes().partition(b"\n")[2])["sha256"]
    off = {"config": {"policies": {"scope": False}}, "sha256": digest}
    cache.write_bytes(
        _forged(json.dumps(off).encode()) if sealed else json.dumps(off["config"]).encode()
    )
    assert _out_of_scope_write(root, session) == "SCOPE_VIOLATION"


@pytest.mark.parametrize("left", [b"", b"\n", b"x" * 15], ids=["empty", "newline", "short"])
def test_an_emptied_cache_secret_is_no_key_so_a_cache_forged_under_it_is_ignored(
    warmed: tuple[Path, Session], left: bytes
) -> None:
    # A secret emptied or cut short (a sandbox that shows /dev/null in its place, a truncated
    # file) would key every MAC with what anyone can guess: it must count as no secret at all.
    root, session = warmed
    secret_file = Path(session.ws.env["LEDGER_HOME"]) / "cache.secret"
    secret_file.write_bytes(left)
    scope_caches = list(_cache_dir(root).glob("scope.*.json"))
    assert scope_caches
    everything = ScopeSpec.compile(("**",)).to_cache()
    for cache in scope_caches:
        globs = json.loads(cache.read_bytes().partition(b"\n")[2])["globs"]
        payload = json.dumps({"globs": globs, "spec": everything}).encode()
        mac = hmac.new(left, payload, hashlib.sha256).hexdigest().encode()
        cache.write_bytes(mac + b"\n" + payload)
    # The tripwire's seal no longer verifies under what is left: every call is refused until
    # a person looks (ledger/_hooks/tripwire.py), and the forged cache never widened anything.
    assert _out_of_scope_write(root, session) == "TAMPER"
    assert secret_file.read_bytes() == left  # never "repaired" behind the user's back
