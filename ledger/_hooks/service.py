"""The hook service: one client hook call, event in, signed records and a decision out.

``run_hook`` is what ``ledger hook <client>`` runs (parse, govern, record, answer, and the
fail-closed answer on any failure); ``handle_event`` governs one parsed event: find the
workspace, fold the governance state (the projection cache), load the configuration
(:mod:`ledger._governance.config`), run the engine, append every record of the call with one
lock and one fsync. The pieces live beside it: :mod:`ledger._hooks.mapping` (event ↔ engine),
:mod:`ledger._hooks.records` (record bodies). docs/architecture.md draws the flow.
"""

from __future__ import annotations

import functools
import hashlib
import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ledger._clients import (
    MAX_PAYLOAD_BYTES,
    HookDecision,
    HookEvent,
    HookResponse,
    fail_closed_response,
    parse_payload,
    render_response,
)
from ledger._clients.registry import CLIENTS, actor_name
from ledger._errors import (
    InputError,
    LedgerError,
    LockTimeoutError,
    NotAPersonError,
    WorkspaceCopiedError,
)
from ledger._evidence import lightjson
from ledger._evidence.anchors import remember_workspace, workspace_ledger_id
from ledger._evidence.disclosure import ForgetSelector
from ledger._evidence.ledger import Entry, Forgotten, Ledger, append_reserved, forget
from ledger._evidence.read import tail_records
from ledger._evidence.record import Record
from ledger._evidence.store import LOCK_DEADLINE
from ledger._git import read_head
from ledger._governance.config import (
    WorkspaceConfig,
    disclose_policy,
    policy_config,
    register_configured_hooks,
    retention_policy,
)
from ledger._governance.config_evidence import CONFIG_CHANGED_KIND, config_change, config_digests
from ledger._governance.engine import HookEngine, HookOutcome, Invocation
from ledger._governance.intents import IntentsFile
from ledger._governance.loosening import HOOK_CONFIG_NAMES, INTENTS_NAME, loosenings
from ledger._governance.policies import Governance
from ledger._hooks.bytecode import JudgedBytecode, judge_hook_bytecode
from ledger._hooks.mapping import BLOCKABLE_EVENTS, decision_of, invocation_of
from ledger._hooks.records import hook_body
from ledger._hooks.tripwire import (
    ARMED_KIND,
    SEALED_KINDS,
    TAMPER_KIND,
    TRIPWIRE_SCAN_LIMIT,
    Change,
    Fingerprint,
    Rule,
    Seal,
    TripwireStore,
    Verdict,
    compare,
    encode_changes,
    fingerprint,
    inspect,
    ledger_problems,
    next_seal,
    protected_set,
    rerooted,
    restore,
    settings_tightened,
)
from ledger._projections import GOVERNANCE_STATE, ProjectionCache
from ledger._startup.namedtuple import NamedTuple
from ledger._version import __version__
from ledger._workspace import Workspace, cache_secret_path, find_root

if TYPE_CHECKING:
    from ledger._evidence.remote import DiscloseMode, FetchedLedger, PushResult
    from ledger._governance.person import PersonCommandKind

__all__ = [
    "CallAbandonedError",
    "GovernedWorkspace",
    "TamperResolution",
    "fetch_evidence_reading",
    "handle_event",
    "locate_root",
    "push_workspace_evidence",
    "run_hook",
]


class CallAbandonedError(Exception):
    """The resident decider's caller stopped waiting before the records were appended."""


def push_workspace_evidence(
    root: Path,
    remote: str = "origin",
    *,
    disclose: DiscloseMode = "policy",
    publish_verbatim_content: bool = False,
    environ: Mapping[str, str] | None = None,
) -> PushResult:
    """``ledger push``: :func:`ledger.push_evidence` of the workspace at ``root``, publishing
    under ``--disclose policy`` the disclosures of the fields ``hooks.yaml``'s ``disclose:``
    names (by default no prompt and no file content).

    Raises:
        ConfigError: ``disclose:`` is not a list of field names.
    """
    from ledger._evidence.remote import push_evidence  # noqa: PLC0415

    workspace = Workspace(root)
    config = WorkspaceConfig(workspace.orchestration, workspace.cache_dir, environ=environ)
    return push_evidence(
        Ledger.open(root, environ=environ),
        remote,
        environ=environ,
        publish_verbatim_content=publish_verbatim_content,
        disclose=disclose,
        policy=config.disclose_policy(),
    )


