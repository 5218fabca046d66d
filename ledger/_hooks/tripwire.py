"""The tripwire: layer 3, on the next hook call (decision 0011).

Layers 1 and 2 (the hooks' analysis, the client's sandbox) keep an agent away from what governs
it. Whatever still gets through is caught here, on the very next hook call: a fingerprint of
the **protected set** is sealed (HMAC under the per-user secret outside the workspace,
:func:`ledger._workspace.seal`) at each legitimate change, and every hook call compares it with the
disk, and the ledger's tail with the last head a hook or a person's command appended.

The protected set, each path with the rule for a change (:data:`Rule`):

* ``config``: the intents, ``hooks.yaml`` and the pinned keys (``.orchestration/keys/``). A
  person edits them (or pulls a teammate's) between calls, and that is accepted as it always
  was (the intents and hooks.yaml are recorded as ``governance.config_changed``); a change
  that appears *during* an agent's call (found by its PostToolUse) is tampering.
* ``strict``: every file in ``.git/hooks``. Any change (content, a new file, a removed one)
  that no ledger command made is tampering.
* ``client-config``: every client's settings and hook files, ``strict`` for what runs code or
  loosens governance (hooks, a status line command, credential helpers, MCP servers, the
  permission mode, unknown keys), not for what the client and the person write there as they
  use it and which runs nothing (the model, the theme, "don't ask again" rules): a table per
  client (:mod:`ledger._hooks.settings_keys`). Entries added to a list that only tightens
  (a ``permissions.deny`` or ``ask`` rule ...) are accepted, judged against the sealed copy
  (:func:`settings_tightened`); one removed trips.
* ``git-config``: ``.git/config`` and ``config.worktree``, ``strict`` for the settings git
  *executes* (aliases, ``core.fsmonitor``, filters, hooks paths, includes ...: the same table
  the command model refuses, ledger/_governance/analysis/shell_git.py). ``git remote add``,
  ``git push -u`` and ``git config user.name`` change the file, not what it runs.
* ``runtime``: the hook executable, its interpreter and the ``.pth`` files beside ledger's code;
  ``strict``, except that an upgrade of ledger itself (a new version runs) is accepted.
* ``bytecode``: the ``.pyc`` of every module the hook imported from source (ledger's, the
  standard library's, site-packages'): the next interpreter runs a ``.pyc`` whose header
  matches its source instead of the source. One that appears or changes is read, and is no
  change when it is its source compiled (Python writes one at a first import) or one no
  interpreter would load; otherwise it is tampering. ``revert`` removes it (Python recompiles).
* ``append-only``: the trust pins and the private-key folder's listing (names and stat only: keys
  are never read). ledger only adds to these; a file changed or removed is tampering.
* ``checkpoint``: the stored checkpoints. The hook adds one and prunes the oldest
  (``KEEP_CHECKPOINTS``); a checkpoint changed, or the newest removed, is tampering.

A change is compared by ``(ctime, size, inode)`` first (``ctime`` cannot be set back by a
user, unlike ``mtime``), and hashed only when that moved. Files up to :data:`COPY_LIMIT` are
kept content-addressed beside the seal, so ``ledger tamper revert`` can put them back.

Pure parts (:func:`compare`) take fingerprints; the I/O (stat, hash, the seal) is at the edges.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import json
import os
import re
import stat
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final, Literal, cast

from ledger._evidence.keys import private_key_dir, trust_pins_dir
from ledger._git import GIT_EXEC_KEYS
from ledger._governance.analysis.protected import watched_client_files
from ledger._governance.analysis.runs_later import (
    folder_entries,
    git_files,
    hook_bytecode_files,
    hook_install_files,
    login_shell_files,
    racy_since,
)
from ledger._hooks.bytecode import FAITHFUL, JudgedBytecode, bytecode_digest
from ledger._startup.namedtuple import NamedTuple
from ledger._startup.patterns import lazy_compile
from ledger._version import __version__
from ledger._workspace import (
    atomic_write,
    cache_secret,
    checkpoint_dir,
    seal,
    tripwire_dir,
    unseal,
)

__all__ = [
    "ARMED_KIND",
    "COPY_LIMIT",
    "SEALED_KINDS",
    "TAMPER_KIND",
    "TRIPWIRE_SCAN_LIMIT",
    "Change",
    "Entry",
    "Fingerprint",
    "Rule",
    "Seal",
    "TripwireStore",
    "Verdict",
    "bytecode_digest",
    "compare",
    "fingerprint",
    "git_exec_settings",
    "inspect",
    "ledger_problems",
    "next_seal",
    "protected_set",
    "rerooted",
    "restore",
    "settings_tightened",
    "tampering",
]

Rule = Literal[
    "config",
    "strict",
    "client-config",
    "mcp-config",
    "git-config",
    "runtime",
    "append-only",
    "checkpoint",
    "bytecode",
]
#: The kinds only the hook service and a person's commands append, each sealing the new head:
#: one in the ledger's tail the seal does not explain was appended around them. ``key.`` and
#: ``ledger.`` records (``ledger key``, ``ledger repair``) are checked by ``verify`` itself:
#: only a trusted key can introduce a key.
SEALED_KINDS: Final = ("hook.", "intent.", "governance.")
TAMPER_KIND: Final = "governance.tamper"
ARMED_KIND: Final = "governance.tripwire_armed"
#: Files up to this size are kept for ``ledger tamper revert``.
COPY_LIMIT: Final = 1024 * 1024
_SEAL_VERSION: Final = 1
#: Files read in one directory of the protected set (a planted flood is itself a change).
_DIR_LIMIT: Final = 512


class Entry(NamedTuple):
    """One file of the protected set as sealed: its rule, stat and content digest."""

    rule: Rule
    ctime_ns: int
    size: int
    inode: int
    digest: str | None  # SHA-256 of the content (of a code folder: its names); None when not read

    def same_stat(self, other: Entry) -> bool:
        return (self.ctime_ns, self.size, self.inode) == (other.ctime_ns, other.size, other.inode)


Fingerprint = dict[str, Entry]


class Change(NamedTuple):
    """One difference between the seal and the disk."""

    path: str
    what: Literal["changed", "added", "removed"]
    rule: Rule

    def describe(self) -> str:
        return f"{self.path} {self.what}"


class Seal(NamedTuple):
    """What the last legitimate change left: the fingerprint, the ledger's head, the version,
    and the workspace's real path it was sealed at (``None`` in seals older than that)."""

    files: Fingerprint
    head_seq: int
    head_hash: str | None
    version: str
    root: str | None = None


