"""What ledger keeps about a workspace *outside* it: checkpoints and trusted keys.

An agent that can write the workspace can rewrite ``.orchestration/`` -- the ledger and the
public keys beside it -- and re-sign a shorter or different history with a key it controls. What
the workspace cannot vouch for is anchored in the user's own directories:

* **Checkpoints** (``<state>/checkpoints/<ledger id>/<size>-<offset>.note``): C2SP signed notes
  written by the hook path every N records and at session end. ``ledger verify`` checks every
  one: each must be a prefix of today's chain. ``<state>`` is ``$LEDGER_HOME/state`` when
  ``$LEDGER_HOME`` is set, else ``$XDG_STATE_HOME/ledger``, else ``~/.local/state/ledger``.
* **Which ledger a workspace has** (``<state>/workspaces/<hash of its path>.json``): a ledger
  replaced wholesale by a fresh one (new genesis, new id, no checkpoints yet) still shows, until
  a person acknowledges it (``ledger tamper accept``): nothing else moves this anchor.
* **Where a ledger lives** (``<state>/homes/<ledger id>.json``): its home workspace. Everything
  else kept here is keyed by ledger id (checkpoints, the tripwire's seal, trust pins), so a
  workspace copied with its ledger (``cp -a``, ``rsync -a``, a tar round trip) would share them
  with the original; only the home writes them. A copy is told so (``ledger init --fork`` gives
  it a ledger of its own); a home that no longer holds any ledger was moved, and the binding
  follows it.
* **Trusted keys** (``$LEDGER_HOME/trusted/<ledger id>.json``, default
  ``~/.config/ledger/trusted``): the trust root. ``ledger init`` pins the genesis key there,
  ``ledger key pin`` pins a key a person vouches for. Keys in ``.orchestration/keys/`` are only
  public-key material; they count when a pinned key, or a record signed by a trusted key
  (genesis, ``key.rotated``, ``key.added``), introduced them.

Nothing here is on the append path; the checkpoint store is touched by the hook path only when
a checkpoint is due.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ledger._errors import StorageError
from ledger._evidence.keys import trust_pins_dir
from ledger._startup.namedtuple import NamedTuple
from ledger._workspace import checkpoint_dir, state_home

__all__ = [
    "CheckpointStore",
    "StoredCheckpoint",
    "TrustPin",
    "bind_home",
    "copy_of",
    "ledger_home",
    "load_trust_pins",
    "pin_trusted_keys",
    "remember_workspace",
    "state_home",
    "workspace_ledger_id",
]

#: Stored checkpoints kept per ledger. Each new one is written only after checking that the
#: ledger extends the previous one, so the newest already vouches for the older ones; a few are
#: kept so that deleting one file does not erase the anchor.
KEEP_CHECKPOINTS: Final = 32
_SUFFIX: Final = ".note"


def _atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, mode)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        tmp.replace(path)
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from None


class StoredCheckpoint(NamedTuple):
    """A checkpoint file: its path and what its name says (size, byte offset of its end)."""

    path: Path
    size: int
    offset: int


class CheckpointStore:
    """The automatic checkpoints of one ledger, outside the workspace."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @classmethod
    def for_ledger(
        cls, ledger_id: str, environ: Mapping[str, str] | None = None
    ) -> CheckpointStore:
        """The store of ``ledger_id`` under the user's state directory."""
        return cls(checkpoint_dir(ledger_id, environ))

    def list(self) -> list[StoredCheckpoint]:
        """Stored checkpoints, oldest (smallest) first."""
        try:
            names = [p.name for p in self.directory.iterdir()]
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StorageError(f"cannot read {self.directory}: {exc.strerror}") from None
        found: list[StoredCheckpoint] = []
        for name in names:
            if not name.endswith(_SUFFIX) or name.startswith("."):
                continue
            size, _, offset = name[: -len(_SUFFIX)].partition("-")
            if size.isdigit() and offset.isdigit():
                found.append(StoredCheckpoint(self.directory / name, int(size), int(offset)))
        found.sort(key=lambda c: (c.size, c.path.name))
        return found

    def latest(self) -> StoredCheckpoint | None:
        """The checkpoint of the longest chain."""
        found = self.list()
        return found[-1] if found else None

    def write(self, text: str, size: int, offset: int) -> Path:
        """Store a checkpoint of ``size`` records ending at byte ``offset``; prune old ones."""
        path = self.directory / f"{size:016d}-{offset}{_SUFFIX}"
        _atomic_write(path, text.encode())
        for old in self.list()[:-KEEP_CHECKPOINTS]:
            with contextlib.suppress(OSError):  # pruning is housekeeping
                old.path.unlink()
        return path


