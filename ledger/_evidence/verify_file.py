"""Verify a ledger file on every core, streaming.

Ed25519 verification dominates (~100 µs per record with OpenSSL, and ``cryptography`` has no
batch API, docs/architecture.md, design note 5), so worker processes compute
:class:`~ledger._evidence.record.LineFacts` for 1 MiB chunks while the parent folds them in order
with :class:`~ledger._evidence.verify.ChainVerifier`. Workers collapse runs of clean, linked
records into one :class:`~ledger._evidence.verify.CleanRun` each, so the parent's work and the
inter-process traffic stay small per record. The parent does not read the records at all: it finds
each chunk's last newline by reading the chunk's end, and rereads a chunk only to recheck a run
around damage. At most ``2 × jobs`` chunks are in flight, so memory does not grow with the
ledger's length.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ledger._errors import NotInitializedError, StorageError
from ledger._evidence.record import LineFacts, check_line
from ledger._evidence.store import LedgerFile
from ledger._evidence.verify import (
    ChainVerifier,
    CheckpointTarget,
    CleanRun,
    VerifyReport,
    summarize_lines,
)

__all__ = ["verify_file"]

CHUNK_BYTES: Final = 1024 * 1024
# Below this size a process pool costs more than it saves.
PARALLEL_THRESHOLD: Final = 2 * CHUNK_BYTES

_worker_keys: dict[str, Ed25519PublicKey] = {}
_worker_wanted: frozenset[int] = frozenset()
_worker_fd: int = -1

Progress = Callable[[int, int], None]
Items = list[LineFacts | CleanRun]


def _public_keys(raw_keys: Mapping[str, bytes]) -> dict[str, Ed25519PublicKey]:
    return {kid: Ed25519PublicKey.from_public_bytes(raw) for kid, raw in raw_keys.items()}


def _init_worker(raw_keys: dict[str, bytes], wanted: frozenset[int], path: str) -> None:
    global _worker_wanted, _worker_fd  # noqa: PLW0603 -- per-process worker state, set once
    _worker_keys.clear()
    _worker_keys.update(_public_keys(raw_keys))
    _worker_wanted = wanted
    _worker_fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)


def _check_range(offset: int, length: int) -> Items:
    # Workers read their own byte range: shipping 1 MiB of pickled bytes per chunk through a
    # pipe would cost more than it saves. The parent rereads a chunk only for the rare re-check.
    chunk = _pread(_worker_fd, length, offset)
    return summarize_lines(chunk.split(b"\n")[:-1], _worker_keys, _worker_wanted)


def _fold(
    fold: ChainVerifier,
    items: Items,
    chunk: bytes | Callable[[], bytes],
    keys: Mapping[str, Ed25519PublicKey],
) -> None:
    """Feed one chunk's items; a run the fold cannot take in bulk is re-checked line by line
    from the chunk's bytes, or what ``chunk()`` rereads (only happens around damage, so its cost
    does not matter)."""
    lines: list[bytes] | None = None
    for item in items:
        if isinstance(item, LineFacts):
            fold.feed(item)
        elif not fold.feed_run(item):
            if lines is None:
                lines = (chunk if isinstance(chunk, bytes) else chunk()).split(b"\n")
            for line in lines[item.first_line : item.first_line + item.size]:
                fold.feed(check_line(line, keys))


def _context() -> multiprocessing.context.BaseContext:
    # fork starts workers in milliseconds; elsewhere fall back to the platform default.
    return multiprocessing.get_context("fork" if sys.platform == "linux" else None)


def verify_file(
    ledger_file: LedgerFile,
    raw_keys: Mapping[str, bytes],
    *,
    revoked_from: Mapping[str, int] | None = None,
    checkpoints: Sequence[CheckpointTarget] = (),
    trusted: Mapping[str, int] | None = None,
    jobs: int | None = None,
    end: int | None = None,
    progress: Progress | None = None,
    start: tuple[int, str] | None = None,
) -> VerifyReport:
    """Verify ``ledger_file`` against the pinned ``raw_keys`` (key id → 32-byte public key).

    Args:
        ledger_file: the file to read.
        raw_keys: pinned public keys.
        revoked_from: pinned revocations.
        checkpoints: verified checkpoint targets.
        trusted: keys pinned outside the workspace (``None``: the genesis key is the root).
        jobs: worker processes; default: all cores. ``1`` verifies in-process.
        end: stop at this byte offset (used by ``repair`` to check everything before a torn tail).
        progress: called with ``(bytes_done, bytes_total)`` after each chunk.
        start: ``(seq, prev)`` when the file is a segment of a chain (an export's), not a
            whole ledger from genesis.
    """
    fold = ChainVerifier(
        revoked_from=revoked_from, checkpoints=checkpoints, trusted=trusted, start=start
    )
    total = ledger_file.path.stat().st_size if end is None else end
    jobs = jobs or os.cpu_count() or 1
    keys = _public_keys(raw_keys)
    wanted = fold.wanted_seqs
    if jobs <= 1 or total < PARALLEL_THRESHOLD:
        for offset, chunk, torn in _bounded_chunks(ledger_file, end):
            _fold(fold, summarize_lines(chunk.split(b"\n")[:-1], keys, wanted), chunk, keys)
            if torn:
                fold.feed_torn_tail(len(torn), check_line(torn, keys))
            if progress:
                progress(offset + len(chunk) + len(torn), total)
        return fold.finish()

    with (
        _open_for_reading(ledger_file.path) as fd,
        ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=_context(),
            initializer=_init_worker,
            initargs=(dict(raw_keys), wanted, str(ledger_file.path)),
        ) as pool,
    ):
        stop = os.fstat(fd).st_size if end is None else end
        pending: deque[tuple[Future[Items], int, int]] = deque()

        def drain_one() -> None:
            future, offset, length = pending.popleft()
            _fold(fold, future.result(), lambda: _pread(fd, length, offset), keys)
            if progress:
                progress(offset + length, stop)

        position = 0
        for offset, length in _line_ranges(fd, stop):
            pending.append((pool.submit(_check_range, offset, length), offset, length))
            position = offset + length
            if len(pending) >= 2 * jobs:
                drain_one()
        while pending:
            drain_one()
        if position < stop:
            # Read no more of it than a record can be: a fetched segment of one 300 MB line
            # must not cost 300 MB (times the copies a parse makes).
            torn = _pread(fd, min(stop - position, MAX_LINE_BYTES), position)
            fold.feed_torn_tail(stop - position, check_line(torn, keys))
            if progress:
                progress(stop, stop)
    return fold.finish()


_SEEK_WINDOW: Final = 64 * 1024
#: No record line is longer (a hook payload is at most 8 MiB); a longer one is read no further
#: and reported where it starts, as the bytes after the last complete record.
MAX_LINE_BYTES: Final = 32 * 1024 * 1024


def _line_ranges(fd: int, stop: int) -> Iterator[tuple[int, int]]:
    """``(offset, length)`` ranges of whole lines, about ``CHUNK_BYTES`` each, from the start of
    the file to its last newline before ``stop``. Each cut is found by reading backwards from
    the range's end (one window, unless a line is longer than it), not the whole range."""
    offset = 0
    while offset < stop:
        target = min(offset + CHUNK_BYTES, stop)
        cut = _newline_before(fd, offset, target)
        if cut < 0:  # a line longer than a chunk: the range ends where it does
            cut = _newline_from(fd, target, min(stop, offset + MAX_LINE_BYTES))
            if cut < 0:
                return  # no newline until stop (or no record is that long): a torn tail
        yield offset, cut - offset
        offset = cut


def _newline_before(fd: int, start: int, end: int) -> int:
    """Offset just past the last newline in ``[start, end)``, or -1."""
    while end > start:
        window = max(start, end - _SEEK_WINDOW)
        found = _pread(fd, end - window, window).rfind(b"\n")
        if found >= 0:
            return window + found + 1
        end = window
    return -1


def _newline_from(fd: int, start: int, end: int) -> int:
    """Offset just past the first newline in ``[start, end)``, or -1."""
    while start < end:
        step = min(_SEEK_WINDOW, end - start)
        found = _pread(fd, step, start).find(b"\n")
        if found >= 0:
            return start + found + 1
        start += step
    return -1


@contextlib.contextmanager
def _open_for_reading(path: Path) -> Iterator[int]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise NotInitializedError(f"no ledger at {path}; run `ledger init`") from None
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        yield fd
    finally:
        os.close(fd)


def _pread(fd: int, length: int, offset: int) -> bytes:
    try:
        data = os.pread(fd, length, offset)
    except OSError as exc:
        raise StorageError(f"cannot read the ledger: {exc.strerror or exc}") from None
    if len(data) != length:  # the file shrank while it was being verified
        raise StorageError("the ledger file shrank during verification; run `ledger verify` again")
    return data


def _bounded_chunks(ledger_file: LedgerFile, end: int | None) -> Iterator[tuple[int, bytes, bytes]]:
    """``(offset, complete_lines, torn_fragment)`` chunks up to ``end``."""
    for offset, chunk in ledger_file.read_chunks(CHUNK_BYTES):
        data = chunk
        if end is not None:
            if offset >= end:
                return
            data = chunk[: end - offset]
        cut = data.rfind(b"\n") + 1
        yield offset, data[:cut], data[cut:]
