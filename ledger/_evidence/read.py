"""The one read path: stored records, streamed from a byte offset, parsed once, upcast.

Every reader of the ledger that wants records (``Ledger.records``, ``Ledger.tail``, the
projections and their cache, queries and exports) goes through :func:`read_records` or
:func:`parse_stored`, so there is one parser (orjson's answers, through
:mod:`ledger._evidence.lightjson`, with ledger's object check) and one place where old format
versions are upcast (:mod:`ledger._evidence.upcast`). Verification is the one
deliberate exception: it checks the *bytes* (canonical form, hash, signature) with
:func:`ledger._evidence.record.check_line` and never trusts a parsed view.

A record's ``offset`` is the byte offset of its line in the file; the line ends at
``offset + len(line) + 1``. Projections key their caches by it (docs/architecture.md).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final, NamedTuple

from ledger._errors import LedgerError, NotInitializedError, StorageError
from ledger._evidence import lightjson
from ledger._evidence.format import FORMAT_VERSION
from ledger._evidence.store import READ_CHUNK, LedgerFile
from ledger._evidence.upcast import upcast

__all__ = [
    "StoredRecord",
    "genesis_ledger_id",
    "ledger_id_at",
    "line_ending_at",
    "parse_stored",
    "read_records",
    "record_at",
    "tail_records",
]

_TAIL_STEP: Final = 64 * 1024
# A read this large parses hundreds of records: worth orjson's import (~10 ms) for its speed.
_BULK_READ: Final = 512 * 1024


class StoredRecord(NamedTuple):
    """One complete line of the ledger file and its parsed, upcast record."""

    line: bytes
    """The bytes on disk, without the newline (what the hash and signature cover)."""
    offset: int
    """Byte offset of the line in the file."""
    data: dict[str, Any]
    """The record, upcast to the current format version (a new dict when it was upcast)."""

    @property
    def end(self) -> int:
        """Byte offset just past this line's newline: where the next record starts."""
        return self.offset + len(self.line) + 1


def parse_stored(line: bytes) -> dict[str, Any]:
    """Parse one stored line into a record dict in the current format (unverified).

    Raises:
        StorageError: the line is not a JSON object or its version cannot be read; the way out
            is ``ledger verify``, which says precisely what is wrong with it.
    """
    try:
        data = lightjson.loads(line)
    except ValueError:
        raise StorageError("unreadable record line; run `ledger verify`") from None
    if type(data) is not dict:
        raise StorageError("unreadable record line; run `ledger verify`")
    if data.get("v") == FORMAT_VERSION:
        return data
    try:
        return upcast(data)
    except Exception as exc:  # noqa: BLE001 -- any upcast failure is an unreadable record
        raise StorageError(f"unreadable record line ({exc}); run `ledger verify`") from None


def read_records(
    path: Path, *, start: int = 0, chunk_size: int = READ_CHUNK
) -> Iterator[StoredRecord]:
    """Stream the complete records of the ledger at ``path`` from byte offset ``start``.

    ``start`` must be a line boundary (0, or a previous record's :attr:`StoredRecord.end`). A
    torn last line (a crash mid-append) is not a record and is not yielded. Memory is bounded by
    the read chunk plus the longest line.

    Raises:
        StorageError: a line is not a readable record (run ``ledger verify``).
        NotInitializedError: there is no ledger file.
    """
    for chunk_offset, chunk in LedgerFile(path).read_chunks(chunk_size, start=start):
        if len(chunk) > _BULK_READ:
            lightjson.orjson()
        offset = chunk_offset
        end = chunk.rfind(b"\n") + 1  # past the last complete line; the rest is a torn tail
        position = 0
        while position < end:
            newline = chunk.index(b"\n", position)
            line = chunk[position:newline]
            yield StoredRecord(line, offset + position, parse_stored(line))
            position = newline + 1


