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
from typing import Any, Final, NamedTuple

from ledger._errors import InputError, KeyNotFoundError, StorageError, WorkspaceNotFoundError
from ledger._evidence.disclosure import DISCLOSURES_FILE
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
        forked_from: ``--fork``: the copied ledger's id, head and home (what the new genesis
            record names), or ``None``.
        forked_to: where the copied ledger (and its disclosures) were moved, unchanged.
        replaced: the ledger this workspace held before, when it is gone and the new one
            stays flagged until a person runs ``ledger tamper accept``; else ``None``.
    """

    ledger: Ledger
    created: bool
    key: str
    private_key: str | None
    kept: tuple[str, ...]
    written: tuple[str, ...]
    moved_from_elsewhere: str | None = None
    elsewhere_key: str | None = None
    forked_from: dict[str, Any] | None = None
    forked_to: str | None = None
    replaced: str | None = None


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


def _move_aside(ledger_path: Path, ledger_id: str, *, with_disclosures: bool = False) -> Path:
    """Move the ledger at ``ledger_path`` (and, with ``with_disclosures``, the disclosures of
    its commitments) to ``other-ledgers/``, byte for byte."""
    target_dir = ledger_path.parent / OTHER_LEDGERS_DIR
    suffix = ""
    n = 1
    while (target_dir / f"agent_trace.{ledger_id}{suffix}.jsonl").exists():
        n += 1
        suffix = f".{n}"
    moves = [(ledger_path, target_dir / f"agent_trace.{ledger_id}{suffix}.jsonl")]
    disclosures = ledger_path.with_name(DISCLOSURES_FILE)
    if with_disclosures and disclosures.exists():
        moves.append((disclosures, target_dir / f"disclosures.{ledger_id}{suffix}.jsonl"))
    try:
        target_dir.mkdir(exist_ok=True)
        for source, target in moves:
            source.replace(target)  # same directory tree: a rename, the bytes untouched
    except OSError as exc:
        raise StorageError(f"cannot move {source} to {target}: {exc.strerror}") from None
    return moves[0][1]


def _fork_point(workspace: Workspace, environ: Mapping[str, str] | None) -> dict[str, Any]:
    """What a fork's genesis names: the copied ledger's id, head and home.

    Raises:
        InputError: the workspace is not a copy (nothing to fork).
    """
    from ledger._evidence.anchors import copy_of  # noqa: PLC0415

    existing = Ledger(workspace, environ=environ)
    tail = existing.tail(1) if workspace.ledger_path.is_file() else []
    if not tail:
        raise InputError(
            f"--fork: {workspace.orchestration} holds no ledger to fork from; "
            "`ledger init` makes a new one"
        )
    head = tail[0]
    home = copy_of(workspace.root, head.ledger_id, environ)
    if home is None:
        raise InputError(
            f"--fork: this workspace is the home of ledger {head.ledger_id}, not a copy: "
            "nothing to fork (a fork is for a workspace copied with its ledger)"
        )
    return {"hash": head.hash, "home": home, "ledger_id": head.ledger_id, "seq": head.seq}


def init_workspace(
    root: str | os.PathLike[str],
    *,
    parents: bool = False,
    environ: Mapping[str, str] | None = None,
    fork: bool = False,
) -> InitReport:
    """Make (or confirm) this clone's ledger and signing key, keeping the shared files.

    Args:
        root: the workspace root.
        parents: create ``root`` (and its parents) when it does not exist.
        environ: environment for key lookup (defaults to ``os.environ``).
        fork: the workspace is a copy of another (``cp -a``): move the copied ledger aside and
            start one of its own, with a new key, whose genesis record names the copied
            ledger and its head. The original and everything kept for it are not touched.

    Raises:
        WorkspaceNotFoundError: ``root`` does not exist and ``parents`` is false.
        InputError: ``fork`` where the workspace is not a copy.
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
    forked_from = _fork_point(workspace, environ) if fork else None
    forked_to: Path | None = None
    if forked_from is not None:
        forked_to = _move_aside(
            workspace.ledger_path, forked_from["ledger_id"], with_disclosures=True
        )
    elif workspace.ledger_path.is_file() and workspace.ledger_path.stat().st_size > 0:
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
    ledger = Ledger.init(base, environ=environ, forked_from=forked_from)
    last = ledger.tail(1)[0]
    from ledger._evidence.anchors import remember_workspace, workspace_ledger_id  # noqa: PLC0415

    anchored = workspace_ledger_id(base, environ)
    if forked_from is not None and anchored == forked_from["ledger_id"]:
        # A copy anchored to the ledger it copied (by a version before homes were kept): the
        # fork is what a person asked for, not a replacement.
        remember_workspace(base, last.ledger_id, environ, replace=True)
        anchored = last.ledger_id
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
        forked_from=forked_from,
        forked_to=str(forked_to.relative_to(base)) if forked_to else None,
        replaced=anchored if anchored not in (None, last.ledger_id) else None,
    )
