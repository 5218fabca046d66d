"""Teammates' line models: blame in any clone (decision 0018).

``ledger fetch`` keeps each teammate's verified ledger under ``refs/ledger-remotes/<remote>/<id>``
(:mod:`ledger._evidence.remote`). This module folds each such ledger into its own line model
with the very fold local blame uses (:data:`~ledger._projections.blame.BLAME`, pure) and keeps
one slice per file, so ``ledger blame`` reads only the slice of the file it explains:

* ``<cache>/projections/foreign/<ledger id>/index.json``: sealed with the per-user cache secret
  (:func:`ledger._workspace.seal`, as the local slices): the ledger id, the evidence commit it was
  folded from, the projection's version, the last seq and path -> slice digest;
* ``<cache>/projections/foreign/<ledger id>/<sha256>.json``: one file's slice, named by the
  SHA-256 of its bytes.

An index is trusted only when its MAC verifies and it names this ledger, this projection
version and the commit the fetched ref points at *now*. Anything else (no secret, a forged or
stale index, a ref moved by hand) refolds from the commit, and only after verifying that
commit's records again against this clone's pinned keys, as ``ledger fetch`` did: a ref anyone
could move by hand is never trusted for being where fetched refs live. Commits are keys, never
names of lines: a rebased, squashed or force-pushed branch changes no evidence commit.

Slices are read with the stdlib ``json`` (blame's start-up path, see :mod:`.slices`).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ledger._projections.blame import BASE, BLAME, FileView
from ledger._startup.namedtuple import NamedTuple
from ledger._workspace import atomic_write, cache_secret, seal, unseal

if TYPE_CHECKING:
    from ledger._evidence.ledger import Ledger

__all__ = [
    "VERSIONS",
    "FetchedTeammates",
    "ForeignFile",
    "ForeignModel",
    "foreign_models",
    "mark_verified",
    "prepare_foreign",
    "unverified_fix",
    "unverified_slices",
    "verified_here",
]

VERSIONS: Final = 8
"""Earlier versions of each file kept besides the last one the records describe."""
_FORMAT: Final = 2
_INDEX: Final = "index.json"
_FETCHED: Final = "refs/ledger-remotes/"
_OBJECT_ID: Final = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_LEDGER_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class ForeignFile(NamedTuple):
    """A teammate's model of one file: the last version the records describe (``view``), and
    up to :data:`VERSIONS` earlier ones, newest first (``{"sha", "hashes", "refs"}``, refs
    indexing ``view.refs``)."""

    view: FileView
    versions: list[dict[str, Any]]

    @classmethod
    def from_slice(cls, data: dict[str, Any], seq: int) -> ForeignFile:
        """From a slice :func:`_fold` wrote."""
        return cls(FileView.from_slice(data, seq), list(data.get("versions") or []))

    def models(self) -> list[dict[str, Any]]:
        """Every version, newest first."""
        return ([self.view.model] if self.view.model else []) + self.versions


class ForeignModel(NamedTuple):
    """One verified teammate ledger's models of the files asked for (path -> file)."""

    ledger_id: str
    commit: str
    views: dict[str, ForeignFile]


def _folder(cache_dir: Path, ledger_id: str) -> Path:
    return cache_dir / "projections" / "foreign" / ledger_id


def _read_index(
    cache_dir: Path, ledger_id: str, commit: str, secret: bytes | None
) -> dict[str, Any] | None:
    if secret is None:
        return None
    try:
        raw = (_folder(cache_dir, ledger_id) / _INDEX).read_bytes()
    except OSError:
        return None
    payload = unseal(raw, secret=secret)
    if payload is None:
        return None
    try:
        index = json.loads(payload)
    except ValueError:
        return None
    expected = (_FORMAT, BLAME.version, ledger_id, commit)
    if (
        not isinstance(index, dict)
        or (
            index.get("format"),
            index.get("version"),
            index.get("ledger_id"),
            index.get("commit"),
        )
        != expected
    ):
        return None
    return index


def _read_slice(cache_dir: Path, ledger_id: str, digest: str) -> Any:  # noqa: ANN401 -- JSON
    try:
        data = (_folder(cache_dir, ledger_id) / f"{digest}.json").read_bytes()
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != digest:
        return None
    return json.loads(data)