def rerooted(sealed: Seal, root: str) -> Seal:
    """The seal of a workspace moved since it was sealed (pure): its files under the old root
    named under ``root``, so that a move (``mv``, which keeps the ledger's home: nothing holds
    it at the old path) is no change. Files outside the workspace keep their names."""
    old = sealed.root or _sealed_root(sealed.files)
    if old is None or old == root:
        return sealed
    prefix = old.rstrip("/") + "/"
    files = {
        (f"{root}/{path[len(prefix) :]}" if path.startswith(prefix) else path): entry
        for path, entry in sealed.files.items()
    }
    return sealed._replace(files=files, root=root)


def _sealed_root(files: Fingerprint) -> str | None:
    """The workspace a seal without ``root`` was made for, from the governance files in it."""
    for name in ("/.orchestration/active_intents.yaml", "/.orchestration/hooks.yaml"):
        for path in files:
            if path.endswith(name):
                return path[: -len(name)]
    return None


# --- the protected set ------------------------------------------------------------------------


def protected_set(
    root: Path, ledger_id: str, environ: Mapping[str, str] | None = None
) -> dict[str, Rule]:
    """Every path of the protected set that exists now, with its rule (absolute paths)."""
    env = os.environ if environ is None else environ
    found: dict[str, Rule] = {}
    orchestration = root / ".orchestration"
    for name in ("active_intents.yaml", "hooks.yaml"):
        found[str(orchestration / name)] = "config"
    for path in _files_in(orchestration / "keys", "*", recursive=False):
        found[path] = "config"  # teammates' keys arrive by git pull, between calls
    home = Path(env.get("HOME") or Path.home())
    for base in (str(root), str(home)):
        single, listed = _client_files_under(base)
        found.update(single)
        for target, pattern, recursive, rule in listed:
            for path in _files_in(target, pattern, recursive=recursive):
                found[path] = rule
    for git_file, is_hooks in git_files(root, home, env):
        if is_hooks:
            for hook in _files_in(git_file, "*", recursive=False):
                found[hook] = "strict"
        else:
            found[str(git_file)] = "git-config"
    for shell_file in login_shell_files(home):
        found[str(shell_file)] = "strict"
    for install_file in hook_install_files(root):
        found[install_file] = "runtime"
    for cached in hook_bytecode_files(root):
        found[cached] = "bytecode"
    for outside in (trust_pins_dir(env), private_key_dir(env)):
        for path in _files_in(outside, "*", recursive=False):
            found[path] = "append-only"
    for path in _files_in(checkpoint_dir(ledger_id, env), "*", recursive=False):
        found[path] = "checkpoint"
    return found


