"""Reading a teammate's fetched ledger: ``ledger log --ledger origin/<id>``, ``ledger show
origin/<id>:42``, ``ledger query --fetched``.

``ledger fetch`` keeps each teammate's verified evidence under
``refs/ledger-remotes/<remote>/<ledger id>`` and the disclosures of it that open its commitments
in ``.git/ledger-disclosures/<remote>/<ledger id>.jsonl``. A ref there can be moved by hand, so
a reader never trusts it for being there: the commit it names is verified again against this
clone's pinned keys (as ``ledger fetch`` does), unless an index sealed with this user's cache
secret says this user verified that very commit (commits are named by their content). One that
does not verify is never read as evidence: it is refused with the way out, or left out of a
query with a warning naming it.

What is shown of a teammate's committed content is what their fetched disclosures open:
:class:`~ledger._evidence.disclosure.Revealer` shows a value only from a disclosure that opens
the record's own commitment, else ``[withheld]`` or ``[forgotten]``.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple

from ledger._errors import InputError, IntegrityError, LedgerError
from ledger._evidence.disclosure import FETCHED_DISCLOSURES_DIR, DisclosureStore, Revealer
from ledger._evidence.remote import (
    fetched_ledgers,
    refetch_command,
    segment_of,
    verified_segment,
)
from ledger._git import repository_dirs
from ledger._projections.foreign import mark_verified, verified_here

if TYPE_CHECKING:
    from ledger._evidence.ledger import Ledger

__all__ = [
    "FetchedReading",
    "fetched_ledger_names",
    "open_fetched_ledger",
    "open_fetched_ledgers",
]

_NAME: Final = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]{0,127})/([A-Za-z0-9][A-Za-z0-9._-]{0,127})")


class FetchedReading(NamedTuple):
    """A teammate's fetched ledger, verified here, open for reading."""

    name: str
    """``<remote>/<ledger id>``, as ``ledger log --ledger`` takes it."""
    remote: str
    ledger_id: str
    commit: str
    """The evidence commit ``refs/ledger-remotes/<remote>/<ledger id>`` points at."""
    segment: Path
    """The verified records (a private copy, removed when the reading closes)."""
    disclosures: DisclosureStore
    """The teammate's disclosures ``ledger fetch`` kept (absent: every field withheld)."""

    def revealer(self) -> Revealer:
        """Shows this teammate's disclosed values, ``[withheld]`` or ``[forgotten]``."""
        return Revealer(self.disclosures)


def fetched_ledger_names(
    root: str | Path, environ: Mapping[str, str] | None = None
) -> list[tuple[str, str, str]]:
    """``(name, ledger id, commit)`` of every teammate ledger fetched into the repository
    holding ``root`` (``name``: ``<remote>/<ledger id>``)."""
    return [(f"{r}/{i}", i, c) for i, r, c in fetched_ledgers(Path(root), environ)]


def _fetched_store(root: Path, remote: str, ledger_id: str) -> DisclosureStore:
    dirs = repository_dirs(root)
    folder = dirs[-1] if dirs else root / ".git"
    return DisclosureStore(folder / FETCHED_DISCLOSURES_DIR / remote / f"{ledger_id}.jsonl")


def _resolve(
    name: str, fetched: list[tuple[str, str, str]], own_id: str | None
) -> tuple[str, str, str]:
    """``(remote, ledger id, commit)`` of ``name`` (``<remote>/<ledger id or a unique prefix
    of it>``) among the fetched ledgers.

    Raises:
        InputError: ``name`` is malformed, or names no fetched ledger (or several).
    """
    listed = ", ".join(n for n, _, _ in fetched) or "none yet"
    found = _NAME.fullmatch(name)
    if found is None:
        raise InputError(
            f"{name!r} is not a fetched ledger's name: use REMOTE/LEDGER_ID (fetched here: "
            f"{listed})"
        )
    remote, wanted = found.groups()
    matches = [
        (remote, i, c) for n, i, c in fetched if n.startswith(f"{remote}/") and i.startswith(wanted)
    ]
    exact = [m for m in matches if m[1] == wanted]
    if exact or len(matches) == 1:
        return (exact or matches)[0]
    if matches:
        names = ", ".join(f"{remote}/{i}" for _, i, _ in matches)
        raise InputError(
            f"{name} names {len(matches)} fetched ledgers ({names}): give more of the id"
        )
    own = " (this clone's own ledger: `ledger log` reads it)" if wanted == own_id else ""
    raise InputError(
        f"no fetched ledger {name}{own}; run `ledger fetch {remote}` to fetch the teammates' "
        f"evidence (fetched here: {listed})"
    )


