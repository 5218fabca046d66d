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

A :class:`SlicedProjection` (blame) also keeps per-key slices of its state current, so a reader
that needs one key (one file) loads that slice and not the whole state
(:mod:`ledger._projections.slices`, same secret, same rule).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final, NamedTuple, Protocol, runtime_checkable

from ledger._errors import StorageError
from ledger._evidence.lightjson import dumps_sorted, loads
from ledger._evidence.read import line_ending_at, parse_stored, read_records
from ledger._projections.interface import Projection, StateT
from ledger._projections.slices import line_digest, read_index, slices_dir, write_slices
from ledger._workspace import atomic_write, cache_secret, seal, unseal

__all__ = [
    "CACHE_FORMAT",
    "Position",
    "ProjectionCache",
    "SlicedProjection",
    "saves_after_answer",
    "write_saved",
]

CACHE_FORMAT: Final = 2


#: Caches made while a caller waits for its answer, written once it has it
#: (:func:`saves_after_answer`); None: written as they are made.
_SAVES_AFTER_ANSWER: contextvars.ContextVar[list[tuple[Path, bytes]] | None] = (
    contextvars.ContextVar("ledger_projection_saves_after_answer", default=None)
)


@contextlib.contextmanager
def saves_after_answer() -> Iterator[list[tuple[Path, bytes]]]:
    """Inside: the projection caches a call brings up to date are made (their bytes, from
    the state as folded) but not written; what this yields lists them for
    :func:`write_saved` once the caller has its answer (a resident process: the decider).
    A cache is never what a decision rests on alone: one written late, or never, only makes
    the next call fold a few more records (the module docstring)."""
    pending: list[tuple[Path, bytes]] = []
    token = _SAVES_AFTER_ANSWER.set(pending)
    try:
        yield pending
    finally:
        _SAVES_AFTER_ANSWER.reset(token)


def write_saved(pending: list[tuple[Path, bytes]]) -> None:
    """Write the caches listed under :func:`saves_after_answer` (the last made of each)."""
    for path, sealed in dict(pending).items():
        _write_cache(path, sealed)


def _write_cache(path: Path, sealed: bytes) -> None:
    with contextlib.suppress(OSError):  # a cache we cannot write only costs time
        atomic_write(path, sealed)


class Position(NamedTuple):
    """Where a fold stopped: just past the last folded record's line, and that record."""

    end: int
    seq: int
    hash: str


_START: Final = Position(0, -1, "")


@runtime_checkable
class SlicedProjection(Projection[Any], Protocol):
    """A projection whose state the cache also keeps as per-key slices (see the module
    docstring). The slices must be a function of the state alone."""

    def slice_keys(self, state: Any) -> set[str]:  # noqa: ANN401 -- the projection's state
        """Every key that has a slice."""
        ...

    def touched(self, state: Any) -> set[str]:  # noqa: ANN401
        """Keys whose slice may have changed since the state was made or loaded."""
        ...

    def slice(self, state: Any, key: str) -> bytes | None:  # noqa: ANN401
        """``key``'s slice as JSON bytes, ``None`` when it has none."""
        ...


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
        folded, last_line = position, None
        for stored in read_records(self.ledger_path, start=position.end):
            state = projection.apply(state, stored.data)
            folded = Position(
                stored.end, int(stored.data.get("seq", -1)), str(stored.data.get("hash", ""))
            )
            last_line = stored.line
        if folded != position or cached is None:
            self._save(projection, state, folded)
        if isinstance(projection, SlicedProjection) and folded != _START:
            self._sync_slices(projection, state, loaded=position, folded=folded, line=last_line)
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
            data = loads(payload)
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
        payload = dumps_sorted(
            {
                "end": position.end,
                "format": CACHE_FORMAT,
                "hash": position.hash,
                "ledger": self.ledger_id,
                "projection": projection.name,
                "seq": position.seq,
                "state": projection.dump(state),
                "version": projection.version,
            }
        )
        sealed = seal(payload, secret=self._secret)
        if sealed is None:
            return
        pending = _SAVES_AFTER_ANSWER.get()
        if pending is not None:  # the bytes are made now: the state may change after this
            pending.append((self._path(projection), sealed))
        else:
            _write_cache(self._path(projection), sealed)

    def _sync_slices(
        self,
        projection: SlicedProjection,
        state: Any,  # noqa: ANN401 -- the projection's state
        *,
        loaded: Position,
        folded: Position,
        line: bytes | None,
    ) -> None:
        """Bring the slices to ``folded``: rewrite only the keys touched since ``loaded`` when
        the index stood there, every key otherwise; nothing when it already stands at
        ``folded``. ``line`` is the last folded line (``None``: read it from the ledger)."""
        if self._secret is None:
            return
        name, version = projection.name, projection.version
        directory = slices_dir(self.cache_dir.parent, name)
        index = read_index(
            directory, name=name, version=version, ledger_id=self.ledger_id, secret=self._secret
        )
        if line is None:
            line = line_ending_at(self.ledger_path, folded.end)
            if line is None:
                return
        tail = line_digest(line)
        if index is not None and (index.end, index.tail) == (folded.end, tail):
            return
        if index is not None and index.end == loaded.end and index.tail == self._tail(loaded):
            keys, slices = projection.touched(state), index.slices
        else:
            keys, slices = projection.slice_keys(state), {}
        write_slices(
            directory,
            name=name,
            version=version,
            ledger_id=self.ledger_id,
            secret=self._secret,
            position=(folded.end, tail, folded.seq),
            slices=slices,
            changed={key: projection.slice(state, key) for key in keys},
        )

    def _tail(self, position: Position) -> str | None:
        line = line_ending_at(self.ledger_path, position.end) if position != _START else None
        return None if line is None else line_digest(line)

    def _position_holds(self, position: Position) -> bool:
        """Does the ledger still hold, ending at ``position.end``, the record it names?"""
        if position == _START:
            return True
        line = line_ending_at(self.ledger_path, position.end)
        if line is None:
            return False
        try:
            record = parse_stored(line)
        except StorageError:
            return False
        return (record.get("seq"), record.get("hash")) == (position.seq, position.hash)