def fetch_evidence_reading(
    root: Path, remote: str = "origin", *, environ: Mapping[str, str] | None = None
) -> list[FetchedLedger]:
    """``ledger fetch`` in a clone with no ledger of its own, which only reads teammates'
    evidence: verified and kept as :meth:`GovernedWorkspace.fetch_evidence` does, against the
    public keys committed in ``.orchestration/keys/``. A refusal is raised but not recorded:
    there is no ledger, and no key, to sign it with.

    Raises:
        EvidenceRefusedError: a ref was rewritten, forked or badly signed.
    """
    from ledger._evidence.ledger import open_reader  # noqa: PLC0415
    from ledger._evidence.remote import fetch_evidence  # noqa: PLC0415
    from ledger._projections.foreign import mark_verified  # noqa: PLC0415

    reader = open_reader(root, environ=environ)
    fetched = fetch_evidence(reader, remote, environ=environ)
    for item in fetched:
        if item.status in ("new", "updated"):
            mark_verified(reader, item.ledger_id, item.commit, environ=environ)
    return fetched


def open_for_hook(root: Path, environ: Mapping[str, str] | None) -> Ledger:
    """The workspace's ledger as a hook call writes it: its lock waited on for
    ``LOCK_DEADLINE`` at most, so the call is answered before the client's hook timer fires
    (a person's command waits longer: ``LIBRARY_LOCK_DEADLINE``)."""
    ledger = Ledger.open(root, environ=environ)
    ledger.file.deadline = LOCK_DEADLINE
    return ledger


def locate_root(
    event: HookEvent | None,
    explicit: str | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    cwd: str | None = None,
) -> Path:
    """The workspace of a hook call: ``--root``/``$LEDGER_ROOT``, else the nearest
    ``.orchestration/`` above the payload's ``cwd``, else above ``$CLAUDE_PROJECT_DIR`` (and the
    other clients' project variables), else above the hook process's directory (``cwd``: the
    caller's, when a resident decider answers for it; default this process's)."""
    env = os.environ if environ is None else environ
    if explicit or env.get("LEDGER_ROOT"):
        return find_root(explicit, environ=env)
    starts = [
        event.cwd if event else None,
        env.get("CLAUDE_PROJECT_DIR"),
        env.get("CURSOR_PROJECT_DIR"),
        env.get("GEMINI_PROJECT_DIR"),
    ]
    for start in starts:
        if start:
            try:
                return find_root(start=Path(start), environ={})
            except LedgerError:
                continue
    return find_root(start=Path(cwd) if cwd else None, environ={})


