"""The embedded API: :class:`Ledger`.

Hook code embeds this class. Appending imports only the stdlib, ``cryptography``'s Ed25519 and
ledger's own small modules; verification, checkpoints and models load lazily.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from ledger._errors import (
    InputError,
    IntegrityError,
    KeyNotFoundError,
    NotInitializedError,
    RepairRefusedError,
    StorageError,
)
from ledger._evidence.keys import (
    KeyEntry,
    Keyring,
    SigningKey,
    load_key_entry,
    load_signing_key,
    store_private_key,
)
from ledger._evidence.read import parse_stored, read_records
from ledger._evidence.record import (
    FORMAT_VERSION,
    GENESIS_KIND,
    GENESIS_PREV,
    REPAIRED_KIND,
    RESERVED_PREFIXES,
    REVOKED_KIND,
    ROTATED_KIND,
    Record,
    build_line,
    normalize_actor,
    rotation_statement,
)
from ledger._evidence.store import LedgerFile, Tail, Transaction, fsync_dir
from ledger._version import __version__
from ledger._workspace import Workspace, find_root, scaffold, utc_now

if TYPE_CHECKING:
    from ledger._evidence.checkpoint import Checkpoint
    from ledger._evidence.verify import VerifyReport

__all__ = ["MAX_RECORD_BYTES", "Entry", "Ledger", "RepairResult"]

_FIRST_LINE_CHUNK: Final = 16 * 1024
#: Largest record line accepted. Hook payloads carry whole edits; 10 MB bodies are refused.
MAX_RECORD_BYTES: Final = 4 * 1024 * 1024
_KIND_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._-")

Clock = Callable[[], str]


class Entry(NamedTuple):
    """One record to append with :meth:`Ledger.append_many`."""

    kind: str
    body: dict[str, Any]
    actor: Mapping[str, Any] | None = None


class RepairResult(NamedTuple):
    """What ``repair`` did."""

    repaired: bool
    removed_bytes: int
    removed_sha256: str | None
    quarantine_file: str | None
    record: Record | None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "quarantine_file": self.quarantine_file,
            "removed_bytes": self.removed_bytes,
            "removed_sha256": self.removed_sha256,
            "repaired": self.repaired,
            "repair_seq": self.record.seq if self.record else None,
        }


def _check_kind(kind: str, *, internal: bool) -> None:
    if not kind or not _KIND_CHARS.issuperset(kind) or not kind[0].isalpha() or len(kind) > 64:
        raise InputError(
            f"invalid kind {kind!r}: use 1-64 chars of a-z 0-9 . _ - starting with a letter"
        )
    if not internal and kind.startswith(RESERVED_PREFIXES):
        raise InputError(f"kind {kind!r} is reserved for ledger itself")


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
        self._explicit_key = signing_key
        self._key = signing_key
        self._clock: Clock = clock or utc_now
        self._environ = environ

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
            raise NotInitializedError(
                f"no ledger in {workspace.orchestration}; run `ledger init`"
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
    ) -> Ledger:
        """Create ``.orchestration/``, pin a signing key and write the genesis record.

        Idempotent: on an initialised workspace it returns the existing ledger unchanged.
        The private key is generated (if none is given or configured) and stored outside the
        workspace with mode 0600; only its public half is pinned in ``.orchestration/keys/``.
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
            key = ledger._key
            if key is None:
                try:
                    key = load_signing_key(None, environ)
                except KeyNotFoundError:
                    key = SigningKey.generate()
                    store_private_key(key, environ)
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
                body={"created_by": f"ledger {__version__}", "format": FORMAT_VERSION,
                      "key": key.kid},
                key=key,
            )
            tx.append(line + b"\n")
        fsync_dir(workspace.orchestration)
        return ledger

    # --- keys ------------------------------------------------------------------------------

    def keyring(self) -> Keyring:
        """The pinned public keys."""
        return Keyring.load(self.workspace.keys_dir)

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
        entry = load_key_entry(self.workspace.keys_dir, key.kid)
        if entry is None:
            raise KeyNotFoundError(
                f"signing key {key.kid} is not pinned in {self.workspace.keys_dir}; "
                "its records would not verify"
            )
        refusal = entry.refuses_signing_at(tail.seq + 1)
        if refusal is not None:
            hint = (" (update $LEDGER_SIGNING_KEY to the current key)"
                    if not self._environ_key_absent() else "")
            raise KeyNotFoundError(f"cannot sign: {refusal}{hint}")
        return key

    def _environ_key_absent(self) -> bool:
        env = os.environ if self._environ is None else self._environ
        return not env.get("LEDGER_SIGNING_KEY")

    # --- append ----------------------------------------------------------------------------

    def append(self, kind: str, body: Mapping[str, Any], *, actor: Mapping[str, Any] | None = None
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
        """Append several records under one lock with one write and one fsync."""
        items = [Entry(*e) for e in entries]
        for item in items:
            _check_kind(item.kind, internal=False)
            if type(item.body) is not dict:
                raise InputError("body must be a JSON object")
        actors = [normalize_actor(item.actor) for item in items]
        with self.file.transaction() as tx:
            return self._append_locked(
                tx, [(i.kind, i.body, a) for i, a in zip(items, actors, strict=True)]
            )

    def _append_locked(
        self,
        tx: Transaction,
        items: list[tuple[str, dict[str, Any], dict[str, str | None]]],
        *,
        key: SigningKey | None = None,
    ) -> list[Record]:
        tail = tx.tail()
        key = key or self._signing_key_for(tail)
        seq, prev = tail.seq + 1, tail.hash
        lines: list[bytes] = []
        records: list[Record] = []
        for kind, body, actor in items:
            line, data = build_line(
                ledger_id=tail.ledger_id, seq=seq, prev=prev, ts=self._clock(), kind=kind,
                actor=actor, body=body, key=key,
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
        """The last ``count`` complete records, oldest first."""
        out: list[Record] = []
        with self.file.transaction() as tx:
            end, _ = tx.torn_bytes()
            while len(out) < count:
                found = tx.last_line(end)
                if found is None:
                    break
                end, line = found
                out.append(Record(line, parse_stored(line)))
        out.reverse()
        return out

    @property
    def ledger_id(self) -> str:
        """The ledger id fixed at init."""
        # The genesis line is short: read a small first chunk, not the read path's 4 MiB.
        first = next(read_records(self.file.path, chunk_size=_FIRST_LINE_CHUNK), None)
        if first is None:
            raise NotInitializedError(f"{self.file.path} is empty")
        return str(first.data["ledger"])

    # --- verify ----------------------------------------------------------------------------

    def verify(
        self,
        *,
        checkpoints: Iterable[tuple[str, str]] = (),
        jobs: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> VerifyReport:
        """Verify every record, link, key and checkpoint; report, do not raise on bad evidence.

        Args:
            checkpoints: ``(name, text)`` pairs of stored checkpoints.
            jobs: worker processes (default: all cores).
            progress: ``(bytes_done, bytes_total)`` callback.

        Raises:
            KeyNotFoundError: no pinned keys to verify with (we could not check).
            StorageError: the ledger file is unreadable.
            CheckpointError: a checkpoint is malformed or not validly signed.
        """
        from ledger._evidence.checkpoint import parse_checkpoint  # noqa: PLC0415
        from ledger._evidence.verify_file import verify_file  # noqa: PLC0415

        keyring = self.keyring()
        targets = [parse_checkpoint(text, name).verified_target(keyring, name)
                   for name, text in checkpoints]
        return verify_file(
            self.file,
            {e.kid: e.public_raw for e in keyring},
            revoked_from={e.kid: e.revoked_from_seq for e in keyring
                          if e.revoked_from_seq is not None},
            checkpoints=targets,
            jobs=jobs,
            progress=progress,
        )

    def verify_or_raise(
        self,
        *,
        checkpoints: Iterable[tuple[str, str]] = (),
        jobs: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> VerifyReport:
        """Like :meth:`verify`, but raise :class:`IntegrityError` unless the ledger is intact."""
        report = self.verify(checkpoints=checkpoints, jobs=jobs, progress=progress)
        if not report.ok:
            raise IntegrityError(report.summary(), report)
        return report

    # --- checkpoint ------------------------------------------------------------------------

    def checkpoint(self) -> Checkpoint:
        """Sign a checkpoint of the current head with the active key.

        Store the text somewhere the ledger's host cannot rewrite (git, CI artifacts).
        """
        from ledger._evidence.checkpoint import sign_checkpoint  # noqa: PLC0415

        with self.file.transaction() as tx:
            tail = tx.tail()
            key = self._signing_key_for(tail)
        return sign_checkpoint(tail.ledger_id, tail.seq + 1, tail.hash, key)

    # --- repair ----------------------------------------------------------------------------

    def repair(self) -> RepairResult:
        """Recover from a torn tail (a crash mid-append).

        Moves the torn bytes to ``.orchestration/quarantine/``, truncates to the last good
        record and appends a ``ledger.repaired`` record naming what was removed.

        Raises:
            RepairRefusedError: anything other than a torn tail is wrong; nothing is changed.
        """
        from ledger._evidence.verify_file import verify_file  # noqa: PLC0415

        keyring = self.keyring()
        with self.file.transaction() as tx:
            torn_at, torn = tx.torn_bytes()
            if not torn:
                return RepairResult(False, 0, None, None, None)
            report = verify_file(
                self.file, {e.kid: e.public_raw for e in keyring},
                revoked_from={e.kid: e.revoked_from_seq for e in keyring
                              if e.revoked_from_seq is not None},
                end=torn_at,
            )
            if not report.ok:
                raise RepairRefusedError(
                    f"refusing to repair: the ledger is damaged before its tail "
                    f"({report.summary()})", report)
            digest = hashlib.sha256(torn).hexdigest()
            name = f"{self._clock().replace(':', '').replace('-', '')}-{digest[:12]}.torn"
            quarantine = self.workspace.quarantine_dir
            try:
                quarantine.mkdir(parents=True, exist_ok=True)
                fd = os.open(quarantine / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                try:
                    os.write(fd, torn)
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except OSError as exc:
                raise StorageError(f"cannot write quarantine file: {exc.strerror}") from None
            fsync_dir(quarantine)
            tx.truncate(torn_at)
            body = {"offset": torn_at, "quarantine_file": f"quarantine/{name}",
                    "removed_bytes": len(torn), "removed_sha256": digest}
            record = self._append_locked(
                tx, [(REPAIRED_KIND, body, normalize_actor({"client": "ledger"}))]
            )[0]
        return RepairResult(True, len(torn), digest, f"quarantine/{name}", record)

    # --- key lifecycle ---------------------------------------------------------------------

    def rotate_key(self, new_key: SigningKey | None = None) -> Record:
        """Rotate to a new signing key.

        Appends ``key.rotated`` signed by the old key, with the new key's signature over the
        rotation statement in its body; pins the new public key; stores the new private key.
        From the next record on, only the new key is valid.
        """
        new_key = new_key or SigningKey.generate()
        with self.file.transaction() as tx:
            tail = tx.tail()
            old_key = self._signing_key_for(tail)
            if new_key.kid == old_key.kid:
                raise InputError("the new key is the current key")
            # Stored even when $LEDGER_SIGNING_KEY is set: the variable must then be updated
            # to this file, and appends with the old key are refused meanwhile.
            store_private_key(new_key, self._environ)
            self._pin(new_key)
            new_sig = new_key.sign(rotation_statement(
                tail.ledger_id, tail.seq + 1, tail.hash, old_key.kid, new_key.kid))
            body = {"new_key": new_key.kid, "new_key_sig": base64.b64encode(new_sig).decode(),
                    "old_key": old_key.kid}
            record = self._append_locked(
                tx, [(ROTATED_KIND, body, normalize_actor({"client": "ledger"}))], key=old_key
            )[0]
            old_entry = load_key_entry(self.workspace.keys_dir, old_key.kid)
            if old_entry is not None:  # pin the retirement, as revocations are pinned
                Keyring({}).save_entry(self.workspace.keys_dir,
                                       old_entry._replace(retired_after_seq=record.seq))
        self._key = new_key
        if self._explicit_key is not None:
            self._explicit_key = new_key
        return record

    def revoke_key(self, kid: str, *, from_seq: int, reason: str = "") -> Record:
        """Revoke ``kid`` from ``from_seq`` on: pin it in the keyring and record it.

        Records at or after ``from_seq`` signed by ``kid`` then fail verification. When ``kid`` is
        the active key, a fresh key is generated, pinned and stored; it signs the revocation
        (body ``successor``) and every record after it.
        """
        keyring = self.keyring()
        entry = keyring.get(kid)
        if entry is None:
            raise KeyNotFoundError(f"{kid} is not pinned in {self.workspace.keys_dir}")
        if from_seq < 0:
            raise InputError("from_seq must be >= 0")
        body: dict[str, Any] = {"from_seq": from_seq, "key": kid, "reason": reason}
        with self.file.transaction() as tx:
            tail = tx.tail()
            try:
                signer: SigningKey | None = self._signing_key_for(tail)
            except KeyNotFoundError:
                signer = None  # e.g. the private key was lost: that is a reason to revoke
            if signer is None or signer.kid == kid:
                # The revoked key must not sign anything more, not even a rotation: a fresh,
                # pinned key signs the revocation and takes over.
                signer = SigningKey.generate()
                store_private_key(signer, self._environ)
                self._pin(signer)
                body["successor"] = signer.kid
                self._key = signer
                if self._explicit_key is not None:
                    self._explicit_key = signer
            keyring.save_entry(self.workspace.keys_dir, entry._replace(
                revoked_from_seq=from_seq, revocation_reason=reason or None))
            return self._append_locked(
                tx, [(REVOKED_KIND, body, normalize_actor({"client": "ledger"}))], key=signer
            )[0]
