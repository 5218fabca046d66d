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
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple

from ledger._errors import (
    CheckpointError,
    ConfigError,
    InputError,
    IntegrityError,
    KeyNotFoundError,
    LedgerError,
    NotInitializedError,
    RepairRefusedError,
    StorageError,
)
from ledger._evidence import lightjson
from ledger._evidence.disclosure import (
    COMMITMENT_KEY,
    FORGOTTEN_KIND,
    DisclosureReport,
    DisclosureStore,
    ForgetSelector,
    check_disclosures,
    disclosure_line,
    forget_lines,
    seal_body,
)
from ledger._evidence.keys import (
    KeyEntry,
    Keyring,
    SigningKey,
    load_key_entry,
    load_signing_key,
    store_private_key,
)
from ledger._evidence.read import genesis_ledger_id, read_records, record_at, tail_records
from ledger._evidence.record import (
    ADDED_KIND,
    APPEND_RESERVED_PREFIXES,
    FORMAT_VERSION,
    GENESIS_KIND,
    GENESIS_PREV,
    REPAIRED_KIND,
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

__all__ = [
    "MAX_RECORD_BYTES",
    "AutoCheckpoint",
    "Entry",
    "Forgotten",
    "Ledger",
    "RepairResult",
]

#: Batches larger than this load orjson for the canonical encoding (a hook call appends 1-3).
_BULK_APPEND: Final = 32

#: Largest record line accepted. Hook payloads carry whole edits; 10 MB bodies are refused.
MAX_RECORD_BYTES: Final = 4 * 1024 * 1024
#: The hook path stores a checkpoint outside the workspace every this many records (and at
#: session end); ``$LEDGER_CHECKPOINT_EVERY`` overrides it.
CHECKPOINT_EVERY: Final = 256
CHECKPOINT_EVERY_ENV: Final = "LEDGER_CHECKPOINT_EVERY"
_KIND_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._-")

Clock = Callable[[], str]


class Entry(NamedTuple):
    """One record to append with :meth:`Ledger.append_many`."""

    kind: str
    body: dict[str, Any]
    actor: Mapping[str, Any] | None = None


class Forgotten(NamedTuple):
    """What :meth:`Ledger.forget` erased: its record's seq (None: nothing matched), the
    fields and records whose disclosures went, and their commitments."""

    seq: int | None
    fields: int
    records: int
    commitments: tuple[str, ...]


class RepairResult(NamedTuple):
    """What ``repair`` did."""

    repaired: bool
    removed_bytes: int
    removed_sha256: str | None
    quarantine_file: str | None
    record: Record | None
    added_newline: bool = False  # a complete last record was kept; its newline was added
    removed_kind: Literal["torn", "whitespace"] | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "added_newline": self.added_newline,
            "removed_kind": self.removed_kind,
            "quarantine_file": self.quarantine_file,
            "removed_bytes": self.removed_bytes,
            "removed_sha256": self.removed_sha256,
            "repaired": self.repaired,
            "repair_seq": self.record.seq if self.record else None,
        }