class GovernedWorkspace:
    """One workspace's ledger, governance state, configuration and engine, for one hook call."""

    def __init__(
        self, root: Path, *, environ: Mapping[str, str] | None = None, home_only: bool = True
    ) -> None:
        """``home_only=False`` also opens a copied workspace, to read its configuration
        (``ledger doctor``): nothing under the copied ledger's id may be written then."""
        workspace = Workspace(root)
        self.root = root
        self.environ = environ
        self.real_root = os.path.realpath(root)
        self.orchestration = workspace.orchestration
        self.cache_dir = workspace.cache_dir
        self.ledger = open_for_hook(root, environ)
        ledger_id = self.ledger.ledger_id
        if home_only:
            # Before anything is read or written under the ledger's id: a copy of a workspace
            # shares it with the original, whose seal and checkpoints this call would move.
            self.ledger.require_home(ledger_id)
        self.projections = ProjectionCache(
            self.ledger.file.path, self.cache_dir, ledger_id, environ=environ
        )
        self.state = self.projections.state(GOVERNANCE_STATE)
        self.config = WorkspaceConfig(self.orchestration, self.cache_dir, environ=environ)
        self.config_digests = config_digests(self.orchestration)  # what this decision uses
        self._governance: Governance | None = None
        self._pending: list[Entry] = []
        self._verdict: Verdict | None = None
        self._inspected: Seal | None = None  # the seal this call's check compared with
        self._tamper_recorded = self.state.tamper is not None
        self._store: TripwireStore | None = None
        self._head: str | None = read_head(root)

    def load_intents(self) -> tuple[IntentsFile | None, str | None]:
        """The intents file (or why it cannot be used)."""
        return self.config.intents()

    def record_person_command(
        self, kind: PersonCommandKind, body: dict[str, Any], *, session: str | None
    ) -> Record:
        """Record what a person's command did (``ledger intent ...``, the tripwire's accept and
        revert), through the internal path: these are ledger's own kinds, which
        :meth:`Ledger.append` refuses.

        Raises:
            NotAPersonError: ``kind`` is an approval (:data:`APPROVAL_KINDS`) and this process
                runs inside an agent (its environment or an ancestor process says so).
        """
        from ledger._governance.person import APPROVAL_KINDS  # noqa: PLC0415

        if kind in APPROVAL_KINDS:
            self._require_person(kind)
        return self._append_person(kind, body, session=session, after=self._seal_head)

    def forget(self, selector: ForgetSelector) -> Forgotten:
        """``ledger forget`` (:func:`~ledger._evidence.ledger_upkeep.forget`) as a person's
        command (refused inside an agent: erasing what a session said is the person's call),
        sealed for the tripwire.

        Raises:
            NotAPersonError: this process runs inside an agent.
            InputError: a seq the ledger does not hold.
        """
        from ledger._governance.person import PERSON_ACTOR  # noqa: PLC0415

        self._require_person("ledger.forgotten")
        return forget(self.ledger, selector, actor={"client": PERSON_ACTOR}, after=self._seal_head)

    def apply_retention(self) -> list[Forgotten]:
        """Forget the disclosures ``hooks.yaml``'s ``retention:`` no longer keeps (at a
        session's end), each rule's erasure a signed ``ledger.forgotten`` record."""
        rules = retention_policy(self.config.hooks(), self.config.hooks_path)
        if not rules or not self.ledger.disclosures.exists():
            return []
        from ledger._evidence.disclosure import retention_selectors  # noqa: PLC0415

        done = [
            forget(self.ledger, selector, actor={"client": "ledger"}, after=self._seal_head)
            for selector in retention_selectors(rules, time.time())
        ]
        return [d for d in done if d.seq is not None]

    def fetch_evidence(
        self, remote: str = "origin", *, jobs: int | None = None
    ) -> list[FetchedLedger]:
        """``ledger fetch``: :func:`ledger.fetch_evidence`, and a refusal recorded as a signed
        ``governance.evidence_refused`` record in this ledger before it is raised, so the
        refusal outlives the terminal it was printed on (``ledger doctor`` names it).

        Raises:
            EvidenceRefusedError: after recording it.
        """
        from ledger._errors import EvidenceRefusedError  # noqa: PLC0415
        from ledger._evidence.remote import fetch_evidence  # noqa: PLC0415

        try:
            fetched = fetch_evidence(self.ledger, remote, jobs=jobs)
        except EvidenceRefusedError as refused:
            body = {
                "ledger_id": refused.ledger_id,
                "reason": str(refused),
                "remote": remote,
                "seq": refused.seq,
            }
            self.record_person_command("governance.evidence_refused", body, session=None)
            raise
        self._note_verified(fetched)
        return fetched

    def _note_verified(self, fetched: list[FetchedLedger]) -> None:
        """Note each newly verified teammate ledger in the blame cache, so the first ``ledger
        blame`` that needs it folds it without verifying it again (blame in any clone); a
        note that cannot be written only leaves that blame to verify it too."""
        from ledger._projections.foreign import mark_verified  # noqa: PLC0415

        for item in fetched:
            if item.status in ("new", "updated") and item.ledger_id != self.ledger.ledger_id:
                mark_verified(self.ledger, item.ledger_id, item.commit, environ=self.environ)

    def _append_person(
        self,
        kind: PersonCommandKind,
        body: dict[str, Any],
        *,
        after: Callable[[list[Record]], None],
        session: str | None = None,
    ) -> Record:
        from ledger._governance.person import PERSON_ACTOR  # noqa: PLC0415

        actor = {"client": PERSON_ACTOR, "session": session}
        return append_reserved(self.ledger, [Entry(kind, body, actor)], after=after)[0]

    def build(self) -> tuple[HookEngine, Governance]:
        """The engine with built-in policies and configured external hooks."""
        hooks = self.config.hooks()
        switches = policy_config(hooks, self.config.hooks_path)
        retention_policy(hooks, self.config.hooks_path)  # a bad one is refused on any call
        disclose_policy(hooks, self.config.hooks_path)
        intents, intents_error = self.config.intents()
        governance = Governance(
            root=self.real_root,
            state=self.state,
            intents=intents,
            intents_error=intents_error,
            cache_dir=self.cache_dir,
            scope_compiler=self.config.compile_scope,
            config=switches,
            environ=self.environ,
        )
        engine = HookEngine(
            record=self._record,
            fired_once=self.state.fired_once(),
            fail_closed=switches.fail_closed,
        )
        governance.register(engine)
        self._governance = governance
        register_configured_hooks(
            engine, hooks, self.root, self.config.hooks_path, environ=self.environ
        )
        return engine, governance

    def _actor(self, inv: Invocation) -> dict[str, str | None]:
        model = inv.model
        if model is None and inv.session_id is not None:
            model = self.state.sessions.get(inv.session_id, {}).get("model")
        return {
            "agent": inv.agent_id,
            "client": actor_name(inv.client),
            "model": model,
            "session": inv.session_id,
        }

    def _record(self, kind: str, decided: dict[str, Any], inv: Invocation) -> None:
        governance = self._governance
        body = hook_body(
            kind,
            decided,
            inv,
            git_head=self._head,
            config=self.config_digests,
            observed=governance.observed if governance else {},
            attribution=governance.attribution if governance else None,
            root=str(self.root),
        )
        self._pending.append(Entry(kind, body, self._actor(inv)))

    def flush(
        self, extra: list[tuple[str, dict[str, Any]]], inv: Invocation
    ) -> tuple[int, int] | None:
        """Append the hook record and any extra records with one lock and one fsync.

        Returns:
            ``(first seq, last seq)`` of what was appended, or None when nothing was.
        """
        actor = self._actor(inv)
        entries = list(self._pending) + [Entry(kind, body, actor) for kind, body in extra]
        self._pending.clear()
        change = config_change(self.state.config, self.config_digests)
        if change is not None and entries:  # recorded first, in the same write as its first use
            entries.insert(0, Entry(CONFIG_CHANGED_KIND, change, {"client": "ledger"}))
        if entries and self._verdict is not None:  # what the tripwire found, before all else
            entries[:0] = self._tripwire_entries(self._verdict, inv)
        if not entries:
            return None
        records = append_reserved(self.ledger, entries, after=self._seal_head)
        return records[0].seq, records[-1].seq

    # --- the tripwire (ledger/_hooks/tripwire.py) ----------------------------------------------

    def check_tripwire(self, *, during_call: bool) -> Verdict:
        """Compare the protected set and the ledger's tail with the seal; what this call then
        seals (at its append, under the lock) is the verdict's fingerprint and the new head."""
        store = self._tripwire_store()
        # The seal, the tail and the disk, read as one under the append lock: every process that
        # seals, and every checkpoint write and prune, holds that lock, so none of them can fall
        # between what is compared (a checkpoint written between a listing and the seal's
        # reading looked removed).
        with self.ledger.file.transaction() as tx:
            tail = tx.tail()
            loaded = store.load()
            sealed = self._as_here(loaded)
            paths = protected_set(self.root, self.ledger.ledger_id, self.environ)
            now = _fingerprint(
                paths, sealed.files if isinstance(sealed, Seal) else None, self.environ
            )
        self._inspected = loaded if isinstance(loaded, Seal) else None
        # Armed once a seal was ever written here: a ledger cut back below its
        # governance.tripwire_armed record does not disarm it (the store is outside the workspace).
        armed = self.state.tripwire_armed or store.directory.is_dir()
        if store.secret() is None and not armed:
            self._verdict = Verdict([], [], now, arm=False)  # nothing can be sealed here
            return self._verdict
        self._verdict = inspect(
            sealed,
            now,
            (tail.seq, tail.hash),
            lambda after: records_between(self.ledger, after, tail.seq),
            armed=armed,
            during_call=during_call,
            reserved=SEALED_KINDS,
            loosens=functools.cache(lambda change: _loosens(store, sealed, change)),
            tightens=functools.cache(
                lambda change: settings_tightened(
                    store,
                    change,
                    sealed.files.get(change.path) if isinstance(sealed, Seal) else None,
                    now.get(change.path),
                )
            ),
        )
        if store.secret() is None:
            self._verdict.problems.append(
                f"the per-user secret {cache_secret_path(self.environ)} is unusable (emptied or "
                "unreadable): remove it, then run `ledger tamper accept`"
            )
        anchored = workspace_ledger_id(self.root, self.environ)
        if anchored is not None and anchored != self.ledger.ledger_id:
            self._verdict.problems.append(
                f"this workspace held ledger {anchored} and now holds {self.ledger.ledger_id} "
                "(the ledger was replaced)"
            )
        return self._verdict

    def _as_here(self, sealed: Seal | Literal["forged"] | None) -> Seal | Literal["forged"] | None:
        """A seal as this workspace's: made before it was moved here, its files are renamed
        (the home binding checked that this workspace is the ledger's, not a copy)."""
        return rerooted(sealed, self.real_root) if isinstance(sealed, Seal) else sealed

    def _tripwire_entries(self, verdict: Verdict, inv: Invocation) -> list[Entry]:
        """The records of what this call's check found: the tripwire armed (first call), or a
        tampering, recorded once while none is pending (the tripwire policy then denies every
        call until a person resolves it, ledger/_governance/pre_policies.py)."""
        found: list[Entry] = []
        if verdict.arm:
            # Not the .pyc watched: they follow what this process imported, which differs
            # between a one-shot hook and the resident decider.
            watched = sum(1 for entry in verdict.files.values() if entry.rule != "bytecode")
            found.append(Entry(ARMED_KIND, {"files": watched}, {"client": "ledger"}))
        if verdict.problems and not self._tamper_recorded:
            found.append(Entry(TAMPER_KIND, tamper_body(verdict, inv), self._actor(inv)))
        return found

    def _tripwire_store(self) -> TripwireStore:
        if self._store is None:
            self._store = TripwireStore(self.ledger.ledger_id, self.environ)
        return self._store

    def _seal_head(self, records: list[Record]) -> None:
        """Under the append lock: seal the new head with what this call's check saw."""
        verdict = self._verdict
        advance_seal(
            self.ledger,
            self._tripwire_store(),
            records,
            files=verdict.files if verdict is not None else None,
            inspected=self._inspected,
            first=verdict is not None and verdict.arm,
        )

    def resolve_tamper(self, how: Literal["accept", "revert"]) -> TamperResolution:
        """A person's ``ledger tamper accept`` or ``revert``: keep the disk as it is, or put
        the sealed files back (those with a copy; a file added where only ledger adds is
        removed); then seal the protected set as it now is, at the new head.

        Raises:
            NotAPersonError: run inside an agent (an agent cannot clear its own tripwire).
            InputError: ``revert`` with no verifiable seal to revert to.
        """
        kind: PersonCommandKind = (
            "governance.tamper_reverted" if how == "revert" else "governance.tamper_accepted"
        )
        self._require_person(kind)
        store = self._tripwire_store()
        restored: list[str] = []
        left: list[str] = []
        if how == "revert":
            with self.ledger.file.transaction():
                sealed = self._as_here(store.load())
            if not isinstance(sealed, Seal):
                raise InputError(
                    "there is no verifiable seal to revert to; check the protected files by "
                    "hand (`ledger doctor` lists them), then run `ledger tamper accept`"
                )
            paths = protected_set(self.root, self.ledger.ledger_id, self.environ)
            found = compare(sealed.files, _fingerprint(paths, sealed.files, self.environ))
            for change in found:
                (restored if restore(store, change, sealed) else left).append(change.path)
        else:
            found = self.check_tripwire(during_call=False).changes
            restored = [c.path for c in found]
        pending = self.state.tamper or {}
        body: dict[str, Any] = {
            "files": sorted(restored),
            "left": sorted(left),
            "tamper_seq": pending.get("seq"),
        }
        anchored = workspace_ledger_id(self.root, self.environ)
        if anchored not in (None, self.ledger.ledger_id):
            body["replaced_ledger"] = anchored  # the acknowledgement names what it replaced
        paths = protected_set(self.root, self.ledger.ledger_id, self.environ)
        files = _fingerprint(paths, None, self.environ)

        def seal_now(records: list[Record]) -> None:
            store.save(next_seal(files, (records[-1].seq, records[-1].hash), self.real_root))
            # The one kept is the workspace's ledger from now on: a person acknowledged it.
            remember_workspace(self.root, self.ledger.ledger_id, self.environ, replace=True)

        record = self._append_person(kind, body, after=seal_now)
        return TamperResolution(record.seq, tuple(sorted(restored)), tuple(sorted(left)))

    @contextmanager
    def changing_protected_files(self) -> Iterator[None]:
        """Around a person's ledger command that writes protected files (``ledger install``,
        ``uninstall``): seal what the command changed, and only that. A file that already
        differed from the seal before the command stays a change for the next hook call (a
        person's install does not launder an agent's earlier edit)."""
        judge_hook_bytecode(self.environ)  # so the hook calls that follow compile no source
        store = self._tripwire_store()
        with self.ledger.file.transaction():  # the seal is written in place, under this lock
            loaded = store.load()
        if not isinstance(loaded, Seal):
            yield  # not armed yet, or already tampered with: nothing to carry forward
            return
        before = rerooted(loaded, self.real_root)
        paths = protected_set(self.root, self.ledger.ledger_id, self.environ)
        dirty = {
            c.path for c in compare(before.files, _fingerprint(paths, before.files, self.environ))
        }
        yield
        with self.ledger.file.transaction():
            if store.load() != loaded:
                return  # a hook call sealed in between: its check covers what changed
            paths = protected_set(self.root, self.ledger.ledger_id, self.environ)
            kept_paths = {p: r for p, r in paths.items() if p not in dirty}
            now = _fingerprint(kept_paths, before.files, self.environ)
            kept = {p: e for p, e in before.files.items() if p in dirty}
            store.save(before._replace(files={**now, **kept}))

    def _require_person(self, kind: str) -> None:
        # Imported here: the hook path never needs it (and it brings subprocess for ps).
        from ledger._governance.person import agent_marker, ancestor_chain  # noqa: PLC0415

        environ = os.environ if self.environ is None else self.environ
        why = agent_marker(environ, ancestor_chain())
        if why is not None:
            raise NotAPersonError(
                f"only a person can record {kind} and {why}; run the command in your own "
                "terminal, outside the agent (an agent asks for scope through its hook: "
                "the client asks you)"
            )


