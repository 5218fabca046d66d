"""What a tool call found before it ran: kept by the pre hook, read by the post hook.

The pre and post hooks of one call run in different processes. For the post record's exact
diff (:mod:`ledger._governance.attribution`) the post hook needs the old side of each file:

* file tools (Write, Edit, ApplyPatch ...): the SHA-256 of each target before the call, its
  bytes kept as a content blob (``.orchestration/.cache/blobs/<sha256>``);
* shell commands: a bounded stat-tuple snapshot of the working tree (as git-ai does), within a
  time and file budget, plus the blobs of the targets the shell analyzer names. What changed
  between the two snapshots is what the command wrote; a file whose old bytes were not kept
  gets ``exact: false`` and its lines become ``unknown`` in blame, never a guess.

The snapshot lives in ``.orchestration/.cache/before/<invocation id>.json`` and is deleted by
the post hook. It is a cache: a missing or unreadable one only costs exactness, and a blob is
used only when its bytes hash to its name.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from _thread import get_ident
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ledger._evidence.secrets import find_secrets, looks_secret_path
from ledger._startup.namedtuple import NamedTuple

__all__ = [
    "BLOB_LIMIT",
    "SKIP_DIRS",
    "SNAPSHOT_FILES",
    "SNAPSHOT_SECONDS",
    "Before",
    "Recorded",
    "StatSnapshot",
    "keep_blob",
    "load_before",
    "read_blob",
    "recorded_version",
    "recorded_with_content",
    "remember_recorded",
    "save_before",
    "stat_snapshot",
]

BLOB_LIMIT: Final = 512 * 1024
SKIP_DIRS: Final = frozenset({".git", ".orchestration", "node_modules"})
SNAPSHOT_SECONDS: Final = 0.3
SNAPSHOT_FILES: Final = 20_000
_KEEP: Final = 64
_MAX_AGE_SECONDS: Final = 24 * 3600


class StatSnapshot(NamedTuple):
    """``relative path -> (mtime_ns, size, inode)`` of the working tree's files."""

    files: dict[str, tuple[int, int, int]]
    complete: bool
    """False when the time or file budget ran out before the walk finished."""


def stat_snapshot(
    root: str, *, seconds: float = SNAPSHOT_SECONDS, max_files: int = SNAPSHOT_FILES
) -> StatSnapshot:
    """Walk ``root`` (skipping :data:`SKIP_DIRS` and symlinks) within the budget."""
    deadline = time.monotonic() + seconds
    files: dict[str, tuple[int, int, int]] = {}
    stack = [""]
    while stack:
        prefix = stack.pop()
        try:
            entries = os.scandir(os.path.join(root, prefix) if prefix else root)  # noqa: PTH118
        except OSError:
            continue
        with entries:
            for entry in entries:
                rel = f"{prefix}/{entry.name}" if prefix else entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in SKIP_DIRS:
                            stack.append(rel)
                    elif entry.is_file(follow_symlinks=False):
                        st = entry.stat(follow_symlinks=False)
                        files[rel] = (st.st_mtime_ns, st.st_size, st.st_ino)
                except OSError:
                    continue
                if len(files) >= max_files or time.monotonic() > deadline:
                    return StatSnapshot(files, complete=False)
    return StatSnapshot(files, complete=True)


def keep_blob(cache_dir: Path, data: bytes, *, path: str | None = None) -> str:
    """Keep ``data`` as ``blobs/<sha256>`` (best effort) and return its SHA-256.

    Never a copy of what looks secret: a file named like one (``.env*``, keys, credential
    stores; ``path``) or bytes the secret detector flags are hashed, not kept (their lines then
    lose exactness in blame, never their attribution). Blobs are 0600 in a 0700 folder, at most
    :data:`BLOB_LIMIT` bytes (the callers' bound), and pruned after a day.
    """
    digest = hashlib.sha256(data).hexdigest()
    if (path is not None and looks_secret_path(path)) or find_secrets(data):
        return digest
    folder = cache_dir / "blobs"
    blob = folder / digest
    if not blob.exists():
        try:
            # The copies hold what files said: this user's alone, whatever the umask (agent
            # tools may not read them either: analysis/protected.py).
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            for each in (cache_dir, folder):
                if each.stat().st_mode & 0o077:
                    each.chmod(0o700)  # a folder an older release made 0755
            tmp = blob.with_name(f".{blob.name}.{os.getpid()}.{get_ident()}")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            tmp.replace(blob)
            if digest.startswith("00"):  # about one new blob in 256 prunes the old ones
                _prune_blobs(folder)
        except OSError:
            pass  # a missing blob only costs exactness
    return digest


def _prune_blobs(folder: Path) -> None:
    cutoff = time.time() - _MAX_AGE_SECONDS
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.path)  # noqa: PTH108


def read_blob(cache_dir: Path, digest: str) -> str | None:
    """The text of blob ``digest``, or ``None`` when absent or not what its name says."""
    try:
        data = (cache_dir / "blobs" / digest).read_bytes()
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != digest:
        return None
    return data.decode("utf-8", "replace")


class Before(NamedTuple):
    """What the pre hook kept for one invocation."""

    hashes: dict[str, str | None]
    """Relative path -> SHA-256 before the call (``None``: did not exist; absent key: unknown,
    e.g. too large to keep)."""
    snapshot: StatSnapshot | None
    targets: Mapping[str, str] = {}
    """The path a file tool was given -> the real path PreToolUse allowed (the TOCTOU check
    of decision 0011: PostToolUse must find the write at the same real path)."""