@functools.lru_cache(maxsize=16)
def _client_files_under(
    base: str,
) -> tuple[dict[str, Rule], tuple[tuple[str, str, bool, Rule], ...]]:
    """Every client's files under ``base`` (the workspace or the home folder): the single
    files by path, and the folders to list with their globs (a warm process asks on every
    call, and the table is fixed)."""
    single: dict[str, Rule] = {}
    listed: list[tuple[str, str, bool, Rule]] = []
    for directory, pattern, recursive, rule in watched_client_files():
        target = f"{base}/{directory}" if directory else base
        if not recursive and not any(c in pattern for c in "*?["):
            single[f"{target}/{pattern}"] = cast("Rule", rule)  # one file: no listing
        else:
            listed.append((target, pattern, recursive, cast("Rule", rule)))
    return single, tuple(listed)


def _files_in(directory: Path | str, pattern: str, *, recursive: bool) -> Iterator[str]:
    """The files in ``directory`` whose names match ``pattern`` (``*.sample`` hooks aside).
    More than :data:`_DIR_LIMIT` of them (a planted flood) yields the directory itself, whose
    stat changes with any entry added or removed. Listed through
    :func:`~ledger._governance.analysis.runs_later.folder_entries` (one stat while the folder
    is unchanged)."""
    from fnmatch import fnmatchcase  # noqa: PLC0415 -- only when the directory exists

    folder = os.fspath(directory)
    entries = folder_entries(folder)
    if not entries:
        return
    suffix = (
        pattern[1:]
        if pattern.startswith("*") and not any(c in pattern[1:] for c in "*?[")
        else None
    )
    matched: list[str] = []
    for name, is_dir in entries:
        if recursive and is_dir:
            matched.extend(_files_in(os.path.join(folder, name), pattern, recursive=False))  # noqa: PTH118
        elif (
            name.endswith(suffix) if suffix is not None else fnmatchcase(name, pattern)
        ) and not name.endswith(".sample"):
            matched.append(os.path.join(folder, name))  # noqa: PTH118 -- scandir's own path
    if len(matched) > _DIR_LIMIT:
        yield folder
        return
    yield from sorted(matched)


def fingerprint(
    paths: Mapping[str, Rule],
    previous: Fingerprint | None = None,
    *,
    judged: JudgedBytecode | None = None,
) -> Fingerprint:
    """Stat every path; hash only those whose stat moved since ``previous`` (missing paths are
    left out: absence is compared by :func:`compare`). ``judged``: the verdicts on ``.pyc``
    files kept for this user (a ``.pyc`` judged before, here or in another workspace, is not
    compiled again; what this call judges is kept)."""
    found: Fingerprint = {}
    racy = racy_since()
    judge_until = time.monotonic_ns() + _BYTECODE_BUDGET_NS
    # The hot path, on every call (decision 0022: no change notification sees a write through
    # a mapping): ~480 files, most unchanged, one syscall each, no Path, no tuple.
    stat_of, exists, sealed_entry = os.stat, _exists, (previous or {}).get
    for path, rule in paths.items():
        old = sealed_entry(path)
        if old is None and not exists(path):
            continue  # absent before and now: no OSError raised and caught (a fifth of them)
        try:
            info = stat_of(path)
        except OSError:
            continue
        ctime, size, inode = info.st_ctime_ns, info.st_size, info.st_ino
        if old is not None and old.ctime_ns == ctime and old.size == size and old.inode == inode:
            # Unchanged: the sealed entry itself (no new tuple) when the rule is the same.
            found[path] = old if old.rule == rule else Entry(rule, ctime, size, inode, old.digest)
            continue
        digest: str | None
        if rule == "bytecode":
            # A .pyc judged before (and changed since) is judged at once, whatever the budget.
            wait = (old is None or old.digest == _PENDING) and time.monotonic_ns() > judge_until
            if judged is None:
                digest = _PENDING if wait else bytecode_digest(path)
            else:
                digest = judged.verdict(path, info, judge=not wait) or _PENDING
            if digest == _PENDING:  # judged at a later call: see _BYTECODE_BUDGET_NS
                ctime = _RACY_CTIME
        else:
            digest = _digest(path, info, rule)
        if digest is not None and ctime >= racy:
            ctime = _RACY_CTIME  # read again next time: see RACY_NS
        found[path] = Entry(rule, ctime, size, inode, digest)
    if judged is not None:
        judged.save()
    return found