def _loosens(store: TripwireStore, sealed: object, change: Change) -> list[str]:
    """Why a change of the governance configuration between calls loosens it, from the
    sealed copy and the disk."""
    name = Path(change.path).name
    if name not in (*HOOK_CONFIG_NAMES, INTENTS_NAME) or not isinstance(sealed, Seal):
        return []
    entry = sealed.files.get(change.path)
    old = store.copy_of(entry, change.path) if entry is not None else None
    if entry is not None and old is None:
        return [f"its sealed version is not kept, so what {name} loosens cannot be told"]
    try:
        new = Path(change.path).read_bytes() if change.what != "removed" else None
    except OSError:
        new = None
    return loosenings(name, old, new)


def _fingerprint(
    paths: Mapping[str, Rule], previous: Fingerprint | None, environ: Mapping[str, str] | None
) -> Fingerprint:
    """:func:`~ledger._hooks.tripwire.fingerprint`, with the ``.pyc`` verdicts this user's
    ledger keeps (ledger/_hooks/bytecode.py)."""
    return fingerprint(paths, previous, judged=JudgedBytecode.for_user(environ))


class TamperResolution(NamedTuple):
    """What ``ledger tamper accept|revert`` did: its record, the files kept or restored, and
    those revert could not restore (no copy was kept: over 1 MB, or a key)."""

    seq: int
    files: tuple[str, ...]
    left: tuple[str, ...]