def _path(cache_dir: Path, invocation_id: str) -> Path:
    return cache_dir / "before" / f"{hashlib.sha256(invocation_id.encode()).hexdigest()[:32]}.json"


def save_before(cache_dir: Path, invocation_id: str, before: Before) -> None:
    """Write the snapshot for the post hook (best effort)."""
    data: dict[str, Any] = {"hashes": before.hashes, "targets": dict(before.targets)}
    if before.snapshot is not None:
        data["files"] = before.snapshot.files
        data["complete"] = before.snapshot.complete
    path = _path(cache_dir, invocation_id)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        _prune(path.parent)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{get_ident()}")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        tmp.replace(path)


def _prune(folder: Path) -> None:
    """Drop snapshots whose post never came (a rejected ``ask``, a crashed client)."""
    entries = list(os.scandir(folder))
    if len(entries) <= _KEEP:
        return
    cutoff = time.time() - _MAX_AGE_SECONDS
    for entry in entries:
        with contextlib.suppress(OSError):
            if entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)  # noqa: PTH108


def load_before(cache_dir: Path, invocation_id: str) -> Before | None:
    """The snapshot the pre hook kept, removed from the cache; ``None`` when there is none."""
    path = _path(cache_dir, invocation_id)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        path.unlink()
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("hashes"), dict):
        return None
    snapshot = None
    if isinstance(data.get("files"), dict):
        snapshot = StatSnapshot(
            {str(k): (int(v[0]), int(v[1]), int(v[2])) for k, v in data["files"].items()},
            bool(data.get("complete")),
        )
    targets = data.get("targets")
    return Before(
        {str(k): (str(v) if v is not None else None) for k, v in data["hashes"].items()},
        snapshot,
        {str(k): str(v) for k, v in targets.items()} if isinstance(targets, dict) else {},
    )


# --- the last recorded version of each file (decision 0009) -----------------------------------
#
# The line model knows a file as the content its last record left (the record's ``sha256``). When
# a later call finds the file otherwise (a person edited it, ``git checkout``, a tool ledger does
# not govern), the post hook diffs that version against the call's old side (``drift`` in the
# record), so the lines nobody changed keep their agent. These pointers say which version the
# last record left, with the file's stat tuple then: a shell command whose old side the pre hook
# did not keep still has it when the stat tuple before the command is the recorded one (as
# git's index trusts an unchanged stat). A second index by content finds the version a copied or
# moved file came from. Like every blob here they are a cache: a wrong or stale pointer costs
# only attribution, because the fold uses a drift or a copy only when ``from_sha256`` /
# ``copied_sha256`` is the very version its model holds, and a blob is read only when its bytes
# hash to its name.


class Recorded(NamedTuple):
    """The last version of a file a record described."""

    path: str
    sha256: str
    stat: tuple[int, int, int] | None
    """``(mtime_ns, size, inode)`` when the disk held that version as the record was made."""


def _recorded_path(cache_dir: Path, relative: str) -> Path:
    digest = hashlib.sha256(relative.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return cache_dir / "recorded" / f"{digest}.json"


def _by_content_path(cache_dir: Path, sha256: str) -> Path:
    return cache_dir / "recorded" / "by-content" / sha256


def remember_recorded(
    cache_dir: Path, relative: str, sha256: str | None, stat: tuple[int, int, int] | None
) -> None:
    """Note that the record being made leaves ``relative`` at ``sha256`` (``None``: deleted)."""
    path = _recorded_path(cache_dir, relative)
    with contextlib.suppress(OSError):
        if sha256 is None:
            path.unlink(missing_ok=True)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{get_ident()}")
        data = {"path": relative, "sha256": sha256, "stat": list(stat) if stat else None}
        tmp.write_text(json.dumps(data), encoding="utf-8")
        if stat is not None and stat[0] >= tmp.stat().st_mtime_ns:
            # Racy (git's racy-git problem, Documentation/technical/racy-git.txt): a change
            # within the same timestamp tick could keep this stat tuple, so it proves nothing.
            data["stat"] = None
            tmp.write_text(json.dumps(data), encoding="utf-8")
        tmp.replace(path)
        content = _by_content_path(cache_dir, sha256)
        try:  # noted already (an unchanged file written again): a rename over it costs
            if content.read_text(encoding="utf-8") == relative:  # ~0.3 ms on ext4
                return
        except (OSError, ValueError):
            pass
        content.parent.mkdir(parents=True, exist_ok=True)
        tmp = content.with_name(f".{content.name}.{os.getpid()}.{get_ident()}")
        tmp.write_text(relative, encoding="utf-8")
        tmp.replace(content)


def recorded_version(cache_dir: Path, relative: str) -> Recorded | None:
    """The version of ``relative`` the last record left, as far as the cache knows."""
    try:
        data = json.loads(_recorded_path(cache_dir, relative).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("path") != relative:
        return None
    digest, stat = data.get("sha256"), data.get("stat")
    if not isinstance(digest, str):
        return None
    if isinstance(stat, list) and len(stat) == 3 and all(isinstance(x, int) for x in stat):
        return Recorded(relative, digest, (stat[0], stat[1], stat[2]))
    return Recorded(relative, digest, None)


def recorded_with_content(cache_dir: Path, sha256: str) -> str | None:
    """A path whose last record left it at ``sha256`` (the last one noted), if any."""
    try:
        relative = _by_content_path(cache_dir, sha256).read_text(encoding="utf-8")
    except OSError:
        return None
    found = recorded_version(cache_dir, relative)
    return relative if found is not None and found.sha256 == sha256 else None
