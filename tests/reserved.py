"""Writing ledger's own kinds in tests, as the hook service and the person's commands do.

``Ledger.append`` refuses ``intent.*``, ``hook.*``, ``governance.*``, ... (decision 0013).
Tests that build a ledger as ledger itself would have written it go through the internal path,
:func:`append_reserved`, and advance the tripwire's seal as the hook service does: they test
what the records *mean* (the fold), not the tripwire. An attacker who reaches the internals
without the seal is what tests/hooks/test_tripwire.py attacks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ledger import Ledger
from ledger._evidence.ledger import Entry, append_reserved
from ledger._evidence.record import Record
from ledger._hooks.service import advance_seal
from ledger._hooks.tripwire import TripwireStore


class AsLedgerItself:
    """``Ledger.append``/``append_many`` through the internal path (reserved kinds allowed)."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.store = TripwireStore(ledger.ledger_id, ledger._environ)

    def append(
        self, kind: str, body: Mapping[str, Any], *, actor: Mapping[str, Any] | None = None
    ) -> Record:
        return self.append_many([Entry(kind, dict(body), actor)])[0]

    def append_many(self, entries: Iterable[Entry | tuple[Any, ...]]) -> list[Record]:
        return append_reserved(
            self.ledger, entries, after=lambda new: advance_seal(self.ledger, self.store, new)
        )


def as_ledger_itself(ledger: Ledger) -> AsLedgerItself:
    return AsLedgerItself(ledger)