def _fold(segment: Path, *, tolerant: bool = False) -> tuple[int, dict[str, bytes]]:
    """The line model of a verified segment: ``(last seq, path -> slice JSON)``. Each slice
    also holds up to :data:`VERSIONS` earlier versions of its file as the records described
    them (``versions``, newest first), since a teammate's clone often holds an older commit of
    a file than the one the ledger reached."""
    state = BLAME.initial()
    # path -> earlier versions: (sha, hashes, refs, the ref table they index). A compaction of
    # the state renumbers refs into a new table and never changes an old one, so a version's
    # refs are read against the table of its time, and only for the versions kept (copying
    # two lists at C speed per write, not resolving every line of every version).
    history: dict[str, list[tuple[str, list[Any], list[int], list[list[Any]]]]] = {}
    for record in _hook_records(segment, tolerant=tolerant):
        state.touched.clear()
        BLAME.apply(state, record)
        for path in state.touched:
            model = state.files.get(path)
            if model is None or model["sha"] is None:
                continue
            versions = history.setdefault(path, [])
            if versions and versions[-1][0] == model["sha"]:
                continue
            versions.append((model["sha"], list(model["hashes"]), list(model["refs"]), state.refs))
            del versions[: -(VERSIONS + 1)]
    slices = {}
    for path in BLAME.slice_keys(state):
        data = state.file_slice(path)
        if data is None:
            continue
        current = (data["model"] or {}).get("sha")
        table: list[list[Any]] = data["refs"]
        where = {id(ref): n for n, ref in enumerate(table)}
        earlier: list[dict[str, Any]] = []
        for sha, hashes, refs, then in reversed(history.get(path, [])):
            if sha == current or len(earlier) == VERSIONS:
                continue
            numbered = []
            for ref in refs:
                if ref < 0:
                    numbered.append(BASE)
                    continue
                attribution = then[ref]
                if id(attribution) not in where:
                    where[id(attribution)] = len(table)
                    table.append(attribution)
                numbered.append(where[id(attribution)])
            earlier.append({"hashes": hashes, "refs": numbered, "sha": sha})
        data["versions"] = earlier
        slices[path] = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    return state.seq, slices


_HOOK_KIND: Final = b'"kind":"hook.'


def _hook_records(segment: Path, *, tolerant: bool = False) -> Iterator[dict[str, Any]]:
    """The records of a verified segment the blame fold reads (``hook.*``), parsed; the others
    are skipped unparsed (in canonical JSON, which verification checked, a record's kind is
    those very bytes), then one last record-like mark carries the segment's last seq, which is
    its line count less one (a verified chain numbers its records from 0)."""
    from ledger._errors import StorageError  # noqa: PLC0415 -- the cold path's
    from ledger._evidence import lightjson  # noqa: PLC0415
    from ledger._evidence.read import parse_stored  # noqa: PLC0415
    from ledger._evidence.store import LedgerFile  # noqa: PLC0415

    lightjson.orjson()  # a bulk read: orjson's parser
    lines = 0
    for _, chunk in LedgerFile(segment).read_chunks(4 * 1024 * 1024):
        end = chunk.rfind(b"\n") + 1
        position = 0
        while position < end:
            newline = chunk.index(b"\n", position)
            line = chunk[position:newline]
            if _HOOK_KIND in line:
                try:
                    yield parse_stored(line)
                except StorageError:
                    if not tolerant:
                        raise
            lines += 1
            position = newline + 1
    yield {"seq": lines - 1}