def _exists(path: str) -> bool:
    """Whether ``path`` resolves, as :func:`os.stat` would (``access(F_OK)`` with the effective
    ids: a missing path costs no exception)."""
    return os.access(path, os.F_OK, effective_ids=_EFFECTIVE_IDS)


_EFFECTIVE_IDS: Final = os.access in os.supports_effective_ids


#: A file changed within ``RACY_NS`` of its reading (ledger/_governance/analysis/runs_later.py)
#: is sealed with this ``ctime``, so the next call reads it again: its stat could look unchanged
#: after a rewrite in the same tick of the coarse clock, with the same size.
_RACY_CTIME: Final = -1
#: The time one call spends judging ``.pyc`` files that appeared (each compiles its source):
#: a process's first seal, or the first after an upgrade, finds a hundred or more at once, and
#: judging them all would hold the ledger's lock past concurrent callers' deadline. The rest
#: are sealed :data:`_PENDING` (no change yet) and judged over the next calls. A ``.pyc`` that
#: was judged before and changed since is judged at once, whatever the budget.
_BYTECODE_BUDGET_NS: Final = 20_000_000
_PENDING: Final = "not-judged-yet"


def _digest(path: str, info: os.stat_result, rule: Rule) -> str | None:
    if rule == "runtime" and stat.S_ISDIR(info.st_mode):
        return _names_digest(path)
    if not stat.S_ISREG(info.st_mode) or (rule == "append-only" and _is_key(path)):
        return None
    try:
        with open(path, "rb") as handle:
            if rule in ("git-config", "client-config", "mcp-config"):
                return _content_digest(handle.read(COPY_LIMIT * 4), rule, path)
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return None


def _names_digest(folder: str) -> str | None:
    """A folder of ledger's code by the names in it, ``__pycache__`` aside: a module added or
    removed is a change, but the interpreter creating ``__pycache__`` at the first import of a
    package (an editable install is not precompiled) is not (it moved the folder's stat, and
    halted the next hook call)."""
    try:
        names = sorted(e.name for e in os.scandir(folder) if e.name != "__pycache__")
    except OSError:
        return None
    return hashlib.sha256("\0".join(names).encode("utf-8", "surrogateescape")).hexdigest()


_SECTION = lazy_compile(r'\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)')
_PLAIN_KEY = lazy_compile(r"[A-Za-z][A-Za-z0-9-]*")


def git_exec_settings(text: str) -> list[str]:
    """The lines of a git config file that make git run something, or read more config
    (sorted, with their section): the part of ``.git/config`` the tripwire holds fixed. A line
    this reading does not understand is kept too, so nothing hides in what it cannot parse
    [git-config(1) "Syntax"]."""
    section = ""
    kept: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        header = _SECTION.match(line)
        if header:
            name, subsection, line = header.groups()
            section = name.lower() if subsection is None else f"{name.lower()}.{subsection}"
            line = line.strip()
        if not line or line[0] in "#;":
            continue
        key = line.split("=", 1)[0].strip()
        full = f"{section}.{key.lower()}"
        if not _PLAIN_KEY.fullmatch(key) or re.fullmatch(GIT_EXEC_KEYS, full):
            kept.append(f"[{section}] {line}")
    return sorted(kept)


def _is_key(path: str) -> bool:
    return path.endswith((".pem", ".key")) or "/keys/" in path


