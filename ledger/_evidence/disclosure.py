"""Commitments in the chain, disclosures beside it (record format v3).

A content-bearing value (a prompt, a command line, a file's content, a tool's answer, a reason
that quotes any of them) is never signed as it is. The signed, chained body holds a salted
commitment in its place, ``{"commitment": "<64 hex>"}``::

    SHA-256(COMMITMENT_DOMAIN || JCS({"field": <path in the body>, "salt": <32 hex>,
                                      "value": <the value>}))

and the value with its salt goes to the disclosure store beside the ledger
(``.orchestration/disclosures.jsonl``: plain JSON lines, mode 0600, never committed), as IETF
SD-JWT discloses ``[salt, name, value]``. The salt is 128 bits from ``os.urandom``: without it a
commitment reveals nothing and cannot be guessed, so deleting the salt and the value
(``ledger forget``) erases the content while every hash and signature still verifies.

Before anything is committed or written, every string of the body (committed or plain) passes
the secret detector (:mod:`ledger._evidence.secrets`): a secret becomes ``[secret:<rule>]`` in
the value that is committed and disclosed, so its plaintext reaches no file ledger writes.

A value too long to scan within a hook's budget is committed whole and withheld: its disclosure
is never written.

Everything here but :class:`DisclosureStore` is pure.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import struct
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any, BinaryIO, Final, Literal, NamedTuple

from ledger._evidence.canonical import COMMITMENT_DOMAIN, canonical_bytes, domain_bytes
from ledger._evidence.lightjson import dumps_sorted
from ledger._evidence.secrets import SCAN_LIMIT, find_secrets, redact

__all__ = [
    "COMMITMENT_KEY",
    "DEFAULT_DISCLOSE",
    "DISCLOSE_MODES",
    "DISCLOSURES_FILE",
    "FETCHED_DISCLOSURES_DIR",
    "FORGOTTEN",
    "FORGOTTEN_KIND",
    "WITHHELD",
    "Content",
    "DiscloseMode",
    "Disclosure",
    "DisclosureIndex",
    "DisclosureReport",
    "DisclosureStore",
    "ForgetSelector",
    "Revealer",
    "Sifted",
    "age_cutoff",
    "bounded_lines",
    "chain_commitments",
    "check_disclosures",
    "commitment_digest",
    "commitments_in",
    "disclosed_field",
    "disclosed_fields",
    "disclosure_line",
    "disclosure_lines",
    "fetched_stores",
    "field_disclosed",
    "forget_lines",
    "is_commitment",
    "opened",
    "opens_fast",
    "published_disclosures",
    "retention_selectors",
    "reveal",
    "seal_body",
    "sift_fetched",
    "verbatim_records",
]

COMMITMENT_KEY: Final = "commitment"
DISCLOSURES_FILE: Final = "disclosures.jsonl"
WITHHELD: Final = "[withheld]"
FORGOTTEN: Final = "[forgotten]"
_TOO_LARGE: Final = "[withheld: too large to scan]"
_HEX64: Final = re.compile("[0-9a-f]{64}")
#: A commitment as canonical JSON writes it: counted in a record's bytes without parsing them.
COMMITMENT_BYTES: Final = re.compile(rb'\{"commitment":"([0-9a-f]{64})"\}')


class Content:
    """Marks a value of a body as content: :func:`seal_body` commits it."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:  # noqa: ANN401 -- any JSON value
        self.value = value


class Disclosure(NamedTuple):
    """What opens one commitment: its field, salt and (secret-free) value."""

    commitment: str
    field: str
    salt: str
    value: Any


def commitment_digest(field: str, salt: str, value: Any) -> str:  # noqa: ANN401
    """The commitment to ``value`` at ``field`` under ``salt`` (hex SHA-256)."""
    payload = {"field": field, "salt": salt, "value": value}
    return hashlib.sha256(domain_bytes(COMMITMENT_DOMAIN, payload)).hexdigest()


def is_commitment(value: object) -> bool:
    """``{"commitment": "<64 hex>"}``, as a v3 body holds committed content."""
    if type(value) is not dict or len(value) != 1:
        return False
    digest = value.get(COMMITMENT_KEY)
    return isinstance(digest, str) and _HEX64.fullmatch(digest) is not None


def _unwrap(value: object) -> object:
    if isinstance(value, Content):
        return value.value
    raise TypeError(f"{type(value).__name__} is not JSON")


