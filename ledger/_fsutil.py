"""Small file-system helpers shared by every layer: one atomic writer.

Derived files (caches, settings written by ``ledger install``, exports) are replaced whole, never
edited in place: write a temporary file in the same directory, flush, then ``os.replace`` (atomic
on POSIX), so a reader sees the old file or the new one, never half of either.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["atomic_write"]


def atomic_write(path: Path, data: bytes, *, mode: int = 0o644, durable: bool = False) -> None:
    """Replace ``path`` with ``data`` atomically; ``mode`` applies to a newly created file.

    Args:
        durable: also ``fsync`` the file before the rename (settings and exports; caches skip
            it, since losing one only costs a rebuild).

    Raises:
        OSError: the directory is not writable, the disk is full, ... (the temporary file is
            removed; ``path`` is unchanged).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