def prepare_foreign(
    ledger: Ledger,
    ledger_id: str,
    commit: str,
    *,
    verified: bool = False,
    environ: Mapping[str, str] | None = None,
) -> dict[str, bytes] | None:
    """Fold the evidence ``commit`` of ``ledger_id`` and cache its slices: path -> slice JSON,
    or ``None`` when the commit does not verify here. ``verified``: that very commit was
    verified by this user (``ledger fetch`` a moment ago, or an index sealed with this user's
    secret names it); otherwise it is verified first."""
    import tempfile  # noqa: PLC0415 -- the cold path's

    from ledger._evidence.remote import verified_segment  # noqa: PLC0415 -- the cold path's

    environ = ledger.environ if environ is None else environ

    with tempfile.TemporaryDirectory(prefix="ledger-foreign-") as name:
        folder = Path(name)
        if verified:
            from ledger._evidence.remote import segment_of  # noqa: PLC0415

            segment = segment_of(ledger.workspace.root, ledger_id, commit, folder, environ)
        else:
            segment = verified_segment(ledger, ledger_id, commit, folder)
        if segment is None:
            return None
        seq, slices = _fold(segment)
    secret = cache_secret(environ)
    if secret is not None:
        _write(ledger.workspace.cache_dir, ledger_id, commit, seq=seq, slices=slices, secret=secret)
    return slices


def unverified_slices(
    root: Path, ledger_id: str, commit: str, environ: Mapping[str, str] | None = None
) -> dict[str, bytes] | None:
    """Path -> slice JSON of a fetched ledger that does *not* verify here, folded from its
    segment as it stands (unreadable lines skipped) and never cached: only so a reader can
    name the lines such a ledger claims as unverified, never to attribute them
    (:meth:`ForeignFile.from_slice` reads a slice). ``None`` when the commit holds no segment,
    or one the fold cannot read."""
    import tempfile  # noqa: PLC0415 -- the cold path's

    from ledger._errors import LedgerError  # noqa: PLC0415
    from ledger._evidence.remote import segment_of  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="ledger-unverified-") as name:
        segment = segment_of(root, ledger_id, commit, Path(name), environ)
        if segment is None:
            return None
        try:
            return _fold(segment, tolerant=True)[1]
        except (LedgerError, LookupError, TypeError, ValueError, AttributeError):
            return None  # records no fold can read: no line is named for them


def verified_here(
    cache_dir: Path, ledger_id: str, commit: str, environ: Mapping[str, str] | None = None
) -> bool:
    """This user verified the evidence ``commit`` of ``ledger_id`` before (an index sealed
    with this user's secret names it: ``ledger fetch``, or a reader that verified it)."""
    return _read_index(cache_dir, ledger_id, commit, cache_secret(environ)) is not None


def mark_verified(
    ledger: Ledger, ledger_id: str, commit: str, *, environ: Mapping[str, str] | None = None
) -> None:
    """Note, under this user's cache secret, that ``ledger fetch`` verified ``commit`` of
    ``ledger_id`` a moment ago: the first blame that needs it folds it without verifying it
    again. (Folding at fetch time cost ``ledger fetch`` 1.4 s a 100,000-record ledger, 1.5×
    ``ledger verify``: ``bench/bench_fetch.py``; a blame pays it once, when it needs it.)"""
    secret = cache_secret(ledger.environ if environ is None else environ)
    if secret is not None:
        _write(ledger.workspace.cache_dir, ledger_id, commit, seq=-1, slices=None, secret=secret)


def _write(
    cache_dir: Path,
    ledger_id: str,
    commit: str,
    *,
    seq: int,
    slices: dict[str, bytes] | None,
    secret: bytes,
) -> None:
    import contextlib  # noqa: PLC0415 -- the cold path's
    import shutil  # noqa: PLC0415

    folder = _folder(cache_dir, ledger_id)
    with contextlib.suppress(OSError):  # a cache that cannot be written costs a refold, no more
        if folder.exists():
            shutil.rmtree(folder)  # the slices of an older commit of this ledger
        digests: dict[str, str] = {}
        for path, data in (slices or {}).items():
            digest = hashlib.sha256(data).hexdigest()
            atomic_write(folder / f"{digest}.json", data)
            digests[path] = digest
        index = {
            "commit": commit,
            "format": _FORMAT,
            "ledger_id": ledger_id,
            "seq": seq,
            "slices": None if slices is None else digests,  # None: verified, not folded yet
            "version": BLAME.version,
        }
        sealed = seal(json.dumps(index, sort_keys=True).encode(), secret=secret)
        if sealed is not None:
            atomic_write(folder / _INDEX, sealed)