def _redact_all(value: Any) -> Any:  # noqa: ANN401 -- any JSON value
    if isinstance(value, str):
        if len(value) > SCAN_LIMIT:
            return _TOO_LARGE
        return redact(value)[0]
    if isinstance(value, dict):
        return {_redact_all(str(k)): _redact_all(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_all(v) for v in value]
    if isinstance(value, Content):
        return Content(_redact_all(value.value))
    return value


def seal_body(body: dict[str, Any]) -> tuple[dict[str, Any], list[Disclosure]]:
    """``body`` as it is signed: secrets redacted everywhere, each :class:`Content` committed.

    Returns:
        The body to sign (plain JSON) and the disclosures of its commitments.
    """
    text = json.dumps(body, default=_unwrap, ensure_ascii=False)
    if find_secrets(text.encode("utf-8", "surrogatepass")) or len(text) > SCAN_LIMIT:
        body = _redact_all(body)
    disclosures: list[Disclosure] = []
    sealed = _commit(body, "", disclosures)
    return sealed, disclosures


def _commit(value: Any, path: str, out: list[Disclosure]) -> Any:  # noqa: ANN401
    if isinstance(value, Content):
        salt = os.urandom(16).hex()
        digest = commitment_digest(path, salt, value.value)
        if value.value != _TOO_LARGE:
            out.append(Disclosure(digest, path, salt, value.value))
        return {COMMITMENT_KEY: digest}
    if isinstance(value, dict):
        return {k: _commit(v, f"{path}.{k}" if path else k, out) for k, v in value.items()}
    if isinstance(value, list):
        return [_commit(v, f"{path}[{i}]", out) for i, v in enumerate(value)]
    return value


def commitments_in(value: Any, path: str = "") -> Iterator[tuple[str, str]]:  # noqa: ANN401
    """``(field, commitment)`` for every commitment in a (v3) body, in document order."""
    if is_commitment(value):
        yield path, value[COMMITMENT_KEY]
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from commitments_in(v, f"{path}.{k}" if path else k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from commitments_in(v, f"{path}[{i}]")


def opened(entry: Mapping[str, Any], field: str, commitment: str) -> bool:
    """The disclosure ``entry`` opens ``commitment`` at ``field``."""
    salt = entry.get("salt")
    if not isinstance(salt, str) or "value" not in entry:
        return False
    payload = {"field": field, "salt": salt, "value": entry["value"]}
    try:
        # Sorted compact JSON is the canonical encoding for all but rare keys (>= U+E000) and
        # values no commitment holds (floats): a mismatch takes the canonical encoder's word.
        quick = hashlib.sha256(COMMITMENT_DOMAIN + dumps_sorted(payload)).hexdigest()
        if quick == commitment:
            return True
        return commitment_digest(field, salt, entry["value"]) == commitment
    except Exception:  # noqa: BLE001 -- a doctored value (a float, a huge int) opens nothing
        return False


def reveal(
    value: Any,  # noqa: ANN401 -- any JSON value
    disclosures: Mapping[str, Mapping[str, Any]],
    forgotten: AbstractSet[str] = frozenset(),
    path: str = "",
) -> Any:  # noqa: ANN401
    """``value`` with each commitment replaced by its disclosed value where the disclosure
    opens it, else by ``[forgotten]`` or ``[withheld]``."""
    if is_commitment(value):
        digest = value[COMMITMENT_KEY]
        entry = disclosures.get(digest)
        if entry is not None and opened(entry, path, digest):
            return entry["value"]
        return FORGOTTEN if digest in forgotten else WITHHELD
    if isinstance(value, dict):
        return {
            k: reveal(v, disclosures, forgotten, f"{path}.{k}" if path else k)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [reveal(v, disclosures, forgotten, f"{path}[{i}]") for i, v in enumerate(value)]
    return value


FORGOTTEN_KIND: Final = "ledger.forgotten"
_FORGOTTEN_KIND_BYTES: Final = b'"kind":"ledger.forgotten"'
_COMMITMENT_PREFIX: Final = b'{"commitment":"'


_HOOK_KIND_BYTES: Final = b'"kind":"hook.'
_CURRENT_VERSION_END: Final = b',"v":3}'


def verbatim_records(lines: Iterable[bytes]) -> int:
    """How many hook records were written before commitments (format v1, v2): their prompts,
    command lines and file contents are in the chain verbatim. Read from the bytes (``v`` is
    the last member of a canonical record), no record parsed."""
    return sum(
        1
        for line in lines
        if _HOOK_KIND_BYTES in line and not line.rstrip().endswith(_CURRENT_VERSION_END)
    )


class DisclosureReport(NamedTuple):
    """What the disclosure store says about the chain's commitments (``ledger verify``)."""

    committed: int
    """Commitments the chain holds."""
    disclosed: int
    """Of those, opened by a disclosure present in the store."""
    forgotten: int
    """Of the rest, erased by ``ledger forget`` (a signed ``ledger.forgotten`` record)."""
    bad: list[tuple[int, str, str]]
    """``(seq, field, message)`` of each disclosure that does not open its commitment."""
    orphans: int
    """Disclosures of a commitment no record holds (ignored; ``ledger doctor`` warns)."""

    @property
    def withheld(self) -> int:
        """Commitments with no disclosure that opens them."""
        return self.committed - self.disclosed


_DOES_NOT_OPEN: Final = "the disclosure does not open its commitment (value or salt changed)"


def chain_commitments(lines: Iterable[bytes]) -> tuple[dict[str, int], set[str]]:
    """``(commitment -> seq of the record holding it, commitments a ledger.forgotten record
    names)`` of a ledger's lines, found in the canonical bytes (only the forget records are
    parsed)."""
    in_chain: dict[str, int] = {}
    forgotten: set[str] = set()
    for seq, line in enumerate(lines):
        if _COMMITMENT_PREFIX in line:
            for digest in COMMITMENT_BYTES.findall(line):
                in_chain[digest.decode()] = seq
        if _FORGOTTEN_KIND_BYTES in line:
            with contextlib.suppress(ValueError, AttributeError, TypeError):
                forgotten.update(str(d) for d in json.loads(line)["body"]["commitments"])
    return in_chain, forgotten


def check_disclosures(lines: Iterable[bytes], store: Iterable[bytes]) -> DisclosureReport:
    """Fold the ledger's lines and the store's raw lines into a :class:`DisclosureReport`.

    Pure: the caller reads the files. Commitments are found in the canonical bytes (the pattern
    ``{"commitment":"<hex>"}`` cannot occur inside a JSON string, whose quotes are escaped), and
    a store line as ledger writes it is checked by hashing a slice of it (:func:`opens_fast`):
    no record is parsed but the ``ledger.forgotten`` ones, no store line but a tombstone or one
    that does not open.
    """
    in_chain, forgotten = chain_commitments(lines)
    disclosed: set[str] = set()
    bad: list[tuple[int, str, str]] = []
    orphans = 0
    for raw in store:
        fast = opens_fast(raw)
        if fast:
            digest = raw[15:79].decode()
            if digest in in_chain:
                disclosed.add(digest)
            else:
                orphans += 1
            continue
        entry = _parse_line(raw)
        if entry is None:
            continue
        digest = str(entry[COMMITMENT_KEY])
        if "forgotten" in entry:
            forgotten.add(digest)
            continue
        holder = in_chain.get(digest)
        field = str(entry.get("field"))
        if holder is None:
            orphans += 1
        elif opened(entry, field, digest):
            disclosed.add(digest)
        else:
            bad.append(
                (
                    holder,
                    field,
                    "the disclosure does not open its commitment (value or salt changed)",
                )
            )
    return DisclosureReport(
        committed=len(in_chain),
        disclosed=len(disclosed),
        forgotten=len((forgotten & in_chain.keys()) - disclosed),
        bad=bad,
        orphans=orphans,
    )


class ForgetSelector(NamedTuple):
    """Which disclosures ``ledger forget`` erases: any line one of the criteria picks."""

    seqs: frozenset[int] = frozenset()
    fields: frozenset[tuple[int, str]] = frozenset()
    sessions: frozenset[str] = frozenset()
    match: str | None = None
    older_than: str | None = None
    """An RFC 3339 UTC timestamp: disclosures of records made before it."""
    field_prefixes: tuple[str, ...] = ()
    """With ``older_than`` only (a retention rule): fields starting with one of these."""
    excluded: tuple[str, ...] = ()
    """With ``older_than``: fields starting with one of these are left to their own rule."""
    retention: bool = False
    """Picked by the retention policy of ``hooks.yaml`` rather than a person's command."""

    @property
    def how(self) -> list[str]:
        """The criteria used, by name (recorded: never the text matched)."""
        if self.retention:
            return ["retention"]
        named = {
            "seq": bool(self.seqs),
            "field": bool(self.fields),
            "session": bool(self.sessions),
            "match": self.match is not None,
            "older-than": self.older_than is not None,
        }
        return [name for name, used in named.items() if used]

    def picks(self, entry: Mapping[str, Any]) -> bool:
        """``entry`` (a disclosure line) is one to erase."""
        seq = entry.get("seq")
        if seq in self.seqs or (seq, entry.get("field")) in self.fields:
            return True
        if self.sessions and entry.get("session") in self.sessions:
            return True
        if self.match is not None and self.match in _searchable(entry.get("value")):
            return True
        if self.older_than is not None and str(entry.get("ts", "")) < self.older_than:
            field = str(entry.get("field", ""))
            if self.excluded and field.startswith(self.excluded):
                return False
            return not self.field_prefixes or field.startswith(self.field_prefixes)
        return False


_AGE: Final = re.compile(r"(\d{1,6})([dhm])")
_AGE_UNITS: Final = {"d": 86400, "h": 3600, "m": 60}


def age_cutoff(text: str, now: float) -> str | None:
    """``90d`` / ``12h`` / ``30m`` → the RFC 3339 UTC time that long before ``now`` (epoch
    seconds); ``None`` when ``text`` is not an age."""
    import time  # noqa: PLC0415

    found = _AGE.fullmatch(text.strip())
    if found is None:
        return None
    then = now - int(found.group(1)) * _AGE_UNITS[found.group(2)]
    micros = round((then % 1) * 1_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(then)) + f".{micros:06d}Z"


def retention_selectors(rules: Mapping[str, str], now: float) -> list[ForgetSelector]:
    """The selectors of a retention policy, ``{field prefix or "default": age}``: each field
    goes after the age of the longest prefix that names it, else ``default``."""
    named = sorted((k for k in rules if k != "default"), key=len, reverse=True)
    selectors = []
    for prefix in named:
        cutoff = age_cutoff(rules[prefix], now)
        if cutoff is not None:
            selectors.append(
                ForgetSelector(older_than=cutoff, field_prefixes=(prefix,), retention=True)
            )
    if "default" in rules:
        cutoff = age_cutoff(rules["default"], now)
        if cutoff is not None:
            selectors.append(
                ForgetSelector(older_than=cutoff, excluded=tuple(named), retention=True)
            )
    return selectors


def _searchable(value: Any) -> str:  # noqa: ANN401
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def forget_lines(
    lines: Iterable[dict[str, Any]], selector: ForgetSelector, now: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Split the store's lines: ``(the store to keep, the disclosures erased)``. Each erased
    disclosure leaves a tombstone, ``{"commitment", "field", "seq", "forgotten": now}``: no
    salt, no value."""
    kept: list[dict[str, Any]] = []
    erased: list[dict[str, Any]] = []
    for line in lines:
        if "forgotten" not in line and selector.picks(line):
            erased.append(line)
            kept.append(
                {
                    COMMITMENT_KEY: line[COMMITMENT_KEY],
                    "field": line.get("field"),
                    "seq": line.get("seq"),
                    "forgotten": now,
                }
            )
        else:
            kept.append(line)
    return kept, erased


def _loads(raw: bytes) -> Any:  # noqa: ANN401 -- any JSON value
    """orjson where a reader already loaded it (verify), else the standard library."""
    loaded = sys.modules.get("orjson")
    return loaded.loads(raw) if loaded is not None else json.loads(raw)


def disclosure_line(record: Any, disclosure: Disclosure) -> bytes:  # noqa: ANN401
    """The store's line for ``disclosure`` of ``record`` (a :class:`~ledger.Record`): where it
    belongs (seq, session, ts) and, last, ``"disclosed"``: the canonical bytes of ``{field,
    salt, value}`` that the commitment is the digest of, so verify checks a line by hashing a
    slice of it, without parsing it."""
    session = (record.data.get("actor") or {}).get("session")
    payload = canonical_bytes(
        {"field": disclosure.field, "salt": disclosure.salt, "value": disclosure.value}
    )
    return b"".join(
        (
            b'{"commitment":"',
            disclosure.commitment.encode(),
            b'","seq":',
            str(record.seq).encode(),
            b',"session":',
            json.dumps(session, ensure_ascii=False).encode("utf-8", "surrogatepass"),
            b',"ts":"',
            record.ts.encode(),
            _DISCLOSED,
            payload,
            b"}",
        )
    )


def disclosure_lines(records: list[Any], found: list[list[Disclosure]]) -> list[bytes]:
    """The store's lines for the disclosures ``found`` for each of ``records``."""
    return [
        disclosure_line(record, d) for record, ds in zip(records, found, strict=True) for d in ds
    ]


_DISCLOSED: Final = b'","disclosed":'
_LINE_PREFIX: Final = b'{"commitment":"'


def opens_fast(raw: bytes) -> bool | None:
    """A store line as ledger writes it opens the commitment it names (``True``/``False``);
    ``None``: not in that form (a tombstone, a line a person rewrote): parse it instead."""
    if not raw.startswith(_LINE_PREFIX) or len(raw) < 80:
        return None
    at = raw.find(_DISCLOSED, 79)
    body = raw.rstrip(b"\r\n")
    if at < 0 or not body.endswith(b"}"):
        return None
    payload = body[at + len(_DISCLOSED) : -1]
    return hashlib.sha256(COMMITMENT_DOMAIN + payload).hexdigest().encode() == raw[15:79]


def _flat(line: dict[str, Any]) -> dict[str, Any]:
    """A parsed store line with its ``disclosed`` payload's members at the top."""
    disclosed = line.pop("disclosed", None)
    if isinstance(disclosed, dict):
        for key in ("field", "salt", "value"):
            if key in disclosed:
                line[key] = disclosed[key]
    return line


class Revealer:
    """Records as a person reads them: each commitment replaced by its disclosed value where a
    disclosure present opens it, else ``[forgotten]`` or ``[withheld]``.

    A record (``record``, or ``field`` given its ``seq``) is looked up through the store's
    offset map (:class:`DisclosureIndex`): its own lines, a few reads whatever the store's size.
    The map only says where to look: what is shown must open the commitment the record itself
    holds, and any commitment the record's lines do not settle (the map stale or wrong, a line
    moved by hand, a teammate's record) sends the reader to the whole store, read once, and to
    the teammates' disclosures, as before. After ``_LOOKUPS`` records (``ledger log`` of a long
    span) reading the store once is cheaper."""

    __slots__ = ("_fetched", "_index", "_loaded", "_lookups", "_scans", "_settled", "_store")

    _LOOKUPS: Final = 64
    _SCANS: Final = 2
    """Commitments the record's lines do not settle (a field withheld, as a teammate's often
    are) are looked up by scanning the store's bytes for them, at most this many times; then
    the store is read once, whole."""

    def __init__(
        self, store: DisclosureStore, fetched: Callable[[], Iterable[DisclosureStore]] | None = None
    ) -> None:
        self._store = store
        self._fetched = fetched
        self._loaded: tuple[dict[str, dict[str, Any]], set[str]] | None = None
        self._index: DisclosureIndex | None = None
        self._lookups = 0
        self._scans = 0
        self._settled: tuple[dict[str, dict[str, Any]], set[str], set[str]] | None = None

    @classmethod
    def beside(cls, ledger_path: Path) -> Revealer:
        """The revealer of the ledger at ``ledger_path``, and of the teammates' disclosures
        ``ledger fetch`` kept in its repository (read only for a commitment not disclosed
        here)."""
        root = ledger_path.parent.parent
        return cls(DisclosureStore.beside(ledger_path), lambda: fetched_stores(root))

    def _tables(self, value: Any) -> tuple[dict[str, dict[str, Any]], set[str]]:  # noqa: ANN401
        if self._loaded is None:
            self._loaded = self._store.load()
        disclosed, forgotten = self._loaded
        if self._fetched is not None and any(d not in disclosed for _, d in commitments_in(value)):
            stores, self._fetched = self._fetched(), None
            for store in stores:
                more, gone = store.load()
                for digest, entry in more.items():
                    disclosed.setdefault(digest, entry)
                forgotten |= gone
        return disclosed, forgotten

    def _entries(
        self,
        value: Any,  # noqa: ANN401 -- any JSON value
        seq: object,
        path: str = "",
    ) -> tuple[Mapping[str, Mapping[str, Any]], AbstractSet[str]]:
        """The disclosures and forgotten commitments that settle every commitment of
        ``value`` (found at ``path`` of record ``seq``): the record's own lines when they do,
        else the store's lines of these commitments (the teammates' stores too, when this one
        does not disclose them all), else the whole store."""
        if self._settled is not None and self._loaded is None:
            disclosed, forgotten, digests = self._settled
            wanted = list(commitments_in(value, path))
            if all(d in digests for _, d in wanted) and (
                self._fetched is None or all(d in disclosed for _, d in wanted)
            ):
                return disclosed, forgotten
        if self._loaded is None and self._lookups < self._LOOKUPS:
            self._lookups += 1
            wanted = list(commitments_in(value, path))
            if isinstance(seq, int):
                if self._index is None:
                    self._index = DisclosureIndex(self._store)
                found = self._index.lines_of(seq)
                if found is not None:
                    disclosed, forgotten = _fold(found)
                    if all(
                        digest in forgotten
                        or (digest in disclosed and opened(disclosed[digest], field, digest))
                        for field, digest in wanted
                    ):
                        return disclosed, forgotten
            if self._scans < self._SCANS:
                self._scans += 1
                disclosed, forgotten = _fold(self._store.lines_of({d for _, d in wanted}))
                if self._fetched is None or all(d in disclosed for _, d in wanted):
                    return disclosed, forgotten
        return self._tables(value)

    def prepare(self, bodies: Iterable[Any]) -> None:
        """Look up the commitments of ``bodies`` (the records about to be shown) in one scan
        of the store's bytes, so showing them reads it no more: for records whose own lines
        seldom settle them (a teammate's, most fields withheld)."""
        digests = {d for body in bodies for _, d in commitments_in(body)}
        if digests and self._loaded is None:
            disclosed, forgotten = _fold(self._store.lines_of(digests))
            self._settled = (disclosed, forgotten, digests)

    def body(self, body: Any, seq: int | None = None) -> Any:  # noqa: ANN401 -- any JSON value
        """``body`` (of record ``seq``, if known) with its commitments revealed (a body
        without any comes back as it is)."""
        if not _holds_commitment(body):
            return body
        return reveal(body, *self._entries(body, seq))

    def field(self, value: Any, field: str, seq: int | None = None) -> Any:  # noqa: ANN401
        """``value``, found at ``field`` of a body (of record ``seq``, if known), revealed."""
        if not _holds_commitment(value):
            return value
        return reveal(value, *self._entries(value, seq, field), field)

    def record(self, data: Mapping[str, Any]) -> Mapping[str, Any]:
        """``data`` (a record dict) with its body revealed."""
        body = data.get("body")
        seq = data.get("seq")
        revealed = self.body(body, seq if isinstance(seq, int) else None)
        return data if revealed is body else {**data, "body": revealed}


def _fold(lines: Iterable[dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], set[str]]:
    """``(disclosures by commitment, forgotten commitments)`` of store lines, in file order (a
    tombstone takes its commitment's disclosure away)."""
    disclosed: dict[str, dict[str, Any]] = {}
    forgotten: set[str] = set()
    for line in lines:
        digest = line[COMMITMENT_KEY]
        if "forgotten" in line:
            forgotten.add(digest)
            disclosed.pop(digest, None)
        elif digest not in forgotten:
            disclosed[digest] = line
    return disclosed, forgotten


_SEQ_BYTES: Final = re.compile(rb'"seq":(\d{1,15})[,}]')
_INDEX_MAGIC: Final = b"ledger.disclosure-index.v1\n"
_INDEX_HEAD: Final = struct.Struct("<QQQQ")  # store inode, indexed size, mtime_ns, entries
_INDEX_START: Final = len(_INDEX_MAGIC) + _INDEX_HEAD.size
_INDEX_TAIL: Final = 4 * 1024 * 1024
"""Lines appended since the map was built are scanned; past this many bytes it is rebuilt."""


def _line_seq(raw: bytes) -> int | None:
    """The seq of a store line. In the lines ledger writes (a disclosure, a tombstone) the first
    ``"seq":N`` is the line's own: it precedes the value, and only strings come before it,
    whose quotes are escaped. A map made from a line a person rewrote may be wrong; readers
    check what they are pointed to."""
    if raw.startswith(_LINE_PREFIX):
        found = _SEQ_BYTES.search(raw, 79)
        if found is not None:
            return int(found.group(1))
    line = _parse_line(raw)
    seq = None if line is None else line.get("seq")
    return seq if type(seq) is int else None


class DisclosureIndex:
    """An offset map of the disclosure store, kept in the cache (``.cache/disclosures.idx``):
    for each seq, where the store's lines of that record begin. The store is appended record
    by record under the ledger's lock, so each record's lines are contiguous and in seq order.

    The map is derived data, never trusted over the store's bytes: it is rebuilt when the
    store was replaced (``ledger forget`` rewrites it) or changed in place, lines appended
    since it was built are scanned, and a reader checks every line it is pointed to (its seq,
    and that it opens the record's own commitment). A store out of seq order gets no map."""

    __slots__ = ("_count", "_offsets", "_path", "_store")

    def __init__(self, store: DisclosureStore) -> None:
        self._store = store
        self._path = store.path.parent / ".cache" / f"{store.path.name}.idx"
        self._offsets: list[int] | None = None  # a map built by this reader
        self._count: int | None = None

    def lines_of(self, seq: int) -> list[dict[str, Any]] | None:
        """The store's lines of record ``seq`` (parsed, flat), or None: no map could be made
        (no store, lines out of order): read the whole store."""
        try:
            with self._store.path.open("rb") as handle:
                info = os.fstat(handle.fileno())
                span = self._span(handle.fileno(), info, seq)
                if span is None:
                    return None
                start, end = span[0], min(span[1], info.st_size)
                if start > end:
                    return None  # a map that is not this store's: read the whole store
                data = os.pread(handle.fileno(), end - start, start) if end > start else b""
        except OSError:
            return None
        lines = []
        for raw in data.splitlines():
            if _line_seq(raw) == seq:
                line = _parse_line(raw)
                if line is not None:
                    lines.append(line)
        return lines

    def _span(self, fd: int, info: os.stat_result, seq: int) -> tuple[int, int] | None:
        """Where record ``seq``'s lines are: two entries of the map (read alone, 16 bytes),
        or, past the map, the lines appended since it was built."""
        del fd
        count = self._open(info)
        if count is None:
            return None
        try:
            if seq + 1 < count:
                start, end = self._entries(seq, 2)
                return start, end
            (start,) = self._entries(count - 1, 1)
        except (OSError, struct.error):
            return None
        return start, info.st_size

    def _entries(self, first: int, n: int) -> tuple[int, ...]:
        if self._offsets is not None:
            return tuple(self._offsets[first : first + n])
        with self._path.open("rb") as handle:
            data = os.pread(handle.fileno(), 8 * n, _INDEX_START + 8 * first)
        return struct.unpack(f"<{n}Q", data)

    def _open(self, info: os.stat_result) -> int | None:
        """How many entries the map has: the stored one if it describes this store (the same
        file, a prefix of what it holds now, the tail small enough), else one built now."""
        if self._count is None:
            self._count = self._stored(info)
            if self._count is None:
                self._offsets = self._build(info)
                self._count = 0 if self._offsets is None else len(self._offsets)  # 0: no map
        return self._count or None

    def _stored(self, info: os.stat_result) -> int | None:
        try:
            with self._path.open("rb") as handle:
                head = handle.read(_INDEX_START)
                size_of_map = os.fstat(handle.fileno()).st_size
            if not head.startswith(_INDEX_MAGIC):
                return None
            ino, size, mtime, count = _INDEX_HEAD.unpack_from(head, len(_INDEX_MAGIC))
        except (OSError, struct.error):
            return None
        if count == 0 or size_of_map != _INDEX_START + 8 * count:
            return None
        if ino != info.st_ino or size > info.st_size or info.st_size - size > _INDEX_TAIL:
            return None
        if size == info.st_size and mtime != info.st_mtime_ns:
            return None  # changed in place, same length: a person edited it
        return int(count)

    def _build(self, info: os.stat_result) -> list[int] | None:
        """Scan the store once and save the map (best effort: a cache that cannot be written
        only costs the next reader a scan)."""
        import array  # noqa: PLC0415

        offsets: list[int] = []
        at = 0
        last = -1
        with self._store.path.open("rb") as handle:
            for raw in handle:
                if not raw.endswith(b"\n"):
                    break  # an append in progress: map whole lines only
                seq = _line_seq(raw)
                if seq is not None:
                    if seq < last:
                        return None
                    while len(offsets) <= seq:
                        offsets.append(at)
                    last = seq
                at += len(raw)
        offsets.append(at)  # where the lines past the last mapped seq begin
        packed = array.array("Q", offsets).tobytes()
        head = _INDEX_HEAD.pack(info.st_ino, at, info.st_mtime_ns, len(offsets))
        with contextlib.suppress(OSError):
            self._path.parent.mkdir(mode=0o700, exist_ok=True)
            tmp = self._path.with_name(f".{self._path.name}.{os.getpid()}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(_INDEX_MAGIC + head + packed)
            tmp.replace(self._path)
        return offsets


def _holds_commitment(value: Any) -> bool:  # noqa: ANN401
    if isinstance(value, dict):
        return is_commitment(value) or any(_holds_commitment(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_commitment(v) for v in value)
    return False


class DisclosureStore:
    """``disclosures.jsonl`` beside the ledger: one JSON object per line, mode 0600.

    A disclosure line: ``{"commitment", "seq", "session", "ts", "disclosed": {"field", "salt",
    "value"}}`` (``jq -r .disclosed.value``); a forgotten commitment leaves ``{"commitment",
    "field", "seq", "forgotten": ts}`` (no salt, no value), so
    readers can say ``[forgotten]`` rather than ``[withheld]``. Writers hold the ledger's append
    lock (appends and ``ledger forget`` never interleave).
    """

    __slots__ = ("path",)

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def beside(cls, ledger_path: Path) -> DisclosureStore:
        """The store of the ledger at ``ledger_path``."""
        return cls(ledger_path.with_name(DISCLOSURES_FILE))

    def append(self, lines: list[bytes]) -> None:
        """Append ``lines`` in one write (the caller holds the ledger's lock)."""
        if not lines:
            return
        data = b"\n".join(lines) + b"\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            if os.fstat(fd).st_mode & 0o077:
                os.fchmod(fd, 0o600)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)

    def raw_lines(self) -> Iterator[bytes]:
        """Every line's bytes (none when the store does not exist)."""
        try:
            handle = self.path.open("rb")
        except OSError:
            return
        with handle:
            yield from handle

    def lines(self) -> Iterator[dict[str, Any]]:
        """Every well-formed line, flat (``commitment, seq, session, ts, field, salt, value``;
        a tombstone has ``forgotten`` and no salt or value) and with its bytes as ``_raw``.
        Malformed lines are skipped: they open nothing."""
        for raw in self.raw_lines():
            line = _parse_line(raw)
            if line is not None:
                yield line

    def lines_of(self, digests: AbstractSet[str]) -> Iterator[dict[str, Any]]:
        """The lines :meth:`lines` gives of these commitments (and any it cannot tell apart
        without parsing), in file order: a line as ledger writes it names its one commitment
        in its first bytes, and is parsed only when that is one of ``digests``."""
        wanted = {d.encode() for d in digests}
        for raw in self.raw_lines():
            if (
                raw.startswith(_LINE_PREFIX)
                and raw[15:79] not in wanted
                and raw.count(b'"commitment"') == 1
                and b"\\u" not in raw  # an escaped key could name another commitment
            ):
                continue
            line = _parse_line(raw)
            if line is not None:
                yield line

    def load(self) -> tuple[dict[str, dict[str, Any]], set[str]]:
        """``(disclosures by commitment, forgotten commitments)``."""
        return _fold(self.lines())

    def exists(self) -> bool:
        """The store file is there."""
        return self.path.exists()

    def rewrite(self, lines: Iterable[dict[str, Any]]) -> None:
        """Replace the store with ``lines`` (atomically; the caller holds the ledger's lock):
        a line read from the store keeps its bytes, a new one (a tombstone) is encoded."""
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                for line in lines:
                    raw = line.get("_raw")
                    if not isinstance(raw, bytes):
                        raw = json.dumps(
                            line, ensure_ascii=False, separators=(",", ":"), sort_keys=True
                        ).encode("utf-8", "surrogatepass")
                    handle.write(raw.rstrip(b"\r\n") + b"\n")
                handle.flush()
                os.fsync(handle.fileno())
            tmp.replace(self.path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


def _parse_line(raw: bytes) -> dict[str, Any] | None:
    try:
        line = _loads(raw)
    except ValueError:
        return None
    if not isinstance(line, dict) or not isinstance(line.get(COMMITMENT_KEY), str):
        return None
    flat = _flat(line)
    flat["_raw"] = raw
    return flat


# --- sharing: what `ledger push --disclose` publishes, what `ledger fetch` keeps ---------------

#: The fields ``ledger push`` publishes under ``--disclose policy`` when ``hooks.yaml`` names
#: none (``disclose:``): a shell call's command line (blame names it in a teammate's clone)
#: and the reasons and error messages of decisions. Never a prompt, a file's content (a Write's
#: ``tool_input.content``, an edit), a tool's answer or any other argument.
DEFAULT_DISCLOSE: Final = (
    "tool_input.command",
    "attribution.command",
    "reason",
    "hooks[].reason",
    "error.message",
    "hooks[].error.message",
)
#: Teammates' disclosures that ``ledger fetch`` verified, in the git directory beside the
#: fetched evidence refs (never in the work tree, so never committed):
#: ``<git dir>/ledger-disclosures/<remote>/<ledger id>.jsonl``, 0600.
FETCHED_DISCLOSURES_DIR: Final = "ledger-disclosures"
#: The longest store line a fetch reads (a 1 MiB edit escaped as JSON, with room): a longer
#: one is skipped unread, so a huge published blob costs its size on disk, not in memory.
MAX_SHARED_LINE: Final = 16 * 1024 * 1024
_INDEX: Final = re.compile(r"\[\d+\]")


def disclosed_field(raw: bytes) -> str | None:
    """The field a store line discloses (``None``: a tombstone, or not a disclosure)."""
    entry = _parse_line(raw)
    if entry is None or "forgotten" in entry:
        return None
    return str(entry.get("field"))


def field_disclosed(field: str, patterns: Iterable[str]) -> bool:
    """``field`` (``hooks[2].reason``) is one ``patterns`` names: a pattern names a field and
    everything below it, ``[]`` standing for any index (``hooks[].reason``, ``tool_input``)."""
    shape = _INDEX.sub("[]", field)
    return any(shape == p or shape.startswith((f"{p}.", f"{p}[")) for p in patterns)


DiscloseMode = Literal["none", "policy", "all"]
DISCLOSE_MODES: Final[tuple[DiscloseMode, ...]] = ("none", "policy", "all")


def disclosed_fields(mode: DiscloseMode, policy: Iterable[str]) -> tuple[str, ...] | None:
    """The fields ``--disclose mode`` lets evidence that leaves the machine carry (``ledger
    push`` and ``ledger export`` alike): ``None`` every field (``all``), ``()`` none (``none``),
    else the fields ``policy`` (``hooks.yaml``'s ``disclose:``) names."""
    if mode == "all":
        return None
    if mode == "policy":
        return tuple(policy)
    return ()


def published_disclosures(
    store: DisclosureStore,
    fields: Iterable[str] | None,
    out: BinaryIO,
    *,
    only: AbstractSet[str] | None = None,
    tombstones: bool = False,
) -> int:
    """Write to ``out`` the store's lines that leave the machine: each disclosure that opens
    its commitment, of a field ``fields`` names (``None``: every field; see
    :func:`disclosed_fields`), as stored; with ``only``, just those of these commitments.
    Erased values and lines that do not open are never written; a tombstone only with
    ``tombstones`` (an export carries them so a reader says ``[forgotten]``; it reveals no more
    than the chain's signed ``ledger.forgotten`` record). Returns how many lines."""
    patterns = None if fields is None else tuple(fields)
    if patterns == ():
        return 0
    _, forgotten = store.load() if store.exists() else ({}, set())
    count = 0
    for line in store.lines():
        digest = line[COMMITMENT_KEY]
        if only is not None and digest not in only:
            continue
        if "forgotten" in line or digest in forgotten:
            if tombstones and "forgotten" in line:
                out.write(line["_raw"].rstrip(b"\r\n") + b"\n")
                count += 1
            continue
        field = str(line.get("field"))
        if patterns is not None and not field_disclosed(field, patterns):
            continue
        if opens_fast(line["_raw"]) or opened(line, field, digest):
            out.write(line["_raw"].rstrip(b"\r\n") + b"\n")
            count += 1
    return count


def bounded_lines(handle: BinaryIO, limit: int = MAX_SHARED_LINE) -> Iterator[bytes | None]:
    """The lines of ``handle``, each read whole only when it is at most ``limit`` bytes (its
    newline aside); a longer one yields ``None``, read past in 1 MiB pieces (a buffered
    ``readline(limit)`` would hold three times ``limit`` at its peak)."""
    chunk = min(limit + 1, 1 << 20)
    while part := handle.readline(chunk):
        line: bytearray | None = bytearray(part)
        if len(part) - part.endswith(b"\n") > limit:
            line = None
        while not part.endswith(b"\n") and (part := handle.readline(chunk)):
            if line is not None:
                line += part
                if len(line) - line.endswith(b"\n") > limit:
                    line = None
        yield None if line is None else bytes(line)


class Sifted(NamedTuple):
    """What ``ledger fetch`` kept of a teammate's published disclosures."""

    kept: int
    """Disclosures that open a commitment of the verified chain, not forgotten."""
    bad: list[tuple[int, str]]
    """``(seq, field)`` of each that does not open its commitment (doctored): dropped."""
    forgotten: int
    """Published, but a ledger.forgotten record of the chain erases them: dropped."""
    unreadable: int
    """Lines that are not a disclosure, over the size bound, or of no commitment the chain
    holds: dropped."""


def sift_fetched(
    lines: Iterable[bytes | None],
    in_chain: Mapping[str, int],
    forgotten: AbstractSet[str],
    out: BinaryIO,
) -> Sifted:
    """Keep (write to ``out``) the published lines that open a commitment of the verified
    chain ``in_chain`` and are not ``forgotten``; then a tombstone per forgotten commitment of
    the chain, so readers say ``[forgotten]``. Nothing that does not open is ever kept."""
    kept = forgot = unreadable = 0
    bad: list[tuple[int, str]] = []
    seen: set[str] = set()
    for raw in lines:
        entry = None if raw is None else _parse_line(raw)
        if raw is None or entry is None or "forgotten" in entry:
            unreadable += 1
            continue
        digest = str(entry[COMMITMENT_KEY])
        field = str(entry.get("field"))
        if digest not in in_chain:
            unreadable += 1
        elif not (opens_fast(raw) or opened(entry, field, digest)):
            bad.append((in_chain[digest], field))
        elif digest in forgotten:
            forgot += 1
        elif digest not in seen:
            seen.add(digest)
            out.write(raw.rstrip(b"\r\n") + b"\n")
            kept += 1
    for digest in sorted(forgotten & in_chain.keys()):
        tombstone = {COMMITMENT_KEY: digest, "forgotten": True, "seq": in_chain[digest]}
        out.write(json.dumps(tombstone, sort_keys=True, separators=(",", ":")).encode() + b"\n")
    return Sifted(kept, bad, forgot, unreadable)


def fetched_stores(root: Path) -> list[DisclosureStore]:
    """The stores ``ledger fetch`` kept of teammates' disclosures in the repository holding
    ``root`` (none outside one)."""
    from ledger._git import repository_dirs  # noqa: PLC0415 -- only on a commitment not here

    dirs = repository_dirs(root)
    if not dirs:
        return []
    return [
        DisclosureStore(p) for p in sorted((dirs[-1] / FETCHED_DISCLOSURES_DIR).glob("*/*.jsonl"))
    ]
