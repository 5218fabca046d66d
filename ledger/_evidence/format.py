"""Record format versions: what this ledger writes and what it can read.

Kept apart from :mod:`ledger._evidence.record` (which loads ``cryptography``) so that readers
that never verify (the read path, projections, ``ledger log``) stay light.
"""

from __future__ import annotations

from typing import Final

__all__ = ["FORMAT_VERSION", "SUPPORTED_FORMATS"]

#: The record format this ledger writes. v2: ``hook.post`` bodies carry the typed
#: ``attribution`` and ``observed`` fields instead of free keys in ``data``. v3 (this release):
#: content-bearing fields (prompts, command lines, file contents, tool answers, reasons) are
#: salted commitments, ``{"commitment": "<64 hex>"}``, whose values live in the disclosure store
#: (:mod:`ledger._evidence.disclosure`); paths are workspace- or ``~``-relative. Older records
#: stay on disk as they were signed; readers upcast them (:mod:`ledger._evidence.upcast`).
FORMAT_VERSION: Final = 3
#: Every format version whose records verify. The envelope, the hash and the signature rules are
#: the same in all of them, so a chain may mix versions (a ledger started before an upgrade).
SUPPORTED_FORMATS: Final = frozenset({1, 2, 3})
