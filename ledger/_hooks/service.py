"""The hook service: one client hook call, event in, signed records and a decision out.

``run_hook`` is what ``ledger hook <client>`` runs (parse, govern, record, answer, and the
fail-closed answer on any failure); ``handle_event`` governs one parsed event: find the
workspace, fold the governance state (the projection cache), load the configuration
(:mod:`ledger._governance.config`), run the engine, append every record of the call with one
lock and one fsync. The pieces live beside it: :mod:`ledger._hooks.mapping` (event ↔ engine),
:mod:`ledger._hooks.records` (record bodies). docs/architecture.md draws the flow.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ledger._clients import (
    MAX_PAYLOAD_BYTES,
    HookDecision,
    HookEvent,
    HookResponse,
    fail_closed_response,
    parse_payload,
    render_response,
)
from ledger._clients.registry import actor_name
from ledger._errors import LedgerError, NotAPersonError
from ledger._evidence.ledger import Entry, Ledger, append_reserved
from ledger._git import read_head
from ledger._governance.config import (
    WorkspaceConfig,
    policy_config,
    register_configured_hooks,
)
from ledger._governance.config_evidence import CONFIG_CHANGED_KIND, config_change, config_digests
from ledger._governance.engine import HookEngine, Invocation
from ledger._governance.intents import IntentsFile
from ledger._governance.policies import Governance
from ledger._hooks.mapping import BLOCKABLE_EVENTS, decision_of, invocation_of
from ledger._hooks.records import hook_body
from ledger._projections import GOVERNANCE_STATE, ProjectionCache
from ledger._workspace import Workspace, find_root

if TYPE_CHECKING:
    from ledger._evidence.record import Record
    from ledger._governance.person import PersonCommandKind

__all__ = ["GovernedWorkspace", "handle_event", "locate_root", "run_hook"]


def locate_root(
    event: HookEvent | None, explicit: str | None = None, environ: Mapping[str, str] | None = None
) -> Path:
    """The workspace of a hook call: ``--root``/``$LEDGER_ROOT``, else the nearest
    ``.orchestration/`` above the payload's ``cwd``, else above ``$CLAUDE_PROJECT_DIR`` (and the
    other clients' project variables), else above the current directory."""
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
    return find_root(environ={})


class GovernedWorkspace:
    """One workspace's ledger, governance state, configuration and engine, for one hook call."""

    def __init__(self, root: Path, *, environ: Mapping[str, str] | None = None) -> None:
        workspace = Workspace(root)
        self.root = root
        self.environ = environ
        self.real_root = os.path.realpath(root)
        self.orchestration = workspace.orchestration
        self.cache_dir = workspace.cache_dir
        self.ledger = Ledger.open(root, environ=environ)
        self.projections = ProjectionCache(
            self.ledger.file.path, self.cache_dir, self.ledger.ledger_id, environ=environ
        )
        self.state = self.projections.state(GOVERNANCE_STATE)
        self.config = WorkspaceConfig(self.orchestration, self.cache_dir, environ=environ)
        self.config_digests = config_digests(self.orchestration)  # what this decision uses
        self._governance: Governance | None = None
        self._pending: list[Entry] = []
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
        # Imported here: the hook path never needs it (and it brings subprocess for ps).
        from ledger._governance.person import (  # noqa: PLC0415
            APPROVAL_KINDS,
            PERSON_ACTOR,
            agent_marker,
            ancestor_chain,
        )

        if kind in APPROVAL_KINDS:
            environ = os.environ if self.environ is None else self.environ
            why = agent_marker(environ, ancestor_chain())
            if why is not None:
                raise NotAPersonError(
                    f"only a person can record {kind} and {why}; run the command in your own "
                    "terminal, outside the agent (an agent asks for scope through its hook: "
                    "the client asks you)"
                )
        actor = {"client": PERSON_ACTOR, "session": session}
        return append_reserved(self.ledger, [Entry(kind, body, actor)])[0]

    def build(self) -> tuple[HookEngine, Governance]:
        """The engine with built-in policies and configured external hooks."""
        hooks = self.config.hooks()
        switches = policy_config(hooks, self.config.hooks_path)
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
        register_configured_hooks(engine, hooks, self.root, self.config.hooks_path)
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
        if not entries:
            return None
        records = append_reserved(self.ledger, entries)
        return records[0].seq, records[-1].seq


def handle_event(
    event: HookEvent, *, root: str | None = None, environ: Mapping[str, str] | None = None
) -> HookDecision:
    """Govern and record one client hook event.

    Raises:
        LedgerError: the workspace, ledger or configuration is unusable (the caller fails
            closed on pre events).
    """
    workspace = GovernedWorkspace(locate_root(event, root, environ), environ=environ)
    engine, governance = workspace.build()
    inv = invocation_of(event)
    if event.phase == "pre":
        merged = engine.run_pre(inv)
    elif event.phase == "post":
        merged = engine.run_post(inv)
    else:
        merged = engine.run_event(inv, can_block=event.event in BLOCKABLE_EVENTS)
    appended = workspace.flush(governance.records, inv)
    workspace.ledger.auto_checkpoint(
        session_end=event.event in ("SessionEnd", "Stop"), appended=appended
    )
    return decision_of(event, merged)


def run_hook(
    client: str,
    raw: bytes,
    *,
    expected_event: str | None = None,
    root: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> HookResponse:
    """One whole hook call, as ``ledger hook <client>`` runs it: parse, govern, record, answer.

    Never raises: any failure becomes the client's fail-closed answer (deny for tool-gating
    events, a non-blocking answer otherwise) and is recorded as ``hook.error`` when the ledger
    is writable.

    Args:
        client: the client adapter's name (``claude``, ``codex``, ...).
        raw: the payload bytes as read from stdin (at most ``MAX_PAYLOAD_BYTES + 1``).
        expected_event: the event the hook is registered for (``--event``); used to fail closed
            on a payload that cannot be parsed, and to refuse one that names another event.
        root: the workspace (``--root``); default: found from the payload's ``cwd``.
    """
    event = None
    try:
        event = parse_payload(client, raw, expected_event=expected_event)
        decision = handle_event(event, root=root, environ=environ)
        return render_response(client, event, decision)
    except Exception as exc:  # noqa: BLE001 -- every failure gets the client's fail-closed answer
        message = str(exc) if isinstance(exc, LedgerError) else f"{type(exc).__name__}: {exc}"
        if "`ledger " not in message and "did you mean" not in message:
            message += "; run `ledger doctor` to see what is wrong and how to fix it"
        _record_failure(client, message, raw, event, root=root, environ=environ)
        return fail_closed_response(client, event, message, raw=raw, expected_event=expected_event)


def _record_failure(
    client: str,
    message: str,
    raw: bytes,
    event: HookEvent | None,
    *,
    root: str | None,
    environ: Mapping[str, str] | None,
) -> None:
    """Best effort: put the failure itself in the ledger (never a partial line)."""
    try:
        ledger = Ledger.open(locate_root(event, root, environ), environ=environ)
        truncated = len(raw) > MAX_PAYLOAD_BYTES  # stdin is read only up to the limit + 1
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
        )
    except Exception:  # noqa: BLE001, S110 -- recording the failure must not mask the answer
        pass
