"""Per-key slices of a projection's cached state, read without loading the whole state.

``ledger blame F:N`` needs one file's line model, not every file's: loading the whole cached
line model (megabytes of JSON for a long history) cost more than ``git blame -L`` itself
(decision 0008, "Performance"). So when :class:`~ledger._projections.cache.ProjectionCache` saves a
*sliced* projection it also writes, beside ``<name>.json``:

* ``<name>.slices/<sha256>.json``: one key's slice (for blame: one file's model, the
  attributions its lines use and its refused attempts), named by the SHA-256 of its bytes, so
  an unchanged slice is not rewritten;
* ``<name>.slices/index.json``: sealed with the per-user cache secret
  (:func:`ledger._workspace.seal`, the projection cache's one MAC): the projection, its
  version, the ledger id, the ledger position the slices describe (end offset and the SHA-256
  of the last folded line) and key -> slice digest.

:func:`read_slice` trusts a slice only when the index's MAC verifies, the index is for this
projection, version and ledger, the ledger still ends at that offset with that very line (a
grown, rolled back or swapped ledger fails), and the slice's bytes have the digest the index
names. A ledger that grew since is read from the index's position on (never before it): when
the line the index names still ends there and the projection says none of the new records
changes the key's slice, the slice answers as of the last record. Anything else (forged, stale,
foreign, missing, a key the new records touch) returns ``None`` and the caller folds through
the full cache, which rewrites the slices: **a slice never changes an answer**.

This module is on ``ledger blame``'s start-up path: stdlib ``json``, not orjson (whose import
alone costs more than the whole lookup).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from ledger._startup.namedtuple import NamedTuple
from ledger._workspace import atomic_write, cache_secret, seal, unseal

__all__ = [
    "SLICE_FORMAT",
    "Found",
    "SliceIndex",
    "ledger_ends_with",
    "line_digest",
    "read_index",
    "read_slice",
    "slices_dir",
    "write_slices",
]

SLICE_FORMAT: Final = 1
# A ledger that grew past the slices by more than this is folded through the full cache.
_EXTEND_LIMIT: Final = 1000
_EXTEND_CHUNK: Final = 64 * 1024
_INDEX: Final = "index.json"


class SliceIndex(NamedTuple):
    """A verified slice index: where in the ledger it stands, and key -> slice digest."""

    end: int
    tail: str
    """SHA-256 of the last folded line (without its newline)."""
    seq: int
    """The last folded record's seq."""
    slices: dict[str, str]


class Found(NamedTuple):
    """What :func:`read_slice` found: the key's slice (``None``: the projection has none) and
    the seq the slices stand at."""

    slice: Any
    seq: int


def slices_dir(cache_dir: Path, name: str) -> Path:
    """``<cache_dir>/projections/<name>.slices``."""
    return cache_dir / "projections" / f"{name}.slices"


def line_digest(line: bytes) -> str:
    """The digest an index keeps of the last folded line."""
    return hashlib.sha256(line).hexdigest()


def read_index(
    directory: Path,
    *,
    name: str,
    version: int,
    ledger_id: str,
    secret: bytes,
) -> SliceIndex | None:
    """The index in ``directory`` when its MAC verifies and it is for this projection,
    version and ledger (its position is not checked here)."""
    try:
        payload = unseal((directory / _INDEX).read_bytes(), secret=secret)
        if payload is None:
            return None
        data = json.loads(payload)
        if (data["format"], data["projection"], data["version"], data["ledger"]) != (
            SLICE_FORMAT,
            name,
            version,
            ledger_id,
        ):
            return None
        slices = data["slices"]
        if not isinstance(slices, dict):
            return None
        return SliceIndex(int(data["end"]), str(data["tail"]), int(data["seq"]), slices)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def ledger_ends_with(ledger_path: Path, end: int, tail: str) -> bool:
    """Is ``ledger_path`` exactly ``end`` bytes long, its last line the one ``tail`` digests?

    A ledger that grew has records the slices do not describe; one rolled back, rewritten or
    swapped no longer has that line there. Reads one line from the end, never the ledger.
    """
    from ledger._evidence.read import line_ending_at  # noqa: PLC0415

    try:
        if ledger_path.stat().st_size != end:
            return False
    except OSError:
        return False
    line = line_ending_at(ledger_path, end)
    return line is not None and line_digest(line) == tail