def records_between(
    ledger: Ledger, first: int, last: int, *, tail: int | None = None
) -> list[dict[str, Any]] | None:
    """Records ``first..last`` (by seq) of a ledger ending at seq ``tail`` (default ``last``),
    or None when that is too many to read on a hook."""
    count = (last if tail is None else tail) - first + 1
    if count > TRIPWIRE_SCAN_LIMIT:
        return None
    stored = tail_records(ledger.file.path, count)
    return [r.data for r in stored if first <= int(r.data.get("seq", -1)) <= last]


def advance_seal(
    ledger: Ledger,
    store: TripwireStore,
    records: list[Record],
    *,
    files: Fingerprint | None = None,
    inspected: Seal | None = None,
    first: bool = False,
) -> None:
    """Under the append lock: seal the head ``records`` end at, if the seal still ends where
    they begin (or only application records came between). Anything else is left for the next
    call's check to find. ``first`` arms the tripwire (no seal yet).

    ``files`` (what this call's check saw) replace the sealed fingerprint only when the seal is
    still the one that check compared them with (``inspected``): another hook process that
    sealed in between saw the disk later, and a stale view would undo what it sealed (a
    checkpoint it added and pruned, a config edit it recorded)."""
    current = store.load()
    here = os.path.realpath(ledger.workspace.root)
    if first and current is None and files is not None:
        store.save(next_seal(files, (records[-1].seq, records[-1].hash), here))
        return
    if not isinstance(current, Seal):
        return
    prior = records[0].seq - 1
    if current.head_seq != prior:
        between = records_between(ledger, current.head_seq, prior, tail=records[-1].seq)
        if between is None or ledger_problems(
            current, (prior, records[0].prev), between, SEALED_KINDS
        ):
            return
    fresh = files is not None and current == inspected
    head = (records[-1].seq, records[-1].hash)
    if fresh and files is not None:  # what this call saw, here
        store.save(next_seal(files, head, here), kept=current.files)
    else:
        store.save(
            current._replace(head_seq=head[0], head_hash=head[1], version=__version__),
            kept=current.files,
        )


