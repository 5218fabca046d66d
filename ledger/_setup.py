"""``ledger init`` for this clone: what a workspace shares through git and what stays here.

A workspace's ``.orchestration/`` holds two kinds of files:

* **shared** (committed, the same in every clone): ``active_intents.yaml``, ``hooks.yaml`` /
  ``hooks.json``, ``keys/`` (pinned *public* keys: the trusted keyring), ``README.md`` and
  ``.gitignore``;
* **local** (ignored, each clone its own): ``agent_trace.jsonl`` (this clone's ledger: two
  machines appending to one committed file would fork its chain), ``.cache/`` (derived),
  ``quarantine/`` (torn bytes of this clone's crashes) and ``other-ledgers/`` (ledgers found in a
  fresh clone that were written elsewhere). Private keys are never in the workspace at all.

:func:`init_workspace` makes this clone's ledger and key while keeping every shared file. In a
fresh clone of a repository that committed a ledger (as older versions advised), that ledger's
active key cannot sign here: it is moved, byte for byte, to ``other-ledgers/`` and a new ledger
with a new key is started, instead of leaving a ledger every hook call would fail to append to.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final, NamedTuple

from ledger._errors import KeyNotFoundError, StorageError, WorkspaceNotFoundError
from ledger._evidence.keys import load_signing_key, private_key_path
from ledger._evidence.ledger import Ledger
from ledger._evidence.record import ROTATED_KIND, Record
from ledger._workspace import ORCHESTRATION_DIR, SHARED_PATHS, Workspace, scaffold

__all__ = ["InitReport", "active_key_id", "init_workspace"]

OTHER_LEDGERS_DIR: Final = "other-ledgers"


class InitReport(NamedTuple):
    """What :func:`init_workspace` found and did.

    Attributes:
        ledger: this clone's ledger.
        created: a new genesis record was written (``False``: it was already initialised here).
        key: the key that signs this clone's ledger now.
        private_key: where its private half is (``None`` when it comes from
            ``$LEDGER_SIGNING_KEY``).
        kept: shared files that were already there and were left untouched.
        written: files created or completed (the intents template, ``.gitignore`` entries).
        moved_from_elsewhere: where a ledger written on another machine was moved, or ``None``.
        elsewhere_key: the key that ledger was signed with.
    """

    ledger: Ledger
    created: bool
    key: str
    private_key: str | None
    kept: tuple[str, ...]
    written: tuple[str, ...]
    moved_from_elsewhere: str | None = None
    elsewhere_key: str | None = None


def active_key_id(last: Record) -> str:
    """The key that signs the record after ``last``: the new key of a rotation, else its signer
    (a revocation of the active key is signed by its successor already)."""
    if last.kind == ROTATED_KIND:
        return str(last.body.get("new_key"))
    return last.key


def _signable_here(kid: str, environ: Mapping[str, str] | None) -> bool:
    try:
        return load_signing_key(kid, environ).kid == kid
    except KeyNotFoundError:
        return False


def _move_aside(ledger_path: Path, ledger_id: str) -> Path:
    target_dir = ledger_path.parent / OTHER_LEDGERS_DIR
    target = target_dir / f"agent_trace.{ledger_id}.jsonl"
    n = 1
    while target.exists():
        n += 1
        target = target_dir / f"agent_trace.{ledger_id}.{n}.jsonl"
    try:
        target_dir.mkdir(exist_ok=True)
        ledger_path.replace(target)  # same directory tree: a rename, the bytes untouched
    except OSError as exc:
        raise StorageError(f"cannot move {ledger_path} to {target}: {exc.strerror}") from None
    return target


def init_workspace(
    root: str | os.PathLike[str],
    *,
    parents: bool = False,
    environ: Mapping[str, str] | None = None,
) -> InitReport:
    """Make (or confirm) this clone's ledger and signing key, keeping the shared files.

    Args:
        root: the workspace root.
        parents: create ``root`` (and its parents) when it does not exist.
        environ: environment for key lookup (defaults to ``os.environ``).

    Raises:
        WorkspaceNotFoundError: ``root`` does not exist and ``parents`` is false.
        StorageError: a file could not be written or moved.
    """
    base = Path(root).expanduser().absolute()
    if not base.is_dir():
        if base.exists():
            raise WorkspaceNotFoundError(f"{base} is not a directory")
        if not parents:
            raise WorkspaceNotFoundError(
                f"{base} does not exist; create it, or pass --parents to let init create it"
            )
    workspace = Workspace(base)
    shared_before = tuple(
        name for name in SHARED_PATHS if (workspace.orchestration / name.rstrip("/")).exists()
    )
    moved: Path | None = None
    elsewhere_key: str | None = None
    if workspace.ledger_path.is_file() and workspace.ledger_path.stat().st_size > 0:
        existing = Ledger(workspace, environ=environ)
        tail = existing.tail(1)
        if tail and not _signable_here(active_key_id(tail[0]), environ):
            elsewhere_key = active_key_id(tail[0])
            moved = _move_aside(workspace.ledger_path, tail[0].ledger_id)
    try:
        workspace.orchestration.mkdir(parents=True, exist_ok=True)
        written = scaffold(workspace.orchestration)
    except OSError as exc:
        raise StorageError(f"cannot create {workspace.orchestration}: {exc.strerror}") from None
    was_empty = not workspace.ledger_path.is_file() or workspace.ledger_path.stat().st_size == 0
    ledger = Ledger.init(base, environ=environ)
    last = ledger.tail(1)[0]
    key = active_key_id(last)
    env = os.environ if environ is None else environ
    private = None if env.get("LEDGER_SIGNING_KEY") else str(private_key_path(key, environ))
    return InitReport(
        ledger=ledger,
        created=was_empty,
        key=key,
        private_key=private,
        kept=tuple(name for name in shared_before if name not in written),
        written=tuple(f"{ORCHESTRATION_DIR}/{name}" for name in written),
        moved_from_elsewhere=str(moved.relative_to(base)) if moved else None,
        elsewhere_key=elsewhere_key,
    )