def compare(sealed: Fingerprint, now: Fingerprint) -> list[Change]:
    """What differs between the seal and the disk (pure). An ``append-only`` or ``checkpoint``
    file that appeared is no change: ledger only ever adds those. A checkpoint removed is one
    only when nothing as new remains: ledger prunes from the old end (``KEEP_CHECKPOINTS``), and
    hook processes racing each other may write and prune out of order, but only the newest
    checkpoint anchors the tail (deleting it is what lets a truncation pass ``verify``)."""
    changes: list[Change] = []
    for path, entry in now.items():
        old = sealed.get(path)
        if old is entry:
            continue  # unchanged: :func:`fingerprint` hands back the sealed entry itself
        if entry.rule == "bytecode" and entry.digest in (FAITHFUL, _PENDING):
            continue  # Python wrote it, as it does at a first import: it runs the source
        if old is None:
            if entry.rule not in ("append-only", "checkpoint") and not _holds_nothing(entry):
                changes.append(Change(path, "added", entry.rule))
        elif old.digest != entry.digest or (entry.digest is None and not old.same_stat(entry)):
            changes.append(Change(path, "changed", old.rule))
    kept = [Path(p).name for p, e in now.items() if e.rule == "checkpoint"]
    newest = max(kept, default="")  # names are zero-padded sizes: they sort as the chain grows
    changes.extend(
        Change(path, "removed", old.rule)
        for path, old in sealed.items()
        if path not in now
        and old.rule != "bytecode"  # a cache cleared, or a module this process did not import
        and (old.rule != "checkpoint" or Path(path).name > newest)
        and not _holds_nothing(old)
    )
    return sorted(changes)


#: The digest of a client's settings or MCP file whose held-fixed part is empty: the client (or
#: the person) creates one the first time it keeps something of its own (a model, a "don't ask
#: again" rule, a counter), and such a file appearing or going runs nothing.
_NOTHING_HELD: Final = hashlib.sha256(b"{}").hexdigest()


def _holds_nothing(entry: Entry) -> bool:
    return entry.rule in ("client-config", "mcp-config") and entry.digest == _NOTHING_HELD


def tampering(
    changes: list[Change],
    *,
    during_call: bool,
    upgraded: bool,
    loosens: Callable[[Change], list[str]] | None = None,
    tightens: Callable[[Change], bool] | None = None,
) -> list[Change]:
    """The changes no legitimate actor explains (pure but for ``loosens`` and ``tightens``): a
    person's edit of the intents or ``hooks.yaml`` between calls is accepted (and recorded as
    ``governance.config_changed``) unless it loosens governance (``loosens`` says why: code the
    agent left running can edit between calls too, so a loosening waits for a person's
    ``ledger tamper accept``); the runtime's files change with an upgrade of ledger itself; a
    client's settings whose held part only gained entries that tighten (``tightens``: a deny
    rule added) restrict the agent further, whoever wrote them and whenever."""
    return [
        c
        for c in changes
        if not (c.rule == "config" and not during_call and not (loosens and loosens(c)))
        and not (c.rule == "runtime" and upgraded)
        and not (c.rule == "client-config" and tightens is not None and tightens(c))
    ]


def settings_tightened(
    store: TripwireStore, change: Change, sealed: Entry | None, now: Entry | None
) -> bool:
    """Whether a client's settings file changed only by entries added to lists that tighten
    (:func:`ledger._hooks.settings_keys.tightened_only`), from the copy kept under the seal and
    the file (the I/O edge of :func:`tampering`'s ``tightens``). Judged on the content this
    call's fingerprint hashed: the file read again must still have that digest (one that moved
    again since is judged at the next call). No copy kept (a file over :data:`COPY_LIMIT`, a copy
    gone): it cannot be told, and the change trips as any other."""
    if change.rule != "client-config" or change.what == "removed":
        return False
    if now is None or now.digest is None:
        return False
    before: bytes | None = None
    if change.what == "changed":
        before = store.copy_of(sealed, change.path) if sealed is not None else None
        if before is None:
            return False
    try:
        with open(change.path, "rb") as handle:
            after = handle.read(COPY_LIMIT * 4)
    except OSError:
        return False
    if _content_digest(after, "client-config", change.path) != now.digest:
        return False
    from ledger._hooks.settings_keys import tightened_only  # noqa: PLC0415 -- only on a change

    return tightened_only(change.path, before, after)


# --- the seal ---------------------------------------------------------------------------------


#: The last seal this process read or wrote, per seal file: ``(bytes on disk, secret, seal)``.
#: The resident decider reads, on every call, the seal its previous call wrote: the same bytes
#: under the same secret are the same seal, so its MAC and JSON are checked once. Any other
#: bytes are checked in full, so this never changes an answer.
_LAST_SEAL: dict[Path, tuple[bytes, bytes, Seal]] = {}
_LAST_SEAL_LIMIT: Final = 64


