"""Small file-system helpers shared by every layer: one atomic writer.

Derived files (caches, settings written by ``ledger install``, exports) are replaced whole, never
edited in place: write a temporary file in the same directory, flush, then ``os.replace`` (atomic
on POSIX), so a reader sees the old file or the new one, never half of either.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from ledger._workspace import ledger_home

__all__ = ["atomic_write", "cache_secret", "cache_secret_path", "seal", "unseal"]

_SECRET_FILE: Final = "cache.secret"  # noqa: S105 -- a file name, not a secret
_SECRET_BYTES: Final = 32


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


def cache_secret_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the per-user MAC secret of the workspace caches is kept (in the ledger home)."""
    return ledger_home(environ) / _SECRET_FILE


def cache_secret(environ: Mapping[str, str] | None = None) -> bytes | None:
    """The per-user MAC secret, created on first use; ``None`` when it cannot be had (then
    caches are neither trusted nor written, and every call rebuilds: slower, same answers).

    A file shorter than a created secret (emptied, truncated, ``/dev/null`` shown in its place
    by a sandbox) is no secret: a MAC keyed with it is one anybody can compute.
    """
    path = cache_secret_path(environ)
    try:
        return _usable(path.read_bytes())
    except FileNotFoundError:
        pass
    except OSError:
        return None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(os.urandom(_SECRET_BYTES))
        return _usable(path.read_bytes())
    except FileExistsError:  # another hook process created it first
        try:
            return _usable(path.read_bytes())
        except OSError:
            return None
    except OSError:
        return None


def _usable(secret: bytes) -> bytes | None:
    return secret if len(secret) >= _SECRET_BYTES else None


def seal(
    payload: bytes, environ: Mapping[str, str] | None = None, *, secret: bytes | None = None
) -> bytes | None:
    """``payload`` with an HMAC-SHA256 line under the per-user cache secret in front, for a
    derived cache in the workspace; ``None`` when there is no secret (then write no cache).

    A cache an agent could write must never change a decision: only what this user's ledger
    wrote (knowing the secret outside the workspace) is read back (:func:`unseal`).

    Args:
        secret: the secret, when the caller already holds it (else read from the ledger home).
    """
    key = secret if secret is not None else cache_secret(environ)
    if key is None:
        return None
    return hmac.new(key, payload, hashlib.sha256).hexdigest().encode() + b"\n" + payload


def unseal(
    raw: bytes, environ: Mapping[str, str] | None = None, *, secret: bytes | None = None
) -> bytes | None:
    """The payload :func:`seal` wrapped, or ``None`` when the MAC does not verify (tampered,
    foreign, garbage) or there is no secret: the caller then rebuilds from the source."""
    key = secret if secret is not None else cache_secret(environ)
    if key is None:
        return None
    mac, _, payload = raw.partition(b"\n")
    expected = hmac.new(key, payload, hashlib.sha256).hexdigest().encode()
    return payload if hmac.compare_digest(mac, expected) else None