class AutoCheckpoint(NamedTuple):
    """What :meth:`Ledger.maybe_checkpoint` did.

    ``status``: ``written`` (a new checkpoint is stored at ``path``), ``current`` (the newest
    stored checkpoint already covers the head), ``not-due``, or ``rollback``: the ledger no
    longer extends the newest stored checkpoint (``path``), so none was written -- a fresh
    checkpoint of the shorter chain would paper over the rollback; ``ledger verify`` reports it.
    ``failed``: it could not be written (``message`` says why).
    """

    status: Literal["written", "current", "not-due", "rollback", "failed"]
    size: int
    path: str | None
    message: str


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
            raise NotInitializedError(f"no ledger in {workspace.orchestration}; run `ledger init`")
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
                body={
                    "created_by": f"ledger {__version__}",
                    "format": FORMAT_VERSION,
                    "key": key.kid,
                },
                key=key,
            )
            tx.append(line + b"\n")
        fsync_dir(workspace.orchestration)
        ledger._anchor_new_ledger(lightjson.loads(line)["ledger"], key)
        return ledger

    def _anchor_new_ledger(self, ledger_id: str, key: SigningKey) -> None:
        # The trust root and the workspace's ledger id live outside the workspace, where an
        # agent rewriting .orchestration/ cannot replace them (README "Trust model").
        from ledger._evidence.anchors import (  # noqa: PLC0415
            TrustPin,
            pin_trusted_keys,
            remember_workspace,
        )

        pin_trusted_keys(ledger_id, [TrustPin(key.kid, key.public_raw, 0)], self._environ)
        remember_workspace(self.workspace.root, ledger_id, self._environ)

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
        # Secrets redacted and content committed before anything is signed or written.
        sealed = [seal_body(item.body) for item in items]
        with self.file.transaction() as tx:
            records = self._append_locked(
                tx,
                [(i.kind, body, a) for i, (body, _), a in zip(items, sealed, actors, strict=True)],
            )
            disclosures = [
                disclosure_line(record, d)
                for record, (_, found) in zip(records, sealed, strict=True)
                for d in found
            ]
            if disclosures:  # under the lock: `ledger forget` rewrites the store under it too
                self.disclosures.append(disclosures)
            if after is not None:
                after(records)  # still under the lock: the tripwire seals the new head
            return records

    def forget(
        self,
        selector: ForgetSelector,
        *,
        actor: Mapping[str, Any] | None = None,
        after: Callable[[list[Record]], None] | None = None,
    ) -> Forgotten:
        """Erase the disclosures ``selector`` picks (salt and value) and append a signed
        ``ledger.forgotten`` record of what was erased: the commitments and counts, never the
        content (nor the text matched). Under the append lock: a hook appending at the same
        time waits, and loses nothing.

        Raises:
            InputError: a seq the ledger does not hold.
        """
        with self.file.transaction() as tx:
            tail = tx.tail()
            missing = sorted(
                s for s in {*selector.seqs, *(s for s, _ in selector.fields)} if s > tail.seq
            )
            if missing:
                raise InputError(
                    f"no record with seq {missing[0]} (the last is seq {tail.seq}); "
                    "see `ledger log`"
                )
            store = self.disclosures
            kept, erased = forget_lines(store.lines(), selector, self._clock())
            if not erased:
                return Forgotten(None, 0, 0, ())
            store.rewrite(kept)
            commitments = tuple(sorted({str(e[COMMITMENT_KEY]) for e in erased}))
            records = {e.get("seq") for e in erased}
            body = {
                "commitments": list(commitments),
                "fields": len(erased),
                "records": len(records),
                "by": selector.how,
            }
            record = self._append_locked(tx, [(FORGOTTEN_KIND, body, normalize_actor(actor))])[0]
            if after is not None:
                after([record])  # the tripwire seals the new head
            return Forgotten(record.seq, len(erased), len(records), commitments)

    @property
    def disclosures(self) -> DisclosureStore:
        """The disclosure store beside this ledger (``disclosures.jsonl``)."""
        return DisclosureStore.beside(self.workspace.ledger_path)

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
    def ledger_id(self) -> str:
        """The ledger id fixed at init."""
        first = record_at(self.file.path, 0)
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
        stored_checkpoints: bool = True,
    ) -> VerifyReport:
        """Verify every record, link, key and checkpoint; report, do not raise on bad evidence.

        Args:
            checkpoints: ``(name, text)`` pairs of checkpoints kept elsewhere.
            jobs: worker processes (default: all cores).
            progress: ``(bytes_done, bytes_total)`` callback.
            stored_checkpoints: also check every checkpoint the hook path stored outside the
                workspace, and that the workspace still holds the ledger it anchored.

        Raises:
            KeyNotFoundError: no public key at all to verify with (we could not check).
            StorageError: the ledger file is unreadable.
            CheckpointError: a given checkpoint is malformed or not validly signed.
        """
        from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415 -- verify only

        from ledger._evidence.checkpoint import parse_checkpoint  # noqa: PLC0415
        from ledger._evidence.verify import Problem  # noqa: PLC0415
        from ledger._evidence.verify_file import verify_file  # noqa: PLC0415

        ledger_id = genesis_ledger_id(self.file.path)
        keyring, trusted, notes = self._verification_keys(ledger_id)
        targets = [
            parse_checkpoint(text, name).verified_target(keyring, name)
            for name, text in checkpoints
        ]
        anchor_problems: list[Problem] = []
        if stored_checkpoints and ledger_id is not None:
            stored, anchor_problems = self._stored_targets(ledger_id, keyring)
            targets.extend(stored)
        # The disclosures are checked in a thread while the workers check the chain: the
        # parent mostly waits for them, and the store's digests then cost little wall time.
        with ThreadPoolExecutor(1) as pool:
            disclosures = pool.submit(
                check_disclosures,
                (line for line, _ in self.file.iter_lines()),
                self.disclosures.raw_lines(),
            )
            report = verify_file(
                self.file,
                {e.kid: e.public_raw for e in keyring},
                revoked_from={
                    e.kid: e.revoked_from_seq for e in keyring if e.revoked_from_seq is not None
                },
                checkpoints=targets,
                trusted=trusted,
                jobs=jobs,
                progress=progress,
            )
            checked = disclosures.result()
        report.notes.extend(notes)
        for problem in anchor_problems:
            report.add(problem)
        self._add_disclosures(report, checked)
        return report

    @staticmethod
    def _add_disclosures(report: VerifyReport, checked: DisclosureReport) -> None:
        """Each disclosure present must open its commitment; missing ones are counted."""
        from ledger._evidence.verify import Problem  # noqa: PLC0415

        report.disclosures = checked
        for seq, field, message in checked.bad:
            report.add(Problem("bad-disclosure", seq, seq + 1, f"{field}: {message}"))

    def _stored_targets(self, ledger_id: str, keyring: Keyring) -> tuple[list[Any], list[Any]]:
        """The checkpoints stored outside the workspace, verified, and what is wrong with the
        anchors themselves (a replaced ledger, an unreadable or forged checkpoint file)."""
        from ledger._evidence.anchors import CheckpointStore, workspace_ledger_id  # noqa: PLC0415
        from ledger._evidence.checkpoint import (  # noqa: PLC0415
            parse_checkpoint,
            read_checkpoint_file,
        )
        from ledger._evidence.verify import Problem  # noqa: PLC0415

        problems: list[Problem] = []
        anchored = workspace_ledger_id(self.workspace.root, self._environ)
        if anchored is not None and anchored != ledger_id:
            where = CheckpointStore.for_ledger(anchored, self._environ).directory
            problems.append(
                Problem(
                    "replaced-ledger",
                    0,
                    0,
                    f"this workspace's ledger was {anchored}, now it is {ledger_id}: the "
                    f"ledger was replaced (the old one's checkpoints are in {where})",
                )
            )
        targets = []
        for stored in CheckpointStore.for_ledger(ledger_id, self._environ).list():
            name = str(stored.path)
            try:
                text = read_checkpoint_file(stored.path)
                targets.append(parse_checkpoint(text, name).verified_target(keyring, name))
            except (CheckpointError, StorageError) as exc:
                problems.append(Problem("bad-checkpoint", stored.size - 1, 0, str(exc)))
        return targets, problems

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

    def segment(self) -> tuple[bytes, Checkpoint]:
        """The ledger's bytes and a checkpoint signed over exactly them, read under the lock
        (what ``ledger push`` publishes: a record appended meanwhile is in neither)."""
        from ledger._evidence.checkpoint import sign_checkpoint  # noqa: PLC0415

        with self.file.transaction() as tx:
            tail = tx.tail()
            key = self._signing_key_for(tail)
            data = tx.read_at(0, tail.size)
        return data, sign_checkpoint(tail.ledger_id, tail.seq + 1, tail.hash, key)

    def auto_checkpoint(
        self,
        *,
        session_end: bool = False,
        every: int | None = None,
        appended: tuple[int, int] | None = None,
    ) -> AutoCheckpoint:
        """Store a signed checkpoint outside the workspace when one is due.

        The hook path calls this after recording every event: a checkpoint is due every
        ``every`` records (default :data:`CHECKPOINT_EVERY`, or ``$LEDGER_CHECKPOINT_EVERY``)
        and at ``session_end``. It is written only when the ledger extends the newest stored
        checkpoint -- the record that checkpoint ends with is still at the byte offset it was
        at, with the same hash. Otherwise nothing is written: the status is ``rollback`` and
        ``ledger verify`` reports it against the stored checkpoint.

        Never raises: the event's decision is already recorded and answered by then, and a
        checkpoint that cannot be written (status ``failed``) must not change that answer.

        Args:
            appended: ``(first seq, last seq)`` the caller just appended. When given and no
                multiple of ``every`` was crossed (and it is not a session end), nothing is
                due and nothing is read: the common hook call pays no lock, no file and no
                import for checkpoints.
        """
        every = every or self._checkpoint_every()
        if (
            appended is not None
            and not session_end
            and appended[0] // every == (appended[1] + 1) // every
        ):
            return AutoCheckpoint("not-due", appended[1] + 1, None, "no checkpoint due")
        try:
            return self._auto_checkpoint(session_end, every)
        except LedgerError as exc:
            return AutoCheckpoint("failed", -1, None, str(exc))

    def _auto_checkpoint(self, session_end: bool, every: int) -> AutoCheckpoint:
        from ledger._evidence.anchors import CheckpointStore  # noqa: PLC0415
        from ledger._evidence.checkpoint import sign_checkpoint  # noqa: PLC0415

        with self.file.transaction() as tx:
            tail = tx.tail()
            size = tail.seq + 1
            store = CheckpointStore.for_ledger(tail.ledger_id, self._environ)
            latest = store.latest()
            if latest is not None and latest.size == size and latest.offset == tail.size:
                return AutoCheckpoint("current", size, str(latest.path), "already checkpointed")
            if not session_end and size - (latest.size if latest else 0) < every:
                return AutoCheckpoint("not-due", size, None, "no checkpoint due")
            if latest is not None:
                broken = self._extension_problem(tx, latest, size)
                if broken is not None:
                    return AutoCheckpoint("rollback", size, str(latest.path), broken)
            key = self._signing_key_for(tail)
            checkpoint = sign_checkpoint(tail.ledger_id, size, tail.hash, key)
            path = store.write(checkpoint.text(), size, tail.size)
        if latest is None:
            from ledger._evidence.anchors import remember_workspace  # noqa: PLC0415

            remember_workspace(self.workspace.root, tail.ledger_id, self._environ)
        return AutoCheckpoint("written", size, str(path), f"checkpoint of {size} records")

    def _checkpoint_every(self) -> int:
        env = os.environ if self._environ is None else self._environ
        configured = env.get(CHECKPOINT_EVERY_ENV, "")
        return (
            int(configured) if configured.isdigit() and int(configured) > 0 else (CHECKPOINT_EVERY)
        )

    @staticmethod
    def _extension_problem(tx: Transaction, latest: Any, size: int) -> str | None:  # noqa: ANN401
        """Why the ledger does not extend the stored checkpoint ``latest``, or None."""
        from ledger._evidence.checkpoint import parse_checkpoint, read_checkpoint_file  # noqa: PLC0415

        try:
            stored = parse_checkpoint(read_checkpoint_file(latest.path), str(latest.path))
        except LedgerError as exc:
            return f"the newest stored checkpoint is unreadable: {exc}"
        if size < stored.size or latest.offset > tx.size:
            return (
                f"the ledger has {size} records; the checkpoint {latest.path} saw "
                f"{stored.size}: rolled back"
            )
        found = tx.last_line(latest.offset)
        try:
            data = lightjson.loads(found[1]) if found else None
        except ValueError:
            data = None
        if (
            not isinstance(data, dict)
            or data.get("seq") != stored.size - 1
            or data.get("hash") != stored.head
        ):
            return (
                f"record seq {stored.size - 1} is not the one checkpoint {latest.path} "
                "saw: history was rewritten"
            )
        return None

    # --- repair ----------------------------------------------------------------------------

    def repair(self) -> RepairResult:
        """Recover the end of the file after a crash or a stray edit, keeping every record.

        * A torn last line (a crash mid-append): its bytes go to ``.orchestration/quarantine/``
          and the file is cut back to the last complete record.
        * Blank lines or whitespace after the last record: quarantined and cut the same way.
        * A complete, validly signed last record that only lacks its final newline: kept; the
          newline is added (with any whitespace after it quarantined).

        Then a ``ledger.repaired`` record names what was removed (SHA-256, length, quarantine
        file) and whether a newline was added.

        Raises:
            RepairRefusedError: anything else is wrong; nothing is changed.
        """
        from ledger._evidence.verify_file import verify_file  # noqa: PLC0415

        keyring, trusted, _ = self._verification_keys(genesis_ledger_id(self.file.path))
        with self.file.transaction() as tx:
            content_end = tx.content_end()
            if content_end == 0:
                raise RepairRefusedError(
                    f"refusing to repair: {self.file.path} holds no record; run `ledger init`"
                )
            after = tx.read_at(content_end, tx.size - content_end)
            if after == b"\n":
                return RepairResult(False, 0, None, None, None)
            report = verify_file(
                self.file,
                {e.kid: e.public_raw for e in keyring},
                revoked_from={
                    e.kid: e.revoked_from_seq for e in keyring if e.revoked_from_seq is not None
                },
                trusted=trusted,
                end=content_end,
            )
            codes = [p.code for p in report.problems]
            removed_kind: Literal["torn", "whitespace"]
            if report.problem_count == 1 and codes == ["missing-newline"]:
                # The last record is sound: keep it, cut what follows, end it with a newline.
                cut, removed, removed_kind = content_end, after, "whitespace"
            elif report.problem_count == 1 and codes == ["torn-tail"]:
                cut, removed_kind = tx.line_start(content_end), "torn"
                removed = tx.read_at(cut, tx.size - cut)
            else:
                raise RepairRefusedError(
                    f"refusing to repair: the ledger is damaged before its tail "
                    f"({report.summary()}); run `ledger verify` for every problem",
                    report,
                )
            quarantine_file = self._quarantine(removed) if removed else None
            digest = hashlib.sha256(removed).hexdigest() if removed else None
            tx.truncate(cut)
            if removed_kind == "whitespace":
                tx.append(b"\n")
            added_newline = removed_kind == "whitespace" and not removed.startswith(b"\n")
            body = {
                "added_newline": added_newline,
                "offset": cut,
                "quarantine_file": quarantine_file,
                "removed_bytes": len(removed),
                "removed_kind": removed_kind if removed else None,
                "removed_sha256": digest,
            }
            record = self._append_locked(
                tx, [(REPAIRED_KIND, body, normalize_actor({"client": "ledger"}))]
            )[0]
        return RepairResult(
            True,
            len(removed),
            digest,
            quarantine_file,
            record,
            added_newline,
            removed_kind if removed else None,
        )

    def _quarantine(self, data: bytes) -> str:
        """Keep ``data`` in ``.orchestration/quarantine/``; its path relative to it."""
        digest = hashlib.sha256(data).hexdigest()
        name = f"{self._clock().replace(':', '').replace('-', '')}-{digest[:12]}.torn"
        quarantine = self.workspace.quarantine_dir
        try:
            quarantine.mkdir(parents=True, exist_ok=True)
            fd = os.open(quarantine / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise StorageError(f"cannot write quarantine file: {exc.strerror}") from None
        fsync_dir(quarantine)
        return f"quarantine/{name}"

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
            new_sig = new_key.sign(
                rotation_statement(
                    tail.ledger_id, tail.seq + 1, tail.hash, old_key.kid, new_key.kid
                )
            )
            body = {
                "new_key": new_key.kid,
                "new_key_sig": base64.b64encode(new_sig).decode(),
                "old_key": old_key.kid,
            }
            record = self._append_locked(
                tx, [(ROTATED_KIND, body, normalize_actor({"client": "ledger"}))], key=old_key
            )[0]
            old_entry = load_key_entry(self.workspace.keys_dir, old_key.kid)
            if old_entry is not None:  # pin the retirement, as revocations are pinned
                Keyring({}).save_entry(
                    self.workspace.keys_dir, old_entry._replace(retired_after_seq=record.seq)
                )
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
                # pinned key signs the revocation and takes over. No trusted record can
                # introduce it, so the person revoking vouches for it outside the workspace.
                signer = SigningKey.generate()
                store_private_key(signer, self._environ)
                self._pin(signer)
                self.pin_trusted(
                    signer.kid,
                    from_seq=tail.seq + 1,
                    public_raw=signer.public_raw,
                    ledger_id=tail.ledger_id,
                )
                body["successor"] = signer.kid
                self._key = signer
                if self._explicit_key is not None:
                    self._explicit_key = signer
            keyring.save_entry(
                self.workspace.keys_dir,
                entry._replace(revoked_from_seq=from_seq, revocation_reason=reason or None),
            )
            return self._append_locked(
                tx, [(REVOKED_KIND, body, normalize_actor({"client": "ledger"}))], key=signer
            )[0]

    def add_key(self, public_raw: bytes) -> Record:
        """Introduce a teammate's (or another machine's) public key with a ``key.added`` record
        signed by the active key: from the next record on, records it signs are trusted.

        Raises:
            InputError: not a 32-byte Ed25519 public key, or already known.
        """
        from ledger._evidence.keys import key_id_for  # noqa: PLC0415

        if len(public_raw) != 32:
            raise InputError("an Ed25519 public key is 32 bytes")
        kid = key_id_for(public_raw)
        with self.file.transaction() as tx:
            tail = tx.tail()
            signer = self._signing_key_for(tail)
            if kid == signer.kid:
                raise InputError(f"{kid} is the active key already")
            Keyring({}).save_entry(
                self.workspace.keys_dir, KeyEntry(kid, public_raw, self._clock())
            )
            body = {"key": kid, "public_key": base64.b64encode(public_raw).decode()}
            return self._append_locked(
                tx, [(ADDED_KIND, body, normalize_actor({"client": "ledger"}))], key=signer
            )[0]

    def pin_trusted(
        self,
        kid: str | None = None,
        *,
        from_seq: int = 0,
        public_raw: bytes | None = None,
        ledger_id: str | None = None,
    ) -> Path:
        """Vouch for a key outside the workspace (``$LEDGER_HOME/trusted/<ledger id>.json``).

        Without ``kid``, pins the genesis record's key: the ledger as it started is the one the
        user trusts. Returns the trust file's path.

        Raises:
            KeyNotFoundError: ``kid`` is not in the keyring (and no ``public_raw`` was given).
        """
        from ledger._evidence.anchors import TrustPin, pin_trusted_keys  # noqa: PLC0415

        ledger_id = ledger_id or self.ledger_id
        if kid is None:
            kid = str(next(self.records()).key)
        if public_raw is None:
            entry = Keyring.load(self.workspace.keys_dir, allow_empty=True).get(kid)
            if entry is None:
                raise KeyNotFoundError(f"{kid} is not in {self.workspace.keys_dir}")
            public_raw = entry.public_raw
        return pin_trusted_keys(ledger_id, [TrustPin(kid, public_raw, from_seq)], self._environ)


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
    ledger tail the hook did not append). README "Trust model".

    Args:
        after: called with the new records while the append lock is still held.
    """
    return ledger._append_entries(entries, internal=True, after=after)