def handle_event(
    event: HookEvent,
    *,
    root: str | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: str | None = None,
    abandoned: Callable[[], bool] | None = None,
) -> HookDecision:
    """Govern and record one client hook event.

    Raises:
        LedgerError: the workspace, ledger or configuration is unusable (the caller fails
            closed on pre events).
    """
    workspace = GovernedWorkspace(locate_root(event, root, environ, cwd=cwd), environ=environ)
    engine, governance = workspace.build()
    if event.client_event in CLIENTS[event.client].guards:
        _guard_transport(engine, event, workspace.root, environ)
    inv = invocation_of(event)
    verdict = workspace.check_tripwire(during_call=event.phase == "post")
    if verdict.problems and workspace.state.tamper is None:
        workspace.state.tamper = {"seq": None, "problems": verdict.problems[:5]}
    if event.phase == "pre":
        merged = engine.run_pre(inv)
    elif event.phase == "post":
        merged = engine.run_post(inv)
    else:
        merged = engine.run_event(inv, can_block=event.event in BLOCKABLE_EVENTS)
    if governance.tampered:  # found by the post hook itself (a write that landed elsewhere)
        verdict.problems.extend(governance.tampered)
    if abandoned is not None and abandoned():
        # The resident decider's caller gave up waiting and decides in its own process: this
        # decision must not be recorded twice (ledger/_hooks/decider.py).
        raise CallAbandonedError("the caller stopped waiting; it decides in its own process")
    appended = workspace.flush(governance.records, inv)
    session_end = event.event in ("SessionEnd", "Stop")
    workspace.ledger.auto_checkpoint(session_end=session_end, appended=appended)
    if session_end:
        workspace.apply_retention()
    return decision_of(event, merged)