def _open(
    ledger: Ledger,
    *,
    remote: str,
    ledger_id: str,
    commit: str,
    folder: Path,
    environ: Mapping[str, str] | None,
) -> FetchedReading | None:
    """The reading of one fetched ref, its segment written into ``folder``; ``None`` when
    its commit does not verify here."""
    root, cache_dir = ledger.workspace.root, ledger.workspace.cache_dir
    if verified_here(cache_dir, ledger_id, commit, environ):
        segment = segment_of(root, ledger_id, commit, folder, environ)
    else:
        segment = verified_segment(ledger, ledger_id, commit, folder)
        if segment is not None:
            mark_verified(ledger, ledger_id, commit, environ=environ)
    if segment is None:
        return None
    return FetchedReading(
        f"{remote}/{ledger_id}",
        remote,
        ledger_id,
        commit,
        segment,
        _fetched_store(root, remote, ledger_id),
    )


@contextlib.contextmanager
def open_fetched_ledger(
    root: str | Path | None, name: str, *, environ: Mapping[str, str] | None = None
) -> Iterator[FetchedReading]:
    """The teammate's ledger ``name`` (``origin/<ledger id>``, or a unique prefix of the id)
    that ``ledger fetch`` kept in the repository holding the workspace at ``root``, verified
    here, for the length of the ``with``.

    Raises:
        WorkspaceNotFoundError: no ``.orchestration/`` was found.
        InputError: ``name`` is malformed or names no fetched ledger (the message says how to
            fetch it, and lists those fetched).
        IntegrityError: its ref does not verify here (moved by hand, rewritten, or signed by a
            key not pinned here); the message gives the command that fetches it again.
    """
    from ledger._evidence.ledger import open_reader  # noqa: PLC0415

    ledger = open_reader(root, environ=environ)
    remote, ledger_id, commit = _resolve(
        name,
        fetched_ledger_names(ledger.workspace.root, environ),
        _own_id(ledger),
    )
    folder = Path(tempfile.mkdtemp(prefix="ledger-fetched-"))
    try:
        reading = _open(
            ledger,
            remote=remote,
            ledger_id=ledger_id,
            commit=commit,
            folder=folder,
            environ=environ,
        )
        if reading is None:
            raise IntegrityError(
                f"{remote}/{ledger_id} does not verify here (its ref was moved, or its "
                f"records were changed or signed by a key not pinned here); nothing of it is "
                f"shown. Fetch it again: {refetch_command(remote, ledger_id)}"
            )
        yield reading
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def open_fetched_ledgers(
    root: str | Path | None, *, environ: Mapping[str, str] | None = None
) -> Iterator[tuple[list[FetchedReading], list[str]]]:
    """Every teammate ledger fetched into the repository holding the workspace at ``root``
    (not this clone's own), verified here: ``(readings, warnings)``, a warning naming each
    that does not verify (left out, with the command that fetches it again).

    Raises:
        WorkspaceNotFoundError: no ``.orchestration/`` was found.
    """
    from ledger._evidence.ledger import open_reader  # noqa: PLC0415

    ledger = open_reader(root, environ=environ)
    own = _own_id(ledger)
    folder = Path(tempfile.mkdtemp(prefix="ledger-fetched-"))
    try:
        readings: list[FetchedReading] = []
        warnings: list[str] = []
        for index, (ledger_id, remote, commit) in enumerate(
            fetched_ledgers(ledger.workspace.root, environ)
        ):
            if ledger_id == own:
                continue
            where = folder / str(index)
            where.mkdir()
            reading = _open(
                ledger,
                remote=remote,
                ledger_id=ledger_id,
                commit=commit,
                folder=where,
                environ=environ,
            )
            if reading is None:
                warnings.append(
                    f"{remote}/{ledger_id} does not verify here and is left out; fetch it "
                    f"again: {refetch_command(remote, ledger_id)}"
                )
            else:
                readings.append(reading)
        yield readings, warnings
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _own_id(ledger: Ledger) -> str | None:
    """This clone's own ledger id (``None``: it has none)."""
    with contextlib.suppress(LedgerError, OSError, KeyError, TypeError):
        return ledger.ledger_id
    return None