def foreign_models(
    root: Path,
    cache_dir: Path,
    paths: list[str],
    *,
    own_ledger_id: str | None,
    environ: Mapping[str, str] | None = None,
) -> list[ForeignModel]:
    """Every verified fetched ledger but this clone's own, with its models of ``paths`` (one
    ref per ledger id: the first remote's)."""
    refs = _fetched_refs(root, environ)
    if not refs:
        return []
    secret = cache_secret(environ)
    out: list[ForeignModel] = []
    seen: set[str] = {own_ledger_id} if own_ledger_id else set()
    ledger: Ledger | None = None
    for ledger_id, _remote, commit in refs:
        if ledger_id in seen:
            continue
        index = _read_index(cache_dir, ledger_id, commit, secret)
        views = None if index is None else _cached_views(cache_dir, ledger_id, index, paths)
        if views is not None:
            seen.add(ledger_id)
            out.append(ForeignModel(ledger_id, commit, views))
            continue
        if ledger is None:
            from ledger._evidence.ledger import open_reader  # noqa: PLC0415 -- the cold path's

            ledger = open_reader(root, environ=environ)  # this clone may have none of its own
        # A sealed index for this very commit: this user verified it before writing the index
        # (only a slice went missing, e.g. two blames rewriting at once), so it is only refolded.
        slices = prepare_foreign(
            ledger, ledger_id, commit, verified=index is not None, environ=environ
        )
        views = {}
        if slices is None:
            continue  # does not verify here (moved by hand, or a key unpinned since)
        seen.add(ledger_id)
        for path in paths:
            if path in slices:
                views[path] = ForeignFile.from_slice(json.loads(slices[path]), -1)
        out.append(ForeignModel(ledger_id, commit, views))
    return out


