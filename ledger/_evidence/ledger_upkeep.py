"""The upkeep of a ledger: its verification, its checkpoints, the repair of its tail, and its
keys' lifecycle.

Each is a room of :class:`~ledger._evidence.ledger.Ledger`, whose methods of the same names
(``verify``, ``checkpoint``, ``auto_checkpoint``, ``repair``, ``rotate_key``...) call through to
these.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from ledger._errors import (
    CheckpointError,
    InputError,
    IntegrityError,
    KeyNotFoundError,
    LedgerError,
    RepairRefusedError,
    StorageError,
)
from ledger._evidence import lightjson
from ledger._evidence.disclosure import (
    COMMITMENT_KEY,
    FORGOTTEN_KIND,
    ForgetSelector,
    check_disclosures,
    forget_lines,
)
from ledger._evidence.keys import (
    KeyEntry,
    Keyring,
    SigningKey,
    load_key_entry,
    store_private_key,
)
from ledger._evidence.read import genesis_ledger_id
from ledger._evidence.record import (
    ADDED_KIND,
    REPAIRED_KIND,
    REVOKED_KIND,
    ROTATED_KIND,
    Record,
    normalize_actor,
    rotation_statement,
)
from ledger._evidence.store import Transaction, fsync_dir
from ledger._startup.namedtuple import NamedTuple

if TYPE_CHECKING:
    from ledger._evidence.checkpoint import Checkpoint
    from ledger._evidence.ledger import Ledger
    from ledger._evidence.verify import VerifyReport


#: The hook path stores a checkpoint outside the workspace every this many records (and at
#: session end); ``$LEDGER_CHECKPOINT_EVERY`` overrides it.
CHECKPOINT_EVERY: Final = 256
CHECKPOINT_EVERY_ENV: Final = "LEDGER_CHECKPOINT_EVERY"


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


class LedgerVerifier:
    """Verifies a ledger against its keys and the checkpoints stored outside it."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

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

        ledger_id = genesis_ledger_id(self.ledger.file.path)
        keyring, trusted, notes = self.ledger._verification_keys(ledger_id)
        targets = [
            parse_checkpoint(text, name).verified_target(keyring, name)
            for name, text in checkpoints
        ]
        anchor_problems: list[Problem] = []
        if stored_checkpoints and ledger_id is not None:
            stored, anchor_problems, anchor_notes = self._stored_targets(ledger_id, keyring)
            targets.extend(stored)
            notes.extend(anchor_notes)
        # The disclosures are checked in a thread while the workers check the chain: the
        # parent mostly waits for them, and the store's digests then cost little wall time.
        with ThreadPoolExecutor(1) as pool:
            disclosures = pool.submit(
                check_disclosures,
                (line for line, _ in self.ledger.file.iter_lines()),
                self.ledger.disclosures.raw_lines(),
            )
            report = verify_file(
                self.ledger.file,
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
        # Each disclosure present must open its commitment; missing ones are counted.
        report.disclosures = checked
        for seq, field, message in checked.bad:
            report.add(Problem("bad-disclosure", seq, seq + 1, f"{field}: {message}"))
        return report

    def _stored_targets(
        self, ledger_id: str, keyring: Keyring
    ) -> tuple[list[Any], list[Any], list[str]]:
        """The checkpoints stored outside the workspace, verified; what is wrong with the
        anchors themselves (a replaced ledger, an unreadable or forged checkpoint file); and
        notes (a copied workspace: the anchors are the original's, checked up to the copy's
        head)."""
        from ledger._evidence.anchors import (  # noqa: PLC0415
            CheckpointStore,
            copy_of,
            workspace_ledger_id,
        )
        from ledger._evidence.checkpoint import (  # noqa: PLC0415
            parse_checkpoint,
            read_checkpoint_file,
        )
        from ledger._evidence.verify import Problem  # noqa: PLC0415

        problems: list[Problem] = []
        anchored = workspace_ledger_id(self.ledger.workspace.root, self.ledger._environ)
        if anchored is not None and anchored != ledger_id:
            where = CheckpointStore.for_ledger(anchored, self.ledger._environ).directory
            problems.append(
                Problem(
                    "replaced-ledger",
                    0,
                    0,
                    f"this workspace's ledger was {anchored}, now it is {ledger_id}: the "
                    f"ledger was replaced (the old one's checkpoints are in {where}); a person "
                    "acknowledges it with `ledger tamper accept`, in their own terminal",
                )
            )
        notes: list[str] = []
        limit: int | None = None  # a copy answers for the records it holds, no further
        home = copy_of(self.ledger.workspace.root, ledger_id, self.ledger._environ, bind=False)
        if home is not None:
            tail = self.ledger.tail(1)
            limit = tail[0].seq + 1 if tail else 0
            notes.append(
                f"this workspace is a copy of {home}, where ledger {ledger_id} lives: its "
                f"checkpoints are checked up to this copy's {limit} records; nothing is "
                "recorded here until `ledger init --fork` gives the copy a ledger of its own"
            )
        targets = []
        for stored in CheckpointStore.for_ledger(ledger_id, self.ledger._environ).list():
            if limit is not None and stored.size > limit:
                continue
            name = str(stored.path)
            try:
                text = read_checkpoint_file(stored.path)
                targets.append(parse_checkpoint(text, name).verified_target(keyring, name))
            except (CheckpointError, StorageError) as exc:
                problems.append(Problem("bad-checkpoint", stored.size - 1, 0, str(exc)))
        return targets, problems, notes

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


class Checkpointer:
    """Signed checkpoints of a ledger: on demand, and due ones stored outside the workspace."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def checkpoint(self) -> Checkpoint:
        """Sign a checkpoint of the current head with the active key.

        Store the text somewhere the ledger's host cannot rewrite (git, CI artifacts).
        """
        from ledger._evidence.checkpoint import sign_checkpoint  # noqa: PLC0415

        with self.ledger.file.transaction() as tx:
            tail = tx.tail()
            key = self.ledger._signing_key_for(tail)
        return sign_checkpoint(tail.ledger_id, tail.seq + 1, tail.hash, key)

    def segment(self) -> tuple[bytes, Checkpoint]:
        """The ledger's bytes and a checkpoint signed over exactly them, read under the lock
        (what ``ledger push`` publishes: a record appended meanwhile is in neither)."""
        from ledger._evidence.checkpoint import sign_checkpoint  # noqa: PLC0415

        with self.ledger.file.transaction() as tx:
            tail = tx.tail()
            self.ledger.require_home(tail.ledger_id)  # a copy would fork the published ref
            key = self.ledger._signing_key_for(tail)
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

        with self.ledger.file.transaction() as tx:
            tail = tx.tail()
            self.ledger.require_home(tail.ledger_id)  # a copy's checkpoints are the original's
            size = tail.seq + 1
            store = CheckpointStore.for_ledger(tail.ledger_id, self.ledger._environ)
            latest = store.latest()
            if latest is not None and latest.size == size and latest.offset == tail.size:
                return AutoCheckpoint("current", size, str(latest.path), "already checkpointed")
            if not session_end and size - (latest.size if latest else 0) < every:
                return AutoCheckpoint("not-due", size, None, "no checkpoint due")
            if latest is not None:
                broken = self._extension_problem(tx, latest, size)
                if broken is not None:
                    return AutoCheckpoint("rollback", size, str(latest.path), broken)
            key = self.ledger._signing_key_for(tail)
            checkpoint = sign_checkpoint(tail.ledger_id, size, tail.hash, key)
            path = store.write(checkpoint.text(), size, tail.size)
        if latest is None:
            from ledger._evidence.anchors import remember_workspace  # noqa: PLC0415

            remember_workspace(self.ledger.workspace.root, tail.ledger_id, self.ledger._environ)
        return AutoCheckpoint("written", size, str(path), f"checkpoint of {size} records")

    def _checkpoint_every(self) -> int:
        env = os.environ if self.ledger._environ is None else self.ledger._environ
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


class Repairer:
    """Recovers the end of a ledger file after a crash or a stray edit, keeping every record."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

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

        keyring, trusted, _ = self.ledger._verification_keys(
            genesis_ledger_id(self.ledger.file.path)
        )
        with self.ledger.file.transaction() as tx:
            content_end = tx.content_end()
            if content_end == 0:
                raise RepairRefusedError(
                    f"refusing to repair: {self.ledger.file.path} holds no record; "
                    "run `ledger init`"
                )
            after = tx.read_at(content_end, tx.size - content_end)
            if after == b"\n":
                return RepairResult(False, 0, None, None, None)
            report = verify_file(
                self.ledger.file,
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
            record = self.ledger._append_locked(
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
        name = f"{self.ledger._clock().replace(':', '').replace('-', '')}-{digest[:12]}.torn"
        quarantine = self.ledger.workspace.quarantine_dir
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


class KeyLifecycle:
    """Rotating, revoking, adding and pinning the keys a ledger is signed with."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def rotate_key(self, new_key: SigningKey | None = None) -> Record:
        """Rotate to a new signing key.

        Appends ``key.rotated`` signed by the old key, with the new key's signature over the
        rotation statement in its body; pins the new public key; stores the new private key.
        From the next record on, only the new key is valid.
        """
        new_key = new_key or SigningKey.generate()
        with self.ledger.file.transaction() as tx:
            tail = tx.tail()
            old_key = self.ledger._signing_key_for(tail)
            if new_key.kid == old_key.kid:
                raise InputError("the new key is the current key")
            # Stored even when $LEDGER_SIGNING_KEY is set: the variable must then be updated
            # to this file, and appends with the old key are refused meanwhile.
            store_private_key(new_key, self.ledger._environ)
            self.ledger._pin(new_key)
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
            record = self.ledger._append_locked(
                tx, [(ROTATED_KIND, body, normalize_actor({"client": "ledger"}))], key=old_key
            )[0]
            old_entry = load_key_entry(self.ledger.workspace.keys_dir, old_key.kid)
            if old_entry is not None:  # pin the retirement, as revocations are pinned
                Keyring({}).save_entry(
                    self.ledger.workspace.keys_dir, old_entry._replace(retired_after_seq=record.seq)
                )
        self.ledger._key = new_key
        if self.ledger._explicit_key is not None:
            self.ledger._explicit_key = new_key
        return record

    def revoke_key(self, kid: str, *, from_seq: int, reason: str = "") -> Record:
        """Revoke ``kid`` from ``from_seq`` on: pin it in the keyring and record it.

        Records at or after ``from_seq`` signed by ``kid`` then fail verification. When ``kid`` is
        the active key, a fresh key is generated, pinned and stored; it signs the revocation
        (body ``successor``) and every record after it.
        """
        keyring = self.ledger.keyring()
        entry = keyring.get(kid)
        if entry is None:
            raise KeyNotFoundError(f"{kid} is not pinned in {self.ledger.workspace.keys_dir}")
        if from_seq < 0:
            raise InputError("from_seq must be >= 0")
        body: dict[str, Any] = {"from_seq": from_seq, "key": kid, "reason": reason}
        with self.ledger.file.transaction() as tx:
            tail = tx.tail()
            try:
                signer: SigningKey | None = self.ledger._signing_key_for(tail)
            except KeyNotFoundError:
                signer = None  # e.g. the private key was lost: that is a reason to revoke
            if signer is None or signer.kid == kid:
                # The revoked key must not sign anything more, not even a rotation: a fresh,
                # pinned key signs the revocation and takes over. No trusted record can
                # introduce it, so the person revoking vouches for it outside the workspace.
                signer = SigningKey.generate()
                store_private_key(signer, self.ledger._environ)
                self.ledger._pin(signer)
                self.pin_trusted(
                    signer.kid,
                    from_seq=tail.seq + 1,
                    public_raw=signer.public_raw,
                    ledger_id=tail.ledger_id,
                )
                body["successor"] = signer.kid
                self.ledger._key = signer
                if self.ledger._explicit_key is not None:
                    self.ledger._explicit_key = signer
            keyring.save_entry(
                self.ledger.workspace.keys_dir,
                entry._replace(revoked_from_seq=from_seq, revocation_reason=reason or None),
            )
            return self.ledger._append_locked(
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
        with self.ledger.file.transaction() as tx:
            tail = tx.tail()
            signer = self.ledger._signing_key_for(tail)
            if kid == signer.kid:
                raise InputError(f"{kid} is the active key already")
            Keyring({}).save_entry(
                self.ledger.workspace.keys_dir, KeyEntry(kid, public_raw, self.ledger._clock())
            )
            body = {"key": kid, "public_key": base64.b64encode(public_raw).decode()}
            return self.ledger._append_locked(
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

        own = self.ledger.ledger_id
        if ledger_id in (None, own):
            self.ledger.require_home(own)  # a copy would vouch for a key of the original's
        ledger_id = ledger_id or own
        if kid is None:
            kid = str(next(self.ledger.records()).key)
        if public_raw is None:
            entry = Keyring.load(self.ledger.workspace.keys_dir, allow_empty=True).get(kid)
            if entry is None:
                raise KeyNotFoundError(f"{kid} is not in {self.ledger.workspace.keys_dir}")
            public_raw = entry.public_raw
        return pin_trusted_keys(
            ledger_id, [TrustPin(kid, public_raw, from_seq)], self.ledger._environ
        )


class Forgotten(NamedTuple):
    """What :meth:`Ledger.forget` erased: its record's seq (None: nothing matched), the
    fields and records whose disclosures went, and their commitments."""

    seq: int | None
    fields: int
    records: int
    commitments: tuple[str, ...]


def forget(
    ledger: Ledger,
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
    with ledger.file.transaction() as tx:
        tail = tx.tail()
        asked = {*selector.seqs, *(seq for seq, _ in selector.fields)}
        missing = sorted(seq for seq in asked if seq > tail.seq)
        if missing:
            raise InputError(
                f"no record with seq {missing[0]} (the last is seq {tail.seq}); see `ledger log`"
            )
        store = ledger.disclosures
        kept, erased = forget_lines(store.lines(), selector, ledger._clock())
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
        (record,) = ledger._append_locked(tx, [(FORGOTTEN_KIND, body, normalize_actor(actor))])
        if after is not None:
            after([record])  # the tripwire seals the new head
        return Forgotten(record.seq, len(erased), len(records), commitments)
