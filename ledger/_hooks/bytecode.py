"""Whether a ``.pyc`` runs anything but its source: the tripwire's ``bytecode`` rule.

The next interpreter that imports a module runs its ``__pycache__`` entry instead of its
source whenever the header matches the source [PEP 3147, PEP 552], so a ``.pyc`` compiled from
other code behind the real header runs in the next hook process as surely as an edited ``.py``.
Judging one compiles its source once (1-20 ms). The verdicts are kept, per user, across
processes and workspaces (:class:`JudgedBytecode`), and a person's ``ledger install`` judges
the whole hook path's (:func:`judge_hook_bytecode`): a new workspace's first hook calls, and a
resident process's, find every ``.pyc`` of the hook path judged and pay one ``stat`` each.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from ledger._governance.analysis.runs_later import racy_since
from ledger._workspace import atomic_write, cache_secret, seal, state_home, unseal

__all__ = ["FAITHFUL", "JudgedBytecode", "bytecode_digest", "judge_hook_bytecode"]

#: The digest of a ``.pyc`` no interpreter would run instead of its source: the compilation of
#: that source, or one its header does not match (Python recompiles then).
FAITHFUL: Final = "compiled-from-its-source"
#: A ``.pyc`` read at most (ledger's largest is ~100 KB).
_BYTECODE_READ_LIMIT: Final = 16 * 1024 * 1024


def bytecode_digest(cached: str) -> str:
    """:data:`FAITHFUL` for a ``.pyc`` that runs nothing but its source: the one Python itself
    writes at the first import (or pip at install), a stale one, or one with no source beside
    it (only a ``.pyc`` outside ``__pycache__`` is imported without its source); otherwise
    ``foreign:<sha256>``: a ``.pyc`` whose header the current source passes (so the next
    interpreter runs it) and whose code is not the source's compiled [PEP 3147, PEP 552].
    Read only when its stat moved: once per ``.pyc`` Python writes."""
    import importlib.util  # noqa: PLC0415 -- only when a .pyc appeared or changed

    try:
        with open(cached, "rb") as handle:
            data = handle.read(_BYTECODE_READ_LIMIT + 1)
        source_path = importlib.util.source_from_cache(cached)
        with open(source_path, "rb") as handle:
            source = handle.read()
        info = os.stat(source_path)  # noqa: PTH116
    except (OSError, ValueError, NotImplementedError):
        return FAITHFUL  # nothing to compare with: the interpreter imports no such .pyc
    foreign = "foreign:" + hashlib.sha256(data).hexdigest()
    if len(data) > _BYTECODE_READ_LIMIT:
        return foreign
    key = (foreign, hashlib.sha256(source).hexdigest(), int(info.st_mtime), info.st_size)
    known = _BYTECODE_VERDICTS.get(key)
    if known is None:
        known = _bytecode_verdict(data, source, source_path, info, foreign)
        if len(_BYTECODE_VERDICTS) >= _BYTECODE_VERDICTS_LIMIT:
            _BYTECODE_VERDICTS.clear()
        _BYTECODE_VERDICTS[key] = known
    return known


#: Verdicts this process reached, by the exact bytes of the ``.pyc`` and of its source (and the
#: source's mtime and size, which the header is checked against): the resident decider arms
#: each workspace it serves, and compiling ~200 modules again for each would cost a second.
_BYTECODE_VERDICTS: dict[tuple[str, str, int, int], str] = {}
_BYTECODE_VERDICTS_LIMIT: Final = 8192


def _bytecode_verdict(
    data: bytes, source: bytes, source_path: str, info: os.stat_result, foreign: str
) -> str:
    import importlib.util  # noqa: PLC0415 -- loaded by bytecode_digest already
    import marshal  # noqa: PLC0415

    if len(data) < 16 or data[:4] != importlib.util.MAGIC_NUMBER:
        return FAITHFUL  # rejected at import, and rewritten from the source
    flags = int.from_bytes(data[4:8], "little")
    if flags & ~0b11:
        return FAITHFUL  # invalid flags: rejected at import
    if flags & 0b1 and flags & 0b10:  # a checked hash-based .pyc
        if data[8:16] != importlib.util.source_hash(source):
            return FAITHFUL
    elif not flags & 0b1:  # timestamp-based: the source's mtime and size in the header
        stamp = (int(info.st_mtime) & 0xFFFFFFFF, info.st_size & 0xFFFFFFFF)
        if (int.from_bytes(data[8:12], "little"), int.from_bytes(data[12:16], "little")) != stamp:
            return FAITHFUL
    # Loaded as it is (an unchecked hash-based .pyc is loaded whatever the source says).
    try:
        code = marshal.loads(data[16:])  # noqa: S302 -- built to compare, never run
        expected = compile(source, source_path, "exec", dont_inherit=True, optimize=0)
    except (ValueError, EOFError, TypeError, SyntaxError):
        return foreign
    return FAITHFUL if code == expected else foreign


# --- the verdicts kept per user ---------------------------------------------------------------

_KEPT_LIMIT: Final = 8192
_FORMAT: Final = 1

Stamp = tuple[int, int, int]  # ctime_ns, size, inode


def _stamp(info: os.stat_result) -> Stamp:
    return (info.st_ctime_ns, info.st_size, info.st_ino)


class JudgedBytecode:
    """The verdicts of :func:`bytecode_digest` this user's ledger reached, by the ``.pyc``'s
    path and the stat of the ``.pyc`` and of its source (``ctime``, size, inode: a rewrite
    moves ``ctime``, which no user can set back, and the tripwire trusts nothing more for any
    file it watches). Kept in ``$STATE/tripwire/bytecode``, sealed under the per-user secret
    (the agent can read neither): a file it cannot verify is started afresh, so this only
    ever saves a compile, never changes a verdict."""

    def __init__(self, path: Path, environ: Mapping[str, str] | None) -> None:
        self.path = path
        self._environ = environ
        self._secret: bytes | None = None
        self._secret_read = False
        self._entries: dict[str, list[int | str]] | None = None
        self._loaded_stat: Stamp | None = None
        self._dirty = False

    @classmethod
    def for_user(cls, environ: Mapping[str, str] | None = None) -> JudgedBytecode:
        """This user's verdicts (one instance per file in a process: a resident one keeps
        what it loaded and judged)."""
        path = state_home(environ) / "tripwire" / "bytecode"
        found = _INSTANCES.get(path)
        if found is None:
            found = cls(path, environ)
            _INSTANCES[path] = found
        return found

    def _key(self) -> bytes | None:
        """The per-user secret, read when a verdict is first looked up or kept: a hook call
        whose ``.pyc`` did not move reads no secret for this."""
        if not self._secret_read:
            self._secret, self._secret_read = cache_secret(self._environ), True
        return self._secret

    def _load(self) -> dict[str, list[int | str]]:
        try:
            info = os.stat(self.path)  # noqa: PTH116
        except OSError:
            info = None
        stamp = None if info is None else _stamp(info)
        if self._entries is not None and (stamp == self._loaded_stat or self._dirty):
            return self._entries
        entries: dict[str, list[int | str]] = {}
        secret = self._key() if info is not None else None
        if secret is not None:
            try:
                payload = unseal(self.path.read_bytes(), secret=secret)
                data = json.loads(payload) if payload is not None else None
            except (OSError, ValueError):
                data = None
            if isinstance(data, dict) and data.get("v") == _FORMAT:
                kept = data.get("pyc")
                if isinstance(kept, dict):
                    entries = {k: v for k, v in kept.items() if isinstance(v, list) and len(v) == 7}
        self._entries, self._loaded_stat = entries, stamp
        return entries

    def verdict(self, cached: str, info: os.stat_result, *, judge: bool = True) -> str | None:
        """The verdict on the ``.pyc`` at ``cached`` (stat ``info``): the kept one when neither
        it nor its source moved since, else judged now and kept (``judge=False``: ``None``,
        and nothing is compiled)."""
        source = _source_stamp(cached)
        entries = self._load()
        stamps = [*_stamp(info), *(source or (-1, -1, -1))]
        kept = entries.get(cached)
        if kept is not None and kept[:6] == stamps and isinstance(kept[6], str):
            return kept[6]
        if not judge:
            return None
        digest = bytecode_digest(cached)
        racy = racy_since()  # a verdict on a file changed since is not kept under its stat
        if source is not None and info.st_ctime_ns < racy and source[0] < racy:
            if len(entries) >= _KEPT_LIMIT:
                entries.clear()
            entries[cached] = [*stamps, digest]
            self._dirty = True
        return digest

    def save(self) -> None:
        """Write what was judged since the last save (best effort: a lost write only costs a
        compile later)."""
        if not self._dirty or self._entries is None or self._key() is None:
            return
        body = json.dumps({"pyc": self._entries, "v": _FORMAT}, separators=(",", ":"))
        wrapped = seal(body.encode(), secret=self._key())
        if wrapped is None:
            return
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            atomic_write(self.path, wrapped, mode=0o600)
            self._loaded_stat = _stamp(os.stat(self.path))  # noqa: PTH116
        except OSError:
            return
        self._dirty = False


_INSTANCES: dict[Path, JudgedBytecode] = {}


def _source_stamp(cached: str) -> Stamp | None:
    import importlib.util  # noqa: PLC0415 -- only when a .pyc's stat moved

    try:
        return _stamp(os.stat(importlib.util.source_from_cache(cached)))  # noqa: PTH116
    except (OSError, ValueError, NotImplementedError):
        return None


def judge_hook_bytecode(environ: Mapping[str, str] | None = None) -> int:
    """Judge the ``.pyc`` of every module of the hook path, and keep the verdicts for this
    user (a person's ``ledger install``): the hook processes that follow, and a resident
    process's first calls, then compile nothing. Imports the hook path's modules this process
    has not (what any hook process imports); returns how many ``.pyc`` were judged."""
    import importlib  # noqa: PLC0415
    import sys  # noqa: PLC0415

    from ledger._governance.analysis.hook_modules import HOOK_MODULES  # noqa: PLC0415
    from ledger._governance.analysis.runs_later import hook_bytecode_files  # noqa: PLC0415

    for name in sorted(HOOK_MODULES - set(sys.modules)):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001, S112 -- one not importable here is no hook's either
            continue
    judged = JudgedBytecode.for_user(environ)
    count = 0
    for cached in hook_bytecode_files():
        try:
            info = os.stat(cached)  # noqa: PTH116
        except OSError:
            continue
        judged.verdict(cached, info)
        count += 1
    judged.save()
    return count