def read_slice(
    ledger_path: Path,
    cache_dir: Path,
    *,
    name: str,
    version: int,
    key: str,
    environ: Mapping[str, str] | None = None,
    unchanged_by: Callable[[dict[str, Any], str], bool] | None = None,
) -> Found | None:
    """``key``'s slice of projection ``name`` as of the whole ledger, or ``None`` when the
    slices cannot be trusted to be that (see the module docstring; fold the full cache then).

    Args:
        unchanged_by: the projection's rule for "folding this record leaves this key's slice as
            it was". With it, slices written before the ledger's last records still answer for
            a key those records leave alone; without it, only slices of the whole ledger do.
    """
    secret = cache_secret(environ)
    from ledger._evidence.read import genesis_ledger_id  # noqa: PLC0415

    ledger_id = genesis_ledger_id(ledger_path)
    if secret is None or ledger_id is None:
        return None
    directory = slices_dir(cache_dir, name)
    index = read_index(directory, name=name, version=version, ledger_id=ledger_id, secret=secret)
    if index is None:
        return None
    seq = index.seq
    if not ledger_ends_with(ledger_path, index.end, index.tail):
        later = _seq_past_records_that_leave(ledger_path, index, key, unchanged_by)
        if later is None:
            return None
        seq = later
    digest = index.slices.get(key)
    if digest is None:
        return Found(None, seq)
    try:
        raw = (directory / f"{digest}.json").read_bytes()
        if hashlib.sha256(raw).hexdigest() != digest:
            return None
        return Found(json.loads(raw), seq)
    except (OSError, ValueError):
        return None


def _seq_past_records_that_leave(
    ledger_path: Path,
    index: SliceIndex,
    key: str,
    unchanged_by: Callable[[dict[str, Any], str], bool] | None,
) -> int | None:
    """The ledger grew past the index: the seq of its last record when the index's position is
    still in it (the line it names still ends there) and no record after it changes ``key``'s
    slice (``unchanged_by``), else ``None``. A few records after an agent's last call cost a
    short read, not a fold of the whole cached state."""
    from ledger._errors import LedgerError  # noqa: PLC0415
    from ledger._evidence.read import line_ending_at, read_records  # noqa: PLC0415

    if unchanged_by is None:
        return None
    line = line_ending_at(ledger_path, index.end)
    if line is None or line_digest(line) != index.tail:
        return None  # rolled back, rewritten or swapped: the slices describe another ledger
    seq = index.seq
    try:
        for count, stored in enumerate(
            read_records(ledger_path, start=index.end, chunk_size=_EXTEND_CHUNK)
        ):
            next_seq = stored.data.get("seq")
            if count >= _EXTEND_LIMIT or type(next_seq) is not int:
                return None
            if not unchanged_by(stored.data, key):
                return None
            seq = next_seq
    except LedgerError:
        return None
    return seq


def write_slices(
    directory: Path,
    *,
    name: str,
    version: int,
    ledger_id: str,
    secret: bytes,
    position: tuple[int, str, int],
    slices: dict[str, str],
    changed: Mapping[str, bytes | None],
) -> None:
    """Write the ``changed`` slices (``None``: the key has none any more) and an index of
    ``slices`` (key -> digest of the unchanged ones) updated with them, at ``position``
    ``(end, tail digest, seq)``; remove slice files no key uses. Failures only cost time."""
    updated = dict(slices)
    with contextlib.suppress(OSError):
        directory.mkdir(parents=True, exist_ok=True)
        for key, raw in changed.items():
            if raw is None:
                updated.pop(key, None)
                continue
            digest = hashlib.sha256(raw).hexdigest()
            target = directory / f"{digest}.json"
            try:  # content-addressed: a file with these bytes is not rewritten
                current = hashlib.sha256(target.read_bytes()).hexdigest()
            except OSError:
                current = None
            if current != digest:
                atomic_write(target, raw)
            updated[key] = digest
        end, tail, seq = position
        payload = json.dumps(
            {
                "end": end,
                "format": SLICE_FORMAT,
                "ledger": ledger_id,
                "projection": name,
                "seq": seq,
                "slices": updated,
                "tail": tail,
                "version": version,
            },
            sort_keys=True,
            separators=(",", ":"),
        ).encode()
        sealed = seal(payload, secret=secret)
        if sealed is None:
            return
        atomic_write(directory / _INDEX, sealed)
        used = {f"{digest}.json" for digest in updated.values()} | {_INDEX}
        for entry in directory.iterdir():
            # (a dot file is another writer's temporary file)
            if entry.name not in used and not entry.name.startswith("."):
                with contextlib.suppress(OSError):
                    entry.unlink()
