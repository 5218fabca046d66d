"""Key lifecycle: rotation, revocation, where private keys live, and what must never leak."""

from __future__ import annotations

import base64
import itertools
import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ledger import (
    InputError,
    KeyNotFoundError,
    Keyring,
    Ledger,
    LedgerError,
    SigningKey,
    VerifyReport,
)
from ledger._evidence.keys import KeyEntry, load_signing_key
from ledger._evidence.record import rotation_statement

from .ledger_attacks import (
    fields,
    forge_rotation_cosignature,
    join_lines,
    resign_with_key,
    split_file,
)

A = SigningKey.from_seed(bytes([0xA1]) * 32)
B = SigningKey.from_seed(bytes([0xB2]) * 32)
C = SigningKey.from_seed(bytes([0xC3]) * 32)
LEDGER_ID = "00000000-0000-4000-8000-0000000000c0"
PEM_HEADER = b"-----BEGIN PRIVATE KEY-----"


def fixed_clock() -> Callable[[], str]:
    ticks = itertools.count()

    def now() -> str:
        n = next(ticks)
        return f"2026-04-01T08:{n // 60 % 60:02d}:{n % 60:02d}.{n:06d}Z"

    return now


def home_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"LEDGER_HOME": str(tmp_path / "home"), **extra}


def new_ledger(
    tmp_path: Path,
    key: SigningKey | None = A,
    appends: int = 3,
    environ: dict[str, str] | None = None,
) -> Ledger:
    ledger = Ledger.init(
        tmp_path / "ws",
        signing_key=key,
        clock=fixed_clock(),
        ledger_id=LEDGER_ID,
        environ=environ or home_env(tmp_path),
    )
    for i in range(appends):
        ledger.append("app.event", {"i": i}, actor={"client": "keys-test"})
    return ledger


def problems(report: VerifyReport) -> list[tuple[str, int]]:
    return [(p.code, p.seq) for p in report.problems]


def file_bytes(ledger: Ledger) -> bytes:
    return ledger.file.path.read_bytes()


def test_key_id_derivation_is_stable() -> None:
    # Pins the key-id format: "ed25519-" + 16 hex of a domain-separated hash of the public key.
    assert SigningKey.from_seed(bytes(32)).kid == "ed25519-3da0a3525c17cb0c"
    assert A.kid != B.kid
    assert "private" not in repr(A).lower()
    assert A.kid in repr(A)


# --- rotation -------------------------------------------------------------------------------