def record_at(path: Path, index: int, *, chunk_size: int | None = None) -> StoredRecord | None:
    """The complete record on line ``index`` (0-based), or None when the file has fewer
    complete lines. Only that line is parsed: the lines before it are counted, never read as
    JSON (``ledger show SEQ``, the genesis record: one record, not a bulk read).

    Raises:
        StorageError: that line is not a readable record (run ``ledger verify``).
        NotInitializedError: there is no ledger file.
    """
    if index < 0:
        return None
    seen = 0
    if chunk_size is None:
        # The genesis line is short: a small first read; others are counted 4 MiB at a time.
        chunk_size = _TAIL_STEP if index == 0 else READ_CHUNK
    for chunk_offset, chunk in LedgerFile(path).read_chunks(chunk_size):
        here = chunk.count(b"\n")  # complete lines only: a torn tail has no newline
        if seen + here > index:
            position = 0
            for _ in range(index - seen):
                position = chunk.index(b"\n", position) + 1
            line = chunk[position : chunk.index(b"\n", position)]
            return StoredRecord(line, chunk_offset + position, parse_stored(line))
        seen += here
    return None


def genesis_ledger_id(path: Path) -> str | None:
    """The ledger id in the genesis record, or ``None`` where it cannot be read (no file, an
    unreadable first line: ``ledger verify`` says why)."""
    try:
        genesis = record_at(path, 0)
    except LedgerError:
        return None
    value = None if genesis is None else genesis.data.get("ledger")
    return value if isinstance(value, str) else None


#: The genesis lines already parsed, with their ledger ids: a hook call asks for its ledger's id
#: several times, and a resident process asks on every call (parsing the line cost ~0.15 ms).
_GENESIS_IDS: dict[bytes, str] = {}
_GENESIS_PEEK: Final = 4096


def ledger_id_at(path: Path) -> str:
    """The ledger id in the genesis record of the ledger at ``path``. The first line is read
    from the file on every call (a ledger replaced since is seen as it is now); it is parsed
    only when it is not byte for byte a line parsed before.

    Raises:
        NotInitializedError: there is no ledger file, or it is empty.
        StorageError: the first line is not a readable record.
    """
    try:
        with path.open("rb") as handle:
            line, newline, _ = handle.read(_GENESIS_PEEK).partition(b"\n")
    except OSError:
        line, newline = b"", b""
    known = _GENESIS_IDS.get(line) if newline else None
    if known is not None:
        return known
    first = record_at(path, 0)
    if first is None:
        raise NotInitializedError(f"{path} is empty")
    ledger_id = str(first.data["ledger"])
    if first.line == line:
        if len(_GENESIS_IDS) >= 64:
            _GENESIS_IDS.clear()
        _GENESIS_IDS[line] = ledger_id
    return ledger_id


def line_ending_at(path: Path, end: int) -> bytes | None:
    """The line (without its newline) that ends just before byte offset ``end``, or ``None``
    when no complete line ends there (the file is shorter, or byte ``end - 1`` is not a
    newline). Reads backwards from ``end`` only as far as that line's start: a cache checks
    that the record it folded to is still there without reading the ledger.
    """
    if end <= 0:
        return None
    try:
        with path.open("rb") as handle:
            window = 4096
            while True:
                start = max(0, end - window)
                handle.seek(start)
                data = handle.read(end - start)
                if len(data) != end - start or not data.endswith(b"\n"):
                    return None
                cut = data.rfind(b"\n", 0, len(data) - 1)
                if cut >= 0 or start == 0:
                    return data[cut + 1 : -1]
                window *= 4
    except OSError:
        return None


def tail_records(path: Path, count: int) -> list[StoredRecord]:
    """The last ``count`` complete records, oldest first, read backwards from the end of the
    file without a lock (a torn last line, mid-append, is not a record).

    Raises:
        StorageError: the file or a line in the window cannot be read (run ``ledger verify``).
    """
    if count <= 0:
        return []
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        size = os.fstat(handle.fileno()).st_size
        start, data = size, b""
        while start > 0 and data.count(b"\n") <= count:
            step = min(start, max(_TAIL_STEP, len(data)))
            start -= step
            handle.seek(start)
            data = handle.read(step) + data
    end = data.rfind(b"\n") + 1  # drop a torn tail
    first = 0 if start == 0 else data.index(b"\n") + 1  # the window may begin mid-line
    lines: list[tuple[int, bytes]] = []
    position = first
    while position < end:
        newline = data.index(b"\n", position)
        lines.append((start + position, data[position:newline]))
        position = newline + 1
    return [StoredRecord(line, offset, parse_stored(line)) for offset, line in lines[-count:]]