def _guard_transport(
    engine: HookEngine, event: HookEvent, root: Path, environ: Mapping[str, str] | None
) -> None:
    """On an event that guards a resident transport (the client's ``guards``: Claude Code's
    prompt), refuse it while the hooks as installed would not fail closed on the client now
    on ``PATH`` (:func:`~ledger._clients.transport.transport_refusal`, decision 0021)."""
    from ledger._clients.transport import transport_refusal  # noqa: PLC0415 -- once a prompt

    refusal = transport_refusal(event.client, root, environ)
    if refusal is not None:
        outcome = HookOutcome(decision="deny", reason=f"TRANSPORT: {refusal}")
        engine.register_hook(event.event, "transport", lambda _inv: outcome)


def tamper_body(verdict: Verdict, inv: Invocation) -> dict[str, Any]:
    """The ``governance.tamper`` record's body: what changed and the call in flight."""
    return {
        "changes": encode_changes(verdict.changes),
        "event": inv.event,
        "problems": verdict.problems[:50],
        "session": inv.session_id,
        "tool": inv.tool_name,
        "tool_use_id": inv.tool_use_id,
    }


def warm_resident() -> None:
    """What a resident hook process (the decider, ``ledger mcp``) loads once as it starts,
    before its first call: orjson, so every call's JSON is encoded and parsed by it, not by
    the standard library's slower path and the check that the two agree (its 10-15 ms of
    import would cost a one-shot hook more than it saves: ledger/_evidence/lightjson.py).

    Then everything loaded so far is frozen out of the garbage collector: it lives as long as
    the process, and a full collection that walked it paused the call it fell in by ~10 ms
    (about once in a thousand hook calls; at most 2.8 ms once frozen, bench notes in
    docs/performance.md)."""
    import gc  # noqa: PLC0415 -- resident processes only

    lightjson.orjson()
    gc.collect()  # what start-up left as garbage is freed, not kept forever
    gc.freeze()


