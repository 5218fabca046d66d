"""Signed checkpoints: the only way to prove a ledger's tail was not cut off.

A hash chain proves every link but not its own length: deleting the newest records leaves a
valid chain (design-notes §1, the CloudTrail truncation finding). A checkpoint pins
``(ledger id, size, head hash)`` under a signature; kept somewhere else (git, a CI artifact),
it lets ``ledger verify --checkpoint`` detect truncation, rollback and forks.

The text follows the layout of a C2SP tlog-checkpoint signed note::

    ledger/<ledger id>            origin
    <size>                        decimal, no leading zeros
    <base64 head hash>            hash of record size-1 (a chain head, not an RFC 6962 root)

    — <key id> <base64(4-byte key hash || Ed25519 signature)>

Two deliberate differences from C2SP: the root line is the chain head, and the signature covers
``CHECKPOINT_DOMAIN || JCS({head, ledger, size})`` -- the same canonical encoder as every other
signature in ledger -- rather than the note text. Unknown signers are ignored (C2SP), which lets
old and new keys co-sign across a rotation.
"""

from __future__ import annotations

import base64
import binascii
from typing import NamedTuple

from ledger._errors import CheckpointError
from ledger._evidence.canonical import CHECKPOINT_DOMAIN, domain_bytes
from ledger._evidence.keys import Keyring, SigningKey
from ledger._evidence.verify import CheckpointTarget

__all__ = ["Checkpoint", "parse_checkpoint", "sign_checkpoint"]

_ORIGIN_PREFIX = "ledger/"
_DASH = "\u2014"


class Checkpoint(NamedTuple):
    """A parsed (not yet verified) checkpoint."""

    ledger_id: str
    size: int
    head: str  # hex
    signatures: tuple[tuple[str, bytes], ...]  # (key id, 64-byte signature)

    def statement(self) -> bytes:
        """The signed bytes."""
        return checkpoint_statement(self.ledger_id, self.size, self.head)

    def text(self) -> str:
        """The signed-note text to store."""
        body = (f"{_ORIGIN_PREFIX}{self.ledger_id}\n{self.size}\n"
                f"{base64.b64encode(bytes.fromhex(self.head)).decode()}\n")
        lines = [
            f"{_DASH} {kid} {base64.b64encode(_key_hash(kid) + sig).decode()}\n"
            for kid, sig in self.signatures
        ]
        return body + "\n" + "".join(lines)

    def verified_target(self, keyring: Keyring, name: str) -> CheckpointTarget:
        """Check the signatures against the pinned keys.

        A known key whose signature fails rejects the checkpoint; unknown keys are ignored; at
        least one pinned, unrevoked key must have signed it.

        Raises:
            CheckpointError: no trusted signature, or a bad one.
        """
        statement = self.statement()
        good = 0
        for kid, sig in self.signatures:
            entry = keyring.get(kid)
            if entry is None:
                continue
            if not entry.verify(sig, statement):
                raise CheckpointError(f"checkpoint {name}: signature by {kid} does not verify")
            if entry.revoked_from_seq is not None and entry.revoked_from_seq < self.size:
                continue
            good += 1
        if good == 0:
            raise CheckpointError(f"checkpoint {name} is not signed by any pinned, unrevoked key")
        return CheckpointTarget(name, self.ledger_id, self.size, self.head)


def _key_hash(kid: str) -> bytes:
    # The 4-byte key hash of a C2SP signature line; our kids already are hashes of the key.
    return bytes.fromhex(kid.rsplit("-", 1)[-1][:8])


def checkpoint_statement(ledger_id: str, size: int, head: str) -> bytes:
    """What a checkpoint signature covers."""
    return domain_bytes(CHECKPOINT_DOMAIN, {"head": head, "ledger": ledger_id, "size": size})


def sign_checkpoint(ledger_id: str, size: int, head: str, key: SigningKey) -> Checkpoint:
    """Make a checkpoint of ``size`` records ending in ``head``, signed by ``key``."""
    sig = key.sign(checkpoint_statement(ledger_id, size, head))
    return Checkpoint(ledger_id, size, head, ((key.kid, sig),))


def parse_checkpoint(text: str, name: str = "checkpoint") -> Checkpoint:
    """Parse the signed-note text.

    Raises:
        CheckpointError: the text is not a ledger checkpoint.
    """
    body, sep, sigs = text.partition("\n\n")
    lines = body.split("\n")
    if not sep or len(lines) != 3 or not lines[0].startswith(_ORIGIN_PREFIX):
        raise CheckpointError(f"{name} is not a ledger checkpoint (bad header)")
    ledger_id = lines[0][len(_ORIGIN_PREFIX):]
    size_text = lines[1]
    if not size_text.isdigit() or (size_text != "0" and size_text.startswith("0")):
        raise CheckpointError(f"{name}: size {size_text!r} is not a decimal without leading zeros")
    try:
        head_raw = base64.b64decode(lines[2], validate=True)
    except binascii.Error:
        head_raw = b""
    if len(head_raw) != 32:
        raise CheckpointError(f"{name}: head is not a base64 SHA-256")
    signatures: list[tuple[str, bytes]] = []
    for line in sigs.splitlines():
        parts = line.split(" ")
        if len(parts) != 3 or parts[0] != _DASH:
            raise CheckpointError(f"{name}: malformed signature line")
        try:
            blob = base64.b64decode(parts[2], validate=True)
        except binascii.Error:
            raise CheckpointError(f"{name}: signature is not base64") from None
        kid = parts[1]
        if len(blob) != 68:
            raise CheckpointError(f"{name}: signature by {kid} has the wrong length")
        try:
            expected = _key_hash(kid)
        except ValueError:
            expected = b""
        if blob[:4] != expected:
            continue  # C2SP: a line whose key hash does not match its name is ignored
        signatures.append((kid, blob[4:]))
    if not signatures:
        raise CheckpointError(f"{name} carries no signature")
    return Checkpoint(ledger_id, int(size_text), head_raw.hex(), tuple(signatures))
