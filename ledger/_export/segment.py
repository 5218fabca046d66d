"""Reading and verifying the raw segment of an export (a contiguous run of ledger lines)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from ledger._evidence.keys import KeyEntry
from ledger._evidence.read import read_records
from ledger._evidence.record import Record
from ledger._evidence.store import LedgerFile
from ledger._evidence.verify import VerifyReport
from ledger._evidence.verify_file import verify_file

__all__ = ["segment_records", "verify_segment"]


def segment_records(path: Path) -> Iterator[Record]:
    """The complete records of a segment file, in file order (not verified; upcast by the one
    read path)."""
    for stored in read_records(path):
        yield Record(stored.line, stored.data)


def verify_segment(
    path: Path,
    keys: Mapping[str, KeyEntry],
    start: tuple[int, str],
    progress: Callable[[int, int], None] | None = None,
    trusted: frozenset[str] = frozenset(),
) -> VerifyReport:
    """Verify a segment's chain from ``start`` = (first seq, its prev) with the shipped keys,
    on every core.

    A key rotated out before the segment is pinned with ``retired_after_seq``; it counts as
    revoked from the next seq, so the verdict does not depend on records outside the segment.
    ``trusted``: key ids the auditor pins (``--trusted-key``); without them the segment's first
    signer is the trust root, as the genesis key is for a whole ledger.
    """
    revoked: dict[str, int] = {}
    for kid, entry in keys.items():
        limits = [
            s
            for s in (
                entry.revoked_from_seq,
                None if entry.retired_after_seq is None else entry.retired_after_seq + 1,
            )
            if s is not None
        ]
        if limits:
            revoked[kid] = min(limits)
    return verify_file(
        LedgerFile(path),
        {kid: e.public_raw for kid, e in keys.items()},
        revoked_from=revoked,
        start=start,
        progress=progress,
        trusted=dict.fromkeys(trusted, 0) if trusted else None,
    )
