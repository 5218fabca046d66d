"""One incremental, verified cache for every projection.

A hook process must not replay a long ledger on every tool call, so each projection's state is
kept in ``.orchestration/.cache/projections/<name>.json`` with the position it was folded to:
``(offset, seq, record hash)`` of the last folded record, the projection's ``version`` and the
ledger id. On load the cache is used only when all of this holds:

1. its MAC verifies: HMAC-SHA256 under a per-user secret kept *outside* the workspace
   (``$LEDGER_HOME/cache.secret``, mode 0600), so an agent that can write the workspace but not
   read the user's ledger home cannot forge one (a poisoned ``state.json`` granting scope, issue
   "Governance that holds");
2. it is for this projection, this version and this ledger;
3. the ledger still has, at that offset, a line ending there whose record has that seq and hash
   (a ledger rolled back, rewritten or swapped is detected).

Otherwise the state is rebuilt from the first record, exactly as without a cache: **a cache
never changes an answer**, it only saves time. Records after the cached position are folded in
and the cache is rewritten. The records come through the one read path
(:func:`ledger._evidence.read.read_records`), upcast and unverified: projections describe the
ledger, ``ledger verify`` judges it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, NamedTuple

import orjson

from ledger._errors import StorageError
from ledger._evidence.read import parse_stored, read_records
from ledger._fsutil import atomic_write, cache_secret, seal, unseal
from ledger._projections.interface import Projection, StateT

__all__ = ["CACHE_FORMAT", "Position", "ProjectionCache"]

CACHE_FORMAT: Final = 2
_WINDOW: Final = 64 * 1024


class Position(NamedTuple):
    """Where a fold stopped: just past the last folded record's line, and that record."""

    end: int
    seq: int
    hash: str


_START: Final = Position(0, -1, "")


class ProjectionCache:
    """Projection states of one ledger, kept current incrementally.

    Args:
        ledger_path: the ledger file.
        cache_dir: ``.orchestration/.cache`` of the workspace.
        ledger_id: the ledger's id (a cache written for another ledger is foreign).
        environ: where ``$LEDGER_HOME`` is read from (tests).
    """

    def __init__(
        self,
        ledger_path: Path,
        cache_dir: Path,
        ledger_id: str,
        *,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.ledger_path = ledger_path
        self.cache_dir = cache_dir / "projections"
        self.ledger_id = ledger_id
        self._secret = cache_secret(environ)
        self.rebuilds = 0  # how many states were rebuilt from the first record (tests, bench)

    def state(self, projection: Projection[StateT]) -> StateT:
        """``projection``'s state over every complete record of the ledger.

        Raises:
            StorageError: a record line cannot be read (run ``ledger verify``).
        """
        cached = self._load(projection)
        if cached is None:
            self.rebuilds += 1
            state, position = projection.initial(), _START
        else:
            state, position = cached
        folded = position
        for stored in read_records(self.ledger_path, start=position.end):
            state = projection.apply(state, stored.data)
            folded = Position(
                stored.end, int(stored.data.get("seq", -1)), str(stored.data.get("hash", ""))
            )
        if folded != position or cached is None:
            self._save(projection, state, folded)
        return state

    # --- the cache file ----------------------------------------------------------------------

    def _path(self, projection: Projection[Any]) -> Path:
        return self.cache_dir / f"{projection.name}.json"

    def _load(self, projection: Projection[StateT]) -> tuple[StateT, Position] | None:
        if self._secret is None:
            return None
        try:
            payload = unseal(self._path(projection).read_bytes(), secret=self._secret)
            if payload is None:
                return None
            data = orjson.loads(payload)
            if (
                data.get("format"),
                data.get("projection"),
                data.get("version"),
                data.get("ledger"),
            ) != (CACHE_FORMAT, projection.name, projection.version, self.ledger_id):
                return None
            position = Position(int(data["end"]), int(data["seq"]), str(data["hash"]))
            if not self._position_holds(position):
                return None
            return projection.load(data["state"]), position
        except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError, StorageError):
            return None

    def _save(self, projection: Projection[StateT], state: StateT, position: Position) -> None:
        if self._secret is None:
            return
        payload = orjson.dumps(
            {
                "end": position.end,
                "format": CACHE_FORMAT,
                "hash": position.hash,
                "ledger": self.ledger_id,
                "projection": projection.name,
                "seq": position.seq,
                "state": projection.dump(state),
                "version": projection.version,
            },
            option=orjson.OPT_SORT_KEYS,
        )
        sealed = seal(payload, secret=self._secret)
        if sealed is not None:
            with contextlib.suppress(OSError):  # a cache we cannot write only costs time
                atomic_write(self._path(projection), sealed)

    def _position_holds(self, position: Position) -> bool:
        """Does the ledger still hold, ending at ``position.end``, the record it names?"""
        if position == _START:
            return True
        end = position.end
        try:
            with self.ledger_path.open("rb") as handle:
                window = _WINDOW
                while True:
                    start = max(0, end - window)
                    handle.seek(start)
                    data = handle.read(end - start)
                    if len(data) != end - start or not data.endswith(b"\n"):
                        return False
                    cut = data.rfind(b"\n", 0, len(data) - 1)
                    if cut >= 0 or start == 0:
                        record = parse_stored(data[cut + 1 : -1])
                        found = (record.get("seq"), record.get("hash"))
                        return found == (position.seq, position.hash)
                    window *= 4
        except (OSError, StorageError):
            return False
