"""Attacks on a ledger file, each named after what it breaks.

Pure byte-level helpers shared by the tamper tests and the golden-fixture generator
(``tests/fixtures/golden/generate.py`` loads this file by path). Every function takes the
ledger's complete lines (without newlines) or raw file bytes and returns new ones; nothing here
touches the disk or verifies anything.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ledger._evidence.canonical import RECORD_HASH_DOMAIN, canonical_bytes
from ledger._evidence.keys import SigningKey
from ledger._evidence.record import build_line, record_statement

Lines = list[bytes]
Edit = Callable[[dict[str, Any]], None]


def join_lines(lines: Lines) -> bytes:
    """The file bytes of complete lines."""
    return b"".join(line + b"\n" for line in lines)


def split_file(data: bytes) -> tuple[Lines, bytes]:
    """``(complete_lines, torn_tail)`` of raw file bytes."""
    *lines, torn = data.split(b"\n")
    return lines, torn


def fields(line: bytes) -> dict[str, Any]:
    """The parsed record."""
    data = json.loads(line)
    assert isinstance(data, dict)
    return data


def _unsigned(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in {"hash", "sig"}}


def record_hash(data: dict[str, Any]) -> str:
    """The hash a record with these fields must carry."""
    return hashlib.sha256(RECORD_HASH_DOMAIN + canonical_bytes(_unsigned(data))).hexdigest()


# --- one line -----------------------------------------------------------------------------


def corrupt_byte(data: bytes, position: int, value: int) -> bytes:
    """Breaks whatever byte ``position`` holds: set it to ``value``."""
    assert data[position] != value
    return data[:position] + bytes([value]) + data[position + 1 :]


def edit_field_keep_hash(line: bytes, edit: Edit) -> bytes:
    """Breaks the hash: edit the record's fields, leave ``hash`` and ``sig`` as they were."""
    data = fields(line)
    edit(data)
    return canonical_bytes(data)


def recompute_hash_keep_sig(line: bytes, edit: Edit) -> bytes:
    """Breaks the signature only: edit fields, store the correct new hash, keep the old sig."""
    data = fields(line)
    edit(data)
    data["hash"] = record_hash(data)
    return canonical_bytes(data)


def resign_with_key(line: bytes, key: SigningKey, edit: Edit | None = None) -> bytes:
    """Breaks key trust: a perfectly formed record (valid hash and sig) signed by ``key``.

    ``edit`` may change the fields first. Used with a key that is not pinned (``unknown-key``),
    rotated out (``retired-key``) or revoked (``revoked-key``).
    """
    data = fields(line)
    if edit is not None:
        edit(data)
    new_line, _ = build_line(
        ledger_id=data["ledger"],
        seq=data["seq"],
        prev=data["prev"],
        ts=data["ts"],
        kind=data["kind"],
        actor=data["actor"],
        body=data["body"],
        key=key,
    )
    return new_line


def resign_by_untrusted_key(line: bytes, untrusted: SigningKey) -> bytes:
    """Breaks key trust: re-sign the record, unchanged otherwise, by a key not in the keyring."""
    return resign_with_key(line, untrusted)


def forge_signature_padding_bits(line: bytes) -> bytes:
    """Breaks byte-exactness only: flip the unused low bits of the base64 signature's last digit.

    A 64-byte Ed25519 signature is 86 base64 digits + ``==``; the last digit carries 4 bits of
    signature and 2 padding bits. Changing only the padding bits decodes to the same signature.
    """
    data = fields(line)
    sig = data["sig"]
    assert sig.endswith("==")
    assert len(sig) == 88
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    last = alphabet.index(sig[-3])
    forged = sig[:-3] + alphabet[last ^ 0b01] + "=="
    assert base64.b64decode(forged) == base64.b64decode(sig)
    data["sig"] = forged
    return canonical_bytes(data)


def forge_rotation_cosignature(
    line: bytes, old_key: SigningKey, statement: bytes, signer: SigningKey
) -> bytes:
    """Breaks a key rotation: replace ``new_key_sig`` with ``signer``'s signature over
    ``statement`` (a wrong statement, or the right one by the wrong key), re-signed by the old key
    so that only the co-signature is wrong."""

    def edit(data: dict[str, Any]) -> None:
        data["body"]["new_key_sig"] = base64.b64encode(signer.sign(statement)).decode()

    return resign_with_key(line, old_key, edit)


# --- whole file ---------------------------------------------------------------------------


def delete_record(lines: Lines, index: int) -> Lines:
    """Breaks contiguity: drop line ``index``."""
    return lines[:index] + lines[index + 1 :]


def duplicate_record(lines: Lines, index: int) -> Lines:
    """Breaks uniqueness: line ``index`` appears twice in a row."""
    return lines[: index + 1] + lines[index:]


def swap_records(lines: Lines, index: int) -> Lines:
    """Breaks order: lines ``index`` and ``index + 1`` change places."""
    out = list(lines)
    out[index], out[index + 1] = out[index + 1], out[index]
    return out


def splice_foreign_record(lines: Lines, foreign: bytes, index: int, *, replace: bool) -> Lines:
    """Breaks ledger identity: a record of another ledger inserted at (or replacing) ``index``."""
    return [*lines[:index], foreign, *lines[index + (1 if replace else 0) :]]


def replace_record(lines: Lines, index: int, line: bytes) -> Lines:
    """Swap in a rewritten line at ``index``."""
    out = list(lines)
    out[index] = line
    return out


def truncate_records(lines: Lines, count: int) -> Lines:
    """Breaks completeness, invisibly to the chain: cut the newest ``count`` records."""
    assert 0 < count < len(lines)
    return lines[:-count]


def tear_tail(data: bytes, fragment: bytes) -> bytes:
    """Breaks the last line: a crash left ``fragment`` (no newline) after the last record."""
    assert fragment
    assert b"\n" not in fragment
    return data + fragment


def reattach_lines(lines: Lines, torn: bytes = b"") -> bytes:
    """File bytes from complete lines and an optional torn fragment."""
    return join_lines(lines) + torn


def rewrite_tail(lines: Lines, keep: int, key: SigningKey, bodies: list[dict[str, Any]]) -> Lines:
    """Breaks history (a fork): keep ``keep`` records, then re-append new ``bodies`` correctly
    chained and signed by ``key``, as an attacker holding the real key would."""
    out = lines[:keep]
    last = fields(out[-1])
    prev, seq = last["hash"], last["seq"] + 1
    for body in bodies:
        new_line, record = build_line(
            ledger_id=last["ledger"],
            seq=seq,
            prev=prev,
            ts=last["ts"],
            kind="app.forged",
            actor=last["actor"],
            body=body,
            key=key,
        )
        prev = record["hash"]
        out.append(new_line)
        seq += 1
    return out


def signature_is_valid(line: bytes, key: SigningKey) -> bool:
    """Whether ``line``'s signature verifies under ``key`` (sanity checks for the attacks)."""
    data = fields(line)
    try:
        Ed25519PublicKey.from_public_bytes(key.public_raw).verify(
            base64.b64decode(data["sig"]),
            record_statement(data["ledger"], data["seq"], data["hash"]),
        )
    except InvalidSignature:
        return False
    return True
