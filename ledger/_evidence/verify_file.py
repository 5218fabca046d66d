"""Verify a ledger file on every core, streaming.

Ed25519 verification dominates (~100 µs per record with OpenSSL, and ``cryptography`` has no
batch API, docs/architecture.md, design note 5), so worker processes compute
:class:`~ledger._evidence.record.LineFacts` for 1 MiB chunks while the parent folds them in order
with :class:`~ledger._evidence.verify.ChainVerifier`. Workers collapse runs of clean, linked
records into one :class:`~ledger._evidence.verify.CleanRun` each, so the parent's work and the
inter-process traffic stay small per record. At most ``2 × jobs`` chunks are in flight, so memory
does not grow with the ledger's length.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

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
    # pipe would cost more than it saves. The parent holds the same bytes for the rare re-check.
    chunk = os.pread(_worker_fd, length, offset)
    return summarize_lines(chunk.split(b"\n")[:-1], _worker_keys, _worker_wanted)


def _fold(
    fold: ChainVerifier, items: Items, chunk: bytes, keys: Mapping[str, Ed25519PublicKey]
) -> None:
    """Feed one chunk's items; a run the fold cannot take in bulk is re-checked line by line
    (only happens around damage, so its cost does not matter)."""
    lines: list[bytes] | None = None
    for item in items:
        if isinstance(item, LineFacts):
            fold.feed(item)
        elif not fold.feed_run(item):
            lines = lines if lines is not None else chunk.split(b"\n")
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
    chunks = _bounded_chunks(ledger_file, end)
    keys = _public_keys(raw_keys)
    wanted = fold.wanted_seqs
    if jobs <= 1 or total < PARALLEL_THRESHOLD:
        for offset, chunk, torn in chunks:
            _fold(fold, summarize_lines(chunk.split(b"\n")[:-1], keys, wanted), chunk, keys)
            if torn:
                fold.feed_torn_tail(len(torn), check_line(torn, keys))
            if progress:
                progress(offset + len(chunk) + len(torn), total)
        return fold.finish()

    with ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=_context(),
        initializer=_init_worker,
        initargs=(dict(raw_keys), wanted, str(ledger_file.path)),
    ) as pool:
        pending: deque[tuple[Future[Items], int, bytes, bytes]] = deque()

        def drain_one() -> None:
            future, offset, chunk, torn = pending.popleft()
            _fold(fold, future.result(), chunk, keys)
            if torn:
                fold.feed_torn_tail(len(torn), check_line(torn, keys))
            if progress:
                progress(offset + len(chunk) + len(torn), total)

        for offset, chunk, torn in chunks:
            pending.append((pool.submit(_check_range, offset, len(chunk)), offset, chunk, torn))
            if len(pending) >= 2 * jobs:
                drain_one()
        while pending:
            drain_one()
    return fold.finish()


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
