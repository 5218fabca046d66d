"""The policies' file readers: a regular file's bytes and SHA-256, read once per call and never
blocking on a FIFO or device, kept as blobs for diff previews and the next call's old side.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Final

from ledger._governance.policy_base import (
    _BLOB_LIMIT,
    _PREVIEW_LINES,
)
from ledger._governance.snapshot import (
    keep_blob,
)
from ledger._startup.namedtuple import NamedTuple


def _open_regular(path: str) -> int | None:
    """A read descriptor on ``path`` if it is a regular file, else None.

    A FIFO or device is never opened: opening a FIFO for reading blocks until a writer comes,
    which would hang the hook (decision 0005). ``O_NONBLOCK`` covers a swap between the stat and the
    open, and the descriptor is checked again.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # noqa: PTH116 -- no pathlib on the hook path
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        regular = False
    if not regular:
        os.close(fd)
        return None
    return fd


def _special_file(path: str) -> bool:
    """Whether ``path`` exists and is neither a regular file nor a directory."""
    try:
        mode = os.stat(path).st_mode  # noqa: PTH116 -- no pathlib on the hook path
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def sha256_file(path: str) -> str | None:
    """Hex SHA-256 of a file's bytes, or None when it is missing, unreadable or not a regular
    file (FIFOs and devices are never opened)."""
    fd = _open_regular(path)
    if fd is None:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return None


def _read_regular(path: str, limit: int) -> bytes | None:
    """Up to ``limit`` bytes of a regular file (None: missing, unreadable or not regular)."""
    fd = _open_regular(path)
    if fd is None:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            return handle.read(limit)
    except OSError:
        return None


class _FileContent(NamedTuple):
    head: bytes | None
    """The file's bytes when it holds at most ``_HEAD_LIMIT`` (None: bigger, or unreadable)."""
    sha256: str | None
    """Hex SHA-256 of the whole file (None: missing, unreadable, or not a regular file)."""


_HEAD_LIMIT: Final = 4 * (_BLOB_LIMIT + 1)  # what the mutation classifier may decode


def _read_content(path: str) -> _FileContent:
    """One read of a regular file: its bytes (when small enough to classify) and its hash.
    A bigger file is hashed by streaming the rest of the same descriptor; FIFOs and devices
    are never opened."""
    fd = _open_regular(path)
    if fd is None:
        return _FileContent(None, None)
    try:
        with os.fdopen(fd, "rb") as handle:
            head = handle.read(_HEAD_LIMIT + 1)
            digest = hashlib.sha256(head)
            if len(head) <= _HEAD_LIMIT:
                return _FileContent(head, digest.hexdigest())
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
            return _FileContent(None, digest.hexdigest())
    except OSError:
        return _FileContent(None, None)


def _stat(path: str) -> tuple[int, int, int] | None:
    """``(mtime_ns, size, inode)`` as :func:`ledger._governance.snapshot.stat_snapshot` keeps."""
    try:
        st = os.stat(path, follow_symlinks=False)  # noqa: PTH116
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _real_matches(matches: Iterable[str]) -> Iterator[str]:
    """The real paths of a glob's matches, resolving each directory once and each file only
    when it is a link (a glob over a big tree stays cheap, and a link still cannot hide)."""
    parents: dict[str, str] = {}
    for match in matches:
        head, name = os.path.split(match)
        if os.path.islink(match):  # noqa: PTH114
            yield os.path.realpath(match)
            continue
        real = parents.get(head)
        if real is None:
            real = parents[head] = os.path.realpath(head)
        yield os.path.join(real, name)  # noqa: PTH118


def _count_files(directory: str) -> int:
    total = 0
    for _, _, files in os.walk(directory):
        total += len(files)
        if total > 10_000:
            break
    return total


class FileReader:
    """One hook call's reads of workspace files: each file read once (memoized for the life of
    the call), its bytes kept in the cache's blobs for previews."""

    def __init__(self, cache_dir: Path | None) -> None:
        self.cache_dir = cache_dir
        self._contents: dict[str, _FileContent] = {}

    def content(self, absolute: str) -> _FileContent:
        """The file's first bytes and its SHA-256, read once per call (memoized)."""
        found = self._contents.get(absolute)
        if found is None:
            found = self._contents[absolute] = _read_content(absolute)
        return found

    def read_and_keep(self, absolute: str) -> tuple[str | None, str | None]:
        """(text, sha256) of a file, reading it once; the bytes are kept as a preview blob.

        Files over the blob limit are hashed by streaming and give no text.
        """
        data = _read_regular(absolute, _BLOB_LIMIT + 1)
        if data is None:
            return None, None
        if len(data) > _BLOB_LIMIT:
            return None, sha256_file(absolute)
        if self.cache_dir is None:
            return data.decode("utf-8", "replace"), hashlib.sha256(data).hexdigest()
        digest = keep_blob(self.cache_dir, data, path=absolute)  # previews, the next old side
        return data.decode("utf-8", "replace"), digest

    def blob_path(self, digest: str) -> Path | None:
        return None if self.cache_dir is None else self.cache_dir / "blobs" / digest

    def diff_preview(self, expected: str, absolute: str) -> str:
        blob = self.blob_path(expected.removeprefix("sha256:"))
        try:
            before = blob.read_text(encoding="utf-8", errors="replace") if blob else None
            after = Path(absolute).read_text(encoding="utf-8", errors="replace")
        except OSError:
            before = after = None
        if before is None or after is None:
            return "(no cached copy of the version this session saw; no preview)"
        import difflib  # noqa: PLC0415 -- only refusals pay for difflib

        lines = list(
            difflib.unified_diff(
                before.splitlines(),
                after.splitlines(),
                "seen by this session",
                "on disk now",
                lineterm="",
                n=1,
            )
        )
        return "\n".join(lines[:_PREVIEW_LINES])