def _remember_seal(path: Path, raw: bytes, secret: bytes, sealed: Seal) -> None:
    if len(_LAST_SEAL) >= _LAST_SEAL_LIMIT and path not in _LAST_SEAL:
        _LAST_SEAL.clear()
    _LAST_SEAL[path] = (raw, secret, sealed)


#: The fingerprint last encoded for a seal, and its JSON: a hook call seals ~200 files, which
#: hardly ever changed since the call before (only the head moved), and encoding them is
#: most of writing the seal.
_LAST_FILES: list[tuple[Fingerprint, str]] = []


def _files_json(files: Fingerprint) -> str:
    """``files`` as the seal's JSON object (sorted keys, no spaces), reusing the last
    encoding when the fingerprint is equal to the one it was made of."""
    for known, encoded in _LAST_FILES:
        if known == files:
            return encoded
    encoded = json.dumps(
        {p: list(e) for p, e in sorted(files.items())}, sort_keys=True, separators=(",", ":")
    )
    _LAST_FILES[:] = [(dict(files), encoded)]
    return encoded


#: Seal files written while a caller waits for its answer, to ``fsync`` once it has it
#: (:func:`seal_sync_after_answer`); None: ``fsync`` each seal as it is written.
_DEFERRED_SYNC: contextvars.ContextVar[list[Path] | None] = contextvars.ContextVar(
    "ledger_deferred_seal_sync", default=None
)


@contextlib.contextmanager
def seal_sync_after_answer() -> Iterator[list[Path]]:
    """Inside: seals are written without ``fsync``, and listed in what this yields for
    :func:`sync_seals` once the answer is out (the resident decider). The decision itself, its
    ledger records, is ``fsync``-ed before the answer as always; the seal only tells the next
    call which head was appended legitimately, so a crash between the answer and this
    ``fsync`` can at worst leave a seal behind the ledger, which the next call reports as a
    tampering (fail-safe) for a person's ``ledger tamper accept``. One ``fsync`` fewer on the
    answer's path, of two."""
    pending: list[Path] = []
    token = _DEFERRED_SYNC.set(pending)
    try:
        yield pending
    finally:
        _DEFERRED_SYNC.reset(token)


def sync_seals(paths: list[Path]) -> None:
    """``fsync`` the seals written under :func:`seal_sync_after_answer` (best effort: a seal
    replaced since is the newer one, and is synced instead)."""
    for path in dict.fromkeys(paths):
        with contextlib.suppress(OSError):
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