def run_hook(
    client: str,
    raw: bytes,
    *,
    expected_event: str | None = None,
    root: str | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: str | None = None,
    abandoned: Callable[[], bool] | None = None,
) -> HookResponse:
    """One whole hook call, as ``ledger hook <client>`` runs it: parse, govern, record, answer.

    Never raises: any failure becomes the client's fail-closed answer (deny for tool-gating
    events, a block for the events that guard a resident transport, a non-blocking answer
    otherwise) and is recorded as ``hook.error`` when the ledger is writable.

    Args:
        client: the client adapter's name (``claude``, ``codex``, ...).
        raw: the payload bytes as read from stdin (at most ``MAX_PAYLOAD_BYTES + 1``).
        expected_event: the event the hook is registered for (``--event``); used to fail closed
            on a payload that cannot be parsed, and to refuse one that names another event.
        root: the workspace (``--root``); default: found from the payload's ``cwd``.
        environ: the hook call's environment (default this process's).
        cwd: the hook process's working directory (default this process's): the last place
            the workspace is looked for.
        abandoned: asked just before the records are appended; True means the caller no longer
            waits for this answer (the decider's client fell back to deciding itself): nothing
            is recorded and :class:`CallAbandonedError` is raised.
    """
    event = None
    try:
        event = parse_payload(client, raw, expected_event=expected_event)
        decision = handle_event(event, root=root, environ=environ, cwd=cwd, abandoned=abandoned)
        return render_response(client, event, decision)
    except CallAbandonedError:
        raise
    except Exception as exc:  # noqa: BLE001 -- every failure gets the client's fail-closed answer
        message = str(exc) if isinstance(exc, LedgerError) else f"{type(exc).__name__}: {exc}"
        if "`ledger " not in message and "did you mean" not in message:
            message += "; run `ledger doctor` to see what is wrong and how to fix it"
        # Recording would wait on the same lock, or (a copy) write the original's seal.
        if not isinstance(exc, LockTimeoutError | WorkspaceCopiedError):
            _record_failure(client, message, raw, event, root=root, environ=environ, cwd=cwd)
        return fail_closed_response(client, event, message, raw=raw, expected_event=expected_event)


def _record_failure(
    client: str,
    message: str,
    raw: bytes,
    event: HookEvent | None,
    *,
    root: str | None,
    environ: Mapping[str, str] | None,
    cwd: str | None,
) -> None:
    """Best effort: put the failure itself in the ledger (never a partial line)."""
    try:
        ledger = open_for_hook(locate_root(event, root, environ, cwd=cwd), environ)
        truncated = len(raw) > MAX_PAYLOAD_BYTES  # stdin is read only up to the limit + 1
        store = TripwireStore(ledger.ledger_id, environ)
        append_reserved(
            ledger,
            [
                Entry(
                    "hook.error",
                    {
                        "client": client,
                        "message": message[:2000],
                        "payload_bytes": MAX_PAYLOAD_BYTES if truncated else len(raw),
                        "payload_sha256": None if truncated else hashlib.sha256(raw).hexdigest(),
                        "payload_truncated": truncated,
                    },
                    {"client": client},
                )
            ],
            after=lambda records: advance_seal(ledger, store, records),
        )
    except Exception:  # noqa: BLE001, S110 -- recording the failure must not mask the answer
        pass
