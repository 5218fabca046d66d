"""The governance state: sessions, their intents, approved grants, what each session saw.

It is not a mutable file: it is folded from ``intent.*`` and ``hook.*`` records by
:func:`apply_record` (pure). The hook service gets it through the governance state projection
(:mod:`ledger._projections.governance`), which runs behind the verified projection cache.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

__all__ = ["WorkspaceState", "apply_record", "fold"]

RECENT_CHANGES: Final = 10


class WorkspaceState:
    """What the governance policies need to know, folded from the ledger.

    Attributes:
        sessions: session id → ``{"intent": id|None, "model": str|None,
            "seen": {path: sha256}, "fired": [hook names]}``.
        grants: intent id → globs added to its scope by approved expansions.
        recent: intent id → the last few changed paths (``"path (seq N)"``), newest last.
        decisions: tool_use_id → pre decision (to recognise a rejected ``ask``).
        mutations: tool_use_id → the pre hook's mutation class (for the post's attribution).
        tamper: the unresolved ``governance.tamper`` (``{"seq", "problems"}``), or None: while
            one is pending every tool call is denied, until a person accepts or reverts it.
        tripwire_armed: whether a tripwire seal was ever armed for this ledger (a missing seal
            is then tampering, not a first run).
        seq, hash: the last folded record.
    """

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        data = data or {}
        self.sessions: dict[str, dict[str, Any]] = data.get("sessions", {})
        self.grants: dict[str, list[str]] = data.get("grants", {})
        self.recent: dict[str, list[str]] = data.get("recent", {})
        self.decisions: dict[str, str] = data.get("decisions", {})
        self.mutations: dict[str, str] = data.get("mutations", {})
        # The governance configuration the last decision used (config_evidence.py).
        self.config: dict[str, Any] | None = data.get("config")
        self.tamper: dict[str, Any] | None = data.get("tamper")
        self.tripwire_armed: bool = bool(data.get("tripwire_armed"))
        self.seq: int = data.get("seq", -1)
        self.hash: str | None = data.get("hash")

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "config": self.config,
            "decisions": self.decisions,
            "grants": self.grants,
            "hash": self.hash,
            "mutations": self.mutations,
            "recent": self.recent,
            "seq": self.seq,
            "sessions": self.sessions,
            "tamper": self.tamper,
            "tripwire_armed": self.tripwire_armed,
        }

    def session(self, session_id: str | None) -> dict[str, Any]:
        """The (possibly new) state of one session."""
        key = session_id or ""
        found = self.sessions.get(key)
        if found is None:
            found = {"fired": [], "intent": None, "model": None, "seen": {}}
            self.sessions[key] = found
        return found

    def intent_of(self, session_id: str | None) -> str | None:
        """The intent selected for ``session_id``."""
        found = self.sessions.get(session_id or "")
        return None if found is None else found.get("intent")

    def fired_once(self) -> list[tuple[str | None, str]]:
        """``(session, hook name)`` pairs for the engine's ``once`` bookkeeping."""
        return [(sid or None, name) for sid, s in self.sessions.items() for name in s["fired"]]


def _remember(memory: dict[str, str], key: str, value: str) -> None:
    """Keep ``memory`` small: only recent tool calls matter (a pre and its post are close)."""
    memory[key] = value
    if len(memory) > 1000:
        for old in list(memory)[:200]:
            del memory[old]


def apply_record(state: WorkspaceState, record: dict[str, Any]) -> None:
    """Fold one record (an upcast record dict) into ``state`` in place (pure: no I/O)."""
    kind = record.get("kind")
    body = record.get("body") or {}
    actor = record.get("actor") or {}
    session_id = body.get("session", actor.get("session"))
    if kind == "intent.selected":
        state.session(session_id)["intent"] = body.get("intent_id")
    elif kind == "intent.cleared":
        state.session(session_id)["intent"] = None
    elif kind == "intent.scope_expanded" and _grant_is_approved(state, body):
        globs = state.grants.setdefault(str(body.get("intent_id")), [])
        globs.extend(g for g in body.get("globs", []) if g not in globs)
    elif kind == "governance.config_changed":
        state.config = body.get("after")
    elif kind == "governance.tamper":
        if state.tamper is None:
            state.tamper = {"seq": record.get("seq"), "problems": list(body.get("problems", []))}
    elif kind in ("governance.tamper_accepted", "governance.tamper_reverted"):
        state.tamper = None
    elif kind == "governance.tripwire_armed":
        state.tripwire_armed = True
    elif kind == "intent.scope_withdrawn":
        withdrawn = set(body.get("globs", []))
        kept = [g for g in state.grants.get(str(body.get("intent_id")), []) if g not in withdrawn]
        state.grants[str(body.get("intent_id"))] = kept
    elif kind in ("hook.pre", "hook.post", "hook.event"):
        if isinstance(body.get("config"), dict):
            state.config = body["config"]
        session = state.session(session_id)
        if actor.get("model"):
            session["model"] = actor["model"]
        fired = session["fired"]
        fired.extend(h["name"] for h in body.get("hooks", []) if h.get("name") not in fired)
        data = body.get("data") or {}
        for path, digest in (body.get("observed") or {}).items():
            session["seen"][path] = digest
        tool_use_id = body.get("tool_use_id")
        if kind == "hook.pre" and tool_use_id:
            _remember(state.decisions, str(tool_use_id), str(body.get("decision")))
            if isinstance(data.get("mutation_class"), str):
                _remember(state.mutations, str(tool_use_id), data["mutation_class"])
        intent_id = data.get("intent_id")
        attribution = body.get("attribution") or {}
        changed = [f["path"] for f in attribution.get("files", [])]
        if kind == "hook.post" and intent_id and changed:
            recent = state.recent.setdefault(str(intent_id), [])
            recent.extend(f"{path} (seq {record.get('seq')})" for path in changed)
            del recent[:-RECENT_CHANGES]
    state.seq = int(record.get("seq", state.seq))
    state.hash = record.get("hash")


def _grant_is_approved(state: WorkspaceState, body: dict[str, Any]) -> bool:
    """A scope grant counts only with a human approval the agent cannot produce through the
    governance path (docs/trust-model.md): ``approval == "person"`` -- ``ledger intent
    expand`` run outside any agent's process tree (:mod:`ledger._governance.person`; ``"tty"``
    on records before decision 0013) -- or a ``tool_use_id`` naming an earlier ``hook.pre`` whose
    decision was ``ask``: the client asked a person and the command ran. ``Ledger.append`` and
    ``ledger append`` refuse ``intent.*`` and ``hook.*``, so neither proof can be appended
    through the public API; code that reaches ledger's internals with a key it can read is
    what ``--hardened`` (no key, no ledger write in the sandbox) and the tripwire address."""
    if body.get("approval") in ("person", "tty"):  # "tty": records before decision 0013
        return True
    tool_use_id = body.get("tool_use_id")
    return isinstance(tool_use_id, str) and state.decisions.get(tool_use_id) == "ask"


def fold(records: Iterable[dict[str, Any]], state: WorkspaceState | None = None) -> WorkspaceState:
    """Fold records (parsed dicts, in order) into ``state`` (pure; returns the state)."""
    state = state or WorkspaceState()
    for record in records:
        apply_record(state, record)
    return state
