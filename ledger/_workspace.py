"""Workspace layout and discovery: where ``.orchestration/`` and its files live, where ledger's
per-user state lives, and the small file-system helpers every layer shares.

Derived files (caches, settings written by ``ledger install``, exports) are replaced whole, never
edited in place (:func:`atomic_write`): write a temporary file in the same directory, flush, then
``os.replace`` (atomic on POSIX), so a reader sees the old file or the new one, never half of
either. Caches are sealed with a per-user secret (:func:`seal`, :func:`unseal`).
"""

from __future__ import annotations

import os
import time
from _thread import get_ident
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from ledger._errors import WorkspaceNotFoundError

__all__ = [
    "HOME_ENV",
    "LOCAL_PATHS",
    "ORCHESTRATION_DIR",
    "ROOT_ENV",
    "SHARED_PATHS",
    "Workspace",
    "atomic_write",
    "cache_secret",
    "cache_secret_path",
    "checkpoint_dir",
    "find_root",
    "ledger_home",
    "scaffold",
    "seal",
    "state_home",
    "unseal",
    "utc_now",
]

ORCHESTRATION_DIR: Final = ".orchestration"
INTENTS_FILE: Final = "active_intents.yaml"
LEDGER_FILE: Final = "agent_trace.jsonl"
ROOT_ENV: Final = "LEDGER_ROOT"


class Workspace:
    """Paths of one workspace. Pure: constructing it touches no file."""

    __slots__ = ("root",)

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def orchestration(self) -> Path:
        """``<root>/.orchestration``."""
        return self.root / ORCHESTRATION_DIR

    @property
    def ledger_path(self) -> Path:
        """The append-only ledger, ``.orchestration/agent_trace.jsonl``."""
        return self.orchestration / LEDGER_FILE

    @property
    def keys_dir(self) -> Path:
        """Pinned public keys (the trusted keyring), committed with the workspace."""
        return self.orchestration / "keys"

    @property
    def quarantine_dir(self) -> Path:
        """Where ``ledger repair`` moves torn bytes."""
        return self.orchestration / "quarantine"

    @property
    def cache_dir(self) -> Path:
        """Derived data (projection caches, compiled scopes, preview blobs): never evidence,
        always safe to delete, never committed."""
        return self.orchestration / ".cache"

    @property
    def intents_path(self) -> Path:
        """``active_intents.yaml``: the intents agents work under."""
        return self.orchestration / INTENTS_FILE


INTENTS_TEMPLATE: Final = """\
# active_intents.yaml: the intents agents may work on, and the files each one owns.
# An agent selects one (`ledger intent select INT-001` in its shell) before it may write, and
# may then write only what owned_scope matches. Only an intent whose status is IN_PROGRESS can
# be selected; PLANNED, BLOCKED, COMPLETE (or DONE) and ABANDONED ones are refused, saying why.
# Errors are reported as file:line: what. Uncomment and edit the example:
#
# active_intents:
#     - id: "INT-001"                    # a letter, then letters, digits, _ . -
#       name: "JWT Authentication Migration"
#       status: "IN_PROGRESS"            # PLANNED | IN_PROGRESS | BLOCKED | COMPLETE | ABANDONED
#       owned_scope:                     # gitwildmatch globs, relative to the workspace root
#           - "src/auth/**"
#           - "src/middleware/jwt.ts"
#       constraints:
#           - "Must not use external auth providers"
#       acceptance_criteria:
#           - "Unit tests in tests/auth/ pass"
active_intents: []
"""


#: Committed with the repository: the same in every clone (docs/team.md).
SHARED_PATHS: Final = (
    "active_intents.yaml",
    "hooks.yaml",
    "hooks.json",
    "keys/",
    "README.md",
    ".gitignore",
)
#: Each clone's own, never committed: its ledger (two machines appending to one committed file
#: would fork its chain), the disclosures of its commitments (content: prompts, commands, file
#: contents), derived caches, quarantined torn bytes, ledgers written elsewhere.
LOCAL_PATHS: Final = (
    "agent_trace.jsonl",
    "disclosures.jsonl",
    ".cache/",
    "quarantine/",
    "other-ledgers/",
)
GITIGNORE_HEADER: Final = (
    "# This clone's own state, never committed: its ledger, derived caches, quarantined torn\n"
    "# bytes, ledgers written on other machines. Intents, hooks.yaml and keys/ (public keys)\n"
    "# are shared. Written by `ledger init`.\n"
)


def scaffold(orchestration: Path) -> list[str]:
    """Create what a new workspace needs beside the ledger, leaving existing files alone: an
    intents template, and a .gitignore for this clone's own files (an existing .gitignore gets
    the missing entries appended). Returns the names of the files created or completed."""
    written = []
    intents = orchestration / "active_intents.yaml"
    if not intents.exists():
        intents.write_text(INTENTS_TEMPLATE, encoding="utf-8")
        written.append(intents.name)
    ignore = orchestration / ".gitignore"
    current = ignore.read_text(encoding="utf-8") if ignore.exists() else ""
    have = {line.strip() for line in current.splitlines()}
    missing = [path for path in LOCAL_PATHS if path not in have]
    if missing:
        prefix = GITIGNORE_HEADER if not current else ("" if current.endswith("\n") else "\n")
        with ignore.open("a", encoding="utf-8") as handle:
            handle.write(prefix + "".join(f"{path}\n" for path in missing))
        written.append(ignore.name)
    return written


