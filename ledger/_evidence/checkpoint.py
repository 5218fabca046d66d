"""Signed checkpoints: the only way to prove a ledger's tail was not cut off.

A hash chain proves every link but not its own length: deleting the newest records leaves a
valid chain (architecture.md note 1, the CloudTrail truncation finding). A checkpoint pins
``(ledger id, size, head hash)`` under a signature; kept somewhere else (the user's state
directory, git, a CI artifact), it lets ``ledger verify`` detect truncation, rollback and forks.

A checkpoint is a C2SP signed note (``C2SP/signed-note.md``; findings §4), so any signed-note
verifier -- Go's ``golang.org/x/mod/sumdb/note`` among them -- can check it::

    ledger/<ledger id>            origin
    <size>                        decimal, no leading zeros
    <base64 head hash>            hash of record size-1 (a chain head, not an RFC 6962 root)
                                  (empty line)
    — <key name> <base64(key ID || Ed25519 signature)>

* The Ed25519 signature covers the note text exactly as written, final newline included.
* The key name is the ledger key id (``ed25519-<16 hex>``): no spaces, no ``+``.
* key ID = ``SHA-256(name || 0x0A || 0x01 || public key)[:4]`` (0x01: the Ed25519 type).
* Unknown keys are ignored, so old and new keys (or a witness) can co-sign across a rotation.

The body is a chain head in tlog-checkpoint layout: it verifies as a *note*, but it is not a
witnessable Merkle checkpoint (findings §4, caveat).

Upcast on read: checkpoints written before this format signed
``CHECKPOINT_DOMAIN || JCS({head, ledger, size})`` and named the key hash after the key id's
first 4 bytes. :func:`parse_checkpoint` still reads them, and the legacy signature is checked
under its own rules; new checkpoints are always written in the C2SP form.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Final, Literal

from ledger._errors import CheckpointError, StorageError
from ledger._evidence.canonical import CHECKPOINT_DOMAIN, domain_bytes
from ledger._evidence.keys import Keyring, SigningKey, note_key_id
from ledger._evidence.verify import CheckpointTarget
from ledger._startup.namedtuple import NamedTuple

__all__ = [
    "MAX_CHECKPOINT_BYTES",
    "Checkpoint",
    "NoteSignature",
    "parse_checkpoint",
    "read_checkpoint_file",
    "sign_checkpoint",
]

_ORIGIN_PREFIX: Final = "ledger/"
_DASH: Final = "\u2014"
#: A checkpoint is a few hundred bytes; C2SP verifiers need accept only 16 signatures. The cap
#: keeps ``verify --checkpoint /dev/zero`` (or a huge file) from reading without limit.
MAX_CHECKPOINT_BYTES: Final = 64 * 1024
_MAX_SIGNATURES: Final = 100  # Go's note.Open refuses more than 100 signature lines too

SignatureFormat = Literal["c2sp", "legacy"]


class NoteSignature(NamedTuple):
    """One signature line of a checkpoint."""

    name: str  # the key name: a ledger key id
    key_hash: bytes  # 4 bytes
    sig: bytes  # 64 bytes
    format: SignatureFormat


def _legacy_key_hash(kid: str) -> bytes:
    # Pre-C2SP checkpoints: the first 4 bytes of the key id's hex part.
    try:
        return bytes.fromhex(kid.rsplit("-", 1)[-1][:8])
    except ValueError:
        return b""


def _legacy_statement(ledger_id: str, size: int, head: str) -> bytes:
    return domain_bytes(CHECKPOINT_DOMAIN, {"head": head, "ledger": ledger_id, "size": size})


class Checkpoint(NamedTuple):
    """A parsed (not yet verified) checkpoint."""

    ledger_id: str
    size: int
    head: str  # hex
    signatures: tuple[NoteSignature, ...]

    def note_text(self) -> str:
        """The signed text: origin, size and head lines, final newline included."""
        head = base64.b64encode(bytes.fromhex(self.head)).decode()
        return f"{_ORIGIN_PREFIX}{self.ledger_id}\n{self.size}\n{head}\n"

    def text(self) -> str:
        """The whole signed note, to store."""
        lines = [
            f"{_DASH} {s.name} {base64.b64encode(s.key_hash + s.sig).decode()}\n"
            for s in self.signatures
        ]
        return self.note_text() + "\n" + "".join(lines)

    def verified_target(self, keyring: Keyring, name: str) -> CheckpointTarget:
        """Check the signatures against the known keys.

        A known key whose signature fails rejects the checkpoint (C2SP: "should reject");
        unknown keys are ignored; at least one known, unrevoked key must have signed it.

        Raises:
            CheckpointError: no trusted signature, or a bad one.
        """
        note = self.note_text().encode()
        good = 0
        for signature in self.signatures:
            entry = keyring.get(signature.name)
            if entry is None:
                continue
            if signature.format == "c2sp":
                if signature.key_hash != note_key_id(signature.name, entry.public_raw):
                    continue  # another key of the same name: unknown to us
                message = note
            else:
                message = _legacy_statement(self.ledger_id, self.size, self.head)
            if not entry.verify(signature.sig, message):
                raise CheckpointError(
                    f"checkpoint {name}: signature by {signature.name} does not verify"
                )
            if entry.revoked_from_seq is not None and entry.revoked_from_seq < self.size:
                continue
            good += 1
        if good == 0:
            raise CheckpointError(f"checkpoint {name} is not signed by any pinned, unrevoked key")
        return CheckpointTarget(name, self.ledger_id, self.size, self.head)


def sign_checkpoint(ledger_id: str, size: int, head: str, key: SigningKey) -> Checkpoint:
    """Make a C2SP signed note of ``size`` records ending in ``head``, signed by ``key``."""
    unsigned = Checkpoint(ledger_id, size, head, ())
    sig = key.sign(unsigned.note_text().encode())
    return unsigned._replace(
        signatures=(NoteSignature(key.kid, note_key_id(key.kid, key.public_raw), sig, "c2sp"),)
    )


def _bad(name: str, why: str) -> CheckpointError:
    return CheckpointError(f"{name} is not a ledger checkpoint ({why})")


def parse_checkpoint(text: str, name: str = "checkpoint") -> Checkpoint:
    """Parse the signed-note text.

    Raises:
        CheckpointError: the text is not a ledger checkpoint.
    """
    if len(text) > MAX_CHECKPOINT_BYTES:
        raise _bad(name, f"over {MAX_CHECKPOINT_BYTES} bytes")
    if any(c < " " and c != "\n" for c in text) or "\x7f" in text:
        raise _bad(name, "control characters")  # C2SP: none but newline
    # C2SP / Go note.Open: the text ends at the last blank line; signatures follow it.
    split = text.rfind("\n\n")
    if split < 0 or not text.endswith("\n"):
        raise _bad(name, "no signature block")
    lines = text[:split].split("\n")
    if len(lines) != 3 or not lines[0].startswith(_ORIGIN_PREFIX):
        raise _bad(name, "bad header")
    ledger_id = lines[0][len(_ORIGIN_PREFIX) :]
    size_text = lines[1]
    if (
        not size_text.isdigit()
        or not size_text.isascii()
        or (size_text != "0" and size_text.startswith("0"))
    ):
        raise CheckpointError(f"{name}: size {size_text!r} is not a decimal without leading zeros")
    try:
        head_raw = base64.b64decode(lines[2], validate=True)
    except ValueError:  # binascii.Error, or a non-ASCII str (base64 refuses those)
        head_raw = b""
    if len(head_raw) != 32:
        raise CheckpointError(f"{name}: head is not a base64 SHA-256")
    signatures: list[NoteSignature] = []
    sig_lines = text[split + 2 :].split("\n")[:-1]
    if len(sig_lines) > _MAX_SIGNATURES:
        raise _bad(name, f"more than {_MAX_SIGNATURES} signatures")
    for line in sig_lines:
        parts = line.split(" ")
        if len(parts) != 3 or parts[0] != _DASH or not parts[1] or "+" in parts[1]:
            raise CheckpointError(f"{name}: malformed signature line")
        try:
            blob = base64.b64decode(parts[2], validate=True)
        except ValueError:  # binascii.Error, or a non-ASCII str (base64 refuses those)
            raise CheckpointError(f"{name}: signature is not base64") from None
        if len(blob) != 68:
            continue  # another algorithm's signature (C2SP: unknown, ignored)
        key_name, key_hash = parts[1], blob[:4]
        legacy = key_hash == _legacy_key_hash(key_name)
        signatures.append(
            NoteSignature(key_name, key_hash, blob[4:], "legacy" if legacy else "c2sp")
        )
    if not signatures:
        raise CheckpointError(f"{name} carries no signature")
    return Checkpoint(ledger_id, int(size_text), head_raw.hex(), tuple(signatures))


def read_checkpoint_file(path: str | os.PathLike[str]) -> str:
    """Read a stored checkpoint, never more than :data:`MAX_CHECKPOINT_BYTES` (+1 to tell).

    Raises:
        CheckpointError: the file is too large or not UTF-8.
        StorageError: it cannot be read.
    """
    try:
        with Path(path).open("rb") as handle:
            data = handle.read(MAX_CHECKPOINT_BYTES + 1)
    except OSError as exc:
        raise StorageError(f"cannot read checkpoint {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_CHECKPOINT_BYTES:
        raise _bad(str(path), f"over {MAX_CHECKPOINT_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _bad(str(path), "not UTF-8") from None