def test_rotation_hands_over_to_new_key(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    rotation = ledger.rotate_key(B)
    assert rotation.seq == 4
    assert rotation.kind == "key.rotated"
    assert rotation.key == A.kid  # the old key signs the rotation record ...
    body = rotation.body
    assert (body["old_key"], body["new_key"]) == (A.kid, B.kid)
    statement = rotation_statement(LEDGER_ID, 4, rotation.prev, A.kid, B.kid)
    entry = KeyEntry(B.kid, B.public_raw)
    assert entry.verify(base64.b64decode(body["new_key_sig"]), statement)  # ... the new co-signs
    assert (ledger.workspace.keys_dir / f"{B.kid}.json").is_file()
    after = ledger.append("app.event", {"after": "rotation"})
    assert after.key == B.kid
    report = ledger.verify(jobs=1)
    assert report.ok, report.problems
    assert report.keys_used == sorted([A.kid, B.kid])


def test_rotation_with_stored_keys_continues_in_a_new_process(tmp_path: Path) -> None:
    env = home_env(tmp_path)
    ledger = new_ledger(tmp_path, key=None, environ=env)  # generated key, stored in LEDGER_HOME
    rotation = ledger.rotate_key()
    reopened = Ledger.open(ledger.workspace.root, environ=env)
    record = reopened.append("app.event", {"x": 1})
    assert record.key == rotation.body["new_key"]
    assert reopened.verify(jobs=1).ok


def test_old_key_is_retired_after_rotation(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    ledger.rotate_key(B)  # seq 4
    ledger.append("app.event", {"by": "new key"})  # seq 5
    # The library refuses to sign with the retired key (pinned as retired in the keyring) ...
    stale = Ledger.open(ledger.workspace.root, signing_key=A, environ=home_env(tmp_path))
    before = file_bytes(ledger)
    with pytest.raises(KeyNotFoundError, match="rotated out at seq 4"):
        stale.append("app.event", {"by": "old key"})
    assert file_bytes(ledger) == before
    # ... and someone who signs with it anyway (keyring pin removed) is caught by verify.
    entry = ledger.keyring().get(A.kid)
    assert entry is not None
    assert entry.retired_after_seq == 4
    ledger.keyring().save_entry(ledger.workspace.keys_dir, entry._replace(retired_after_seq=None))
    forged = stale.append("app.event", {"by": "old key"})
    assert forged.seq == 6
    assert forged.key == A.kid
    report = ledger.verify(jobs=1)
    assert problems(report) == [("retired-key", 6)]


def test_rewriting_a_post_rotation_record_with_old_key_is_retired_key(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    ledger.rotate_key(B)  # seq 4
    ledger.append("app.event", {"by": "new key"})  # seq 5, the last record
    lines, _ = split_file(file_bytes(ledger))
    lines[5] = resign_with_key(lines[5], A)
    ledger.file.path.write_bytes(join_lines(lines))
    assert problems(ledger.verify(jobs=1)) == [("retired-key", 5)]


COSIGNATURE_FORGERIES: list[Any] = [
    pytest.param(lambda s: (s(seq=4), B), True, id="control-genuine-cosignature"),
    pytest.param(lambda s: (s(seq=9), B), False, id="statement-for-another-seq"),
    pytest.param(lambda s: (s(prev="0" * 64), B), False, id="statement-for-another-prev"),
    pytest.param(lambda s: (s(new=C.kid), B), False, id="statement-for-another-new-key"),
    pytest.param(lambda s: (s(), C), False, id="signed-by-wrong-key"),
    pytest.param(lambda s: (s(), A), False, id="signed-by-old-key-itself"),
]


@pytest.mark.parametrize(("forgery", "valid"), COSIGNATURE_FORGERIES)
def test_rotation_with_invalid_cosignature_is_bad_rotation(
    tmp_path: Path, forgery: Any, valid: bool
) -> None:
    ledger = new_ledger(tmp_path)
    rotation = ledger.rotate_key(B)  # seq 4, the last record
    lines, _ = split_file(file_bytes(ledger))

    def statement(seq: int = 4, prev: str = rotation.prev, new: str = B.kid) -> bytes:
        return rotation_statement(LEDGER_ID, seq, prev, A.kid, new)

    signed, signer = forgery(statement)
    lines[4] = forge_rotation_cosignature(lines[4], A, signed, signer)
    ledger.file.path.write_bytes(join_lines(lines))
    report = ledger.verify(jobs=1)
    if valid:
        assert report.ok, report.problems
    else:
        assert problems(report) == [("bad-rotation", 4)]


def test_rotation_to_unpinned_key_is_bad_rotation(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    ledger.rotate_key(B)
    (ledger.workspace.keys_dir / f"{B.kid}.json").unlink()
    assert problems(ledger.verify(jobs=1)) == [("bad-rotation", 4)]


def test_failed_rotation_does_not_retire_old_key(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    ledger.rotate_key(B)
    lines, _ = split_file(file_bytes(ledger))
    lines[4] = forge_rotation_cosignature(lines[4], A, b"not the rotation statement", B)
    ledger.file.path.write_bytes(join_lines(lines))
    entry = ledger.keyring().get(A.kid)
    assert entry is not None  # un-pin the retirement, as if the keyring had not recorded it
    ledger.keyring().save_entry(ledger.workspace.keys_dir, entry._replace(retired_after_seq=None))
    Ledger.open(ledger.workspace.root, signing_key=A, environ=home_env(tmp_path)).append(
        "app.event", {"still": "old key"}
    )
    # The rotation never took effect, so the old key's next record is not "retired".
    assert problems(ledger.verify(jobs=1)) == [("bad-rotation", 4)]


def test_rotating_to_the_current_key_is_refused(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    before = file_bytes(ledger)
    with pytest.raises(InputError):
        ledger.rotate_key(A)
    assert file_bytes(ledger) == before


def test_rotation_with_signing_key_from_environment_keeps_ledger_verifiable(
    tmp_path: Path,
) -> None:
    pem = tmp_path / "ci-key.pem"
    pem.write_bytes(A.to_pem())
    env = home_env(tmp_path, LEDGER_SIGNING_KEY=str(pem))
    ledger = new_ledger(tmp_path, key=None, environ=env)
    try:
        ledger.rotate_key()
    except LedgerError:
        assert Ledger.open(ledger.workspace.root, environ=env).verify(jobs=1).ok
        return
    before = file_bytes(ledger)
    try:
        Ledger.open(ledger.workspace.root, environ=env).append("app.event", {"next": "process"})
    except KeyNotFoundError:
        assert file_bytes(ledger) == before  # refusing is fine ...
    report = Ledger.open(ledger.workspace.root, environ=env).verify(jobs=1)
    assert report.ok, report.problems  # ... writing a record that fails verify is not


# --- revocation -----------------------------------------------------------------------------


def test_revocation_is_pinned_and_recorded(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path, appends=5)  # A signs 0..5
    ledger.rotate_key(B)  # seq 6, signed by A
    record = ledger.revoke_key(A.kid, from_seq=3, reason="laptop stolen")
    assert record.seq == 7
    assert record.kind == "key.revoked"
    assert record.key == B.kid
    assert record.body == {"from_seq": 3, "key": A.kid, "reason": "laptop stolen"}
    pinned = json.loads((ledger.workspace.keys_dir / f"{A.kid}.json").read_text())
    assert pinned["revoked_from_seq"] == 3
    assert pinned["revocation_reason"] == "laptop stolen"
    report = ledger.verify(jobs=1)
    # Every record A signed at or after seq 3 is now untrusted, including the rotation.
    assert problems(report) == [
        ("revoked-key", 3),
        ("revoked-key", 4),
        ("revoked-key", 5),
        ("revoked-key", 6),
    ]


def test_keyring_pin_alone_revokes(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path, appends=4)  # A signs 0..4, no key.revoked record anywhere
    keyring = ledger.keyring()
    entry = keyring.get(A.kid)
    assert entry is not None
    keyring.save_entry(ledger.workspace.keys_dir, entry._replace(revoked_from_seq=2))
    report = ledger.verify(jobs=1)
    assert problems(report) == [("revoked-key", 2), ("revoked-key", 3), ("revoked-key", 4)]


def test_revocation_record_alone_revokes_later_records(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path, appends=2)
    keyring = ledger.keyring()
    assert ledger.add_key(C.public_raw).seq == 3  # key.added, signed by the trusted key A
    # A second key (say, a CI runner's) introduced by a trusted record may sign ...
    Ledger.open(ledger.workspace.root, signing_key=C, environ=home_env(tmp_path)).append(
        "app.ci", {"job": 1}
    )  # seq 4
    assert ledger.verify(jobs=1).ok
    revocation = ledger.revoke_key(C.kid, from_seq=5)  # not the active key: no rotation
    assert revocation.seq == 5
    assert revocation.key == A.kid
    # ... until it is revoked. Even if the keyring pin is reverted, the key.revoked record in
    # the chain revokes the key for every later record.
    keyring.save_entry(ledger.workspace.keys_dir, KeyEntry(C.kid, C.public_raw, "2026-04-01"))
    Ledger.open(ledger.workspace.root, signing_key=C, environ=home_env(tmp_path)).append(
        "app.ci", {"job": 2}
    )  # seq 6
    assert problems(ledger.verify(jobs=1)) == [("revoked-key", 6)]


def test_revoking_the_active_key_hands_over_to_a_fresh_key(tmp_path: Path) -> None:
    env = home_env(tmp_path)
    ledger = new_ledger(tmp_path, key=None, environ=env)  # seqs 0..3 by a generated key
    old = ledger.tail(1)[0].key
    revocation = ledger.revoke_key(old, from_seq=5, reason="rotate out")
    (revoked,) = ledger.tail(1)
    # The revoked key signs nothing more, not even a rotation record.
    assert [r.kind for r in ledger.records()].count("key.rotated") == 0
    successor = revoked.body["successor"]
    assert revoked.line == revocation.line
    assert revoked.seq == 4
    assert revoked.key == successor  # the fresh, pinned key signs the revocation
    assert successor in ledger.keyring()
    assert (tmp_path / "home" / "keys" / f"{successor}.pem").is_file()
    assert Ledger.open(ledger.workspace.root, environ=env).append("app.event", {}).key == successor
    report = ledger.verify(jobs=1)
    assert report.ok, report.problems


def test_revoking_the_active_key_from_the_next_seq_keeps_ledger_verifiable(
    tmp_path: Path,
) -> None:
    ledger = new_ledger(tmp_path, key=None, environ=home_env(tmp_path))  # tail seq 3
    active = ledger.tail(1)[0].key
    before = file_bytes(ledger)
    try:
        ledger.revoke_key(active, from_seq=4, reason="compromised now")
    except InputError:
        assert file_bytes(ledger) == before
        return
    report = ledger.verify(jobs=1)
    assert report.ok, report.problems


def test_revoking_unknown_key_or_negative_seq_is_refused(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    before = file_bytes(ledger)
    with pytest.raises(KeyNotFoundError):
        ledger.revoke_key(C.kid, from_seq=1)
    with pytest.raises(InputError):
        ledger.revoke_key(A.kid, from_seq=-1)
    assert file_bytes(ledger) == before
    assert ledger.keyring().entries[A.kid].revoked_from_seq is None


# --- where private keys live ----------------------------------------------------------------


def test_generated_private_key_is_0600_in_0700_dir(tmp_path: Path) -> None:
    env = home_env(tmp_path)
    ledger = new_ledger(tmp_path, key=None, environ=env)
    kid = ledger.tail(1)[0].key
    keys_dir = tmp_path / "home" / "keys"
    pem = keys_dir / f"{kid}.pem"
    assert stat.S_IMODE(pem.stat().st_mode) == 0o600
    assert stat.S_IMODE(keys_dir.stat().st_mode) == 0o700
    assert load_signing_key(kid, env).kid == kid
    assert not list(ledger.workspace.root.rglob("*.pem"))  # never inside the workspace
    rotation = ledger.rotate_key()
    new_pem = keys_dir / f"{rotation.body['new_key']}.pem"
    assert stat.S_IMODE(new_pem.stat().st_mode) == 0o600


@pytest.mark.parametrize("form", ["pem-text", "path"])
def test_signing_key_from_environment(tmp_path: Path, form: str) -> None:
    pem = C.to_pem()
    if form == "path":
        path = tmp_path / "ci.pem"
        path.write_bytes(pem)
        value = str(path)
    else:
        value = pem.decode()
    env = home_env(tmp_path, LEDGER_SIGNING_KEY=value)
    ledger = new_ledger(tmp_path, key=None, environ=env)
    assert [r.key for r in ledger.records()] == [C.kid] * 4
    assert (ledger.workspace.keys_dir / f"{C.kid}.json").is_file()
    assert not (tmp_path / "home" / "keys").exists()  # no private key generated or stored
    assert (tmp_path / "home" / "trusted").is_dir()  # only the trust pin of the genesis key
    record = Ledger.open(ledger.workspace.root, environ=env).append("app.event", {"ci": True})
    assert record.key == C.kid
    assert ledger.verify(jobs=1).ok


def test_unreadable_environment_key_path_is_key_not_found(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    before = file_bytes(ledger)
    env = home_env(tmp_path, LEDGER_SIGNING_KEY=str(tmp_path / "missing.pem"))
    with pytest.raises(KeyNotFoundError, match=r"missing\.pem"):
        Ledger.open(ledger.workspace.root, environ=env).append("app.event", {})
    assert file_bytes(ledger) == before


def test_malformed_environment_key_is_key_not_found_without_echoing_it(tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path)
    before = file_bytes(ledger)
    not_a_key = "-----BEGIN PRIVATE KEY-----\nTk9UQUtFWVNFQ1JFVGJ5dGVz\n-----END PRIVATE KEY-----\n"
    env = home_env(tmp_path, LEDGER_SIGNING_KEY=not_a_key)
    with pytest.raises(KeyNotFoundError) as info:
        Ledger.open(ledger.workspace.root, environ=env).append("app.event", {})
    assert "Tk9UQUtF" not in str(info.value)
    assert file_bytes(ledger) == before


def test_missing_private_key_is_key_not_found(tmp_path: Path) -> None:
    env = home_env(tmp_path)
    ledger = new_ledger(tmp_path, key=None, environ=env)
    for pem in (tmp_path / "home" / "keys").glob("*.pem"):
        pem.unlink()
    before = file_bytes(ledger)
    reopened = Ledger.open(ledger.workspace.root, environ=env)
    with pytest.raises(KeyNotFoundError, match=r"no signing key for this ledger.*`ledger init`"):
        reopened.append("app.event", {"x": 1})
    with pytest.raises(KeyNotFoundError):
        reopened.checkpoint()
    with pytest.raises(KeyNotFoundError):
        reopened.rotate_key(B)
    assert file_bytes(ledger) == before
    assert not (ledger.workspace.keys_dir / f"{B.kid}.json").exists()


@pytest.mark.parametrize("via", ["argument", "environment"])
def test_unpinned_signing_key_is_refused(tmp_path: Path, via: str) -> None:
    ledger = new_ledger(tmp_path)
    before = file_bytes(ledger)
    keys_before = sorted(p.name for p in ledger.workspace.keys_dir.iterdir())
    if via == "argument":
        other = Ledger.open(ledger.workspace.root, signing_key=C, environ=home_env(tmp_path))
    else:
        other = Ledger.open(
            ledger.workspace.root,
            environ=home_env(tmp_path, LEDGER_SIGNING_KEY=C.to_pem().decode()),
        )
    with pytest.raises(KeyNotFoundError, match="not pinned"):
        other.append("app.event", {"x": 1})
    with pytest.raises(KeyNotFoundError, match="not pinned"):
        other.append_many([("app.event", {"x": 1}), ("app.event", {"x": 2})])
    with pytest.raises(KeyNotFoundError, match="not pinned"):
        other.checkpoint()
    assert file_bytes(ledger) == before
    assert sorted(p.name for p in ledger.workspace.keys_dir.iterdir()) == keys_before


def test_tampered_keyring_file_is_reported_and_the_outside_pin_still_verifies(
    tmp_path: Path,
) -> None:
    ledger = new_ledger(tmp_path)
    path = ledger.workspace.keys_dir / f"{A.kid}.json"
    data = json.loads(path.read_text())
    data["public_key"] = base64.b64encode(C.public_raw).decode()  # swap in another key
    path.write_text(json.dumps(data))
    report = ledger.verify(jobs=1)
    # The key file is skipped and named; the key pinned outside the workspace (by init) still
    # checks every record.
    assert report.ok, report.problems
    assert any("does not match its public key" in note for note in report.notes)
    with pytest.raises(KeyNotFoundError):
        Keyring.load(tmp_path / "nowhere")


# --- what must never leak -------------------------------------------------------------------


def secret_forms(pem: bytes) -> list[bytes]:
    body = b"".join(pem.strip().splitlines()[1:-1])
    der = base64.b64decode(body)
    seed = der[16:]
    assert len(seed) == 32
    return [
        seed,
        seed.hex().encode(),
        seed.hex().upper().encode(),
        base64.b64encode(seed),
        base64.b64encode(seed).rstrip(b"="),
        base64.urlsafe_b64encode(seed).rstrip(b"="),
        body,
        body[16:40],
        PEM_HEADER,
    ]


def test_private_key_material_never_reaches_workspace_or_checkpoint(tmp_path: Path) -> None:
    env = home_env(tmp_path)
    ledger = new_ledger(tmp_path, key=None, environ=env)
    ledger.rotate_key()
    first_kid = ledger.records().__next__().key
    ledger.revoke_key(first_kid, from_seq=5)
    ledger.append_many([("app.event", {"n": n}) for n in range(3)])
    with ledger.file.path.open("ab") as handle:
        handle.write(b'{"torn":')
    repaired = ledger.repair()
    assert repaired.repaired
    checkpoint = ledger.checkpoint().text().encode()
    pems = sorted((tmp_path / "home" / "keys").glob("*.pem"))
    assert len(pems) == 2
    secrets = [form for pem in pems for form in secret_forms(pem.read_bytes())]
    artefacts = {str(p): p.read_bytes() for p in ledger.workspace.root.rglob("*") if p.is_file()}
    artefacts["checkpoint"] = checkpoint
    artefacts["verify-report"] = json.dumps(ledger.verify(jobs=1).to_json()).encode()
    assert any(name.endswith("agent_trace.jsonl") for name in artefacts)
    for name, content in artefacts.items():
        for secret in secrets:
            assert secret not in content, f"private key material in {name}"
    for keyfile in ledger.workspace.keys_dir.glob("*.json"):
        assert set(json.loads(keyfile.read_text())) == {
            "alg",
            "created",
            "kid",
            "public_key",
            "retired_after_seq",
            "revocation_reason",
            "revoked_from_seq",
        }
    for record in ledger.records():
        assert set(fields(record.line)) == {
            "v",
            "ledger",
            "seq",
            "prev",
            "ts",
            "kind",
            "actor",
            "body",
            "key",
            "hash",
            "sig",
        }
