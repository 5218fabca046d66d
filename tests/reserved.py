"""Writing ledger's own kinds in tests, as the hook service and the person's commands do.

``Ledger.append`` refuses ``intent.*``, ``hook.*``, ``governance.*``, ... (issue 15 part 2).
Tests that build a ledger as ledger itself would have written it (or as an attacker who reached
ledger's internals with a key) go through the internal path, :func:`append_reserved`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ledger import Ledger
from ledger._evidence.ledger import Entry, append_reserved
from ledger._evidence.record import Record


class AsLedgerItself:
    """``Ledger.append``/``append_many`` through the internal path (reserved kinds allowed)."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def append(
        self, kind: str, body: Mapping[str, Any], *, actor: Mapping[str, Any] | None = None
    ) -> Record:
        return append_reserved(self.ledger, [Entry(kind, dict(body), actor)])[0]

    def append_many(self, entries: Iterable[Entry | tuple[Any, ...]]) -> list[Record]:
        return append_reserved(self.ledger, entries)


def as_ledger_itself(ledger: Ledger) -> AsLedgerItself:
    return AsLedgerItself(ledger)