class TripwireStore:
    """The seal of one ledger and the copies ``revert`` needs, outside the workspace."""

    def __init__(self, ledger_id: str, environ: Mapping[str, str] | None = None) -> None:
        self.directory = tripwire_dir(ledger_id, environ)
        self.path = self.directory / "seal"
        self._environ = environ
        self._secret: bytes | None = None

    def secret(self) -> bytes | None:
        if self._secret is None:
            self._secret = cache_secret(self._environ)
        return self._secret

    def exists(self) -> bool:
        return self.path.exists()

    def load(self) -> Seal | Literal["forged"] | None:
        """The seal; ``None`` when there is none; ``"forged"`` when its MAC does not verify."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError:
            return "forged"
        secret = self.secret()
        last = _LAST_SEAL.get(self.path)
        if last is not None and secret is not None and last[:2] == (raw, secret):
            return last[2]
        payload = unseal(raw, secret=secret) if secret is not None else None
        if payload is None or secret is None:
            return "forged"
        try:
            data = json.loads(payload)
            files = {p: Entry(*e) for p, e in data["files"].items()}
            root = data.get("root")
            sealed = Seal(
                files,
                int(data["head_seq"]),
                data["head_hash"],
                str(data["version"]),
                root if isinstance(root, str) else None,
            )
        except (ValueError, KeyError, TypeError):
            return "forged"
        _remember_seal(self.path, raw, secret, sealed)
        return sealed

    def save(self, sealed: Seal, *, kept: Fingerprint | None = None) -> bool:
        """Write the seal (and keep copies of small files); False when there is no secret.

        ``kept``: the files of a seal this store wrote before, whose copies were kept then: a
        file with the same digest is not looked for again (a hook call seals ~200 files, of
        which hardly any changed)."""
        secret = self.secret()
        if secret is None:
            return False
        rest = json.dumps(
            {
                "v": _SEAL_VERSION,
                "head_seq": sealed.head_seq,
                "head_hash": sealed.head_hash,
                "root": sealed.root,
                "version": sealed.version,
            },
            sort_keys=True,
            separators=(",", ":"),
        )
        # "files" sorts first: the same bytes as one json.dumps of the whole, sort_keys.
        payload = f'{{"files":{_files_json(sealed.files)},{rest[1:]}'.encode()
        wrapped = seal(payload, secret=secret)
        if wrapped is None:
            return False
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        kept = kept or {}
        for path, entry in sealed.files.items():
            old = kept.get(path)
            if old is not None and old.digest == entry.digest:
                continue
            if entry.size <= COPY_LIMIT and entry.rule not in (
                "append-only",
                "checkpoint",
                "bytecode",
            ):
                self.keep(path, entry)
        deferred = _DEFERRED_SYNC.get()
        _overwrite(self.path, wrapped, durable=deferred is None)
        if deferred is not None:
            deferred.append(self.path)
        _remember_seal(self.path, wrapped, secret, sealed)
        return True

    def keep(self, path: str, entry: Entry) -> None:
        """Keep a copy of the file sealed as ``entry`` (when it still has that content): for
        ``ledger tamper revert``, and to tell what a change of a client's settings did."""
        if entry.digest is None:
            return
        target = self.directory / "objects" / entry.digest
        if target.exists():
            return
        try:
            data = Path(path).read_bytes()
        except OSError:
            return
        if _content_digest(data, entry.rule, path) == entry.digest:
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            atomic_write(target, data, durable=False)

    def copy_of(self, entry: Entry, path: str) -> bytes | None:
        """The kept content of the file at ``path`` as sealed, if it still matches its digest
        (for a client's settings, the digest a seal written before the per-client key tables
        holds is of :func:`~ledger._hooks.settings_keys.legacy_client_settings`)."""
        if entry.digest is None:
            return None
        try:
            data = (self.directory / "objects" / entry.digest).read_bytes()
        except OSError:
            return None
        if _content_digest(data, entry.rule, path) == entry.digest:
            return data
        if entry.rule == "client-config":
            from ledger._hooks.settings_keys import legacy_client_settings  # noqa: PLC0415

            if hashlib.sha256(legacy_client_settings(data)).hexdigest() == entry.digest:
                return data
        return None