def _workspace_file(root: Path, environ: Mapping[str, str] | None) -> Path:
    digest = hashlib.sha256(os.path.realpath(root).encode()).hexdigest()[:32]
    return state_home(environ) / "workspaces" / f"{digest}.json"


def workspace_ledger_id(root: Path, environ: Mapping[str, str] | None = None) -> str | None:
    """The ledger id last anchored for the workspace at ``root``, if any."""
    try:
        data = json.loads(_workspace_file(root, environ).read_text(encoding="utf-8"))
        return str(data["ledger_id"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remember_workspace(
    root: Path, ledger_id: str, environ: Mapping[str, str] | None = None, *, replace: bool = False
) -> None:
    """Anchor ``ledger_id`` as the ledger of ``root`` (by ``ledger init`` and checkpoints).

    A workspace anchored to another ledger keeps that anchor (its ledger was replaced: ``ledger
    verify`` says so) unless ``replace``: a person's acknowledgement (``ledger tamper accept``,
    ``ledger init --fork``)."""
    anchored = workspace_ledger_id(root, environ)
    if anchored == ledger_id or (anchored is not None and not replace):
        return
    payload = {"ledger_id": ledger_id, "root": os.path.realpath(root)}
    _atomic_write(
        _workspace_file(root, environ), (json.dumps(payload, sort_keys=True) + "\n").encode()
    )


def _forget_workspace(root: str, ledger_id: str, environ: Mapping[str, str] | None) -> None:
    """Drop the anchor of ``root`` if it names ``ledger_id`` (the workspace moved away)."""
    if workspace_ledger_id(Path(root), environ) == ledger_id:
        with contextlib.suppress(OSError):
            _workspace_file(Path(root), environ).unlink()


def _home_file(ledger_id: str, environ: Mapping[str, str] | None) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in ledger_id)
    return state_home(environ) / "homes" / f"{safe}.json"


def ledger_home(ledger_id: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The workspace (real path) that ``ledger_id`` lives in, if one was bound."""
    try:
        data = json.loads(_home_file(ledger_id, environ).read_text(encoding="utf-8"))
        return str(data["root"]) if data.get("ledger_id") == ledger_id else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def bind_home(root: Path | str, ledger_id: str, environ: Mapping[str, str] | None = None) -> None:
    """Bind ``ledger_id`` to the workspace at ``root`` (by ``ledger init``)."""
    payload = {"ledger_id": ledger_id, "root": os.path.realpath(root)}
    _atomic_write(
        _home_file(ledger_id, environ), (json.dumps(payload, sort_keys=True) + "\n").encode()
    )


def _ledger_in(root: str) -> str | None:
    """The id of the ledger the workspace at ``root`` holds (its genesis record's), if any."""
    from ledger._evidence.read import genesis_ledger_id  # noqa: PLC0415

    return genesis_ledger_id(Path(root) / ".orchestration" / "agent_trace.jsonl")


def _sealed_workspace(ledger_id: str, environ: Mapping[str, str] | None) -> str | None:
    """The workspace the tripwire last sealed ``ledger_id`` in, read from its seal (whose MAC,
    under the per-user secret, only this user's ledger can write): its ``root``, or in a seal
    older than that, the folder holding its sealed ``.orchestration/active_intents.yaml``."""
    from ledger._workspace import tripwire_dir, unseal  # noqa: PLC0415

    try:
        raw = (tripwire_dir(ledger_id, environ) / "seal").read_bytes()
    except OSError:
        return None
    payload = unseal(raw, environ)
    try:
        data = json.loads(payload) if payload is not None else None
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    root = data.get("root")
    if isinstance(root, str):
        return root
    marker = "/.orchestration/active_intents.yaml"
    files = data.get("files")
    found = [p for p in files if p.endswith(marker)] if isinstance(files, dict) else []
    return found[0][: -len(marker)] if len(found) == 1 else None


def _same_directory(first: str, second: str) -> bool:
    try:
        return Path(first).samefile(second)
    except OSError:
        return False


def copy_of(
    root: Path | str,
    ledger_id: str,
    environ: Mapping[str, str] | None = None,
    *,
    bind: bool = True,
) -> str | None:
    """The home workspace whose ledger the workspace at ``root`` holds a copy of, or ``None``
    when ``root`` is that ledger's home.

    A ledger with no home yet (made before homes were kept, or elsewhere: a ledger committed
    to git and cloned) is bound to the first workspace that asks; its workspace anchor is left
    to ``ledger init`` and the checkpoints. A home that holds no ledger any more was moved (or
    deleted): the binding, and the workspace anchor, follow the ledger here. A home that holds
    any ledger makes ``root`` a copy: of that ledger, or of the one it replaced there (whose
    anchors are the home's).
    ``bind=False`` only reads (``ledger verify``).
    """
    real = os.path.realpath(root)
    home = ledger_home(ledger_id, environ)
    if home == real:
        return None
    if home is None:
        # No home bound yet (a ledger from before homes were kept): the workspace the
        # tripwire's seal was made in is the original, when it still holds this ledger. Without
        # this, a copy whose hook ran first took the home and told the original it was a copy.
        sealed = _sealed_workspace(ledger_id, environ)
        if (
            sealed is not None
            and sealed != real
            and not _same_directory(sealed, real)
            and _ledger_in(sealed) == ledger_id
        ):
            if bind:
                bind_home(sealed, ledger_id, environ)
            return sealed
    if home is not None:
        if _same_directory(home, real):
            return None  # the home, reached by another path (a bind mount, a symlink)
        if _ledger_in(home) is not None:
            return home
        if not bind:
            return None
        _forget_workspace(home, ledger_id, environ)
        remember_workspace(Path(real), ledger_id, environ)
    if bind:
        bind_home(real, ledger_id, environ)
    return None


class TrustPin(NamedTuple):
    """A key pinned outside the workspace: trusted for records from ``from_seq`` on."""

    kid: str
    public_raw: bytes
    from_seq: int


def _trust_file(ledger_id: str, environ: Mapping[str, str] | None) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in ledger_id)
    return trust_pins_dir(environ) / f"{safe}.json"


def load_trust_pins(
    ledger_id: str, environ: Mapping[str, str] | None = None
) -> tuple[dict[str, TrustPin], str | None]:
    """``(pins, problem)``: the keys pinned for ``ledger_id`` outside the workspace.

    An unreadable pin file is reported (``problem``), not fatal: verification then falls back
    to the genesis key and says so.
    """
    from ledger._evidence.keys import key_id_for  # noqa: PLC0415

    path = _trust_file(ledger_id, environ)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, None
    except (OSError, ValueError) as exc:
        return {}, f"trust file {path} is unreadable ({type(exc).__name__})"
    pins: dict[str, TrustPin] = {}
    try:
        for item in data["keys"]:
            raw = base64.b64decode(item["public_key"], validate=True)
            kid = str(item["kid"])
            if len(raw) != 32 or key_id_for(raw) != kid:
                return {}, f"trust file {path}: {kid} does not match its public key"
            pins[kid] = TrustPin(kid, raw, int(item.get("from_seq") or 0))
    except (KeyError, TypeError, ValueError, binascii.Error):
        return {}, f"trust file {path} is malformed"
    return pins, None


def pin_trusted_keys(
    ledger_id: str, pins: list[TrustPin], environ: Mapping[str, str] | None = None
) -> Path:
    """Add ``pins`` to the trust file of ``ledger_id`` (kept: every key pinned before)."""
    current, _ = load_trust_pins(ledger_id, environ)
    for pin in pins:
        known = current.get(pin.kid)
        current[pin.kid] = (
            pin if known is None else known._replace(from_seq=min(known.from_seq, pin.from_seq))
        )
    path = _trust_file(ledger_id, environ)
    keys: list[dict[str, Any]] = [
        {
            "from_seq": p.from_seq,
            "kid": p.kid,
            "public_key": base64.b64encode(p.public_raw).decode(),
        }
        for p in sorted(current.values(), key=lambda p: (p.from_seq, p.kid))
    ]
    payload = {"keys": keys, "ledger_id": ledger_id}
    _atomic_write(path, (json.dumps(payload, indent=2, sort_keys=True) + "\n").encode())
    return path
