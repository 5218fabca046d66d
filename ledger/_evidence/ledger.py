"""The embedded API: :class:`Ledger`.

Hook code embeds this class. Appending imports only the stdlib, ``cryptography``'s Ed25519 and
ledger's own small modules; verification, checkpoints and models load lazily.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ledger._errors import (
    ConfigError,
    InputError,
    KeyNotFoundError,
    NotInitializedError,
    StorageError,
    WorkspaceCopiedError,
)
from ledger._evidence import ledger_upkeep as _upkeep
from ledger._evidence import lightjson
from ledger._evidence.disclosure import DisclosureStore, disclosure_lines, seal_body
from ledger._evidence.keys import (
    KeyEntry,
    Keyring,
    SigningKey,
    load_key_entry,
    load_signing_key,
    store_private_key,
)
from ledger._evidence.ledger_upkeep import AutoCheckpoint, Forgotten, RepairResult, forget
from ledger._evidence.read import ledger_id_at, read_records, tail_records
from ledger._evidence.record import (
    APPEND_RESERVED_PREFIXES,
    FORMAT_VERSION,
    GENESIS_KIND,
    GENESIS_PREV,
    ROTATED_KIND,
    Record,
    build_line,
    normalize_actor,
)
from ledger._evidence.store import LedgerFile, Tail, Transaction, fsync_dir
from ledger._startup.namedtuple import NamedTuple
from ledger._version import __version__
from ledger._workspace import Workspace, find_root, scaffold, utc_now

if TYPE_CHECKING:
    from ledger._evidence.checkpoint import Checkpoint
    from ledger._evidence.verify import VerifyReport

__all__ = [
    "MAX_RECORD_BYTES",
    "AutoCheckpoint",
    "Entry",
    "Forgotten",
    "Ledger",
    "RepairResult",
    "forget",
]

#: Batches larger than this load orjson for the canonical encoding (a hook call appends 1-3).
_BULK_APPEND: Final = 32

#: Largest record line accepted. Hook payloads carry whole edits; 10 MB bodies are refused.
MAX_RECORD_BYTES: Final = 4 * 1024 * 1024
_KIND_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._-")

Clock = Callable[[], str]


class Entry(NamedTuple):
    """One record to append with :meth:`Ledger.append_many`."""

    kind: str
    body: dict[str, Any]
    actor: Mapping[str, Any] | None = None


def _check_kind(kind: str, *, internal: bool) -> None:
    if not kind or not _KIND_CHARS.issuperset(kind) or not kind[0].isalpha() or len(kind) > 64:
        raise InputError(
            f"invalid kind {kind!r}: use 1-64 chars of a-z 0-9 . _ - starting with a letter"
        )
    if not internal and kind.startswith(APPEND_RESERVED_PREFIXES):
        # Issue 15: a forged `intent.scope_expanded` appended through the embedded API once
        # widened an agent's scope. Only ledger's own paths write these kinds
        # (:func:`append_reserved`): the hook service and the person's commands.
        reserved = ", ".join(f"{p}*" for p in APPEND_RESERVED_PREFIXES)
        raise InputError(
            f"kind {kind!r} is reserved for ledger itself ({reserved}); "
            "choose an application kind such as app.deploy"
        )


class Ledger:
    """A workspace's signed, hash-chained ledger.

    Create one with :meth:`init` (new workspace) or :meth:`open` (existing one).

    Args:
        workspace: the workspace layout.
        signing_key: sign with this key instead of looking one up (tests, embedding).
        clock: returns RFC 3339 UTC timestamps; defaults to the system clock.
        environ: environment for key lookup (defaults to ``os.environ``).
    """

    def __init__(
        self,
        workspace: Workspace,
        *,
        signing_key: SigningKey | None = None,
        clock: Clock | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.workspace = workspace
        self.file = LedgerFile(workspace.ledger_path)
        self.disclosures = DisclosureStore.beside(workspace.ledger_path)  # content, beside it
        self._explicit_key = signing_key
        self._key = signing_key
        self._clock: Clock = clock or utc_now
        self._environ = environ
        self._home_checked = False

    # --- construction --------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        root: str | os.PathLike[str] | None = None,
        *,
        signing_key: SigningKey | None = None,
        clock: Clock | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Ledger:
        """Open the ledger of an existing workspace (``root`` found like git when omitted).

        Raises:
            WorkspaceNotFoundError: no ``.orchestration/`` was found.
            NotInitializedError: the workspace has no ledger yet.
        """
        workspace = Workspace(find_root(root, environ=environ))
        if not workspace.ledger_path.exists():
            from ledger._evidence.anchors import workspace_ledger_id  # noqa: PLC0415

            held = workspace_ledger_id(workspace.root, environ)
            raise NotInitializedError(
                f"no ledger in {workspace.orchestration}; run `ledger init`"
                if held is None
                else f"no ledger in {workspace.orchestration}, which held ledger {held} "
                "(deleted?); run `ledger init` to make a new one (flagged as a replacement "
                "until a person runs `ledger tamper accept`)"
            )
        return cls(workspace, signing_key=signing_key, clock=clock, environ=environ)

    @classmethod
    def init(
        cls,
        root: str | os.PathLike[str],
        *,
        signing_key: SigningKey | None = None,
        clock: Clock | None = None,
        ledger_id: str | None = None,
        environ: Mapping[str, str] | None = None,
        forked_from: Mapping[str, Any] | None = None,
    ) -> Ledger:
        """Create ``.orchestration/``, pin a signing key and write the genesis record.

        Idempotent: on an initialised workspace it returns the existing ledger unchanged.
        The private key is generated (if none is given or configured) and stored outside the
        workspace with mode 0600; only its public half is pinned in ``.orchestration/keys/``.
        ``forked_from`` (``ledger_id``, ``seq``, ``hash``, ``home``) goes into the genesis
        record of a fork (:func:`ledger._setup.init_workspace`).
        """
        workspace = Workspace(Path(root).absolute())
        try:
            workspace.orchestration.mkdir(parents=True, exist_ok=True)
            scaffold(workspace.orchestration)
        except OSError as exc:
            raise StorageError(f"cannot create {workspace.orchestration}: {exc.strerror}") from None
        ledger = cls(workspace, signing_key=signing_key, clock=clock, environ=environ)
        with ledger.file.transaction(create=True) as tx:
            if tx.size > 0:
                return ledger
            line, key = _write_genesis(ledger, tx, ledger_id, forked_from)
        fsync_dir(workspace.orchestration)
        _anchor_new_ledger(ledger, lightjson.loads(line)["ledger"], key)
        return ledger

    def require_home(self, ledger_id: str | None = None) -> None:
        """Refuse to write what is kept outside the workspace under this ledger's id (the
        tripwire's seal, checkpoints, trust pins, published evidence) unless this workspace is
        the ledger's home: a copy of the workspace shares the id, and its writes would halt or
        fork the original (:func:`ledger._evidence.anchors.copy_of`). Checked once per object.

        Raises:
            WorkspaceCopiedError: the workspace holds a copy of a ledger living elsewhere.
        """
        if self._home_checked:
            return
        from ledger._evidence.anchors import copy_of  # noqa: PLC0415

        ledger_id = ledger_id or self.ledger_id
        home = copy_of(self.workspace.root, ledger_id, self._environ)
        if home is not None:
            raise WorkspaceCopiedError(os.path.realpath(self.workspace.root), home, ledger_id)
        self._home_checked = True

    # --- keys ------------------------------------------------------------------------------

    def keyring(self) -> Keyring:
        """The public keys in ``.orchestration/keys/`` (material, not the trust root)."""
        return Keyring.load(self.workspace.keys_dir)

    def _verification_keys(
        self, ledger_id: str | None
    ) -> tuple[Keyring, dict[str, int] | None, list[str]]:
        """``(keys, trusted, notes)``: every known public key (workspace keyring and keys
        pinned outside), the trust roots (``None`` when nothing is pinned), and what to tell
        the user about them."""
        from ledger._evidence.anchors import load_trust_pins  # noqa: PLC0415

        keyring = Keyring.load(self.workspace.keys_dir, allow_empty=True)
        notes = list(keyring.bad_files)
        pins, problem = load_trust_pins(ledger_id, self._environ) if ledger_id else ({}, None)
        if problem:
            notes.append(problem)
        entries = {p.kid: KeyEntry(p.kid, p.public_raw) for p in pins.values()}
        entries.update(keyring.entries)
        if not entries:
            why = f": {'; '.join(notes)}" if notes else ""
            raise KeyNotFoundError(
                f"no public key to verify with in {self.workspace.keys_dir} and none pinned "
                f"outside the workspace{why}"
            )
        if not pins:
            notes.append(
                "trust root: the genesis record's key; nothing is pinned outside the "
                "workspace (`ledger key pin` vouches for this ledger's key)"
            )
            return Keyring(entries), None, notes
        return Keyring(entries), {p.kid: p.from_seq for p in pins.values()}, notes

    def active_signing_key(self) -> SigningKey:
        """The key that would sign the next record (pinned and allowed to sign), e.g. to sign
        an export manifest with the ledger's own key.

        Raises:
            KeyNotFoundError: no usable, pinned signing key.
        """
        with self.file.transaction() as tx:
            return self._signing_key_for(tx.tail())

    def _pin(self, key: SigningKey, created: str | None = None) -> None:
        path = self.workspace.keys_dir / f"{key.kid}.json"
        if not path.exists():
            Keyring({}).save_entry(
                self.workspace.keys_dir,
                KeyEntry(key.kid, key.public_raw, created or self._clock()),
            )

    def _signing_key_for(self, tail: Tail) -> SigningKey:
        # An explicit or $LEDGER_SIGNING_KEY key always signs. Otherwise the active key is the
        # tail's signer, or the new key of a rotation at the tail (another process may have
        # rotated since this object cached a key).
        active = str(tail.body.get("new_key") if tail.kind == ROTATED_KIND else tail.key)
        key = self._explicit_key
        if key is None:
            key = self._key
            if key is None or (key.kid != active and self._environ_key_absent()):
                key = load_signing_key(active, self._environ)
                self._key = key
        try:
            entry = load_key_entry(self.workspace.keys_dir, key.kid)
        except ConfigError as exc:
            raise KeyNotFoundError(f"cannot sign: {exc}") from None
        if entry is None:
            raise KeyNotFoundError(
                f"signing key {key.kid} is not pinned in {self.workspace.keys_dir}; "
                "its records would not verify (restore its key file from git, or run "
                "`ledger init` to make a key for this clone)"
            )
        refusal = entry.refuses_signing_at(tail.seq + 1)
        if refusal is not None:
            hint = (
                " (update $LEDGER_SIGNING_KEY to the current key)"
                if not self._environ_key_absent()
                else ""
            )
            raise KeyNotFoundError(f"cannot sign: {refusal}{hint}")
        return key

    def _environ_key_absent(self) -> bool:
        env = os.environ if self._environ is None else self._environ
        return not env.get("LEDGER_SIGNING_KEY")

    # --- append ----------------------------------------------------------------------------

    def append(
        self, kind: str, body: Mapping[str, Any], *, actor: Mapping[str, Any] | None = None
    ) -> Record:
        """Append one signed record and fsync it.

        Raises:
            InputError: bad kind, actor or body (float, huge int, too large, ...).
            TornTailError: the file ends in a torn line; run :meth:`repair` first.
            KeyNotFoundError: no usable, pinned signing key.
            StorageError: the write or fsync failed (nothing partial is left by a failed write).
        """
        return self.append_many([Entry(kind, dict(body), actor)])[0]

    def append_many(self, entries: Iterable[Entry | tuple[Any, ...]]) -> list[Record]:
        """Append several records under one lock with one write and one fsync.

        Raises:
            InputError: as :meth:`append`; a reserved kind (``intent.*``, ``hook.*``,
                ``governance.*``, ``ledger.*``, ...) is refused.
        """
        return self._append_entries(entries, internal=False)

    def _append_entries(
        self,
        entries: Iterable[Entry | tuple[Any, ...]],
        *,
        internal: bool,
        after: Callable[[list[Record]], None] | None = None,
    ) -> list[Record]:
        items = [Entry(*e) for e in entries]
        for item in items:
            _check_kind(item.kind, internal=internal)
            if type(item.body) is not dict:
                raise InputError("body must be a JSON object")
        actors = [normalize_actor(item.actor) for item in items]
        sealed = [seal_body(item.body) for item in items]  # secrets redacted, content committed
        bodies = [(i.kind, b, a) for i, (b, _), a in zip(items, sealed, actors, strict=True)]
        with self.file.transaction() as tx:
            records = self._append_locked(tx, bodies)
            # Under the lock: `ledger forget` rewrites the store under it too.
            self.disclosures.append(disclosure_lines(records, [found for _, found in sealed]))
            if after is not None:
                after(records)  # still under the lock: the tripwire seals the new head
            return records

    def _append_locked(
        self,
        tx: Transaction,
        items: list[tuple[str, dict[str, Any], dict[str, str | None]]],
        *,
        key: SigningKey | None = None,
    ) -> list[Record]:
        if len(items) > _BULK_APPEND:
            # Bulk work: orjson's import (10-15 ms) pays for itself within a few dozen records,
            # and once loaded every canonical encoding uses it (ledger/_evidence/lightjson.py).
            lightjson.orjson()
        tail = tx.tail()
        key = key or self._signing_key_for(tail)
        seq, prev = tail.seq + 1, tail.hash
        lines: list[bytes] = []
        records: list[Record] = []
        for kind, body, actor in items:
            line, data = build_line(
                ledger_id=tail.ledger_id,
                seq=seq,
                prev=prev,
                ts=self._clock(),
                kind=kind,
                actor=actor,
                body=body,
                key=key,
            )
            if len(line) > MAX_RECORD_BYTES:
                raise InputError(
                    f"record of {len(line)} bytes exceeds the {MAX_RECORD_BYTES}-byte limit"
                )
            lines.append(line)
            records.append(Record(line, data))
            seq, prev = seq + 1, data["hash"]
        tx.append(b"\n".join(lines) + b"\n")
        return records

    # --- read ------------------------------------------------------------------------------

    def records(self, *, start: int = 0) -> Iterator[Record]:
        """Stream records in file order from seq ``start`` (not verified; see :meth:`verify`).

        Records come through the one read path (:mod:`ledger._evidence.read`): old format
        versions are upcast, and a torn last line is skipped. Unparseable lines raise
        :class:`StorageError`.
        """
        for index, stored in enumerate(read_records(self.file.path)):
            if index >= start:
                yield Record(stored.line, stored.data)

    def tail(self, count: int) -> list[Record]:
        """The last ``count`` complete records, oldest first (through the one read path's
        :func:`~ledger._evidence.read.tail_records`: appends write whole lines, so no lock is
        needed to read complete ones)."""
        if not self.file.exists():
            raise NotInitializedError(f"no ledger at {self.file.path}; run `ledger init`")
        return [Record(s.line, s.data) for s in tail_records(self.file.path, count)]

    @property
    def environ(self) -> Mapping[str, str] | None:
        """The environment this ledger was opened with (``None``: this process's). What takes a
        ledger and an optional environment uses this one when given none: where the caches'
        secret, the checkpoints and the keys are."""
        return self._environ

    @property
    def ledger_id(self) -> str:
        """The ledger id fixed at init (its genesis line read again on every call)."""
        return ledger_id_at(self.file.path)

    # --- upkeep: verification, checkpoints, repair and key lifecycle (ledger_upkeep.py) ------

    def verify(
        self,
        *,
        checkpoints: Iterable[tuple[str, str]] = (),
        jobs: int | None = None,
        progress: Callable[[int, int], None] | None = None,
        stored_checkpoints: bool = True,
    ) -> VerifyReport:
        """Verify every record, link, key and checkpoint; report, do not raise on bad evidence
        (:meth:`LedgerVerifier.verify`)."""
        return _upkeep.LedgerVerifier(self).verify(
            checkpoints=checkpoints,
            jobs=jobs,
            progress=progress,
            stored_checkpoints=stored_checkpoints,
        )

    def verify_or_raise(
        self,
        *,
        checkpoints: Iterable[tuple[str, str]] = (),
        jobs: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> VerifyReport:
        """Like :meth:`verify`, but raise :class:`IntegrityError` unless the ledger is intact."""
        return _upkeep.LedgerVerifier(self).verify_or_raise(
            checkpoints=checkpoints, jobs=jobs, progress=progress
        )

    def checkpoint(self) -> Checkpoint:
        """Sign a checkpoint of the current head (:meth:`Checkpointer.checkpoint`)."""
        return _upkeep.Checkpointer(self).checkpoint()

    def segment(self) -> tuple[bytes, Checkpoint]:
        """The ledger's bytes and a checkpoint over exactly them (:meth:`Checkpointer.segment`)."""
        return _upkeep.Checkpointer(self).segment()

    def auto_checkpoint(
        self,
        *,
        session_end: bool = False,
        every: int | None = None,
        appended: tuple[int, int] | None = None,
    ) -> AutoCheckpoint:
        """Store a signed checkpoint outside the workspace when one is due
        (:meth:`Checkpointer.auto_checkpoint`)."""
        return _upkeep.Checkpointer(self).auto_checkpoint(
            session_end=session_end, every=every, appended=appended
        )

    def repair(self) -> RepairResult:
        """Recover the end of the file after a crash, keeping every record (:class:`Repairer`)."""
        return _upkeep.Repairer(self).repair()

    def rotate_key(self, new_key: SigningKey | None = None) -> Record:
        """Rotate to a new signing key (:meth:`KeyLifecycle.rotate_key`)."""
        return _upkeep.KeyLifecycle(self).rotate_key(new_key)

    def revoke_key(self, kid: str, *, from_seq: int, reason: str = "") -> Record:
        """Revoke ``kid`` from ``from_seq`` on (:meth:`KeyLifecycle.revoke_key`)."""
        return _upkeep.KeyLifecycle(self).revoke_key(kid, from_seq=from_seq, reason=reason)

    def add_key(self, public_raw: bytes) -> Record:
        """Introduce a teammate's public key in a signed ``key.added`` record
        (:meth:`KeyLifecycle.add_key`)."""
        return _upkeep.KeyLifecycle(self).add_key(public_raw)

    def pin_trusted(
        self,
        kid: str | None = None,
        *,
        from_seq: int = 0,
        public_raw: bytes | None = None,
        ledger_id: str | None = None,
    ) -> Path:
        """Vouch for a key outside the workspace (:meth:`KeyLifecycle.pin_trusted`)."""
        return _upkeep.KeyLifecycle(self).pin_trusted(
            kid, from_seq=from_seq, public_raw=public_raw, ledger_id=ledger_id
        )


def _write_genesis(
    ledger: Ledger,
    tx: Transaction,
    ledger_id: str | None,
    forked_from: Mapping[str, Any] | None,
) -> tuple[bytes, SigningKey]:
    """Pin the signing key (generated and stored 0600 when none is given or configured) and
    append the genesis record, under the lock :meth:`Ledger.init` holds."""
    key = ledger._key
    if key is None:
        try:
            key = load_signing_key(None, ledger._environ)
        except KeyNotFoundError:
            key = SigningKey.generate()
            store_private_key(key, ledger._environ)
        ledger._key = key
    ledger._pin(key)
    import uuid  # noqa: PLC0415 -- pulls in `platform`; keep it off the append path

    line, _ = build_line(
        ledger_id=ledger_id or str(uuid.uuid4()),
        seq=0,
        prev=GENESIS_PREV,
        ts=ledger._clock(),
        kind=GENESIS_KIND,
        actor=normalize_actor({"client": "ledger"}),
        body={
            "created_by": f"ledger {__version__}",
            "format": FORMAT_VERSION,
            "key": key.kid,
            **({"forked_from": dict(forked_from)} if forked_from else {}),
        },
        key=key,
    )
    tx.append(line + b"\n")
    return line, key


def _anchor_new_ledger(ledger: Ledger, ledger_id: str, key: SigningKey) -> None:
    # The trust root and the workspace's ledger id live outside the workspace, where an
    # agent rewriting .orchestration/ cannot replace them (docs/trust-model.md).
    from ledger._evidence.anchors import (  # noqa: PLC0415
        TrustPin,
        copy_of,
        pin_trusted_keys,
        remember_workspace,
    )

    pin_trusted_keys(ledger_id, [TrustPin(key.kid, key.public_raw, 0)], ledger._environ)
    # This workspace becomes the ledger's home, unless a ledger given the same id
    # (``ledger_id=``) lives in another workspace already: that one stays the home.
    ledger._home_checked = copy_of(ledger.workspace.root, ledger_id, ledger._environ) is None
    if ledger._home_checked:
        remember_workspace(ledger.workspace.root, ledger_id, ledger._environ)


def append_reserved(
    ledger: Ledger,
    entries: Iterable[Entry | tuple[Any, ...]],
    *,
    after: Callable[[list[Record]], None] | None = None,
) -> list[Record]:
    """Append records of ledger's own kinds (``hook.*``, ``intent.*``, ``governance.*``, ...).

    Not part of the public API (``__all__``): the hook service and the person's commands
    (:mod:`ledger._governance.person` checks the person) write through it. In-process code can
    reach any Python function; what keeps an agent's code from doing so is layer 2 (the
    sandbox cannot write the ledger under ``--hardened``) and layer 3 (the tripwire sees a
    ledger tail the hook did not append). See docs/trust-model.md.

    Args:
        after: called with the new records while the append lock is still held.
    """
    return ledger._append_entries(entries, internal=True, after=after)


def open_reader(
    root: str | os.PathLike[str] | None = None, *, environ: Mapping[str, str] | None = None
) -> Ledger:
    """The workspace's public keys, caches and fetched evidence, for a clone that only reads
    teammates' evidence (``ledger fetch``, ``ledger blame``): it needs no ledger of its own and
    no key, and its own ledger file need not exist (nothing is appended).

    Raises:
        WorkspaceNotFoundError: no ``.orchestration/`` was found.
    """
    return Ledger(Workspace(find_root(root, environ=environ)), environ=environ)