def find_root(
    explicit: str | os.PathLike[str] | None = None,
    *,
    start: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Path:
    """Locate the workspace root like git does.

    Order: ``explicit`` (``--root``), then ``$LEDGER_ROOT``, then the nearest directory from
    ``start`` (default: the current directory) upwards that contains ``.orchestration/``. A
    relative ``explicit`` or ``$LEDGER_ROOT`` is relative to ``start`` too (the resident
    decider finds the workspace of a caller in another directory).

    Raises:
        WorkspaceNotFoundError: nothing was found.
    """
    env = os.environ if environ is None else environ
    chosen = explicit if explicit is not None else env.get(ROOT_ENV)
    here = (start or Path.cwd()).absolute()
    if chosen:
        return here / Path(chosen).expanduser()  # an absolute path stays itself
    for candidate in (here, *here.parents):
        if (candidate / ORCHESTRATION_DIR).is_dir():
            return candidate
    raise WorkspaceNotFoundError(
        f"no {ORCHESTRATION_DIR}/ found in {here} or any parent; run `ledger init` or pass --root"
    )


def utc_now() -> str:
    """Current UTC time as RFC 3339 with microseconds, e.g. ``2026-11-21T10:43:00.123456Z``.

    Built from ``time`` rather than ``datetime`` to keep the hook path's imports small.
    """
    micros = time.time_ns() // 1000
    seconds, fraction = divmod(micros, 1_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{fraction:06d}Z"


HOME_ENV: Final = "LEDGER_HOME"


def ledger_home(environ: Mapping[str, str] | None = None) -> Path:
    """This user's ledger home, outside every workspace: ``$LEDGER_HOME``, else
    ``$XDG_CONFIG_HOME/ledger``, else ``~/.config/ledger``. Private keys, the pinned trust
    roots and the projection caches' MAC secret live here."""
    env = os.environ if environ is None else environ
    if env.get(HOME_ENV):
        return Path(env[HOME_ENV])
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "ledger"


def decider_dirs(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The folders a resident decider's socket can be in for this user (``ledger serve``,
    :func:`ledger._hooks.decider.decider_socket` picks one): ``$XDG_RUNTIME_DIR/ledger``, the
    ledger home's ``run/``, and ``/tmp/ledger-<uid>`` when a path would be too long for a
    socket. ``ledger install --hardened`` hides them from the agent's sandboxed shell: any
    process that reaches the socket can ask the decider, which runs outside the sandbox."""
    env = os.environ if environ is None else environ
    runtime = env.get("XDG_RUNTIME_DIR")
    found = [Path(runtime) / "ledger"] if runtime else []
    # The ledger home as the hook's thin client spells it (cli/_decider.py, no pathlib): from
    # the environment given, never this process's home.
    home = env.get(HOME_ENV) or os.path.join(  # noqa: PTH118
        env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or "/", ".config"),  # noqa: PTH118
        "ledger",
    )
    return [*found, Path(home) / "run", Path("/tmp") / f"ledger-{os.getuid()}"]  # noqa: S108


def state_home(environ: Mapping[str, str] | None = None) -> Path:
    """This user's ledger state directory, outside every workspace: ``$LEDGER_HOME/state``,
    else ``$XDG_STATE_HOME/ledger``, else ``~/.local/state/ledger``. The stored checkpoints and
    which ledger each workspace holds live here (:mod:`ledger._evidence.anchors`)."""
    env = os.environ if environ is None else environ
    if env.get(HOME_ENV):
        return Path(env[HOME_ENV]) / "state"
    base = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "ledger"


def tripwire_dir(ledger_id: str, environ: Mapping[str, str] | None = None) -> Path:
    """Where the tripwire keeps the seal of ``ledger_id`` and its copies (under
    :func:`state_home`)."""
    safe = "".join(c for c in ledger_id if c.isalnum() or c in "-_") or "ledger"
    return state_home(environ) / "tripwire" / safe


def checkpoint_dir(ledger_id: str, environ: Mapping[str, str] | None = None) -> Path:
    """Where the stored checkpoints of ``ledger_id`` live (under :func:`state_home`)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in ledger_id)
    return state_home(environ) / "checkpoints" / safe


# --- file-system helpers ----------------------------------------------------------------------

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
    # The thread too: two threads of a warm process writing one cache must not share a
    # temporary file (one's truncation under the other's write left a mix of both).
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{get_ident()}.tmp")
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
    import hashlib  # noqa: PLC0415 -- loaded on first use, as in unseal
    import hmac  # noqa: PLC0415

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
    import hashlib  # noqa: PLC0415 -- hashlib loads OpenSSL (~35 ms cold): only a cache
    import hmac  # noqa: PLC0415 -- read or written pays it, never `ledger log`'s start-up

    expected = hmac.new(key, payload, hashlib.sha256).hexdigest().encode()
    return payload if hmac.compare_digest(mac, expected) else None
