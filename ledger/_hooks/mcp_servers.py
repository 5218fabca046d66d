"""The ``ledger mcp`` servers running for this user, and which ledger each one is.

A server answers Claude Code's ``mcp_tool`` hooks for the whole session, so it can outlive an
upgrade (or a downgrade, or an uninstall) of the ledger it was started from. It then refuses
every hook call (:meth:`ledger._mcp.McpTools.hook`), and Claude Code's ``onFailure: "block"``
blocks each gated action; ``ledger doctor`` says which server it is and how to restart it.

Each server announces itself with a file in ``<state home>/mcp-servers/<pid>.json`` (its pid,
version, workspace, installation and start time) that it holds locked (``flock``) for as long
as it runs. A reader takes the lock it can get as proof that the server is gone: a server
killed with SIGKILL leaves its file, but no lock, and a recycled pid changes nothing. Readers
write nothing (``ledger doctor`` only reports); the next server of that pid replaces the file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Final

from ledger._startup.namedtuple import NamedTuple
from ledger._version import __version__
from ledger._workspace import state_home

__all__ = [
    "RESTART_SERVER",
    "RunningServer",
    "announced",
    "installed_version",
    "running_servers",
    "version_file",
]

#: How a person restarts a server (the refusal's and doctor's way out).
RESTART_SERVER: Final = (
    "restart the server (Claude Code: /mcp, then reconnect ledger; or start a new session)"
)

_FOLDER: Final = "mcp-servers"
_VERSION: Final = re.compile(r'__version__\s*=\s*"([^"]+)"')
#: The most server files read (a folder flooded with files costs doctor nothing more).
_MAX_FILES: Final = 256


class RunningServer(NamedTuple):
    """One running ``ledger mcp`` server, as it announced itself."""

    pid: int
    version: str
    root: str | None
    install: str
    started: float

    def installed(self) -> str | None:
        """The version installed now where the server was started from (None: gone)."""
        return installed_version(version_file(self.install))


def version_file(install: str) -> Path:
    """The version file of the ledger installed in ``install`` (the folder holding ``ledger/``)."""
    return Path(install) / "ledger" / "_version.py"


def _install_dir() -> str:
    return str(Path(__file__).resolve().parents[2])


def installed_version(path: Path) -> str | None:
    """The version the version file at ``path`` names now, or None when it cannot be read."""
    try:
        found = _VERSION.search(path.read_text(encoding="utf-8"))
    except OSError:
        return None
    return found.group(1) if found is not None else None


@contextlib.contextmanager
def announced(root: str | None, environ: Mapping[str, str] | None = None) -> Iterator[None]:
    """Announce this process as a ``ledger mcp`` server of ``root`` while the block runs.

    Best effort: a server that cannot write its file still serves (doctor then cannot name
    it; the server's own refusal does not depend on it).
    """
    folder = state_home(environ) / _FOLDER
    path = folder / f"{os.getpid()}.json"
    fd = None
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        text = json.dumps(
            {
                "pid": os.getpid(),
                "version": __version__,
                "root": root,
                "install": _install_dir(),
                "started": time.time(),
            }
        )
        os.write(fd, text.encode("utf-8"))
    except OSError:
        if fd is not None:
            os.close(fd)
        fd = None
    try:
        yield
    finally:
        if fd is not None:
            with contextlib.suppress(OSError):
                path.unlink()
            os.close(fd)


def running_servers(environ: Mapping[str, str] | None = None) -> list[RunningServer]:
    """The servers running now (their files still locked), oldest first."""
    folder = state_home(environ) / _FOLDER
    try:
        names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".json"))[:_MAX_FILES]
    except OSError:
        return []
    found = []
    for name in names:
        server = _running(folder / name)
        if server is not None:
            found.append(server)
    return sorted(found, key=lambda s: s.started)


def _running(path: Path) -> RunningServer | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            pass  # held: the server runs
        else:
            return None  # nobody holds it: the server is gone
        data = json.loads(os.read(fd, 64 * 1024) or b"null")
        return RunningServer(
            pid=int(data["pid"]),
            version=str(data["version"]),
            root=data["root"] if isinstance(data.get("root"), str) else None,
            install=str(data["install"]),
            started=float(data["started"]),
        )
    except (OSError, ValueError, TypeError, KeyError):
        return None
    finally:
        os.close(fd)