class FetchedTeammates:
    """The teammates' fetched ledgers as blame asks them, for one blame or one review: every
    verified one's models of the paths asked (each ledger folded once, each path asked once:
    blames run side by side), and the ones that do not verify here, whose claims are read only
    to name the lines they claim as unverified, never to attribute them
    (:func:`ledger._projections.explain.ask_teammates`)."""

    def __init__(
        self,
        root: Path,
        cache_dir: Path,
        own_id: str | None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.root = root
        self.cache_dir = cache_dir
        self.own_id = own_id
        self.environ = environ
        self.verified: dict[str, str] = {}  # ledger id -> the commit folded
        self.views: dict[str, dict[str, ForeignFile]] = {}
        self.asked: set[str] = set()
        self.lock = threading.Lock()
        self._refs: list[tuple[str, str, str]] | None = None
        self._unverified: dict[tuple[str, str, str], dict[str, bytes] | None] | None = None

    @property
    def refs(self) -> list[tuple[str, str, str]]:
        """``(ledger id, remote, commit)`` of every fetched ref but this clone's own ledger's."""
        if self._refs is None:
            self._refs = [r for r in _fetched_refs(self.root, self.environ) if r[0] != self.own_id]
        return self._refs

    def __call__(self, paths: list[str]) -> list[ForeignModel]:
        """Every verified fetched ledger, with its models of ``paths``."""
        with self.lock:
            missing = [p for p in paths if p not in self.asked]
            if missing and self.refs:
                for model in foreign_models(
                    self.root,
                    self.cache_dir,
                    missing,
                    own_ledger_id=self.own_id,
                    environ=self.environ,
                ):
                    self.verified[model.ledger_id] = model.commit
                    self.views.setdefault(model.ledger_id, {}).update(model.views)
            self.asked.update(missing)
            return [
                ForeignModel(
                    i, c, {p: self.views[i][p] for p in paths if p in self.views.get(i, {})}
                )
                for i, c in self.verified.items()
            ]

    def failing(self) -> list[tuple[str, str, str]]:
        """``(ledger id, remote, commit)`` of the fetched ledgers that do not verify here (one
        per ledger id, as blame keeps one); known once the verified ones were asked."""
        seen = set(self.verified)
        out = []
        for ref in self.refs:
            if ref[0] not in seen:
                seen.add(ref[0])
                out.append(ref)
        return out

    def unverified(self, paths: list[str]) -> list[ForeignModel]:
        """The models of ``paths`` in the fetched ledgers that do not verify here (each one
        folded once, at the first call; never cached, never used to attribute a line)."""
        with self.lock:
            if self._unverified is None:
                self._unverified = {
                    ref: unverified_slices(self.root, ref[0], ref[2], self.environ)
                    for ref in self.failing()
                }
            return [
                ForeignModel(
                    ledger_id,
                    commit,
                    {
                        p: ForeignFile.from_slice(json.loads(slices[p]), -1)
                        for p in paths
                        if slices and p in slices
                    },
                )
                for (ledger_id, _, commit), slices in self._unverified.items()
            ]


def unverified_fix(ledger_id: str, remote: str) -> str:
    """The one-line way out for a fetched ledger that does not verify here."""
    from ledger._evidence.remote import refetch_command  # noqa: PLC0415 -- the cold path's

    return (
        f"{refetch_command(remote, ledger_id)}"
        " (a key not pinned: commit the teammate's .orchestration/keys/<kid>.json)"
    )


def _fetched_refs(root: Path, environ: Mapping[str, str] | None) -> list[tuple[str, str, str]]:
    """``(ledger id, remote, commit)`` of the fetched evidence refs (the ref files, else git)."""
    refs = _read_fetched_refs(root)
    if refs is None:
        from ledger._evidence.remote import fetched_ledgers  # noqa: PLC0415

        refs = fetched_ledgers(root, environ)
    return refs


def _cached_views(
    cache_dir: Path, ledger_id: str, index: dict[str, Any], paths: list[str]
) -> dict[str, ForeignFile] | None:
    """The cached slices of ``paths``, or ``None`` when one the index names cannot be read
    or none were folded yet (the index only says that this user verified the commit)."""
    if index.get("slices") is None:
        return None
    views: dict[str, ForeignFile] = {}
    for path in paths:
        digest = index["slices"].get(path)
        if digest is None:
            continue  # the teammate's records never described this file
        data = _read_slice(cache_dir, ledger_id, digest)
        if data is None:
            return None
        views[path] = ForeignFile.from_slice(data, int(index["seq"]))
    return views


def _read_fetched_refs(root: Path) -> list[tuple[str, str, str]] | None:
    """``(ledger id, remote, commit)`` of the fetched evidence refs, read from the repository's
    ref files (loose refs over ``packed-refs``), as git reads them: two git processes (its
    config, then ``for-each-ref``) cost more than the rest of a warm blame. ``None`` when the
    layout is not the files backend this reads (reftable, an unreadable ``.git``): ask git.
    Where a ref points is never trusted for being here (see the module docstring)."""
    git_dir = root / ".git"
    try:
        if git_dir.is_file():
            pointer = git_dir.read_text(encoding="utf-8").strip()
            if not pointer.startswith("gitdir: "):
                return None
            git_dir = (root / pointer[len("gitdir: ") :]).resolve()
        common = git_dir
        if (git_dir / "commondir").is_file():
            common = (
                git_dir / (git_dir / "commondir").read_text(encoding="utf-8").strip()
            ).resolve()
        if (common / "reftable").exists() or not (common / "refs").is_dir():
            return None
        found: dict[str, str] = {}
        try:
            packed = (common / "packed-refs").read_text(encoding="utf-8")
        except FileNotFoundError:
            packed = ""
        for line in packed.splitlines():
            oid, _, name = line.partition(" ")
            if name.startswith(_FETCHED) and _OBJECT_ID.fullmatch(oid):
                found[name] = oid
        loose = common / _FETCHED
        if loose.is_dir():
            for folder in loose.iterdir():
                if not folder.is_dir():
                    continue
                for ref in folder.iterdir():
                    oid = ref.read_text(encoding="utf-8").strip() if ref.is_file() else ""
                    if _OBJECT_ID.fullmatch(oid):
                        found[f"{_FETCHED}{folder.name}/{ref.name}"] = oid
    except (OSError, UnicodeDecodeError):
        return None
    out = []
    for name in sorted(found):
        remote, _, ledger_id = name[len(_FETCHED) :].rpartition("/")
        if remote and "/" not in remote and _LEDGER_ID.fullmatch(ledger_id):
            out.append((ledger_id, remote, found[name]))
    return out
