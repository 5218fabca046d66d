"""The ledger record, format version 1: how one line is built, hashed, signed and checked.

A record is one line of ``.orchestration/agent_trace.jsonl``: the RFC 8785 canonical JSON of::

    {
      "v": 1,                       format version
      "ledger": "<uuid>",           ledger id, fixed at init (anti-splice)
      "seq": 0,                     contiguous from 0
      "prev": "<64 hex>",           hash of record seq-1; GENESIS_PREV for seq 0
      "ts": "2026-11-21T10:43:00.123456Z",   UTC, RFC 3339, microseconds
      "kind": "hook.pre",           what happened (see docs/record-format.md)
      "actor": {"client", "session", "agent", "model"},   each a string or null
      "body": {...},                kind-specific, plain JSON, no floats
      "key": "ed25519-<16 hex>",    signing key id
      "hash": "<64 hex>",           SHA-256(RECORD_HASH_DOMAIN || JCS(record − hash − sig))
      "sig": "<base64>"             Ed25519 over RECORD_SIG_DOMAIN || JCS({hash, ledger, seq})
    }

Everything here is pure: bytes in, facts out. Files live in ``_store``; the chain fold lives in
``_verify``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ledger._errors import InputError
from ledger._evidence.canonical import (
    RECORD_HASH_DOMAIN,
    RECORD_SIG_DOMAIN,
    ROTATION_DOMAIN,
    _check,
    _encode,
    domain_bytes,
    parse_canonical,
)
from ledger._evidence.format import FORMAT_VERSION, SUPPORTED_FORMATS
from ledger._evidence.keys import SigningKey
from ledger._startup.namedtuple import NamedTuple
from ledger._startup.patterns import lazy_compile

__all__ = [
    "ACTOR_FIELDS",
    "APPEND_RESERVED_PREFIXES",
    "FORMAT_VERSION",
    "GENESIS_PREV",
    "SUPPORTED_FORMATS",
    "LineFacts",
    "Record",
    "build_line",
    "check_line",
    "check_lines",
    "normalize_actor",
    "rotation_statement",
]

GENESIS_PREV: Final = "0" * 64
ACTOR_FIELDS: Final = ("agent", "client", "model", "session")
_ENVELOPE: Final = frozenset(
    ("v", "ledger", "seq", "prev", "ts", "kind", "actor", "body", "key", "hash", "sig")
)
_HEX128: Final = lazy_compile("[0-9a-f]{128}")

# Kinds the library writes itself; `Ledger.append` refuses them from callers.
GENESIS_KIND: Final = "ledger.genesis"
REPAIRED_KIND: Final = "ledger.repaired"
ROTATED_KIND: Final = "key.rotated"
REVOKED_KIND: Final = "key.revoked"
ADDED_KIND: Final = "key.added"
RESERVED_PREFIXES: Final = ("ledger.", "key.")
_KEY_EVENT_KINDS: Final = frozenset((ROTATED_KIND, REVOKED_KIND, ADDED_KIND))

#: Kinds ``ledger append`` (the CLI any script -- or an agent's shell -- can run) refuses: every
#: kind the library and the governance path write (``ledger.``, ``key.``, ``hook.``,
#: ``intent.``, ``governance.``), and those reserved for the layers above (blame, export, query,
#: checkpoints). A forged ``intent.scope_expanded`` appended from a shell once granted scope.
APPEND_RESERVED_PREFIXES: Final = (
    *RESERVED_PREFIXES,
    "hook.",
    "intent.",
    "governance.",
    "checkpoint.",
    "blame.",
    "export.",
    "query.",
)


def normalize_actor(actor: Mapping[str, Any] | None) -> dict[str, str | None]:
    """Actor as stored: every field present, each a string or null (stable columns for SQL)."""
    if actor is None:
        return dict.fromkeys(ACTOR_FIELDS)
    unknown = set(actor) - set(ACTOR_FIELDS)
    if unknown:
        raise InputError(f"unknown actor field(s): {', '.join(sorted(unknown))}")
    out: dict[str, str | None] = {}
    for name in ACTOR_FIELDS:
        value = actor.get(name)
        if value is not None and not isinstance(value, str):
            raise InputError(f"actor.{name} must be a string")
        out[name] = value
    return out


def record_statement(ledger_id: str, seq: int, record_hash: str) -> bytes:
    """The bytes a record signature covers: binds ledger id, position and content hash."""
    # Same encoder as domain_bytes(); the validation walk is skipped because the shape is fixed
    # and the callers pass a str, an int in range and a hex str (a lone surrogate still raises).
    return RECORD_SIG_DOMAIN + _encode(
        {"hash": record_hash, "ledger": ledger_id, "seq": seq}, False
    )


def _excise_hash_and_sig(line: bytes, record_hash: str, sig: str) -> bytes | None:
    """The hashed bytes of a *canonical* line: the line minus its ``hash`` and ``sig`` members.

    RFC 8785 output is members in sorted order joined by commas, so deleting two top-level
    members from canonical bytes gives exactly the canonical bytes of the smaller object --
    and we hash what is on disk instead of a re-serialization. ``hash`` and ``sig`` are never
    the first member (``actor`` sorts first), so each carries a leading comma. Only strings and
    integers follow them at top level (checked by the envelope rules), and quotes inside strings
    are escaped, so the rightmost occurrence is the top-level member.
    """
    hash_member = b',"hash":"' + record_hash.encode() + b'"'
    sig_member = b',"sig":"' + sig.encode() + b'"'
    h = line.rfind(hash_member)
    s = line.rfind(sig_member)
    if h < 0 or s < h:
        return None
    return line[:h] + line[h + len(hash_member) : s] + line[s + len(sig_member) :]


def rotation_statement(ledger_id: str, seq: int, prev: str, old_key: str, new_key: str) -> bytes:
    """What the *new* key signs in a ``key.rotated`` record (the old key signs the record)."""
    return domain_bytes(
        ROTATION_DOMAIN,
        {"ledger": ledger_id, "new_key": new_key, "old_key": old_key, "prev": prev, "seq": seq},
    )


def build_line(
    *,
    ledger_id: str,
    seq: int,
    prev: str,
    ts: str,
    kind: str,
    actor: dict[str, str | None],
    body: dict[str, Any],
    key: SigningKey,
) -> tuple[bytes, dict[str, Any]]:
    """Build one signed record.

    Returns:
        ``(line, record)``: the canonical record without its newline, and the record as a dict.

    Raises:
        CanonicalizationError: the body holds a float, a huge integer, or a non-JSON type.
    """
    unsigned: dict[str, Any] = {
        "v": FORMAT_VERSION,
        "ledger": ledger_id,
        "seq": seq,
        "prev": prev,
        "ts": ts,
        "kind": kind,
        "actor": actor,
        "body": body,
        "key": key.kid,
    }
    hashed = _encode(unsigned, _check(unsigned))
    record_hash = hashlib.sha256(RECORD_HASH_DOMAIN + hashed).hexdigest()
    signature = base64.b64encode(key.sign(record_statement(ledger_id, seq, record_hash))).decode()
    unsigned["hash"] = record_hash
    unsigned["sig"] = signature
    return _insert_hash_and_sig(hashed, record_hash, signature), unsigned


def _insert_hash_and_sig(hashed: bytes, record_hash: str, sig: str) -> bytes:
    """The full canonical line from the hashed bytes: the inverse of _excise_hash_and_sig.

    In RFC 8785 order ``hash`` sits right before ``key`` and ``sig`` right before ``ts``. Only
    strings and integers follow the body at top level, so the *last* ``,"key":"`` and
    ``,"ts":"`` in the bytes are the top-level members (quotes inside strings are escaped).
    Inserting members into canonical bytes yields the canonical bytes of the larger object;
    ``tests/core`` checks the result against a full re-encoding.
    """
    k = hashed.rfind(b',"key":"')
    t = hashed.rfind(b',"ts":"')
    return b"".join(
        (
            hashed[:k],
            b',"hash":"',
            record_hash.encode(),
            b'"',
            hashed[k:t],
            b',"sig":"',
            sig.encode(),
            b'"',
            hashed[t:],
        )
    )


class LineFacts(NamedTuple):
    """What one line says about itself, checked in isolation (no chain context).

    Tuples pickle cheaply: parallel verification ships these from worker processes.
    """

    seq: int | None
    ledger: str | None
    prev: str | None
    hash: str | None
    key: str | None
    kind: str | None
    problems: tuple[tuple[str, str], ...]
    # ("rotated", old_key, new_key, cosigned_ok) | ("revoked", key, from_seq) | None
    key_event: tuple[Any, ...] | None = None
    unparsed: bool = False


def _strict_b64decode(text: str) -> bytes:
    """Base64 with exactly one encoding per value: the unused low bits of the last character
    must be zero, or a one-byte change to the line would leave the signature valid."""
    # The decoder's leniency does not matter: only the one canonical encoding of the bytes it
    # yields is accepted (a non-ASCII str raises ValueError, bad padding binascii.Error).
    raw = binascii.a2b_base64(text)
    if binascii.b2a_base64(raw, newline=False) != text.encode():
        raise ValueError("non-canonical base64")
    return raw


def _envelope_problem(data: dict[str, Any]) -> str | None:
    if data.keys() != _ENVELOPE:
        missing = _ENVELOPE - data.keys()
        if missing:
            return f"missing field(s): {', '.join(sorted(missing))}"
        return f"unknown field(s): {', '.join(sorted(data.keys() - _ENVELOPE))}"
    seq = data["seq"]
    if type(seq) is not int or seq < 0:
        return "seq must be a non-negative integer"
    if not (
        type(data["ledger"])
        is type(data["ts"])
        is type(data["kind"])
        is type(data["key"])
        is type(data["sig"])
        is str
    ):
        return "ledger, ts, kind, key and sig must be strings"
    prev, record_hash = data["prev"], data["hash"]
    # One match over both (the common case is that both are right).
    if not (
        type(prev) is type(record_hash) is str
        and len(prev) == len(record_hash) == 64
        and _HEX128.fullmatch(prev + record_hash)
    ):
        return "prev and hash must be 64 lowercase hex digits"
    if type(data["actor"]) is not dict or type(data["body"]) is not dict:
        return "actor and body must be objects"
    return None


def check_line(line: bytes, keys: Mapping[str, Ed25519PublicKey]) -> LineFacts:
    """Check one line on its own: canonical bytes, envelope, hash, signature, key events.

    Args:
        line: the raw bytes on disk, without the trailing newline.
        keys: pinned public keys by key id.

    Returns:
        The line's :class:`LineFacts`; ``problems`` lists ``(code, message)`` pairs.
    """
    facts, pending = _check_all_but_signature(line, keys)
    return facts if pending is None else _settle(facts, pending)


def check_lines(lines: Sequence[bytes], keys: Mapping[str, Ed25519PublicKey]) -> list[LineFacts]:
    """:func:`check_line` for each of ``lines``, with the Ed25519 verifications back to back.

    Between the parsing and hashing of 1 KB lines, each verification would first refetch its
    code and tables from a slower cache; run in one loop they stay hot, which saves about 4 of
    the ~110 CPU-µs a record costs (bench_verify, docs/architecture.md "verify").
    """
    checked = [_check_all_but_signature(line, keys) for line in lines]
    return [facts if pending is None else _settle(facts, pending) for facts, pending in checked]


# A record signature still to verify: (public key, signature, signed statement).
_Pending = tuple[Ed25519PublicKey, bytes, bytes]


def _settle(facts: LineFacts, pending: _Pending) -> LineFacts:
    """``facts`` once the record signature in ``pending`` is verified."""
    public, signature, statement = pending
    try:
        public.verify(signature, statement)
    except (InvalidSignature, ValueError):
        # Appended last: every other problem of the line was found before this one.
        return facts._replace(problems=(*facts.problems, _bad_signature(facts.key)))
    return facts


def _bad_signature(kid: str | None) -> tuple[str, str]:
    return ("bad-signature", f"signature does not verify under {kid}")


def _check_all_but_signature(
    line: bytes, keys: Mapping[str, Ed25519PublicKey]
) -> tuple[LineFacts, _Pending | None]:
    """:func:`check_line` up to the Ed25519 verification of the record signature, which is
    returned to be done (by :func:`_settle`) rather than done."""
    data, not_canonical = parse_canonical(line)
    if not_canonical is not None and line[-1:].isspace():
        # Whitespace after an otherwise sound record (an editor, `echo >>`): say so, so that
        # `ledger repair` can strip it at the end of the file, instead of "non-canonical".
        stripped = check_line(line.rstrip(), keys)
        if not stripped.problems:
            return stripped._replace(
                problems=(("trailing-whitespace", "whitespace after the record on its line"),)
            ), None
    if data is None:
        problem = (
            ("blank-line", "a blank (whitespace-only) line")
            if not line.strip()
            else ("malformed", str(not_canonical))
        )
        return LineFacts(None, None, None, None, None, None, (problem,), unparsed=True), None
    problems: list[tuple[str, str]] = []
    version = data.get("v")
    if type(version) is not int or version not in SUPPORTED_FORMATS:
        # Tampering until shown otherwise: check the rest -- hash, signature, link -- under the
        # current rules. Editing or removing `v` changes the hashed bytes, so such a record
        # always also fails its hash (or, if the hash was recomputed, its signature).
        problems.append(_version_problem(data))
        data = {**data, "v": FORMAT_VERSION}
    envelope = _envelope_problem(data)
    if envelope is not None:
        return LineFacts(
            None, None, None, None, None, None, (*problems, ("malformed", envelope)), unparsed=True
        ), None
    if not_canonical is not None:
        problems.append(("non-canonical", not_canonical))
    seq: int = data["seq"]
    ledger_id: str = data["ledger"]
    stored_hash: str = data["hash"]
    kid: str = data["key"]
    kind: str = data["kind"]
    hash_input = (
        _excise_hash_and_sig(line, stored_hash, data["sig"]) if not_canonical is None else None
    )
    if hash_input is None:
        unsigned = {k: v for k, v in data.items() if k not in {"hash", "sig"}}
        try:
            hash_input = _encode(unsigned, _check(unsigned))
        except InputError as exc:
            hash_input = None
            problems.append(("non-canonical", str(exc)))
    computed = (
        hashlib.sha256(RECORD_HASH_DOMAIN + hash_input).hexdigest()
        if hash_input is not None
        else None
    )
    if computed is not None and computed != stored_hash:
        problems.append(("bad-hash", "stored hash does not match the record's content"))
    public = keys.get(kid)
    pending: _Pending | None = None
    if public is None:
        problems.append(("unknown-key", f"signed by {kid}, which is not pinned in the keyring"))
    else:
        try:
            signature = _strict_b64decode(data["sig"])
            pending = (public, signature, record_statement(ledger_id, seq, stored_hash))
        except (binascii.Error, ValueError):
            problems.append(_bad_signature(kid))
    key_event = _key_event(data, keys) if kind in _KEY_EVENT_KINDS else None
    facts = LineFacts(
        seq, ledger_id, data["prev"], stored_hash, kid, kind, tuple(problems), key_event
    )
    return facts, pending


def _version_problem(data: dict[str, Any]) -> tuple[str, str]:
    if "v" not in data:
        return ("malformed", "missing field(s): v (the format version was removed)")
    version = data["v"]
    if type(version) is int and version > FORMAT_VERSION:
        return (
            "unsupported-version",
            f"record claims format version {version}, newer than this ledger's "
            f"v{FORMAT_VERSION}: upgrade ledger, or the version was edited",
        )
    return ("malformed", f"format version {version!r} is not a known version")


def _key_event(data: dict[str, Any], keys: Mapping[str, Ed25519PublicKey]) -> tuple[Any, ...]:
    body = data["body"]
    if data["kind"] == REVOKED_KIND:
        from_seq = body.get("from_seq")
        return ("revoked", body.get("key"), from_seq if type(from_seq) is int else 0)
    if data["kind"] == ADDED_KIND:
        return ("added", body.get("key"))
    old_key, new_key = body.get("old_key"), body.get("new_key")
    ok = False
    new_public = keys.get(new_key) if isinstance(new_key, str) else None
    if new_public is not None and old_key == data["key"] and isinstance(old_key, str):
        try:
            new_public.verify(
                _strict_b64decode(str(body.get("new_key_sig", ""))),
                rotation_statement(data["ledger"], data["seq"], data["prev"], old_key, new_key),
            )
            ok = True
        except (InvalidSignature, binascii.Error, ValueError):
            ok = False
    return ("rotated", old_key, new_key, ok)


class Record:
    """One record as read from disk: the raw line and its parsed fields.

    ``Record`` does not verify anything by itself; use :meth:`ledger.Ledger.verify`.
    """

    __slots__ = ("data", "line")

    def __init__(self, line: bytes, data: dict[str, Any]) -> None:
        self.line = line
        self.data = data

    @property
    def seq(self) -> int:
        """Position in the chain, from 0."""
        return int(self.data["seq"])

    @property
    def kind(self) -> str:
        """Record kind, e.g. ``hook.pre``."""
        return str(self.data["kind"])

    @property
    def hash(self) -> str:
        """Hex SHA-256 record hash."""
        return str(self.data["hash"])

    @property
    def prev(self) -> str:
        """Hash of the previous record."""
        return str(self.data["prev"])

    @property
    def ts(self) -> str:
        """UTC timestamp, RFC 3339 with microseconds."""
        return str(self.data["ts"])

    @property
    def key(self) -> str:
        """Signing key id."""
        return str(self.data["key"])

    @property
    def ledger_id(self) -> str:
        """Ledger id."""
        return str(self.data["ledger"])

    @property
    def actor(self) -> dict[str, str | None]:
        """Who acted: client, session, agent, model (null where unknown)."""
        return dict(self.data["actor"])

    @property
    def body(self) -> dict[str, Any]:
        """Kind-specific body."""
        return dict(self.data["body"])

    def __repr__(self) -> str:
        return f"Record(seq={self.seq}, kind={self.kind!r}, hash={self.hash[:12]}…)"