def _overwrite(path: Path, data: bytes, *, durable: bool) -> None:
    """Write the seal over itself, not through a renamed temporary file: every hook call writes
    it, and on ext4 a rename over an existing file (or a truncation to zero) makes the kernel
    write the new file's data out at once (``auto_da_alloc``), ~0.3 ms a call against ~20 us in
    place. Only writers and readers holding the ledger's append lock touch the seal, so none
    sees a write half done; a crash in the middle of one leaves bytes whose MAC fails, which the
    next call reports as a tampering (fail-safe, as a seal the crash left behind the ledger)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.pwrite(fd, view, len(data) - len(view)) :]
        os.ftruncate(fd, len(data))
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)


def _content_digest(data: bytes, rule: Rule, path: str) -> str:
    if rule == "git-config":
        settings = git_exec_settings(data.decode("utf-8", "replace"))
        return hashlib.sha256("\n".join(settings).encode()).hexdigest()
    if rule in ("client-config", "mcp-config"):
        # Imported here: only a settings file whose stat moved is read (not on the common call).
        from ledger._hooks import settings_keys  # noqa: PLC0415

        held = (
            settings_keys.client_settings(data, path)
            if rule == "client-config"
            else settings_keys.mcp_servers(data)
        )
        return hashlib.sha256(held).hexdigest()
    return hashlib.sha256(data).hexdigest()


def restore(store: TripwireStore, change: Change, sealed: Seal) -> bool:
    """Undo one change (``ledger tamper revert``): write the sealed content back, or remove a
    file added where only ledger adds. False when it cannot be undone here (no copy kept, an
    ``append-only`` file: a key is never rewritten from a copy)."""
    path = Path(change.path)
    if change.what == "added" or change.rule == "bytecode":  # Python rewrites a .pyc removed
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError:
            return False
        return True
    entry = sealed.files.get(change.path)
    if entry is None or entry.rule in ("append-only", "checkpoint"):
        return False
    data = store.copy_of(entry, change.path)
    if data is None:
        return False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data, durable=True)
    except OSError:
        return False
    return True


def encode_changes(changes: list[Change]) -> list[dict[str, Any]]:
    return [{"path": c.path, "what": c.what, "rule": c.rule} for c in changes]


# --- one hook call's check --------------------------------------------------------------------

#: Records read at most to check the ledger's tail against the seal.
TRIPWIRE_SCAN_LIMIT: Final = 100_000


class Verdict(NamedTuple):
    """What one hook call found: the tampering (one line each) and what to seal next."""

    problems: list[str]
    changes: list[Change]
    files: Fingerprint
    arm: bool  # no seal yet and none was ever armed: arm the tripwire now


def inspect(
    sealed: Seal | Literal["forged"] | None,
    now: Fingerprint,
    tail: tuple[int, str],
    records_after: Callable[[int], list[dict[str, Any]] | None],
    *,
    armed: bool,
    during_call: bool,
    reserved: tuple[str, ...],
    loosens: Callable[[Change], list[str]] | None = None,
    tightens: Callable[[Change], bool] | None = None,
) -> Verdict:
    """Compare the seal with the disk and the ledger's tail (pure but for ``records_after``,
    which reads the records from a seq on, or ``None`` when there are too many to read,
    ``loosens``, which says why a change of the configuration loosens governance, and
    ``tightens``, which says whether a change of a client's settings only tightens them:
    :func:`settings_tightened`). What is accepted is sealed as it now is."""
    if sealed is None:
        if not armed:
            return Verdict([], [], now, arm=True)
        return Verdict(["the tripwire's seal is gone"], [], now, arm=False)
    if sealed == "forged":
        return Verdict(["the tripwire's seal does not verify"], [], now, arm=False)
    upgraded = sealed.version != __version__
    found = tampering(
        compare(sealed.files, now),
        during_call=during_call,
        upgraded=upgraded,
        loosens=loosens,
        tightens=tightens,
    )
    problems = [_problem(c, during_call, loosens) for c in found]
    seq = tail[0]
    if (seq, tail[1]) != (sealed.head_seq, sealed.head_hash) and seq >= sealed.head_seq:
        records = records_after(sealed.head_seq)
        if records is None:
            problems.append(f"{seq - sealed.head_seq} records since the seal: too many to check")
        else:
            problems.extend(ledger_problems(sealed, tail, records, reserved))
    else:
        problems.extend(ledger_problems(sealed, tail, [], reserved))
    files = dict(now)
    for change in found:  # keep the sealed state of what was tampered with (for revert)
        if change.path in sealed.files:
            files[change.path] = sealed.files[change.path]
        else:
            files.pop(change.path, None)
    return Verdict(problems, found, files, arm=False)


def _problem(
    change: Change, during_call: bool, loosens: Callable[[Change], list[str]] | None
) -> str:
    why = loosens(change) if loosens and change.rule == "config" and not during_call else []
    if not why:
        return f"{change.path} was {change.what}"
    return (
        f"{change.path} was {change.what} between calls and loosens governance "
        f"({'; '.join(why)}): it takes effect once a person runs `ledger tamper accept` "
        "(`ledger tamper revert` puts the sealed version back)"
    )


def ledger_problems(
    sealed: Seal, tail: tuple[int, str], records: list[dict[str, Any]], reserved: tuple[str, ...]
) -> list[str]:
    """Why the ledger's tail does not follow from the sealed head (pure): ``records`` are the
    records from the sealed head's seq to the tail's. Application records (``ledger append``,
    embedding code) may come between; ledger's own kinds may not: only the hook service and a
    person's commands write those, and both seal the head as they append."""
    seq, digest = tail
    if (seq, digest) == (sealed.head_seq, sealed.head_hash):
        return []
    if seq < sealed.head_seq:
        return [f"the ledger ends at seq {seq}, before the sealed head (seq {sealed.head_seq})"]
    if not records or records[0].get("hash") != sealed.head_hash:
        return [f"the ledger's record at seq {sealed.head_seq} is not the one sealed"]
    for record in records[1:]:
        kind = str(record.get("kind"))
        if kind.startswith(reserved):
            return [
                f"seq {record.get('seq')} ({kind}) was appended by neither a hook nor a "
                "person's ledger command"
            ]
    return []


def next_seal(files: Fingerprint, head: tuple[int, str], root: str | None) -> Seal:
    return Seal(files, head[0], head[1], __version__, root)
